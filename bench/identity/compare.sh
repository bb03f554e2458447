#!/bin/bash
# Bit-identity check for simulator optimisations: run every RunConfig JSON in
# this directory through two ccfair-bench binaries (`json FILE`) and compare
# the results, ignoring the wall-time field `wall_ns`.
#   bench/identity/compare.sh OLD_BINARY NEW_BINARY
# (e.g. copy target/release/ccfair-bench aside before a change, rebuild, compare).
# A result field only one binary has (a field added to RunResult or to its
# flows) is named once and left out of the comparison; every field both have must be equal.
# The configs cover drop-tail, CoDel, FQ-CoDel, PIE, RED, STEP, DualPI2, CSAQM,
# RRMQS and FQ-DRR; ECN (classic, scalable), DCCP/CCID 2, finite and rate-capped
# flows, random loss, start jitter, traces, analysis windows, 2 to 2000 flows,
# host noise (also on the shared lines of 2000 flows: reno2000_10G_05s_defaults.json, the
# defaults of an experiment file), and grid-like 50 Mbit/s runs (grid_*.json: CoDel, FQ-CoDel,
# paced CUBIC).
set -u
old=$(readlink -f "$1"); new=$(readlink -f "$2"); dir=$(dirname "$(readlink -f "$0")")
status=0
for f in "$dir"/*.json; do
  "$old" json "$f" >/tmp/compare_old.$$; "$new" json "$f" >/tmp/compare_new.$$
  python3 - "$(basename "$f")" /tmp/compare_old.$$ /tmp/compare_new.$$ <<'PY' || status=1
import json, sys
name, a, b = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
only = set()


def same(x, y, path):
    """Equal but for keys one side lacks (named in `only`) and the wall time."""
    if isinstance(x, dict) and isinstance(y, dict):
        only.update(f"{path}{k}" for k in set(x) ^ set(y))
        keys = (set(x) & set(y)) - {"wall_ns"}
        return all(same(x[k], y[k], f"{path}{k}.") for k in keys)
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        return all(same(u, v, path.rstrip(".") + "[]." ) for u, v in zip(x, y))
    return x == y


ok = same(a, b, "")
print(("same  " if ok else "DIFF  ") + name + (f"  (in one result only: {', '.join(sorted(only))})" if only else ""))
sys.exit(0 if ok else 1)
PY
done
rm -f /tmp/compare_old.$$ /tmp/compare_new.$$
exit $status
