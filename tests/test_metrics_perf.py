"""Performance metrics: queueing delay from the sojourn histogram, drop/mark and retransmission ratios, FCT statistics.

Finite flows are not simulated yet, so the FCT functions are checked on
synthetic tables with hand-computed percentiles.
"""

from __future__ import annotations

import math

import ccfair
import numpy as np
import pandas as pd
import pytest
from ccfair.metrics import (
    drop_mark_ratios,
    fct_stats,
    fct_stats_by,
    histogram_percentile,
    queue_delay_stats,
    ratio_by,
    retransmissions,
)


def hist(bins: list[int], counts: list[int], width_ms: float) -> pd.DataFrame:
    b = np.asarray(bins)
    return pd.DataFrame({"bin_start_ms": b * width_ms, "bin_end_ms": (b + 1) * width_ms, "count": counts})


def test_queue_delay_stats_hand_computed():
    # 50 packets in [0,1) ms, 49 in [1,2), 1 in [9,10)
    s = queue_delay_stats(hist([9, 0, 1], [1, 50, 49], 1.0))
    assert s["packets"] == 100
    assert s["mean_ms"] == pytest.approx((0.5 * 50 + 1.5 * 49 + 9.5 * 1) / 100)  # 1.08
    assert s["p50_ms"] == 1.0
    assert s["p99_ms"] == 2.0
    assert s["max_ms"] == 10.0


def test_queue_delay_stats_agrees_with_histogram_percentile():
    rng = np.random.default_rng(3)
    bins = sorted(rng.choice(500, size=40, replace=False).tolist())
    counts = rng.integers(1, 100, size=40).tolist()
    s = queue_delay_stats(hist(bins, counts, 0.1))
    for q in (50, 99):
        assert s[f"p{q}_ms"] == pytest.approx(histogram_percentile(bins, counts, 0.1, q))


def test_queue_delay_stats_empty_and_zero_counts():
    s = queue_delay_stats(hist([3], [0], 1.0))
    assert s["packets"] == 0 and all(math.isnan(s[k]) for k in ("mean_ms", "p50_ms", "p99_ms", "max_ms"))


def test_queue_delay_stats_of_a_result(fake_sim, s0_dict):
    # fake core: 90 packets in sojourn bin 10, 9 in bin 20, 1 in bin 30; bins are 100 us
    r = ccfair.run(s0_dict)
    s = queue_delay_stats(r)
    assert s["p50_ms"] == pytest.approx(1.1)
    assert s["p99_ms"] == pytest.approx(2.1)
    assert s["max_ms"] == pytest.approx(3.1)
    assert s["mean_ms"] == pytest.approx((1.05 * 90 + 2.05 * 9 + 3.05 * 1) / 100)  # 1.16
    assert s["p99_ms"] == pytest.approx(r.summary["queue_delay_ms"]["p99"])  # same rule as the summary


FLOWS = pd.DataFrame(
    {
        "name": ["a", "b", "c"],
        "cca": ["cubic", "bbr", "cubic"],
        "pacing": [False, False, True],
        "sent_packets": [100, 200, 0],
        "drops": [5, 30, 0],
        "retransmissions": [4, 20, 0],
        "ecn_marks": [10, 0, 0],
    }
)


def test_drop_and_mark_ratios_per_flow_and_class():
    per_flow = drop_mark_ratios(FLOWS)
    assert per_flow.loc["a", "drop_ratio"] == 0.05
    assert per_flow.loc["b", "drop_ratio"] == 0.15
    assert math.isnan(per_flow.loc["c", "drop_ratio"])  # sent nothing
    assert per_flow.loc["a", "mark_ratio"] == 0.1
    per_cca = drop_mark_ratios(FLOWS, by="cca")
    assert per_cca.loc["cubic", "drop_ratio"] == 0.05  # (5 + 0) / (100 + 0)
    per_label = drop_mark_ratios(FLOWS, by="label")
    assert set(per_label.index) == {"cubic", "bbr", "cubic+pacing"}
    # without a marks column (a run without ECN) the mark ratio is NaN
    assert drop_mark_ratios(FLOWS.drop(columns="ecn_marks"))["mark_ratio"].isna().all()
    with pytest.raises(ValueError, match="nosuch"):
        ratio_by(FLOWS, "nosuch")


def test_retransmissions_per_flow_and_class():
    rt = retransmissions(FLOWS)
    assert rt.loc["b", "retransmissions"] == 20 and rt.loc["b", "retransmission_ratio"] == 0.1
    rt = retransmissions(FLOWS, by="cca")
    assert rt.loc["cubic", "retransmissions"] == 4 and rt.loc["cubic", "sent_packets"] == 100
    assert rt.loc["cubic", "retransmission_ratio"] == 0.04


def test_retransmissions_of_a_result(fake_sim, s0_dict):
    # fake core: flow i retransmits 3 i packets of 100 + i sent
    r = ccfair.run(s0_dict)
    rt = retransmissions(r.flows)
    assert rt.loc["B", "retransmissions"] == 3
    assert rt.loc["B", "retransmission_ratio"] == pytest.approx(3 / 101)


def test_fct_stats_hand_computed():
    s = fct_stats(range(1, 101))  # FCTs 1..100 s
    assert s["count"] == 100
    assert s["mean"] == 50.5
    # linear interpolation between order statistics: position q/100 * (n-1)
    assert s["p50"] == pytest.approx(50.5)
    assert s["p95"] == pytest.approx(95.05)
    assert s["p99"] == pytest.approx(99.01)
    s = fct_stats([0.2, 0.4])
    assert (s["mean"], s["p50"], s["p99"]) == (pytest.approx(0.3), pytest.approx(0.3), pytest.approx(0.398))
    s = fct_stats([])
    assert s["count"] == 0 and math.isnan(s["p95"])
    with pytest.raises(ValueError):
        fct_stats([1.0, math.nan])


def test_fct_stats_by_class_and_size():
    df = pd.DataFrame(
        {
            "class": ["client"] * 4 + ["pop"] * 3,
            "size_bytes": [3_000_000, 3_000_000, 10_000, 3_000_000, 3_000_000, 3_000_000, 50_000],
            "fct_s": [1.0, 3.0, 0.1, 2.0, 0.5, 0.7, 0.05],
        }
    )
    by = fct_stats_by(df)
    assert by.loc["client", "count"] == 4 and by.loc["pop", "count"] == 3
    three_mb = fct_stats_by(df, sizes=(3e6, 3e6 + 1))  # S2: 3 MB objects only
    assert three_mb.loc["client", "mean"] == pytest.approx(2.0)
    assert three_mb.loc["client", "p50"] == pytest.approx(2.0)
    assert three_mb.loc["pop", "p50"] == pytest.approx(0.6)
    everyone = fct_stats_by(df, by=None)
    assert everyone.loc["all", "count"] == 7
    with pytest.raises(ValueError, match="fct_ms"):
        fct_stats_by(df, fct_col="fct_ms")
