"""S3's multi-CC evaluation (Fejes et al., "On the Incompatibility of Scalable
Congestion Controls over the Internet") as a preset.

Setup (BRIEF S3): one bottleneck at ``--rate`` (1 Gbit/s), a 500 ms
("infinite") buffer, N connections, half BBRv2 (with its ECN response,
scalable ECN) and half DCTCP, all with the same base RTT (5 or 50 ms), starting
uniformly in [0, 1] s. AQMs with delay target D = K x RTT:

- ``step``: mark every arrival while the backlog exceeds D x C (qdisc step);
- ``pi2``: PI2 with target D and a 10 ms update (S3), ECT(1) marked with k p';
- ``csaqm``: the core-stateless AQM, target D, CTV every 5 ms, equal sharing
  (``--csaqm-controller pi|load``, default ``pi``);
- ``droptail``: the reference (independent of K; run once per N and RTT).

S3 runs 3 minutes; the preset's default is 10 s (window 3-10 s) to fit the
simulator's wall time (docs/in-network.md states the run length of every
table). Printed per run: relative throughput per class (class mean / (C/N)),
utilization, mean and max queueing delay relative to D, ECN-mark and drop
ratios per class (marks or drops / sent packets), and Jain's index over all
connections.

Usage: ``ccfair preset s3 [--rate 1Gbit] [--n 2,10] [--k 0.17,1] [--rtt 5,50]
[--qdiscs step,pi2,csaqm,droptail] [--duration 10s] [--seeds 1] [--jobs 1]
[--out table.csv]``.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import math
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

from ccfair.errors import SpecError
from ccfair.units import parse_rate, parse_time

N_VALUES = (2, 10, 20, 100)
K_VALUES = (0.05, 0.1, 0.17, 0.25, 0.5, 1.0, 2.0)
RTT_MS = (5, 50)
QDISCS = ("step", "pi2", "csaqm", "droptail")
#: S3's PI2 update interval.
PI2_TUPDATE = "10ms"
#: S3's "infinite" buffer, as a delay at the link rate.
BUFFER_S = 0.5
CLASSES = ("bbr2", "dctcp")


def spec_dict(
    qdisc: str,
    n: int,
    k: float,
    rtt_ms: float,
    *,
    rate: str = "1Gbit",
    duration: str = "10s",
    window_start: str = "3s",
    seed: int = 1,
    csaqm_drop_above: float | None = None,
    csaqm_controller: str | None = None,
) -> dict[str, Any]:
    """The experiment of one grid point as an experiment-file dict."""
    if n < 2 or n % 2:
        raise SpecError("n", f"must be an even number >= 2 (half BBRv2, half DCTCP), got {n}")
    rate_bps = parse_rate(rate)
    target = f"{k * rtt_ms}ms"
    if qdisc == "step":
        q: dict[str, Any] = {"kind": "step", "step": {"k": k, "rtt": f"{rtt_ms}ms"}}
    elif qdisc == "pi2":
        q = {"kind": "pi2", "target": target, "tupdate": PI2_TUPDATE}
    elif qdisc == "csaqm":
        q = {"kind": "csaqm", "step": {"k": k, "rtt": f"{rtt_ms}ms"}}
        if csaqm_drop_above is not None:
            q["drop_above"] = csaqm_drop_above
        if csaqm_controller is not None:
            q["controller"] = csaqm_controller
    elif qdisc == "droptail":
        q = {"kind": "droptail"}
    else:
        raise SpecError("qdiscs", f"unknown {qdisc!r}; allowed: {', '.join(QDISCS)}")
    flow = {"rtt": f"{rtt_ms}ms", "start_jitter": "1s", "count": n // 2}
    return {
        "name": f"s3-{qdisc}-n{n}-k{k}-rtt{rtt_ms}",
        "duration": duration,
        "seed": seed,
        "window": {"start": window_start},
        "bottleneck": {"rate": rate, "buffer": f"{int(rate_bps * BUFFER_S / 8)}B", "qdisc": q},
        "flows": [
            {"name": "bbr2", "cca": "bbr2", "ecn": "scalable", **flow},
            {"name": "dctcp", "cca": "dctcp", **flow},
        ],
    }


@dataclass
class Row:
    qdisc: str
    n: int
    k: float
    rtt_ms: float
    seed: int
    rel_bbr2: float
    rel_dctcp: float
    utilization: float
    delay_mean_ms: float
    delay_max_ms: float
    delay_mean_rel: float
    delay_max_rel: float
    mark_bbr2: float
    mark_dctcp: float
    drop_bbr2: float
    drop_dctcp: float
    jfi: float
    wall_s: float


def run_point(
    qdisc: str,
    n: int,
    k: float,
    rtt_ms: float,
    rate: str,
    duration: str,
    window_start: str,
    seed: int,
    csaqm_drop_above: float | None = None,
    csaqm_controller: str | None = None,
) -> Row:
    """Run one grid point and compute S3's metrics."""
    from ccfair import metrics  # here: `ccfair preset s3 --help` needs no pandas
    from ccfair.api import run
    from ccfair.spec import Spec

    d = spec_dict(
        qdisc,
        n,
        k,
        rtt_ms,
        rate=rate,
        duration=duration,
        window_start=window_start,
        seed=seed,
        csaqm_drop_above=csaqm_drop_above,
        csaqm_controller=csaqm_controller,
    )
    spec = Spec.from_dict(d)
    t0 = time.perf_counter()
    res = run(spec)
    wall = time.perf_counter() - t0
    fl = res.flows
    rel = metrics.relative_throughput(fl, spec.bottleneck.rate, by="cca")
    sent = fl.groupby("cca")["sent_packets"].sum()
    marks = fl.groupby("cca")["ecn_marks"].sum() / sent
    drops = fl.groupby("cca")["drops"].sum() / sent
    soj = res.sojourn
    nz = soj[soj["count"] > 0]
    dmax = float(nz["bin_end_ms"].max()) if len(nz) else 0.0
    dmean = float(res.summary["queue_delay_ms"]["mean"] or 0.0)
    target_ms = k * rtt_ms
    rel_t = (lambda x: x / target_ms) if qdisc != "droptail" else (lambda x: math.nan)
    return Row(
        qdisc,
        n,
        k if qdisc != "droptail" else math.nan,
        rtt_ms,
        seed,
        float(rel.get("bbr2", math.nan)),
        float(rel.get("dctcp", math.nan)),
        float(res.summary["utilization"]),
        dmean,
        dmax,
        rel_t(dmean),
        rel_t(dmax),
        float(marks.get("bbr2", 0.0)),
        float(marks.get("dctcp", 0.0)),
        float(drops.get("bbr2", 0.0)),
        float(drops.get("dctcp", 0.0)),
        float(metrics.jain(fl["bytes"].astype(float))),
        wall,
    )


