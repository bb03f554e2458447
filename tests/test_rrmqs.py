"""RRMQS (S1): spec resolution, errors, the meter/pinned tables of a real run, the S1 preset's evaluation."""

from __future__ import annotations

import math

import ccfair
import numpy as np
import pandas as pd
import pytest
from ccfair.errors import SpecError
from ccfair.presets import s1
from ccfair.spec import Spec


def _spec(qdisc, flows=None, duration="4s"):
    return Spec.from_dict(
        {
            "duration": duration,
            "bottleneck": {"rate": "20Mbit", "delay": "10ms", "buffer": "200pkt", "qdisc": qdisc},
            "flows": flows
            or [
                {"name": "r", "cca": "reno", "rtt": "60ms", "count": 4},
                {"name": "c", "cca": "cubic", "rtt": "60ms", "count": 4},
            ],
        }
    )


def test_rrmqs_resolves_to_the_run_config_with_s1_defaults():
    q = _spec({"kind": "rrmqs", "measure_limit": 2}).to_run_config()["bottleneck"]["qdisc"]
    assert q["kind"] == "rrmqs" and q["limit_packets"] == 200 and "limit_bytes" not in q
    assert q["measure_limit_packets"] == 2 and q["measure_flows"] == 2
    assert q["p"] == pytest.approx(1 / 51) and q["window_ns"] == 500_000_000
    assert (q["feedback"], q["high"], q["low"]) == ("s1", 1.2, 0.8)


@pytest.mark.parametrize(
    "qdisc, field",
    [
        ({"kind": "rrmqs", "low": 1.5, "high": 1.2}, "bottleneck.qdisc.low"),
        ({"kind": "rrmqs", "feedback": "bang"}, "bottleneck.qdisc.rrmqs.feedback"),
        ({"kind": "rrmqs", "p": 2}, "bottleneck.qdisc.rrmqs.p"),
    ],
)
def test_bad_rrmqs_parameters_name_the_field(qdisc, field):
    with pytest.raises(SpecError) as e:
        _spec(qdisc)
    assert e.value.field.replace(".rrmqs", "") == field.replace(".rrmqs", "")


def test_run_exports_meter_and_pinned_flows_and_roundtrips(tmp_path):
    res = ccfair.run(_spec({"kind": "rrmqs", "measure_limit": 5, "feedback": "off"}))
    m, p = res.meter, res.pinned
    assert set(m["cca"]) == {"reno", "cubic"}
    assert list(m["window"].unique()) == list(range(8))  # 4 s of 0.5 s windows
    # C_f = 2 bulk flows per CCA pinned, never released; the meter saw them.
    assert sorted(p["flow"]) == ["c.0", "c.1", "r.0", "r.1"] and p["released_s"].isna().all()
    assert (m.groupby("cca")["rrmqs_flows"].max() == 2).all()
    assert (m["main_flows"].max()) == 2
    # Conservation: every packet the meter counted was admitted; sent >= admitted.
    assert m["main_pkts"].sum() + m["rrmqs_pkts"].sum() <= res.flows["sent_packets"].sum()
    ok = m.dropna(subset=["index"])
    assert ((ok["index"] - ok["main_rate"] / ok["rrmqs_rate"]).abs() < 1e-9).all()
    res.to_parquet(tmp_path)
    back = ccfair.load(tmp_path)
    pd.testing.assert_frame_equal(back.meter, m)
    pd.testing.assert_frame_equal(back.pinned, p)


def test_other_qdiscs_have_no_meter():
    res = ccfair.run(_spec("droptail", duration="1s"))
    assert res.meter is None and res.pinned is None


def test_s1_preset_spec_matches_the_study_setup():
    spec = s1.build_spec("medium", bounded=True, feedback="on", seed=3)
    cfg = spec.to_run_config()
    q = cfg["bottleneck"]["qdisc"]
    assert (q["limit_packets"], q["measure_limit_packets"], q["measure_flows"], q["feedback"]) == (12000, 20, 2, "s1")
    assert cfg["bottleneck"]["rate_bps"] == 100_000_000 and cfg["bottleneck"]["delay_ns"] == 10_000_000
    df = pd.DataFrame(cfg["flows"])
    assert set(df["cca"]) == set(s1.CCAS) and len(s1.CCAS) == 12
    per = df.groupby("cca").size()
    assert per.between(100, 200).all()
    assert df["size_bytes"].between(10_000, 100_000).all() and (df["rtt_ns"] == 100_000_000).all()
    caps = df["rate_cap_bps"].dropna()
    assert 0.4 < len(caps) / len(df) < 0.6 and caps.between(10_000, 1_000_000).all()
    # Same seed, other feedback: identical traffic.
    other = s1.build_spec("medium", bounded=True, feedback="off", seed=3).to_run_config()["flows"]
    assert other == cfg["flows"]


def test_j_measure_and_j_real_from_tables():
    meter = pd.DataFrame(
        {
            "cca": ["a", "b", "a", "b"],
            "main_pkts": [100, 50, 100, 50],
            "main_flows": [2, 2, 2, 2],
            "rrmqs_pkts": [10, 10, 10, 10],
            "rrmqs_flows": [1, 1, 1, 1],
        }
    )
    j, per = s1.j_measure(meter, 0.5)
    # I = (50/10, 25/10) -> J = (5 + 2.5)^2 / (2 (25 + 6.25)) = 0.9
    assert per.loc["a", "index"] == pytest.approx(5) and j == pytest.approx(0.9)
    flows = pd.DataFrame(
        {"name": ["a.0", "a.1", "b.0", "b.1"], "cca": ["a", "a", "b", "b"], "size_bytes": [1000] * 4, "fct_s": [1.0, 2.0, 1.0, math.nan]}
    )
    j2, per2 = s1.j_real(flows, pd.DataFrame({"flow": ["a.1"]}))
    # Only CCA a has both a main and a pinned completed flow: one CCA -> J = 1.
    assert per2.loc["a", "index"] == pytest.approx(2) and j2 == pytest.approx(1.0)


def test_preset_cli_rejects_unknown_settings_with_exit_2(capsys):
    from ccfair.cli import main

    assert main(["preset", "s1", "--queue", "huge"]) == 2
    assert "--queue" in capsys.readouterr().err
    assert main(["preset", "s1", "--feedback", "maybe"]) == 2
    assert "--feedback" in capsys.readouterr().err


def test_allocate_feedback_resolves_and_rejects_bad_values():
    q = _spec({"kind": "rrmqs", "feedback": "allocate"}).to_run_config()["bottleneck"]["qdisc"]
    assert (q["feedback"], q["alloc_interval_ns"], q["alloc_gain"]) == ("allocate", 100_000_000, 4.0)
    with pytest.raises(SpecError) as e:
        _spec({"kind": "rrmqs", "feedback": "allocate", "alloc_gain": -1})
    assert e.value.field.replace(".rrmqs", "") == "bottleneck.qdisc.alloc_gain"
    with pytest.raises(SpecError) as e:
        _spec({"kind": "rrmqs", "feedback": "allocated"})
    assert "allocate" in str(e.value)


def test_allocate_run_logs_normalised_weights():
    res = ccfair.run(_spec({"kind": "rrmqs", "measure_limit": 5, "feedback": "allocate"}))
    m = res.meter
    assert set(m["action"]) == {"allocate"}
    # Weights are normalised to geometric mean 1 over the classes (no clamping at two classes within [0.05, 20]).
    g = m.groupby("window")["weight"].apply(lambda w: float(np.exp(np.log(w).mean())))
    assert (g - 1).abs().max() < 1e-9
    assert (m["weight"] != 1).any()
