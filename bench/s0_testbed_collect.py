"""S0 points on the testbed (real Linux TCP; root), for the testbed twins of S0's claims.

    python3 bench/s0_testbed_collect.py --reps 5 --jobs 2 --out bench/data/s0-testbed-extra-2026-11-29.jsonl

Each run is one point of ccfair's S0 preset (python/ccfair/presets/s0.py:
``spec_dict``, S0's timing, start noise and receive window) run with
``backend="testbed"`` in a child process (bench/testbed_subprocess.py). One JSON
line per finished run (the point, its seed, the summary, the load average) is
appended to --out, so a killed collection resumes where it stopped and loses
no finished run. Points: the lab pairs of S0's Figure 2 that the older stored
testbed data (bench/data/realism-testbed-2026-11-25.jsonl) lacks at 0.5 BDP:
BBR vs BBR, CUBIC vs CUBIC (the older file's runs have no start jitter), CUBIC vs CUBIC
with pacing (both orders) and paced vs paced CUBIC.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

from ccfair.presets import s0
from testbed_subprocess import testbed_summary

#: (a, b, order) at S0's base setting, 0.5 BDP, drop-tail.
POINTS = (
    ("bbr", "bbr", "A first"),
    ("cubic", "cubic", "A first"),
    ("cubic", "cubic+pacing", "A first"),
    ("cubic", "cubic+pacing", "B first"),
    ("cubic+pacing", "cubic+pacing", "A first"),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2, help="concurrent testbed runs (at most 2 on a shared machine)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = Path(a.out)
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                done.add((r["point"]["a"], r["point"]["b"], r["point"]["order"], r["point"]["rep"]))
    tmp = Path("/tmp/ccfair-s0-testbed")
    tmp.mkdir(exist_ok=True)
    rate, rtt = s0.BASE
    jobs = [
        s0.Point("lab", x, y, rate, float(rtt), 0.5, "droptail", order, rep)
        for rep in range(a.reps)
        for x, y, order in POINTS
        if (x, y, order, rep) not in done
    ]

    def one(p: s0.Point) -> None:
        raw = s0.spec_dict(p)
        load = Path("/proc/loadavg").read_text().split()[:3]
        try:
            summ = testbed_summary(raw, int(raw["seed"]), tmp)
        except RuntimeError as e:
            print(f"{p.pair} {p.order} #{p.rep}: {e}", file=sys.stderr, flush=True)
            return
        with out.open("a") as fh:
            fh.write(json.dumps({"point": asdict(p), "seed": raw["seed"], "load": load, "summary": summ}) + "\n")
        print(f"{p.pair} {p.order} #{p.rep}: fness {summ.get('fness')}", flush=True)

    with ThreadPoolExecutor(a.jobs) as ex:
        list(ex.map(one, jobs))


if __name__ == "__main__":
    main()
