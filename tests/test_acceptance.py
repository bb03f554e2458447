"""Acceptance tests of the core model, each checked against its source.

Every test runs the real simulator (``ccfair._core``) on experiments built
here in Python and checks one acceptance item against the study or
the Linux/RFC behaviour it comes from (the studies: S0 = Rüth, Kunze, Hohlfeld, "An Empirical View on Content
Provider Fairness", TMA 2019; S4 = Bhatti & Bateman, "Transport Protocol
Throughput Fairness", J. Networks 2009).

The measured numbers are printed (``pytest -s tests/test_acceptance.py``
shows them) and the figures that set each assertion are recorded in comments
next to it (measured with the engine of commit 0330d0d, seeds as stated).
Every simulation runs once per session: results are cached by (spec, seed)
at module level. The whole file takes about 6 s.

Setup shared by the two-flow experiments (S0's timing): flow A starts at 0 s,
flow B 5 s later, both run to 45 s, and the analysis window is the 35 s from
10 s to 45 s. Both flows get a 100 ms start jitter drawn from the seed, so
different seeds differ in the flows' relative phase, not only in BBR's
internal random phase.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import ccfair
import numpy as np
import pytest
from ccfair import Spec, api, metrics
from ccfair.spec import L2_OVERHEAD_BYTES

SEEDS = range(1, 11)  # ten seeds
JITTER = "100ms"
MSS = 1448
# Frames at the bottleneck: IP length + the L2 overhead (bottleneck.l2_overhead, default 14: Ethernet).
WIRE = 1500 + L2_OVERHEAD_BYTES  # data packet: MSS + 52 header bytes (IPv4 20, TCP 20, timestamps 12) + L2
SYN_WIRE = 60 + L2_OVERHEAD_BYTES  # Linux's SYN: 40 header bytes + 20 option bytes (MSS, SACK-permitted, ts, wscale) + L2


# --------------------------------------------------------------------------
# helpers: spec builders and a run cache (each simulation runs once)
# --------------------------------------------------------------------------


def experiment(
    flows: list[dict[str, Any]],
    *,
    rate: str = "10Mbit",
    buffer: str = "1bdp",
    duration: str = "45s",
    window: tuple[str, str] = ("10s", "45s"),
    delay: str = "0ms",
    **extra: Any,
) -> dict[str, Any]:
    """A raw experiment dict (what a TOML file would give)."""
    d = {
        "name": "acceptance",
        "duration": duration,
        "window": {"start": window[0], "end": window[1]},
        "seed": 1,
        "bottleneck": {"rate": rate, "delay": delay, "buffer": buffer, "qdisc": "droptail"},
        "flows": flows,
    }
    d.update(extra)
    return d


def pair(first: str, second: str, *, rtt: str = "50ms", **kw: Any) -> dict[str, Any]:
    """S0's two-flow experiment: A (``first``) at 0 s, B (``second``) at 5 s, both jittered by 100 ms."""
    return experiment(
        [
            {"name": "A", "cca": first, "rtt": rtt, "start": "0s", "start_jitter": JITTER},
            {"name": "B", "cca": second, "rtt": rtt, "start": "5s", "start_jitter": JITTER},
        ],
        **kw,
    )


_RESULTS: dict[tuple[str, int], Any] = {}
_RAW: dict[tuple[str, int], tuple[dict[str, Any], dict[str, Any]]] = {}


def _key(d: dict[str, Any], seed: int) -> tuple[str, int]:
    return json.dumps(d, sort_keys=True), seed


def run(d: dict[str, Any], seed: int) -> Any:
    """``ccfair.run`` on a raw experiment dict, cached per (experiment, seed)."""
    k = _key(d, seed)
    if k not in _RESULTS:
        _RESULTS[k] = ccfair.run(Spec.from_dict(d), seed=seed)
    return _RESULTS[k]


def raw_run(d: dict[str, Any], seed: int = 1) -> tuple[dict[str, Any], dict[str, Any]]:
    """The resolved RunConfig and the simulator's raw output dict, cached."""
    k = _key(d, seed)
    if k not in _RAW:
        spec = Spec.from_dict(d)
        cfg = spec.to_run_config(seed)
        _RAW[k] = (cfg, api.simulate(cfg, spec))
    return _RAW[k]