def grid(
    qdiscs: list[str], ns: list[int], ks: list[float], rtts: list[float], seeds: list[int]
) -> list[tuple[str, int, float, float, int]]:
    pts = []
    for rtt in rtts:
        for n in ns:
            for q in qdiscs:
                for k in ks if q != "droptail" else ks[:1]:
                    for s in seeds:
                        pts.append((q, n, k, rtt, s))
    return pts


HEADER = (
    "| qdisc | N | K | RTT ms | rel BBRv2 | rel DCTCP | util | delay mean/D | delay max/D | mark BBRv2 | mark DCTCP "
    "| drop BBRv2 | drop DCTCP | JFI |"
)


def fmt_row(r: Row) -> str:
    def f(x: float, d: int = 2) -> str:
        return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"

    k = "-" if math.isnan(r.k) else f"{r.k:g}"
    dm = f(r.delay_mean_rel) if r.qdisc != "droptail" else f"({r.delay_mean_ms:.0f} ms)"
    dx = f(r.delay_max_rel) if r.qdisc != "droptail" else f"({r.delay_max_ms:.0f} ms)"
    return (
        f"| {r.qdisc} | {r.n} | {k} | {r.rtt_ms:g} | {f(r.rel_bbr2)} | {f(r.rel_dctcp)} | {f(r.utilization, 3)} | {dm} | {dx} "
        f"| {f(r.mark_bbr2, 4)} | {f(r.mark_dctcp, 4)} | {f(r.drop_bbr2, 4)} | {f(r.drop_dctcp, 4)} | {f(r.jfi, 3)} |"
    )


