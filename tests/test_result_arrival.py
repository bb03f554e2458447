"""Throughput as a capture sees it: the wire-arrival series per bin
never exceeds the bottleneck rate (plus one packet per bin); in-order delivery
is kept as its own series (``bytes``/``throughput_bps``) and may burst above it."""

from __future__ import annotations

from pathlib import Path

import ccfair

S0 = Path(__file__).resolve().parent.parent / "examples" / "s0-cubic-vs-bbr.toml"


def test_arrival_series_stays_at_the_link_rate_while_in_order_delivery_bursts() -> None:
    r = ccfair.run(S0, seed=1)
    t = r.throughput
    bin_s = 0.1
    per_bin = t.groupby("time_s")[["arrival_bytes", "bytes"]].sum()
    cap = 10e6 / 8 * bin_s * 1448 / 1500 + 1448  # payload at 10 Mbit/s per bin + one packet
    assert per_bin["arrival_bytes"].max() <= cap
    assert per_bin["bytes"].max() > cap  # holes filled release bursts
    assert (t["arrival_throughput_bps"] == t["arrival_bytes"] * 8 / bin_s).all()
