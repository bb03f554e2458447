"""Command line: ``ccfair run``, ``ccfair check``, ``ccfair list``, ``ccfair sweep``, ``ccfair report``.

Bad input of any kind (experiment file, ``--set``, options) ends with exit
status 2 and one line ``error: <field>: <message>`` on stderr -- never a
traceback. A simulator failure exits with status 1, also as one line.

Start-up: this module (and every module defining a sub-command, e.g.
``ccfair.presets``) imports only typer, the standard library and light
ccfair modules at the top; each command imports what it needs (the spec and
pydantic, the simulator, pandas, pyarrow, matplotlib, rich) inside its
function. ``ccfair --help`` and ``import ccfair`` therefore never load pandas,
pyarrow or matplotlib (tests/test_startup.py checks ``sys.modules``).

Output: ``--json`` goes through :func:`ccfair.output.print_json` (plain
``json.dumps``, one document per line), tables through
:func:`ccfair.output.print_table` (natural width, never elided when piped).
"""

from __future__ import annotations

import gc
import json
import math
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional, cast

import typer

from ccfair.errors import SimulationError, SpecError
from ccfair.output import escape_controls, print_field, print_json, print_line, print_table, status, stderr_console
from ccfair.units import format_time

if TYPE_CHECKING:
    from rich.console import JustifyMethod

    from ccfair.spec import Spec

app = typer.Typer(
    name="ccfair",
    help="Measure fairness between congestion-control algorithms at a shared bottleneck.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain (click) help: the same text, without loading rich's markdown/syntax machinery
    # (~80 ms of `ccfair --help`), and without box drawing when piped.
    rich_markup_mode=None,
)
list_app = typer.Typer(help="List what the simulator supports.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(list_app, name="list")
from ccfair.presets import app as _preset_app  # noqa: E402

testbed_app = typer.Typer(help="Manage the testbed backend (network namespaces; root).", no_args_is_help=True)
app.add_typer(testbed_app, name="testbed")

app.add_typer(_preset_app, name="preset")
from ccfair.fidelity.cli import app as _fidelity_app  # noqa: E402

app.add_typer(_fidelity_app, name="fidelity")


#: Whether :func:`main` paused the garbage collector for start-up (the ``ccfair`` process only).
_gc_paused = False


def _print_version(value: bool) -> None:
    if value:
        from ccfair.provenance import version_line

        sys.stdout.write(version_line() + "\n")
        raise typer.Exit()


@app.callback()
def _command_starts(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print ccfair's version and git commit, then exit."),
    ] = False,
) -> None:
    # Start-up is over (see main): what it imported lives until exit, so it is frozen out of
    # the collector's traversals, and the collector resumes for the command's own work.
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        gc.enable()


#: Rows of the per-flow table printed before eliding (use --json / --out for all).
MAX_FLOW_ROWS = 40

SetOption = Annotated[
    Optional[list[str]],
    typer.Option(
        "--set",
        metavar="PATH=VALUE",
        help="Override a field of the file, e.g. --set bottleneck.buffer=8bdp --set flows.1.cca=reno. Repeatable.",
    ),
]
MaxMemoryOption = Annotated[
    Optional[str],
    typer.Option(
        "--max-memory",
        metavar="SIZE",
        help="Refuse runs projected to need more memory than SIZE (e.g. 16GB; default 4GiB). Same as --set limits.memory=SIZE.",
    ),
]
#: Where the runs of sweep, matrix and reproduce go (ccfair.executors).
JobsOption = Annotated[Optional[int], typer.Option("--jobs", "-j", help="Parallel runs (pool, local Dask). Default: CPU cores.")]
ExecutorOption = Annotated[str, typer.Option("--executor", help="inprocess, pool (local processes) or dask.")]
SchedulerOption = Annotated[
    Optional[str], typer.Option("--scheduler", metavar="ADDRESS", help="Dask scheduler address (else a local cluster).")
]
FileArg = Annotated[Path, typer.Argument(metavar="FILE", help="Experiment file (TOML).", show_default=False)]


def with_max_memory(overrides: list[str] | None, max_memory: str | None) -> list[str]:
    """``--max-memory SIZE`` as the override ``limits.memory=SIZE``."""
    return list(overrides or []) + ([f'limits.memory="{max_memory}"'] if max_memory is not None else [])


def name_with_overrides(name: Any, overrides: list[str]) -> Any:
    """The experiment's name with the ``--set`` overrides that change it appended, so a title
    never names what the run no longer is ("CUBIC vs BBR (--set flows.1.cca=reno)").
    Not for ``name=`` itself, resource limits or a non-text name (validation refuses it)."""
    changes = [o.strip() for o in overrides if not o.strip().startswith(("name=", "name =", "limits."))]
    if not changes or not isinstance(name, str) or any(o.partition("=")[0].strip() == "name" for o in overrides):
        return name
    return f"{name} (--set {' '.join(changes)})"


def load_spec(file: Path, overrides: list[str] | None, seed: int | None = None) -> Spec:
    """Read ``file``, apply ``--set`` overrides (and ``--seed``) to the raw dict, then validate."""
    from ccfair.spec import Spec
    from ccfair.spec_input import apply_overrides, load_toml

    raw = load_toml(file)
    raw.setdefault("name", file.stem)
    raw = apply_overrides(raw, overrides or [])
    raw["name"] = name_with_overrides(raw.get("name"), overrides or [])
    raw.pop("sweep", None)  # a sweep file's base experiment runs as is (`ccfair sweep` runs the grid)
    spec = Spec.from_dict(raw)
    if seed is not None:
        spec.to_run_config(seed)  # validates the seed (range), raising SpecError("seed", ...)
    for field, message in spec.warnings():
        sys.stderr.write(escape_controls(f"warning: {field}: {message}") + "\n")
    return spec


