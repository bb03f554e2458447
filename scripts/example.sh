#!/usr/bin/env bash
# Install ccfair into the project-local virtual environment .venv (scripts/venv.sh), with the
# testbed's bottleneck binary, then run the S0 base case (CUBIC vs BBR) on the simulator.
# Afterwards use .venv/bin/ccfair (or activate: . .venv/bin/activate).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
ensure_venv
"$VENV/bin/python" -m pip install -q --disable-pip-version-check .
install_bottleneck
install_bpf_ports
"$VENV/bin/ccfair" run examples/s0-cubic-vs-bbr.toml --out results/s0-base "$@"
