"""Paired testbed control for the buffer/frame accounting change.

    python3 bench/buffer_ab.py --old-bottleneck PATH --points "bbr/cubic 1,bbr/cubic 2" --reps 5 --out FILE.jsonl

Runs each S0 point (bench/realism_calibration.py `points("s0")`) `--reps`
times with the current ccfair-bottleneck ("new": a limit of N holds N, frames
charged IP length + 14) and with `--old-bottleneck` ("old": an executable that
runs the bottleneck as before the change, e.g. a wrapper around a binary built
from the previous commit), interleaved new/old, two runs at a time, so both
see the same machine load. One JSON line per run: point, variant, seed, load,
summary. `--table` prints the mean share of B per point and variant.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from realism_calibration import points, share_b


def run(raw: dict[str, Any], seed: int, binary: str | None, tmp: Path) -> dict[str, Any]:
    f = tmp / f"{abs(hash(json.dumps(raw, sort_keys=True)))}-{seed}-{abs(hash(binary))}.json"
    f.write_text(json.dumps(raw))
    env = dict(os.environ)
    if binary:
        env["CCFAIR_BOTTLENECK"] = binary
    code = (
        "import sys,json,ccfair; from ccfair import Spec;"
        "r=ccfair.run(Spec.from_dict(json.load(open(sys.argv[1]))), seed=int(sys.argv[2]), backend='testbed');"
        "print(json.dumps(r.summary))"
    )
    p = subprocess.run([sys.executable, "-c", code, str(f), str(seed)], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip().splitlines()[-1])
    return json.loads(p.stdout)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old-bottleneck")
    ap.add_argument("--new-bottleneck")
    ap.add_argument("--points", default="bbr/cubic 1")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", required=True)
    ap.add_argument("--table", action="store_true")
    a = ap.parse_args()
    out = Path(a.out)
    if a.table:
        rows: dict[tuple[str, str], list[float]] = {}
        for line in out.read_text().splitlines():
            r = json.loads(line)
            rows.setdefault((r["point"], r["variant"]), []).append(share_b(r["summary"]))
        print("| point | variant | runs | B share mean | range |\n|---|---|---|---|---|")
        for (p, v), xs in sorted(rows.items()):
            print(f"| {p} | {v} | {len(xs)} | {statistics.mean(xs):.3f} | {min(xs):.3f}-{max(xs):.3f} |")
        return
    tmp = Path("/tmp/ccfair-buffer-ab")
    tmp.mkdir(exist_ok=True)
    pts = points("s0")
    jobs = [(p, v, s) for p in a.points.split(",") for s in range(1, a.reps + 1) for v in ("new", "old")]

    def one(job: tuple[str, str, int]) -> None:
        p, v, s = job
        load = Path("/proc/loadavg").read_text().split()[:3]
        try:
            summ = run(pts[p], s, a.old_bottleneck if v == "old" else a.new_bottleneck, tmp)
        except RuntimeError as e:
            print(f"{p} {v} seed {s}: {e}", file=sys.stderr)
            return
        with out.open("a") as fh:
            fh.write(json.dumps({"point": p, "variant": v, "seed": s, "load": load, "summary": summ}) + "\n")
        print(f"{p} {v} seed {s}: B share {share_b(summ):.3f}", flush=True)

    with ThreadPoolExecutor(2) as ex:
        list(ex.map(one, jobs))


if __name__ == "__main__":
    main()
