"""Who takes the place a departure frees at a full drop-tail queue, on both sides.

    sudo python3 bench/fidelity_slots.py --point ID --seed N --testbed --out K.csv [--set-testbed KEY=VALUE]
    python3 bench/fidelity_slots.py --point ID --seed N --sim --out S.csv [--set-sim KEY=VALUE] [--noise-scale X]
        [--path-offsets-us DA,DB]
    python3 bench/fidelity_slots.py --table K.csv S.csv [--window 10,45]

`--testbed` runs one testbed run of the point with the bottleneck writing every forward frame
entering its link (ccfair-bottleneck, `CCFAIR_BOTTLENECK_SLOT_LOG`: when it was due there, when
the poll took it, port, queue before it, admitted or dropped, the last transmission's end); the
binary is `CCFAIR_BOTTLENECK` (or the usual one); with `--set-testbed testbed.bottleneck_order=arrival`
it also writes OUT.stamps: frames read without a kernel receive stamp, and per 1 us how long after its
stamp each frame was read. `--sim` runs the simulator at the point (A at 0
s, B at 5 s, no start jitter) through `ccfair-bench json` built with `--features slot-log`
(`CCFAIR_BENCH`, default target/slotlog/release/ccfair-bench), which writes the same records;
`--path-offsets-us DA,DB` adds DA / DB us to the RTTs of flow groups A / B; `--set-sim
'bottleneck.outages=[["20s", "3ms"]]'` stops the simulator's link (an experiment field).
`--table`: per flow, of the frames meeting the queue at its last place or full (queue before >=
limit - 1), how many and how many dropped, the drops per frame sent, and their phase: the time
since the last departure in frame times (T_f), as a histogram of ten bins (and < 0: due before
the departure the same poll handled first, >= 1) with each bin's
admitted share; and how the places freed were taken: by which flow, at what phase.
"""

from __future__ import annotations

import argparse
import bisect
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
B_START_S = 5.0
RUN_GAP_NS = 30_000  # frames closer than this are one skb's (the testbed: 2-3 us apart)
COINCIDENT_NS = 20_000


def point_spec(set_name: str, point_id: str):  # noqa: ANN201 - ccfair.spec.Spec
    sys.path.insert(0, str(ROOT / "python"))
    from ccfair.fidelity.points import load_set

    return next(p for p in load_set(set_name, ROOT / "data/fidelity").points if p.id == point_id).spec()


def run_testbed(args: argparse.Namespace) -> None:
    import ccfair

    os.environ["CCFAIR_BOTTLENECK_SLOT_LOG"] = str(Path(args.out).resolve())
    spec = point_spec(args.set_name, args.point).with_overrides(args.set_testbed)
    res = ccfair.run(spec, seed=args.seed, backend="testbed")
    raw = res._raw or {"flows": []}
    flows = [{k: f.get(k) for k in ("sent_packets", "retransmissions", "drops")} for f in raw["flows"]]
    print(json.dumps({"shares": [f["share"] for f in res.summary["flows"]], "flows": flows}))


def run_sim(args: argparse.Namespace) -> None:
    if args.noise_scale != 1.0:
        sys.path.insert(0, str(ROOT / "bench"))
        from common import scaled_host_noise, use_host_noise

        use_host_noise(scaled_host_noise(args.noise_scale))
    spec = point_spec(args.set_name, args.point).with_overrides(args.set_sim)
    cfg = spec.to_run_config(args.seed)
    for fc, t in zip(cfg["flows"], [0.0, B_START_S]):
        fc["start_ns"], fc["start_jitter_ns"] = round(t * 1e9), 0
    if args.path_offsets_us:
        from common import shift_group_rtts

        shift_group_rtts(spec, cfg, [float(x) for x in args.path_offsets_us.split(",")])
    bench = os.environ.get("CCFAIR_BENCH", str(ROOT / "target/slotlog/release/ccfair-bench"))
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(cfg, f)
        f.flush()
        env = dict(os.environ, CCFAIR_SLOT_LOG=str(Path(args.out).resolve()))
        out = subprocess.run([bench, "json", f.name], capture_output=True, text=True, env=env, check=True).stdout
    raw = json.loads(out)
    flows = [{k: f.get(k) for k in ("sent_packets", "drops")} for f in raw["flows"]]
    print(json.dumps({"flows": flows}))


