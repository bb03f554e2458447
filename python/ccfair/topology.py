"""Topology input of an experiment: trace files and the flows' paths over ``[[links]]``.

A link's rate is constant (``rate``) or follows a trace (``trace``) in mahimahi's
format (Netravali et al., "Mahimahi: Accurate Record-and-Replay for HTTP", USENIX
ATC 2015; mahimahi's ``mm-link``): one line per delivery opportunity of one
1500-byte MTU, the opportunity's time as an integer number of milliseconds since the
start, non-decreasing; the trace repeats with period = its last timestamp. A link
offering one opportunity per ms carries 1500 x 8 bit / 1 ms = 12 Mbit/s.

The checks here are the ones the experiment file's topology needs before anything
runs; each raises :class:`~ccfair.errors.SpecError` naming the field (``links.2.trace``,
``flows.0.path``), the value and what is allowed. spec.py calls them; the simulator and
the testbed's bottleneck receive the parsed opportunities (``trace_ms``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ccfair.errors import SpecError
from ccfair.spec_input import read_input_file

__all__ = ["TRACE_MTU_BYTES", "read_trace", "trace_mean_rate_bps", "check_path", "link_rate_bps", "primary_link", "primary_rate_bps"]

#: Bytes one delivery opportunity may carry (mahimahi: one MTU-sized packet).
TRACE_MTU_BYTES = 1500
#: Most delivery opportunities one trace file may hold (a 16 MiB file of short lines holds fewer).
MAX_TRACE_LINES = 4_000_000


def read_trace(path: str, field: str) -> list[int]:
    """The delivery opportunities (ms) of a mahimahi trace file; SpecError naming ``field`` and the line."""
    data = read_input_file(path, field, "a mahimahi trace (one integer ms timestamp per line)")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as e:
        raise SpecError(field, f"{path}: not ASCII text (byte {e.start}); expected one integer ms timestamp per line") from None
    out: list[int] = []
    for n, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s:
            continue
        if not s.isdigit():
            raise SpecError(field, f"{path} line {n}: {s[:40]!r} is not a non-negative integer number of ms")
        ms = int(s)
        if out and ms < out[-1]:
            raise SpecError(field, f"{path} line {n}: {ms} ms is before the previous line's {out[-1]} ms; timestamps must not decrease")
        out.append(ms)
        if len(out) > MAX_TRACE_LINES:
            raise SpecError(field, f"{path}: more than {MAX_TRACE_LINES} delivery opportunities")
    if not out:
        raise SpecError(field, f"{path}: no delivery opportunities (expected one integer ms timestamp per line)")
    if out[-1] == 0:
        raise SpecError(field, f"{path}: the last timestamp is 0 ms; the trace repeats with period = its last timestamp, which must be > 0")
    return out


def trace_mean_rate_bps(trace_ms: Sequence[int]) -> int:
    """The mean rate of a trace: one MTU per opportunity over one period (the last timestamp)."""
    return len(trace_ms) * TRACE_MTU_BYTES * 8 * 1000 // trace_ms[-1]


def check_path(field: str, path: Sequence[object], links: Sequence[str]) -> list[str]:
    """A flow's ``path``/``reverse_path``: link names in order, each known, none repeated, not empty."""
    if not isinstance(path, (list, tuple)) or not all(isinstance(x, str) for x in path):
        raise SpecError(field, f"expected a list of link names, got {path!r}; allowed names: {', '.join(links)}")
    if not path:
        raise SpecError(field, f"empty path; give at least one link name ({', '.join(links)})")
    seen: set[str] = set()
    for j, name in enumerate(path):
        if name not in links:
            raise SpecError(f"{field}.{j}", f"unknown link {name!r}; allowed: {', '.join(links)}")
        if name in seen:
            raise SpecError(
                f"{field}.{j}", f"link {name!r} appears twice in {list(path)!r} (a loop); a path crosses each link at most once"
            )
        seen.add(name)
    return list(path)


def link_rate_bps(link: dict[str, Any]) -> int:
    """A RunConfig link's rate: its ``rate_bps``, or its trace's mean rate."""
    if link.get("rate_bps") is not None:
        return int(link["rate_bps"])
    return trace_mean_rate_bps(link["trace_ms"])


def primary_link(config: dict[str, Any]) -> int:
    """The link whose series are a topology run's single-queue statistics (``link_tx_bytes``, queue
    samples, sojourn; ``bottleneck_rate_bps``): the narrowest link some flow's data crosses (lowest
    rate, a trace at its mean; the first declared among equals), as the simulator reports it."""
    links = config["links"]
    assert isinstance(links, list) and links
    crossed = {name for f in config["flows"] for name in f.get("path", [])}
    candidates = [k for k, lk in enumerate(links) if lk["name"] in crossed] or [0]
    return min(candidates, key=lambda k: (link_rate_bps(links[k]), k))


def primary_rate_bps(config: dict[str, Any]) -> int:
    """The rate behind a run's single-queue series: the dumbbell's bottleneck, or a topology's primary link."""
    if config.get("links"):
        return link_rate_bps(config["links"][primary_link(config)])
    return int(config["bottleneck"]["rate_bps"])
