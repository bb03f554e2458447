"""Docs and code describe the software, not its work history.

The project's rule: docs are reference, not a diary; history lives in git. So no doc,
comment or docstring names a work period ("session 7"), an issue number ("issue 16"), a
branch or a local path of a developer's machine, and reference docs stay short enough to
read (each doc at most 800 lines; the two long-running measurement docs at most 600).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Work history: numbered work periods and issues, branch names in prose, local paths.
HISTORY = re.compile(r"\b[Ii]ssues? #?\d+|\b[Ss]essions? \d+|\bthis session\b|\bon branch `|/work/|/home/[a-z]")
#: Where the rule applies: docs, README, Rust, Python, shell and TOML files under version control.
GLOBS = ["README.md", "docs/*.md", "*.rs", "*.py", "*.sh", "*.toml"]
MAX_DOC_LINES = 800
MAX_LINES = {"docs/benchmarks.md": 600, "docs/fidelity.md": 600}


def _tracked() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", *GLOBS], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / p for p in out.splitlines() if (ROOT / p).is_file()]


def test_no_doc_or_code_line_carries_work_history():
    found = []
    for path in _tracked():
        if path.name == Path(__file__).name:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if HISTORY.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:120]}")
    assert not found, "work history in docs/code (history lives in git):\n" + "\n".join(found[:40])


def test_reference_docs_stay_readable():
    long = []
    for path in sorted((ROOT / "docs").glob("*.md")):
        rel = str(path.relative_to(ROOT))
        limit = MAX_LINES.get(rel, MAX_DOC_LINES)
        n = len(path.read_text().splitlines())
        if n > limit:
            long.append(f"{rel}: {n} lines > {limit}")
    assert not long, "; ".join(long)
