"""Each queue overflow frame by frame, from slot logs of both sides: who loses, when, in which burst.

    python3 bench/fidelity_overflow.py LOG [LOG ...] [--window 6,45] [--gap 1.0] [--detail] [--jsonl FILE --label TEXT]

LOGs are bench/fidelity_slots.py's records (`--testbed` or `--sim --out`). An overflow episode is
the drops grouped while each comes within `--gap` s of the one before (in the window, from flow
A's first frame). Per episode: its first drop (time, flow), the drops per flow, the escaper (a flow
without a drop in it), then with `--detail` every drop (ms after the first,
flow, its place in the flow's back-to-back run of frames: one skb, `k/n`) and per flow the frames
reaching the bottleneck per 50 ms from 100 ms before the first drop (the loser's reduction shows
as its count falling), the runs' sizes around the drops, and on testbed logs the ACKs leaving
towards the flow per 50 ms. Totals per log: episodes, escaped ones, the first drop's flow, the
place of the drops in their runs (`place_last`: the run's last frame), how many drops were a later frame of a run whose earlier frames
were admitted (`own_run`: the flow's own burst overfilled the queue), the time from the first drop
to the episode's last (`span_ms`), and how far apart a flow's consecutive two-frame runs arrive
around two frame times (|interval - 2 T_f| quartiles, us, intervals within 1 ms of it: the ACK
clock's jitter); on testbed logs also, per port, how long after the handshake's last ACK (its
SYN-ACK's record + the path's one-way delay back) its first data frame came (`first_data_us`: the
sending application's first write). `--jsonl FILE` appends one line per LOG with these and every
episode.
"""

from __future__ import annotations

import argparse
import collections
import csv
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fidelity_slots import ACK, RUN_GAP_NS, load  # noqa: E402


def runs_of(rows: list[dict[str, int]]) -> dict[int, tuple[int, int]]:
    """Per frame (by index in `rows`), its place k (1-based) and its run's size n in its flow."""
    out: dict[int, tuple[int, int]] = {}
    by_flow: dict[int, list[int]] = collections.defaultdict(list)
    for i, r in enumerate(rows):
        by_flow[r["flow"]].append(i)
    for idx in by_flow.values():
        cur: list[int] = []
        for i in idx + [None]:  # type: ignore[list-item]
            if i is not None and cur and rows[i]["t"] - rows[cur[-1]]["t"] < RUN_GAP_NS:
                cur.append(i)
                continue
            for k, j in enumerate(cur):
                out[j] = (k + 1, len(cur))
            cur = [] if i is None else [i]
    return out


def episodes(rows: list[dict[str, int]], gap_ns: int) -> list[list[int]]:
    eps: list[list[int]] = []
    for i, r in enumerate(rows):
        if r["admitted"]:
            continue
        if eps and r["t"] - rows[eps[-1][-1]]["t"] <= gap_ns:
            eps[-1].append(i)
        else:
            eps.append([i])
    return eps


def per_bin(ts: list[int], t0: int, bin_ns: int, nbins: int, start_ns: int) -> list[int]:
    c = [0] * nbins
    for t in ts:
        b = (t - t0 + start_ns) // bin_ns
        if 0 <= b < nbins:
            c[b] += 1
    return c


def own_run(rows: list[dict[str, int]], i: int) -> bool:
    """Drop ``i`` follows an admitted frame of its own flow's run (< 30 us before it)."""
    j = i - 1
    while j >= 0 and not rows[j]["admitted"]:
        j -= 1
    return j >= 0 and rows[j]["flow"] == rows[i]["flow"] and rows[i]["t"] - rows[j]["t"] < RUN_GAP_NS


def clock_jitter_us(rows: list[dict[str, int]], place: dict[int, tuple[int, int]]) -> list[float]:
    """Quartiles of |interval - 2 T_f| between a flow's consecutive two-frame runs (within 1 ms)."""
    frees = sorted({r["last_free_ns"] for r in rows})
    gaps = sorted(b - a for a, b in zip(frees, frees[1:]) if b > a)
    tf2 = 2 * gaps[len(gaps) // 10]
    devs: list[float] = []
    for f in sorted({r["flow"] for r in rows}):
        st = [r["t"] for i, r in enumerate(rows) if r["flow"] == f and place[i] == (1, 2)]
        devs += [abs((b - a) - tf2) / 1e3 for a, b in zip(st, st[1:]) if abs((b - a) - tf2) < 1e6]
    devs.sort()
    return [round(devs[int(len(devs) * q)], 1) for q in (0.25, 0.5, 0.75)] if devs else []


def first_data_us(path: str) -> dict[int, float]:
    """Testbed logs: per port, the first data frame's due time after the handshake's last ACK (the
    second forward frame after the port's first reverse record, the SYN-ACK), in us."""
    with open(path) as f:
        rows = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(f) if "now_ns" in r]
    out: dict[int, float] = {}
    synack: dict[int, int] = {}
    fwd: dict[int, list[int]] = collections.defaultdict(list)
    for r in rows:
        p = r["port"]
        if r["queue_before"] == ACK:
            synack.setdefault(p, r["now_ns"])
        elif p in synack and len(fwd[p]) < 2:
            fwd[p].append(r["due_ns"])
            if len(fwd[p]) == 2:
                out[p] = round((fwd[p][1] - fwd[p][0]) / 1e3, 1)
        if len(out) == len(synack) > 1:
            break
    return out


