"""Import S0's stored testbed runs into the fidelity store (data/fidelity/kernel/s0.jsonl).

    python3 bench/fidelity_import_s0.py [--from bench/data/realism-testbed-2026-11-25-frames.jsonl]

The runs were collected with `python3 bench/realism_calibration.py collect --points s0`
(5 runs per point, then 5 more: `--reps 10`) on 2026-11-25 with the testbed's current
frame accounting (docs/fidelity.md). Each is the same experiment as the point of
data/fidelity/points/s0.toml of the same name (checked: the spec's fields are compared
before writing); the line keeps the original command and file in `imported_from`.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

from ccfair.fidelity.collect import host_facts
from ccfair.fidelity.points import append_run, load_set, read_runs, spec_sha
from ccfair.spec import Spec

ROOT = Path(__file__).resolve().parent.parent
ORIGINAL = "python3 bench/realism_calibration.py collect --points s0 --reps 10 --jobs 3"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="src", default=str(ROOT / "bench/data/realism-testbed-2026-11-25-frames.jsonl"))
    ap.add_argument("--data", default=str(ROOT / "data/fidelity"))
    args = ap.parse_args()
    ps = load_set("s0", Path(args.data))
    by_id = {p.id: p for p in ps.points}
    have = {(r["point"], r["seed"]) for r in read_runs(ps.kernel_path)}
    src = Path(args.src)
    n = 0
    for line in src.read_text().splitlines():
        old = json.loads(line)
        point = by_id[f"{old['point']} BDP"]
        if (point.id, old["seed"]) in have:
            continue
        raw = point.raw()
        spec, s = Spec.from_dict(raw), old["summary"]
        if [f.cca for _, _, f in spec.expand_flows()] != [f["cca"] for f in s["flows"]] or s["duration_s"] != spec.duration / 1e9:
            raise SystemExit(f"{old['point']} seed {old['seed']}: the stored run is not the point's experiment")
        before = {"load_before": [float(x) for x in old["load"]], "live_testbed_runs_before": None}
        host = host_facts(s, before)
        host["load_after"] = None
        append_run(
            ps.kernel_path,
            {
                "set": "s0",
                "point": point.id,
                "seed": old["seed"],
                "spec_sha": spec_sha(raw),
                "spec": raw,
                "command": shlex.join(point.command(old["seed"])),
                "kernel": s["testbed"]["kernel"],
                "started_utc": None,
                "wall_s": s.get("sim_wall_s"),
                "host": host,
                "imported_from": {"file": str(src.relative_to(ROOT)), "command": ORIGINAL},
                "summary": s,
            },
        )
        n += 1
    print(f"imported {n} runs into {ps.kernel_path}")


if __name__ == "__main__":
    main()
