"""``ccfair fidelity``: the simulator next to stored Linux runs; ``ccfair fidelity collect``: the runs.

Imports only typer and the standard library at the top (start-up: tests/test_startup.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

app = typer.Typer(
    help="Simulator fidelity against real Linux TCP (stored testbed runs; docs/fidelity.md).",
    invoke_without_command=True,
    rich_markup_mode=None,
)

DataOption = Annotated[
    Path, typer.Option("--data", metavar="DIR", help="The fidelity data directory (points/<set>.toml, kernel/<set>.jsonl).")
]


def _log(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


@app.callback()
def fidelity(
    ctx: typer.Context,
    set_: Annotated[
        Optional[list[str]],
        typer.Option("--set", metavar="NAME", help="Point set(s) (default: the reference map, every set with map = true)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as one JSON object.")] = False,
    html: Annotated[Optional[Path], typer.Option("--html", metavar="FILE", help="Write a page with the heatmap and the table.")] = None,
    png: Annotated[Optional[Path], typer.Option("--png", metavar="FILE", help="Write the heatmap as a PNG.")] = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, max=64, help="Simulator processes.")] = 1,
    spec_starts: Annotated[
        bool,
        typer.Option("--spec-starts", help="Start the simulator's flows as the spec says, not when the kernel run's flows really started."),
    ] = False,
    replay_stalls: Annotated[
        bool,
        typer.Option(
            "--replay-stalls/--no-replay-stalls",
            help="Give each simulator run its kernel run's recorded bottleneck stalls as the link's outages (runs with the record).",
        ),
    ] = True,
    data: DataOption = Path("data/fidelity"),
) -> None:
    """Recompute the simulator at every stored point (as many seeds as the kernel has runs) and compare."""
    if ctx.invoked_subcommand is not None:
        return
    from ccfair.fidelity import compare as cmp
    from ccfair.output import print_json, print_table

    result = cmp.compare(cmp.load_sets(set_, data), jobs, measured_starts=not spec_starts, replay_stalls=replay_stalls)
    if html is not None:
        html.write_text(cmp.html_page(result))
    if png is not None:
        cmp.heatmap_figure(result).savefig(png, dpi=120)
    if as_json:
        print_json(result)
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="flow B's share: Linux (testbed) vs simulator", title_justify="left")
    for h in cmp.TABLE_HEADER:
        table.add_column(h)
    for row in cmp.table_rows(result):
        table.add_row(*(escape(c) for c in row))
    print_table(table)
    sys.stdout.write(cmp.totals_line(result) + "\n")


@app.command("collect")
def collect_cmd(
    set_: Annotated[
        Optional[list[str]], typer.Option("--set", metavar="NAME", help="Point set(s) to collect (default: the reference map).")
    ] = None,
    runs: Annotated[
        Optional[int], typer.Option("--runs", min=1, max=100, help="Kernel runs per point (default: the set's `runs`).")
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, max=8, help="Testbed runs at a time.")] = 1,
    gated: Annotated[
        bool,
        typer.Option(
            "--gated",
            help="Count only runs that pass the quality gate towards --runs (new seeds, lowest kernel utilisation first; passes until done or a pass adds none that passes).",
        ),
    ] = False,
    data: DataOption = Path("data/fidelity"),
) -> None:
    """Run every point of the set(s) on the testbed (root) until it has its runs; resumable, one JSON line per run."""
    from ccfair.fidelity.collect import collect
    from ccfair.fidelity.points import load_set, map_set_names
    from ccfair.testbed.runner import check_available

    names = set_ or map_set_names(data)
    sets = [load_set(n, data) for n in names]
    for ps in sets:
        for p in ps.points:
            check_available(p.spec())  # root, bottleneck binary, the kernel's CCAs: before any run
    failed = 0
    for ps in sets:
        _, bad = collect(ps, runs or ps.runs, jobs, _log, gated)
        failed += bad
    if failed:
        raise typer.Exit(1)
