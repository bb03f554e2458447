"""Fairness metrics (Jain over time, S4's NRU, S1's slowdown index, S3's relative throughput, harm).

Numbers are hand-computed in the comments; S4-style series check that NRU
behaves as Bhatti & Bateman (2009) describe.
"""

from __future__ import annotations

import itertools
import math

import ccfair
import numpy as np
import pandas as pd
import pytest
from ccfair import metrics
from ccfair.calibration import calibrate_nru_weights
from ccfair.errors import SpecError
from ccfair.metrics import (
    NRU_CASES,
    flow_labels,
    flow_weights,
    harm,
    jain,
    jain_over_time,
    mean_jain_over_time,
    nru,
    nru_case,
    nru_over_time,
    nru_summary,
    relative_throughput,
    slowdown_index,
    slowdown_per_cca,
    throughput_matrix,
)


def long_table(series: dict[str, list[float]], dt: float = 1.0) -> pd.DataFrame:
    """A Result-style long throughput table from per-flow lists of bit/s samples."""
    rows = [
        {"flow": f, "time_s": k * dt, "bytes": int(v * dt / 8), "throughput_bps": float(v)}
        for f, vals in series.items()
        for k, v in enumerate(vals)
    ]
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- Jain J(t)


def test_jain_over_time_hand_computed():
    t = long_table({"A": [1, 1, 2, 0], "B": [1, 0, 0, 0]})
    j = jain_over_time(t)
    assert list(j.index) == [0.0, 1.0, 2.0, 3.0]
    assert j.iloc[0] == 1.0  # (1, 1)
    assert j.iloc[1] == 0.5  # (1, 0)
    assert j.iloc[2] == 0.5  # (2, 0)
    assert math.isnan(j.iloc[3])  # nobody delivered: undefined
    assert mean_jain_over_time(t) == pytest.approx(2 / 3)  # NaN sample skipped
    # window [1, 3) keeps samples 1 and 2
    assert mean_jain_over_time(t, start_s=1, end_s=3) == 0.5


def test_jain_over_time_matches_scalar_jain_per_row():
    rng = np.random.default_rng(7)
    vals = rng.uniform(0, 10e6, size=(50, 3))
    t = long_table({f: list(vals[:, i]) for i, f in enumerate("XYZ")})
    j = jain_over_time(t)
    assert np.allclose(j.to_numpy(), [jain(r) for r in vals])
    # the wide form gives the same
    assert np.allclose(jain_over_time(throughput_matrix(t)).to_numpy(), j.to_numpy())


def test_throughput_matrix_keeps_flow_order_and_fills_missing_with_zero():
    t = long_table({"zeta": [5, 5], "alpha": [1, 1]})
    t = t.drop(index=t.index[(t["flow"] == "alpha") & (t["time_s"] == 1.0)])
    m = throughput_matrix(t)
    assert list(m.columns) == ["zeta", "alpha"]
    assert m.loc[1.0, "alpha"] == 0.0


def test_jain_over_time_of_a_result_uses_its_window(fake_sim, s0_dict):
    # fake core: A delivers 1000 B per 100 ms bin, B 2000 B from its start (5 s);
    # window 10-45 s: J(t) = (1+2)^2 / (2 (1+4)) = 0.9 in every one of 350 bins
    r = ccfair.run(s0_dict)
    j = jain_over_time(r)
    assert len(j) == 350 and j.index[0] == 10.0 and j.index[-1] == pytest.approx(44.9)
    assert np.allclose(j.to_numpy(), 0.9)
    # without the window the 0-5 s bins (B not started, J = 0.5) pull the mean down
    assert mean_jain_over_time(r.throughput) < 0.9


# ---------------------------------------------------------------- S4: NRU

EXPECTED_BPS = 50e6  # S4-style: 100 Mbit/s shared by a calibrated pair -> 50 Mbit/s each
W = {"flow1": 1 / EXPECTED_BPS, "flow2": 1 / EXPECTED_BPS}
N_SAMPLES = 240  # S4 analyses 1 s samples from 60 s to 300 s


