"""kill -9 a testbed sweep's main process at random moments, resume it, and count what is lost,
duplicated or left behind (root).

Each kill: ``ccfair sweep FILE --backend testbed --jobs 2 --out DIR`` starts in its own session;
after a random time its main PID (only) gets SIGKILL. The pool's workers exit when the main
process has gone (executors._exit_with), their testbed children get SIGTERM (parent-death
signal, testbed/child.py) and clean up. Counted 20 s after the kill, for this sweep's runs only
(other people's testbed runs come and go on a shared host):

  processes   processes of the sweep's session still alive
  namespaces  ``ccf-ID-*`` namespaces of the testbed runs the sweep had live at the kill
  links       ``ccf-ID-*`` links of those runs in the root namespace
  files       their /run/ccfair state files

Then the same command runs to the end: every planned run stored once (runs table and batch
run ids), none failed.

Usage (root): python bench/testbed_sweep_kill.py FILE --out DIR [--kills 5] [--seed 1] [--attempts N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from common import ROOT, session_of, session_processes

sys.path.insert(0, str(ROOT / "python"))

from ccfair import store  # noqa: E402
from ccfair.testbed import netns  # noqa: E402


def runs_of_session(sid: int) -> set[str]:
    """Testbed run ids whose owner process is in the session."""
    out = set()
    for f in netns.STATE_DIR.glob("*.json"):
        try:
            owner = json.loads(f.read_text())["owner"][0]
        except (OSError, ValueError, KeyError):
            continue
        if session_of(owner) == sid:
            out.add(f.stem)
    return out


def leftovers(sid: int, rids: set[str]) -> dict[str, int]:
    return {
        "processes": len(session_processes(sid)),
        "namespaces": sum(netns.run_id_of(n) in rids for n in netns.list_namespaces()),
        "links": sum(netns.run_id_of(n) in rids for n in netns.list_links()),
        "files": sum(p.exists() for r in rids for p in netns._run_files(r)),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--out", required=True)
    ap.add_argument("--kills", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--attempts", type=int, default=None, help="--testbed-attempts of the sweep")
    ap.add_argument("--min-delay", type=float, default=5.0)
    ap.add_argument("--max-delay", type=float, default=90.0)
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    cmd = [sys.executable, "-m", "ccfair", "sweep", args.file, "--backend", "testbed", "--jobs", str(args.jobs), "--out", args.out]
    if args.attempts:
        cmd += ["--testbed-attempts", str(args.attempts)]
    rng = random.Random(args.seed)
    out = Path(args.out)
    print(
        "| # | killed at (s) | stored before | live testbed runs of the sweep | stored after | left 20 s later (processes/namespaces/links/files) |"
    )
    print("|---|---|---|---|---|---|")
    bad = 0
    for i in range(args.kills):
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        delay = rng.uniform(args.min_delay, args.max_delay)
        deadline = time.monotonic() + delay
        rids: set[str] = set()
        while time.monotonic() < deadline and p.poll() is None:
            rids |= runs_of_session(p.pid)
            time.sleep(0.2)
        stored = len(store.finished_runs(out)) if out.exists() else 0
        live = runs_of_session(p.pid)
        rids |= live
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
        p.wait()
        time.sleep(20.0)
        left = leftovers(p.pid, rids)
        bad += sum(left.values())
        after = len(store.finished_runs(out)) if out.exists() else 0
        print(
            f"| {i + 1} | {delay:.1f} | {stored} | {len(live)} ({', '.join(sorted(live)) or '-'}) | {after} | "
            f"{left['processes']}/{left['namespaces']}/{left['links']}/{left['files']} |",
            flush=True,
        )
    t0 = time.monotonic()
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    print(
        f"\nresume: exit {res.returncode} in {time.monotonic() - t0:.0f} s: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else ''}"
    )
    meta = json.loads((out / store.SWEEP_JSON).read_text())
    planned = meta["runs"]
    batch_ids = [
        rid
        for b in (out / store.BATCHES_DIR).iterdir()
        if not b.name.startswith(".")
        for rid in json.loads((b / "run_ids.json").read_text())
    ]
    runs = store.load_sweep(out)
    lost = sorted(set(planned) - set(batch_ids))
    dup = len(batch_ids) - len(set(batch_ids))
    print(
        f"planned {len(planned)}, stored {len(set(batch_ids))}, lost {len(lost)}, duplicated in batches {dup}, "
        f"runs table rows {len(runs)} (unique {runs['run_id'].nunique()}), failed files {len(list((out / store.FAILED_DIR).glob('*.json'))) if (out / store.FAILED_DIR).is_dir() else 0}"
    )
    return 0 if res.returncode == 0 and not lost and not dup and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
