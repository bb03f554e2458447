"""Kill -9 a testbed run at random moments, then `ccfair testbed clean`: count what is left.

The acceptance: 20 random kills -- of the whole process group, of the main
process only (its bottleneck and agents live on as orphans), or of the main process
during set-up (namespaces half built) -- each followed by `ccfair testbed clean`,
must leave 0 namespaces, links, qdiscs, rules and processes of the killed run.

Counted after each clean, for the killed run's id only (on a shared machine other
sessions' runs come and go, and their own kill tests leave dead runs for a while):
  namespaces  ``ccf-ID-*`` network namespaces
  links       ``ccf-ID-*`` links in the root namespace
  qdiscs      root-namespace qdiscs on those links, or on non-ccf links beyond those before the trials
  rules       ``ip rule`` lines beyond those before the trials, plus the nftables table ``ccf_ID``
  processes   processes of the killed run's session (it runs with start_new_session),
              plus the processes its state file recorded, still running (zombies, which hold
              nothing but a pid until init reaps them, are not counted)
  files       /run/ccfair/ID.json, ID.tmp, ID/

Usage (root):  .venv/bin/python bench/testbed_kill.py [--trials 20] [--seed 1] [--example examples/parking-lot.toml]
Prints one table row per trial and a total line (markdown), as in docs/testbed.md.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from ccfair.testbed import netns
from common import ROOT, session_processes

CCFAIR = [sys.executable, "-m", "ccfair"]
RUN = [
    "run",
    str(ROOT / "examples" / "s0-cubic-vs-bbr.toml"),
    "--backend",
    "testbed",
    "--set",
    "duration=6s",
    "--set",
    "window.start=2s",
    "--set",
    "window.end=6s",
    "--set",
    "flows.1.start=1s",
]
MODES = ("group", "main", "setup")


def run_of(owner: int) -> dict | None:
    """The state of the run whose main process is ``owner`` (None before it wrote one)."""
    for rid in netns._dead_run_ids():
        st = netns._state(rid)
        if st is not None and st["owner"][0] == owner:
            return st
    return None


def lines(*cmd: str) -> list[str]:
    return subprocess.run(cmd, check=False, capture_output=True, text=True).stdout.splitlines()


def leftovers(rid: str | None, sid: int, recorded: list[list[int]]) -> dict[str, int]:
    """What is left of run ``rid`` (the killed one; None: killed before it wrote its state
    file, before which it creates nothing). Only this run's things are counted: on a shared
    machine other sessions' runs come and go (their own kill tests leave dead runs too)."""

    def mine(name: str) -> bool:
        return rid is not None and netns.run_id_of(name) == rid

    devs = [ln.split(" dev ", 1)[1].split()[0] for ln in lines("tc", "qdisc", "show") if " dev " in ln]
    procs = {p for p in session_processes(sid) | {pid for pid, start in recorded if netns._alive(pid, start)} if netns._running(p)}
    return {
        "namespaces": sum(mine(n) for n in netns.list_namespaces()),
        "links": sum(mine(n) for n in netns.list_links()),
        "qdiscs": sum(mine(d) for d in devs) + max(0, sum(not d.startswith("ccf") for d in devs) - BASE["qdiscs"]),
        "rules": max(0, len(lines("ip", "rule", "list")) - BASE["rules"])
        + sum(t == f"{netns.HOST_TABLE_PREFIX}{rid}" for t in netns.host_tables()),
        "processes": len(procs),
        "files": sum(p.exists() for p in netns._run_files(rid)) if rid else 0,
    }


def trial(rng: random.Random, mode: str, env: dict[str, str]) -> dict:
    p = subprocess.Popen(CCFAIR + RUN, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    t0 = time.monotonic()
    st = None
    if mode == "setup":
        while time.monotonic() - t0 < 60 and p.poll() is None and (st := run_of(p.pid)) is None:
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.15))  # from the state file on: namespaces, veths, then the bottleneck and agents
    else:
        deadline = t0 + rng.uniform(2.0, 9.0)  # the 6 s run starts after ~1.5-3 s of start-up on a loaded machine
        while time.monotonic() < deadline and p.poll() is None:
            st = run_of(p.pid) or st
            time.sleep(0.02)
    st = run_of(p.pid) or st
    rid = st["id"] if st else None
    procs = len((run_of(p.pid) or st or {}).get("processes", []))
    phase = f"{sum(netns.run_id_of(n) == rid for n in netns.list_namespaces())} ns, {procs} procs" if rid else "no state yet"
    if p.poll() is None:
        if mode == "group":
            os.killpg(p.pid, signal.SIGKILL)
        else:
            os.kill(p.pid, signal.SIGKILL)
    p.wait()
    killed_at = time.monotonic() - t0
    recorded = (st or {}).get("processes", [])
    before = leftovers(rid, p.pid, recorded)
    clean = subprocess.run(CCFAIR + ["testbed", "clean"], check=False, capture_output=True, text=True, env=env)
    after = leftovers(rid, p.pid, recorded)
    if any(after.values()):  # say what the clean did and what is left, for the record
        sys.stderr.write(
            f"trial {rid}: clean rc {clean.returncode}\n{clean.stdout}{clean.stderr}"
            f"namespaces now: {netns.list_namespaces()}\nlinks now: {netns.list_links()}\n"
            f"state: {sorted(p.name for p in netns.STATE_DIR.iterdir())}\n"
        )
    return {
        "mode": mode,
        "at_s": killed_at,
        "rid": rid or "-",
        "phase": phase,
        "rc": p.returncode,
        "clean_rc": clean.returncode,
        "before": before,
        "after": after,
    }


BASE: dict[str, int] = {}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--modes", default=",".join(MODES), help="kill modes to cycle through (group,main,setup)")
    ap.add_argument("--example", type=Path, default=None, help="the experiment file to run (default: examples/s0-cubic-vs-bbr.toml)")
    args = ap.parse_args()
    if args.example is not None:
        RUN[1] = str(args.example.resolve())
    if os.geteuid() != 0:
        print("needs root", file=sys.stderr)
        return 2
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    subprocess.run(CCFAIR + ["testbed", "clean"], check=False, capture_output=True, env=env)
    devs = [ln.split(" dev ", 1)[1].split()[0] for ln in lines("tc", "qdisc", "show") if " dev " in ln]
    BASE.update(qdiscs=sum(not d.startswith("ccf") for d in devs), rules=len(lines("ip", "rule", "list")))
    rng = random.Random(args.seed)
    keys = ("namespaces", "links", "qdiscs", "rules", "processes", "files")
    print("| # | kill | at (s) | run | built | left before clean (ns/links/procs/files) | left after clean (" + "/".join(keys) + ") |")
    print("|---|---|---|---|---|---|---|")
    total = dict.fromkeys(keys, 0)
    for i in range(args.trials):
        modes = args.modes.split(",")
        r = trial(rng, modes[i % len(modes)], env)
        b, a = r["before"], r["after"]
        for k in keys:
            total[k] += max(0, a[k])
        print(
            f"| {i + 1} | {r['mode']} | {r['at_s']:.2f} | {r['rid']} | {r['phase']} | "
            f"{b['namespaces']}/{b['links']}/{b['processes']}/{b['files']} | {'/'.join(str(a[k]) for k in keys)} |",
            flush=True,
        )
    print(f"\ntotal left after clean over {args.trials} kills: " + ", ".join(f"{k} {v}" for k, v in total.items()))
    return 0 if not any(total.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
