#!/usr/bin/env bash
# Install ccfair with its test dependencies, then run every test (Rust and Python).
set -euo pipefail
cd "$(dirname "$0")/.."
# The testbed tests (tests/test_testbed.py) need iproute2's `ip`; install it if missing and we can.
if ! command -v ip >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq iproute2 >/dev/null
fi
python3 -m pip install -q --disable-pip-version-check -e '.[test]'
cargo test --release -p ccfair-sim -p ccfair-bottleneck
cargo build --release -p ccfair-bottleneck   # the testbed's userspace bottleneck
python3 -m pytest -q