def share_of(result: Any, cca: str) -> float:
    """The analysis-window byte share of the (single) flow running ``cca``."""
    f = result.flows
    rows = f[f["cca"] == cca]
    assert len(rows) == 1, f"expected one {cca} flow, got {list(f['cca'])}"
    return float(rows["share"].iloc[0])


def report(label: str, values: list[float]) -> str:
    arr = np.asarray(values, dtype=float)
    return f"{label}: mean {arr.mean():.3f}  min {arr.min():.3f}  max {arr.max():.3f}  per seed {np.round(arr, 3).tolist()}"


# --------------------------------------------------------------------------
# 1. a single flow fills the link
# --------------------------------------------------------------------------


@pytest.mark.parametrize("cca", ["reno", "cubic", "bbr"])
def test_single_flow_uses_the_bottleneck(cca: str) -> None:
    """One Reno, CUBIC or BBR flow on 10 Mbit/s, 50 ms, 1 BDP drop-tail uses >= 95 % of the link, 15-45 s.

    Source: with a buffer of one BDP a single loss-based flow (Reno, CUBIC)
    never drains the queue after a multiplicative decrease (the classic
    buffer-sizing rule of thumb, Villamizar & Song 1994: B = BDP keeps an AIMD
    flow at full rate), and BBR (Linux tcp_bbr.c) paces at its measured
    bottleneck bandwidth, giving up only ~2 % for PROBE_RTT (200 ms every
    10 s) — so all three should run the link at (nearly) 100 %.
    Expected direction: utilization >= 0.95.
    """
    d = experiment([{"name": "A", "cca": cca, "rtt": "50ms"}], window=("15s", "45s"))
    r = run(d, 1)
    util = r.summary["utilization"]
    print(f"\n[acceptance] single {cca}, 10 Mbit/s, 50 ms, 1 BDP: utilization 15-45 s = {util:.4f}")
    # measured (seed 1): reno 0.9990, cubic 1.0000, bbr 0.9760
    assert util >= 0.95
    # A frame is counted when its transmission ends, so the window may hold one frame begun
    # before it: bytes <= rate x 30 s + one 1514-byte frame.
    assert util <= 1.0 + 1514 * 8 / (10e6 * 30)


# --------------------------------------------------------------------------
# 2. same-CCA pairs are fair
# --------------------------------------------------------------------------


@pytest.mark.parametrize("cca", ["reno", "cubic", "bbr"])
def test_same_cca_pair_is_fair(cca: str) -> None:
    """Two flows of the same CCA, same 50 ms RTT, 10 Mbit/s, 1 BDP: mean JFI over 10 seeds >= 0.90.

    Source: S0 finds every CCA roughly fair to itself (BBR with more
    variance); S4 reports Jain's index 0.90-0.97 for same-CCA pairs. AIMD
    flows with equal RTTs converge to equal shares (Chiu & Jain 1989).
    Expected direction: mean JFI >= 0.90 (analysis window 10-45 s).
    """
    jfis = [run(pair(cca, cca), s).summary["jfi"] for s in SEEDS]
    print("\n[acceptance] " + report(f"{cca} vs {cca}, 1 BDP, JFI 10-45 s", jfis))
    # measured: reno mean 0.996 (min 0.985); cubic mean 0.979 (min 0.928); bbr mean 0.974 (min 0.944)
    assert statistics.fmean(jfis) >= 0.90


# --------------------------------------------------------------------------
# 3. CUBIC vs BBR at 0.5 BDP: BBR takes nearly everything
# --------------------------------------------------------------------------