def s4_pair(r1_bps: float, r2_bps: float) -> pd.DataFrame:
    return long_table({"flow1": [r1_bps] * N_SAMPLES, "flow2": [r2_bps] * N_SAMPLES})


def test_nru_one_flow_at_its_share_one_starved_is_case_c():
    # flow1 gets exactly what it gets against its own kind (0 dB);
    # flow2 gets a tenth of it: 10 log10(0.1) = -10 dB
    res = nru(s4_pair(50e6, 5e6), W)
    assert res.flows["flow1"] == pytest.approx(0.0, abs=1e-12)
    assert res.flows["flow2"] == pytest.approx(-10.0)
    assert res.system == pytest.approx(-5.0)  # U_N = mean(0, -10)
    assert res.positive == pytest.approx(0.0, abs=1e-12)  # U_N+ = 0: the non-negative flow is exactly fair
    assert res.negative == pytest.approx(-10.0)
    assert res.case == "C"  # some fair, some worse


def test_nru_one_flow_takes_the_others_share_is_case_b():
    # 90 vs 10 Mbit/s: +2.553 dB and -6.990 dB
    res = nru(s4_pair(90e6, 10e6), W)
    assert res.flows["flow1"] == pytest.approx(10 * math.log10(1.8))
    assert res.flows["flow2"] == pytest.approx(10 * math.log10(0.2))
    assert res.positive > 0 and res.negative < 0
    assert res.system == pytest.approx((10 * math.log10(1.8) + 10 * math.log10(0.2)) / 2)
    assert res.case == "B"
    # Jain's index sees the same run as J = 100^2 / (2 (90^2 + 10^2)) = 0.6098
    assert mean_jain_over_time(s4_pair(90e6, 10e6)) == pytest.approx(10_000 / 16_400)


@pytest.mark.parametrize(
    ("r1", "r2", "case"),
    [
        (50e6, 50e6, "E"),  # both at the calibrated share: all fair
        (75e6, 50e6, "D"),  # one better (+1.76 dB), one fair: all fair or better
        (90e6, 60e6, "D"),  # both better (e.g. the calibration under-used the link)
        (40e6, 40e6, "A"),  # both get less (-0.97 dB each): all unfair
        (50e6, 5e6, "C"),
        (90e6, 10e6, "B"),
    ],
)
def test_nru_cases_on_s4_style_pairs(r1, r2, case):
    assert nru(s4_pair(r1, r2), W).case == case


def test_nru_tolerance_decides_what_fair_means():
    # +0.3 dB / -0.3 dB: fair at the default 0.5 dB, B at 0.1 dB
    u = {"a": 0.3, "b": -0.3}
    assert nru_case(u) == "E"
    assert nru_case(u, tol_db=0.1) == "B"
    assert nru_case({"a": 0.0, "b": -0.6}) == "C"
    assert nru_case({"a": -0.7, "b": -0.6}) == "A"
    assert nru_case({"a": 0.6, "b": 0.0}) == "D"
    with pytest.raises(ValueError):
        nru_case([])
    with pytest.raises(ValueError):
        nru_case([0.0], tol_db=-1)
    with pytest.raises(ValueError):
        nru_case([math.nan])


def sign_case(values: list[float]) -> str:
    """S4's Table II read directly off U_N+ and U_N- (tolerance 0)."""
    s = nru_summary(values, tol_db=0)
    has_pos, has_neg = not math.isnan(s.positive), not math.isnan(s.negative)
    if not has_pos:
        return "A"
    if has_neg:
        return "B" if s.positive > 0 else "C"
    return "D" if s.positive > 0 else "E"


