"""A late-starting flow B on both sides, from bottleneck slot logs (docs/linux-ports.md "Late starters
at 20 Mbit/s, 100 ms"): its start-up and the overflows after it.

    python3 bench/late_start.py LOG.csv [LOG.csv ...] [--window 10,45]

LOG.csv: `bench/fidelity_slots.py --testbed` or `--sim` records (every forward frame reaching the
bottleneck: when, flow, queue before it, admitted). Times are from flow A's first frame. Per log:
B's first frame (its SYN on the testbed, its first data frame on the simulator), how many of B's
frames in its first second were dropped, B's frames per s around 10 s and 15 s; in the window, B's
share of the frames, the overflow episodes (drops within 0.6 s of the one before) and how many B
escaped, and where the drops fall: a later frame of a back-to-back run (frames < 30 us apart: one
flow's burst) whose earlier frames were admitted (`own burst`), or a run of one frame (`alone`).
"""

from __future__ import annotations

import argparse
import csv

ACK = 2**32 - 1  # queue_before of a testbed record of an ACK
RUN_GAP_NS = 30_000
EPISODE_GAP_NS = 600_000_000


def load(path: str) -> list[tuple[int, int, int]]:
    """(time ns from flow A's first frame, flow, admitted) of every data frame, in time order."""
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            if int(r["queue_before"]) == ACK:
                continue
            t = int(r.get("due_ns") or r.get("t_ns") or 0)
            rows.append((t, int(r.get("port", r.get("flow", 0))), int(r["admitted"])))
    rows.sort()
    t0 = rows[0][0]
    return [(t - t0, f, a) for t, f, a in rows]


def runs(rows: list[tuple[int, int, int]], flow: int) -> list[list[tuple[int, int, int]]]:
    out: list[list[tuple[int, int, int]]] = []
    for r in (r for r in rows if r[1] == flow):
        if out and r[0] - out[-1][-1][0] < RUN_GAP_NS:
            out[-1].append(r)
        else:
            out.append([r])
    return out


def drop_places(rows: list[tuple[int, int, int]]) -> tuple[int, int, int]:
    """(drops, drops after an admitted frame of their own run, drops of a one-frame run)."""
    n = own = alone = 0
    for flow in (0, 1):
        for run in runs(rows, flow):
            for i, (_, _, admitted) in enumerate(run):
                if admitted:
                    continue
                n += 1
                own += any(a for _, _, a in run[:i])
                alone += len(run) == 1
    return n, own, alone


def episodes(rows: list[tuple[int, int, int]]) -> list[set[int]]:
    eps: list[tuple[int, set[int]]] = []
    for t, f, a in rows:
        if a:
            continue
        if eps and t - eps[-1][0] < EPISODE_GAP_NS:
            eps[-1] = (t, eps[-1][1] | {f})
        else:
            eps.append((t, {f}))
    return [e for _, e in eps]


def describe(path: str, window: tuple[float, float]) -> str:
    rows = load(path)
    b = [r for r in rows if r[1] == 1]
    first = b[0][0]
    early = [r for r in b if r[0] < first + 1e9]
    rate = [sum(1 for r in b if c - 0.5e9 <= r[0] < c + 0.5e9) for c in (10e9, 15e9)]
    w = [r for r in rows if window[0] * 1e9 <= r[0] < window[1] * 1e9]
    share = sum(1 for r in w if r[1] == 1) / len(w)
    eps = episodes(w)
    n, own, alone = drop_places(w)
    return (
        f"{path}: B's first frame {first / 1e9:.3f} s, first 1 s {len(early)} frames {sum(1 - r[2] for r in early)} dropped; "
        f"B frames/s at 10 s {rate[0]}, 15 s {rate[1]}; window: B's frames {share:.3f}, episodes {len(eps)}, "
        f"B escaped {sum(1 for e in eps if 1 not in e)}; drops {n}, own burst {own} ({own / max(1, n):.2f}), alone {alone}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--window", default="10,45")
    args = ap.parse_args()
    a, b = (float(x) for x in args.window.split(","))
    for path in args.logs:
        print(describe(path, (a, b)))


if __name__ == "__main__":
    main()
