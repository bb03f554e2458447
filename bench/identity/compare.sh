#!/bin/bash
# Bit-identity check for simulator optimisations: run every RunConfig JSON in
# this directory through two ccfair-bench binaries (`json FILE`) and compare
# the results, ignoring the wall-time field `wall_ns`.
#   bench/identity/compare.sh OLD_BINARY NEW_BINARY
# (e.g. copy target/release/ccfair-bench aside before a change, rebuild, compare).
# The configs cover drop-tail, CoDel, FQ-CoDel, PIE, RED, STEP, DualPI2, CSAQM,
# RRMQS and FQ-DRR; ECN (classic, scalable), DCCP/CCID 2, finite and rate-capped
# flows, random loss, start jitter, traces, analysis windows, 2 to 2000 flows,
# host noise (also on the shared lines of 2000 flows: reno2000_10G_05s_defaults.json, the
# defaults of an experiment file), and grid-like 50 Mbit/s runs (grid_*.json: CoDel, FQ-CoDel,
# paced CUBIC).
set -u
old=$(readlink -f "$1"); new=$(readlink -f "$2"); dir=$(dirname "$(readlink -f "$0")")
strip='import json,sys; d=json.load(sys.stdin); d.pop("wall_ns"); print(json.dumps(d, sort_keys=True))'
status=0
for f in "$dir"/*.json; do
  a=$("$old" json "$f" | python3 -c "$strip"); b=$("$new" json "$f" | python3 -c "$strip")
  if [ "$a" == "$b" ]; then echo "same  $(basename "$f")"; else echo "DIFF  $(basename "$f")"; status=1; fi
done
exit $status
