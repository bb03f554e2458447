"""Start-up stays light: ``import ccfair`` and ``ccfair --help`` load no pandas, pyarrow or matplotlib.

Behaviour, not timing (timings are in docs/benchmarks.md): each check runs in
a fresh interpreter and looks at ``sys.modules`` afterwards. Every module that
defines a command must import its heavy dependencies inside the command
(python/ccfair/cli.py, docstring), so a new sub-command breaks these tests
when it imports pandas at the top.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("pandas", "pyarrow", "matplotlib")


def _loaded_after(code: str) -> dict[str, bool]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {HEAVY!r} + ('numpy', 'pydantic')}}))"
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_import_ccfair_loads_no_heavy_library():
    loaded = _loaded_after("import ccfair")
    assert not any(loaded[m] for m in HEAVY), loaded
    assert not loaded["pydantic"], "import ccfair should not build the spec models"


def _help_loads(*argv: str) -> dict[str, bool]:
    return _loaded_after(f"from ccfair.cli import main\nmain({list(argv)!r})")


@pytest.mark.parametrize("argv", [["--help"], ["list", "--help"], ["preset", "--help"], ["run", "--help"], ["sweep", "--help"]])
def test_help_loads_no_heavy_library(argv):
    loaded = _help_loads(*argv)
    assert not any(loaded[m] for m in HEAVY), loaded


def test_every_subcommand_help_loads_no_heavy_library():
    """Walk the whole command tree (others' new commands included) and ask each for --help."""
    import typer
    from ccfair.cli import app

    paths: list[list[str]] = []

    def walk(cmd, prefix):
        for name, sub in getattr(cmd, "commands", {}).items():
            paths.append([*prefix, name])
            walk(sub, [*prefix, name])

    walk(typer.main.get_command(app), [])
    assert ["run"] in paths
    script = "import io, contextlib\nfrom ccfair.cli import main\n" + "\n".join(
        f"with contextlib.redirect_stdout(io.StringIO()):\n    main({[*p, '--help']!r})" for p in paths
    )
    loaded = _loaded_after(script)
    assert not any(loaded[m] for m in HEAVY), (loaded, paths)


def test_run_json_summary_needs_no_pandas():
    """`ccfair run FILE --json` prints the summary without building pandas tables."""
    pytest.importorskip("ccfair._core")
    loaded = _loaded_after(
        "import io, contextlib\nfrom ccfair.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['run', 'examples/s0-cubic-vs-bbr.toml', '--json']) == 0"
    )
    assert not loaded["pandas"] and not loaded["pyarrow"], loaded


def _run_script(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)


def _script_words(code: str) -> list[str]:
    """The words a Python script printed; it must exit with status 0."""
    p = _run_script(code)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def test_command_body_runs_with_the_collector_on():
    """The `ccfair` process pauses the garbage collector only for start-up (cli.main): a command's
    own work (sweeps, plots: pandas and matplotlib make reference cycles) runs with it on."""
    words = _script_words(
        "import gc, sys\nfrom ccfair import cli\n"
        "@cli.list_app.command('gc-probe')\ndef _probe():\n    print('enabled', gc.isenabled())\n"
        "sys.argv = ['ccfair', 'list', 'gc-probe']\ncli.main()"
    )
    assert words == ["enabled", "True"], words


def test_main_with_argv_leaves_the_collector_alone():
    """`main(argv)` (tests, embedding) neither pauses nor freezes the caller's collector."""
    words = _script_words(
        "import gc, io, contextlib\nfrom ccfair.cli import main\nbefore = gc.get_freeze_count()\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    assert main(['list', 'qdiscs']) == 0\n"
        "print(gc.isenabled(), gc.get_freeze_count() == before)"
    )
    assert words == ["True", "True"], words


def test_process_exit_status_kept():
    """main() freezes the heap before exiting; the status is still the command's (2: bad input)."""
    p = _run_script("import sys\nfrom ccfair.cli import main\nsys.argv = ['ccfair', 'run', 'no-such-file.toml']\nmain()")
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr.startswith("error: "), p.stderr
