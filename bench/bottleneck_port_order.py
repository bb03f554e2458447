"""The testbed bottleneck's sender-port read order against flow B's share (root).

    sudo python3 bench/bottleneck_port_order.py --set map --point "bbr/bbr 20M 50ms 1bdp" --seeds 4,5,6 [--orders port,arrival]
        [--out FILE.jsonl]
    python3 bench/bottleneck_port_order.py --table FILE.jsonl

ccfair-bottleneck drains its sender ports one after the other on each pass of
its loop, so frames that arrived during one pass are enqueued in port order
and, with one free place in the queue, the first port's frame takes it:
`port` (the default) reads port 0, flow A's sender, first on every pass;
`rotate` starts one port later each pass; `arrival` stamps each frame with the kernel's receive time and enqueues the due
frames of all ports in that order (the frames' true order); the run's
`testbed.bottleneck_order` (stored runs before the name "port" say "fixed").
Per seed this runs the point on the testbed with each order in turn (same
machine load for both) and prints B's share and each flow's retransmissions
per delivered segment; with --out one JSON line per run; --table the means.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from ccfair.fidelity.points import group_shares, load_set

ORDERS = ("port", "rotate", "arrival")
MSS_BYTES = 1448


def run(cmd: list[str], order: str) -> dict[str, Any]:
    argv = [sys.executable, "-m", "ccfair", *cmd[1:], "--set", f"testbed.bottleneck_order={order}"]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError((p.stderr.strip().splitlines() or ["no output"])[-1])
    summary: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    return summary


def loss_rates(summary: dict[str, Any]) -> list[float]:
    """Each flow's retransmissions per delivered segment (whole run)."""
    return [f["retransmissions"] / max(1.0, f["bytes"] / MSS_BYTES) for f in summary["flows"]]


def table(path: Path) -> None:
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        rows.setdefault((r["point"], r["order"]), []).append(r)
    print("| point | order | runs | B's share, mean (runs) | retransmission rate A / B |")
    print("|---|---|---|---|---|")
    for (point, order), rs in sorted(rows.items()):
        shares = [r["share_b"] for r in rs]
        la = statistics.fmean(r["loss_rates"][0] for r in rs)
        lb = statistics.fmean(r["loss_rates"][-1] for r in rs)
        runs = ", ".join(f"{s:.3f}" for s in shares)
        print(f"| {point} | {order} | {len(rs)} | {statistics.fmean(shares):.3f} ({runs}) | {la:.3f} / {lb:.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", dest="set_name", default="map")
    ap.add_argument("--point")
    ap.add_argument("--seeds", default="4,5,6")
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--orders", default="port,rotate", help=f"comma-separated, of {', '.join(ORDERS)}")
    ap.add_argument("--out")
    ap.add_argument("--table")
    a = ap.parse_args()
    if a.table:
        table(Path(a.table))
        return
    if not a.point:
        ap.error("--point is required unless --table")
    if bad := [o for o in a.orders.split(",") if o not in ORDERS]:
        ap.error(f"--orders: {bad[0]!r} is not one of {', '.join(ORDERS)}")
    point = next((p for p in load_set(a.set_name, Path(a.data)).points if p.id == a.point), None)
    if point is None:
        ap.error(f"--point: {a.point!r} is not a point of set {a.set_name!r}")
    spec = point.spec()
    for seed in (int(s) for s in a.seeds.split(",")):
        for order in a.orders.split(","):
            summary = run(point.command(seed), order)
            rec = {
                "point": point.id,
                "order": order,
                "seed": seed,
                "share_b": group_shares(spec, summary)[1],
                "loss_rates": loss_rates(summary),
                "utilization": summary["utilization"],
            }
            print(json.dumps(rec), flush=True)
            if a.out:
                with open(a.out, "a") as f:
                    f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
