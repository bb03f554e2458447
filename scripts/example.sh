#!/usr/bin/env bash
# Install ccfair, then run the S0 base case (CUBIC vs BBR) on the simulator.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check .
python3 -m ccfair run examples/s0-cubic-vs-bbr.toml --out results/s0-base "$@"