# ---------------------------------------------------------------- formatting


def fmt_rate(bps: float | None) -> str:
    """``6.52 Mbit/s`` style."""
    if bps is None or (isinstance(bps, float) and math.isnan(bps)):
        return "-"
    for unit, size in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= size:
            return f"{bps / size:.2f} {unit}"
    return f"{bps:.0f} bit/s"


def _fmt(x: float | None, spec: str, suffix: str = "") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:{spec}}{suffix}"


def _maxmin_line(summary: dict[str, Any]) -> str:
    """Each flow's throughput / max-min fair share (up to 6 flows, else the minimum)."""
    flows = summary["flows"]
    if len(flows) <= 6:
        return ", ".join(f"{f['name']} {_fmt(f.get('maxmin_share'), '.2f')}" for f in flows) + " (1 = its fair share)"
    return f"min {_fmt(summary.get('maxmin_share_min'), '.2f')} over {len(flows)} flows (1 = fair share)"


def fness_label(flows: list[dict[str, Any]]) -> str:
    """``fness (lab vs cp)``: fness is flow 0's share against flow 1's, named by their names."""
    if len(flows) != 2:
        return "fness"
    return f"fness ({flows[0]['name']} vs {flows[1]['name']})"


def flow_labels(config: dict[str, Any]) -> list[str]:
    """Each flow's CCA as shown: variant, given parameters and pacing (``cubic[beta=0.5]+pacing``)."""
    from ccfair import ccas

    return [ccas.label_of(f["cca"], f.get("cca_params"), bool(f.get("pacing"))) for f in config["flows"]]


def print_summary(summary: dict[str, Any], flows_table: Any, labels: list[str] | None = None) -> None:
    """Print the per-flow table (a DataFrame or a list of row dicts) and the run's fairness/performance numbers.

    ``labels``: each flow's CCA as shown (:func:`flow_labels`); default: its name, ``+pacing`` when paced."""
    from rich.table import Table

    from ccfair import ccas

    w = summary["window_s"]
    table = Table(title=summary["name"], title_justify="left")
    for col, justify in (
        ("Flow", "left"),
        ("CCA", "left"),
        ("Base RTT", "right"),
        ("Start", "right"),
        ("Throughput", "right"),
        ("Share", "right"),
        ("Retrans", "right"),
    ):
        table.add_column(col, justify=cast("JustifyMethod", justify))
    rows = flows_table.to_dict("records") if hasattr(flows_table, "to_dict") else list(flows_table)
    for i, r in enumerate(rows[:MAX_FLOW_ROWS]):
        cca = labels[i] if labels is not None else ccas.pacing_label(r["cca"], bool(r["pacing"]))
        table.add_row(
            str(r["name"]),
            cca,
            f"{r['rtt_ms']:g} ms",
            f"{r['start_s']:.3f} s",
            fmt_rate(r["throughput_bps"]),
            _fmt(r["share"] * 100 if r["share"] == r["share"] else None, ".1f", " %"),
            str(r["retransmissions"]),
        )
    if len(rows) > MAX_FLOW_ROWS:
        table.caption = f"... and {len(rows) - MAX_FLOW_ROWS} more flows (all of them: --json or --out)"
    print_table(table)

    q = summary["queue_delay_ms"]
    fness = summary["fness"]
    lines = [
        ("run", f"seed {summary['seed']}, analysis window {w['start']:g}-{w['end']:g} s"),
        ("JFI", _fmt(summary["jfi"], ".3f")),
        (fness_label(summary["flows"]), _fmt(fness, "+.3f") if fness is not None else "- (needs exactly two flows)"),
        ("max-min share", _maxmin_line(summary)),
        ("utilization", _fmt(None if summary["utilization"] is None else summary["utilization"] * 100, ".1f", " %")),
        ("queueing delay", f"mean {_fmt(q['mean'], '.2f', ' ms')}, p99 {_fmt(q['p99'], '.2f', ' ms')}"),
        ("mean queue", _fmt(summary.get("queue_packets_mean"), ".1f", " packets")),
        *_links_lines(summary),
        _wall_line(summary),
    ]
    for label, value in lines:
        print_field(label, value)


