"""The raw result of one run as Python reads it: what ``_core.simulate`` returns.

The shape is declared in Rust (``crates/ccfair-sim/src/result.rs``, ``RunResult``);
the binding converts it by its serde serialization, so the keys here are the Rust
field names. These ``TypedDict`` classes give Python's readers (result.py) the
keys and types; tests/test_result_keys.py fails when they differ from the
simulator's, from the testbed's raw result (testbed/runner.py) or from the tests'
stand-in (tests/fake_core.py).

A series is a list, or a numpy array with ``simulate(arrays=True)``.
"""

from __future__ import annotations

from typing import Any, TypedDict, get_type_hints

#: A numeric series: a list of numbers, or a one-dimensional numpy array.
Series = Any


class RawFlow(TypedDict):
    name: str
    cca: str
    rtt_ns: int
    start_ns: int
    delivered_bytes: Series
    arrival_bytes: Series
    sent_packets: int
    retransmissions: int
    losses_detected: int
    drops: int
    drops_overflow: int
    drops_aqm: int
    ecn_marks: int
    rto_count: int
    loss_probes: int
    min_rtt_ns: int
    mean_rtt_ns: float
    recoveries: int
    size_bytes: int | None
    fct_ns: int | None
    random_losses: int
    ecn: str
    ecn_reductions: int
    sojourn_sum_ns: int
    sojourn_pkts: int


class RawTrace(TypedDict):
    flow: Series
    time_ns: Series
    cwnd_pkts: Series
    inflight_pkts: Series
    srtt_ns: Series
    pacing_rate_bps: Series
    ssthresh_pkts: Series


#: A functional TypedDict: one key ("class") is a Python keyword.
RawMeter = TypedDict(
    "RawMeter",
    {
        "window": Series,
        "start_ns": Series,
        "class": Series,
        "main_pkts": Series,
        "rrmqs_pkts": Series,
        "main_flows": Series,
        "rrmqs_flows": Series,
        "main_rate": Series,
        "rrmqs_rate": Series,
        "index": Series,
        "action": list[str],
        "weight": Series,
        "main_done": Series,
        "rrmqs_done": Series,
        "main_flow_rate": Series,
        "rrmqs_flow_rate": Series,
        "pinned_flow": Series,
        "pinned_class": Series,
        "pinned_ns": Series,
        "released_ns": Series,
    },
)


class RawLink(TypedDict):
    """One link of the run (result.rs ``LinkStats``): a topology's links in order, or the
    dumbbell's one, "bottleneck"."""

    name: str
    rate_bps: int
    utilisation: float
    mean_queue_packets: float
    mean_queue_bytes: float
    drops: int
    marks: int
    loss_drops: int
    delivered_bytes: int


#: RawLink's keys in order: every per-link value a run reports (the summary's ``links``, the
#: sweep store's links table), with its type (str, int, float).
LINK_FIELDS: dict[str, type] = get_type_hints(RawLink)


class RawResult(TypedDict):
    duration_ns: int
    bin_ns: int
    sample_ns: int
    sojourn_bin_ns: int
    bottleneck_rate_bps: int
    flows: list[RawFlow]
    link_tx_bytes: Series
    queue_time_ns: Series
    queue_packets: Series
    queue_bytes: Series
    sojourn_bin: Series
    sojourn_count: Series
    sojourn_l4s_bin: Series
    sojourn_l4s_count: Series
    sojourn_sum_ns_per_bin: Series
    sojourn_pkts_per_bin: Series
    trace: RawTrace
    cca_classes: list[str]
    meter: RawMeter
    links: list[RawLink]
    events: int
    data_packets: int
    wall_ns: int
