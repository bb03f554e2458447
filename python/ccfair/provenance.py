"""Where results come from: ccfair's version and the git commit of the code that ran.

The commit is read, in order, from the checkout this package runs from (an
editable install or ``PYTHONPATH=python``: ``git rev-parse HEAD``, with
``+dirty`` when tracked files differ) or from ``_build_info.json``, which the
build backend writes into a wheel (build_backend/ccfair_build.py). It is None
when neither is known (a source tree without git). Recorded in every result
directory (``versions.json``), in a sweep's ``sweep.json`` (``versions``) and
shown by ``ccfair --version`` and the HTML report.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

__all__ = ["core_build", "git_commit", "version_line", "versions"]

_PACKAGE = Path(__file__).resolve().parent


def checkout_commit(repo: Path) -> str | None:
    """The commit of the git checkout ``repo`` (``+dirty`` when tracked files differ), or None when
    it is not one or git is missing (also the build backend's answer for a wheel, which loads
    this file: build_backend/ccfair_build.py)."""
    if not (repo / ".git").exists() or shutil.which("git") is None:
        return None
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def _from_build() -> str | None:
    try:
        return json.loads((_PACKAGE / "_build_info.json").read_text(encoding="utf-8")).get("git_commit")
    except (OSError, ValueError, AttributeError):
        return None


@lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The git commit of the running code (``+dirty`` if modified), or None when unknown."""
    return checkout_commit(_PACKAGE.parents[1]) or _from_build()  # python/ccfair -> the repository root


@lru_cache(maxsize=1)
def core_build() -> str | None:
    """The simulator build: the first 16 hex digits of the SHA-256 of the compiled ``ccfair._core``
    extension, or None when it is not built. Two builds with one digest run the same code; a
    sweep refuses to add runs of another build to its store (sweep.py ``prepare_store``)."""
    import hashlib

    try:
        from ccfair import _core
    except ImportError:
        return None
    path = getattr(_core, "__file__", None)
    if not path:
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def version_line() -> str:
    """``ccfair 0.1.0 (git 884a895c...)``: what ``ccfair --version`` prints."""
    import ccfair

    commit = git_commit()
    return f"ccfair {ccfair.__version__} (git {commit or 'commit unknown'})"


def versions() -> dict[str, str | None]:
    """Versions of ccfair (with its git commit), its simulator and the libraries that shape
    stored results (read from the installed packages' metadata: importing pandas here would
    delay a sweep's start)."""
    import platform
    import sys
    from importlib import metadata

    import ccfair

    out: dict[str, str | None] = {
        "ccfair": ccfair.__version__,
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        **{lib: metadata.version(lib) for lib in ("numpy", "pandas", "pyarrow")},
    }
    try:
        from ccfair import _core

        out["ccfair._core"] = str(getattr(_core, "__version__", "?"))
        out["ccfair._core build"] = core_build()
    except ImportError:
        out["ccfair._core"] = "not built"
    return out