def verdict(rows: list[Row]) -> list[str]:
    """S3's claims over the (N, K, RTT) points present: CSAQM's JFI vs STEP's and PI2's; who wins under STEP and PI2."""
    by = {(r.qdisc, r.n, r.k, r.rtt_ms, r.seed): r for r in rows}
    out = []
    pts = sorted({(r.n, r.k, r.rtt_ms, r.seed) for r in rows if r.qdisc == "csaqm"})
    for other in ("step", "pi2"):
        both = [(by[("csaqm", *p)], by[(other, *p)]) for p in pts if (other, *p) in by]
        if both:
            wins = sum(c.jfi > o.jfi for c, o in both)
            out.append(f"CSAQM JFI > {other.upper()} JFI in {wins} of {len(both)} (N, K, RTT) points")
    for q in ("step", "pi2", "csaqm"):
        rs = [r for r in rows if r.qdisc == q]
        if rs:
            d = sum(r.rel_dctcp > r.rel_bbr2 for r in rs)
            mean_d = sum(r.rel_dctcp for r in rs) / len(rs)
            mean_b = sum(r.rel_bbr2 for r in rs) / len(rs)
            out.append(f"{q}: DCTCP ahead in {d} of {len(rs)} points; mean relative throughput DCTCP {mean_d:.2f}, BBRv2 {mean_b:.2f}")
    return out


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ccfair preset s3", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", default="1Gbit")
    ap.add_argument("--n", default=",".join(map(str, N_VALUES)), help="connection counts (even)")
    ap.add_argument("--k", default=",".join(f"{k:g}" for k in K_VALUES), help="delay-target multipliers K (D = K x RTT)")
    ap.add_argument("--rtt", default=",".join(map(str, RTT_MS)), help="base RTTs, ms")
    ap.add_argument("--qdiscs", default=",".join(QDISCS))
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--window-start", default="3s")
    ap.add_argument("--seeds", default="1", help="seeds, e.g. 1,2")
    ap.add_argument(
        "--csaqm-drop-above",
        type=float,
        default=None,
        help="CSAQM overload variant (not in S3): drop below-CTV packets above this multiple of the target",
    )
    ap.add_argument(
        "--csaqm-controller", choices=("pi", "load"), default=None, help="CSAQM CTV controller (default pi; docs/in-network.md)"
    )
    ap.add_argument("--jobs", type=int, default=1, help="parallel processes")
    ap.add_argument("--out", default=None, help="also write the rows as CSV")
    ap.add_argument("--plot", default=None, metavar="PREFIX", help="write PREFIX-n{N}-rtt{RTT}.png: relative throughput vs K per AQM")
    a = ap.parse_args(argv)
    try:
        parse_time(a.duration)
        qdiscs = [q.strip() for q in a.qdiscs.split(",") if q.strip()]
        for q in qdiscs:
            if q not in QDISCS:
                raise SpecError("--qdiscs", f"unknown {q!r}; allowed: {', '.join(QDISCS)}")
        ns = [int(x) for x in _floats(a.n)]
        for n in ns:
            if n < 2 or n % 2:
                raise SpecError("--n", f"must be even numbers >= 2, got {n}")
        pts = grid(qdiscs, ns, _floats(a.k), _floats(a.rtt), [int(x) for x in _floats(a.seeds)])
    except SpecError:
        raise
    except ValueError as e:
        raise SpecError("preset s3", str(e)) from None
    t0 = time.perf_counter()
    rows: list[Row] = []
    args = [(q, n, k, rtt, a.rate, a.duration, a.window_start, s, a.csaqm_drop_above, a.csaqm_controller) for q, n, k, rtt, s in pts]
    print(HEADER)
    print("|" + "---|" * 14)
    if a.jobs > 1:
        with cf.ProcessPoolExecutor(a.jobs) as ex:
            for r in ex.map(run_point, *zip(*args)):
                rows.append(r)
                print(fmt_row(r), flush=True)
    else:
        for x in args:
            r = run_point(*x)
            rows.append(r)
            print(fmt_row(r), flush=True)
    wall = time.perf_counter() - t0
    print()
    for line in verdict(rows):
        print(line)
    print(f"{len(rows)} runs, wall time {wall:.0f} s (sum of run times {sum(r.wall_s for r in rows):.0f} s)")
    if a.out:
        import pandas as pd

        pd.DataFrame([asdict(r) for r in rows]).to_csv(a.out, index=False)
    if a.plot:
        for path in plot(rows, a.plot):
            print(f"figure: {path}")
    return 0


