"""The bad-input corpus (tests/bad_inputs/): every file must give its expected exit code
and one line ``error: <field>: <message>`` naming its expected field -- never a traceback,
never exit 1 (an engine failure), never a run that exhausts the machine.

Each file's second line declares the expectation::

    # expect: exit=2 field=bottleneck.rate [command=sweep]

``field=<file>`` means the error names the file itself (unreadable or malformed TOML).
``command=sweep`` runs ``ccfair sweep FILE --out DIR --dry-run`` instead of ``ccfair check FILE``
(``check`` validates and checks the projected resources without running).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ccfair.cli import main

CORPUS = Path(__file__).resolve().parent / "bad_inputs"
FILES = sorted(CORPUS.glob("*.toml"))
EXPECT = re.compile(r"^# expect: exit=(\d+) field=(.*?)(?: command=(\w+))?$", re.MULTILINE)


def expectation(path: Path) -> tuple[int, str, str]:
    m = EXPECT.search(path.read_bytes().decode("utf-8", errors="replace"))
    assert m, f"{path.name}: no '# expect:' line"
    field = str(path) if m.group(2) == "<file>" else m.group(2)
    return int(m.group(1)), field, m.group(3) or "check"


def test_corpus_has_at_least_60_files():
    assert len(FILES) >= 60, len(FILES)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_bad_input_gives_its_exit_code_and_field(path, tmp_path, capsys):
    code, field, command = expectation(path)
    if command == "sweep":
        argv = ["sweep", str(path), "--out", str(tmp_path / "out"), "--dry-run"]
    else:
        argv = ["check", str(path)]
    got = main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("sweep ")]
    assert got == code, err
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: {field}: "), lines[0]
    if command == "sweep":
        assert not (tmp_path / "out").exists()  # refused before writing anything