def analyse(path: str, window: tuple[float, float], gap_s: float, detail: bool) -> dict:
    rows = sorted(load(path), key=lambda r: r["t"])
    acks = load(path, acks=True)
    t0 = rows[0]["t"]
    rows = [r for r in rows if window[0] <= (r["t"] - t0) / 1e9 < window[1]]
    place = runs_of(rows)
    limit = max(r["queue_before"] for r in rows)
    flows = sorted({r["flow"] for r in rows})
    tot: collections.Counter[str] = collections.Counter()
    eps_out = []
    print(f"{path}: limit {limit}")
    for ep in episodes(rows, round(gap_s * 1e9)):
        first = rows[ep[0]]
        tf = first["t"]
        drops = collections.Counter(rows[i]["flow"] for i in ep)
        # frames meeting the full queue within the episode's span
        span_end = rows[ep[-1]]["t"]
        at_full = {f: sum(1 for r in rows if r["flow"] == f and tf <= r["t"] <= span_end and r["queue_before"] >= limit - 1) for f in flows}
        escaped = [f for f in flows if drops[f] == 0]
        places = collections.Counter(f"{place[i][0]}/{place[i][1]}" for i in ep)
        print(
            f"  {(tf - t0) / 1e9:7.2f} s: first drop flow {first['flow']} ({place[ep[0]][0]}/{place[ep[0]][1]}); "
            f"drops {dict(sorted(drops.items()))} over {(span_end - tf) / 1e6:.0f} ms; at full {at_full}; "
            f"escaped {escaped or '-'}; places {dict(places.most_common(6))}"
        )
        tot["drops"] += len(ep)
        tot["own_run"] += sum(own_run(rows, i) for i in ep)
        eps_out.append(
            {
                "t_s": round((tf - t0) / 1e9, 3),
                "first_drop_flow": first["flow"],
                "drops": {str(f): drops[f] for f in flows},
                "escaped": escaped,
                "span_ms": round((span_end - tf) / 1e6, 1),
            }
        )
        tot["episodes"] += 1
        tot[f"first_drop_flow{first['flow']}"] += 1
        tot["escaped"] += bool(escaped)
        for f in escaped:
            tot[f"escaper_flow{f}"] += 1
        for k, n in places.items():
            tot[f"place_{'last' if k.split('/')[0] == k.split('/')[1] and k != '1/1' else k if k == '1/1' else 'other'}"] += n
        if detail:
            seq = " ".join(f"{(rows[i]['t'] - tf) / 1e6:.1f}:{rows[i]['flow']}({place[i][0]}/{place[i][1]})" for i in ep[:40])
            print(f"      drops (ms:flow(k/n)): {seq}")
            for f in flows:
                ts = [r["t"] for r in rows if r["flow"] == f]
                print(f"      flow {f} frames/50ms from -100 ms: {per_bin(ts, tf, 50_000_000, 12, 100_000_000)}")
                if acks:
                    ta = [a["t"] for a in acks if a["flow"] == f]
                    print(f"      flow {f} ACKs /50ms from -100 ms:  {per_bin(ta, tf, 50_000_000, 12, 100_000_000)}")
                sizes = collections.Counter(
                    place[i][1] for i, r in enumerate(rows) if r["flow"] == f and place[i][0] == 1 and -250e6 <= r["t"] - tf < 250e6
                )
                print(f"      flow {f} run sizes within 250 ms: {dict(sorted(sizes.items()))}")
    jitter = clock_jitter_us(rows, place)
    spans = [e["span_ms"] for e in eps_out]
    print(
        f"  totals: {dict(sorted(tot.items()))}; span median {statistics.median(spans) if spans else 0:.0f} ms; clock jitter quartiles {jitter} us"
    )
    first = first_data_us(path) if acks else {}
    if first:
        print(f"  first data frame after the handshake's last ACK, us, per port: {first}")
    return {"log": path, "totals": dict(tot), "clock_jitter_us": jitter, "first_data_us": first, "episodes": eps_out}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--window", default="6,45")
    ap.add_argument("--gap", type=float, default=1.0)
    ap.add_argument("--detail", action="store_true")
    ap.add_argument("--jsonl", help="append one line per LOG")
    ap.add_argument("--label", default="", help="with --jsonl: what the LOG is (point, side, seed, host)")
    a = ap.parse_args()
    w0, w1 = (float(x) for x in a.window.split(","))
    for p in a.logs:
        out = analyse(p, (w0, w1), a.gap, a.detail)
        if a.jsonl:
            with open(a.jsonl, "a") as f:
                f.write(json.dumps({"label": a.label, **out}) + "\n")


if __name__ == "__main__":
    main()
