"""A sweep's progress on stderr: a bar on a terminal, plain lines otherwise (a log file, a pipe).

Both show runs done of the total (the count never passes it), the rate, the elapsed time
and the ETA (remaining runs at this invocation's rate). A testbed run also prints one line
as it is stored: where it ran (host and worker), its wall time, its bottleneck lateness
and host load, and the quality gate's verdict; the plain lines end with the runs per host.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["SweepProgress", "LINE_EVERY_S"]

#: Plain (non-terminal) output: one progress line at most this often, and at the end.
LINE_EVERY_S = 10.0


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    return f"{h}:{rem // 60:02d}:{rem % 60:02d}"


class SweepProgress:
    """Progress of one sweep invocation. ``update(n, outcome)`` after each stored task."""

    def __init__(self, console: Any, total: int, already: int, label: str, terminal: bool | None = None) -> None:
        self.console = console
        self.total = total
        self.already = min(already, total)
        self.done = self.already
        self.label = label
        self.terminal = console.is_terminal if terminal is None else terminal
        self.t0 = time.monotonic()
        self.last_line = -LINE_EVERY_S
        self.printed = -1
        self.hosts: dict[str, int] = {}
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> SweepProgress:
        if self.terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TextColumn("elapsed"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total, completed=self.done, rate="- runs/s")
        else:
            self._line(force=True)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
        elif exc[0] is None:
            self._line(force=True)

    # ------------------------------------------------------------------

    def rate(self) -> float | None:
        elapsed = time.monotonic() - self.t0
        new = self.done - self.already
        return new / elapsed if new and elapsed > 0 else None

    def eta_s(self) -> float | None:
        r = self.rate()
        return (self.total - self.done) / r if r else None

    def update(self, n: int, outcome: dict[str, Any]) -> None:
        self.done = min(self.total, self.done + n)  # never past the total
        for rid, facts in (outcome.get("facts") or {}).items():
            where = f"{facts.get('host')}/{facts.get('worker')}"
            self.hosts[where] = self.hosts.get(where, 0) + 1
            self._print(self._testbed_line(rid, facts))
        for rid, error in (outcome.get("errors") or {}).items():
            where = outcome.get("host", "?")
            self._print(f"run {rid} failed on {where}: {error.splitlines()[0] if error else ''}")
        if self._bar is not None:
            r = self.rate()
            self._bar.update(self._task, completed=self.done, rate="- runs/s" if r is None else f"{r:.2f} runs/s")
        else:
            self._line()

    def _testbed_line(self, rid: str, f: dict[str, Any]) -> str:
        late = f.get("late_p99_us")
        load = f.get("load_per_cpu")
        return (
            f"[{self.done}/{self.total}] testbed run {rid} on {f.get('host')} ({f.get('worker')}): {f.get('wall_s', 0):.1f} s, "
            f"kernel {f.get('kernel')}, late p99 {'-' if late is None else f'{late:g}'} us, "
            f"load {'-' if load is None else f'{load:.1f}'}/CPU, attempts {f.get('attempts')}: {f.get('quality')}"
        )

    def status(self) -> str:
        """One plain line: runs done, rate, elapsed, ETA, runs per testbed host."""
        pct = 100.0 * self.done / self.total if self.total else 100.0
        r, eta = self.rate(), self.eta_s()
        text = (
            f"{self.label}: {self.done}/{self.total} runs ({pct:.0f} %), "
            f"{'-' if r is None else f'{r:.2f}'} runs/s, elapsed {_clock(time.monotonic() - self.t0)}, "
            f"ETA {'-' if eta is None else _clock(eta)}"
        )
        if self.hosts:
            text += "; testbed runs per host: " + ", ".join(f"{h} {n}" for h, n in sorted(self.hosts.items()))
        return text

    def _line(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.printed == self.done and not (force and self.printed < 0):
            return
        if force or now - self.last_line >= LINE_EVERY_S or self.done == self.total:
            self.last_line, self.printed = now, self.done
            self._print(self.status())

    def _print(self, text: str) -> None:
        if self._bar is not None:
            self._bar.console.print(text, markup=False, highlight=False)
        else:
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)
            self.console.file.flush()
