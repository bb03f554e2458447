"""Experiments several test files run, as the raw dict a TOML file would give."""

from __future__ import annotations

from typing import Any


def drop_tail_10mbit(name: str, flows: list[dict[str, Any]], window: tuple[str, str]) -> dict[str, Any]:
    """45 s of ``flows`` through 10 Mbit/s with 1 BDP of drop-tail buffer and no delay of its own,
    seed 1, the analysis ``window`` (start, end)."""
    return {
        "name": name,
        "duration": "45s",
        "window": {"start": window[0], "end": window[1]},
        "seed": 1,
        "bottleneck": {"rate": "10Mbit", "delay": "0ms", "buffer": "1bdp", "qdisc": "droptail"},
        "flows": flows,
    }


def cubic_then_bbr(
    name: str,
    duration: str,
    window: tuple[str, str],
    seed: int,
    *,
    bbr_start: str = "1s",
    jitter: str | None = None,
    sweep: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A CUBIC flow, then a BBR flow from ``bbr_start``, both at 20 ms RTT (each start up to
    ``jitter`` later), through 10 Mbit/s with 1 BDP of drop-tail buffer; ``sweep`` its [sweep] table."""
    starts: dict[str, str] = {"start_jitter": jitter} if jitter else {}
    return {
        "name": name,
        "duration": duration,
        "window": {"start": window[0], "end": window[1]},
        "seed": seed,
        "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
        "flows": [{"cca": "cubic", "rtt": "20ms", **starts}, {"cca": "bbr", "rtt": "20ms", "start": bbr_start, **starts}],
        **({"sweep": sweep} if sweep else {}),
    }