def test_case_logic_equals_the_sign_pattern_of_u_n_plus_and_minus():
    # every vector of 1-3 flows over {-2, -1, 0, 1, 2} dB
    seen = set()
    for n in (1, 2, 3):
        for values in itertools.product([-2.0, -1.0, 0.0, 1.0, 2.0], repeat=n):
            c = nru_case(values, tol_db=0)
            assert c == sign_case(list(values)), values
            seen.add(c)
    assert seen == set(NRU_CASES)  # every case is reachable


def test_nru_over_time_series_and_floor():
    t = long_table({"flow1": [100e6, 50e6, 0.0], "flow2": [25e6, 50e6, 50e6]})
    u = nru_over_time(t, W)
    assert u["flow1"].iloc[0] == pytest.approx(10 * math.log10(2))  # +3.01 dB
    assert u["flow1"].iloc[1] == pytest.approx(0.0)
    assert u["flow1"].iloc[2] == -math.inf  # starved sample
    assert u["flow2"].iloc[0] == pytest.approx(-10 * math.log10(2))
    assert nru_over_time(t, W, floor_db=-30)["flow1"].iloc[2] == -30
    res = nru(t, W, floor_db=-30)
    assert res.flows["flow1"] == pytest.approx((10 * math.log10(2) + 0 - 30) / 3)
    assert nru(t, W).as_dict()["U_n"]["flow1"] is None  # -inf is not JSON
    with pytest.raises(ValueError, match="flow2"):
        nru_over_time(t, {"flow1": 1.0})
    with pytest.raises(ValueError):
        nru_over_time(t, {"flow1": 1.0, "flow2": 0.0})


def test_nru_summary_numbers():
    s = nru_summary({"x": 2.0, "y": -4.0})
    assert (s.system, s.positive, s.negative, s.case) == (-1.0, 2.0, -4.0, "B")
    d = s.as_dict()
    assert d["U_N"] == -1.0 and d["U_N+"] == 2.0 and d["U_N-"] == -4.0 and d["case"] == "B"
    s = nru_summary([1.0, 3.0])
    assert s.positive == 2.0 and math.isnan(s.negative) and s.as_dict()["U_N-"] is None


def test_flow_labels_and_weights():
    flows = pd.DataFrame({"name": ["A", "B", "C"], "cca": ["cubic", "cubic", "bbr"], "pacing": [False, True, True]})
    assert list(flow_labels(flows)) == ["cubic", "cubic+pacing", "bbr"]
    w = flow_weights(flows, {"cubic": 1.0, "cubic+pacing": 2.0, "bbr": 3.0})
    assert w == {"A": 1.0, "B": 2.0, "C": 3.0}
    with pytest.raises(ValueError, match="cubic\\+pacing"):
        flow_weights(flows, {"cubic": 1.0, "bbr": 3.0})


def test_calibration_runs_the_same_cca_against_itself(fake_sim, s0_dict):
    seen = []

    def spy(spec, seed):
        seen.append((spec, seed))
        return ccfair.run(spec, seed=seed)

    w = calibrate_nru_weights(s0_dict, ["newreno", "cubic+pacing"], seeds=[1, 2], run=spy)
    # fake core: flow i delivers (i+1) * 1000 B per 100 ms = 80 and 160 kbit/s -> mean 120 kbit/s
    assert w == {"reno": pytest.approx(1 / 120_000), "cubic+pacing": pytest.approx(1 / 120_000)}
    assert len(seen) == 4 and [s for _, s in seen] == [1, 2, 1, 2]
    reno_spec = seen[0][0]
    assert [f.cca for f in reno_spec.flows] == ["reno", "reno"]
    assert [f.label for f in seen[2][0].flows] == ["cubic+pacing", "cubic+pacing"]
    # everything else as in the experiment: RTTs, start times, bottleneck
    assert [f.start for f in reno_spec.flows] == [0, 5_000_000_000]
    assert reno_spec.bottleneck.rate == 10_000_000


