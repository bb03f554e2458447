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
