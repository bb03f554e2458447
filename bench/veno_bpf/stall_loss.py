"""Flow B's share of a point's stored kernel runs against the link service the testbed
bottleneck's stalls lost in the run's window (docs/linux-ports.md "Veno against CUBIC").

    python3 bench/veno_bpf/stall_loss.py [--set kernel-ccas-loss] [--point "veno/cubic 20M 100ms 1bdp"]
        [--data data/fidelity] [--sim-share 0.570] [--batch FIRST-LAST ...]

Per stored run of the point: seed, start (UTC), flow B's share, the service its bottleneck's
stalls lost (``summary.testbed.bottleneck.stall_lost_ns``, recorded by bottleneck builds that
count it; "-" before), the longest stall (``host.bottleneck_late_max_ns``), late p99, host load
(1-minute, before / after), the testbed runs live when it started and what it fails of the fidelity gate (ccfair.fidelity.points
``gate_failures``; the stall-loss limit ``stall_lost_limit_s``, 0.001 of the window).

Then, over the runs that record the stall loss: B's mean share of all of them, of those within the
stall-loss limit and of those passing the whole gate; Spearman's rank correlation of B's share with
the stall loss and with the longest stall, each with a two-sided permutation P (10 000 shuffles,
numpy seed 29); the least-squares line share = a + b * lost_s and its value at no loss, next to
the simulator's share of the point (``--sim-share``, from `ccfair fidelity --json`).

For every run, also the service its window lacks, (1 - utilisation) W: the stall loss plus any
idle link, so it stands in for the stall loss of runs stored before the count (the script prints
how closely the two agree where both are recorded); the runs within the limit by it, its rank
correlation with B's share over all runs (and that of the testbed runs live at each run's start), and B's mean of the runs recording the stall loss against
the earlier runs passing the gate (two-sided permutation P); with ``--batch FIRST-LAST`` the same
for the runs of those seeds alone, with their rank correlation of B's share and the stall loss.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
from ccfair.fidelity.points import gate_failures, group_shares, load_set, runs_by_point, stall_lost_limit_s
from ccfair.spec import Spec

PERMUTATIONS = 10_000
NUMPY_SEED = 29


def share_b(rec: dict[str, Any]) -> float:
    return group_shares(Spec.from_dict(rec["spec"]), rec["summary"])[1]


def window_lost_s(spec: Any, rec: dict[str, Any]) -> float:
    """The link service the run's window lacks, (1 - utilisation) W, s: the stalls' loss plus any
    idle link (it equals ``stall_lost_ns`` where both are recorded when the link never idles)."""
    window_s = (spec.window_end_ns - spec.window.start) / 1e9
    return (1.0 - rec["summary"]["utilization"]) * window_s


def stall_lost_s(rec: dict[str, Any]) -> float | None:
    ns = (((rec.get("summary") or {}).get("testbed") or {}).get("bottleneck") or {}).get("stall_lost_ns")
    return None if ns is None else ns / 1e9


def ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 0..n-1 with ties given their mean rank."""
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x))
    r[order] = np.arange(len(x), dtype=float)
    for v in np.unique(x):
        tie = x == v
        r[tie] = r[tie].mean()
    return r