@pytest.mark.parametrize("first", ["cubic", "bbr"])
def test_bbr_dominates_cubic_in_a_shallow_buffer(first: str) -> None:
    """CUBIC vs BBR, 10 Mbit/s, 50 ms, 0.5 BDP: BBR takes > 70 % of the bytes whichever starts first.

    Source: S0 (10 Mbit/s, 50 ms, 0.5 BDP): "BBR takes nearly all bandwidth
    from CUBIC whichever starts first". Mechanism: in a buffer shallower than
    a BDP, BBR's in-flight cap of 2 x BtlBw x min_RTT alone overfills the
    queue, CUBIC sees the losses and backs off, BBR does not respond to loss.
    Expected direction: BBR's mean share over 10 seeds > 0.70, and in every
    single seed > 0.5, in both start orders.
    """
    second = "bbr" if first == "cubic" else "cubic"
    shares = [share_of(run(pair(first, second, buffer="0.5bdp"), s), "bbr") for s in SEEDS]
    print("\n[acceptance] " + report(f"0.5 BDP, {first} first: BBR share", shares))
    # measured: cubic first mean 0.921 (min 0.904); bbr first mean 0.921 (min 0.913)
    assert statistics.fmean(shares) > 0.70
    assert min(shares) > 0.5


# --------------------------------------------------------------------------
# 4. CUBIC vs BBR at 2 BDP (documented) and 8 BDP (CUBIC takes more than half)
# --------------------------------------------------------------------------


def test_cubic_vs_bbr_at_2bdp_cubic_is_not_starved_and_order_matters() -> None:
    """2 BDP, documented; S0: "at 2 BDP the picture changes (CUBIC no longer starved, order matters)".

    Expected direction (S0): CUBIC's mean share in each start order is far
    above its ~5 % at 0.5 BDP (here: >= 0.2), and the start order changes
    the split (here: the two orders' mean BBR shares differ by > 0.05).
    """
    by_order = {}
    for first in ("cubic", "bbr"):
        second = "bbr" if first == "cubic" else "cubic"
        by_order[first] = [share_of(run(pair(first, second, buffer="2bdp"), s), "bbr") for s in SEEDS]
        print("\n[acceptance] " + report(f"2 BDP, {first} first: BBR share", by_order[first]))
    # measured: cubic first BBR share mean 0.703 (0.675-0.751); bbr first mean 0.566 (0.547-0.582)
    for first, shares in by_order.items():
        assert 1 - statistics.fmean(shares) >= 0.2, f"CUBIC starved at 2 BDP with {first} first"
    assert abs(statistics.fmean(by_order["cubic"]) - statistics.fmean(by_order["bbr"])) > 0.05


def _shares_8bdp(first: str, seeds: range, **kw: Any) -> list[float]:
    second = "bbr" if first == "cubic" else "cubic"
    return [share_of(run(pair(first, second, buffer="8bdp", **kw), s), "cubic") for s in seeds]


def test_cubic_takes_more_than_half_in_a_deep_buffer() -> None:
    """With a deep buffer (8 BDP) CUBIC takes more than half, 10 Mbit/s, 50 ms (S0's 45 s timing).

    Source: in a deep buffer BBR is cwnd-limited (cwnd = 2 x BtlBw x
    min_RTT) while CUBIC fills the buffer; the queue CUBIC builds inflates
    the RTT, so BBR's fixed in-flight cap is a shrinking fraction of the
    pipe + queue and CUBIC gets the larger share (Ware et al., "Modeling BBR's
    Interactions with Loss-Based Congestion Control", IMC 2019; Hock et al.,
    ICNP 2017; S0's 2 BDP trend continued).
    Expected direction: CUBIC's share averaged over both start orders and
    10 seeds each > 0.5; with BBR first, CUBIC's mean share > 0.5.

    Known transient (documented, not a failure): with CUBIC first, BBR's
    STARTUP probes into CUBIC's standing queue and takes an inflated min_rtt
    (and so a larger cwnd) until its first PROBE_RTT; within S0's 10-45 s
    window CUBIC then gets a little under half. The long run below shows
    CUBIC ahead in both orders once that transient has passed.
    """
    cubic_first = _shares_8bdp("cubic", SEEDS)
    bbr_first = _shares_8bdp("bbr", SEEDS)
    both = cubic_first + bbr_first
    print("\n[acceptance] " + report("8 BDP, cubic first: CUBIC share", cubic_first))
    print("[acceptance] " + report("8 BDP, bbr first: CUBIC share", bbr_first))
    print(f"[acceptance] 8 BDP, both orders, 20 runs: CUBIC share mean {statistics.fmean(both):.3f}")
    # measured: cubic first mean 0.490 (0.396-0.577); bbr first mean 0.623 (0.580-0.655); both orders 0.557
    assert statistics.fmean(both) > 0.5
    assert statistics.fmean(bbr_first) > 0.5
    # the CUBIC-first transient: CUBIC is not starved, it merely falls a little short of half
    assert statistics.fmean(cubic_first) > 0.4


