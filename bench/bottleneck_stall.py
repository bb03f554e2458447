"""What one stall of the testbed's bottleneck process costs a run (root).

    sudo python3 bench/bottleneck_stall.py --set map --point "cubic/cubic 20M 50ms 1bdp" --seeds 2,3
        [--orders port,arrival] [--stall-ms 0,66] [--at-s 20] [--out FILE.jsonl] [--slots DIR]
    python3 bench/bottleneck_stall.py --table FILE.jsonl
    sudo chrt -f 10 python3 bench/bottleneck_stall.py --sleeper 60

A kernel run whose ccfair-bottleneck does not run for a while (its lateness maximum,
`testbed.bottleneck.late_max_ns`) fails the fidelity gate when that stall is longer than
`stall_limit_s` (ccfair/fidelity/points.py: 35 ms + one frame time at S0's timing), whose
derivation counts only the link's lost service (the stall less one frame time). This measures
the whole cost: per seed, order and stall length it runs the point on the testbed and, `--at-s`
seconds after the experiment's time zero, stops the run's own bottleneck process (SIGSTOP; the
one child of this process named ccfair-bottleneck) for `--stall-ms`, then continues it (SIGCONT),
so the stall comes at a known time on a host that is otherwise as usual (0 = no stall, the
control; the runs of one seed are interleaved, same host load). Per run: utilisation, each
flow's retransmissions, the bottleneck's lateness maximum (the injected stall plus the host's
own), the service the link lost to stalls as the bottleneck counted it (`stall_lost_ns`, within
the window), and with `--slots DIR` the bottleneck's slot log (bench/fidelity_slots.py,
bench/fidelity_idle.py) per run. `--sleeper S`: for S seconds sleep 0.5 ms at a time and count
the wake-ups more than 1 ms late (run under SCHED_FIFO at the bottleneck's priority, 10, beside
testbed runs: whether the host stalls a real-time process that is not the bottleneck), with the
host's steal time (/proc/stat) over the same seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from ccfair.fidelity.points import load_set  # noqa: E402

BOTTLENECK_COMM = "ccfair-bottlene"  # /proc/PID/comm holds the first 15 bytes of the name


def own_bottleneck() -> tuple[int, int] | None:
    """(pid, t0_ns) of this process's child ccfair-bottleneck (started through `ip netns exec`,
    which execs it), t0 from its config file (the last argument)."""
    me = os.getpid()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            if int(stat[stat.rindex(")") + 2 :].split()[1]) != me or (d / "comm").read_text().strip() != BOTTLENECK_COMM:
                continue
            cfg = (d / "cmdline").read_bytes().split(b"\0")[-2].decode()
            return int(d.name), int(json.loads(Path(cfg).read_text())["t0_ns"])
        except (OSError, ValueError, IndexError, KeyError):
            continue
    return None


def stall(at_s: float, stall_ms: float, done: threading.Event, log: dict[str, Any]) -> None:
    """Stop the run's bottleneck at t0 + at_s for stall_ms. The runner starts one bottleneck per
    path probe before the experiment's: the one whose t0 is still ahead, found again near it."""
    while not done.wait(0.2):
        found = own_bottleneck()
        if found is None:
            continue
        pid, t0 = found
        target = t0 + int(at_s * 1e9)
        ahead_ns = target - time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        if ahead_ns < 0 or t0 < time.clock_gettime_ns(time.CLOCK_MONOTONIC) - 60 * 10**9:
            continue
        if ahead_ns > 1e9 or own_bottleneck() != found:
            continue
        if done.wait(ahead_ns / 1e9):
            return
        a = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        try:
            os.kill(pid, signal.SIGSTOP)
        except ProcessLookupError:
            continue
        time.sleep(stall_ms / 1e3)
        os.kill(pid, signal.SIGCONT)
        b = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        log["stopped_ms"] = (b - a) / 1e6
        log["stopped_at_s"] = (a - t0) / 1e9
        return


