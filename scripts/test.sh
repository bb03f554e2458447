#!/usr/bin/env bash
# Install ccfair with its test dependencies, then run every test (Rust and Python).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check -e '.[test]'
cargo test --release -p ccfair-sim
python3 -m pytest -q
