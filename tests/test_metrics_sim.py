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


def test_same_cca_pair_stays_near_its_calibrated_share(weights):
    spec = copy.deepcopy(BASE)
    spec["flows"][1]["cca"] = "cubic"
    jains = []
    for seed in SEEDS:
        r = ccfair.run(spec, seed=seed)
        res = m.nru(r, m.flow_weights(r.flows, weights))
        # Real Linux splits a CUBIC pair as unevenly as 0.325 / 0.675 from run to run (testbed,
        # 10 runs at 1 BDP, bench/data/realism-testbed-2026-11-25-frames.jsonl): -1.9 / +1.3 dB.
        assert all(abs(u) < 2.0 for u in res.flows.values()), res.flows
        assert abs(res.system) < 0.5
        jains.append(m.mean_jain_over_time(r))
    # S4 Table III: a CUBIC pair's J is 0.90 as a mean over five runs (0.90-0.97 over the
    # CCAs); single runs scatter around it (the testbed run above at 0.325 / 0.675 has J 0.89).
    assert sum(jains) / len(jains) > 0.9, jains
