"""When flow A's flight first overflows the path again after its slow start, and what came before,
from bottleneck slot logs (docs/linux-ports.md "Veno against CUBIC: the phase CUBIC meets").

    sudo python3 bench/fidelity_slots.py --set kernel-ccas-loss --point "veno/cubic 20M 100ms 1bdp" \\
        --seed N --testbed --out K_N.csv > K_N.txt
    python3 bench/veno_bpf/second_overflow.py K_*.csv [--early-s 1.4] [--lead-ms 60] [--late-ms 0.5]

Per log: B's share (the JSON line fidelity_slots.py printed, in LOG.txt next to LOG.csv, when
present), flow A's drop clusters before 5 s (drops within 50 ms of the previous one; those starting within 0.3 s of the
first are its slow-start overshoot), and the
bottleneck's stalls (frames its poll read more than `--late-ms` after they were due) between 0.85 s
and A's second cluster, and in the `--lead-ms` before it. A second cluster before `--early-s` is
"early": the flight that A's slow start left (its ssthresh) overflowed the path; after it, A grew
first. Then B's mean share per kind. Times are from the log's first frame.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
from pathlib import Path

ACK = 2**32 - 1  # queue_before of a testbed record of an ACK
CLUSTER_GAP_S = 0.05
#: Clusters starting within this after the first belong to the slow-start overshoot.
SLOW_START_EPISODE_S = 0.3


def load(path: Path) -> list[dict[str, int]]:
    with path.open() as f:
        rows = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(f)]
    rows = [r for r in rows if r["queue_before"] != ACK]
    if not rows or "now_ns" not in rows[0]:
        raise SystemExit(f"{path}: not a testbed slot log (needs due_ns and now_ns columns)")
    rows.sort(key=lambda r: r["due_ns"])
    return rows


def clusters(times: list[float]) -> list[list[float]]:
    out: list[list[float]] = []
    for t in times:
        if out and t - out[-1][-1] < CLUSTER_GAP_S:
            out[-1].append(t)
        else:
            out.append([t])
    return out


def share_b(path: Path) -> float | None:
    txt = path.with_suffix(".txt")
    if not txt.exists():
        return None
    for line in txt.read_text().splitlines():
        if line.startswith("{") and "shares" in line:
            return float(json.loads(line)["shares"][1])
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+", type=Path)
    ap.add_argument("--early-s", type=float, default=1.4)
    ap.add_argument("--lead-ms", type=float, default=60.0)
    ap.add_argument("--late-ms", type=float, default=0.5)
    a = ap.parse_args()
    kinds: dict[str, list[float]] = {"early": [], "late": []}
    for path in a.logs:
        rows = load(path)
        t0 = rows[0]["due_ns"]

        def at(r: dict[str, int], t0: int = t0) -> float:
            return (r["due_ns"] - t0) / 1e9

        cl = clusters([at(r) for r in rows if not r["admitted"] and r["port"] == 0 and at(r) < 5.0])
        later = [c for c in cl if cl and c[0] > cl[0][0] + SLOW_START_EPISODE_S]
        if not later:
            print(f"{path.name}: no overflow of A's after its slow start before 5 s")
            continue
        second = later[0][0]
        stalls = [at(r) for r in rows if 0.85 <= at(r) < second and r["now_ns"] - r["due_ns"] > a.late_ms * 1e6]
        lead = [t for t in stalls if t >= second - a.lead_ms / 1000]
        kind = "early" if second < a.early_s else "late"
        b = share_b(path)
        if b is not None:
            kinds[kind].append(b)
        print(
            f"{path.name}: B {b if b is None else round(b, 3)}; A's drop clusters: "
            + " ".join(f"{c[0]:.3f} ({len(c)})" for c in cl)
            + f"; second {kind}; stalls from 0.85 s {len(stalls)}, in the {a.lead_ms:.0f} ms before it {len(lead)}"
        )
    for kind, bs in kinds.items():
        if bs:
            print(f"{kind}: {len(bs)} runs, B {min(bs):.3f}-{max(bs):.3f}, mean {statistics.fmean(bs):.3f}")


if __name__ == "__main__":
    main()
