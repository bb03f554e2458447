"""S3's multi-CC evaluation (Fejes et al., "On the Incompatibility of Scalable
Congestion Controls over the Internet") as a preset.

Setup (as S3): one bottleneck at ``--rate`` (1 Gbit/s), a 500 ms
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
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

from ccfair.claims.model import Measurement
from ccfair.claims.s3 import GOOD_JFI, GOOD_UTIL, REASONABLE_JFI, SMALL_REL
from ccfair.errors import SpecError
from ccfair.presets.options import add_run_options
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
    assert spec.bottleneck is not None  # S3's cases are dumbbells
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
    add_run_options(ap, "parallel processes")
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
# ccfair reproduce: tasks, measurements of the claims (ccfair.claims.s3), figures
# ---------------------------------------------------------------------------

#: Run length and analysis-window start (s) by the largest base RTT in the run. S3 ran 3 minutes
#: (``tasks(run_s={5: 180, 50: 180})``); docs/in-network.md "Run length" has what changes with it.
RUN_S = {5: 20, 50: 60}
WINDOW_S = {5: 5, 50: 20}
AQMS = ("step", "pi2", "csaqm")
#: The grids of the board (docs/in-network.md "The board's grid").
MONO_NS, MONO_KS, SMALL_KS = (2, 10), (0.05, 0.17, 1.0), (0.17, 1.0)
MULTI_NS, MULTI_KS = (2, 10, 20), (0.05, 0.17, 0.5, 2.0)
MULTI50_NS, MULTI50_KS = (2, 10), (0.17, 2.0)
MRTT_KS = {"step": (0.5, 10.0), "pi2": (0.5, 10.0), "csaqm": (0.17, 0.5, 1.0, 10.0)}
MIX_RTT_KS = (0.5, 10.0)
#: S3's small buffer: 1.33 x the delay target.
SMALL_BUFFER_X_TARGET = 1.33
#: Mono-CC multi-RTT (S3 V.C: "4-16"): (class, RTT ms, connections); the CC is the task's.
MONO_MULTI_RTT = (("50ms", 50, 4), ("5ms", 5, 16))
#: Multi-CC multi-RTT of S3's Figures 16-18 (2-2-8-8): (class, CCA, RTT ms, connections).
MULTI_RTT = (("bbr2-50ms", "bbr2", 50, 2), ("dctcp-50ms", "dctcp", 50, 2), ("bbr2-5ms", "bbr2", 5, 8), ("dctcp-5ms", "dctcp", 5, 8))


def _t(mix: str, q: str, n: int, k: float, rtt: int = 5, buffer: str = "long", seed: int = 1) -> dict[str, Any]:
    return {"kind": "run", "mix": mix, "qdisc": q, "n": n, "k": k, "rtt": rtt, "buffer": buffer, "seed": seed}


def tasks(quick: bool = False, seed: int = 1, run_s: dict[int, int] | None = None) -> list[dict[str, Any]]:
    """S3's runs for ``ccfair reproduce``: the grids above (quick: no N = 20, fewer extra seeds).

    A task's ``seed`` is its repetition (1, 2, ...); the run's seed is ``seed_of(task)``, moved by the
    base ``seed``. ``run_s`` overrides :data:`RUN_S` (e.g. ``{5: 180, 50: 180}``, S3's 3 minutes;
    window from a sixth).
    """
    out: list[dict[str, Any]] = []
    multi_ns = MULTI_NS[:-1] if quick else MULTI_NS
    for cca in ("dctcp", "bbr2"):
        out += [_t(cca, q, n, k) for q in AQMS for n in MONO_NS for k in MONO_KS]
        out += [_t(cca, q, n, k, buffer="small") for q in AQMS for n in MONO_NS for k in SMALL_KS]
    out += [_t("dctcp", "step", 2, 0.17, seed=s) for s in range(2, 4 if quick else 6)]
    out += [_t("dctcp", "pi2", 2, k, seed=s) for k in (0.05, 0.17) for s in range(2, 3 if quick else 4)]
    out += [_t("dctcp", q, 10, k, rtt=50) for q in AQMS for k in SMALL_KS]
    out += [_t("bbr2", q, n, k, rtt=50) for q in AQMS for n in (MONO_NS if q != "csaqm" else (10,)) for k in (0.05, 1.0)]
    out += [_t("multi", q, n, k) for q in AQMS for n in multi_ns for k in MULTI_KS]
    out += [_t("multi", "pi2", n, 2.0, seed=s) for n in multi_ns for s in range(2, 3 if quick else 4)]
    out += [_t("multi", q, n, k, rtt=50) for q in AQMS for n in MULTI50_NS for k in MULTI50_KS]
    for cca in ("dctcp", "bbr2"):
        out += [_t(f"mrtt-{cca}", q, 20, k) for q in AQMS for k in MRTT_KS[q]]
    out += [_t("mix-rtt", q, 20, k, buffer=b) for b in ("long", "small") for q in AQMS for k in MIX_RTT_KS]
    for t in out:
        if run_s:
            t["run_s"] = run_s
        if seed != 1:
            t["base_seed"] = seed
    return out


def seed_of(task: dict[str, Any]) -> int:
    """The run's seed: the repetition, moved by 1000 per base seed above 1."""
    return task["seed"] + 1000 * (task.get("base_seed", 1) - 1)


