#!/bin/bash
# Profile-guided build of ccfair-bench (docs/benchmarks.md, "Simulator core"):
# an instrumented build, training runs (every
# bench/identity/*.json once, the S0 base case 5 times), merged profile, optimised build.
# PGO changes code layout and branch order only, so results stay bit-identical
# (check: bench/identity/compare.sh PLAIN_BINARY OUT_BINARY).
#   bench/pgo.sh OUT_BINARY
# Needs llvm-profdata of rustc's LLVM major version (`rustc -vV`; Debian: apt install
# llvm-NN), or LLVM_PROFDATA=/path/to/llvm-profdata.
set -eu
out=$(realpath -m "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
prof=${LLVM_PROFDATA:-$(command -v "llvm-profdata-$major" || echo "/usr/lib/llvm-$major/bin/llvm-profdata")}
if [ ! -x "$prof" ]; then
  echo "bench/pgo.sh: llvm-profdata for LLVM $major not found; install llvm-$major or set LLVM_PROFDATA" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
RUSTFLAGS="-Cprofile-generate=$work/raw" CARGO_TARGET_DIR="$work/gen" \
  cargo build --release -q -p ccfair-bench
for f in bench/identity/*.json; do "$work/gen/release/ccfair-bench" json "$f" >/dev/null; done
"$work/gen/release/ccfair-bench" repeat 5 >/dev/null
"$prof" merge -o "$work/merged.profdata" "$work"/raw/*.profraw
RUSTFLAGS="-Cprofile-use=$work/merged.profdata" CARGO_TARGET_DIR="$work/use" \
  cargo build --release -q -p ccfair-bench
cp "$work/use/release/ccfair-bench" "$out"
echo "bench/pgo.sh: wrote $out"