ACK = 2**32 - 1  # queue_before of a testbed record of an ACK leaving towards its sender


def load(path: str, acks: bool = False) -> list[dict[str, int]]:
    with open(path) as f:
        rows = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(f)]
    rows = [r for r in rows if (r["queue_before"] == ACK) == acks]
    for r in rows:  # one shape for both sides: the time the frame met the queue, its flow
        r["t"] = r.get("due_ns", r.get("t_ns", 0))
        r["flow"] = r.get("port", r.get("flow", 0))
    return rows


def skb_starts(rows: list[dict[str, int]], flow: int) -> list[list[dict[str, int]]]:
    """A flow's frames in back-to-back runs (gaps below 30 us: one skb's frames)."""
    runs: list[list[dict[str, int]]] = []
    for r in sorted((r for r in rows if r["flow"] == flow), key=lambda r: r["t"]):
        if runs and r["t"] - runs[-1][-1]["t"] < RUN_GAP_NS:
            runs[-1].append(r)
        else:
            runs.append([r])
    return runs


def coincidences(runs: dict[int, list[list[dict[str, int]]]], f: int, g: int) -> float:
    """Share of flow f's runs starting less than 20 us after one of flow g's."""
    other = [x[0]["t"] for x in runs[g]]
    n = 0
    for x in runs[f]:
        i = bisect.bisect_right(other, x[0]["t"]) - 1
        n += i >= 0 and x[0]["t"] - other[i] < COINCIDENT_NS
    return n / max(1, len(runs[f]))


def lost_to_other(rows: list[dict[str, int]], limit: int, flow: int) -> int:
    """Drops of `flow` whose place (the one the last departure freed) another flow's frame took
    less than 25 us earlier."""
    by_free: dict[int, list[dict[str, int]]] = {}
    for r in rows:
        if r["queue_before"] >= limit - 1:
            by_free.setdefault(r["last_free_ns"], []).append(r)
    n = 0
    for g in by_free.values():
        g.sort(key=lambda r: r["t"])
        win = next((r for r in g if r["admitted"]), None)
        if win is None or win["flow"] == flow:
            continue
        n += sum(1 for r in g if r["flow"] == flow and not r["admitted"] and r["t"] - win["t"] < 25_000)
    return n