def _flows(task: dict[str, Any]) -> list[dict[str, Any]]:
    def f(name: str, cca: str, rtt: int, n: int) -> dict[str, Any]:
        return {
            "name": name,
            "cca": cca,
            "rtt": f"{rtt}ms",
            "start_jitter": "1s",
            "count": n,
            **({"ecn": "scalable"} if cca == "bbr2" else {}),
        }

    mix, n = task["mix"], task["n"]
    if mix in ("dctcp", "bbr2"):
        return [f(mix, mix, task["rtt"], n)]
    if mix == "multi":
        return [f("bbr2", "bbr2", task["rtt"], n // 2), f("dctcp", "dctcp", task["rtt"], n // 2)]
    if mix.startswith("mrtt-"):
        cca = mix.split("-", 1)[1]
        return [f(name, cca, rtt, c) for name, rtt, c in MONO_MULTI_RTT]
    return [f(name, cca, rtt, c) for name, cca, rtt, c in MULTI_RTT]


def case_spec(task: dict[str, Any]) -> dict[str, Any]:
    """The experiment of one task: the AQM's target is K x the task's RTT (K x 5 ms with mixed RTTs)."""
    mixed = _mixed_rtt(task)
    target_rtt = 5 if mixed else task["rtt"]
    longest = 50 if mixed else task["rtt"]
    run_s = task.get("run_s", RUN_S)[longest]
    win_s = WINDOW_S[longest] if "run_s" not in task else run_s // 6
    d = spec_dict(task["qdisc"], 2, task["k"], target_rtt, duration=f"{run_s}s", window_start=f"{win_s}s", seed=seed_of(task))
    d["name"] = f"s3-{task['mix']}-{task['qdisc']}-n{task['n']}-k{task['k']}-rtt{task['rtt']}-{task['buffer']}"
    d["flows"] = _flows(task)
    if task["buffer"] == "small":
        target_s = task["k"] * target_rtt / 1000
        d["bottleneck"]["buffer"] = f"{int(SMALL_BUFFER_X_TARGET * target_s * parse_rate('1Gbit') / 8)}B"
    return d


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """One S3 run: relative throughput and marking ratio per class, utilization, mean delay / D, JFI."""
    from ccfair import metrics
    from ccfair.api import run
    from ccfair.spec import Spec

    d = case_spec(task)
    spec = Spec.from_dict(d)
    t0 = time.perf_counter()
    res = run(spec)
    fl = res.flows.assign(cls=res.flows["name"].str.replace(r"\.\d+$", "", regex=True))
    assert spec.bottleneck is not None  # S3's cases are dumbbells
    rel = metrics.relative_throughput(fl, spec.bottleneck.rate, by="cls")
    by = fl.groupby("cls")
    marks = by["ecn_marks"].sum() / by["sent_packets"].sum()
    return {
        "task": task,
        "rel": {str(k): float(v) for k, v in rel.items()},
        "marks": {str(k): float(v) for k, v in marks.items()},
        "util": float(res.summary["utilization"]),
        "delay_rel": float(res.summary["queue_delay_ms"]["mean"] or 0.0) / _target_ms(task),
        "jfi": float(metrics.jain(fl["bytes"].astype(float))),
        "wall_s": time.perf_counter() - t0,
    }


def _mixed_rtt(task: dict[str, Any]) -> bool:
    return task["mix"].startswith("mrtt-") or task["mix"] == "mix-rtt"


def _target_ms(task: dict[str, Any]) -> float:
    """D = K x RTT (K x 5 ms with mixed RTTs: S3 sets the target by the smaller RTT)."""
    return task["k"] * (5 if _mixed_rtt(task) else task["rtt"])


# --- measurements (per-run values; verdicts come from ccfair.claims.rules) ---------------------


class _Runs:
    """The results indexed by setting: ``get(mix, qdisc, n, k, rtt, buffer, seed)`` -> result or None."""

    def __init__(self, results: list[dict[str, Any]]):
        self.by = {self.key(**{k: r["task"][k] for k in ("mix", "qdisc", "n", "k", "rtt", "buffer", "seed")}): r for r in results}

    @staticmethod
    def key(mix: str, qdisc: str, n: int, k: float, rtt: int = 5, buffer: str = "long", seed: int = 1) -> tuple[Any, ...]:
        return (mix, qdisc, n, float(k), rtt, buffer, seed)

    def get(self, *a: Any, **kw: Any) -> dict[str, Any] | None:
        return self.by.get(self.key(*a, **kw))

    def at(self, *a: Any, **kw: Any) -> dict[str, Any]:
        """The run with this key, known to exist (after a check with :meth:`get`)."""
        return self.by[self.key(*a, **kw)]

    def seeds(self, mix: str, qdisc: str, n: int, k: float, rtt: int = 5, buffer: str = "long") -> list[dict[str, Any]]:
        return [r for key, r in sorted(self.by.items()) if key[:6] == (mix, qdisc, n, float(k), rtt, buffer)]

    def ns(self, mix: str, rtt: int = 5) -> list[int]:
        return sorted({key[2] for key in self.by if key[0] == mix and key[4] == rtt})


def _pairs(xs: list[tuple[Any, Any]], f: Any) -> list[float]:
    """f(a, b) over the pairs whose both runs exist."""
    return [f(a, b) for a, b in xs if a is not None and b is not None]


def _fig(xs: list[float], what: str) -> str:
    return f"{what} {min(xs):.2f}-{max(xs):.2f} over {len(xs)}" if xs else f"{what}: no runs"


NOTES = {
    "dctcp-util": "model gap against S3's testbed, in line with the DCTCP analysis S3 cites: S3's Section II quotes "
    "[10] ('the utilization remains higher than 94% even for K as small as 0.01') and S3's Section VI calls its own "
    "result 'much worse than expected, according to [10]'; ccfair's DCTCP follows the RFC 8257 / Linux window rule, "
    "S3's Linux 5.4 hosts (GSO/GRO bursts, unpaced DCTCP) are not reproduced in that detail (cause not isolated)",
    "pi2-k2-ratio": "model gap, cause not isolated: under ccfair's PI2 at K = 2 (D = 10 ms at 5 ms) DCTCP gets more "
    "than BBRv2 at every N, where S3 measured DCTCP at a third of BBRv2",
    "rtt-csaqm-large-k": "ccfair's CSAQM (pi controller, equal-share packet values) already gives the 50 ms DCTCP class "
    "nearly the 5 ms class's throughput at small targets, so a large target has nothing to improve (it does worse at "
    "K = 10); S3's CSAQM controller is described only by reference ([14]); the difference is not isolated",
}


def measure(results: list[dict[str, Any]]) -> dict[str, Measurement]:
    """Per claim of ccfair.claims.s3 the quantity's value in each run or pair of runs; no verdicts."""
    R = _Runs(results)
    out: dict[str, Measurement] = {}

    def m(cid: str, values: list[float], figure: str) -> None:
        out[f"S3.{cid}"] = Measurement(tuple(values), figure=figure, note=NOTES.get(cid, ""))

    _measure_mono_dctcp(R, m)
    _measure_mono_bbr(R, m)
    _measure_multi(R, m)
    _measure_multi_rtt(R, m)
    v = _pairs(
        [
            (R.get("bbr2", q, n, k, buffer="small"), R.get("dctcp", q, n, k, buffer="small"))
            for q in AQMS
            for n in MONO_NS
            for k in SMALL_KS
        ],
        lambda a, b: a["util"] - b["util"],
    )
    m(
        "bbr-small-buffer",
        v,
        _fig(
            [r["util"] for q in AQMS for n in MONO_NS for k in SMALL_KS if (r := R.get("bbr2", q, n, k, buffer="small"))],
            "BBRv2 small-buffer utilization",
        ),
    )
    return out


def _mono(R: _Runs, mix: str) -> list[dict[str, Any] | None]:
    """The one-CCA runs of ``mix`` at every AQM, N and K of the 5 ms long-buffer grid (None where missing)."""
    return [R.get(mix, q, n, k) for q in AQMS for n in MONO_NS for k in MONO_KS]


def _measure_mono_dctcp(R: _Runs, m: Any) -> None:
    """The claims on DCTCP alone: fairness, utilization, delay, small buffers, 50 ms."""
    dct = [r for r in _mono(R, "dctcp") if r]
    m("mono-dctcp-fair", [r["jfi"] - GOOD_JFI for r in dct], _fig([r["jfi"] for r in dct], "JFI"))
    v = _pairs([(R.get("dctcp", q, n, 1.0), R.get("dctcp", q, n, 0.05)) for q in AQMS for n in MONO_NS], lambda a, b: a["util"] - b["util"])
    m("mono-dctcp-util-small-target", v, _fig([r["util"] for r in dct if r["task"]["k"] == 0.05], "utilization at K = 0.05"))
    us = [r["util"] for r in R.seeds("dctcp", "step", 2, 0.17)]
    m("dctcp-util", [0.60 - u for u in us], _fig(us, "utilization (2 DCTCP, STEP, K = 0.17)"))
    pts = [(n, k) for n in MONO_NS for k in MONO_KS]
    v = [
        min(R.at("dctcp", "pi2", n, k)["util"], R.at("dctcp", "csaqm", n, k)["util"]) - R.at("dctcp", "step", n, k)["util"]
        for n, k in pts
        if all(R.get("dctcp", q, n, k) for q in AQMS)
    ]
    m("step-lowest-util", v, "mean utilization " + ", ".join(f"{q.upper()} {_mean_of(R, 'dctcp', q, 'util'):.3f}" for q in AQMS))
    m("mono-dctcp-delay", [1 - r["delay_rel"] for r in dct], _fig([r["delay_rel"] for r in dct], "mean delay / D"))
    v = [
        min(R.at("dctcp", "pi2", n, k)["delay_rel"], R.at("dctcp", "csaqm", n, k)["delay_rel"]) - R.at("dctcp", "step", n, k)["delay_rel"]
        for n, k in pts
        if all(R.get("dctcp", q, n, k) for q in AQMS)
    ]
    m("step-conservative", v, "mean delay / D " + ", ".join(f"{q.upper()} {_mean_of(R, 'dctcp', q, 'delay_rel'):.2f}" for q in AQMS))
    d2 = [r["delay_rel"] for k in (0.05, 0.17) for r in R.seeds("dctcp", "pi2", 2, k)]
    m("pi2-delay-2-flows", [x - 1 for x in d2], _fig(d2, "PI2, N = 2, K <= 0.17: mean delay / D"))
    v = _pairs(
        [(R.get("dctcp", q, n, k), R.get("dctcp", q, n, k, buffer="small")) for q in AQMS for n in MONO_NS for k in SMALL_KS],
        lambda a, b: a["util"] - b["util"],
    )
    small = [r["util"] for q in AQMS for n in MONO_NS for k in SMALL_KS if (r := R.get("dctcp", q, n, k, buffer="small"))]
    m("small-buffer-util", v, _fig(small, "small-buffer utilization"))
    p50_all = [(q, k, R.get("dctcp", q, 10, k), R.get("dctcp", q, 10, k, rtt=50)) for q in AQMS for k in SMALL_KS]
    p50 = [(q, k, a, b) for q, k, a, b in p50_all if a and b]
    m("mono-dctcp-50ms-util", [b["util"] - a["util"] for _, _, a, b in p50], _fig([b["util"] for *_, b in p50], "utilization at 50 ms"))
    m(
        "mono-dctcp-50ms-unfair",
        [a["jfi"] - b["jfi"] for q, _, a, b in p50 if q != "csaqm"],
        _fig([b["jfi"] for q, _, _, b in p50 if q != "csaqm"], "STEP/PI2 JFI at 50 ms"),
    )
    cs = [b["jfi"] for q, _, _, b in p50 if q == "csaqm"]
    m("mono-dctcp-50ms-csaqm", [x - GOOD_JFI for x in cs], _fig(cs, "CSAQM JFI at 50 ms"))


def _measure_mono_bbr(R: _Runs, m: Any) -> None:
    """The claims on BBRv2 alone: utilization against DCTCP's, fairness, and at 50 ms."""
    mono_bbr = _mono(R, "bbr2")
    v = _pairs(list(zip(mono_bbr, _mono(R, "dctcp"))), lambda a, b: a["util"] - b["util"])
    m("mono-bbr-util", v, _fig([r["util"] for r in mono_bbr if r], "BBRv2 utilization"))
    bb = [r for r in mono_bbr if r]
    m("mono-bbr-fair", [r["jfi"] - GOOD_JFI for r in bb], _fig([r["jfi"] for r in bb], "BBRv2 JFI"))
    v = _pairs(
        [(R.get("bbr2", "step", n, 0.05, rtt=50), R.get("bbr2", "step", n, 1.0, rtt=50)) for n in MONO_NS], lambda a, b: a["jfi"] - b["jfi"]
    )
    m(
        "mono-bbr-50ms-step-k",
        v,
        "STEP JFI at 50 ms, K 0.05 / 1: "
        + ", ".join(
            f"N={n} {_get(R, 'bbr2', 'step', n, 0.05, 50, 'jfi'):.2f}/{_get(R, 'bbr2', 'step', n, 1.0, 50, 'jfi'):.2f}" for n in MONO_NS
        ),
    )
    pd_ = [r["delay_rel"] for n in MONO_NS if (r := R.get("bbr2", "pi2", n, 0.05, rtt=50))]
    m("mono-bbr-50ms-pi2-delay", [x - 1 for x in pd_], _fig(pd_, "PI2 K = 0.05 mean delay / D"))
    v = _pairs(
        [(R.get("bbr2", "step", n, 0.05, rtt=50), R.get("bbr2", "pi2", n, 0.05, rtt=50)) for n in MONO_NS],
        lambda a, b: a["util"] - b["util"],
    )
    m(
        "mono-bbr-50ms-pi2-util",
        v,
        "utilization STEP / PI2 at K = 0.05: "
        + ", ".join(
            f"N={n} {_get(R, 'bbr2', 'step', n, 0.05, 50, 'util'):.3f}/{_get(R, 'bbr2', 'pi2', n, 0.05, 50, 'util'):.3f}" for n in MONO_NS
        ),
    )
    kept = [r["delay_rel"] for q in ("step", "csaqm") for n in MONO_NS for k in (0.05, 1.0) if (r := R.get("bbr2", q, n, k, rtt=50))]
    m("mono-bbr-50ms-delay-kept", [1 - x for x in kept], _fig(kept, "STEP/CSAQM mean delay / D"))


def _get(R: _Runs, mix: str, q: str, n: int, k: float, rtt: int, field: str) -> float:
    r = R.get(mix, q, n, k, rtt=rtt)
    return r[field] if r else math.nan


def _mean_of(R: _Runs, mix: str, q: str, field: str, rtt: int = 5) -> float:
    xs = [r[field] for key, r in R.by.items() if key[0] == mix and key[1] == q and key[4] == rtt and key[5] == "long"]
    return sum(xs) / len(xs) if xs else math.nan


def _measure_multi(R: _Runs, m: Any) -> None:
    """The claims on BBRv2 and DCTCP sharing the 5 ms bottleneck (and at 50 ms)."""
    ns = R.ns("multi")
    multi_all = [(q, n, k, R.get("multi", q, n, k)) for q in AQMS for n in ns for k in MULTI_KS]
    pts_m = [(q, n, k, r) for q, n, k, r in multi_all if r]
    _measure_multi_shares(R, m, ns, pts_m)
    _measure_multi_csaqm(R, m, ns, pts_m)


def _of(pts_m: list[tuple[str, int, float, dict[str, Any]]], q: str) -> list[dict[str, Any]]:
    """The runs of AQM ``q`` among ``pts_m`` ((AQM, N, K, run))."""
    return [r for qq, _, _, r in pts_m if qq == q]


def _measure_multi_shares(R: _Runs, m: Any, ns: list[int], pts_m: list[tuple[str, int, float, dict[str, Any]]]) -> None:
    """Utilization, fairness and which CCA each AQM favours, over N and K."""

    def of(q: str) -> list[dict[str, Any]]:
        return _of(pts_m, q)

    m(
        "multi-util",
        [r["util"] - GOOD_UTIL for _, n, k, r in pts_m if not (n == 2 and k <= 0.17)],
        _fig([r["util"] for *_, r in pts_m], "utilization"),
    )
    sp = of("step") + of("pi2")
    m("multi-unfair", [GOOD_JFI - r["jfi"] for r in sp], _fig([r["jfi"] for r in sp], "STEP/PI2 JFI"))
    m(
        "step-dctcp",
        [r["rel"]["dctcp"] - r["rel"]["bbr2"] for r in of("step")],
        f"STEP mean relative throughput DCTCP {_mean([r['rel']['dctcp'] for r in of('step')]):.2f}, BBRv2 {_mean([r['rel']['bbr2'] for r in of('step')]):.2f}",
    )
    m(
        "pi2-bbr2",
        [r["rel"]["bbr2"] - r["rel"]["dctcp"] for r in of("pi2")],
        f"PI2 mean relative throughput BBRv2 {_mean([r['rel']['bbr2'] for r in of('pi2')]):.2f}, DCTCP {_mean([r['rel']['dctcp'] for r in of('pi2')]):.2f}",
    )

    def gap(r: dict[str, Any]) -> float:
        return r["rel"]["bbr2"] - r["rel"]["dctcp"]

    lo, hi = (ns[0], ns[-1]) if ns else (0, 0)
    v = _pairs([(R.get("multi", "pi2", lo, k), R.get("multi", "pi2", hi, k)) for k in MULTI_KS], lambda a, b: gap(a) - gap(b))
    m(
        "pi2-bbr2-small-n",
        v,
        f"PI2 BBRv2 - DCTCP relative throughput, N = {lo}: {_mean([gap(r) for r in of('pi2') if r['task']['n'] == lo]):.2f}, N = {hi}: {_mean([gap(r) for r in of('pi2') if r['task']['n'] == hi]):.2f}",
    )
    k2 = [r for n in ns for r in R.seeds("multi", "pi2", n, 2.0)]
    ratios = [r["rel"]["dctcp"] / r["rel"]["bbr2"] for r in k2 if r["rel"]["bbr2"] > 0]
    m("pi2-k2-ratio", ratios, _fig(ratios, "PI2 K = 2 DCTCP:BBRv2"))


def _measure_multi_csaqm(R: _Runs, m: Any, ns: list[int], pts_m: list[tuple[str, int, float, dict[str, Any]]]) -> None:
    """CSAQM against STEP and PI2: fairness, marks per CCA, K and RTT sensitivity."""
    cs = _of(pts_m, "csaqm")
    m("csaqm-good", [r["jfi"] - GOOD_JFI for r in cs], _fig([r["jfi"] for r in cs], "CSAQM JFI"))
    v = [
        R.at("multi", "csaqm", n, k)["jfi"] - max(R.at("multi", "step", n, k)["jfi"], R.at("multi", "pi2", n, k)["jfi"])
        for n in ns
        for k in MULTI_KS
        if all(R.get("multi", q, n, k) for q in AQMS)
    ]
    m("csaqm-best", v, f"CSAQM JFI above both in {sum(x > 0 for x in v)} of {len(v)} points")

    def lnratio(r: dict[str, Any]) -> float:
        mb, md = max(r["marks"].get("bbr2", 0.0), 1e-6), max(r["marks"].get("dctcp", 0.0), 1e-6)
        return abs(math.log(mb / md))

    pi = _of(pts_m, "pi2")
    mr = [r["marks"]["bbr2"] / r["marks"]["dctcp"] for r in pi if r["marks"].get("dctcp", 0) > 0]
    m("pi2-marks-equal", mr, _fig(mr, "PI2 mark ratio BBRv2/DCTCP"))
    v = _pairs(
        [(R.get("multi", "csaqm", n, k), R.get("multi", "pi2", n, k)) for n in ns for k in MULTI_KS], lambda a, b: lnratio(a) - lnratio(b)
    )
    m(
        "csaqm-marks-differ",
        v,
        _fig([r["marks"].get("bbr2", 0) / max(r["marks"].get("dctcp", 0), 1e-6) for r in cs], "CSAQM mark ratio BBRv2/DCTCP"),
    )
    p50 = [(R.get("multi", q, n, k, rtt=50), R.get("multi", q, n, k)) for q in ("step", "pi2") for n in MULTI50_NS for k in MULTI50_KS]
    m("rtt50-fairer", _pairs(p50, lambda a, b: a["jfi"] - b["jfi"]), _fig([a["jfi"] for a, _ in p50 if a], "STEP/PI2 JFI at 50 ms"))
    v = [
        d
        for rtt in (5, 50)
        for n in R.ns("multi", rtt)
        for d in _pairs(
            [(R.get("multi", "pi2", n, 2.0, rtt=rtt), R.get("multi", "pi2", n, 0.17, rtt=rtt))], lambda a, b: a["jfi"] - b["jfi"]
        )
    ]
    m("pi2-large-k", v, _fig(v, "PI2 JFI(K = 2) - JFI(K = 0.17)"))
    v = []
    for rtt, ks in ((5, MULTI_KS), (50, MULTI50_KS)):
        for n in R.ns("multi", rtt):
            sd = {q: [r["jfi"] for k in ks if (r := R.get("multi", q, n, k, rtt=rtt))] for q in AQMS}
            if all(len(x) == len(ks) for x in sd.values()):
                v.append((statistics.pstdev(sd["step"]) + statistics.pstdev(sd["pi2"])) / 2 - statistics.pstdev(sd["csaqm"]))
    m("csaqm-less-prone", v, _fig(v, "std over K, STEP/PI2 minus CSAQM"))
    c50 = [r["jfi"] for n in MULTI50_NS for k in MULTI50_KS if (r := R.get("multi", "csaqm", n, k, rtt=50))]
    m("csaqm-50ms-reasonable", [x - REASONABLE_JFI for x in c50], _fig(c50, "CSAQM JFI at 50 ms"))


def _measure_multi_rtt(R: _Runs, m: Any) -> None:
    """The claims on flows of one CCA in two RTT classes (5 and 50 ms), then on the 2-2-8-8 mix."""
    _measure_two_rtt_classes(R, m)
    _measure_mix_rtt(R, m)


def _measure_two_rtt_classes(R: _Runs, m: Any) -> None:
    """DCTCP's and BBRv2's 50 ms class against their 5 ms class."""

    def rr(r: dict[str, Any]) -> float:
        return r["rel"]["50ms"] / r["rel"]["5ms"] if r["rel"].get("5ms") else math.nan

    dc = [(q, k, r) for q in AQMS for k in MRTT_KS[q] if (r := R.get("mrtt-dctcp", q, 20, k))]
    m(
        "rtt-dctcp",
        [r["rel"]["5ms"] - r["rel"]["50ms"] for *_, r in dc],
        _fig([r["rel"]["50ms"] for *_, r in dc], "DCTCP 50 ms class relative throughput"),
    )
    v = _pairs([(R.get("mrtt-dctcp", q, 20, 10.0), R.get("mrtt-dctcp", q, 20, 0.5)) for q in ("step", "pi2")], lambda a, b: rr(a) - rr(b))
    m(
        "rtt-dctcp-large-k",
        v,
        "50 ms / 5 ms class, K 0.5 -> 10: "
        + ", ".join(
            f"{q.upper()} {rr(a):.2f} -> {rr(b):.2f}"
            for q in ("step", "pi2")
            if (a := R.get("mrtt-dctcp", q, 20, 0.5)) and (b := R.get("mrtt-dctcp", q, 20, 10.0))
        ),
    )
    big = R.get("mrtt-dctcp", "csaqm", 20, 10.0)
    small = [r for k in (0.17, 0.5, 1.0) if (r := R.get("mrtt-dctcp", "csaqm", 20, k))]
    m(
        "rtt-csaqm-large-k",
        [rr(big) - rr(r) for r in small] if big else [],
        "CSAQM 50 ms / 5 ms class at K 0.17/0.5/1/10: " + "/".join(f"{rr(r):.2f}" for r in [*small, *([big] if big else [])]),
    )
    v = _pairs(
        [(R.get("mrtt-bbr2", q, 20, k), R.get("mrtt-dctcp", q, 20, k)) for q in ("step", "pi2") for k in MRTT_KS[q]],
        lambda a, b: a["jfi"] - b["jfi"],
    )
    m(
        "rtt-bbr-fairer",
        v,
        _fig([r["jfi"] for q in ("step", "pi2") for k in MRTT_KS[q] if (r := R.get("mrtt-bbr2", q, 20, k))], "BBRv2 multi-RTT JFI"),
    )
    bb = [r for q in ("step", "pi2") for k in MRTT_KS[q] if (r := R.get("mrtt-bbr2", q, 20, k))]
    m(
        "rtt-bbr-50-higher",
        [r["rel"]["50ms"] - r["rel"]["5ms"] for r in bb],
        _fig([r["rel"]["50ms"] for r in bb], "BBRv2 50 ms class relative throughput"),
    )

    def gap(r: dict[str, Any]) -> float:
        return r["rel"]["50ms"] - r["rel"]["5ms"]

    v = _pairs([(R.get("mrtt-bbr2", q, 20, 10.0), R.get("mrtt-bbr2", q, 20, 0.5)) for q in ("step", "pi2")], lambda a, b: gap(a) - gap(b))
    m("rtt-bbr-50-grows-with-k", v, _fig(v, "gap(K = 10) - gap(K = 0.5)"))
    cj = [r["jfi"] for k in (0.17, 0.5) if (r := R.get("mrtt-bbr2", "csaqm", 20, k))]
    m("rtt-bbr-csaqm", [x - GOOD_JFI for x in cj], _fig(cj, "CSAQM BBRv2 multi-RTT JFI (K < 1)"))


def _measure_mix_rtt(R: _Runs, m: Any) -> None:
    """The 2-2-8-8 mix of DCTCP and BBRv2 at 5 and 50 ms, long and small buffers."""
    mx = {(q, k, b): r for q in AQMS for k in MIX_RTT_KS for b in ("long", "small") if (r := R.get("mix-rtt", q, 20, k, buffer=b))}
    sp = [r for (q, _, b), r in mx.items() if q != "csaqm" and b == "long"]
    m("mix-rtt-unfair", [REASONABLE_JFI - r["jfi"] for r in sp], _fig([r["jfi"] for r in sp], "STEP/PI2 2-2-8-8 JFI"))
    m(
        "mix-rtt-dctcp50-small",
        [SMALL_REL - r["rel"]["dctcp-50ms"] for r in sp],
        _fig([r["rel"]["dctcp-50ms"] for r in sp], "DCTCP-50 ms relative throughput"),
    )
    cl = [r["jfi"] for (q, _, b), r in mx.items() if q == "csaqm" and b == "long"]
    m("mix-rtt-csaqm", [x - REASONABLE_JFI for x in cl], _fig(cl, "CSAQM 2-2-8-8 JFI"))
    pb = [r["rel"]["bbr2-50ms"] for (q, _, b), r in mx.items() if q == "pi2" and b == "long"]
    m("mix-rtt-pi2-bbr50", [x - 1 for x in pb], _fig(pb, "PI2 BBRv2-50 ms relative throughput"))
    v = _pairs(
        [(mx.get(("pi2", k, "long")), mx.get(("step", k, "long"))) for k in MIX_RTT_KS],
        lambda a, b: a["rel"]["bbr2-50ms"] - b["rel"]["bbr2-50ms"],
    )
    m(
        "mix-rtt-step-bbr50",
        v,
        _fig([r["rel"]["bbr2-50ms"] for (q, _, b), r in mx.items() if q == "step" and b == "long"], "STEP BBRv2-50 ms relative throughput"),
    )
    v = _pairs(
        [(mx.get((q, k, "small")), mx.get((q, k, "long"))) for q in ("step", "pi2") for k in MIX_RTT_KS], lambda a, b: a["jfi"] - b["jfi"]
    )
    m(
        "mix-rtt-small-buffer",
        v,
        _fig([r["jfi"] for (q, _, b), r in mx.items() if q != "csaqm" and b == "small"], "STEP/PI2 small-buffer JFI"),
    )
    cs = [r["jfi"] for (q, _, b), r in mx.items() if q == "csaqm" and b == "small"]
    m("mix-rtt-small-buffer-csaqm", [x - REASONABLE_JFI for x in cs], _fig(cs, "CSAQM small-buffer JFI"))


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def tables(results: list[dict[str, Any]]) -> str:
    """S3's runs as a Markdown table: setting, relative throughput per class, utilization, delay / D, JFI."""
    lines = ["| mix | AQM | N | K | RTT ms | buffer | seed | relative throughput | util | delay / D | JFI |", "|---" * 11 + "|"]
    for r in results:
        t = r["task"]
        rel = ", ".join(f"{c} {x:.2f}" for c, x in sorted(r["rel"].items()))
        lines.append(
            f"| {t['mix']} | {t['qdisc']} | {t['n']} | {t['k']:g} | {t['rtt']} | {t['buffer']} | {t['seed']} | {rel} | {r['util']:.3f} | {r['delay_rel']:.2f} | {r['jfi']:.3f} |"
        )
    return "\n".join(lines)


def figures(results: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """S3's figure type: relative throughput of BBRv2 and DCTCP vs K per AQM (multi-CC, RTT 5 ms, one per N)."""
    import pandas as pd

    from ccfair import plots

    figs = []
    mix = [r for r in results if r["task"]["mix"] == "multi" and r["task"]["rtt"] == 5 and r["task"]["seed"] == 1]
    for n in sorted({r["task"]["n"] for r in mix}):
        rows = [
            {"k": r["task"]["k"], "qdisc": r["task"]["qdisc"], "class": label, "relative_throughput": r["rel"][c]}
            for r in mix
            if r["task"]["n"] == n
            for c, label in (("bbr2", "BBRv2"), ("dctcp", "DCTCP"))
        ]
        figs.append(
            (
                f"S3: relative throughput vs K, N = {n}, RTT 5 ms, 1 Gbit/s",
                plots.relative_throughput_vs(pd.DataFrame(rows), "k", group_col="qdisc", logx=True, xlabel="K (target = K x RTT)"),
            )
        )
    return figs
