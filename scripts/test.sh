#!/usr/bin/env bash
# Install ccfair with its test dependencies into the project-local virtual environment .venv
# (scripts/venv.sh: an editable install, as scripts/example.sh makes), then run every test
# (Rust and Python). Each step says what it does before it starts.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
# System packages some tests need, installed only when missing and only as root with apt-get
# (each says so before it starts); without them those tests skip, saying why.
if ! command -v chromium >/dev/null 2>&1; then
  # headless Chromium renders the HTML report in tests/test_report.py
  apt_install "headless Chromium for the report's browser test" chromium ||
    echo "note: chromium is not installed; the report's browser test will be skipped" >&2
fi
if ! command -v ip >/dev/null 2>&1; then
  apt_install "iproute2's ip for the testbed tests" iproute2 || echo "note: no ip command; the testbed tests will be skipped" >&2
fi
if ! command -v nft >/dev/null 2>&1; then
  apt_install "nftables' nft for the remote-URL testbed tests" nftables ||
    echo "note: no nft command; the remote-URL tests will be skipped" >&2
fi
ensure_venv
install_ccfair test
# Habits: formatting, lints and a one-way import graph (config in pyproject.toml, Cargo.toml, rustfmt.toml).
say "formatting, lints and the import graph"
cargo fmt --all --check
"$VENV/bin/python" -m ruff check python tests scripts bench build_backend
"$VENV/bin/python" -m ruff format --check python tests scripts bench build_backend
"$VENV/bin/python" scripts/check_imports.py
say "mypy: the package's types (python/ccfair, settings in pyproject.toml)"
"$VENV/bin/python" -m mypy
say "cargo clippy (lints of every Rust target)"
cargo clippy --workspace --all-targets -- -D warnings
say "cargo test: the simulator's and the bottleneck's Rust tests (their own release build)"
cargo test --release -p ccfair-sim -p ccfair-bottleneck
say "cargo test: the debug assertions' own tests (packet.rs: a field read on the wrong kind of packet panics; a debug build)"
cargo test -p ccfair-sim --lib packet::
install_bpf_ports    # the testbed's BPF congestion controls (apt: clang, libbpf-dev, bpftool), built into the cache
say "pytest: the Python tests"
"$VENV/bin/python" -m pytest -q
