"""The bad-input corpus (tests/bad_inputs/): every file must give its expected exit code
and one line ``error: <field>: <message>`` naming its expected field -- never a traceback,
never exit 1 (an engine failure), never a run that exhausts the machine or hangs -- and
``ccfair run`` must give exactly the verdict ``ccfair check`` gives.

Each file's second line declares the expectation::

    # expect: exit=2 field=bottleneck.rate [command=sweep] [setup=fifo]

``field=<file>`` means the error names the file itself (unreadable or malformed TOML).
``command=sweep`` runs ``ccfair sweep FILE --out DIR --dry-run`` (and, for the verdict,
the same without ``--dry-run``) instead of ``ccfair check FILE`` / ``ccfair run FILE``.
``setup=`` creates a file the experiment names as ``@TMP@/...`` (the test's temporary
directory): ``fifo`` (a named pipe nobody writes), ``big`` (a 17 MiB sparse file),
``nancsv`` / ``badcsv`` (malformed CSV), ``badtrace`` / ``backtrace`` (a malformed mahimahi trace:
a non-integer line, timestamps going back). Every file is read from a copy in that directory.

Time: the target is every refusal within 2 s; that figure is
measured by bench/bad_inputs.py (docs/benchmarks.md). Here a per-file watchdog of
:data:`HANG_S` only turns a hang (a FIFO opened, a loop over 10^18 repetitions) into a
failure instead of a stuck test run: far above the measured times, it is not a speed test.
"""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import pytest
from ccfair.cli import main

CORPUS = Path(__file__).resolve().parent / "bad_inputs"
FILES = sorted(CORPUS.glob("*.toml"))
EXPECT = re.compile(r"^# expect: exit=(\d+) field=(.*?)(?: command=(\w+))?(?: setup=(\w+))?$", re.MULTILINE)
#: Watchdog per command (s): a refusal that has not come by then is a hang.
HANG_S = 30


def expectation(path: Path) -> tuple[int, str, str, str | None]:
    m = EXPECT.search(path.read_bytes().decode("utf-8", errors="replace"))
    assert m, f"{path.name}: no '# expect:' line"
    return int(m.group(1)), m.group(2), m.group(3) or "check", m.group(4)


def prepare(path: Path, tmp: Path, setup: str | None) -> Path:
    """A copy of ``path`` in ``tmp`` with ``@TMP@`` replaced, and the file its setup names."""
    if setup == "fifo":
        os.mkfifo(tmp / "fifo")
    elif setup == "big":
        with open(tmp / "big.csv", "wb") as fh:
            fh.write(b"size_bytes,cdf\n")
            fh.truncate(17 * 2**20)  # sparse: 17 MiB without writing them
    elif setup == "nancsv":
        (tmp / "nan.csv").write_text("size_bytes,cdf\n1000,0.5\n2000,nan\n")
    elif setup == "badcsv":
        (tmp / "bad.csv").write_text("bytes;probability\n1000;1\n")
    elif setup == "badtrace":
        (tmp / "bad.trace").write_text("1\n2\n2.5\n4\n")
    elif setup == "backtrace":
        (tmp / "back.trace").write_text("1\n5\n3\n8\n")
    copy = tmp / path.name
    copy.write_bytes(path.read_bytes().replace(b"@TMP@", str(tmp).encode()))
    return copy


class Hang(Exception):
    pass


def _alarm(signum, frame):  # noqa: ANN001
    raise Hang(f"no verdict within {HANG_S} s")


def verdict(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    """Exit status and the non-progress lines on stderr of ``ccfair ARGV`` (in-process, watchdog armed)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_S)
    try:
        code = main(argv)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return code, [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("sweep ")]


def test_corpus_has_at_least_150_files():
    assert len(FILES) >= 150, len(FILES)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_bad_input_gives_its_exit_code_and_field_and_run_agrees(path, tmp_path, capsys):
    code, field, command, setup = expectation(path)
    copy = prepare(path, tmp_path, setup)
    field = str(copy) if field == "<file>" else field
    out = tmp_path / "out"
    if command == "sweep":
        argv = ["sweep", str(copy), "--out", str(out), "--dry-run"]
        argv_run = ["sweep", str(copy), "--out", str(out), "--executor", "inprocess"]
    else:
        argv, argv_run = ["check", str(copy)], ["run", str(copy)]
    got, lines = verdict(argv, capsys)
    assert got == code, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {field}: "), lines[0]
    assert "\x1b" not in lines[0]  # control characters from the input are escaped
    ran, run_lines = verdict(argv_run, capsys)
    assert (ran, run_lines) == (got, lines), "check and run disagree"
    assert not out.exists()  # refused before writing anything
