"""Max-min fair share (Prudentia, Sigcomm 2024) on hand-computed cases."""

from __future__ import annotations

import math

import ccfair
import pytest
from ccfair import metrics

S = 1_000_000_000


@pytest.mark.parametrize(
    ("capacity", "demands", "expected"),
    [
        # all equal: an equal split
        (10, [None, None], [5, 5]),
        (10, [None] * 4, [2.5] * 4),
        # internetfairness.net's example: a service capped at 10 Mbit/s next to a bulk
        # download on a 50 Mbit/s link gets its 10, the other the remaining 40
        (50, [10, None], [10, 40]),
        # the same capped service on an 8 Mbit/s link: the cap is above half the link
        (8, [10, None], [4, 4]),
        # two small demands satisfied, the rest split equally: (12 - 2 - 3) / 2
        (12, [2, 3, None, None], [2, 3, 3.5, 3.5]),
        # both caps above an equal share: equal split
        (10, [8, 9], [5, 5]),
        # demands below the capacity: everyone gets what it wants
        (10, [1, 2], [1, 2]),
        # order of the flows does not matter
        (12, [None, 3, None, 2], [3.5, 3, 3.5, 2]),
        # an idle flow (demand 0) leaves everything to the others
        (9, [0, None, None], [0, 4.5, 4.5]),
        (10, [], []),
    ],
)
def test_water_filling_hand_computed(capacity: float, demands: list, expected: list) -> None:
    got = metrics.max_min_fair_shares(capacity, demands)
    assert got == pytest.approx(expected)


def test_allocations_never_exceed_capacity_or_demand() -> None:
    got = metrics.max_min_fair_shares(7, [1, 5, 2.5, math.inf])
    assert sum(got) == pytest.approx(7)
    assert got == pytest.approx([1, 2, 2, 2])


def test_a_flow_that_joins_halfway_is_entitled_to_half_the_link_for_half_the_window() -> None:
    # A alone for 5 s (10 Mbit/s), then A and B for 5 s (5 each): means 7.5 and 2.5.
    rates = metrics.max_min_fair_rates(10e6, (0, 10 * S), [(0, 10 * S), (5 * S, 10 * S)], [None, None], S // 10)
    assert rates == pytest.approx([7.5e6, 2.5e6])


def test_an_app_limited_flow_that_finishes_hands_its_share_back() -> None:
    # C finishes at 4 s; from 0-4 s three flows share (10/3 each), then two (5 each).
    rates = metrics.max_min_fair_rates(10e6, (0, 10 * S), [(0, 10 * S), (0, 10 * S), (0, 4 * S)], [None, None, None], S // 10)
    assert rates == pytest.approx([(4 * 10 / 3 + 6 * 5) / 10 * 1e6] * 2 + [4 * 10 / 3 / 10 * 1e6])


def test_max_min_share_ratio() -> None:
    assert metrics.max_min_share(3.6, 5) == pytest.approx(0.72)  # Prudentia's average loser
    assert math.isnan(metrics.max_min_share(1, 0))


def _run(flows: list[dict]) -> ccfair.Result:
    return ccfair.run(
        {
            "duration": "20s",
            "window": {"start": "5s"},
            "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
            "flows": flows,
        }
    )


def test_result_rate_capped_flow_gets_its_cap_as_fair_share() -> None:
    r = _run([{"cca": "cubic", "rtt": "50ms", "rate_cap": "2Mbit"}, {"cca": "cubic", "rtt": "50ms"}])
    fair = r.flows["fair_share_bps"].tolist()
    assert fair[0] == pytest.approx(2e6)  # payload bit/s: exactly the cap
    # the bulk flow: the rest of the link in frame bytes (1514 per 1448 payload), back in payload bit/s
    assert fair[1] == pytest.approx((10e6 - 2e6 * 1514 / 1448) * 1448 / 1514)
    # the bulk flow, entitled to more than half the link, takes it (a share > 0.5 / 0.8)
    assert r.flows["maxmin_share"].iloc[1] > 0.9
    by_flow = {f["name"]: f for f in r.summary["flows"]}
    assert by_flow["A"]["maxmin_share"] == pytest.approx(r.flows["maxmin_share"].iloc[0])
    assert r.summary["maxmin_share_min"] == pytest.approx(r.flows["maxmin_share"].min())


def test_result_equal_flows_share_equal_fair_shares() -> None:
    r = _run([{"cca": "cubic", "rtt": "50ms"}, {"cca": "cubic", "rtt": "50ms"}])
    fair = r.flows["fair_share_bps"].tolist()
    assert fair[0] == pytest.approx(fair[1]) == pytest.approx(5e6 * 1448 / 1514)
    # the two shares add up to the link utilization (payload over payload capacity)
    total = r.flows["maxmin_share"].sum() / 2
    assert total == pytest.approx(r.summary["utilization"], rel=0.01)


def test_result_a_capped_flow_alone_is_exactly_at_its_fair_share() -> None:
    r = _run([{"cca": "cubic", "rtt": "50ms", "rate_cap": "2Mbit"}])
    assert r.flows["fair_share_bps"].iloc[0] == pytest.approx(2e6)
    assert r.flows["maxmin_share"].iloc[0] == pytest.approx(1.0, abs=0.01)


def test_result_fast_path_for_always_active_uncapped_flows_equals_water_filling():
    """Every flow active over the whole window, no cap below the link: capacity / n, as the general water-filling gives."""
    from ccfair import metrics
    from ccfair.result import _all_want_the_link

    active = [(0, 45_000_000_000), (5_000_000_000, 45_000_000_000)]
    window = (10_000_000_000, 45_000_000_000)
    assert _all_want_the_link(active, [None, None], window, 10e6)
    general = metrics.max_min_fair_rates(10e6, window, active, [None, None], 100_000_000)
    assert all(abs(g - 5e6) < 1e-6 for g in general)
    assert not _all_want_the_link(active, [None, 2e6], window, 10e6)  # a cap below the link
    assert not _all_want_the_link([(0, 20_000_000_000)] + active[1:], [None, None], window, 10e6)  # stops inside
