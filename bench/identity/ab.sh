#!/bin/bash
# Interleaved A/B wall time of two ccfair-bench binaries on a shared, noisy machine:
# ROUNDS rounds, each runs `repeat RUNS [CONFIG]` (median of RUNS runs) with A and B,
# alternating which goes first; prints the medians of the per-round medians and the
# median of the per-round ratios B/A.
#   bench/identity/ab.sh BIN_A BIN_B ROUNDS RUNS [CONFIG.json]   (no config: the S0 base case)
A=$1; B=$2; R=$3; N=$4; C=${5:-}
for r in $(seq 1 "$R"); do
  if (( r % 2 )); then a=$($A repeat "$N" $C | awk '{print $4}'); b=$($B repeat "$N" $C | awk '{print $4}')
  else b=$($B repeat "$N" $C | awk '{print $4}'); a=$($A repeat "$N" $C | awk '{print $4}'); fi
  echo "$a $b"
done | python3 -c "
import sys, statistics as st
rows = [tuple(map(float, l.split())) for l in sys.stdin]
a = [x for x, _ in rows]; b = [y for _, y in rows]
print(f'rounds {len(rows)}  median A {st.median(a):.3f} ms  median B {st.median(b):.3f} ms  '
      f'min A {min(a):.3f}  min B {min(b):.3f}  median ratio B/A {st.median([y / x for x, y in rows]):.3f}')"
