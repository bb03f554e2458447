"""The PEP 517 build backend of ccfair: maturin, plus the testbed's bottleneck binary.

maturin builds one Rust target per wheel (the ``ccfair._core`` extension); it cannot
yet ship a binary target beside a PyO3 extension (PyO3/maturin#368). The testbed also
needs ``ccfair-bottleneck`` (crates/ccfair-bottleneck), a standalone executable run
inside a network namespace. This backend builds it with cargo (same workspace, same
release profile and flags as the extension, so the shared ``ccfair-sim`` crate is
compiled once per configuration) and puts it in maturin's wheel data directory
(``[tool.maturin] data``): its ``scripts/`` entries are installed by pip into the
environment's scripts directory (``.venv/bin``), next to the ``ccfair`` command, where
``ccfair.testbed.runner.find_bottleneck`` looks first. Everything else is maturin's.

Why a thin wrapper and not a second package, a Python launcher or a build.rs: one
``pip install .`` (or ``pip install -e .``) gives the whole tool; the bottleneck stays
a native executable (a per-frame forwarding loop, no interpreter in the namespace);
maturin's own sources, metadata and editable mode are untouched.

A wheel also records the checkout's git commit (when the source is a git checkout and
git is installed) in ``ccfair/_build_info.json`` (wheel data, ``platlib``) for
``ccfair --version`` and the results' metadata (ccfair.provenance); an editable install
reads it from its checkout when asked.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import maturin
from maturin import (  # noqa: F401  (re-exported PEP 517 hooks)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
)

ROOT = Path(__file__).resolve().parent.parent
#: maturin's wheel data directory ([tool.maturin] data in pyproject.toml); generated, ignored by git.
DATA_DIR = ROOT / "target" / "wheel-data"
#: Installed into site-packages/ccfair/ by the wheel's platlib data (a non-editable install only:
#: an editable install reads the commit from its checkout at run time).
BUILD_INFO = DATA_DIR / "platlib" / "ccfair" / "_build_info.json"
BINARY = "ccfair-bottleneck"


def _say(text: str) -> None:
    sys.stderr.write(f"ccfair-build: {text}\n")
    sys.stderr.flush()


def _git_commit() -> str | None:
    """The checkout's commit: ``checkout_commit`` of ccfair/provenance.py, loaded from its file (the
    package being built is not importable here)."""
    spec = importlib.util.spec_from_file_location("ccfair_provenance", ROOT / "python" / "ccfair" / "provenance.py")
    assert spec is not None and spec.loader is not None
    provenance = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(provenance)
    return provenance.checkout_commit(ROOT)


def _write_build_info() -> None:
    commit = _git_commit()
    BUILD_INFO.parent.mkdir(parents=True, exist_ok=True)
    BUILD_INFO.write_text(json.dumps({"git_commit": commit}) + "\n", encoding="utf-8")
    _say(f"git commit: {commit or 'unknown (not a git checkout)'}")


def _build_bottleneck() -> None:
    """``cargo build --release -p ccfair-bottleneck`` into DATA_DIR/scripts."""
    cargo = os.environ.get("CARGO", "cargo")
    if shutil.which(cargo) is None:
        raise RuntimeError("cargo not found: install a Rust toolchain (https://rustup.rs) to build ccfair")
    _say(f"building {BINARY} (the testbed's userspace bottleneck) with cargo, release profile ...")
    subprocess.run([cargo, "build", "--release", "--locked", "-p", BINARY], cwd=ROOT, check=True, stdout=sys.stderr)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    built = target / "release" / BINARY
    _data_dir()
    scripts = DATA_DIR / "scripts"
    shutil.copy2(built, scripts / BINARY)
    os.chmod(scripts / BINARY, 0o755)
    _say(f"{BINARY} built; the wheel installs it into the environment's scripts directory")
    _say("building the ccfair._core extension with maturin (release profile) ...")


def _data_dir() -> None:
    """maturin checks that the data directory exists from the metadata step on."""
    (DATA_DIR / "scripts").mkdir(parents=True, exist_ok=True)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):  # noqa: ANN001, ANN201
    _data_dir()
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):  # noqa: ANN001, ANN201
    _data_dir()
    return maturin.prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, ANN201 (PEP 517 signature)
    _write_build_info()
    _build_bottleneck()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, ANN201
    shutil.rmtree(BUILD_INFO.parent.parent, ignore_errors=True)  # no site-packages/ccfair beside the checkout's
    _build_bottleneck()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