def _links_lines(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """One line per link of a topology run (a dumbbell's one link is the lines above)."""
    links = summary.get("links") or []
    if len(links) == 1 and links[0]["name"] == "bottleneck":
        return []
    return [
        (
            f"link {lk['name']}",
            f"utilisation {_fmt(lk['utilisation'] * 100, '.1f', ' %')}, mean queue {_fmt(lk['mean_queue_packets'], '.1f')} packets, "
            f"{lk['drops']} drops, {lk['marks']} marks" + (f", {lk['loss_drops']} random losses" if lk["loss_drops"] else ""),
        )
        for lk in links
    ]


def _wall_line(summary: dict[str, Any]) -> tuple[str, str]:
    """The wall-time line: the simulator's speed, or a testbed run's real time."""
    if summary.get("backend") == "testbed":
        return ("testbed wall time", f"{(summary.get('sim_wall_s') or 0.0):.1f} s")
    return ("sim wall time", _sim_speed(summary))


def _sim_speed(summary: dict[str, Any]) -> str:
    wall = summary.get("sim_wall_s") or 0.0
    pkts = summary.get("data_packets") or 0
    text = f"{wall * 1e3:.1f} ms"
    if wall > 0 and pkts:
        text += f" ({pkts / wall / 1e6:.2f} M data packets/s)"
    return text


# ---------------------------------------------------------------- commands


@app.command()
def run(
    file: FileArg,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed for this run (replaces the file's seed).")] = None,
    set_: SetOption = None,
    out: Annotated[Optional[Path], typer.Option("--out", metavar="DIR", help="Write Parquet tables and JSON into DIR.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")] = False,
    backend: Annotated[
        str,
        typer.Option("--backend", metavar="NAME", help="sim (the simulator) or testbed (real Linux TCP in network namespaces; root)."),
    ] = "sim",
    max_memory: MaxMemoryOption = None,
) -> None:
    """Run one experiment on the simulator (or the testbed) and report per-flow throughput and fairness."""
    from ccfair.api import run as run_experiment

    spec = load_spec(file, with_max_memory(set_, max_memory), seed)
    n_flows = sum(f.count for f in spec.flows)
    verb = "running on the testbed" if backend == "testbed" else "simulating"
    with status(f"{verb} {spec.name}: {format_time(spec.duration)}, {n_flows} flow(s) ..."):
        result = run_experiment(spec, seed=seed, backend=backend)
    if out is not None:
        result.to_parquet(out)
    if as_json:
        print_json(result.summary)
    else:
        cols = result.flow_columns()  # plain lists: no pandas for a printed summary
        print_summary(result.summary, [dict(zip(cols, row)) for row in zip(*cols.values())], flow_labels(result.config))
        if out is not None:
            print_field("results", str(out))


def _compare_rows(sim: dict[str, Any], tb: dict[str, Any], labels: list[str] | None = None) -> list[tuple[str, str, str]]:
    """(metric, simulator, testbed) rows for ``ccfair compare``; ``labels``: the flows' CCAs as shown (:func:`flow_labels`)."""

    from ccfair import ccas

    def pct(x: float | None) -> str:
        return _fmt(None if x is None else x * 100, ".1f", " %")

    rows: list[tuple[str, str, str]] = []
    for i, (fs, ft) in enumerate(zip(sim["flows"], tb["flows"])):
        label = f"{fs['name']} ({labels[i] if labels else ccas.pacing_label(fs['cca'], bool(fs.get('pacing')))})"
        rows.append((f"{label} throughput", fmt_rate(fs["throughput_bps"]), fmt_rate(ft["throughput_bps"])))
        rows.append((f"{label} share", pct(fs["share"]), pct(ft["share"])))
        rows.append((f"{label} max-min share", _fmt(fs.get("maxmin_share"), ".2f"), _fmt(ft.get("maxmin_share"), ".2f")))
        rows.append((f"{label} retransmissions", str(fs["retransmissions"]), str(ft["retransmissions"])))
    rows.append(("JFI", _fmt(sim["jfi"], ".3f"), _fmt(tb["jfi"], ".3f")))
    if sim["fness"] is not None:
        rows.append((fness_label(sim["flows"]), _fmt(sim["fness"], "+.3f"), _fmt(tb["fness"], "+.3f")))
    rows.append(("utilization", pct(sim["utilization"]), pct(tb["utilization"])))
    for k in ("mean", "p99"):
        rows.append((f"queueing delay {k}", _fmt(sim["queue_delay_ms"][k], ".2f", " ms"), _fmt(tb["queue_delay_ms"][k], ".2f", " ms")))
    rows.append(("mean queue", _fmt(sim["queue_packets_mean"], ".1f", " pkts"), _fmt(tb["queue_packets_mean"], ".1f", " pkts")))
    return rows


@app.command()
def compare(
    file: FileArg,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed for both runs (replaces the file's seed).")] = None,
    set_: SetOption = None,
    out: Annotated[Optional[Path], typer.Option("--out", metavar="DIR", help="Write both results into DIR/sim and DIR/testbed.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print both summaries as one JSON object.")] = False,
) -> None:
    """Run one experiment on the simulator and on the testbed; print the metrics side by side."""
    from ccfair.api import run as run_experiment
    from ccfair.testbed import check_available

    spec = load_spec(file, set_, seed)
    check_available(spec)  # fail before simulating if the testbed cannot run here
    with status(f"simulating {spec.name} ..."):
        sim = run_experiment(spec, seed=seed)
    with status(f"running {spec.name} on the testbed: {format_time(spec.duration)} ..."):
        tb = run_experiment(spec, seed=seed, backend="testbed")
    if out is not None:
        sim.to_parquet(out / "sim")
        tb.to_parquet(out / "testbed")
    if as_json:
        print_json({"sim": sim.summary, "testbed": tb.summary})
        return
    from rich.table import Table

    table = Table(title=f"{spec.name}: simulator vs testbed", title_justify="left")
    table.add_column("Metric")
    table.add_column("Simulator", justify="right")
    table.add_column("Testbed", justify="right")
    for row in _compare_rows(sim.summary, tb.summary, flow_labels(sim.config)):
        table.add_row(*row)
    print_table(table)
    t = tb.summary["testbed"]
    print_line(
        f"  testbed: kernel {t['kernel']}, base RTT {', '.join(f'{x:.3f}' for x in t['base_rtt_ms'])} ms (padded to the spec), "
        f"load {t['load_avg_1min']:.1f}"
    )


@app.command()
def check(
    file: FileArg,
    set_: SetOption = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed to resolve with.")] = None,
    max_memory: MaxMemoryOption = None,
    backend: Annotated[
        str, typer.Option("--backend", metavar="NAME", help="Check for this backend as `run` does: sim (default) or testbed.")
    ] = "sim",
) -> None:
    """Validate an experiment file (values and projected resources) and print the resolved simulator configuration (JSON).

    Gives the same verdict as `ccfair run` with the same options: what the backend cannot apply is refused here too.
    """
    from ccfair import profiles
    from ccfair.api import BACKENDS, check_resources

    if backend not in BACKENDS:
        raise SpecError("--backend", f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    spec = load_spec(file, with_max_memory(set_, max_memory), seed)
    profiles.check_backend(spec, backend)
    if backend == "testbed":
        from ccfair.testbed.runner import check_cca_choices

        check_cca_choices(spec)  # each flow's CCA: the host's module or a BPF port, with its parameters
    config = spec.to_run_config(seed)
    check_resources(config, spec)
    print_json(config, indent=2)


@app.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of the experiment file (every CCA and its parameters from the simulator's registry)."""
    from ccfair.schema import json_schema

    print_json(json_schema(), indent=2)


@app.command()
def sweep(
    file: FileArg,
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Sweep directory (results; resumes if it exists).")],
    jobs: JobsOption = None,
    executor: ExecutorOption = "pool",
    scheduler: SchedulerOption = None,
    set_: SetOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Expand and validate only; print the grid.")] = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="If another sweep is writing into DIR, wait for it (default: refuse, naming its PID).")
    ] = False,
    max_memory: MaxMemoryOption = None,
    backend: Annotated[
        str, typer.Option("--backend", help="sim (simulator), testbed (real kernels, root) or both (each run on both).")
    ] = "sim",
    testbed_attempts: Annotated[
        Optional[int],
        typer.Option(
            "--testbed-attempts",
            help="Attempts of a testbed run over the quality gate's limits before it is stored marked (default: docs/testbed.md).",
        ),
    ] = None,
    allow_other_build: Annotated[
        bool,
        typer.Option("--allow-other-build", help="Add runs to a DIR holding simulator runs of another simulator build (default: refuse)."),
    ] = False,
) -> None:
    """Run every experiment in the grid of a sweep file (its sweep table) and store the results in DIR.

    Finished runs are kept: re-running resumes a killed sweep, and a finished one does nothing.
    """
    from ccfair.executors import default_jobs, warm_up
    from ccfair.sweep import load_sweep_file

    _check_sweep_options(executor, jobs, scheduler, backend)
    set_ = with_max_memory(set_, max_memory)
    _stop_on_signals()
    if not dry_run:
        warm_up(executor)  # the pool's fork server imports its modules while the sweep is planned
    plan = load_sweep_file(file, set_, backend=backend)
    _announce_sweep(plan, backend)
    if dry_run:
        for a in plan.axes:
            print_line(f"  {a.name}: {', '.join(str(a.label(v)) for v in a.values)}", markup=False)
        return
    options = {"executor": executor, "jobs": jobs if jobs is not None else default_jobs(), "scheduler": scheduler}
    options["allow_other_build"] = allow_other_build
    _run_sweep(plan, file, out, options, set_, wait=wait, testbed_attempts=testbed_attempts)


def _check_sweep_options(executor: str, jobs: int | None, scheduler: str | None, backend: str) -> None:
    """``ccfair sweep``'s option values, each refused naming the option."""
    from ccfair.executors import check_options
    from ccfair.sweep import BACKENDS

    check_options(executor, jobs, scheduler)
    if backend not in BACKENDS:
        raise SpecError("--backend", f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")


def _announce_sweep(plan: Any, backend: str) -> None:
    """One line on stderr: the grid, its repetitions, orders and backends, and the number of runs."""
    axes = ", ".join(f"{a.name} ({len(a.values)})" for a in plan.axes) or "no axes"
    stderr_console().print(
        f"sweep {plan.name!r}: {plan.n_points} grid point(s) [{axes}] x {plan.repetitions} repetition(s)"
        + (" x 2 orders" if plan.flip_order else "")
        + (" x 2 backends" if backend == "both" else "")
        + f" = {len(plan.tasks)} runs"
        + (" on the testbed" if backend == "testbed" else ""),
        markup=False,
    )


def _run_sweep(
    plan: Any, file: Path, out: Path, options: dict[str, Any], set_: list[str] | None, wait: bool, testbed_attempts: int | None
) -> None:
    """Run a planned sweep into ``out`` with a progress display; an interrupt says how many runs are
    stored (exit 128 + signal), failed runs are a :class:`SimulationError` naming the first."""
    import time

    from ccfair import store
    from ccfair.progress import SweepProgress
    from ccfair.sweep import run_sweep

    executor, n_jobs, scheduler = options["executor"], options["jobs"], options["scheduler"]
    _err = stderr_console()
    source = file.read_text(encoding="utf-8")
    t0 = time.perf_counter()
    already = len(store.finished_runs(out) & {t.run_id for t in plan.tasks}) if out.is_dir() else 0
    where = f"{executor} x{n_jobs if executor != 'inprocess' else 1}" if not scheduler else f"dask {scheduler}"
    progress = SweepProgress(_err, len(plan.tasks), already, f"sweep {where}")
    try:
        with progress:
            outcome = run_sweep(
                plan,
                out,
                executor=executor,
                jobs=n_jobs,
                scheduler=scheduler,
                source=source,
                overrides=list(set_ or []),
                progress=progress.update,
                wait=wait,
                testbed_attempts=testbed_attempts,
                allow_other_build=options.get("allow_other_build", False),
            )
    except KeyboardInterrupt as e:
        stored = len(store.finished_runs(out) & {t.run_id for t in plan.tasks}) if out.is_dir() else 0
        _err.print(f"interrupted: {stored}/{len(plan.tasks)} runs stored in {out}; the same command resumes", markup=False)
        raise typer.Exit(128 + getattr(e, "signum", signal.SIGINT)) from None
    wall = time.perf_counter() - t0
    _err.print(
        f"{outcome.total} runs: {outcome.stored} new, {outcome.skipped} already stored, "
        f"{len(outcome.failed)} failed, {wall:.1f} s -> {outcome.directory}"
    )
    if outcome.failed:
        rid, err = next(iter(outcome.failed.items()))
        raise SimulationError(
            f"{len(outcome.failed)} run(s) failed (errors in {out}/failed/; re-run to retry); first: {rid}: {err.splitlines()[0]}"
        )


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread so that `finally` blocks stop the workers."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


#: After SIGTERM or SIGHUP, the longest the orderly stop may take before the process exits at once, s.
STOP_GRACE_S = 10.0


def _stop_on_signals() -> None:
    """SIGTERM and SIGHUP stop a sweep as Ctrl-C does (workers killed, exit 128 + signal).

    The exception lands wherever the main thread is, possibly inside the process pool's own
    locking, whose shutdown can then wait forever; so a timer ends the process with the same
    status after :data:`STOP_GRACE_S`. Nothing is lost: every finished run is already committed
    to the store, and the workers, the fork server and the resource tracker all end with the
    main process (executors.py)."""
    import os
    import threading

    def handler(signum: int, frame: Any) -> None:
        timer = threading.Timer(STOP_GRACE_S, os._exit, args=(128 + signum,))
        timer.daemon = True
        timer.start()
        raise Interrupted(signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


@app.command()
def reproduce(
    quick: Annotated[
        bool, typer.Option("--quick", help="Fewer repetitions per claim (minutes on 2 cores); never the opposite verdict.")
    ] = False,
    jobs: JobsOption = None,
    executor: ExecutorOption = "pool",
    scheduler: SchedulerOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Base seed every run's seed derives from (presets that take one).")] = 1,
    presets: Annotated[
        Optional[str], typer.Option("--presets", metavar="s0,s1,...", help="Run only these presets (default: all five).")
    ] = None,
    html_out: Annotated[
        Optional[Path], typer.Option("--html", metavar="FILE", help="Also write the HTML report (board and the studies' figures).")
    ] = None,
    write_docs: Annotated[
        bool, typer.Option("--write-docs", help="Write docs/reproduction.json and docs/reproduction.md (with the model digest).")
    ] = False,
    docs_dir: Annotated[Path, typer.Option("--docs-dir", metavar="DIR", help="Where --write-docs writes.")] = Path("docs"),
    list_: Annotated[bool, typer.Option("--list", help="Print the claims registry without running anything.")] = False,
    digest: Annotated[bool, typer.Option("--digest", help="Print the model digest (a few seconds of fixed runs) and exit.")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print plain JSON (the board, or with --list the registry).")] = False,
    against: Annotated[
        Optional[Path],
        typer.Option(
            "--against",
            metavar="FILE",
            help="A board JSON (docs/reproduction.json): list the claims whose verdict is the opposite here; exit 1 if any.",
        ),
    ] = None,
) -> None:
    """Run every study preset (S0-S4), measure every claim and judge it: reproduced / not reproduced / inconclusive."""

    from ccfair import reproduce as rp
    from ccfair.executors import check_options

    if digest:
        from ccfair.model_digest import digest as model_digest

        print(model_digest())
        return
    if list_:
        _print_claims(rp.list_json(), json_out)
        return
    check_options(executor, jobs, scheduler)
    chosen = _chosen_presets(presets, rp.PRESETS)
    if write_docs and (quick or seed != 1):
        raise SpecError("--write-docs", "writes the full board only: drop --quick and --seed")

    def progress(done: int, total: int) -> None:
        if not json_out and (done == total or done % 100 == 0):
            stderr_console().print(f"runs {done}/{total}")

    other = _board_against(against)
    rep = rp.reproduce(quick=quick, executor=executor, jobs=jobs, scheduler=scheduler, presets=chosen, progress=progress, seed=seed)
    if html_out:
        rp.write_html(rep, html_out)
    if write_docs:
        from ccfair.model_digest import digest as model_digest

        jp, mp = rp.write_docs(rep, docs_dir, model_digest())
        stderr_console().print(f"wrote {jp} and {mp}")
    board = rp.board_json(rep)
    opposite = rp.contradictions(other, board) if other is not None else []
    if other is not None:
        board["against"] = {"file": str(against), "opposite": [{"id": i, "there": x, "here": y} for i, x, y in opposite]}
    if json_out:
        print_json(board)
    else:
        _print_board(board)
        if other is not None:
            for i, x, y in opposite:
                stderr_console().print(f"opposite verdict: {i}: {x} in {against}, {y} here")
            stderr_console().print(f"{len(opposite)} opposite verdict(s) against {against}")
    if opposite:
        raise typer.Exit(1)


def _chosen_presets(presets: str | None, known: tuple[str, ...]) -> tuple[str, ...]:
    """``--presets s0,s1``: the presets named (every one of ``known`` when not given), each checked."""
    if presets is None:
        return known
    chosen = tuple(p.strip() for p in presets.split(",") if p.strip())
    bad = [p for p in chosen if p not in known]
    if bad or not chosen:
        raise SpecError("--presets", f"unknown preset {bad[0] if bad else presets!r}; allowed: {', '.join(known)}")
    return chosen


def _board_against(against: Path | None) -> dict[str, Any] | None:
    """``--against FILE``: the board JSON read from FILE (None when not given)."""
    if against is None:
        return None
    try:
        other = json.loads(against.read_text(encoding="utf-8"))
        other["claims"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SpecError("--against", f"not a board JSON file ({against}): {e}") from None
    return other


def _print_claims(listing: dict[str, Any], json_out: bool) -> None:
    """``ccfair reproduce --list``: the claims registry as JSON or a table."""
    from rich.table import Table

    if json_out:
        print_json(listing)
        return
    per_study = ", ".join(f"{k} {v}" for k, v in listing["per_study"].items())
    table = Table(title=f"{listing['count']} claims: {per_study}", title_justify="left")
    for col in ("claim", "backend", "where", "rule"):
        table.add_column(col, overflow="fold")
    for c in listing["claims"]:
        table.add_row(c["id"], c["backend"], c["where"], c["rule"]["text"])
    print_table(table)


def _print_board(board: dict[str, Any]) -> None:
    """The board as a table (each claim's rule, estimate with its interval and verdict), the counts on stderr."""
    from rich.table import Table

    table = Table(title=f"{board['command']}: {board['runs']} runs, wall {board['wall_s']:.0f} s", title_justify="left")
    for col in ("claim", "rule", "estimate [95 %]", "verdict"):
        table.add_column(col, overflow="fold")
    for r in board["claims"]:
        iv = r["interval"]
        fig = "-" if r["estimate"] is None else f"{r['estimate']:.3g} [{iv[0]:.3g}, {iv[1]:.3g}] ({r['runs']})"
        table.add_row(r["id"], r["rule"], fig, r["verdict"] + (f" ({r['note']})" if r["note"] and r["verdict"] != "reproduced" else ""))
    print_table(table)
    stderr_console().print(", ".join(f"{k}: {v}" for k, v in sorted(board["counts"].items())))


@app.command()
def matrix(
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Matrix directory (a sweep store; resumes if it exists).")],
    file: Annotated[
        Optional[Path],
        typer.Argument(metavar="[FILE]", help="Experiment file of the setting (>= 2 flows). Default: S0's base case."),
    ] = None,
    ccas_: Annotated[
        str, typer.Option("--ccas", metavar="A,B,...", help="CCAs to pair (names or aliases, '+pacing' works). Default: all.")
    ] = "all",
    repetitions: Annotated[int, typer.Option("--repetitions", "-r", help="Runs of every ordered pair.")] = 5,
    jobs: JobsOption = None,
    executor: ExecutorOption = "pool",
    scheduler: SchedulerOption = None,
    set_: SetOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Write DIR/matrix.toml and print the grid only.")] = False,
) -> None:
    """Every ordered pair of a list of CCAs at one setting: shares, max-min shares, harm; heatmaps and Parquet in DIR.

    The matrix is a sweep (DIR/matrix.toml, stored like any sweep): `ccfair report DIR` shows it too.
    """
    from rich.table import Table

    from ccfair import matrix as mx
    from ccfair.spec_input import apply_overrides, load_toml

    if file is None:
        base = mx.default_setting()
    else:
        base = load_toml(file)
        base.setdefault("name", file.stem)
    base = apply_overrides(base, set_ or [])
    names = mx.all_ccas() if ccas_.strip() == "all" else [c.strip() for c in ccas_.split(",") if c.strip()]
    raw = mx.sweep_dict(base, names, repetitions)
    out.mkdir(parents=True, exist_ok=True)
    sweep_file = out / mx.MATRIX_FILE
    sweep_file.write_text(mx.to_toml(raw), encoding="utf-8")
    sweep(sweep_file, out, jobs=jobs, executor=executor, scheduler=scheduler, set_=None, dry_run=dry_run)
    if dry_run:
        return
    summary = mx.write_summary(out)
    table = Table(title=f"A's share against B (mean of {repetitions}); A starts first", show_lines=False)
    order = list(dict.fromkeys(summary["a"]))
    table.add_column("A \\ B", style="bold")
    for b in order:
        table.add_column(b, justify="right")
    cell = summary.set_index(["a", "b"])["share_a"]
    for a in order:
        table.add_row(a, *[f"{cell.get((a, b), float('nan')):.2f}" for b in order])
    print_table(table)
    stderr_console().print(
        f"per-pair table: {out / mx.SUMMARY_FILE}; heatmaps: {out / 'figures'}/matrix-*.png|svg; report: ccfair report {out}"
    )


@app.command()
def report(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="Sweep directory (ccfair sweep --out DIR).")],
    out: Annotated[Optional[Path], typer.Option("--out", metavar="FILE", help="HTML file to write (default: DIR/report.html).")] = None,
) -> None:
    """Write one self-contained HTML page (figures, tables, experiment, versions, seeds) for a sweep."""
    from ccfair.report import write_report

    if not directory.is_dir() or not (directory / "sweep.json").exists():
        raise SpecError(str(directory), "not a sweep directory (no sweep.json); run `ccfair sweep FILE --out DIR` first")
    path = write_report(directory, out)
    stderr_console().print(f"report: {path}")


@app.command()
def plot(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="Result directory of one run (ccfair run --out DIR).")],
    out: Annotated[Optional[Path], typer.Option("--out", metavar="DIR", help="Where to write the figures (default: DIR/figures).")] = None,
) -> None:
    """Draw one run's figures (PNG and SVG): throughput per flow, queueing delay over time, sojourn histogram, FCT CDF;
    a topology's links (utilisation, queue, drops, marks); with trace = true also cwnd, pacing rate and RTT per flow over time."""
    from ccfair import plots
    from ccfair.result import Result

    if not (directory / "summary.json").is_file():
        raise SpecError(str(directory), "not a run result directory (no summary.json); run `ccfair run FILE --out DIR` first")
    res = Result.load(directory)
    out = out if out is not None else directory / "figures"
    figures = {
        "throughput": plots.throughput_over_time(res),
        "queue-delay": plots.queue_delay_over_time(res),
        "sojourn-hist": plots.queue_delay_hist(res),
    }
    if res.config.get("links"):
        figures["links"] = plots.links_summary(res)
    if "fct_s" in res.flows and res.flows["fct_s"].notna().any():
        figures["fct-cdf"] = plots.fct_cdf(res.flows[res.flows["fct_s"].notna()], class_col="group")
    if res.trace is not None and len(res.trace):
        for what in plots.TRACE_SERIES:
            figures[what] = plots.trace_over_time(res, what)
    for name, fig in figures.items():
        for path in plots.save(fig, out / name):
            stderr_console().print(f"figure: {path}")


@testbed_app.command("clean")
def testbed_clean() -> None:
    """Remove what dead testbed runs left behind (killed with SIGKILL, crashed): their processes,
    ccf-* namespaces and links, and run files in /run/ccfair. Live runs are never touched."""
    import os

    from ccfair.testbed import netns
    from ccfair.testbed.runner import TestbedUnavailable

    if os.geteuid() != 0:
        raise TestbedUnavailable("`ccfair testbed clean` needs root (it deletes network namespaces)")
    removed = netns.clean_stale()
    for item in removed:
        sys.stdout.write(f"removed {item}\n")
    live = netns.live_owners()
    alone = f"; left {len(live)} live run(s) alone: " + ", ".join(f"{r} (PID {p})" for r, p in sorted(live.items())) if live else ""
    sys.stdout.write(f"{len(removed)} leftover(s) removed{alone}\n")  # plain lines (never wrapped), for scripts
    for name in netns.leftover_bpf():
        sys.stdout.write(f"note: BPF congestion control {name} of a dead run is still registered (a process still holds its link)\n")


@testbed_app.command("build")
def testbed_build() -> None:
    """Build ccfair's BPF ports of Linux's congestion-control modules for this kernel (clang,
    bpftool, libbpf headers); runs also build missing ones on demand. Exit 2 naming what is missing."""
    from ccfair.errors import SpecError
    from ccfair.testbed import bpfcc

    missing = bpfcc.unavailable(load=False)
    if missing:
        raise SpecError("backend", f"cannot build the BPF ports: missing {missing}")
    built = bpfcc.build(say=lambda line: print(line, file=sys.stderr))
    sys.stdout.write(f"{len(built)} BPF ports ready in {bpfcc.build_dir()}: {', '.join(built)}\n")


def print_listing(title: str, rows: list[dict[str, Any]], name_header: str) -> None:
    """A listing of ``ccfair.listing`` rows as a table that fits :data:`~ccfair.output.LISTING_WIDTH`
    columns (long cells wrap): name and aliases, parameters with default and unit, source."""
    from rich.table import Table

    from ccfair.output import LISTING_WIDTH

    table = Table(title=title, title_justify="left", show_lines=True)
    table.add_column(name_header, overflow="fold", ratio=2)
    table.add_column("Parameters: default [unit]", overflow="fold", ratio=6)
    table.add_column("Source", overflow="fold", ratio=3)
    variants = False
    for r in rows:
        name = r["name"] + "".join(f"\n{a}" for a in r["aliases"])
        if r.get("variant_of"):
            name += f"\n(variant of {r['variant_of']})"
        params = []
        for p in r["params"]:
            mark = " *" if p.get("variant") else ""
            variants |= bool(mark)
            params.append(f"{p['name']} = {p['default']} [{p['unit']}]{mark}")
        table.add_row(name, "\n".join(params) or "-", r["source"])
    if variants:
        table.caption = "* the variant's own value (the base algorithm's default differs)"
        table.caption_justify = "left"
    print_table(table, max_width=LISTING_WIDTH)


@list_app.command("ccas")
def list_ccas(
    as_json: Annotated[bool, typer.Option("--json", help="Print every CCA with its backends as one JSON object.")] = False,
) -> None:
    """Congestion-control algorithms, their sources, aliases, variants, parameters and backends
    (simulator; testbed: the host kernel's module or ccfair's BPF port of the Linux module)."""
    from ccfair import ccas, listing
    from ccfair.testbed import bpfcc

    try:
        from ccfair import _core  # noqa: F401
    except ImportError:
        stderr_console().print("note: ccfair._core is not built; listing the algorithms ccfair expects it to provide")
    entries = bpfcc.catalogue([(name, source, ccas.aliases_of(name), ccas.params_of(name)) for name, source in ccas.catalogue()])
    if as_json:
        print_json({"ccas": entries, "bpf_missing": bpfcc.unavailable()})
        return
    testbed = {e["name"]: {"module": "host module", "bpf": "BPF port"}.get(e["backends"]["testbed"] or "", "-") for e in entries}
    rows = [dict(r, source=f"{r['source']}\ntestbed: {testbed.get(r['variant_of'] or r['name'], '-')}") for r in listing.cca_rows()]
    rows += [
        {"name": e["name"], "aliases": e["aliases"], "source": f"{e['source']}\ntestbed: BPF port", "variant_of": None, "params": []}
        for e in entries
        if not e["backends"]["simulator"]
    ]
    print_listing("Congestion-control algorithms (aliases under the name)", rows, "Name, aliases")
    print_line(f"Add '{ccas.PACING_SUFFIX}' to any name to turn pacing on (e.g. cubic{ccas.PACING_SUFFIX}).", markup=False)
    print_line('Set parameters with a table: cca = { name = "cubic", beta = 0.7 } (docs/ccas.md: ranges).', markup=False)
    print_line("Testbed: the host kernel's module, else ccfair's BPF port of the Linux module (docs/testbed.md).", markup=False)


@list_app.command("qdiscs")
def list_qdiscs(
    as_json: Annotated[bool, typer.Option("--json", help="Print the listing as one JSON array.")] = False,
) -> None:
    """Queue disciplines for bottleneck.qdisc, with their parameters (default, unit, allowed values)."""
    from ccfair import listing

    rows = listing.qdisc_rows()
    if as_json:
        print_json(rows)
        return
    print_listing("Queue disciplines (aliases under the kind)", rows, "Kind, aliases")
    print_line('Set parameters with a table: qdisc = { kind = "codel", target = "5ms" } (docs/qdiscs.md: ranges).', markup=False)


@list_app.command("profiles")
def list_profiles() -> None:
    """Built-in sender profiles (flows.N.profile), their fields and sources."""
    from rich.table import Table

    from ccfair import profiles
    from ccfair.output import LISTING_WIDTH

    table = Table(title="Built-in sender profiles ([profiles.NAME] defines more)", title_justify="left")
    table.add_column("Name", overflow="fold", ratio=1)
    table.add_column("Fields", overflow="fold", ratio=2)
    table.add_column("Source", overflow="fold", ratio=3)
    for name, fields in profiles.BUILTIN.items():
        shown = "\n".join(f"{k} = {json.dumps(v)}" for k, v in fields.items() if k in profiles.FIELDS)  # as TOML writes it
        table.add_row(name, shown, fields["source"])
    print_table(table, max_width=LISTING_WIDTH)


# ---------------------------------------------------------------- entry point


def _fail(message: str, code: int) -> int:
    sys.stderr.write(escape_controls(" ".join(message.split())) + "\n")  # always one line, no control characters
    return code


def _kinds(e: BaseException) -> set[str]:
    """Class names in ``e``'s MRO. Typer raises click's exceptions or (typer >= 0.2x) its own
    vendored copies; matching by name handles both without importing either."""
    return {c.__name__ for c in type(e).__mro__}


def _usage_message(e: Exception) -> str:
    """One-line text for a command-line usage error, in the ``error: <field>: <message>`` form."""
    import click

    kinds = _kinds(e)
    param = getattr(e, "param", None)
    text = e.format_message() if isinstance(e, click.ClickException) else str(e)
    if "MissingParameter" in kinds:
        return f"error: {text.rstrip('.')} (see --help)"
    if "BadParameter" in kinds and param is not None:
        opts = getattr(param, "opts", None) or [getattr(param, "name", "value")]
        return f"error: {opts[0]}: {getattr(e, 'message', e)}"
    return f"error: {text}"


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ccfair`` command.

    With ``argv`` given (tests), returns the exit status; otherwise exits with it.
    """
    global _gc_paused
    if argv is None and gc.isenabled():
        # Start-up (imports, the command line's parsing) allocates much and frees little; every
        # collection would walk it all again. Resumed when the command starts (_command_starts).
        _gc_paused = True
        gc.disable()
    try:
        code = app(args=argv, prog_name="ccfair", standalone_mode=False)
    except SpecError as e:
        code = _fail(f"error: {e}", 2)
    except SimulationError as e:
        where = "testbed" if type(e).__name__ == "TestbedError" else "simulation"
        code = _fail(f"error: {where}: {e}", 1)
    except KeyboardInterrupt:
        code = _fail("error: interrupted", 130)
    except Exception as e:
        kinds = _kinds(e)
        if "NoArgsIsHelpError" in kinds:
            import click

            text = e.format_message() if isinstance(e, click.ClickException) else str(e)
            if text:  # older click returns the help text instead of printing it
                sys.stdout.write(text + "\n")
            code = 2
        elif "UsageError" in kinds:
            code = _fail(_usage_message(e), 2)
        elif "Abort" in kinds:
            code = _fail("error: aborted", 130)
        else:
            raise
    if not isinstance(code, int):
        code = 0
    if argv is None:
        # Interpreter shutdown would walk every live object in full collections (~25 ms of a
        # `ccfair run`): frozen, they are left to reference counting and module teardown
        # (atexit handlers and stream flushes still run; Python never promises __del__ at exit).
        gc.freeze()
        sys.exit(code)
    return code


if __name__ == "__main__":  # pragma: no cover
    main()
