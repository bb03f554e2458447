"""The testbed's quality gate and the host facts stored with each testbed run of a campaign.

A testbed run measures real kernels on a real, shared host: a late bottleneck or an
overloaded host bends its result without failing it. A campaign (``ccfair sweep
--backend testbed``) therefore checks every run against the limits below, re-runs a run
over them (up to :data:`MAX_ATTEMPTS` times in all) and stores the last attempt marked
with what it exceeded (runs-table column ``quality``; docs/testbed.md, "Quality gate",
states these limits).

* Bottleneck timing: the 99th percentile of how late ccfair-bottleneck released a
  frame (``testbed.bottleneck.late_p99_us``) may not exceed one frame's transmission time
  at the bottleneck rate (:data:`LATE_P99_MAX_FRAMES` frame times). The token bucket holds
  one frame's worth of tokens, so a release up to one frame time late is caught up without
  losing capacity; later releases lose capacity and add delay (docs/testbed.md, "Limits").
* Host load: the 1-minute load average at the end of the run per CPU of the host
  (:data:`LOAD_PER_CPU_MAX`). A guard for hosts far busier than any the stored testbed data
  came from (the S0 and fidelity-map runs: at most 8.2 per CPU, p99 lateness at most
  192 us), not a measured threshold of harm: lateness is the measured one.
"""

from __future__ import annotations

import os
import socket
from typing import Any

__all__ = ["LATE_P99_MAX_FRAMES", "LOAD_PER_CPU_MAX", "MAX_ATTEMPTS", "frame_time_us", "over_limits", "host_facts"]

#: Highest p99 bottleneck lateness, in frame transmission times at the bottleneck rate.
LATE_P99_MAX_FRAMES = 1.0
#: Highest 1-minute load average per CPU at the end of a run.
LOAD_PER_CPU_MAX = 10.0
#: Attempts of one run in all (the first and its re-runs) before it is stored marked.
MAX_ATTEMPTS = 3


def frame_time_us(config: dict[str, Any], wire_bytes: int) -> float:
    """Transmission time of one frame (``wire_bytes`` + the link's L2 overhead) at the bottleneck rate, in us."""
    if config.get("links"):  # a topology: its primary link (the narrowest one crossed by data)
        from ccfair.topology import link_rate_bps, primary_link

        lk = config["links"][primary_link(config)]
        return (wire_bytes + int(lk.get("l2_overhead_bytes", 0))) * 8 / link_rate_bps(lk) * 1e6
    b = config["bottleneck"]
    return (wire_bytes + int(b.get("l2_overhead_bytes", 0))) * 8 / b["rate_bps"] * 1e6


def _cca_impl(tb: dict[str, Any], n_flows: int) -> str:
    """How each flow's CCA ran, comma-separated in flow order: ``module`` (the kernel's own)
    or ``bpf`` (a BPF struct_ops port), from the runner's ``testbed.ccas`` when it reports them."""
    ccas = tb.get("ccas")
    if not ccas:
        return ",".join(["module"] * n_flows)
    return ",".join(str(c.get("impl", "module")) for c in ccas)


def host_facts(summary: dict[str, Any], config: dict[str, Any], wire_bytes: int, cpus: int | None = None) -> dict[str, Any]:
    """The runs-table columns of one testbed run: where and how it ran, and its timing quality."""
    tb = summary.get("testbed", {})
    bn = tb.get("bottleneck", {})
    cpus = cpus or os.cpu_count() or 1
    load = tb.get("load_avg_1min")
    late_max = bn.get("late_max_ns")
    return {
        "host": socket.gethostname(),
        "kernel": tb.get("kernel", os.uname().release),
        "cca_impl": _cca_impl(tb, len(config["flows"])),
        "bottleneck_path": tb.get("bottleneck_path", "userspace"),
        "late_p99_us": bn.get("late_p99_us"),
        "late_max_ms": None if late_max is None else late_max / 1e6,
        "frame_time_us": frame_time_us(config, wire_bytes),
        "load_per_cpu": None if load is None else load / cpus,
    }


def over_limits(facts: dict[str, Any]) -> list[str]:
    """What a run's facts (:func:`host_facts`) exceed of the limits; empty when none."""
    out = []
    p99, frame = facts.get("late_p99_us"), facts["frame_time_us"]
    if p99 is not None and p99 > LATE_P99_MAX_FRAMES * frame:
        out.append(f"bottleneck late p99 {p99:g} us > {LATE_P99_MAX_FRAMES:g} frame time ({frame:.0f} us)")
    load = facts.get("load_per_cpu")
    if load is not None and load > LOAD_PER_CPU_MAX:
        out.append(f"host load {load:.1f} per CPU > {LOAD_PER_CPU_MAX:g}")
    return out
