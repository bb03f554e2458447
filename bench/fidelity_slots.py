"""Who takes the place a departure frees at a full drop-tail queue, on both sides.

    sudo python3 bench/fidelity_slots.py --point ID --seed N --testbed --out K.csv   # root, one run
    python3 bench/fidelity_slots.py --point ID --seed N --sim --out S.csv [--set-sim KEY=VALUE]
    python3 bench/fidelity_slots.py --table K.csv S.csv [--window 10,45]

`--testbed` runs one testbed run of the point with the bottleneck writing every forward frame
entering its link (ccfair-bottleneck, `CCFAIR_BOTTLENECK_SLOT_LOG`: when it was due there, when
the poll took it, port, queue before it, admitted or dropped, the last transmission's end); the
binary is `CCFAIR_BOTTLENECK` (or the usual one). `--sim` runs the simulator at the point (A at 0
s, B at 5 s, no start jitter) through `ccfair-bench json` built with `--features slot-log`
(`CCFAIR_BENCH`, default target/slotlog/release/ccfair-bench), which writes the same records.
`--table`: per flow, of the frames meeting the queue at its last place or full (queue before >=
limit - 1), how many and how many dropped, the drops per frame sent, and their phase: the time
since the last departure in frame times (T_f), as a histogram of ten bins (and < 0: due before
the departure the same poll handled first, >= 1) with each bin's
admitted share; and how the places freed were taken: by which flow, at what phase.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
B_START_S = 5.0


def point_spec(set_name: str, point_id: str):  # noqa: ANN201 - ccfair.spec.Spec
    sys.path.insert(0, str(ROOT / "python"))
    from ccfair.fidelity.points import load_set

    return next(p for p in load_set(set_name, ROOT / "data/fidelity").points if p.id == point_id).spec()


def run_testbed(args: argparse.Namespace) -> None:
    import ccfair

    os.environ["CCFAIR_BOTTLENECK_SLOT_LOG"] = str(Path(args.out).resolve())
    res = ccfair.run(point_spec(args.set_name, args.point), seed=args.seed, backend="testbed")
    raw = res._raw or {"flows": []}
    flows = [{k: f.get(k) for k in ("sent_packets", "retransmissions", "drops")} for f in raw["flows"]]
    print(json.dumps({"shares": [f["share"] for f in res.summary["flows"]], "flows": flows}))


def run_sim(args: argparse.Namespace) -> None:
    spec = point_spec(args.set_name, args.point).with_overrides(args.set_sim)
    cfg = spec.to_run_config(args.seed)
    for fc, t in zip(cfg["flows"], [0.0, B_START_S]):
        fc["start_ns"], fc["start_jitter_ns"] = round(t * 1e9), 0
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


def table(paths: list[str], window: tuple[float, float], frame_ns: float | None) -> None:
    for path in paths:
        rows = load(path)
        t0 = min(r["t"] for r in rows)  # flow A's first frame: the run's start within a few ms
        rows = [r for r in rows if window[0] <= (r["t"] - t0) / 1e9 < window[1]]
        limit = max(r["queue_before"] for r in rows)
        frees = sorted({r["last_free_ns"] for r in rows})
        gaps = sorted(b - a for a, b in zip(frees, frees[1:]) if b > a)
        tf = frame_ns or gaps[len(gaps) // 10]  # back-to-back departures: one frame time apart
        print(f"{path}: {len(rows)} frames in {window[0]:.0f}-{window[1]:.0f} s, limit {limit}, T_f {tf / 1e3:.1f} us")
        for flow in sorted({r["flow"] for r in rows}):
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
            print(
                f"  flow {flow}: {len(mine)} frames, {drops} dropped ({drops / len(mine):.4f}); "
                f"at the last place or full {len(full)}, admitted {sum(r['admitted'] for r in full)}"
            )
            print(f"    phase since the last departure (< 0 first, then tenths of T_f, >= 1 last): frames/admitted share\n    {cells}")
        taken = [r for r in rows if r["queue_before"] == limit - 1 and r["admitted"]]
        by = {f: sum(1 for r in taken if r["flow"] == f) for f in sorted({r["flow"] for r in rows})}
        print(f"  places taken at the last place: {by}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--point")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--testbed", action="store_true")
    ap.add_argument("--sim", action="store_true")
    ap.add_argument("--set-sim", action="append", default=[])
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
