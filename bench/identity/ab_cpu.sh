#!/bin/bash
# Interleaved A/B CPU time (perf stat task-clock) of two ccfair-bench binaries on a
# shared machine: ROUNDS rounds, each runs `repeat RUNS [CONFIG]` under
# `perf stat -e task-clock` with A and B, alternating which goes first; prints the
# medians of the per-round CPU ms per run (task-clock / RUNS, so it includes reading
# the config once), the median per-round ratio B/A, data packets per CPU-second of
# each, and the load average at the end.
#   bench/identity/ab_cpu.sh BIN_A BIN_B ROUNDS RUNS [CONFIG.json]   (no config: the S0 base case)
A=$1; B=$2; R=$3; N=$4; C=${5:-}
cpu() {  # CPU ms per run, data packets
  local out; out=$(perf stat -x, -e task-clock "$1" repeat "$N" $C 2>&1 >/tmp/ab_cpu.$$)
  echo "$(echo "$out" | awk -F, '/task-clock/ {print $1 / '"$N"'}') $(awk '{print $11}' /tmp/ab_cpu.$$)"
}
for r in $(seq 1 "$R"); do
  if (( r % 2 )); then a=$(cpu "$A"); b=$(cpu "$B"); else b=$(cpu "$B"); a=$(cpu "$A"); fi
  echo "$a $b"
done | python3 -c "
import sys, statistics as st
rows = [tuple(map(float, l.split())) for l in sys.stdin]
a = [r[0] for r in rows]; b = [r[2] for r in rows]; pa, pb = rows[0][1], rows[0][3]
ma, mb = st.median(a), st.median(b)
print(f'rounds {len(rows)}  CPU/run median A {ma:.3f} ms  B {mb:.3f} ms  min A {min(a):.3f}  min B {min(b):.3f}  '
      f'median ratio B/A {st.median([y / x for x, y in zip(a, b)]):.3f}  '
      f'pkts/CPU-s A {pa / ma / 1e3:.2f} M  B {pb / mb / 1e3:.2f} M')"
rm -f /tmp/ab_cpu.$$
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
