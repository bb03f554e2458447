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


@app.command("collect")
def collect_cmd(
    set_: Annotated[
        Optional[list[str]], typer.Option("--set", metavar="NAME", help="Point set(s) to collect (default: every set).")
    ] = None,
    runs: Annotated[
        Optional[int], typer.Option("--runs", min=1, max=100, help="Kernel runs per point (default: the set's `runs`).")
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, max=8, help="Testbed runs at a time.")] = 1,
    data: DataOption = Path("data/fidelity"),
) -> None:
    """Run every point of the set(s) on the testbed (root) until it has its runs; resumable, one JSON line per run."""
    from ccfair.fidelity.collect import collect
    from ccfair.fidelity.points import load_set, set_names
    from ccfair.testbed.runner import check_available

    names = set_ or set_names(data)
    sets = [load_set(n, data) for n in names]
    for ps in sets:
        for p in ps.points:
            check_available(p.spec())  # root, bottleneck binary, the kernel's CCAs: before any run
    failed = 0
    for ps in sets:
        _, bad = collect(ps, runs or ps.runs, jobs, _log)
        failed += bad
    if failed:
        raise typer.Exit(1)