@pytest.mark.parametrize("first", ["cubic", "bbr"])
def test_cubic_takes_more_than_half_in_a_deep_buffer_long_run(first: str) -> None:
    """8 BDP in steady state: 200 s runs, window 100-200 s, 5 seeds: CUBIC's mean share > 0.5 in each order.

    Source: as above (Ware et al. IMC 2019: against loss-based flows in a
    deep buffer BBR's share is bounded by its in-flight cap, CUBIC takes the
    rest). After 100 s BBR has re-measured min_rtt in PROBE_RTT several times,
    so the start-order transient of the 45 s experiment is gone.
    Expected direction: CUBIC's mean share over seeds 1-5 > 0.5 whichever starts first.
    """
    shares = _shares_8bdp(first, range(1, 6), duration="200s", window=("100s", "200s"))
    print("\n[acceptance] " + report(f"8 BDP long run (100-200 s), {first} first: CUBIC share", shares))
    # measured: cubic first mean 0.537 (0.513-0.563); bbr first mean 0.534 (0.521-0.550)
    assert statistics.fmean(shares) > 0.5


# --------------------------------------------------------------------------
# 5. RTT unfairness
# --------------------------------------------------------------------------

# 10 Mbit/s: S0's 45 s timing. 100 Mbit/s: CUBIC's epochs are seconds long at
# this BDP, so a 35 s window holds only a few; use 120 s with window 20-120 s.
RTT_SETUPS = {
    "10Mbit": {"rate": "10Mbit", "duration": "45s", "window": ("10s", "45s")},
    "100Mbit": {"rate": "100Mbit", "duration": "120s", "window": ("20s", "120s")},
}


def _rtt_pair(cca: str, setup: str) -> dict[str, Any]:
    """Short (20 ms) and long (80 ms) base RTT, both start at 0 s (+ jitter); buffer 1 BDP at the minimum RTT."""
    return experiment(
        [
            {"name": "short", "cca": cca, "rtt": "20ms", "start_jitter": JITTER},
            {"name": "long", "cca": cca, "rtt": "80ms", "start_jitter": JITTER},
        ],
        buffer="1bdp",
        **RTT_SETUPS[setup],
    )


def _rtt_stats(cca: str, setup: str) -> dict[str, float]:
    runs = [run(_rtt_pair(cca, setup), s) for s in range(1, 6)]
    tput = [r.flows.set_index("name")["throughput_bps"] for r in runs]
    rtts = [r.flows.set_index("name")["mean_rtt_ms"] for r in runs]
    return {
        "short_share": statistics.fmean(float(r.flows.set_index("name")["share"]["short"]) for r in runs),
        "ratio": statistics.fmean(float(t["short"] / t["long"]) for t in tput),
        "ratios": [float(t["short"] / t["long"]) for t in tput],
        "rtt_ratio": statistics.fmean(float(x["long"] / x["short"]) for x in rtts),
    }


