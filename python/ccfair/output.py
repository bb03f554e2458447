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
* Text that comes from the input (flow and experiment names, values) reaches the
  terminal with its control characters escaped (:func:`escape_controls`: an
  ESC in a flow name prints as ``\x1b``, never clears the screen or sets colours),
  and never as rich markup: table cells and titles are plain text.

rich is imported here only when a table or a styled line is printed, so
``ccfair --help`` and ``--json`` paths stay light.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

__all__ = ["escape_controls", "print_json", "print_table", "print_line", "print_field", "status", "stdout_console", "stderr_console"]

#: Width of a console writing to a pipe or a file: long enough that nothing wraps.
PIPE_WIDTH = 100_000

_consoles: dict[str, Any] = {}

#: C0 control characters but the newline, DEL and the C1 controls (ESC, CSI, BEL, CR, ...).
_CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def escape_controls(text: str) -> str:
    """``text`` with every control character but the newline written as ``\\xNN``."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


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
    """One (rich-markup) line on stdout, never wrapped; control characters escaped.
    Text from the input must not be passed with ``markup=True`` (use :func:`print_field`)."""
    stdout_console().print(escape_controls(text), markup=markup, soft_wrap=True)


def print_field(label: str, value: str, width: int = 16) -> None:
    """``  label  value`` on stdout: the label bold, the value plain text (never markup)."""
    from rich.text import Text

    line = Text("  ") + Text(f"{escape_controls(label):<{width}}", style="bold") + Text(" " + escape_controls(value))
    stdout_console().print(line, soft_wrap=True)


def _plain_cells(table: Any) -> None:
    """Every string of ``table`` (title, caption, headers, cells) as plain text with controls escaped."""
    from rich.text import Text

    def plain(x: Any) -> Any:
        return Text(escape_controls(x)) if isinstance(x, str) else x

    table.title, table.caption = plain(table.title), plain(table.caption)
    for col in table.columns:
        col.header = plain(col.header)
        col._cells[:] = [plain(c) for c in col._cells]  # rich keeps a column's cells in this list


#: Width of reference listings (``ccfair list ...``): they fit it, wrapping inside their cells.
LISTING_WIDTH = 100


def print_table(table: Any, max_width: int | None = None) -> None:
    """Print a rich ``Table`` on stdout at its natural width (wider than the terminal if need be),
    or, with ``max_width``, at most that wide (and the terminal's width), wrapping inside cells."""
    from rich.measure import Measurement

    _plain_cells(table)
    con = stdout_console()
    if max_width is not None:
        saved = con.width
        con.width = min(max_width, saved) if con.is_terminal else max_width
        try:
            con.print(table)
        finally:
            con.width = saved
        return
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
