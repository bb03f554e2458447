"""Overflow episodes of a full drop-tail queue from bottleneck slot logs: who lost, and whether the
testbed's bottleneck stalled just before (docs/linux-ports.md "Veno against CUBIC").

    python3 bench/veno_bpf/overflows.py LOG.csv [LOG.csv ...] [--after 5.5] [--stall-ms 1] [--lead-ms 50]

LOG.csv: a slot log of `bench/fidelity_slots.py --testbed` (every forward frame reaching the
bottleneck's link: when it was due, when the bottleneck's poll read it, port, queue before it,
admitted) or `--sim` (the simulator's, without poll times). Drops after ``--after`` s (B starts at 5
s) are grouped into episodes (drops within 0.6 s of the previous one). Per episode: each flow's
drops, and for testbed logs the bottleneck's stalls from ``--lead-ms`` before the episode's first
drop to its last: polls that read a frame more than ``--stall-ms`` after it was due (while the
bottleneck does not run its link sends nothing, so a backlogged queue grows by the stall over the
frame time). A drop is "after a stall" when a stall ended at most ``--lead-ms`` before it. Totals per
log: episodes, each flow's share of episodes in which it lost, drops after a stall / all, and the
episodes with no stall in their lead-in and who lost in them.
"""

from __future__ import annotations

import argparse
import bisect
import csv

ACK = 2**32 - 1  # queue_before of a testbed record of an ACK
EPISODE_GAP_S = 0.6


def load(path: str) -> list[dict[str, int]]:
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            r = {k: int(v) for k, v in r.items()}
            if r["queue_before"] == ACK:
                continue
            r["t"] = r.get("due_ns", r.get("t_ns", 0))
            r["flow"] = r.get("port", r.get("flow", 0))
            rows.append(r)
    rows.sort(key=lambda r: r["t"])
    return rows


def stall_ends(rows: list[dict[str, int]], stall_ns: int) -> list[int]:
    """Times (ns) at which the bottleneck's poll read a frame more than ``stall_ns`` after it was due."""
    return [r["now_ns"] for r in rows if "now_ns" in r and r["now_ns"] - r["t"] > stall_ns]


def stall_events(rows: list[dict[str, int]], stall_ns: int) -> list[float]:
    """The stalls' lengths, ms: reads more than ``stall_ns`` late, those within 20 ms of each other
    one stall, its length the largest lateness in it."""
    out: list[list[int]] = []
    for r in rows:
        late = r.get("now_ns", r["t"]) - r["t"]
        if late > stall_ns:
            if out and r["now_ns"] - out[-1][0] < 20_000_000:
                out[-1] = [r["now_ns"], max(out[-1][1], late)]
            else:
                out.append([r["now_ns"], late])
    return [late / 1e6 for _, late in out]


def episodes(rows: list[dict[str, int]], t0: int, after_s: float) -> list[list[dict[str, int]]]:
    eps: list[list[dict[str, int]]] = []
    for r in rows:
        if r["admitted"] or (r["t"] - t0) / 1e9 < after_s:
            continue
        if eps and (r["t"] - eps[-1][-1]["t"]) / 1e9 < EPISODE_GAP_S:
            eps[-1].append(r)
        else:
            eps.append([r])
    return eps


def stalled_before(stalls: list[int], t: int, lead_ns: int) -> bool:
    i = bisect.bisect_right(stalls, t)
    return i > 0 and t - stalls[i - 1] <= lead_ns


def report(path: str, after_s: float, stall_ns: int, lead_ns: int) -> None:
    rows = load(path)
    t0 = rows[0]["t"]
    stalls = stall_ends(rows, stall_ns)
    eps = episodes(rows, t0, after_s)
    flows = sorted({r["flow"] for r in rows})
    testbed = any("now_ns" in r for r in rows)
    print(
        f"{path}: {len(eps)} episodes after {after_s} s" + (f", {len(stalls)} frames read > {stall_ns / 1e6:g} ms late" if testbed else "")
    )
    if testbed:
        ev = stall_events(rows, stall_ns)
        span_s = (rows[-1]["t"] - t0) / 1e9
        cuts = [1, 2, 5, 10]
        print(
            f"  stalls (reads > {stall_ns / 1e6:g} ms late, within 20 ms one stall): {len(ev) / span_s:.2f} per s over {span_s:.0f} s, "
            f"mean {sum(ev) / max(1, len(ev)):.2f} ms; " + ", ".join(f">= {c} ms {sum(x >= c for x in ev)}" for c in cuts)
        )
    lost_in = dict.fromkeys(flows, 0)
    quiet = {"episodes": 0, **{f: 0 for f in flows}}
    after = dict.fromkeys(flows, 0)
    drops = dict.fromkeys(flows, 0)
    for e in eps:
        per = {f: sum(1 for r in e if r["flow"] == f) for f in flows}
        i0 = bisect.bisect_left(stalls, e[0]["t"] - lead_ns)
        i1 = bisect.bisect_right(stalls, e[-1]["t"])
        n_stalls = i1 - i0
        for f in flows:
            lost_in[f] += per[f] > 0
        for r in e:
            drops[r["flow"]] += 1
            after[r["flow"]] += stalled_before(stalls, r["t"], lead_ns)
        if testbed and n_stalls == 0:
            quiet["episodes"] += 1
            for f in flows:
                quiet[f] += per[f] > 0
        order = "".join(str(r["flow"]) + ("*" if stalled_before(stalls, r["t"], lead_ns) else "") for r in e)
        s = f", stalled reads {n_stalls}" if testbed else ""
        print(
            f"  {(e[0]['t'] - t0) / 1e9:7.3f}-{(e[-1]['t'] - t0) / 1e9:7.3f} s  drops "
            + " ".join(f"flow {f} {per[f]:3d}" for f in flows)
            + f"{s}  {order}"
        )
    n = max(1, len(eps))
    print("  lost in (share of episodes): " + ", ".join(f"flow {f} {lost_in[f] / n:.2f}" for f in flows))
    if testbed:
        print("  drops after a stall: " + ", ".join(f"flow {f} {after[f]} of {drops[f]}" for f in flows))
        print(
            f"  episodes without a stall in their lead-in: {quiet['episodes']}, lost in: "
            + ", ".join(f"flow {f} {quiet[f]}" for f in flows)
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--after", type=float, default=5.5, help="only drops after this time, s")
    ap.add_argument("--stall-ms", type=float, default=1.0)
    ap.add_argument("--lead-ms", type=float, default=50.0)
    args = ap.parse_args()
    for p in args.logs:
        report(p, args.after, int(args.stall_ms * 1e6), int(args.lead_ms * 1e6))


if __name__ == "__main__":
    main()