@pytest.mark.parametrize("setup", list(RTT_SETUPS))
def test_rtt_unfairness_short_rtt_cubic_wins(setup: str) -> None:
    """Two CUBIC flows, 20 ms and 80 ms base RTT, 1 BDP (at 20 ms): the short-RTT flow gets more.

    Source: RFC 9438 §3.3 (Principle 3 for RTT fairness) and Ha, Rhee & Xu,
    "CUBIC: a new TCP-friendly high-speed TCP variant", 2008: CUBIC's window
    growth is independent of RTT, so flows with different RTTs reach similar
    windows and their throughput ratio is (at most about) linear in the
    inverse RTT ratio — fairer than Reno, but the short-RTT flow still wins.
    Expected direction: short-RTT flow's mean share over 5 seeds > 0.5 and
    its mean throughput ratio > 1.
    """
    st = _rtt_stats("cubic", setup)
    d = _rtt_pair("cubic", setup)
    limit = Spec.from_dict(d).buffer_limits()[0]
    print(
        f"\n[acceptance] RTT 20 vs 80 ms, cubic, {setup} (buffer {limit} pkt): short share {st['short_share']:.3f}, "
        f"throughput ratio short/long mean {st['ratio']:.2f} {np.round(st['ratios'], 2).tolist()}, "
        f"mean-RTT ratio long/short {st['rtt_ratio']:.2f}"
    )
    # the BDP buffer is computed at the minimum base RTT (20 ms): 17 pkt at 10 Mbit/s, 167 pkt at 100 Mbit/s
    assert limit == {"10Mbit": 17, "100Mbit": 167}[setup]
    # measured: 10 Mbit/s short share 0.744, ratio 2.97 (mean-RTT ratio incl. queueing 2.77);
    #           100 Mbit/s short share 0.611, ratio 1.58 (mean-RTT ratio 2.73)
    assert st["short_share"] > 0.5
    assert st["ratio"] > 1.0


@pytest.mark.parametrize("setup", list(RTT_SETUPS))
def test_rtt_unfairness_reno_is_worse_than_cubic(setup: str) -> None:
    """Reno 20 vs 80 ms: the short-RTT flow wins more strongly than with CUBIC (larger throughput ratio).

    Source: Reno's window grows one segment per RTT, so its throughput goes
    as 1/RTT at equal loss rates and as 1/RTT^2 with synchronised drop-tail
    losses (Lakshman & Madhow, IEEE/ACM ToN 1997); RFC 9438 §3.3 contrasts
    CUBIC's linear throughput ratio with Reno's "quadratical throughput
    ratio ... under low statistical multiplexing".
    Expected direction: mean Reno ratio (short/long) > mean CUBIC ratio, and
    Reno's short-RTT share > 0.5.
    """
    reno = _rtt_stats("reno", setup)
    cubic = _rtt_stats("cubic", setup)
    print(
        f"\n[acceptance] RTT 20 vs 80 ms, {setup}: reno short share {reno['short_share']:.3f}, "
        f"ratio {reno['ratio']:.2f} {np.round(reno['ratios'], 2).tolist()} (mean-RTT ratio {reno['rtt_ratio']:.2f}); "
        f"cubic ratio {cubic['ratio']:.2f}"
    )
    # measured: 10 Mbit/s reno ratio 5.55 (share 0.844) vs cubic 2.97;
    #           100 Mbit/s reno ratio 7.42 (share 0.871) vs cubic 1.58
    assert reno["short_share"] > 0.5
    assert reno["ratio"] > cubic["ratio"]


# --------------------------------------------------------------------------
# 6. determinism
# --------------------------------------------------------------------------


DETERMINISM_EXPERIMENT = experiment(
    [
        {"name": "A", "cca": "cubic", "rtt": "50ms", "start_jitter": JITTER},
        {"name": "B", "cca": "bbr", "rtt": "50ms", "start": "5s", "start_jitter": JITTER},
        {"name": "C", "cca": "reno", "rtt": "30ms", "start": "2s", "start_jitter": JITTER},
    ],
    buffer="1bdp",
    trace=True,
)