def table(paths: list[str], window: tuple[float, float], frame_ns: float | None) -> None:
    for path in paths:
        rows = load(path)
        t0 = min(r["t"] for r in rows)  # flow A's first frame: the run's start within a few ms
        rows = [r for r in rows if window[0] <= (r["t"] - t0) / 1e9 < window[1]]
        limit = max(r["queue_before"] for r in rows)
        frees = sorted({r["last_free_ns"] for r in rows})
        gaps = sorted(b - a for a, b in zip(frees, frees[1:]) if b > a)
        tf = frame_ns or gaps[len(gaps) // 10]  # back-to-back departures: one frame time apart
        late = sorted(r["now_ns"] - r["due_ns"] for r in rows if "now_ns" in r)
        late_s = f", poll after due median {late[len(late) // 2] / 1e3:.0f} us" if late else ""
        print(f"{path}: {len(rows)} frames in {window[0]:.0f}-{window[1]:.0f} s, limit {limit}, T_f {tf / 1e3:.1f} us{late_s}")
        flows = sorted({r["flow"] for r in rows})
        runs = {f: skb_starts(rows, f) for f in flows}
        for flow in flows:
            mine = [r for r in rows if r["flow"] == flow]
            full = [r for r in mine if r["queue_before"] >= limit - 1]
            drops = sum(1 for r in mine if not r["admitted"])
            hist = [[0, 0] for _ in range(12)]
            for r in full:
                ph = (r["t"] - r["last_free_ns"]) / tf
                b = 0 if ph < 0 else min(int(ph * 10), 10) + 1
                hist[b][0] += 1
                hist[b][1] += r["admitted"]
            cells = " ".join(f"{n:5d}/{a / n:.2f}" if n else "    0/ -  " for n, a in hist)
            in_pairs = sum(len(x) for x in runs[flow] if len(x) >= 2) / len(mine)
            pos = [[x[i] for x in runs[flow] if len(x) > i] for i in (0, 1)]
            pos_drop = [sum(1 for r in p if not r["admitted"]) / max(1, len(p)) for p in pos]
            others = [g for g in flows if g != flow]
            coinc = ", ".join(f"{coincidences(runs, flow, g):.3f} after flow {g}'s" for g in others)
            print(
                f"  flow {flow}: {len(mine)} frames, {drops} dropped ({drops / len(mine):.4f}); "
                f"at the last place or full {len(full)}, admitted {sum(r['admitted'] for r in full)}\n"
                f"    frames in back-to-back runs of >= 2: {in_pairs:.3f}; dropped, first / second of a run "
                f"{pos_drop[0]:.4f} / {pos_drop[1]:.4f}\n"
                f"    runs starting < 20 us after another flow's: {coinc}; drops whose place another "
                f"flow's frame took < 25 us earlier: {lost_to_other(rows, limit, flow)}"
            )
            print(f"    phase since the last departure (< 0 first, then tenths of T_f, >= 1 last): frames/admitted share\n    {cells}")
        taken = [r for r in rows if r["queue_before"] == limit - 1 and r["admitted"]]
        by = {f: sum(1 for r in taken if r["flow"] == f) for f in flows}
        print(f"  places taken at the last place: {by}")
        acks = load(path, acks=True)
        if acks and len(flows) == 2:
            print(f"  of flow 1's runs < 20 us after flow 0's: {at_acks(runs, acks)}")


def at_acks(runs: dict[int, list[list[dict[str, int]]]], acks: list[dict[str, int]]) -> str:
    """Testbed logs: of flow 1's runs starting < 20 us after one of flow 0's, how many leave at
    an ACK (the flow's ACK released 24.9-25.06 ms before its due time, the forward delay less the
    host's path: the sends at an ACK cluster there), per flow."""
    released = {f: sorted(r["now_ns"] for r in acks if r["flow"] == f) for f in (0, 1)}

    def at_ack(f: int, t: int) -> bool:
        a = released[f]
        return bisect.bisect_right(a, t - 24_900_000) > bisect.bisect_left(a, t - 25_060_000)

    other = [x[0]["t"] for x in runs[0]]
    n = a0 = a1 = 0
    for x in runs[1]:
        t = x[0]["t"]
        i = bisect.bisect_right(other, t) - 1
        if i >= 0 and t - other[i] < COINCIDENT_NS:
            n += 1
            a0 += at_ack(0, other[i])
            a1 += at_ack(1, t)
    return f"{n}, flow 0's at an ACK {a0}, flow 1's {a1}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--point")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--testbed", action="store_true")
    ap.add_argument("--sim", action="store_true")
    ap.add_argument("--set-sim", action="append", default=[])
    ap.add_argument("--noise-scale", type=float, default=1.0, help="with --sim: both host-noise means times X")
    ap.add_argument("--path-offsets-us", metavar="DA,DB", help="with --sim: add DA / DB us to group A's / B's RTTs")
    ap.add_argument("--set-testbed", action="append", default=[], help="with --testbed: KEY=VALUE")
    ap.add_argument("--table", nargs="+")
    ap.add_argument("--window", default="10,45")
    ap.add_argument("--frame-us", type=float)
    args = ap.parse_args()
    if args.table:
        a, b = (float(x) for x in args.window.split(","))
        table(args.table, (a, b), args.frame_us * 1e3 if args.frame_us else None)
    elif args.testbed:
        run_testbed(args)
    else:
        run_sim(args)


if __name__ == "__main__":
    main()
