"""Stop a simulator sweep with SIGINT, SIGTERM or SIGKILL of its main PID at random moments;
measure how fast it exits, what it leaves running, what it loses, and that resuming gives the
uninterrupted sweep's store.

Each trial starts ``ccfair sweep FILE --out DIR --jobs 2`` in its own session (so every
process it starts, the pool's fork server, resource tracker and workers included, carries
its session id), waits a random time, sends the signal to the main PID only, and records:

  exit_s      signal -> main process gone (SIGKILL: immediate by definition)
  left_5s     processes of the sweep's session still alive 5 s after the main process
              exited (zombies excluded)
  since_commit_s  age of the newest committed batch when the signal was sent (an upper
              bound on the finished runs a kill can lose is the workers' task time,
              executors.BATCH_BUDGET_S, plus one run)
  stored      runs committed at that moment

Trials share one store: the next trial resumes the previous one's. Whenever a trial's
sweep would complete, the script lets it (a plain resume) and compares the store with
an uninterrupted reference sweep (runs table and every stored run's row), then starts
over in a fresh directory.

Usage: python bench/sweep_stop.py [--trials 20] [--signals INT,TERM,KILL] [--seed 1]
Prints a markdown table per trial and totals (docs/sweeps.md, "Stopping a sweep").
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, session_processes

sys.path.insert(0, str(ROOT / "python"))

from ccfair import store  # noqa: E402
from ccfair.matrix import to_toml  # noqa: E402

#: CUBIC then BBR (1 s later) at 40 ms over 20 Mbit/s, 1 BDP of drop-tail buffer; 144 runs.
SWEEP = to_toml(
    {
        "name": "stop",
        "duration": "10s",
        "window": {"start": "4s", "end": "10s"},
        "seed": 5,
        "bottleneck": {"rate": "20Mbit", "buffer": "1bdp"},
        "flows": [{"cca": "cubic", "rtt": "40ms"}, {"cca": "bbr", "rtt": "40ms", "start": "1s"}],
        "sweep": {
            "repetitions": 12,
            "flip_order": True,
            "bottleneck.buffer": ["0.5bdp", "2bdp"],
            "pairs": [["cubic", "bbr"], ["reno", "cubic"], ["bbr", "bbr"]],
        },
    }
)


def newest_commit(out: Path) -> float | None:
    b = out / "batches"
    if not b.is_dir():
        return None
    times = [p.stat().st_mtime for p in b.iterdir() if not p.name.startswith(".")]
    return max(times) if times else None


def sweep_cmd(path: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "ccfair", "sweep", str(path), "--out", str(out), "--jobs", "2"]


def frames_equal(a: Path, b: Path) -> bool:
    import pandas as pd

    ra, rb = store.load_sweep(a), store.load_sweep(b)
    try:
        pd.testing.assert_frame_equal(ra, rb)
        pd.testing.assert_frame_equal(store.load_sweep(a, "flows"), store.load_sweep(b, "flows"))
    except AssertionError:
        return False
    return bool(ra["run_id"].is_unique)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20, help="trials per signal")
    ap.add_argument("--signals", default="INT,TERM,KILL")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-delay", type=float, default=12.0, help="latest moment of a signal after the start, s")
    args = ap.parse_args()
    # A background job of a non-interactive shell starts with SIGINT ignored, and an ignored
    # signal stays ignored across exec: the sweeps would inherit it. A handler does not.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="ccfair-sweep-stop-"))
    path = tmp / "stop.toml"
    path.write_text(SWEEP)
    ref = tmp / "reference"
    t = time.monotonic()
    subprocess.run(sweep_cmd(path, ref), env=env, check=True, capture_output=True)
    full_s = time.monotonic() - t
    total = len(store.finished_runs(ref))
    print(f"reference sweep: {total} runs, {full_s:.1f} s uninterrupted\n")
    sigs = [getattr(signal, f"SIG{s}") for s in args.signals.split(",")]
    order = [s for s in sigs for _ in range(args.trials)]
    rng.shuffle(order)
    attempts_left = 4 * len(order)  # a trial whose sweep finishes first is retried, within bounds
    print("| # | signal | at (s) | stored at signal | newest commit age (s) | exit (s) | rc | left after 5 s |")
    print("|---|---|---|---|---|---|---|---|")
    results = []
    out_n = 0
    out = tmp / f"out{out_n}"
    compared = mismatched = 0
    i = -1
    while order and attempts_left > 0:
        sig = order.pop(0)
        attempts_left -= 1
        i += 1
        if len(store.finished_runs(out)) == total if out.exists() else False:
            compared += 1
            mismatched += not frames_equal(out, ref)
            out_n += 1
            out = tmp / f"out{out_n}"
        p = subprocess.Popen(sweep_cmd(path, out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        delay = rng.uniform(0.3, min(args.max_delay, 0.9 * full_s))
        deadline = time.monotonic() + delay
        while time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.01)
        if p.poll() is not None:  # finished before the signal: a completed resume
            print(
                f"| {i + 1} | {signal.Signals(sig).name} | - | finished before the signal (rc {p.returncode}); retried | | | | |",
                flush=True,
            )
            order.append(sig)
            continue
        stored = len(store.finished_runs(out)) if out.exists() else 0
        newest = newest_commit(out) if out.exists() else None
        age = time.time() - newest if newest is not None else None
        t_sig = time.monotonic()
        os.kill(p.pid, sig)
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        exit_s = time.monotonic() - t_sig
        time.sleep(5.0)
        left = session_processes(p.pid)
        for pid in left:  # leave nothing for the next trial
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        results.append((sig, exit_s, len(left)))
        print(
            f"| {i + 1} | {signal.Signals(sig).name} | {delay:.2f} | {stored} | {'-' if age is None else f'{age:.2f}'} | "
            f"{exit_s:.2f} | {p.returncode} | {len(left)} |",
            flush=True,
        )
    # finish the last store and compare it too
    subprocess.run(sweep_cmd(path, out), env=env, check=True, capture_output=True)
    compared += 1
    mismatched += not frames_equal(out, ref)
    print()
    for sig in sigs:
        rs = [r for r in results if r[0] == sig]
        if rs:
            ex = sorted(r[1] for r in rs)
            print(
                f"{signal.Signals(sig).name}: {len(rs)} trials, exit max {ex[-1]:.2f} s, median {ex[len(ex) // 2]:.2f} s, "
                f"processes left after 5 s: {sum(r[2] for r in rs)}"
            )
    print(f"resumed stores compared with the uninterrupted sweep: {compared}, different: {mismatched}")
    shutil.rmtree(tmp, ignore_errors=True)
    if order:
        print(f"not signalled (attempts exhausted): {len(order)}")
    return 0 if not order and not mismatched and all(r[1] <= 5.0 and r[2] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