def test_calibration_end_to_end_with_the_fake(fake_sim, s0_dict):
    r = ccfair.run(s0_dict)
    w = flow_weights(r.flows, calibrate_nru_weights(r, ["cubic", "bbr"]))
    res = nru(r, w)
    # A 80 kbit/s and B 160 kbit/s against an expected 120 kbit/s each
    assert res.flows["A"] == pytest.approx(10 * math.log10(80 / 120))  # -1.76 dB
    assert res.flows["B"] == pytest.approx(10 * math.log10(160 / 120))  # +1.25 dB
    assert res.case == "B"


def test_calibration_bad_input(fake_sim, s0_dict):
    with pytest.raises(SpecError, match="flows.0.cca"):
        calibrate_nru_weights(s0_dict, "nosuchcca")
    with pytest.raises(ValueError):
        calibrate_nru_weights(s0_dict, [])
    with pytest.raises(ValueError):
        calibrate_nru_weights(s0_dict, "reno", seeds=[])


# ---------------------------------------------------------------- S1 slowdown


def test_slowdown_index_hand_computed():
    assert slowdown_index([1, 2], [1, 1]) == pytest.approx(9 / 10)
    assert slowdown_index([2, 4, 6], [4, 8, 12]) == pytest.approx(1.0)  # everyone halved: fair
    # ratios (0.5, 1, 2): (3.5)^2 / (3 * 5.25) = 0.7778
    assert slowdown_index([1, 3, 8], [2, 3, 4]) == pytest.approx(12.25 / 15.75)
    with pytest.raises(ValueError):
        slowdown_index([1], [1, 2])
    with pytest.raises(ValueError):
        slowdown_index([1], [0])


def test_slowdown_per_cca():
    i = slowdown_per_cca({"cubic": 6.0, "vegas": 1.0}, {"vegas": 4.0, "cubic": 5.0})
    assert i == {"cubic": pytest.approx(1.2), "vegas": pytest.approx(0.25)}
    # S1's feedback thresholds: cubic (1.2) is at the drop threshold, vegas far below 0.8
    with pytest.raises(ValueError):
        slowdown_per_cca({"a": 1.0}, {"b": 1.0})


# ---------------------------------------------------------------- S3 relative throughput


def test_relative_throughput_per_class():
    flows = pd.DataFrame({"name": list("abcd"), "cca": ["dctcp", "dctcp", "bbr2", "bbr2"], "throughput_bps": [30.0, 30.0, 15.0, 25.0]})
    rel = relative_throughput(flows, capacity_bps=100.0)
    # C/N = 25: dctcp mean 30 -> 1.2, bbr2 mean 20 -> 0.8
    assert rel.to_dict() == {"dctcp": pytest.approx(1.2), "bbr2": pytest.approx(0.8)}
    flows["klass"] = ["x", "y", "y", "y"]
    assert relative_throughput(flows, 100.0, by="klass").to_dict() == {
        "x": pytest.approx(1.2),
        "y": pytest.approx((30 + 15 + 25) / 3 / 25),
    }
    with pytest.raises(ValueError, match="nope"):
        relative_throughput(flows, 100.0, by="nope")


# ---------------------------------------------------------------- harm


def test_harm_ware_et_al():
    assert harm(10.0, 4.0) == pytest.approx(0.6)  # throughput 10 -> 4
    assert harm(20.0, 50.0, more_is_better=False) == pytest.approx(0.6)  # delay 20 -> 50 ms
    assert harm(10.0, 0.0) == 1.0  # starved: total harm
    assert harm(10.0, 10.0) == 0.0
    assert harm(10.0, 12.0) == pytest.approx(-0.2)  # the competitor helped
    assert math.isnan(harm(0.0, 1.0))
    assert math.isnan(harm(1.0, 0.0, more_is_better=False))


def test_all_new_metrics_are_exported():
    for name in metrics.__all__:
        assert callable(getattr(metrics, name)) or isinstance(getattr(metrics, name), dict)
