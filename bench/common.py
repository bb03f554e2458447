"""What the bench scripts share: the checkout's root, one ``ccfair`` command in a child process
with its JSON output, and the processes of a session (the kill benchmarks count what is left).

A script in bench/ imports it as ``common`` (its own directory is on ``sys.path``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def table_header(*columns: str) -> None:
    """Print the head of a Markdown table: the column names and the rule under them."""
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))


def ccfair_json(args: list[str]) -> tuple[dict[str, Any] | None, str]:
    """``python -m ccfair ARGS`` (a command given ``--json``): (its output, "") or, when it
    fails, (None, the end of its stderr)."""
    p = subprocess.run([sys.executable, "-m", "ccfair", *args], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()[-300:]
    return json.loads(p.stdout), ""


def session_of(pid: int) -> int | None:
    """The session id of process ``pid``; None once it is gone or a zombie (/proc/PID/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return None if fields[0] == "Z" else int(fields[3])
    except (OSError, IndexError, ValueError):
        return None


def session_processes(sid: int) -> set[int]:
    """The live processes of session ``sid``."""
    return {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and session_of(int(p.name)) == sid}


def fidelity_outliers(points: list[dict[str, Any]]) -> tuple[int, int]:
    """Points of a fidelity comparison where the two sides disagree on utilisation and on mean
    queue (the criteria of ccfair.fidelity.compare.outside)."""
    from ccfair.fidelity.compare import outside

    util_out, queue_out = outside(points)
    return len(util_out), len(queue_out)


def fidelity_todo(
    sets: list[str] | None, data: Path, only: list[str] | None = None, started_after: str | None = None, started_before: str | None = None
) -> list[tuple[Any, list[dict[str, Any]]]]:
    """The fidelity points of ``sets`` (default s0 and map) that have kernel runs, each with the
    runs that give its figure (ccfair.fidelity.points.select_runs); ``only``: these point ids;
    ``started_after`` / ``started_before`` (ISO UTC): only runs started later / earlier (``started_utc``)."""
    from ccfair.fidelity.points import load_set, runs_by_point, select_runs

    todo = []
    for name in sets or ["s0", "map"]:
        ps = load_set(name, data)
        runs, _ = runs_by_point(ps)
        for p in ps.points:
            mine = [r for r in runs[p.id] if _started_within(r, started_after, started_before)]
            if mine and (not only or p.id in only):
                todo.append((p, select_runs(p, mine, ps.runs)))
    return todo


def shift_group_rtts(spec: Any, cfg: dict[str, Any], offsets_us: tuple[float, float] | list[float]) -> None:
    """Add ``offsets_us`` (group A's, group B's; us) to the RTT of each flow of RunConfig ``cfg``
    built from ``spec``, by its flow group (the third and later groups take B's)."""
    for (group, _, _), fc in zip(spec.expand_flows(), cfg["flows"]):
        fc["rtt_ns"] += round(offsets_us[min(group, 1)] * 1e3)


def _started_within(run: dict[str, Any], after: str | None, before: str | None) -> bool:
    """Whether ``run`` started after ``after`` and before ``before`` (ISO UTC; None: no bound)."""
    t = run.get("started_utc", "")
    return (after is None or t > after) and (before is None or t < before)


def fidelity_points(todo: list[tuple[Any, list[dict[str, Any]]]], sims: list[dict[str, Any]], per_run: int) -> list[dict[str, Any]]:
    """ccfair.fidelity.compare's entry of each point of ``todo``, its kernel runs next to ``sims``:
    ``per_run`` simulator summaries per kernel run, in ``todo``'s order."""
    from ccfair.fidelity.compare import _point_entry, _side

    points, i = [], 0
    for p, kr in todo:
        spec, n = p.spec(), len(kr) * per_run
        kern, sim = _side(spec, [r["summary"] for r in kr]), _side(spec, sims[i : i + n])
        i += n
        points.append(_point_entry(p, kr, kern, sim))
    return points


def print_fidelity_totals(points: list[dict[str, Any]], what: str, path: str | None) -> None:
    """One line of ccfair.fidelity.compare's totals over ``points`` (``what`` after the point
    count), and the totals as JSON into ``path`` if given."""
    from ccfair.fidelity.compare import _totals

    out = _totals(points, {})
    util_out, queue_out = fidelity_outliers(points)
    print(
        f"{len(points)} points{what}: mean |diff| {out['mean_abs']:.4f}, worst {out['worst_abs']:.3f} ({out['worst_point']}), "
        f"spread ok {out['spread_ok_fraction']:.3f}, utilisation out by > 0.01 at {util_out}, queue out by > 10 % at {queue_out}; "
        + ", ".join(f"{s} {v['mean_abs']:.4f}" for s, v in out["sets"].items())
    )
    if path:
        Path(path).write_text(json.dumps(out, indent=1))


def scaled_host_noise(scale: float, only: str | None = None) -> dict[str, int]:
    """The per-flow RunConfig keys of ``noise = "host"`` (spec.py HOST_NOISE) with both means, or
    with ``only`` = "send" / "ack" the sender's / the ACKs' one, times ``scale``: a what-if on the
    simulator only."""
    from ccfair.spec import HOST_NOISE

    keys = {"send": ("host_jitter_ns",), "ack": ("ack_jitter_ns",)}.get(only or "", tuple(HOST_NOISE))
    return {k: round(v * scale) if k in keys else v for k, v in HOST_NOISE.items()}


def use_host_noise(noise: dict[str, int]) -> None:
    """Make ``noise = "host"`` mean ``noise`` in this process (a pool's initializer)."""
    from ccfair.spec import HOST_NOISE

    HOST_NOISE.update(noise)


def read_trace_pipe(out: Path, stop: threading.Event, tag: str) -> None:
    """Copy the lines of the kernel's trace pipe that contain ``tag`` (a BPF port's
    bpf_printk lines) to ``out`` until ``stop`` is set (run it in a daemon thread). Mounts tracefs
    at /sys/kernel/tracing first if it is not there (a fresh host: root, as the testbed)."""
    pipe_path = Path("/sys/kernel/tracing/trace_pipe")
    if not pipe_path.exists():
        print("mounting tracefs at /sys/kernel/tracing (for the BPF ports' bpf_printk lines)", file=sys.stderr)
        subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"], check=True)
    with open(pipe_path) as pipe, open(out, "w") as f:
        for line in pipe:
            if tag in line:
                f.write(line)
            if stop.is_set():
                return


def parse_trace(path: Path, prefix: str = "") -> list[tuple[float, str, list[int]]]:
    """The bpf_printk lines of a file written by :func:`read_trace_pipe`: (time s, tag, integer
    fields) for each line whose tag starts with ``prefix``."""
    ev = []
    for line in path.open():
        f = line.split()
        if "bpf_trace_printk:" not in f:
            continue
        i = f.index("bpf_trace_printk:")
        if f[i + 1].startswith(prefix):
            ev.append((float(f[i - 1].rstrip(":")), f[i + 1], [int(x) for x in f[i + 2 :]]))
    return ev


def build_traced_port(cca: str, cache: Path, defines: tuple[str, ...] = (), source: str | None = None) -> None:
    """The BPF port of ``cca`` built into the private BPF cache ``cache`` (CCFAIR_BPF_CACHE, set
    here for this process) with extra ``defines`` (e.g. ``-DLP_TRACE``) or from ``source`` (a
    traced copy of the port's text): the port's file and the shared cache stay untouched, so
    stored runs keep their port digest."""
    import os

    os.environ["CCFAIR_BPF_CACHE"] = str(cache)
    from ccfair.testbed import bpfcc

    bpfcc.build([cca])
    d = bpfcc.build_dir()
    src = bpfcc.ports()[cca]
    if source is not None:
        src = cache / f"{cca}_traced.bpf.c"
        src.write_text(source)
    cmd = ["clang", *bpfcc.CLANG_FLAGS, *defines, "-I", str(d), "-I", str(bpfcc.SRC_DIR)]
    subprocess.run([*cmd, "-c", str(src), "-o", str(d / f"{cca}.bpf.o")], check=True)


def kernel_run_config(point: Any, rec: dict[str, Any], replay_stalls: bool = False) -> dict[str, Any]:
    """The RunConfig `ccfair fidelity` simulates for the kernel run ``rec`` of ``point``
    (compare.py `_sim_one`): its seed, measured flow starts and timestamp clock, and with
    ``replay_stalls`` its recorded stalls as the bottleneck's outages."""
    from ccfair.fidelity.compare import recorded_stalls, with_outages
    from ccfair.spec import Spec

    stalls = recorded_stalls(rec) if replay_stalls else None
    config = Spec.from_dict(with_outages(point.raw(), stalls) if stalls else point.raw()).to_run_config(rec["seed"])
    for fc, t in zip(config["flows"], rec["flow_start_s"]):
        fc["start_ns"], fc["start_jitter_ns"] = max(0, round(t * 1e9)), 0
    if rec.get("ts_epoch_ns") is not None:
        config["tcp_timestamp_epoch_ns"] = int(rec["ts_epoch_ns"])
    return config


def run_traced_bench(feature: str, config: dict[str, Any], out: Path) -> None:
    """``ccfair-bench json`` built with the cargo ``feature`` (its own target directory under
    target/) on ``config``: DIR/sim_config.json, the result in DIR/sim_result.json, the feature's
    trace (stderr) in DIR/sim_trace.txt."""
    root = Path(__file__).resolve().parents[1]
    target = root / "target" / feature
    cargo = ["cargo", "build", "--release", "-q", "-p", "ccfair-bench", "--features", feature, "--target-dir", str(target)]
    subprocess.run(["nice", "-n", "15", *cargo], check=True, cwd=root)
    (out / "sim_config.json").write_text(json.dumps(config))
    with open(out / "sim_trace.txt", "w") as err, open(out / "sim_result.json", "w") as res:
        subprocess.run([str(target / "release" / "ccfair-bench"), "json", str(out / "sim_config.json")], stdout=res, stderr=err, check=True)


def add_point_args(ap: argparse.ArgumentParser, default_set: str, default_out: str) -> None:
    """The options of a script that traces one fidelity point: its set, its id, the testbed
    seed, the fidelity data directory and the output directory."""
    ap.add_argument("--set", dest="set_name", default=default_set)
    ap.add_argument("--point")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--out", default=default_out)


def add_many_seeds_args(ap: argparse.ArgumentParser) -> None:
    """The options of a script that reruns fidelity point sets with K simulator seeds per
    kernel run (bench/fidelity_many_seeds.py and its what-ifs); each simulator run replays its
    kernel run's recorded stalls as `ccfair fidelity` does unless ``--no-replay-stalls``."""
    ap.add_argument("--set", dest="sets", action="append")
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--seeds", type=int, default=5, help="simulator seeds per kernel run")
    ap.add_argument("--seed-set", type=int, default=0, help="seeds s + 1000 (N + k): another draw")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--point", action="append", help="only these point ids")
    ap.add_argument("--started-after", metavar="UTC", help="only kernel runs started after this ISO time")
    ap.add_argument("--started-before", metavar="UTC", help="only kernel runs started before this ISO time")
    ap.add_argument(
        "--no-replay-stalls",
        dest="replay_stalls",
        action="store_false",
        help="the simulator's bottleneck without its kernel run's recorded stalls as outages (ccfair fidelity --no-replay-stalls)",
    )
    ap.add_argument("--out")
