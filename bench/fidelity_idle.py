"""Where a testbed run's bottleneck link idled, from its slot log (bench/fidelity_slots.py --testbed).

    python3 bench/fidelity_idle.py LOG.csv [LOG.csv ...] [--window 10,45] [--gap-ms 1]

For every forward frame that met an empty link (queue before it 0: nothing queued, nothing on the
link) the link had been idle since the last transmission ended (`last_free_ns`) until the poll that
admitted the frame (`now_ns`). That idle time splits into the part before the frame was due at the
link (`due_ns`: no frame there, the senders' doing) and the part after (a frame due, not yet
admitted: the bottleneck's own lateness). Per log: the idle share of the window, both parts; the
idle periods longer than `--gap-ms` (count, total, the longest five as (length, of it with a frame
due, start s)); the bottleneck's stalls (polls that admitted frames more than 1 ms after they were
due; a stall's length: its most overdue frame's) over 1 ms and 10 ms; the frames admitted and
dropped per port (0 and the rest). Times in the logs are the bottleneck's CLOCK_MONOTONIC ns; the
window is relative to the first forward frame (flow A's SYN).
"""

from __future__ import annotations

import argparse
import csv

ACK = 2**32 - 1


def idle_of(path: str, window: tuple[float, float], gap_ns: int) -> dict[str, float]:
    with open(path) as f:
        rows = [r for r in csv.DictReader(f) if int(r["queue_before"]) != ACK]
    t0 = int(rows[0]["due_ns"])
    lo, hi = t0 + int(window[0] * 1e9), t0 + int(window[1] * 1e9)
    supply = held = 0
    gaps: list[tuple[int, int, int]] = []  # (idle ns, of it late ns, start)
    adm = [0, 0]
    drop = [0, 0]
    for r in rows:
        due, now, q, free = int(r["due_ns"]), int(r["now_ns"]), int(r["queue_before"]), int(r["last_free_ns"])
        if not lo <= now < hi:
            continue
        port = int(r["port"])
        (adm if r["admitted"] == "1" else drop)[min(port, 1)] += 1
        if q != 0 or free == 0:
            continue
        start = max(free, lo)
        s = max(0, min(due, now) - start)
        lt = max(0, now - max(due, start))
        supply += s
        held += lt
        if now - start >= gap_ns:
            gaps.append((now - start, lt, start - t0))
    # Stalls: frames the poll admitted more than 1 ms after they were due, grouped by the poll
    # that admitted them; a stall's length is its most overdue frame's lateness.
    polls: dict[int, int] = {}
    for r in rows:
        now, due = int(r["now_ns"]), int(r["due_ns"])
        if lo <= now < hi and now - due > 1_000_000:
            polls[now] = max(polls.get(now, 0), now - due)
    late = sorted(polls.values(), reverse=True)
    w = hi - lo
    gaps.sort(reverse=True)
    return {
        "idle_share": (supply + held) / w,
        "idle_no_frame_share": supply / w,
        "idle_frame_due_share": held / w,
        "gaps": len(gaps),
        "gaps_total_ms": sum(g[0] for g in gaps) / 1e6,
        "longest_gaps_ms": [(round(g[0] / 1e6, 1), round(g[1] / 1e6, 2), round(g[2] / 1e9, 2)) for g in gaps[:5]],
        "stalls_over_1ms": len(late),
        "stalls_over_10ms": sum(1 for x in late if x > 10_000_000),
        "stalls_over_1ms_total_ms": sum(late) / 1e6,
        "longest_stalls_ms": [round(x / 1e6, 1) for x in late[:5]],
        "admitted": adm,
        "dropped": drop,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--window", default="10,45")
    ap.add_argument("--gap-ms", type=float, default=1.0)
    a = ap.parse_args()
    w = tuple(float(x) for x in a.window.split(","))
    for p in a.logs:
        r = idle_of(p, (w[0], w[1]), int(a.gap_ms * 1e6))
        print(p)
        for k, v in r.items():
            print(f"  {k}: {v:.4f}" if isinstance(v, float) else f"  {k}: {v}")


if __name__ == "__main__":
    main()