def test_same_seed_identical_files_different_seed_differs(tmp_path: Path) -> None:
    """The same spec and seed give identical results bit for bit (Parquet files equal); different seeds differ.

    Source: the engine's contract (integer-ns time, events ordered by
    (time, sequence), one seeded RNG split per component). Expected: every
    file ``to_parquet`` writes except summary.json (which records wall time)
    is byte-identical for two runs with seed 7; summary.json equal apart from
    ``sim_wall_s``; seed 8 gives a different throughput table.
    """
    d = DETERMINISM_EXPERIMENT
    # fresh runs, not the cache: determinism is across separate simulations
    a = ccfair.run(Spec.from_dict(d), seed=7).to_parquet(tmp_path / "a")
    b = ccfair.run(Spec.from_dict(d), seed=7).to_parquet(tmp_path / "b")
    c = ccfair.run(Spec.from_dict(d), seed=8).to_parquet(tmp_path / "c")
    files = sorted(p.name for p in a.iterdir() if p.name != "summary.json")
    assert "trace.parquet" in files and "throughput.parquet" in files
    assert files == sorted(p.name for p in b.iterdir() if p.name != "summary.json")
    for name in files:
        assert (a / name).read_bytes() == (b / name).read_bytes(), f"{name} differs between two runs with the same seed"
    sa, sb = (json.loads((x / "summary.json").read_text()) for x in (a, b))
    sa.pop("sim_wall_s"), sb.pop("sim_wall_s")
    assert sa == sb
    assert (a / "throughput.parquet").read_bytes() != (c / "throughput.parquet").read_bytes()
    ta, tc = ccfair.load(a).throughput, ccfair.load(c).throughput
    n_diff = int((ta["bytes"].to_numpy() != tc["bytes"].to_numpy()).sum())
    print(
        f"\n[acceptance] determinism: {len(files)} files identical for seed 7 twice; seed 8 differs in {n_diff} of {len(ta)} throughput rows"
    )
    assert n_diff > 0


def test_same_seed_identical_files_across_processes(tmp_path: Path, subprocess_env: dict[str, str]) -> None:
    """Determinism does not depend on the process: a fresh interpreter (other hash seed) writes the same files.

    Source: as above; nothing in a run may depend on address-space layout,
    Python's hash randomisation or iteration order of unordered containers.
    Expected: every file but summary.json byte-identical between this process
    and a subprocess run with PYTHONHASHSEED=12345, seed 7.
    """
    import subprocess
    import sys

    here = ccfair.run(Spec.from_dict(DETERMINISM_EXPERIMENT), seed=7).to_parquet(tmp_path / "here")
    script = "import json, sys, ccfair; ccfair.run(ccfair.Spec.from_dict(json.loads(sys.argv[1])), seed=7).to_parquet(sys.argv[2])"
    env = dict(subprocess_env, PYTHONHASHSEED="12345")
    subprocess.run(
        [sys.executable, "-c", script, json.dumps(DETERMINISM_EXPERIMENT), str(tmp_path / "there")],
        check=True,
        env=env,
        timeout=120,
    )
    files = sorted(p.name for p in here.iterdir() if p.name != "summary.json")
    for name in files:
        assert (here / name).read_bytes() == (tmp_path / "there" / name).read_bytes(), name
    print(f"\n[acceptance] determinism across processes: {len(files)} files identical")


# --------------------------------------------------------------------------
# 7. S4's NewReno pair
# --------------------------------------------------------------------------


def test_s4_newreno_pair_is_fair(examples: Path) -> None:
    """S4 (Bhatti & Bateman 2009): two NewReno flows, 100 Mbit/s, 50 ms, 1 BDP, flow 2 at 30 s, 300 s, window 60-300 s.

    Source: S4 reports Jain's index 0.90-0.97 for same-CCA pairs (both over
    the window and as the mean of per-1-s-sample J(t)).
    Expected direction: JFI over the window >= 0.90 and mean J(t) over the
    1 s samples in 60-300 s >= 0.90.
    """
    spec = Spec.from_toml(examples / "s4-newreno-pair.toml")
    r = ccfair.run(spec)
    tp = r.throughput
    w = tp[(tp["time_s"] >= 60) & (tp["time_s"] < 300)]
    per_t = w.pivot(index="time_s", columns="flow", values="bytes")
    jt = [metrics.jain(row) for row in per_t.to_numpy()]
    mean_jt = statistics.fmean(jt)
    print(
        f"\n[acceptance] S4 NewReno pair: JFI 60-300 s {r.summary['jfi']:.4f}, mean J(t) over 1 s samples {mean_jt:.4f}, "
        f"utilization {r.summary['utilization']:.4f}, sim wall {r.summary['sim_wall_s']:.2f} s"
    )
    assert len(jt) == 240
    # measured: JFI 0.9999, mean J(t) 0.9683, utilization 1.0000 -- S4's range is 0.90-0.97
    assert r.summary["jfi"] >= 0.90
    assert mean_jt >= 0.90