def one(spec: Any, seed: int, order: str, stall_ms: float, at_s: float, slots: Path | None) -> dict[str, Any]:
    import ccfair

    point = "".join(c if c.isalnum() else "_" for c in spec.name)
    tag = f"{point}-{order}-s{seed}-stall{stall_ms:g}"
    if slots is not None:
        os.environ["CCFAIR_BOTTLENECK_SLOT_LOG"] = str((slots / f"{tag}.csv").resolve())
    else:
        os.environ.pop("CCFAIR_BOTTLENECK_SLOT_LOG", None)
    log: dict[str, Any] = {}
    done = threading.Event()
    th = threading.Thread(target=stall, args=(at_s, stall_ms, done, log), daemon=True)
    if stall_ms > 0:
        th.start()
    try:
        res = ccfair.run(spec.with_overrides([f"testbed.bottleneck_order={order}"]), seed=seed, backend="testbed")
    finally:
        done.set()
    s = res.summary
    bn = s["testbed"]["bottleneck"]
    return {
        "point": s["name"],
        "seed": seed,
        "order": order,
        "stall_ms": stall_ms,
        **log,
        "utilization": s["utilization"],
        "retransmissions": [f["retransmissions"] for f in s["flows"]],
        "shares": [f["share"] for f in s["flows"]],
        "late_max_ms": bn["late_max_ns"] / 1e6,
        "stall_lost_ms": bn["stall_lost_ns"] / 1e6 if "stall_lost_ns" in bn else None,
        "late_p50_us": bn["late_p50_us"],
        "late_p99_us": bn["late_p99_us"],
        "slot_log": os.environ.get("CCFAIR_BOTTLENECK_SLOT_LOG"),
    }


def sleeper(seconds: float) -> None:
    """Wake-ups of a 0.5 ms sleep more than 1 ms late, and the host's steal ticks, over ``seconds``."""

    def steal() -> int:
        return int(Path("/proc/stat").read_text().split()[8])

    s0, late = steal(), []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic_ns()
        time.sleep(0.0005)
        d = time.monotonic_ns() - t - 500_000
        if d > 1_000_000:
            late.append(d)
    late.sort(reverse=True)
    out = {
        "late_over_1ms": len(late),
        "late_total_ms": round(sum(late) / 1e6, 1),
        "longest_ms": [round(x / 1e6, 1) for x in late[:5]],
        "steal_ticks_per_s": round((steal() - s0) / seconds, 2),
    }
    print(json.dumps(out))


def table(path: str) -> None:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    groups: dict[tuple[str, str, float], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["point"], r["order"], r["stall_ms"]), []).append(r)
    print("| point | order | stall (ms) | runs | utilisation (mean) | per run | late max (ms) | retransmissions A / B |")
    print("|---|---|---|---|---|---|---|---|")
    for (pt, order, st), rs in sorted(groups.items()):
        u = statistics.mean(r["utilization"] for r in rs)
        per = ", ".join(f"{r['utilization']:.3f}" for r in rs)
        lm = ", ".join(f"{r['late_max_ms']:.0f}" for r in rs)
        rt = ", ".join(f"{r['retransmissions'][0]} / {r['retransmissions'][1]}" for r in rs)
        print(f"| {pt} | {order} | {st:g} | {len(rs)} | {u:.3f} | {per} | {lm} | {rt} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--point")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--orders", default="port,arrival")
    ap.add_argument("--stall-ms", default="0,66")
    ap.add_argument("--at-s", type=float, default=20.0)
    ap.add_argument("--out")
    ap.add_argument("--slots")
    ap.add_argument("--table")
    ap.add_argument("--sleeper", type=float)
    a = ap.parse_args()
    if a.sleeper:
        sleeper(a.sleeper)
        return
    if a.table:
        table(a.table)
        return
    spec = next(p for p in load_set(a.set_name, ROOT / "data/fidelity").points if p.id == a.point).spec()
    slots = Path(a.slots) if a.slots else None
    if slots is not None:
        slots.mkdir(parents=True, exist_ok=True)
    for seed in (int(x) for x in a.seeds.split(",")):
        for order in a.orders.split(","):
            for st in (float(x) for x in a.stall_ms.split(",")):
                r = one(spec, seed, order, st, a.at_s, slots)
                print(json.dumps(r), flush=True)
                if a.out:
                    with open(a.out, "a") as f:
                        f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
