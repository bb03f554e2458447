"""S4's NRU with weights from ccfair's own calibration runs, on the real simulator.

S0/S4 setting at 10 Mbit/s, 50 ms (S0's timing, 1 s samples as in S4); three
seeds per calibration. Runs take milliseconds each.
"""

from __future__ import annotations

import copy

import ccfair
import pytest
from ccfair import _core  # noqa: F401  # a missing extension must fail the suite, not skip it
from ccfair import metrics as m
from ccfair.calibration import calibrate_nru_weights

BASE = {
    "name": "s4-style",
    "duration": "45s",
    "window": {"start": "10s", "end": "45s"},
    "bin": "1s",
    "seed": 1,
    "bottleneck": {"rate": "10Mbit", "buffer": "0.5bdp"},
    "flows": [
        {"name": "A", "cca": "cubic", "rtt": "50ms", "start": "0s", "start_jitter": "100ms"},
        {"name": "B", "cca": "bbr", "rtt": "50ms", "start": "5s", "start_jitter": "100ms"},
    ],
}
SEEDS = [1, 2, 3]


@pytest.fixture(scope="module")
def weights() -> dict[str, float]:
    return calibrate_nru_weights(BASE, ["cubic", "bbr"], seeds=SEEDS)


def test_calibration_expects_half_the_link_each(weights):
    # two flows of one CCA fill 10 Mbit/s; goodput is at most 1448/1500 of it -> <= 4.83 Mbit/s each
    for cca, w in weights.items():
        assert 0.45 * 10e6 < 1 / w <= 0.5 * 10e6 * 1448 / 1500, cca


def test_bbr_starving_cubic_is_case_b(weights):
    # S0: at 0.5 BDP BBR takes nearly all bandwidth from CUBIC
    for seed in SEEDS:
        r = ccfair.run(BASE, seed=seed)
        res = m.nru(r, m.flow_weights(r.flows, weights))
        assert res.case == "B"
        assert res.flows["B"] > 2.0  # BBR gets > 1.58x its calibrated share
        assert res.flows["A"] < -5.0  # CUBIC < 0.32x
        # the link is shared, not grown: by Jensen the mean of the dB values is below 0
        assert res.system < 0
        assert m.mean_jain_over_time(r) < 0.7


def test_same_cca_pair_stays_near_its_calibrated_share():
    # The metric's case A (a same-CCA pair at its calibrated share, NRU near 0 dB) in the
    # idealized mode, where the 1.5 dB bound was set. With the default host noise a CUBIC pair
    # at this point spreads wider than real Linux (seeds 1-10: A's share 0.489-0.679; testbed,
    # 10 runs: 0.463-0.589, bench/data/testbed-cubic-pair-0.5bdp-2026-11-25.jsonl), which is a
    # fidelity difference documented in docs/fidelity.md, not something this metric test hides.
    base = {**copy.deepcopy(BASE), "noise": "none"}
    weights = calibrate_nru_weights(base, ["cubic"], seeds=SEEDS)
    spec = copy.deepcopy(base)
    spec["flows"][1]["cca"] = "cubic"
    jains = []
    for seed in SEEDS:
        r = ccfair.run(spec, seed=seed)
        res = m.nru(r, m.flow_weights(r.flows, weights))
        assert all(abs(u) < 1.5 for u in res.flows.values()), res.flows
        assert abs(res.system) < 0.5
        jains.append(m.mean_jain_over_time(r))
    # S4 Table III: a CUBIC pair's J is 0.90 as a mean over five runs (0.90-0.97 over the CCAs).
    assert sum(jains) / len(jains) > 0.9, jains
