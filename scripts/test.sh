#!/usr/bin/env bash
# Install ccfair with its test dependencies into the project-local virtual environment .venv
# (scripts/venv.sh), then run every test (Rust and Python).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
# Headless Chromium for the HTML report test (tests/test_report.py), from Debian's packages;
# only when it is missing and apt-get exists. If it cannot be installed, that test skips saying why.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 \
    || echo "note: could not install chromium; the report's browser test will be skipped" >&2
fi
# The testbed tests (tests/test_testbed.py) need iproute2's `ip`; install it if missing and we can.
if ! command -v ip >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq iproute2 >/dev/null
fi
# The remote-URL test (tests/test_testbed_http.py) needs nftables' `nft` for the NAT; same rule.
if ! command -v nft >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  { apt-get update -qq && apt-get install -y -qq nftables >/dev/null; } \
    || echo "note: could not install nftables; the remote-URL tests will be skipped" >&2
fi
ensure_venv
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -e '.[test]'
# Habits: formatting, lints and a one-way import graph (config in pyproject.toml, Cargo.toml, rustfmt.toml).
cargo fmt --all --check
"$VENV/bin/python" -m ruff check python tests scripts bench
"$VENV/bin/python" -m ruff format --check python tests scripts bench
"$VENV/bin/python" scripts/check_imports.py
cargo clippy --workspace --all-targets -- -D warnings
cargo test --release -p ccfair-sim -p ccfair-bottleneck
install_bottleneck   # the testbed's userspace bottleneck, into .venv/bin
install_bpf_ports    # the testbed's BPF congestion controls (apt: clang, libbpf-dev, bpftool), built into the cache
"$VENV/bin/python" -m pytest -q
