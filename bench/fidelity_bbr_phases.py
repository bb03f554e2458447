"""BBR's PROBE_RTT phases and long-term (policer) stretches from per-flow traces, on either side.

    python3 bench/fidelity_bbr_phases.py --point ID [--set map] [--seeds 5] [--runs N] [--jobs 2]
    python3 bench/fidelity_bbr_phases.py DIR [DIR ...] [--save FILE.jsonl]
    python3 bench/fidelity_bbr_phases.py --ss FILE.jsonl [...] [--save FILE.jsonl]

With `--point`: the simulator at the point once per counted kernel run and simulator seed, as
bench/fidelity_many_seeds.py draws them (seed s + 1000 k, that run's measured flow starts), traced
every 10 ms. With DIRs: the traces `bench/fidelity_trace.py --out DIR` stored (DIR/sim, DIR/testbed,
or a directory holding trace.parquet). Per run, B's share and, for each BBR flow, from cwnd and
pacing rate alone (so the kernel's TCP_INFO traces read the same way):

- its PROBE_RTT dips (cwnd at 4 packets or less, one dip per second) and, between them, the median
  cwnd: BBR's cwnd is 2 x bw x min_rtt, so a phase whose PROBE_RTT sampled a drained queue holds a
  small cwnd for the next 10 s and one that sampled a standing queue a large one;
- its long-term stretches: the pacing rate unchanged for `--flat` seconds or more. In PROBE_BW the
  pacing gain changes every min_rtt (5/4, 3/4, then 1 for six phases) and the bandwidth filter
  moves; while `lt_bw` is in use (Linux tcp_bbr.c `bbr_lt_bw_sampling`, 48 rounds) the rate is
  lt_bw x 1.0, constant.

With DIRs each side's RTOs per flow are printed too (the testbed's: nstat TCPTimeouts of the
sender's namespace). `--ss`: traces of bench/fidelity_ss_trace.py, which hold BBR's own min_rtt
(`mrtt`): per BBR flow its PROBE_RTT dips and the min_rtt 0.6-1.2 s after each. `--save`: the
same per run as JSON lines (bench/data/bbr-phases-testbed-2026-11-30.jsonl: five testbed runs of
`fidelity_trace.py --testbed`, five of `fidelity_ss_trace.py`, whose rows carry B's share and the
drops as that script printed them).
"""

from __future__ import annotations

import argparse
import json
import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
from common import fidelity_todo


def probe_rtt_dips(t: list[float], cwnd: list[int]) -> list[float]:
    """Times where cwnd falls to 4 packets or less, at most one a second."""
    dips: list[float] = []
    for ti, c in zip(t, cwnd):
        if c <= 4 and (not dips or ti - dips[-1] > 1.0):
            dips.append(ti)
    return dips


def phase_cwnds(t: list[float], cwnd: list[int], dips: list[float]) -> list[int]:
    """Median cwnd between consecutive PROBE_RTT dips (after the first half second of each)."""
    edges = dips + [t[-1]]
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        inside = [c for ti, c in zip(t, cwnd) if a + 0.5 < ti < b - 0.1]
        if len(inside) >= 10:
            out.append(round(statistics.median(inside)))
    return out


def flat_stretches(t: list[float], rate: list[int], min_s: float) -> list[tuple[float, float, float]]:
    """(start s, end s, Mbit/s) of each stretch of one unchanged nonzero pacing rate lasting ``min_s`` or more."""
    out, i = [], 0
    while i < len(rate):
        j = i
        while j + 1 < len(rate) and rate[j + 1] == rate[i]:
            j += 1
        if rate[i] > 0 and t[j] - t[i] >= min_s:
            out.append((t[i], t[j], rate[i] / 1e6))
        i = j + 1
    return out


def phases(trace: pd.DataFrame, bbr_flows: list[str], flat_s: float) -> dict[str, dict[str, Any]]:
    """Per BBR flow: PROBE_RTT dips (s), median cwnd between them, long-term stretches (s, s, Mbit/s)."""
    out = {}
    for name in bbr_flows:
        g = trace[trace["flow"] == name]
        t, c, r = g["time_s"].tolist(), g["cwnd_pkts"].tolist(), g["pacing_rate_bps"].tolist()
        dips = probe_rtt_dips(t, c)
        out[name] = {
            "probe_rtt_s": [round(d, 2) for d in dips],
            "phase_cwnd": phase_cwnds(t, c, dips),
            "long_term": [(round(a, 2), round(b, 2), round(m, 3)) for a, b, m in flat_stretches(t, r, flat_s)],
        }
    return out


def describe(flows: dict[str, dict[str, Any]]) -> str:
    """One part per BBR flow: dips, phase cwnds (or min_rtt after each dip), long-term stretches."""
    parts = []
    for name, f in flows.items():
        text = f"{name}: PROBE_RTT {' '.join(f'{d:.1f}' for d in f['probe_rtt_s'])}"
        if "phase_cwnd" in f:
            text += f"; phase cwnd {f['phase_cwnd']}"
        if "min_rtt_after_ms" in f:
            text += f"; min_rtt after {f['min_rtt_after_ms']} ms"
        if "long_term" in f:
            text += "; long-term " + (" ".join(f"{a:.1f}-{b:.1f}s@{m:.2f}" for a, b, m in f["long_term"]) or "-")
        parts.append(text)
    return " | ".join(parts)


