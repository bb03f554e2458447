"""Metrics against hand-computed examples and their sources' definitions (docs/metrics.md)."""

import math

import pytest
from ccfair.metrics import fness, histogram_mean, histogram_percentile, jain, share, utilization


def test_jain_examples():
    assert jain([1, 1]) == 1.0
    assert jain([1, 0]) == 0.5
    assert jain([5, 5, 5, 5]) == 1.0
    assert jain([1, 0, 0, 0]) == 0.25  # 1/n when one flow takes everything
    assert jain([1, 2]) == pytest.approx(9 / 10)  # (1+2)^2 / (2 * (1+4))
    assert jain([1, 2, 3]) == pytest.approx(36 / 42)  # 6^2 / (3 * 14)


def test_jain_is_scale_invariant():
    assert jain([1, 2, 3]) == pytest.approx(jain([10e6, 20e6, 30e6]))


def test_jain_undefined():
    assert math.isnan(jain([]))
    assert math.isnan(jain([0, 0]))
    with pytest.raises(ValueError):
        jain([1, -1])


def test_fness_definition_from_s0():
    assert fness(1, 1) == 0.0
    assert fness(1, 2) == 0.5  # B got twice A's bytes
    assert fness(2, 1) == -0.5
    assert fness(0, 5) == 1.0  # B took everything
    assert fness(5, 0) == -1.0  # A took everything
    assert fness(3, 4) == pytest.approx(0.25)
    assert fness(4, 3) == pytest.approx(-0.25)


def test_fness_is_antisymmetric():
    for a, b in [(1, 3), (7, 2), (10, 10), (0, 1)]:
        assert fness(a, b) == pytest.approx(-fness(b, a))


def test_fness_undefined():
    assert math.isnan(fness(0, 0))
    with pytest.raises(ValueError):
        fness(-1, 1)


def test_utilization():
    # 10 Mbit/s for 35 s = 43 750 000 bytes
    assert utilization(43_750_000, 10_000_000, 35) == 1.0
    assert utilization(21_875_000, 10_000_000, 35) == 0.5
    with pytest.raises(ValueError):
        utilization(1, 0, 1)


def test_share():
    assert share([1, 3]) == [0.25, 0.75]
    assert share([2, 2, 4]) == [0.25, 0.25, 0.5]
    assert all(math.isnan(x) for x in share([0, 0]))


def test_histogram_percentile_upper_edge():
    bins, counts = [0, 1, 9], [50, 49, 1]
    assert histogram_percentile(bins, counts, 1.0, 50) == 1.0
    assert histogram_percentile(bins, counts, 1.0, 99) == 2.0
    assert histogram_percentile(bins, counts, 1.0, 100) == 10.0
    # order of the sparse bins does not matter; width scales the result
    assert histogram_percentile([9, 1, 0], [1, 49, 50], 0.1, 99) == pytest.approx(0.2)


def test_histogram_percentile_edge_cases():
    assert math.isnan(histogram_percentile([], [], 1.0, 99))
    assert histogram_percentile([4], [1], 0.5, 1) == 2.5  # a single packet
    with pytest.raises(ValueError):
        histogram_percentile([0], [1], 1.0, 0)


def test_histogram_percentile_of_arrays_equals_the_list_walk():
    """numpy arrays (a sweep worker's simulator output) take a numpy path; it must give the
    list walk's value bit for bit: unsorted and repeated bins, zero counts, empty, every q."""
    import numpy as np

    rng = np.random.default_rng(16)
    for case in range(3000):
        n = int(rng.integers(0, 40))
        bins = rng.integers(0, 30 if case % 3 == 0 else 5000, n).astype(np.uint32)  # repeats in every third
        counts = rng.integers(0, 3 if case % 2 else 10_000, n).astype(np.uint32)  # many zeros in odd cases
        q = float(rng.choice([0.5, 1, 50, 99, 99.9, 100, float(rng.uniform(0.01, 100))]))
        expect = histogram_percentile(bins.tolist(), counts.tolist(), 0.1, q)
        got = histogram_percentile(bins, counts, 0.1, q)
        assert got == expect or (math.isnan(got) and math.isnan(expect)), (bins, counts, q)


def test_histogram_mean_uses_midpoints():
    assert histogram_mean([0, 2], [1, 1], 1.0) == pytest.approx((0.5 + 2.5) / 2)
    assert math.isnan(histogram_mean([], [], 1.0))
