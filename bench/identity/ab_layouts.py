"""Speed of two commits of the simulator, independent of code layout: instructions and
layout-averaged CPU time of ``ccfair-bench``.

    python bench/identity/ab_layouts.py OLD_REV NEW_REV [--config CONFIG.json]
        [--layouts 8] [--rounds 10] [--runs 41] [--callgrind [--diff K]] [--asm] [--aa] [--no-timing] [--builds DIR]

On this class of VM an edit that does not touch the code a run executes still moves its
CPU time by up to +-6 %, because every function after the edit moves (cache-line sets,
branch-predictor and uop-cache aliasing). One build per commit cannot tell that from a real
cost. This script measures two things that do not depend on where functions sit:

- ``--callgrind``: instructions executed (callgrind's Ir, whole process, ``repeat 1
  CONFIG``) of each commit's build, their ratio NEW/OLD and the instructions per data
  packet. Independent of machine load and of layout (the results are bit-identical, so
  both sides simulate the same packets); ``--diff K``: the K functions whose own
  instructions moved most (callgrind_annotate, inlined code counted in its caller).
- ``--asm``: the functions whose machine code differs between the two builds (``objdump
  -d``, addresses left out): where the same instructions run, a difference in CPU time can
  only come from where code sits, and one within a function that differs is not averaged
  by shuffling functions.
- CPU time over layouts: each commit is compiled once (the release profile, the
  workspace's rustflags) and its one LTO object linked ``--layouts`` times by lld with
  ``--shuffle-sections=.text*=SEED`` (rustc puts every function in its own section, so
  each seed is a random function order; the machine code is the same). A round runs
  every binary of both sides once, ``repeat RUNS CONFIG``, in a random order, and reads
  its CPU time (``perf stat``: cycles where the machine counts them, else task-clock).
  Figures: each layout's median over rounds, the ratio of the two sides' means of those
  (with a 90 % bootstrap interval over layouts: the layout, not the round, is the larger
  source of spread), and the per-round ratio of the sides' geometric means over layouts
  (median and range over rounds: load drifts hit both sides of a round alike).

OLD_REV equal to NEW_REV is the method's A/A test: the two sides get different seeds;
``--aa`` runs that test in the same rounds, a third side of OLD's build with other seeds
(AA/OLD beside NEW/OLD, the same load for both).
Builds are kept in ``--builds`` (one directory per commit; a commit is checked out into a
temporary git worktree, built with its own target directory, and the worktree removed).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shlex
import shutil
import statistics as st
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_BUILDS = Path(tempfile.gettempdir()) / "ccfair-ab-layouts"
BOOTSTRAP_DRAWS = 2000


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()


def build(rev: str, builds: Path) -> Path:
    """Compile ``rev``'s ccfair-bench once (kept across calls); returns its build directory,
    holding ``link.txt`` (rustc's link command) and ``default`` (the binary as linked)."""
    commit = git("rev-parse", "--verify", f"{rev}^{{commit}}")
    d = builds / commit[:12]
    if (d / "link.txt").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    wt = Path(tempfile.mkdtemp(prefix="ab-layouts-src-"))
    env = {k: v for k, v in os.environ.items() if k not in ("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS")}
    env["CARGO_TARGET_DIR"] = str(d / "target")
    try:
        git("worktree", "add", "--detach", str(wt), commit)
        print(f"building {rev} ({commit[:12]}) ...", file=sys.stderr, flush=True)
        out = subprocess.run(
            "nice -n 15 cargo rustc --release -q -p ccfair-bench --bin ccfair-bench -- -C save-temps --print link-args".split(),
            cwd=wt,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        git("worktree", "remove", "--force", str(wt))
    line = next((ln for ln in out.splitlines() if '"-o"' in ln), None)
    if line is None:  # cargo found the binary fresh and did not link: no command to reuse
        sys.exit(f"error: no link command from cargo for {rev}; remove {d} and run again")
    shutil.copy(d / "target" / "release" / "ccfair-bench", d / "default")
    (d / "link.txt").write_text(line + "\n")
    return d


def layout(d: Path, seed: int) -> Path:
    """The build of ``d`` linked with its functions in the order of ``seed`` (lld
    ``--shuffle-sections``; seed 0 would mean a random seed, so seeds start at 1)."""
    out = d / f"layout-{seed}"
    if out.exists():
        return out
    words = shlex.split((d / "link.txt").read_text())
    env = dict(os.environ)
    while "=" in words[0] and not words[0].startswith("-"):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    words[words.index("-o") + 1] = str(out)
    subprocess.run([*words, f"-Wl,--shuffle-sections=.text*={seed}"], env=env, check=True)
    return out


def bench_args(config: str | None, runs: int) -> list[str]:
    return ["repeat", str(runs), *([config] if config else [])]


def callgrind(binary: Path, config: str | None, out: Path) -> tuple[int, int]:
    """(instructions of the whole process, data packets) of ``repeat 1 CONFIG``; callgrind's
    output in ``out``."""
    r = subprocess.run(
        ["nice", "-n", "15", "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(binary), *bench_args(config, 1)],
        capture_output=True,
        text=True,
        check=True,
    )
    totals = re.search(r"^totals:\s+(\d+)", out.read_text(), re.M)
    pkts = re.search(r"data pkts (\d+)", r.stdout)
    if not totals or not pkts:
        sys.exit(f"error: no totals or 'data pkts' from callgrind of {binary}")
    return int(totals.group(1)), int(pkts.group(1))


def by_function(out: Path) -> dict[str, int]:
    """Instructions of each function itself (inlined code counts in its caller)."""
    ann = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--threshold=100", str(out)], capture_output=True, text=True, check=True
    ).stdout
    fns: dict[str, int] = {}
    for line in ann.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$", line)
        if m and m.group(2) != "PROGRAM TOTALS":
            name = re.sub(r"^\?\?\?:| \[.*\]$", "", m.group(2))
            fns[name] = fns.get(name, 0) + int(m.group(1).replace(",", ""))
    return fns


def instructions(dirs: dict[str, Path], revs: dict[str, str], config: str | None, diff: int) -> None:
    """Ir of both builds, their ratio and (``diff`` > 0) the functions whose Ir moved most."""
    with tempfile.TemporaryDirectory() as tmp:
        ir, outs = {}, {}
        for s, d in dirs.items():
            outs[s] = Path(tmp) / f"{s}.out"
            ir[s] = callgrind(d / "default", config, outs[s])
            print(f"{s} {revs[s]}: Ir {ir[s][0]:,}  data pkts {ir[s][1]:,}  Ir per data packet {ir[s][0] / ir[s][1]:.1f}", flush=True)
        same = "same" if ir["old"][1] == ir["new"][1] else "DIFFERENT"
        print(f"Ir ratio NEW/OLD {ir['new'][0] / ir['old'][0]:.4f}  (data packets {same})")
        if diff:
            fo, fn = by_function(outs["old"]), by_function(outs["new"])
            moved = sorted(set(fo) | set(fn), key=lambda f: -abs(fn.get(f, 0) - fo.get(f, 0)))[:diff]
            for f in moved:
                print(f"  {fn.get(f, 0) - fo.get(f, 0):+15,}  old {fo.get(f, 0):>14,}  new {fn.get(f, 0):>14,}  {f}")


def machine_code(binary: Path) -> dict[str, list[str]]:
    """Each function's instructions (``objdump -d``), addresses and symbol hashes left out, so
    that two builds compare equal where only a function's place differs."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", str(binary)], capture_output=True, text=True, check=True)
    fns: dict[str, list[str]] = {}
    body: list[str] = []
    for line in out.stdout.splitlines():
        head = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if head:
            body = fns.setdefault(re.sub(r"::h[0-9a-f]{16}$", "", head.group(1)), [])
        elif ":" in line:
            ins = line.split(":", 1)[1]
            ins = re.sub(r"\b[0-9a-f]{4,} <", "<", ins)  # call and jump targets
            ins = re.sub(r"::h[0-9a-f]{16}|\+0x[0-9a-f]+>|#.*$", "", ins)
            body.append(re.sub(r"-?0x[0-9a-f]+\(%rip\)", "X(%rip)", ins).strip())
    return fns


def asm_diff(dirs: dict[str, Path]) -> None:
    """The functions whose machine code differs between the two builds."""
    old, new = machine_code(dirs["old"] / "default"), machine_code(dirs["new"] / "default")
    moved = sorted(f for f in set(old) & set(new) if old[f] != new[f])
    print(
        f"machine code: {len(set(old) & set(new)) - len(moved)} functions the same, {len(moved)} differ, "
        f"{len(set(old) - set(new))} only in OLD, {len(set(new) - set(old))} only in NEW"
    )
    for f in moved:
        print(f"  {len(old[f]):6} -> {len(new[f]):6} instructions  {f}")


def perf_event() -> str:
    """cycles where the machine counts them (not in most VMs), else task-clock."""
    r = subprocess.run(["perf", "stat", "-x,", "-e", "cycles", "true"], capture_output=True, text=True)
    return "task-clock" if r.returncode or "<not" in r.stderr else "cycles"


def cpu(binary: Path, config: str | None, runs: int, event: str) -> float:
    """``event`` per run (ms of task-clock or millions of cycles) of ``repeat RUNS CONFIG``."""
    r = subprocess.run(
        ["perf", "stat", "-x,", "-e", event, str(binary), *bench_args(config, runs)], capture_output=True, text=True, check=True
    )
    value = next(float(ln.split(",")[0]) for ln in r.stderr.splitlines() if f",{event}," in ln)
    return value / runs / (1e6 if event == "cycles" else 1.0)


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def geomean(xs: list[float]) -> float:
    return st.geometric_mean(xs)


def summary(med: dict[str, list[float]], per_round: dict[str, list[float]], side: str) -> str:
    """``side`` against OLD: the ratio of the means of the per-layout medians (90 % bootstrap
    interval over layouts) and the per-round ratios' median and range."""
    x, y = med["old"], med[side]
    rng = random.Random(0)
    boot = sorted(st.mean(rng.choices(y, k=len(y))) / st.mean(rng.choices(x, k=len(x))) for _ in range(BOOTSTRAP_DRAWS))
    lo, hi = boot[int(0.05 * BOOTSTRAP_DRAWS)], boot[int(0.95 * BOOTSTRAP_DRAWS) - 1]
    pr = per_round[side]
    return (
        f"layout-mean ratio {side.upper()}/OLD {st.mean(y) / st.mean(x):.4f} (90 % bootstrap over layouts {lo:.4f}-{hi:.4f}); "
        f"per-round ratio median {st.median(pr):.4f} (range {min(pr):.4f}-{max(pr):.4f})"
    )


def timing(sides: dict[str, list[Path]], config: str | None, rounds: int, runs: int) -> None:
    event = perf_event()
    unit = "M cycles" if event == "cycles" else "ms CPU"
    samples: dict[tuple[str, int], list[float]] = {(s, i): [] for s, bins in sides.items() for i in range(len(bins))}
    others = [s for s in sides if s != "old"]
    per_round: dict[str, list[float]] = {s: [] for s in others}
    loads = [load()]
    for r in range(rounds):
        order = [(s, i) for s, bins in sides.items() for i in range(len(bins))]
        random.Random(r).shuffle(order)
        got: dict[tuple[str, int], float] = {}
        for s, i in order:
            got[(s, i)] = cpu(sides[s][i], config, runs, event)
            samples[(s, i)].append(got[(s, i)])
        means = {s: geomean([got[(s, i)] for i in range(len(bins))]) for s, bins in sides.items()}
        for s in others:
            per_round[s].append(means[s] / means["old"])
        loads.append(load())
        print(
            f"round {r + 1}: "
            + "  ".join(f"{s} {m:.3f}" for s, m in means.items())
            + f" {unit}/run (geomean over layouts)  "
            + "  ".join(f"{s}/old {per_round[s][-1]:.4f}" for s in others)
            + f"  load {loads[-1]:.2f}",
            flush=True,
        )
    med = {s: [st.median(samples[(s, i)]) for i in range(len(bins))] for s, bins in sides.items()}
    for s in sides:
        print(
            f"{s}: per-layout median {unit}/run: "
            + " ".join(f"{x:.3f}" for x in med[s])
            + f"  (spread max/min {max(med[s]) / min(med[s]):.3f})"
        )
    print(f"layouts {len(sides['old'])} per side, rounds {rounds}, repeat {runs}, {event}, load average {min(loads):.2f}-{max(loads):.2f}")
    for s in others:
        print(summary(med, per_round, s))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--config", help="RunConfig JSON (default: the bench's S0 base case)")
    ap.add_argument("--layouts", type=int, default=8, help="function orders per commit (default 8)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--runs", type=int, default=41, help="runs per measurement: `repeat RUNS` (default 41)")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions (callgrind) of both builds")
    ap.add_argument("--diff", type=int, default=0, metavar="K", help="with --callgrind: the K functions whose instructions moved most")
    ap.add_argument("--asm", action="store_true", help="list the functions whose machine code differs (objdump)")
    ap.add_argument("--aa", action="store_true", help="a third side in the same rounds: OLD with other seeds (A/A)")
    ap.add_argument("--no-timing", action="store_true", help="no CPU-time rounds")
    ap.add_argument("--builds", type=Path, default=DEFAULT_BUILDS, help=f"build cache (default {DEFAULT_BUILDS})")
    a = ap.parse_args()
    config = str(Path(a.config).resolve()) if a.config else None
    dirs = {"old": build(a.old, a.builds), "new": build(a.new, a.builds)}
    if a.asm:
        asm_diff(dirs)
    if a.callgrind:
        instructions(dirs, {"old": a.old, "new": a.new}, config, a.diff)
    if not a.no_timing:
        n = a.layouts
        sides = {"old": [layout(dirs["old"], 1 + i) for i in range(n)], "new": [layout(dirs["new"], 1 + n + i) for i in range(n)]}
        if a.aa:
            sides["aa"] = [layout(dirs["old"], 1 + 2 * n + i) for i in range(n)]
        timing(sides, config, a.rounds, a.runs)


if __name__ == "__main__":
    main()