def ss_phases(path: Path) -> dict[str, dict[str, Any]]:
    """Per flow of a bench/fidelity_ss_trace.py trace that has BBR's min_rtt: PROBE_RTT dips (s
    after its first data) and BBR's min_rtt 0.6-1.2 s after each."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out = {}
    for flow in sorted({r["flow"] for r in rows}):
        f = [r for r in rows if r["flow"] == flow and r.get("delivered", 0) > 1 and "mrtt_ms" in r]
        if not f:
            continue
        t0 = f[0]["t"]
        dips = probe_rtt_dips([r["t"] - t0 for r in f], [int(r["cwnd"]) for r in f])
        after = [[r["mrtt_ms"] for r in f if d + 0.6 < r["t"] - t0 < d + 1.2][:1] for d in dips]
        out[f"flow {flow}"] = {"probe_rtt_s": [round(d, 2) for d in dips], "min_rtt_after_ms": [round(a[0]) if a else None for a in after]}
    return out


def sim_run(raw: dict[str, Any], seed: int, starts_s: list[float] | None, ts_epoch_ns: int | None) -> tuple[float, pd.DataFrame]:
    """B's share and the trace of one simulator run with the kernel run's measured starts and
    timestamp clock (as ccfair.fidelity.compare._sim_one)."""
    from ccfair.api import simulate
    from ccfair.fidelity.points import group_shares
    from ccfair.result import Result
    from ccfair.spec import Spec

    spec = Spec.from_dict(raw | {"trace": True, "sample": "10ms"})
    config = spec.to_run_config(seed)
    for fc, start in zip(config["flows"], starts_s or []):
        fc["start_ns"], fc["start_jitter_ns"] = max(0, round(start * 1e9)), 0
    if ts_epoch_ns is not None:
        config["tcp_timestamp_epoch_ns"] = int(ts_epoch_ns)
    res = Result.from_raw(spec, config, simulate(config, spec))
    return group_shares(spec, res.summary)[1], res.trace


def bbr_flow_names(spec: Any) -> list[str]:
    """Names of the spec's BBR flows, in flow order."""
    cfg = spec.to_run_config(1)
    return [f["name"] for f in cfg["flows"] if f.get("cca") == "bbr"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--point")
    ap.add_argument("--set", dest="sets", action="append")
    ap.add_argument("--data", default="data/fidelity")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--runs", type=int, help="only the first N counted kernel runs")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--flat", type=float, default=2.0, help="seconds of one pacing rate that make a long-term stretch")
    ap.add_argument("--ss", action="append", default=[], help="a bench/fidelity_ss_trace.py --out FILE")
    ap.add_argument("--save", help="append one JSON line per run here")
    args = ap.parse_args()
    rows = sim_rows(args) if args.point else []
    for d in args.dirs:
        for sub in [Path(d)] if (Path(d) / "trace.parquet").exists() else [Path(d) / "sim", Path(d) / "testbed"]:
            if (sub / "trace.parquet").exists():
                rows.append(stored_run(sub, args.flat))
                rto = " ".join(f"{k} {v}" for k, v in rows[-1]["rto"].items())
                print(f"{sub}: B {rows[-1]['share_b']:.3f}, RTOs {rto} | {describe(rows[-1]['flows'])}")
    for path in args.ss:
        flows = ss_phases(Path(path))
        print(f"{path}: {describe(flows)}")
        rows.append({"source": Path(path).name, "side": "testbed", "flows": flows})
    if args.save:
        with open(args.save, "a") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in rows)


def sim_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The simulator at ``args.point``, K seeds per counted kernel run: one printed line and row per run."""
    (point, runs), *_ = fidelity_todo(args.sets, Path(args.data), [args.point])
    spec, runs = point.spec(), runs[: args.runs]
    jobs = [(point.raw(), r["seed"] + 1000 * k, r.get("flow_start_s"), r.get("ts_epoch_ns")) for r in runs for k in range(args.seeds)]
    rows = []
    with ProcessPoolExecutor(max(1, args.jobs)) as ex:
        for (_, seed, _, _), (share, trace) in zip(jobs, ex.map(sim_run, *zip(*jobs))):
            flows = phases(trace, bbr_flow_names(spec), args.flat)
            print(f"seed {seed}: B {share:.3f} | {describe(flows)}")
            rows.append({"point": args.point, "side": "sim", "seed": seed, "share_b": round(share, 4), "flows": flows})
    return rows


def stored_run(sub: Path, flat_s: float) -> dict[str, Any]:
    """The phases of a run stored by bench/fidelity_trace.py --out, its B share and RTOs per flow."""
    from ccfair.fidelity.points import group_shares
    from ccfair.result import Result

    res = Result.load(sub)
    spec = res.spec
    return {
        "point": spec.name,
        "side": sub.name,
        "seed": res.summary.get("seed"),
        "share_b": round(group_shares(spec, res.summary)[1], 4),
        "rto": dict(zip(res.flows["name"], (int(x) for x in res.flows["rto"]))),
        "flows": phases(res.trace, bbr_flow_names(spec), flat_s),
    }


if __name__ == "__main__":
    main()
