"""Output that survives a pipe: every ``--json`` prints plain JSON, piped tables are never cut.

Each command runs in a subprocess with stdout a pipe and a narrow COLUMNS
(where rich would wrap at the width and elide table cells), on an experiment
whose names are far longer than the width. The command tree is walked, so a
new command with a ``--json`` option fails here until it has an invocation in
JSON_INVOCATIONS.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LONG = "a-flow-name-that-is-much-longer-than-any-terminal-is-wide-" * 3
TITLE = "An experiment whose name alone is wider than eighty columns, to catch any wrapping of the output " * 2


def _experiment(tmp_path: Path) -> Path:
    f = tmp_path / "long-names.toml"
    f.write_text(
        f'name = "{TITLE}"\nduration = "3s"\nwindow = {{ start = "1s", end = "3s" }}\n'
        '[bottleneck]\nrate = "10Mbit"\nbuffer = "1bdp"\n'
        f'[[flows]]\nname = "{LONG}A"\ncca = "cubic"\nrtt = "20ms"\n'
        f'[[flows]]\nname = "{LONG}B"\ncca = "bbr"\nrtt = "20ms"\n'
    )
    return f


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="40", TERM="dumb")
    return subprocess.run(
        [sys.executable, "-m", "ccfair", *argv], capture_output=True, text=True, cwd=ROOT, env=env, timeout=600, check=False
    )


#: Command path -> extra arguments of a quick invocation with --json ({file} = the long-name experiment).
JSON_INVOCATIONS: dict[tuple[str, ...], list[str]] = {
    ("run",): ["{file}", "--json"],
    ("compare",): ["{file}", "--json"],
    ("preset", "s1"): ["--queue", "small", "--feedback", "off", "--json"],
    ("list", "ccas"): ["--json"],
    ("list", "qdiscs"): ["--json"],
    ("fidelity",): ["--json", "--data", str(Path(__file__).parent / "data" / "fidelity")],
}
#: Commands that need the testbed (root, network namespaces): skipped where it is unavailable.
NEEDS_TESTBED = {("compare",)}
#: Commands too slow to run here (minutes): their --json path is checked in-process with the work stubbed.
STUBBED = {("reproduce",)}


def _commands_with_json() -> set[tuple[str, ...]]:
    import typer
    from ccfair.cli import app

    found: set[tuple[str, ...]] = set()

    def walk(cmd, prefix):
        for name, sub in getattr(cmd, "commands", {}).items():
            path = (*prefix, name)
            if any("--json" in getattr(p, "opts", ()) for p in getattr(sub, "params", ())):
                found.add(path)
            walk(sub, path)

    walk(typer.main.get_command(app), ())
    return found


def test_every_json_command_has_an_invocation_here():
    missing = _commands_with_json() - set(JSON_INVOCATIONS) - STUBBED
    assert not missing, f"add a quick invocation for {sorted(missing)} to JSON_INVOCATIONS"


def test_reproduce_json_is_one_plain_document(monkeypatch, tmp_path, capsys):
    """`ccfair reproduce --json` with the (minutes-long) runs stubbed: the scoreboard prints as one JSON line."""
    from ccfair import reproduce as rp
    from ccfair.cli import main

    board = {"claims": [{"id": f"S0-claim-{LONG}", "quote": TITLE, "verdict": "reproduced"}]}
    monkeypatch.setattr(rp, "reproduce", lambda **kw: {"runs": 1, "wall_s": 0.0, "entries": {}})
    monkeypatch.setattr(rp, "write_html", lambda rep, path: path)
    monkeypatch.setattr(rp, "board_json", lambda rep, digest=None: board)
    assert main(["reproduce", "--json", "--html", str(tmp_path / "r.html")]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 1
    assert json.loads(out) == board


@pytest.mark.parametrize("path", sorted(JSON_INVOCATIONS), ids=" ".join)
def test_json_output_is_one_document_per_line_when_piped(path, tmp_path):
    pytest.importorskip("ccfair._core")
    args = [a.format(file=_experiment(tmp_path)) for a in JSON_INVOCATIONS[path]]
    p = _run(*path, *args)
    if p.returncode != 0 and path in NEEDS_TESTBED:
        pytest.skip(f"testbed unavailable here: {p.stderr.strip()[:200]}")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines, "no output"
    docs = [json.loads(line) for line in lines]  # each line is one whole document
    if path == ("run",):
        assert [f["name"] for f in docs[0]["flows"]] == [LONG + "A", LONG + "B"]
        assert docs[0]["name"] == TITLE


def test_check_prints_one_json_document_when_piped(tmp_path):
    p = _run("check", str(_experiment(tmp_path)))
    assert p.returncode == 0, p.stderr
    cfg = json.loads(p.stdout)
    assert cfg["flows"][0]["name"] == LONG + "A"


def test_piped_run_table_shows_full_names_and_numbers(tmp_path):
    pytest.importorskip("ccfair._core")
    f = _experiment(tmp_path)
    p = _run("run", str(f))
    assert p.returncode == 0, p.stderr
    assert "…" not in p.stdout
    assert LONG + "A" in p.stdout and LONG + "B" in p.stdout
    assert TITLE.strip() in p.stdout
    for header in ("Flow", "Throughput", "Share", "Retrans"):
        assert header in p.stdout
    summary = json.loads(_run("run", str(f), "--json").stdout)
    rate = summary["flows"][0]["throughput_bps"] / 1e6
    assert f"{rate:.2f} Mbit/s" in p.stdout or f"{rate * 1e3:.2f} kbit/s" in p.stdout


@pytest.mark.parametrize("what", ["qdiscs", "ccas"])
def test_piped_list_tables_are_not_elided(what):
    p = _run("list", what)
    assert p.returncode == 0, p.stderr
    assert "…" not in p.stdout
    assert "droptail" in p.stdout or "cubic" in p.stdout


def test_piped_preset_table_is_not_elided():
    pytest.importorskip("ccfair._core")
    p = _run("preset", "s1", "--queue", "small", "--feedback", "off")
    assert p.returncode == 0, p.stderr
    assert "…" not in p.stdout
    for header in ("J_measure (S1)", "J_real (S1)", "accuracy (S1)", "J_flow (ccfair)", "acc. J_flow (ccfair)"):
        assert header in p.stdout