# --------------------------------------------------------------------------
# 8. conservation laws on the raw simulator output
# --------------------------------------------------------------------------

CONSERVATION = {
    "s0_cubic_bbr_0.5bdp": experiment([{"cca": "cubic", "rtt": "50ms"}, {"cca": "bbr", "rtt": "50ms", "start": "5s"}], buffer="0.5bdp"),
    "reno_pair_1bdp": pair("reno", "reno"),
    "bbr_cubic_8bdp": pair("bbr", "cubic", buffer="8bdp"),
    "mixed_rtt_100M_bytes_buffer": experiment(
        [
            {"cca": "cubic", "rtt": "20ms"},
            {"cca": "bbr", "rtt": "80ms", "start": "1s"},
            {"cca": "reno", "rtt": "40ms", "count": 3, "start_jitter": "2s"},
        ],
        rate="100Mbit",
        buffer="64KB",
        delay="5ms",
    ),
}


def _check_common_laws(name: str, cfg: dict[str, Any], raw: dict[str, Any]) -> dict[str, int]:
    flows = raw["flows"]
    n = len(flows)
    sent = sum(f["sent_packets"] for f in flows)
    drops = sum(f["drops"] for f in flows)
    link = np.asarray(raw["link_tx_bytes"], dtype=np.int64)
    tx_bytes = int(link.sum())

    # (a) the engine's data-packet counter is the sum of the senders' counters
    assert raw["data_packets"] == sent, name

    # (b) the bottleneck carries only data segments (1514 B frames) and each flow's SYN (74 B) exactly once
    assert tx_bytes % WIRE == n * SYN_WIRE, name
    data_tx = (tx_bytes - n * SYN_WIRE) // WIRE

    # (c) every data packet sent is dropped, transmitted, or still pending (queue / link / access line)
    pending = sent - data_tx - drops
    assert pending >= 0, name

    # (d) delivered bytes are whole segments; a flow cannot deliver more segments than originals it sent
    delivered_segs = 0
    for f in flows:
        d = np.asarray(f["delivered_bytes"], dtype=np.int64)
        assert (d % MSS == 0).all(), name
        segs = int(d.sum()) // MSS
        delivered_segs += segs
        assert segs <= f["sent_packets"] - f["retransmissions"], (name, f["name"])
        assert f["drops"] <= f["sent_packets"], (name, f["name"])

    # (e) time-resolved: by the end of every bin the link has sent at most rate x t,
    #     and receivers have received at most what the link has sent
    bin_ns = int(raw["bin_ns"])
    t_end = (np.arange(len(link), dtype=np.int64) + 1) * bin_ns
    cum_tx = np.cumsum(link)
    assert (cum_tx * 8 * 10**9 <= raw["bottleneck_rate_bps"] * t_end).all(), name
    cum_delivered = sum(np.cumsum(np.asarray(f["delivered_bytes"], dtype=np.int64)) for f in flows)
    assert (cum_delivered // MSS * WIRE <= cum_tx).all(), name
    assert delivered_segs <= data_tx

    # (f) every packet that left the queue started transmission: dequeues = transmitted (+1 on the wire at the end)
    dequeued = int(sum(raw["sojourn_pkts_per_bin"]))
    assert data_tx + n <= dequeued <= data_tx + n + 1, name

    # (g) the sojourn histogram counts exactly the dequeues inside the analysis window
    b0, b1 = cfg["window_start_ns"] // bin_ns, cfg["window_end_ns"] // bin_ns
    assert sum(raw["sojourn_count"]) == sum(raw["sojourn_pkts_per_bin"][b0:b1]), name

    # (h) the queue never exceeds its limit
    q = cfg["bottleneck"]["qdisc"]
    if q["limit_packets"] is not None:
        assert max(raw["queue_packets"]) <= q["limit_packets"], name
    if q["limit_bytes"] is not None:
        assert max(raw["queue_bytes"]) <= q["limit_bytes"], name

    return {"sent": sent, "data_tx": data_tx, "drops": drops, "pending": pending, "delivered_segs": delivered_segs, "dequeued": dequeued}


@pytest.mark.parametrize("name", list(CONSERVATION))
def test_conservation_laws(name: str) -> None:
    """Packet conservation over the whole run, from the raw simulator output (exact identities and bounds).

    Source: physics of a FIFO link and of TCP: data packets are created only
    by senders, leave the system only by being dropped at the bottleneck or
    by crossing it, the link cannot send faster than its rate, and a receiver
    delivers each original segment once, in order, after it crossed the link.
    Expected: (a) data_packets == sum(sent_packets); (b) link wire bytes ==
    1500 x data transmitted + 60 x flows (one SYN each); (c) sent - transmitted
    - dropped >= 0 (still pending); (d) delivered bytes are whole MSS and
    <= originals sent, per flow; (e) cumulative link bytes <= rate x t and
    >= cumulative delivered data in wire bytes at every bin; (f) dequeues ==
    transmissions (+1 in progress); (g) sojourn histogram == dequeues in the
    window; (h) the backlog never exceeds the limit.
    """
    cfg, raw = raw_run(CONSERVATION[name])
    c = _check_common_laws(name, cfg, raw)
    print(f"\n[acceptance] conservation {name}: {c}")


def test_conservation_is_exact_when_the_flows_drain() -> None:
    """Exact packet accounting once every flow has stopped and its data has drained.

    Three flows (CUBIC, BBR, Reno; different RTTs) start together at 0 s (so
    every SYN meets an empty queue) and stop sending new data at 20-30 s of a
    45 s run; by the end everything has been delivered. Then, exactly:
    sum(sent) == transmitted + dropped; per flow, delivered segments ==
    originals sent (sent - retransmissions) and retransmissions >= drops
    (every dropped copy of a segment is followed by another copy before the
    receiver can deliver past it). Losses counted: Linux's `tp->lost`
    (tcp_input.c `tcp_mark_skb_lost`) counts a segment when first marked lost
    and each time a retransmission of it is found lost; every retransmission
    but a tail loss probe's (RFC 8985 section 7, `tcp_send_loss_probe`) follows
    such a count, and a dropped probe copy, or an original the probe repaired,
    is never counted. So losses_detected + loss_probes >= drops.
    """
    d = experiment(
        [
            {"cca": "cubic", "rtt": "50ms", "stop": "30s"},
            {"cca": "bbr", "rtt": "50ms", "stop": "25s"},
            {"cca": "reno", "rtt": "30ms", "stop": "20s"},
        ],
        buffer="0.5bdp",
    )
    cfg, raw = raw_run(d)
    c = _check_common_laws("drained", cfg, raw)
    # precondition: the link is idle over the last 5 s (everything drained)
    assert sum(raw["link_tx_bytes"][-50:]) == 0
    assert c["pending"] == 0
    assert c["sent"] == c["data_tx"] + c["drops"]
    per_flow = []
    for f in raw["flows"]:
        segs = sum(f["delivered_bytes"]) // MSS
        assert segs == f["sent_packets"] - f["retransmissions"], f["cca"]
        assert f["retransmissions"] >= f["drops"], f["cca"]
        assert f["losses_detected"] + f["loss_probes"] >= f["drops"], f["cca"]
        per_flow.append(
            f"{f['cca']}: sent {f['sent_packets']} rtx {f['retransmissions']} lost {f['losses_detected']} "
            f"probes {f['loss_probes']} drops {f['drops']} delivered {segs}"
        )
    print(f"\n[acceptance] drained run: {c}; " + "; ".join(per_flow))