def plot(rows: list[Row], prefix: str) -> list[str]:
    """S3's figure type: relative throughput of each class vs K, one panel per AQM, one file per (N, RTT)."""
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from ccfair.plots import relative_throughput_vs

    long = pd.DataFrame(
        [
            {"qdisc": r.qdisc, "n": r.n, "rtt_ms": r.rtt_ms, "K": r.k, "class": c, "relative_throughput": v}
            for r in rows
            if r.qdisc != "droptail"
            for c, v in (("BBRv2", r.rel_bbr2), ("DCTCP", r.rel_dctcp))
        ]
    )
    paths = []
    for (n, rtt), sub in long.groupby(["n", "rtt_ms"]):
        fig = relative_throughput_vs(sub, "K", group_col="qdisc", logx=True, title=f"S3 multi-CC, N={n}, RTT {rtt:g} ms")
        path = f"{prefix}-n{n}-rtt{rtt:g}.png"
        fig.savefig(path, dpi=110)
        paths.append(path)
    return paths


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


# ---------------------------------------------------------------------------
# ccfair reproduce (ccfair.reproduce): tasks, claims, figures
# ---------------------------------------------------------------------------

#: Multi-CC multi-RTT mix of S3 (Figure 16): (class name, CCA, RTT ms, connections) = 2-2-8-8.
MULTI_RTT = (("bbr2-50", "bbr2", 50, 2), ("dctcp-50", "dctcp", 50, 2), ("bbr2-5", "bbr2", 5, 8), ("dctcp-5", "dctcp", 5, 8))


def tasks(quick: bool = False) -> list[dict[str, Any]]:
    """S3's runs for ``ccfair reproduce`` (10 s runs at 1 Gbit/s, window 3-10 s, as the preset's default)."""
    ns, ks, rtts = ((2, 10), (0.17, 1.0), (5,)) if quick else ((2, 10, 20), (0.05, 0.17, 0.5, 1.0, 2.0), (5, 50))
    out: list[dict[str, Any]] = [
        {"kind": "mix", "qdisc": q, "n": n, "k": k, "rtt": rtt} for rtt in rtts for n in ns for q in ("step", "pi2", "csaqm") for k in ks
    ]
    out.append({"kind": "mono", "n": 2, "k": 0.17, "rtt": 5})
    out += [{"kind": "multirtt", "qdisc": q, "k": 1.0} for q in ("step", "pi2", "csaqm")]
    return out


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """One S3 run; returns the Row fields (mix), utilization (mono) or per-class relative throughput (multirtt)."""
    from ccfair.api import run
    from ccfair.spec import Spec

    if task["kind"] == "mix":
        return {"task": task, **asdict(run_point(task["qdisc"], task["n"], task["k"], task["rtt"], "1Gbit", "10s", "3s", 1))}
    if task["kind"] == "mono":
        d = spec_dict("step", task["n"], task["k"], task["rtt"], duration="10s", window_start="3s")
        d["flows"] = [{"name": "dctcp", "cca": "dctcp", "rtt": f"{task['rtt']}ms", "start_jitter": "1s", "count": task["n"]}]
        res = run(Spec.from_dict(d))
        return {"task": task, "utilization": float(res.summary["utilization"])}
    d = spec_dict(task["qdisc"], 2, task["k"], 5, duration="10s", window_start="3s")
    d["flows"] = [
        {"name": name, "cca": cca, "rtt": f"{rtt}ms", "start_jitter": "1s", "count": n, **({"ecn": "scalable"} if cca == "bbr2" else {})}
        for name, cca, rtt, n in MULTI_RTT
    ]
    res = run(Spec.from_dict(d))
    fl = res.flows.assign(cls=res.flows["name"].str.replace(r"[.#\-_]?\d+$", "", regex=True))
    n_total = sum(m[3] for m in MULTI_RTT)
    fair = parse_rate("1Gbit") / n_total
    rel = {name: float(fl[fl["cls"] == name]["throughput_bps"].mean() / fair) for name, *_ in MULTI_RTT}
    return {"task": task, "rel": rel, "classes_seen": sorted(set(fl["cls"]))}


