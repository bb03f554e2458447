"""What the command line prints on stdout: plain JSON, and tables that are never cut.

Two rules, shared by every command (``ccfair run``, ``compare``, ``preset``, ...):

* ``--json`` output is written with :func:`print_json`: ``json.dumps`` straight to
  ``sys.stdout``, one document per line. It never goes through rich: a rich
  console wraps long lines at the terminal width (80 columns when stdout is a
  pipe or a file) and would break lines inside the object.
* Tables are printed with :func:`print_table` at their natural width: when the
  terminal is narrower, or stdout is not a terminal at all, the lines are
  simply longer than the screen instead of rich shrinking the columns and
  eliding headers and numbers ("J_mea…", "0.996 with S1 feedb…").

rich is imported here only when a table or a styled line is printed, so
``ccfair --help`` and ``--json`` paths stay light.
"""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["print_json", "print_table", "print_line", "status", "stdout_console", "stderr_console"]

#: Width of a console writing to a pipe or a file: long enough that nothing wraps.
PIPE_WIDTH = 100_000

_consoles: dict[str, Any] = {}


def print_json(obj: Any, *, indent: int | None = None) -> None:
    """Write ``obj`` as one JSON document (one line unless ``indent``) to stdout."""
    sys.stdout.write(json.dumps(obj, indent=indent) + "\n")
    sys.stdout.flush()


def stdout_console() -> Any:
    """The rich console for stdout: no highlighting; no wrapping when stdout is not a terminal."""
    con = _consoles.get("out")
    if con is None or con.file is not sys.stdout:
        from rich.console import Console

        con = Console(highlight=False)
        if not con.is_terminal:
            con = Console(highlight=False, width=PIPE_WIDTH, soft_wrap=True)
        _consoles["out"] = con
    return con


def stderr_console() -> Any:
    """The rich console for progress and messages on stderr."""
    con = _consoles.get("err")
    if con is None or con.file is not sys.stderr:
        from rich.console import Console

        con = Console(stderr=True, highlight=False)
        _consoles["err"] = con
    return con


def status(text: str) -> Any:
    """A spinner with ``text`` on stderr while a block runs -- only when stderr is a terminal
    (elsewhere it would show nothing, and importing rich for it costs ~40 ms of start-up)."""
    if not sys.stderr.isatty():
        import contextlib

        return contextlib.nullcontext()
    return stderr_console().status(text)


def print_line(text: str, *, markup: bool = True) -> None:
    """One (rich-markup) line on stdout, never wrapped."""
    stdout_console().print(text, markup=markup, soft_wrap=True)


def print_table(table: Any) -> None:
    """Print a rich ``Table`` on stdout at its natural width (wider than the terminal if need be)."""
    from rich.measure import Measurement

    con = stdout_console()
    natural = Measurement.get(con, con.options.update_width(PIPE_WIDTH), table).maximum
    if natural <= con.width:
        con.print(table)
        return
    saved = con.width
    con.width = natural
    try:
        con.print(table)
    finally:
        con.width = saved
