"""ECN options in the experiment file, the PI2/DualPI2 qdiscs, and the L4S result columns."""

from __future__ import annotations

from pathlib import Path

import pytest
from ccfair.errors import SpecError
from ccfair.spec import Spec

ROOT = Path(__file__).resolve().parents[1]


def _spec(**over: object) -> dict:
    d: dict = {
        "duration": "10s",
        "bottleneck": {"rate": "10Mbit", "buffer": "100pkt", "qdisc": "pi2"},
        "flows": [{"cca": "cubic", "rtt": "50ms"}],
    }
    d.update(over)
    return d


@pytest.mark.parametrize(
    ("written", "mode"), [(True, "classic"), (False, "off"), ("L4S", "scalable"), ("rfc3168", "classic"), (None, None)]
)
def test_ecn_spellings(written: object, mode: object) -> None:
    spec = Spec.from_dict(_spec(flows=[{"cca": "cubic", "rtt": "50ms", "ecn": written}]))
    assert spec.to_run_config()["flows"][0]["ecn"] == mode


def test_bad_ecn_names_the_field() -> None:
    with pytest.raises(SpecError) as e:
        Spec.from_dict(_spec(flows=[{"cca": "cubic", "rtt": "50ms", "ecn": "ect2"}]))
    assert e.value.field == "flows.0.ecn"
    assert "classic" in e.value.message


def test_dualpi2_parameters_resolve_to_simulator_units() -> None:
    q = {"kind": "dualpi2", "target": "5ms", "step_thresh": "800us", "ramp_range": "400us", "coupling": 2}
    cfg = Spec.from_dict(_spec(bottleneck={"rate": "10Mbit", "buffer": "30000B", "qdisc": q})).to_run_config()
    assert cfg["bottleneck"]["qdisc"] == {
        "kind": "dualpi2", "limit_packets": 20, "target_ns": 5_000_000, "tupdate_ns": 16_000_000,
        "alpha_hz": 0.16, "beta_hz": 3.2, "coupling": 2.0, "step_thresh_ns": 800_000,
        "ramp_range_ns": 400_000, "tshift_ns": 40_000_000, "drop_overload": True,
    }  # fmt: skip


def test_bad_qdisc_parameter_is_rejected() -> None:
    with pytest.raises(SpecError) as e:
        Spec.from_dict(_spec(bottleneck={"rate": "10Mbit", "qdisc": {"kind": "pi2", "coupling": 0.5}}))
    assert e.value.field.startswith("bottleneck.qdisc")


def test_dualpi2_cubic_vs_prague_end_to_end() -> None:
    # RFC 9332's coupling: roughly equal throughput, L4S queue delay ~ 1 ms.
    import ccfair

    spec = Spec.from_toml(ROOT / "examples" / "l4s-dualpi2.toml").with_overrides(["duration=20s", "window.end=20s"])
    res = ccfair.run(spec)
    f = res.flows.set_index("name")
    assert list(f["ecn"]) == ["off", "scalable"]
    ratio = f.loc["l4s", "throughput_bps"] / f.loc["classic", "throughput_bps"]
    assert 0.5 <= ratio <= 2.0, ratio
    assert f.loc["l4s", "drops"] == 0 and f.loc["l4s", "ecn_marks"] > 0
    assert res.summary["queue_delay_l4s_ms"]["p99"] < 2.0
    assert res.sojourn["count_l4s"].sum() > 0
    assert (res.sojourn["count_l4s"] <= res.sojourn["count"]).all()