def reproduce_claims(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures and verdicts of S3's claims (ccfair.claims ids S3.*)."""
    from ccfair.claims import Outcome, verdict

    out = {}
    mono = [r for r in results if r["task"]["kind"] == "mono"]
    u = mono[0]["utilization"] if mono else math.nan
    out["S3.dctcp-util"] = Outcome(
        f"utilization {u:.3f} (2 DCTCP, STEP, K = 0.17, RTT 5 ms)",
        verdict(u < 0.60),
        ""
        if u < 0.60
        else "the simulated DCTCP keeps the link busy at a 0.85 ms step; S3's testbed shows under-utilization (cause not isolated)",
    )
    mix = [r for r in results if r["task"]["kind"] == "mix"]
    for cid, q, who in (("S3.step-dctcp", "step", "dctcp"), ("S3.pi2-bbr2", "pi2", "bbr2")):
        rs = [r for r in mix if r["qdisc"] == q]
        wins = sum((r["rel_dctcp"] > r["rel_bbr2"]) == (who == "dctcp") for r in rs)
        out[cid] = Outcome(
            f"{'DCTCP' if who == 'dctcp' else 'BBRv2'} ahead in {wins} of {len(rs)} {q.upper()} points", verdict(wins * 2 > len(rs))
        )
    by = {(r["qdisc"], r["n"], r["k"], r["rtt_ms"]): r for r in mix}
    pts = [k[1:] for k in by if k[0] == "csaqm"]
    wins = sum(
        by[("csaqm", *p)]["jfi"] > max(by[("step", *p)]["jfi"], by[("pi2", *p)]["jfi"])
        for p in pts
        if ("step", *p) in by and ("pi2", *p) in by
    )
    out["S3.csaqm"] = Outcome(f"CSAQM JFI above STEP's and PI2's in {wins} of {len(pts)} points", verdict(wins * 2 > len(pts)))
    mr = {r["task"]["qdisc"]: r["rel"] for r in results if r["task"]["kind"] == "multirtt"}
    if {"step", "pi2"} <= set(mr):
        ok = all(mr[q]["dctcp-5"] > mr[q]["dctcp-50"] for q in ("step", "pi2")) and mr["pi2"]["bbr2-50"] > mr["pi2"]["bbr2-5"]
        fig = "; ".join(f"{q.upper()}: " + ", ".join(f"{k} {v:.2f}" for k, v in rel.items()) for q, rel in mr.items())
        notes = [
            f"{q.upper()}: DCTCP-5 {mr[q]['dctcp-5']:.2f} <= DCTCP-50 {mr[q]['dctcp-50']:.2f}"
            for q in ("step", "pi2")
            if mr[q]["dctcp-5"] <= mr[q]["dctcp-50"]
        ]
        if mr["pi2"]["bbr2-50"] <= mr["pi2"]["bbr2-5"]:
            notes.append(
                f"PI2: BBRv2-50 {mr['pi2']['bbr2-50']:.2f} <= BBRv2-5 {mr['pi2']['bbr2-5']:.2f} (S3: PI2 gives BBR-50 an unfairly high share)"
            )
        out["S3.multi-rtt"] = Outcome("relative throughput " + fig, verdict(ok), "; ".join(notes))
    return out


def tables(results: list[dict[str, Any]]) -> str:
    """S3's multi-CC rows (the preset's Markdown table)."""
    rows = [Row(**{k: v for k, v in r.items() if k != "task"}) for r in results if r["task"]["kind"] == "mix"]
    return "\n".join([HEADER, "|---" * (HEADER.count("|") - 1) + "|", *(fmt_row(r) for r in rows)])


def figures(results: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """S3's figure type: relative throughput of BBRv2 and DCTCP vs K per AQM (N = 2 and 10, RTT 5 ms)."""
    import pandas as pd

    from ccfair import plots

    figs = []
    mix = [r for r in results if r["task"]["kind"] == "mix"]
    for n in sorted({r["n"] for r in mix}):
        rows = []
        for r in mix:
            if r["n"] == n and r["rtt_ms"] == 5:
                rows += [
                    {"k": r["k"], "qdisc": r["qdisc"], "class": "BBRv2", "relative_throughput": r["rel_bbr2"]},
                    {"k": r["k"], "qdisc": r["qdisc"], "class": "DCTCP", "relative_throughput": r["rel_dctcp"]},
                ]
        if rows:
            figs.append(
                (
                    f"S3: relative throughput vs K, N = {n}, RTT 5 ms, 1 Gbit/s",
                    plots.relative_throughput_vs(pd.DataFrame(rows), "k", group_col="qdisc", logx=True, xlabel="K (target = K x RTT)"),
                )
            )
    return figs
