#!/usr/bin/env bash
# Install ccfair into the project-local virtual environment .venv (scripts/venv.sh: an editable
# install, as scripts/test.sh makes, with the testbed's bottleneck binary), then run the S0 base
# case (CUBIC vs BBR) on the simulator. Afterwards use .venv/bin/ccfair (or . .venv/bin/activate).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/venv.sh
ensure_venv
install_ccfair
install_bpf_ports  # the testbed's BPF congestion controls (bpf: apt clang, libbpf-dev, bpftool when missing)
say "running examples/s0-cubic-vs-bbr.toml on the simulator (45 s simulated, well under a second) -> results/s0-base"
"$VENV/bin/ccfair" run examples/s0-cubic-vs-bbr.toml --out results/s0-base "$@"
