"""What the bench scripts share: the checkout's root, one ``ccfair`` command in a child process
with its JSON output, and the processes of a session (the kill benchmarks count what is left).

A script in bench/ imports it as ``common`` (its own directory is on ``sys.path``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def ccfair_json(args: list[str]) -> tuple[dict[str, Any] | None, str]:
    """``python -m ccfair ARGS`` (a command given ``--json``): (its output, "") or, when it
    fails, (None, the end of its stderr)."""
    p = subprocess.run([sys.executable, "-m", "ccfair", *args], capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()[-300:]
    return json.loads(p.stdout), ""


def session_of(pid: int) -> int | None:
    """The session id of process ``pid``; None once it is gone or a zombie (/proc/PID/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return None if fields[0] == "Z" else int(fields[3])
    except (OSError, IndexError, ValueError):
        return None


def session_processes(sid: int) -> set[int]:
    """The live processes of session ``sid``."""
    return {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and session_of(int(p.name)) == sid}


def fidelity_outliers(points: list[dict[str, Any]]) -> tuple[int, int]:
    """Points of a fidelity comparison where the two sides disagree on utilisation and on mean
    queue (the criteria of ccfair.fidelity.compare.outside)."""
    from ccfair.fidelity.compare import outside

    util_out, queue_out = outside(points)
    return len(util_out), len(queue_out)
