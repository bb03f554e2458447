"""Queue disciplines in the experiment description: defaults, unit
conversion into the RunConfig, rejected combinations naming the field, the
CLI listing, and the per-flow drop/mark columns of a real run."""

from __future__ import annotations

import copy

import ccfair
import pytest
from ccfair import Spec, SpecError
from ccfair.spec import QDISCS


def with_qdisc(d: dict, q, buffer: str | None = None) -> dict:
    out = copy.deepcopy(d)
    out["bottleneck"]["qdisc"] = q
    if buffer is not None:
        out["bottleneck"]["buffer"] = buffer
    return out


def qcfg(s0_dict, q, buffer: str | None = "2bdp") -> dict:
    return Spec.from_dict(with_qdisc(s0_dict, q, buffer)).to_run_config()["bottleneck"]["qdisc"]


def test_defaults_are_the_sources_and_the_limit_is_the_buffer(s0_dict):
    # 2 BDP at 10 Mbit/s, 50 ms, 1500-byte packets = 83.3 -> 83 packets
    c = qcfg(s0_dict, "codel")
    assert c == {
        "kind": "codel",
        "limit_packets": 83,
        "limit_bytes": None,
        "target_ns": 5_000_000,
        "interval_ns": 100_000_000,
        "mtu_bytes": 1514,
        "ecn": False,
    }
    f = qcfg(s0_dict, "fq-codel")
    assert (f["kind"], f["flows"], f["quantum_bytes"], f["ecn"], f["drop_batch"], f["memory_limit_bytes"]) == (
        "fq_codel",
        1024,
        1514,
        True,
        64,
        32 * 2**20,
    )
    p = qcfg(s0_dict, "pie")
    assert (p["target_ns"], p["tupdate_ns"], p["alpha"], p["beta"], p["burst_ns"], p["ecn"], p["derandomize"]) == (
        15_000_000,
        15_000_000,
        0.125,
        1.25,
        150_000_000,
        False,
        True,
    )
    r = qcfg(s0_dict, "red")
    assert (r["max_p"], r["w_q"], r["gentle"], r["ecn"], r["min_th"], r["max_th"]) == (0.02, 0.002, False, False, None, None)
    assert qcfg(s0_dict, "drr") == {"kind": "fq_drr", "limit_packets": 83, "limit_bytes": None, "quantum_bytes": 1514}
    assert qcfg(s0_dict, {"kind": "fq_codel", "limit": "10240pkt"})["limit_packets"] == 10240


def test_units_are_converted(s0_dict):
    c = qcfg(s0_dict, {"kind": "fq_codel", "target": "2ms", "interval": "40ms", "quantum": "300B", "memory_limit": "1MiB"})
    assert (c["target_ns"], c["interval_ns"], c["quantum_bytes"], c["memory_limit_bytes"]) == (2_000_000, 40_000_000, 300, 2**20)
    # S3: threshold = K x RTT x C = 0.5 x 5 ms x 10 Mbit/s = 3125 bytes
    assert qcfg(s0_dict, {"kind": "step", "step": {"k": 0.5, "rtt": "5ms"}})["threshold_bytes"] == 3125
    assert qcfg(s0_dict, {"kind": "step", "threshold": "10ms"})["threshold_bytes"] == 12_500
    assert qcfg(s0_dict, {"kind": "step", "threshold": "30pkt"})["threshold_packets"] == 30
    red = qcfg(s0_dict, {"kind": "red", "min_th": "10pkt", "max_th": "0.5bdp"})
    assert (red["min_th"], red["max_th"]) == (10.0, 21.0)
    red = qcfg(s0_dict, {"kind": "red", "byte_mode": True, "min_th": "15KB", "max_th": "30pkt"})
    assert (red["min_th"], red["max_th"]) == (15_000.0, 45_000.0)


@pytest.mark.parametrize(
    ("q", "buffer", "field", "words"),
    [
        ({"kind": "codel", "target": "100ms"}, "2bdp", "bottleneck.qdisc.target", "interval"),
        ({"kind": "fq_codel", "target": "200ms", "interval": "1s"}, "0.5bdp", "bottleneck.qdisc.target", "drain time"),
        ({"kind": "pie", "target": "30ms"}, "0.5bdp", "bottleneck.qdisc.target", "drain time"),
        ({"kind": "red", "min_th": "30pkt", "max_th": "10pkt"}, "2bdp", "bottleneck.qdisc.min_th", "max_th"),
        ({"kind": "red", "max_p": 2}, "2bdp", "bottleneck.qdisc.max_p", "must be a number in (0, 1], got 2"),
        ({"kind": "step"}, "2bdp", "bottleneck.qdisc.threshold", "exactly one"),
        ({"kind": "step", "threshold": "1s"}, "2bdp", "bottleneck.qdisc.threshold", "below the queue limit"),
        ({"kind": "step", "threshold": "lots"}, "2bdp", "bottleneck.qdisc.threshold", "queue length"),
        ({"kind": "fq_codel", "flows": 0}, "2bdp", "bottleneck.qdisc.flows", "must be an integer in [1, 65536], got 0"),
        ({"kind": "codel", "targett": "5ms"}, "2bdp", "bottleneck.qdisc.targett", "did you mean 'target'"),
        ({"kind": "fq_codel", "limit": "100B"}, "2bdp", "bottleneck.qdisc.limit", "cannot hold"),
        ({"kind": "droptail", "limit": "100B"}, "2bdp", "bottleneck.qdisc.limit", "cannot hold"),
        ("droptail", "1000B", "bottleneck.buffer", "cannot hold one 1500-byte packet"),
        ("dualpi3", "2bdp", "bottleneck.qdisc.kind", "fq_codel"),
    ],
)
def test_invalid_combinations_name_the_field(s0_dict, q, buffer, field, words):
    with pytest.raises(SpecError) as info:
        Spec.from_dict(with_qdisc(s0_dict, q, buffer))
    assert info.value.field == field, str(info.value)
    assert words in str(info.value)


def test_drop_tail_takes_a_limit_of_its_own_as_every_discipline(s0_dict):
    assert qcfg(s0_dict, {"kind": "droptail", "limit": "30pkt"}) == {"kind": "droptail", "limit_packets": 30, "limit_bytes": None}
    assert qcfg(s0_dict, "droptail", "30pkt") == {"kind": "droptail", "limit_packets": 30, "limit_bytes": None}


def test_registry_and_cli_listing(capsys):
    from ccfair.cli import main

    assert {"droptail", "red", "step", "codel", "fq_codel", "pie", "fq_drr"} <= set(QDISCS)
    code = main(["list", "qdiscs"])
    out = capsys.readouterr().out
    assert code == 0
    for text in ("codel", "fq_codel", "pie", "red", "step", "fq_drr", "RFC 8289", "RFC 8290", "RFC 8033"):
        assert text in out, text


def test_a_real_run_reports_drops_by_reason(s0_dict):
    pytest.importorskip("ccfair._core")
    d = with_qdisc(s0_dict, "codel", "2bdp")
    d["duration"] = "12s"
    d["window"] = {"start": "6s", "end": "12s"}
    d["flows"][1]["cca"] = "cubic"
    r = ccfair.run(Spec.from_dict(d))
    f = r.flows
    assert (f["drops"] == f["drops_overflow"] + f["drops_aqm"]).all()
    assert f["drops_aqm"].sum() > 0
    assert (f["ecn_marks"] == 0).all()  # no ECN-capable senders yet
    # CoDel keeps the mean sojourn of two CUBIC flows near its 5 ms target
    assert r.summary["queue_delay_ms"]["mean"] < 10
