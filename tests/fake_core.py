"""A stand-in for ``ccfair._core`` with the same interface and simple, hand-computable output.

Flow ``i`` delivers ``(i + 1) * 1000`` bytes in every bin from its start on;
the link sends those bytes scaled to wire size (1500/1448); the sojourn
histogram holds 90 packets in bin 10, 9 in bin 20 and 1 in bin 30; every bin
has 10 packets with 2 ms mean sojourn. The seed shifts the queue samples so
different seeds give different (deterministic) output.
"""

from __future__ import annotations

import json


class SimConfigError(ValueError):
    pass


class SimValueError(ValueError):
    pass


class SimResourceError(MemoryError):
    pass


def check(config_json: str, limits_json: str | None = None) -> float:
    """The real engine's projection is tested against the real engine (tests/test_limits.py);
    here a stand-in cost: the bytes the bottleneck can send in the run."""
    cfg = json.loads(config_json)
    return cfg["bottleneck"]["rate_bps"] / 8 * cfg["duration_ns"] / 1e9


def ccas() -> list[tuple[str, str]]:
    return [("reno", "fake reno"), ("cubic", "fake cubic"), ("bbr", "fake bbr")]


#: Spellings the fake registry accepts (the real ones come from cc::REGISTRY).
ALIASES = {"reno": ["newreno", "new-reno"], "bbr": ["bbr1", "bbrv1"]}


def schema() -> str:
    """The registry's shape (``_core.schema()``): names and aliases, no parameters; drop-tail only."""
    entry = {"variants": [], "params": [], "needs_ecn": False, "transport": "tcp", "colour": None, "paced_colour": None}
    return json.dumps(
        {
            "ccas": [{"name": n, "source": s, "aliases": ALIASES.get(n, []), "needs_pacing": n == "bbr", **entry} for n, s in ccas()],
            "qdiscs": [{"kind": "droptail", "source": "fake fifo", "aliases": [], "params": [], "meter": False, "needs_ecn_flows": False}],
        }
    )


#: The RRMQS meter's columns (result.rs MeterResult); empty here, as for every other discipline.
METER_KEYS = (
    "window", "start_ns", "class", "main_pkts", "rrmqs_pkts", "main_flows", "rrmqs_flows", "main_rate", "rrmqs_rate",
    "index", "action", "weight", "main_done", "rrmqs_done", "main_flow_rate", "rrmqs_flow_rate", "pinned_flow",
    "pinned_class", "pinned_ns", "released_ns",
)  # fmt: skip


def simulate(config_json: str, limits_json: str | None = None, arrays: bool = False) -> dict:
    """``arrays`` is accepted and ignored: the series are lists either way (Result takes both)."""
    cfg = json.loads(config_json)
    known = {n for n, _ in ccas()}
    for i, f in enumerate(cfg["flows"]):
        if f["cca"] not in known:
            raise SimValueError(f"flows.{i}.cca", f"unknown CCA '{f['cca']}'")
    duration, bin_ns, sample_ns = cfg["duration_ns"], cfg["bin_ns"], cfg["sample_ns"]
    n_bins = -(-duration // bin_ns)
    flows = []
    for i, f in enumerate(cfg["flows"]):
        delivered = [0 if b * bin_ns < f["start_ns"] else (i + 1) * 1000 for b in range(n_bins)]
        flows.append(
            {
                "name": f["name"],
                "cca": f["cca"],
                "rtt_ns": f["rtt_ns"],
                "start_ns": f["start_ns"],
                "delivered_bytes": delivered,
                "arrival_bytes": list(delivered),
                "sent_packets": 100 + i,
                "retransmissions": 3 * i,
                "losses_detected": 2 * i,
                "drops": i,
                "drops_overflow": i,
                "drops_aqm": 0,
                "ecn_marks": 0,
                "rto_count": 0,
                "loss_probes": 0,
                "min_rtt_ns": f["rtt_ns"] + 1_000_000,
                "mean_rtt_ns": float(f["rtt_ns"]) + 5e6,
                "recoveries": i,
                "size_bytes": None,
                "fct_ns": None,
                "random_losses": 0,
                "ecn": "off",
                "ecn_reductions": 0,
                "sojourn_sum_ns": 0,
                "sojourn_pkts": 0,
            }
        )
    link = [sum(fl["delivered_bytes"][b] for fl in flows) * 1500 // 1448 for b in range(n_bins)]
    qt = list(range(0, duration, sample_ns))
    qp = [(k + cfg["seed"]) % 5 for k in range(len(qt))]
    trace = {k: [] for k in ("flow", "time_ns", "cwnd_pkts", "inflight_pkts", "srtt_ns", "pacing_rate_bps", "ssthresh_pkts")}
    if cfg["trace"]:
        for t in range(0, duration, sample_ns * 100):
            for i in range(len(flows)):
                trace["flow"].append(i)
                trace["time_ns"].append(t)
                trace["cwnd_pkts"].append(10 + i)
                trace["inflight_pkts"].append(5)
                trace["srtt_ns"].append(cfg["flows"][i]["rtt_ns"])
                trace["pacing_rate_bps"].append(0)
                trace["ssthresh_pkts"].append(2**31 - 1)
    return {
        "duration_ns": duration,
        "bin_ns": bin_ns,
        "sample_ns": sample_ns,
        "sojourn_bin_ns": cfg["sojourn_bin_ns"],
        "bottleneck_rate_bps": cfg["bottleneck"]["rate_bps"],
        "flows": flows,
        "link_tx_bytes": link,
        "queue_time_ns": qt,
        "queue_packets": qp,
        "queue_bytes": [p * 1500 for p in qp],
        "sojourn_bin": [30, 10, 20],
        "sojourn_count": [1, 90, 9],
        "sojourn_l4s_bin": [],
        "sojourn_l4s_count": [],
        "sojourn_sum_ns_per_bin": [20_000_000] * n_bins,
        "sojourn_pkts_per_bin": [10] * n_bins,
        "trace": trace,
        "cca_classes": list(dict.fromkeys(f["cca"] for f in cfg["flows"])),
        "meter": {k: [] for k in METER_KEYS},
        "links": [
            {
                "name": "bottleneck",
                "rate_bps": cfg["bottleneck"]["rate_bps"],
                "utilisation": sum(link) * 8e9 / (cfg["bottleneck"]["rate_bps"] * duration),
                "mean_queue_packets": sum(qp) / len(qp) if qp else 0.0,
                "mean_queue_bytes": sum(qp) * 1500 / len(qp) if qp else 0.0,
                "drops": sum(f["drops"] for f in flows),
                "marks": 0,
                "loss_drops": 0,
                "delivered_bytes": sum(link),
            }
        ],
        "events": 1234,
        "data_packets": 1000,
        "wall_ns": 5_000_000,
    }