def spearman(x: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """Spearman's rho and its two-sided permutation P."""
    rx, ry = ranks(x), ranks(y)
    rho = float(np.corrcoef(rx, ry)[0, 1])
    null = np.array([np.corrcoef(rx, rng.permutation(ry))[0, 1] for _ in range(PERMUTATIONS)])
    return rho, float((np.abs(null) >= abs(rho) - 1e-12).mean())


def row(spec: Any, rec: dict[str, Any]) -> str:
    h = rec.get("host") or {}
    lost = stall_lost_s(rec)
    fails = gate_failures(spec, rec)
    return (
        f"| {rec['seed']} | {rec['started_utc'][5:16].replace('T', ' ')} | {share_b(rec):.3f} | "
        f"{'-' if lost is None else f'{lost * 1e3:.1f}'} | {window_lost_s(spec, rec) * 1e3:.1f} | {(h.get('bottleneck_late_max_ns') or 0) / 1e6:.1f} | "
        f"{h.get('bottleneck_late_p99_us')} | {h['load_before'][0]:.1f} / {h['load_after'][0]:.1f} | {h.get('live_testbed_runs_before')} | "
        f"{'; '.join(fails) if fails else 'passes'} |"
    )


def mean_line(label: str, runs: list[dict[str, Any]], sim_share: float | None) -> str:
    if not runs:
        return f"{label}: no runs"
    m = float(np.mean([share_b(r) for r in runs]))
    diff = f", simulator - kernel {sim_share - m:+.3f}" if sim_share is not None else ""
    return f"{label}: {len(runs)} runs, B {m:.3f}{diff}"


def print_window_proxy(
    spec: Any, runs: list[dict[str, Any]], counted: list[dict[str, Any]], limit_s: float, sim_share: float | None, rng: np.random.Generator
) -> None:
    """The window's lost service as the stall loss of every run: its agreement where both are
    recorded, the runs within the limit by it, and its rank correlation with B's share."""
    if counted:
        gap = max(abs(window_lost_s(spec, r) - stall_lost_s(r)) for r in counted)
        print(f"window's lost service - stall loss: at most {gap * 1e3:.1f} ms in the {len(counted)} runs recording both")
    low = [r for r in runs if window_lost_s(spec, r) <= limit_s]
    print(mean_line("all runs whose window lost at most the stall-loss limit", low, sim_share))
    shares = np.array([share_b(r) for r in runs])
    lost = np.array([window_lost_s(spec, r) for r in runs])
    rho, p = spearman(lost, shares, rng)
    print(f"Spearman rho(B share, window's lost service) = {rho:+.2f} (permutation P = {p:.3f}, n = {len(runs)}, all runs)")
    live = np.array([(r.get("host") or {}).get("live_testbed_runs_before") or 0 for r in runs])
    rho, p = spearman(live, shares, rng)
    print(f"Spearman rho(B share, other testbed runs live at the start) = {rho:+.2f} (permutation P = {p:.3f}, n = {len(runs)}, all runs)")


def perm_diff(a: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """mean(b) - mean(a) and its two-sided permutation P."""
    both = np.concatenate([a, b])
    d = float(b.mean() - a.mean())
    null = np.empty(PERMUTATIONS)
    for i in range(PERMUTATIONS):
        x = rng.permutation(both)
        null[i] = x[len(a) :].mean() - x[: len(a)].mean()
    return d, float((np.abs(null) >= abs(d) - 1e-12).mean())


def earlier_gated(spec: Any, runs: list[dict[str, Any]]) -> np.ndarray:
    """B's shares of the runs stored before the stall-loss count that pass the gate."""
    return np.array([share_b(r) for r in runs if stall_lost_s(r) is None and not gate_failures(spec, r)])


def print_batches(spec: Any, runs: list[dict[str, Any]], counted: list[dict[str, Any]], rng: np.random.Generator) -> None:
    """B's mean share of the runs recording the stall loss minus that of the earlier runs passing
    the gate, with a two-sided permutation P."""
    old = earlier_gated(spec, runs)
    new = np.array([share_b(r) for r in counted])
    if not len(old) or not len(new):
        return
    d, p = perm_diff(old, new, rng)
    print(f"runs recording the stall loss - earlier runs passing the gate: {d:+.3f} (permutation P = {p:.3f})")


def print_seed_batch(spec: Any, runs: list[dict[str, Any]], lo: int, hi: int, rng: np.random.Generator) -> None:
    """One batch of seeds lo..hi: B's mean, its difference from the earlier gated runs (P), and
    its rank correlation with the stall loss."""
    batch = [r for r in runs if lo <= r["seed"] <= hi]
    if not batch:
        print(f"seeds {lo}-{hi}: no runs")
        return
    share = np.array([share_b(r) for r in batch])
    d, p = perm_diff(earlier_gated(spec, runs), share, rng)
    line = f"seeds {lo}-{hi}: {len(batch)} runs, B {share.mean():.3f} ({share.min():.3f}-{share.max():.3f}); - earlier gated runs {d:+.3f} (P = {p:.3f})"
    lost = [stall_lost_s(r) for r in batch]
    if len(batch) >= 3 and None not in lost:
        rho, pr = spearman(np.array(lost), share, rng)
        line += f"; rho(B, stall loss) {rho:+.2f} (P = {pr:.3f})"
    print(line)


def seed_range(text: str) -> tuple[int, int]:
    lo, sep, hi = text.partition("-")
    if not sep or not lo.isdigit() or not hi.isdigit() or int(lo) > int(hi):
        raise argparse.ArgumentTypeError(f"{text!r} is not a seed range FIRST-LAST (e.g. 16-27)")
    return int(lo), int(hi)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="kernel-ccas-loss")
    ap.add_argument("--point", default="veno/cubic 20M 100ms 1bdp")
    ap.add_argument("--data", type=Path, default=Path("data/fidelity"))
    ap.add_argument("--sim-share", type=float, default=None)
    ap.add_argument("--batch", type=seed_range, action="append", default=[], help="seeds FIRST-LAST, repeatable")
    a = ap.parse_args()

    ps = load_set(a.set, a.data)
    point = next((p for p in ps.points if p.id == a.point), None)
    if point is None:
        ap.error(f"--point: {a.point!r} is not a point of set {a.set!r} (its points: {', '.join(p.id for p in ps.points)})")
    spec = point.spec()
    runs = sorted(runs_by_point(ps)[0][point.id], key=lambda r: r["seed"])
    limit_s = stall_lost_limit_s(spec)

    print(f"{a.point} ({a.set}): {len(runs)} stored runs; stall-loss limit {limit_s * 1e3:.1f} ms\n")
    print(
        "| seed | started (UTC) | B share | stalls lost (ms) | window's lost service (ms) | longest stall (ms) | late p99 (us) | load before / after | runs live | gate |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(row(spec, r))
    print()

    counted = [r for r in runs if stall_lost_s(r) is not None]
    within = [r for r in counted if stall_lost_s(r) <= limit_s]
    passing = [r for r in counted if not gate_failures(spec, r)]
    print(mean_line("all runs", runs, a.sim_share))
    print(mean_line("all runs passing the gate", [r for r in runs if not gate_failures(spec, r)], a.sim_share))
    print(mean_line("runs recording the stall loss", counted, a.sim_share))
    print(mean_line("  of them within the stall-loss limit", within, a.sim_share))
    print(mean_line("  of them passing the whole gate", passing, a.sim_share))
    rng = np.random.default_rng(NUMPY_SEED)
    print_window_proxy(spec, runs, counted, limit_s, a.sim_share, rng)
    print_batches(spec, runs, counted, rng)
    if len(counted) < 3:
        return
    share = np.array([share_b(r) for r in counted])
    lost = np.array([stall_lost_s(r) for r in counted])
    late = np.array([(r["host"].get("bottleneck_late_max_ns") or 0) / 1e9 for r in counted])
    load = np.array([max(r["host"]["load_before"][0], r["host"]["load_after"][0]) for r in counted])
    for name, x in (("stall loss", lost), ("longest stall", late), ("load", load)):
        rho, p = spearman(x, share, rng)
        print(f"Spearman rho(B share, {name}) = {rho:+.2f} (permutation P = {p:.3f}, n = {len(counted)})")
    b, a0 = np.polyfit(lost, share, 1)
    print(f"least squares: B = {a0:.3f} + {b:+.3f} per s of stall loss (at no loss {a0:.3f})")
    for lo, hi in a.batch:
        print_seed_batch(spec, runs, lo, hi, rng)


if __name__ == "__main__":
    main()
