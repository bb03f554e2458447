"""ccfair preset s0 (python/ccfair/presets/s0.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from ccfair.presets import s0
from ccfair.spec import Spec


def test_s0_grid_has_the_studys_pairs_orders_and_repetitions() -> None:
    assert len(s0.pairs(["lab"])) == 6  # 3 CCAs, self-pairs included (S0 Fig. 2)
    assert len(s0.pairs(["lab-cp"])) == 6  # CUBIC, BBR x 3 CP-like profiles (S0 Figs. 3-4)
    assert len(s0.pairs(["cp-cp"])) == 6
    pts = s0.grid(s0.SCENARIOS, s0.RATES, s0.RTTS_MS, s0.BUFFERS_BDP, s0.QDISCS, s0.REPETITIONS)
    # 2 rates x 2 RTTs x 2 buffers x 3 qdiscs x 18 pairs x 2 orders x 30 repetitions
    assert len(pts) == 2 * 2 * 2 * 3 * 18 * 2 * 30


def test_s0_timing_and_flipped_order() -> None:
    p = s0.Point("lab-cp", "cubic", "cp-bbr", "10Mbit", 50, 0.5, "droptail", "A first", 0)
    spec = Spec.from_dict(s0.spec_dict(p))
    a, b = spec.flows
    assert (a.name, a.cca, a.start) == ("A", "cubic", 0)
    assert (b.name, b.cca, b.profile, b.start) == ("B", "bbr", "cp-bbr", 5_000_000_000)
    assert (spec.duration, spec.window.start, spec.window.end) == (45_000_000_000, 10_000_000_000, 45_000_000_000)
    assert a.rwnd == b.rwnd == 200
    flipped = Spec.from_dict(s0.spec_dict(p.__class__(**{**p.__dict__, "order": "B first"})))
    fa, fb = flipped.flows
    # B first: the CP-like flow takes the first start time, names stay with the flows
    assert (fa.name, fa.profile, fa.start) == ("B", "cp-bbr", 0)
    assert (fb.name, fb.cca, fb.start) == ("A", "cubic", 5_000_000_000)


def test_iw_only_profiles_run_linux_default_cubic() -> None:
    p = s0.Point("cp-cp", "cdn-iw32", "cdn-iw16", "10Mbit", 50, 0.5, "droptail", "A first", 0)
    a, b = Spec.from_dict(s0.spec_dict(p)).flows
    assert (a.cca, a.init_cwnd, b.cca, b.init_cwnd) == ("cubic", 32, "cubic", 16)


def _row(pair: str, order: str, share_b: float, buf: float = 0.5, q: str = "droptail") -> s0.Row:
    a, b = pair.split(" vs ")
    share_a = 1 - share_b
    return s0.Row(
        "lab",
        pair,
        a,
        b,
        "10Mbit",
        50.0,
        buf,
        q,
        order,
        0,
        1,
        1 - share_a / share_b if share_b >= share_a else share_b / share_a - 1,
        share_a,
        share_b,
        1.0,
        1.0,
        1.0,
        1.0,
        10.0,
        0,
        0,
    )


def test_claim_verdicts_follow_their_criteria() -> None:
    rows = [_row("cubic vs bbr", o, 0.9) for o in s0.ORDERS]
    out = {o.id: o for o in s0.reproduce_claims(rows)}
    assert out["S0.bbr-starves-cubic"].verdict == "reproduced"
    rows = [_row("cubic vs bbr", "A first", 0.9), _row("cubic vs bbr", "B first", 0.6)]
    out = {o.id: o for o in s0.reproduce_claims(rows)}
    assert out["S0.bbr-starves-cubic"].verdict == "not reproduced"
    # a claim whose setting was not run is reported as n.a., never dropped
    assert out["S0.fq_codel"].verdict == "n.a."
    assert [o.id for o in s0.reproduce_claims(rows)] == [c.id for c in s0.CLAIMS]


def test_cli_json_lists_every_claim(tmp_path) -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ccfair",
            "preset",
            "s0",
            "--quick",
            "--reps",
            "1",
            "--qdiscs",
            "droptail,fq_codel",
            "--scenarios",
            "lab",
            "--buffers",
            "0.5,2",
            "--json",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert [c["id"] for c in d["claims"]] == [c.id for c in s0.CLAIMS]
    assert {c["verdict"] for c in d["claims"]} <= {"reproduced", "not reproduced", "n.a."}
    assert d["runs"] == 2 * 2 * 6 * 2
    assert all("maxmin_a" in row and "fness" in row for row in d["rows"])
    assert (tmp_path / "runs.csv").is_file() and list(tmp_path.glob("s0-fness-*.png"))


@pytest.mark.parametrize("argv", [["--scenarios", "lab,nope"], ["--backend", "ns3"], ["--buffers", "0"], ["--reps", "0"]])
def test_cli_bad_input_exit_2(argv: list[str]) -> None:
    r = subprocess.run([sys.executable, "-m", "ccfair", "preset", "s0", *argv], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
