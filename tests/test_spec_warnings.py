"""Warnings for legal but probably unintended settings."""

from __future__ import annotations

import subprocess
import sys

import ccfair
from ccfair import ccas
from ccfair.spec import Spec


def _spec(flows, qdisc="step"):
    q = {"kind": "step", "threshold": "10pkt"} if qdisc == "step" else qdisc
    return Spec.from_dict({"duration": "2s", "bottleneck": {"rate": "10Mbit", "qdisc": q}, "flows": flows})


def test_step_without_ecn_capable_flows_warns_naming_the_field():
    w = _spec([{"cca": "cubic", "rtt": "50ms"}, {"cca": "bbr", "rtt": "50ms"}]).warnings()
    assert len(w) == 1 and w[0][0] == "bottleneck.qdisc" and "ECN-capable" in w[0][1]


def test_no_warning_when_a_flow_reads_the_marks():
    assert _spec([{"cca": "dctcp", "rtt": "50ms"}]).warnings() == []  # scalable ECN by default
    assert _spec([{"cca": "cubic", "rtt": "50ms", "ecn": "classic"}]).warnings() == []
    assert _spec([{"cca": "cubic", "rtt": "50ms"}], qdisc="droptail").warnings() == []


def test_cli_prints_the_warning_on_stderr_and_still_succeeds(tmp_path):
    f = tmp_path / "step.toml"
    f.write_text(
        'duration = "2s"\n[bottleneck]\nrate = "10Mbit"\nqdisc = { kind = "step", threshold = "10pkt" }\n'
        '[[flows]]\ncca = "cubic"\nrtt = "50ms"\n'
    )
    p = subprocess.run([sys.executable, "-m", "ccfair", "check", str(f)], capture_output=True, text=True)
    assert p.returncode == 0
    assert p.stderr.startswith("warning: bottleneck.qdisc:")


def test_ecn_native_set_agrees_with_the_simulator():
    """Ccas.needs_ecn (from the registry) agrees with what a run does: those CCAs run with scalable ECN by default."""
    from ccfair import _core

    for name, _ in _core.ccas():
        r = ccfair.run(Spec.from_dict({"duration": "1s", "bottleneck": {"rate": "10Mbit"}, "flows": [{"cca": name, "rtt": "20ms"}]}))
        mode = r.flows["ecn"][0]
        assert (mode == "scalable") == ccas.needs_ecn(name), (name, mode)
