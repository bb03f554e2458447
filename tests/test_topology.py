"""Topologies on the Python side: ``[[links]]`` and flow paths in the experiment file, the RunConfig
they give, and the max-min fair share over several links (progressive filling, Bertsekas and
Gallager, Data Networks, section 6.5.2), checked against hand-computed allocations."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from ccfair import metrics
from ccfair.errors import SpecError
from ccfair.result import topology_fair_shares_bps
from ccfair.spec import Spec

# --------------------------------------------------------------------------- max-min, by hand


def test_a_parking_lot_gives_every_flow_half_of_a_link_when_all_links_are_equal() -> None:
    # links 0, 1, 2 of 10; the long flow crosses all three, one cross flow on each: every link
    # is shared by two flows, so everyone gets 5 (the long flow as much as each cross flow).
    got = metrics.max_min_fair_allocation([10, 10, 10], [[0, 1, 2], [0], [1], [2]], [None] * 4)
    assert got == [5, 5, 5, 5]


def test_two_bottlenecks_the_slower_link_sets_the_long_flows_share_and_the_other_cross_flow_takes_the_rest() -> None:
    # link 0: 10, link 1: 20. Long flow A on both, B on 0, C on 1. Link 0 saturates first at
    # 5 each (A, B frozen); C then fills link 1: 20 - 5 = 15.
    assert metrics.max_min_fair_allocation([10, 20], [[0, 1], [0], [1]], [None] * 3) == [5, 5, 15]


def test_a_capped_flow_gets_its_cap_and_the_others_share_what_it_leaves() -> None:
    # link 0: 12 with A (cap 2) and B; link 1: 10 with B and C (cap 1) and D.
    # Level rises: A frozen at 2, C frozen at 1; link 0 has B alone left with 10, link 1 has
    # B and D with 9: link 1 saturates at 4.5 each. B = D = 4.5, link 0 carries 6.5 < 12.
    got = metrics.max_min_fair_allocation([12, 10], [[0], [0, 1], [1], [1]], [2, None, 1, None])
    assert got == pytest.approx([2, 4.5, 1, 4.5])


def test_on_one_link_progressive_filling_is_the_single_link_water_filling() -> None:
    for cap, demands in ((10, [None, None]), (50, [10, None]), (12, [2, 3, None, None]), (7, [1, 1, 1])):
        got = metrics.max_min_fair_allocation([cap], [[0]] * len(demands), demands)
        assert got == pytest.approx(metrics.max_min_fair_shares(cap, demands))


def test_the_wire_cost_of_a_payload_rate_counts_on_each_link() -> None:
    # two flows on one 10-unit link, the second's rate costs twice as much there: both rise
    # together until 1x + 2x = 10.
    got = metrics.max_min_fair_allocation([10], [[0], [0]], [None, None], cost=[[1], [2]])
    assert got == pytest.approx([10 / 3, 10 / 3])


def test_flows_that_come_and_go_get_the_time_weighted_allocation() -> None:
    # 10 units, flow B active in the second half only: A alone (10), then 5 and 5.
    got = metrics.max_min_fair_rates_topology([10.0], [[0], [0]], [[1], [1]], (0, 10), [(0, 10), (5, 10)], [None, None], 1)
    assert got == pytest.approx([7.5, 2.5])
    single = metrics.max_min_fair_rates(10.0, (0, 10), [(0, 10), (5, 10)], [None, None], 1)
    assert got == pytest.approx(list(single))


# --------------------------------------------------------------------------- the experiment file

PARKING_LOT = """
duration = "10s"
[[links]]
name = "l1"
rate = "10Mbit"
delay = "5ms"
[[links]]
name = "l2"
rate = "20Mbit"
delay = "5ms"
buffer = "1bdp"
[[flows]]
name = "long"
cca = "cubic"
rtt = "80ms"
path = ["l1", "l2"]
[[flows]]
name = "x1"
cca = "reno"
rtt = "40ms"
path = ["l1"]
[[flows]]
name = "x2"
cca = "reno"
rtt = "20ms"
path = ["l2"]
reverse_path = ["l1"]
"""


@pytest.fixture
def parking_lot(tmp_path: Path) -> Spec:
    f = tmp_path / "pl.toml"
    f.write_text(PARKING_LOT)
    return Spec.from_toml(f)


def test_links_and_paths_become_the_run_configs_links_and_flow_paths(parking_lot: Spec) -> None:
    c = parking_lot.to_run_config()
    assert "bottleneck" not in c
    assert [lk["name"] for lk in c["links"]] == ["l1", "l2"]
    l1 = c["links"][0]
    assert set(l1) == {"name", "rate_bps", "delay_ns", "qdisc", "l2_overhead_bytes", "loss"}
    assert (l1["rate_bps"], l1["delay_ns"], l1["l2_overhead_bytes"], l1["loss"]) == (10_000_000, 5_000_000, 14, 0.0)
    assert [(f["path"], f.get("reverse_path")) for f in c["flows"]] == [(["l1", "l2"], None), (["l1"], None), (["l2"], ["l1"])]


def test_a_links_bdp_buffer_uses_the_largest_rtt_of_the_flows_crossing_it(parking_lot: Spec) -> None:
    c = parking_lot.to_run_config()
    # l1: 10 Mbit/s x 80 ms (the long flow) / 1500 B = 66.7 -> 67; l2: 20 Mbit/s x 80 ms = 133.3 -> 133
    assert c["links"][0]["qdisc"]["limit_packets"] == 67
    assert c["links"][1]["qdisc"]["limit_packets"] == 133


def test_a_dumbbell_file_gives_no_links_and_no_paths() -> None:
    spec = Spec.from_dict({"duration": "5s", "bottleneck": {"rate": "10Mbit"}, "flows": [{"cca": "cubic", "rtt": "50ms"}]})
    c = spec.to_run_config()
    assert "links" not in c and "bottleneck" in c
    assert all("path" not in f and "reverse_path" not in f for f in c["flows"])


def test_one_link_is_the_default_path_of_every_flow() -> None:
    spec = Spec.from_dict({"duration": "5s", "links": [{"name": "a", "rate": "10Mbit"}], "flows": [{"cca": "cubic", "rtt": "50ms"}]})
    assert spec.to_run_config()["flows"][0]["path"] == ["a"]


def test_a_trace_is_read_relative_to_the_experiment_file_and_sent_as_opportunities(tmp_path: Path) -> None:
    (tmp_path / "cell.up").write_text("0\n1\n1\n3\n4\n")
    f = tmp_path / "x.toml"
    f.write_text('duration = "5s"\n[[links]]\nname = "cell"\ntrace = "cell.up"\n[[flows]]\ncca = "cubic"\nrtt = "50ms"\n')
    spec = Spec.from_toml(f)
    link = spec.to_run_config()["links"][0]
    assert link["trace_ms"] == [0, 1, 1, 3, 4] and "rate_bps" not in link
    # 5 MTUs per 4 ms period: 5 x 1500 x 8 bit / 4 ms = 15 Mbit/s
    assert spec.links[0].mean_rate_bps == 15_000_000


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("1\n2\nx\n", "links.0.trace"),
        ("", "links.0.trace"),
        ("0\n0\n", "links.0.trace"),
        ("5\n3\n", "links.0.trace"),
    ],
)
def test_a_malformed_trace_names_the_links_trace(tmp_path: Path, text: str, field: str) -> None:
    (tmp_path / "t.up").write_text(text)
    with pytest.raises(SpecError) as e:
        Spec.from_dict(
            {"duration": "5s", "links": [{"name": "a", "trace": str(tmp_path / "t.up")}], "flows": [{"cca": "cubic", "rtt": "50ms"}]}
        )
    assert e.value.field == field


def test_a_links_qdisc_error_names_the_link_not_the_bottleneck() -> None:
    with pytest.raises(SpecError) as e:
        Spec.from_dict(
            {
                "duration": "5s",
                "links": [{"name": "a", "rate": "10Mbit", "buffer": "10pkt", "qdisc": {"kind": "codel", "target": "50ms"}}],
                "flows": [{"cca": "cubic", "rtt": "50ms"}],
            }
        )
    assert e.value.field == "links.0.qdisc.target"


# --------------------------------------------------------------------------- fair shares of a result


def test_the_fair_share_of_a_topology_run_is_in_payload_bits_per_second(parking_lot: Spec) -> None:
    c = parking_lot.to_run_config()
    raw = {"duration_ns": 10**10, "flows": [{"start_ns": 0} for _ in c["flows"]]}
    got = topology_fair_shares_bps(raw, c, (0, 10**10), 10**8)
    wire = (1448 + 52 + 14) / 1448  # payload -> wire bytes of a full segment
    # l1 (10) is the long flow's and x1's bottleneck: 5 Mbit/s of wire each; x2 gets 20 - 5 on l2
    assert got == pytest.approx([5e6 / wire, 5e6 / wire, 15e6 / wire])
    assert all(math.isfinite(x) for x in got)


# --------------------------------------------------------------------------- store, report, plots

LINKS_SUMMARY = [
    {
        "name": "l1",
        "rate_bps": 10_000_000,
        "utilisation": 0.99,
        "mean_queue_packets": 50.0,
        "mean_queue_bytes": 75e3,
        "drops": 27,
        "marks": 0,
        "loss_drops": 0,
        "delivered_bytes": 10,
    },
    {
        "name": "l2",
        "rate_bps": 20_000_000,
        "utilisation": 0.5,
        "mean_queue_packets": 1.0,
        "mean_queue_bytes": 1500.0,
        "drops": 0,
        "marks": 3,
        "loss_drops": 2,
        "delivered_bytes": 20,
    },
]


def test_a_runs_links_rows_carry_each_links_utilisation_queue_drops_and_marks_in_link_order() -> None:
    from ccfair.store import LINK_TABLE_COLUMNS, link_rows

    rows = link_rows("r1", {"links": LINKS_SUMMARY})
    assert [tuple(r) for r in rows] == [LINK_TABLE_COLUMNS] * 2
    assert [(r["position"], r["name"]) for r in rows] == [(0, "l1"), (1, "l2")]
    assert rows[0]["utilisation"] == 0.99 and rows[1]["marks"] == 3 and rows[1]["loss_drops"] == 2
    assert link_rows("r1", {}) == []


def test_the_report_summarises_every_link_per_grid_point() -> None:
    import pandas as pd
    from ccfair import plots, report

    runs = pd.DataFrame({"run_id": ["a", "b", "c"], "links.0.rate": ["10Mbit", "10Mbit", "20Mbit"]})
    links = pd.DataFrame.from_records(
        [{"run_id": rid, "position": k, **lk} for rid in ("a", "b", "c") for k, lk in enumerate(LINKS_SUMMARY)]
    )
    links.loc[links["run_id"] == "b", "drops"] = 33  # l1: 27 in run a, 33 in run b -> mean 30
    got = report._links_summary(runs, links, ["links.0.rate"])
    assert got[["links.0.rate", "link", "runs"]].values.tolist() == [
        ["10Mbit", "l1", 2],
        ["10Mbit", "l2", 2],
        ["20Mbit", "l1", 1],
        ["20Mbit", "l2", 1],
    ]
    assert got["utilisation (mean)"].tolist()[:2] == ["99.0%", "50.0%"]
    assert got["drops (mean)"].tolist()[0] == "30"
    fig = plots.links_by_point(links.assign(point=links["run_id"].map({"a": "10M", "b": "10M", "c": "20M"})), "point")
    assert [round(p.get_height(), 2) for p in fig.axes[0].patches] == [0.99, 0.5, 0.99, 0.5]


def test_the_primary_link_is_the_narrowest_one_crossed_by_data(parking_lot: Spec) -> None:
    from ccfair import topology

    c = parking_lot.to_run_config()
    assert topology.primary_link(c) == 0  # l1 (10 Mbit/s) before l2 (20 Mbit/s)
    assert topology.primary_rate_bps(c) == 10_000_000


def test_the_links_figure_draws_one_bar_per_link() -> None:
    from types import SimpleNamespace

    from ccfair import plots

    fig = plots.links_summary(SimpleNamespace(summary={"name": "x", "links": LINKS_SUMMARY}))
    bars = fig.axes[0].patches
    assert [round(b.get_height(), 2) for b in bars] == [0.99, 0.5]


# --------------------------------------------------------------------------- the testbed's configuration


def test_the_testbed_bottleneck_gets_link_indices_and_acks_without_reverse_path_wait_for_their_links_delays(parking_lot: Spec) -> None:
    from ccfair.testbed import runner

    config = parking_lot.to_run_config()
    r = runner._Run(parking_lot, config, Path("/nonexistent"), realtime=False)
    got = r.link_config([1_000, 2_000, 3_000])
    assert got["fwd_paths"] == [[0, 1], [0], [1]] and got["rev_paths"] == [[], [], [0]]
    # long and x1 return over a line with their links' delays (10 ms and 5 ms); x2's ACKs cross l1 instead
    assert got["rev_delay_ns"] == [1_000 + 10_000_000, 2_000 + 5_000_000, 3_000]
    assert got["primary_link"] == 0
    # the RunConfig's links as they are; each token bucket holds one frame: 1500 + the link's L2 overhead
    assert got["links"] == config["links"] and got["packet_bytes"] == 1500
    assert [lk["l2_overhead_bytes"] for lk in got["links"]] == [14, 14]
    assert "rate_bps" not in got and "qdisc" not in got


def test_flows_whose_paths_are_built_alike_are_padded_from_their_least_probed_base_rtt() -> None:
    """Flows through the same links have the same true base RTT; a probe's minimum is that base
    plus the host's waits, which a loaded host makes unequal (a stored map run probed 423 and 143 us
    for its two dumbbell flows, whose padded paths then differed by 0.28 ms; with the kernel's RTT
    sample, 42 and 118 us in one run). Each flow is padded from the least base of its kind; a remote
    flow from its own."""
    from ccfair.testbed.runner import shared_bases

    dumbbell = [{"name": "A"}, {"name": "B"}, {"name": "C"}]
    assert shared_bases(dumbbell, set(), [423_000, 143_000, 200_000]) == [143_000] * 3
    assert shared_bases(dumbbell, {1}, [300_000, 100_000, 200_000]) == [200_000, 100_000, 200_000]
    links = [{"path": ["l0", "l1"]}, {"path": ["l0"]}, {"path": ["l0"]}, {"path": ["l0"], "reverse_path": ["l1"]}]
    assert shared_bases(links, set(), [90_000, 60_000, 40_000, 70_000]) == [90_000, 40_000, 40_000, 70_000]


def test_the_testbed_reports_each_links_utilisation_over_the_windows_whole_bins(parking_lot: Spec) -> None:
    from ccfair.testbed import runner

    config = parking_lot.to_run_config()
    config.update(bin_ns=10**9, duration_ns=4 * 10**9, window_start_ns=10**9, window_end_ns=3 * 10**9)
    r = runner._Run(parking_lot, config, Path("/nonexistent"), realtime=False)
    link = {
        "name": "l1",
        "rate_bps": 8_000_000,
        "tx_bytes": [0, 10**6, 5 * 10**5, 0],
        "queue_packets": [1, 2, 4, 8],
        "queue_bytes": [0, 0, 0, 0],
    }
    link.update(drops=1, marks=2, loss_drops=3, delivered_bytes=4)
    got = r.link_stats([link], [0, 10**9, 2 * 10**9, 3 * 10**9])[0]
    # bins 1 and 2: 1.5 MB in 2 s at 8 Mbit/s = 0.75; samples at 1 s and 2 s: mean 3 packets
    assert got["utilisation"] == pytest.approx(0.75) and got["mean_queue_packets"] == 3
    assert (got["drops"], got["marks"], got["loss_drops"], got["delivered_bytes"]) == (1, 2, 3, 4)
