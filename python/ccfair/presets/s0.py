"""S0's evaluation (Rüth, Kunze, Hohlfeld, "An Empirical View on Content Provider
Fairness", TMA 2019) as a preset: ``ccfair preset s0``.

Setup (BRIEF S0, S0 section III): two flows to one client through a dumbbell
bottleneck; flow B starts 5 s after flow A, both run 40 s more (45 s), and the
analysis window is the 35 s starting 5 s after B starts (10-45 s). Equal base
RTTs (S0 equalises them). Initial receive window 200 segments. Every setting is
repeated (S0: 30 times) and also run with the start order flipped ("B first":
the flows' settings exchanged, the start times kept). Grid (S0 Table I):
bandwidth {10, 50} Mbit/s, RTT {50, 100} ms, buffer {0.5, 2} x BDP (``--buffers``
adds e.g. 8), queue discipline {drop-tail, CoDel, FQ_CoDel}.

Three scenarios, as S0's Figure 1:

- ``lab``: S0's lab CCAs against each other (CUBIC, BBR, CUBIC with pacing);
- ``lab-cp``: a lab flow (CUBIC, BBR) against a local "CP-like" service: an
  HTTP/2 download from a server whose stack is a built-in sender profile (python/ccfair/profiles.py: ``cdn-iw16``, ``cdn-iw32``
  for S0's two Akamai configurations, ``cp-bbr`` for the CPs that announced BBR);
- ``cp-cp``: CP-like against CP-like.

S0's fairness measure: fness(A, B) = 1 - A/B if B >= A else B/A - 1 over the
window's received bytes (-1: A takes everything, +1: B does). S0's figure type:
per setting and pair, the distribution of fness over the repetitions, "A first"
and "B first" side by side (``--out DIR`` writes it, plots.fness_scatter_kde).
Beside fness the preset records each flow's max-min fair share
(metrics.max_min_fair_rates) and S0's extra per-run measurements (mean queue
length in packets, retransmissions).

The claims (BRIEF S0's findings for 10 Mbit/s, 50 ms, plus three from S0
section IV on CP traffic) are S0's entries of the claims registry
(ccfair.claims), each with the criterion fixed before measuring; every one is printed with ccfair's figure and a verdict,
reproduced or not.

"The same study with BBRv3" (issue 15; ccfair's addition, S0 had no BBRv3):
every run with a lab BBR(v1) flow has a twin with that flow on ``bbr3``
(:func:`bbr3_twin`; same setting, order, repetition and seed). The twins are
printed as an extra column beside each BBR pair and reported apart in
``--json`` ("bbr3"); they never enter the claims. ``--no-bbr3`` skips them.
The CP-like ``cp-bbr`` profile keeps BBRv1 (it stands for a CP's deployment).

Simulator by default; ``--backend testbed`` runs every point on real Linux TCP
(root; 45 s of real time per run, so use ``--reps``/``--quick``).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import itertools
import json
import math
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ccfair import profiles
from ccfair import scalar_metrics as metrics  # not ccfair.metrics: `ccfair preset s0 --help` loads no pandas
from ccfair.claims import by_study
from ccfair.errors import SpecError
from ccfair.progress import LINE_EVERY_S
from ccfair.sweep import ORDERS, derive_seed, flip_flows
from ccfair.units import parse_rate

__all__ = [
    "BBR3",
    "CLAIMS",
    "Outcome",
    "Point",
    "bbr3_twin",
    "claims_run",
    "grid",
    "main",
    "pairs",
    "reproduce_claims",
    "run_point",
    "spec_dict",
]

#: S0's lab CCAs (section III-E, Figure 2).
LAB = ("cubic", "bbr", "cubic+pacing")
#: "The same study with BBRv3": the CCA that replaces a lab ``bbr`` flow in the twin runs.
BBR3 = "bbr3"
#: Lab CCAs S0 competes with the CPs (section IV-A, Figures 3 and 4).
LAB_VS_CP = ("cubic", "bbr")
#: Built-in CP-like profiles (python/ccfair/profiles.py), each with its source.
CP_LIKE = ("cdn-iw16", "cdn-iw32", "cp-bbr")
SCENARIOS = ("lab", "lab-cp", "cp-cp")
RATES = ("10Mbit", "50Mbit")
RTTS_MS = (50, 100)
BUFFERS_BDP = (0.5, 2.0)
QDISCS = ("droptail", "codel", "fq_codel")
REPETITIONS = 30
#: S0's timing: B starts 5 s after A, both run 40 s more; window 10-45 s; 20 ms start noise.
DURATION, WINDOW_START, B_START, START_JITTER = "45s", "10s", "5s", "20ms"
#: The setting of S0's lab figures and of the brief's findings.
BASE = ("10Mbit", 50)
BACKENDS = ("sim", "testbed")


# --------------------------------------------------------------------------
# The grid
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One run: scenario, the pair (A, B), the setting, the start order and the repetition."""

    scenario: str
    a: str
    b: str
    rate: str
    rtt_ms: float
    buffer_bdp: float
    qdisc: str
    order: str
    rep: int

    @property
    def pair(self) -> str:
        return f"{self.a} vs {self.b}"


def pairs(scenarios: Iterable[str]) -> list[tuple[str, str, str]]:
    """``(scenario, a, b)`` for every pair of the scenarios (self-pairs included, each unordered pair once)."""
    out: list[tuple[str, str, str]] = []
    for sc in scenarios:
        if sc == "lab":
            out += [("lab", a, b) for a, b in itertools.combinations_with_replacement(LAB, 2)]
        elif sc == "lab-cp":
            out += [("lab-cp", a, b) for a, b in itertools.product(LAB_VS_CP, CP_LIKE)]
        elif sc == "cp-cp":
            out += [("cp-cp", a, b) for a, b in itertools.combinations_with_replacement(CP_LIKE, 2)]
        else:
            raise SpecError("--scenarios", f"unknown {sc!r}; allowed: {', '.join(SCENARIOS)}")
    return out


def grid(
    scenarios: Iterable[str], rates: Iterable[str], rtts_ms: Iterable[float], buffers: Iterable[float], qdiscs: Iterable[str], reps: int
) -> list[Point]:
    """Every run of the preset, repetitions innermost."""
    return [
        Point(sc, a, b, rate, float(rtt), float(buf), q, order, rep)
        for rate in rates
        for rtt in rtts_ms
        for buf in buffers
        for q in qdiscs
        for sc, a, b in pairs(scenarios)
        for order in ORDERS
        for rep in range(reps)
    ]


def bbr3_twin(p: Point) -> Point | None:
    """The same run with its lab BBR(v1) flow(s) on BBRv3, or None if the run has no lab ``bbr`` flow."""
    if "bbr" not in (p.a, p.b):
        return None
    return replace(p, a=BBR3 if p.a == "bbr" else p.a, b=BBR3 if p.b == "bbr" else p.b)


#: CCA of a CP-like profile that names none (S0 does not state the Akamai configurations' CCA): Linux's default.
DEFAULT_CP_CCA = "cubic"


def _flow(entry: str) -> dict[str, Any]:
    """A lab CCA (``cca``) or a built-in CP-like profile (``profile``) as flow keys."""
    if entry not in profiles.BUILTIN:
        return {"cca": entry}
    # a local CP-like service: an HTTP/2 download (S0 used h2load) from a server with the profile's stack;
    # the simulator runs it as that server's TCP download
    cca = {} if "cca" in profiles.BUILTIN[entry] else {"cca": DEFAULT_CP_CCA}
    return {"profile": entry, "kind": "http", "http": "2"} | cca


def _setting(p: Point) -> dict[str, Any]:
    # a BBRv3 twin takes its BBR(v1) run's seed (same start noise): the pair named with bbr
    pair = p.pair.replace(BBR3, "bbr") if p.scenario in ("lab", "lab-cp") else p.pair
    return {"rate": p.rate, "rtt_ms": p.rtt_ms, "buffer_bdp": p.buffer_bdp, "qdisc": p.qdisc, "pair": pair}


def spec_dict(p: Point, base_seed: int = 1) -> dict[str, Any]:
    """The experiment of one run as an experiment-file dict (the seed derived from setting, order, repetition)."""
    rtt = f"{p.rtt_ms:g}ms"
    flows = [
        {"name": "A", **_flow(p.a), "rtt": rtt, "start": "0s", "start_jitter": START_JITTER, "rwnd": 200},
        {"name": "B", **_flow(p.b), "rtt": rtt, "start": B_START, "start_jitter": START_JITTER, "rwnd": 200},
    ]
    raw: dict[str, Any] = {
        "name": f"s0 {p.scenario} {p.pair} {p.rate} {p.rtt_ms:g}ms {p.buffer_bdp:g}bdp {p.qdisc} {p.order} #{p.rep}",
        "duration": DURATION,
        "window": {"start": WINDOW_START, "end": DURATION},
        "seed": derive_seed(base_seed, _setting(p), p.order, p.rep),
        "bottleneck": {"rate": p.rate, "buffer": f"{p.buffer_bdp:g}bdp", "qdisc": p.qdisc},
        "flows": flows,
    }
    return flip_flows(raw) if p.order == ORDERS[1] else raw


@dataclass
class Row:
    """What one run measured (flows named A and B whatever the start order)."""

    scenario: str
    pair: str
    a: str
    b: str
    rate: str
    rtt_ms: float
    buffer_bdp: float
    qdisc: str
    order: str
    rep: int
    seed: int
    fness: float
    share_a: float
    share_b: float
    maxmin_a: float
    maxmin_b: float
    jfi: float
    utilization: float
    queue_packets_mean: float
    retrans_a: int
    retrans_b: int
    #: the CCA each flow ran, as the backend recorded it
    cca_a: str = ""
    cca_b: str = ""


def run_point(p: Point, base_seed: int = 1, backend: str = "sim") -> Row:
    """Run one point and keep S0's numbers."""
    from ccfair.api import run

    d = spec_dict(p, base_seed)
    res = run(d, backend=backend)
    by = {f["name"]: f for f in res.summary["flows"]}
    a, b = by["A"], by["B"]

    def num(x: Any) -> float:
        return math.nan if x is None else float(x)

    return Row(
        p.scenario,
        p.pair,
        p.a,
        p.b,
        p.rate,
        p.rtt_ms,
        p.buffer_bdp,
        p.qdisc,
        p.order,
        p.rep,
        int(d["seed"]),
        metrics.fness(a["bytes"], b["bytes"]),
        num(a["share"]),
        num(b["share"]),
        num(a.get("maxmin_share")),
        num(b.get("maxmin_share")),
        num(res.summary["jfi"]),
        num(res.summary["utilization"]),
        num(res.summary.get("queue_packets_mean")),
        int(a["retransmissions"]),
        int(b["retransmissions"]),
        str(a.get("cca", "")),
        str(b.get("cca", "")),
    )


def _run_chunk(args: tuple[list[Point], int, str]) -> list[Row]:
    pts, seed, backend = args
    return [run_point(p, seed, backend) for p in pts]


def run_grid(points: list[Point], base_seed: int, backend: str, jobs: int, progress: Callable[[int], None] | None = None) -> list[Row]:
    """Run every point (simulator: ``jobs`` processes, chunks of 20; testbed: one at a time)."""
    if backend == "testbed" or jobs <= 1:
        rows = []
        for p in points:
            rows.append(run_point(p, base_seed, backend))
            if progress:
                progress(1)
        return rows
    chunks = [points[i : i + 20] for i in range(0, len(points), 20)]
    rows = []
    with cf.ProcessPoolExecutor(jobs) as ex:
        for out in ex.map(_run_chunk, [(c, base_seed, backend) for c in chunks]):
            rows += out
            if progress:
                progress(len(out))
    return rows


# --------------------------------------------------------------------------
# Claims
# --------------------------------------------------------------------------


@dataclass
class Outcome:
    """ccfair's figure and verdict for one claim: reproduced / not reproduced / n.a. (not in the grid run)."""

    id: str
    figure: str
    verdict: str
    note: str = ""


#: S0's claims (BRIEF S0's findings at 10 Mbit/s, 50 ms, and three of S0 section IV on CP
#: traffic), with the study's sentence and ccfair's criterion: the one registry, ccfair.claims.
CLAIMS = tuple(by_study("S0"))


def _vals(rows: list[Row], field: str, **where: Any) -> np.ndarray:
    sel = [getattr(r, field) for r in rows if all(getattr(r, k) == v for k, v in where.items())]
    return np.asarray(sel, dtype=float)


def _na(cid: str, what: str) -> Outcome:
    return Outcome(cid, "-", "n.a.", f"not in the grid run: {what}")


def reproduce_claims(rows: list[Row]) -> list[Outcome]:
    """Every claim of :data:`CLAIMS` with ccfair's figure and verdict (at 10 Mbit/s, 50 ms)."""
    rate, rtt = BASE
    base = [r for r in rows if r.rate == rate and r.rtt_ms == rtt]
    out: list[Outcome] = []
    for c in CLAIMS:
        fn = _CHECKS[c.id]
        try:
            out.append(fn(base))
        except _Missing as e:
            out.append(_na(c.id, str(e)))
    return out


def claims_run(reps: int = 5, jobs: int = 1, backend: str = "sim", seed: int = 1) -> tuple[list[Outcome], list[Row]]:
    """Run what the claims need (every scenario at 10 Mbit/s, 50 ms, 0.5 and 2 BDP, every queue
    discipline, both orders, ``reps`` repetitions) and judge them: the entry point for ``ccfair reproduce``."""
    points = grid(SCENARIOS, [BASE[0]], [float(BASE[1])], BUFFERS_BDP, QDISCS, reps)
    rows = run_grid(points, seed, backend, jobs)
    return reproduce_claims(rows), rows


class _Missing(Exception):
    pass


def _need(rows: list[Row], **where: Any) -> list[Row]:
    sel = [r for r in rows if all(getattr(r, k) == v for k, v in where.items())]
    if not sel:
        raise _Missing(", ".join(f"{k}={v}" for k, v in where.items()) + f" at {BASE[0]}, {BASE[1]} ms")
    return sel


def _verdict(ok: bool) -> str:
    return "reproduced" if ok else "not reproduced"


def _self_fair(rows: list[Row]) -> Outcome:
    parts, ok = [], True
    for buf in (0.5, 2.0):
        for cca in ("cubic", "bbr"):
            v = _vals(_need(rows, pair=f"{cca} vs {cca}", buffer_bdp=buf, qdisc="droptail"), "fness")
            med = float(np.median(v))
            ok &= abs(med) <= 0.2
            parts.append(f"{cca} {buf:g}BDP med {med:+.2f}")
    sd_b = float(np.std(_vals(_need(rows, pair="bbr vs bbr", qdisc="droptail"), "fness")))
    sd_c = float(np.std(_vals(_need(rows, pair="cubic vs cubic", qdisc="droptail"), "fness")))
    ok &= sd_b > sd_c
    parts.append(f"std bbr {sd_b:.2f} vs cubic {sd_c:.2f}")
    return Outcome("S0.self-fair", "; ".join(parts), _verdict(ok))


def _dominates(cid: str, a: str, b: str, winner_is_b: bool, buf: float = 0.5) -> Callable[[list[Row]], Outcome]:
    def check(rows: list[Row]) -> Outcome:
        parts, ok = [], True
        for order in ORDERS:
            v = _vals(
                _need(rows, pair=f"{a} vs {b}", buffer_bdp=buf, qdisc="droptail", order=order), "share_b" if winner_is_b else "share_a"
            )
            med = float(np.median(v))
            ok &= med >= 0.8
            parts.append(f"{order}: {b if winner_is_b else a} share med {med:.2f}")
        return Outcome(cid, "; ".join(parts), _verdict(ok))

    return check


def _order_2bdp(rows: list[Row]) -> Outcome:
    small = float(np.median(_vals(_need(rows, pair="cubic vs bbr", buffer_bdp=0.5, qdisc="droptail"), "share_a")))
    large = float(np.median(_vals(_need(rows, pair="cubic vs bbr", buffer_bdp=2.0, qdisc="droptail"), "share_a")))
    meds = [float(np.median(_vals(_need(rows, pair="cubic vs bbr", buffer_bdp=2.0, qdisc="droptail", order=o), "fness"))) for o in ORDERS]
    diff = abs(meds[0] - meds[1])
    ok = large > small and diff >= 0.1
    fig = f"CUBIC share med 0.5BDP {small:.2f} -> 2BDP {large:.2f}; 2BDP fness med A first {meds[0]:+.2f}, B first {meds[1]:+.2f}"
    return Outcome("S0.2bdp-order", fig, _verdict(ok))


def _mean_abs(rows: list[Row], **where: Any) -> float:
    return float(np.mean(np.abs(_vals(_need(rows, **where), "fness"))))


def _pacing(rows: list[Row]) -> Outcome:
    ref = _mean_abs(rows, pair="cubic vs cubic", buffer_bdp=0.5, qdisc="droptail")
    pc = _mean_abs(rows, pair="cubic vs cubic+pacing", buffer_bdp=0.5, qdisc="droptail")
    pp = _mean_abs(rows, pair="cubic+pacing vs cubic+pacing", buffer_bdp=0.5, qdisc="droptail")
    ok = pc > ref and pp > ref
    return Outcome("S0.pacing", f"mean |fness|: cubic-cubic {ref:.2f}, cubic-paced {pc:.2f}, paced-paced {pp:.2f}", _verdict(ok))


def _codel(rows: list[Row]) -> Outcome:
    selfs = ("cubic vs cubic", "bbr vs bbr", "cubic+pacing vs cubic+pacing")
    intra_dt = float(np.mean([_mean_abs(rows, pair=p, buffer_bdp=2.0, qdisc="droptail") for p in selfs]))
    intra_cd = float(np.mean([_mean_abs(rows, pair=p, buffer_bdp=2.0, qdisc="codel") for p in selfs]))
    mixed = _mean_abs(rows, pair="cubic vs bbr", buffer_bdp=2.0, qdisc="codel")
    ok = intra_cd <= intra_dt and mixed >= 0.3
    fig = f"self-pairs mean |fness| drop-tail {intra_dt:.2f} -> CoDel {intra_cd:.2f}; cubic-bbr under CoDel {mixed:.2f}"
    return Outcome("S0.codel", fig, _verdict(ok))


def _fq(cid: str, scenario: str) -> Callable[[list[Row]], Outcome]:
    def check(rows: list[Row]) -> Outcome:
        sel = _need(rows, scenario=scenario, buffer_bdp=2.0, qdisc="fq_codel")
        worst, worst_pair = -1.0, ""
        for pair in sorted({r.pair for r in sel}):
            med = float(np.median(np.abs(_vals(sel, "fness", pair=pair))))
            if med > worst:
                worst, worst_pair = med, pair
        return Outcome(cid, f"largest median |fness| {worst:.2f} ({worst_pair})", _verdict(worst <= 0.1))

    return check


_CHECKS: dict[str, Callable[[list[Row]], Outcome]] = {
    "S0.self-fair": _self_fair,
    "S0.bbr-starves-cubic": _dominates("S0.bbr-starves-cubic", "cubic", "bbr", winner_is_b=True),
    "S0.2bdp-order": _order_2bdp,
    "S0.pacing": _pacing,
    "S0.codel": _codel,
    "S0.fq_codel": _fq("S0.fq_codel", "lab"),
    "S0.cp-bbr-vs-cubic": _dominates("S0.cp-bbr-vs-cubic", "cubic", "cp-bbr", winner_is_b=True),
    "S0.cp-iw32-vs-cubic": _dominates("S0.cp-iw32-vs-cubic", "cubic", "cdn-iw32", winner_is_b=True),
    "S0.cp-fq_codel": _fq("S0.cp-fq_codel", "cp-cp"),
}

if set(_CHECKS) != {c.id for c in CLAIMS}:  # pragma: no cover - a registry/preset mismatch, caught at import
    raise RuntimeError(f"presets/s0.py checks {sorted(_CHECKS)} but ccfair.claims lists {[c.id for c in CLAIMS]}")


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------


def distribution_table(rows: list[Row]) -> list[dict[str, Any]]:
    """S0's figure as numbers: per setting, pair and start order, fness over the repetitions
    (median, quartiles, min, max) and the flows' mean max-min fair share."""
    keys = ("scenario", "pair", "rate", "rtt_ms", "buffer_bdp", "qdisc", "order")
    groups: dict[tuple[Any, ...], list[Row]] = {}
    for r in rows:
        groups.setdefault(tuple(getattr(r, k) for k in keys), []).append(r)
    out = []
    for key, rs in groups.items():
        v = np.asarray([r.fness for r in rs], dtype=float)
        q1, med, q3 = (float(x) for x in np.nanpercentile(v, [25, 50, 75]))
        out.append(
            dict(zip(keys, key))
            | {
                "runs": len(rs),
                "fness_median": med,
                "fness_q1": q1,
                "fness_q3": q3,
                "fness_min": float(np.nanmin(v)),
                "fness_max": float(np.nanmax(v)),
                "maxmin_a_mean": float(np.nanmean([r.maxmin_a for r in rs])),
                "maxmin_b_mean": float(np.nanmean([r.maxmin_b for r in rs])),
                "queue_packets_mean": float(np.nanmean([r.queue_packets_mean for r in rs])),
                "retrans_a_mean": float(np.mean([r.retrans_a for r in rs])),
            }
        )
    return out


def print_claims(outcomes: list[Outcome], write: Callable[[str], None] = print) -> None:
    by = {c.id: c for c in CLAIMS}
    write("| claim | S0 says | criterion | ccfair measured | verdict |")
    write("|---|---|---|---|---|")
    for o in outcomes:
        c = by[o.id]
        note = f" ({o.note})" if o.note else ""
        cells = [o.id, c.source, c.criterion, f"{o.figure}{note}"]
        write("| " + " | ".join(x.replace("|", "\\|") for x in cells) + f" | **{o.verdict}** |")


def _twin_pair(pair: str) -> str:
    a, b = pair.split(" vs ")
    return " vs ".join(BBR3 if x == "bbr" else x for x in (a, b))


def with_bbr3(table: list[dict[str, Any]], table3: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The distribution table with the BBRv3 column: each entry with a lab ``bbr`` flow gets its twin's
    pair and fness median [q1, q3] (``bbr3_*``; None where the run has no BBR or the twins were not run)."""
    keys = ("scenario", "rate", "rtt_ms", "buffer_bdp", "qdisc", "order")
    by = {(*(t[k] for k in keys), t["pair"]): t for t in table3}
    out = []
    for t in table:
        tw = by.get((*(t[k] for k in keys), _twin_pair(t["pair"]))) if t["scenario"] in ("lab", "lab-cp") else None
        out.append(
            t
            | {
                "bbr3_pair": tw["pair"] if tw else None,
                "bbr3_fness_median": tw["fness_median"] if tw else None,
                "bbr3_fness_q1": tw["fness_q1"] if tw else None,
                "bbr3_fness_q3": tw["fness_q3"] if tw else None,
            }
        )
    return out


def bbr3_summary(rows: list[Row], rows3: list[Row]) -> list[dict[str, Any]]:
    """The headline of the BBRv3 column: the BBR flow's share against CUBIC (pair ``cubic vs bbr``, flow B)
    with BBRv1 and with BBRv3, median over the repetitions, per setting and start order."""
    keys = ("rate", "rtt_ms", "buffer_bdp", "qdisc", "order")
    out = []
    for key in dict.fromkeys(tuple(getattr(r, k) for k in keys) for r in rows if r.pair == "cubic vs bbr"):
        where = dict(zip(keys, key))
        v1, v3 = _vals(rows, "share_b", pair="cubic vs bbr", **where), _vals(rows3, "share_b", pair=f"cubic vs {BBR3}", **where)
        out.append(
            where
            | {
                "bbr_share_median": float(np.median(v1)),
                "bbr3_share_median": float(np.median(v3)) if len(v3) else None,
                "runs": len(v1),
            }
        )
    return out


def print_distributions(table: list[dict[str, Any]], write: Callable[[str], None] = print) -> None:
    """fness median [q1, q3] per pair and order at each setting; with BBRv3 twins (:func:`with_bbr3`) an extra column."""
    bbr3 = any(t.get("bbr3_pair") for t in table)
    extra = " with BBRv3 (ccfair's addition): A first \\| B first |" if bbr3 else ""
    settings = sorted(
        {(t["rate"], t["rtt_ms"], t["buffer_bdp"], t["qdisc"]) for t in table},
        key=lambda s: (parse_rate(s[0]), s[1], s[2], QDISCS.index(s[3])),
    )
    for s in settings:
        write(f"\n{s[0]}, {s[1]:g} ms, {s[2]:g} BDP, {s[3]}: fness median [q1, q3] over the repetitions; mean max-min share A / B")
        write("| scenario | pair (A vs B) | A first | B first | max-min share A / B |" + extra)
        write("|---|---|---|---|---|" + ("---|" if bbr3 else ""))
        sub = [t for t in table if (t["rate"], t["rtt_ms"], t["buffer_bdp"], t["qdisc"]) == s]
        for sc, pair in dict.fromkeys((t["scenario"], t["pair"]) for t in sub):
            cells, cells3 = [], []
            mm = []
            for order in ORDERS:
                t = next((t for t in sub if t["scenario"] == sc and t["pair"] == pair and t["order"] == order), None)
                if t is None:
                    cells.append("-")
                    cells3.append("-")
                    continue
                cells.append(f"{t['fness_median']:+.2f} [{t['fness_q1']:+.2f}, {t['fness_q3']:+.2f}]")
                med3 = t.get("bbr3_fness_median")
                cells3.append("-" if med3 is None else f"{med3:+.2f} [{t['bbr3_fness_q1']:+.2f}, {t['bbr3_fness_q3']:+.2f}]")
                mm.append((t["maxmin_a_mean"], t["maxmin_b_mean"]))
            mma = float(np.mean([m[0] for m in mm])) if mm else math.nan
            mmb = float(np.mean([m[1] for m in mm])) if mm else math.nan
            col3 = f" {cells3[0]} \\| {cells3[1]} |" if bbr3 else ""
            write(f"| {sc} | {pair} | {cells[0]} | {cells[1]} | {mma:.2f} / {mmb:.2f} |{col3}")


def write_figures(rows: list[Row], directory: Path) -> list[Path]:
    """S0's figure per setting: fness of every run plus its KDE per pair, "A first" | "B first"."""
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from ccfair.plots import fness_scatter_kde

    df = pd.DataFrame([asdict(r) for r in rows])
    paths = []
    for (rate, rtt, buf, q), sub in df.groupby(["rate", "rtt_ms", "buffer_bdp", "qdisc"], sort=False):
        fig = fness_scatter_kde(
            sub, pair_col="pair", order_col="order", a_col="a", b_col="b", title=f"S0: {rate}, {rtt:g} ms, {buf:g} BDP, {q}"
        )
        path = directory / f"s0-fness-{rate}-{rtt:g}ms-{buf:g}bdp-{q}.png"
        fig.savefig(path, dpi=110)
        paths.append(path)
        import matplotlib.pyplot as plt

        plt.close(fig)
    return paths


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def _list(text: str, allowed: Iterable[str], field: str) -> list[str]:
    allowed = tuple(allowed)
    out = [x.strip() for x in text.split(",") if x.strip()]
    for x in out:
        if x not in allowed:
            raise SpecError(field, f"unknown {x!r}; allowed: {', '.join(allowed)}")
    if not out:
        raise SpecError(field, "must name at least one value")
    return out


def _floats(text: str, field: str) -> list[float]:
    try:
        out = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SpecError(field, f"expected comma-separated numbers, got {text!r}") from None
    if not out or any(x <= 0 for x in out):
        raise SpecError(field, f"expected numbers > 0, got {text!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ccfair preset s0", description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="sim", help="sim (default) or testbed (real Linux TCP, root; 45 s per run)")
    ap.add_argument("--quick", action="store_true", help=f"{BASE[0]}, {BASE[1]} ms only, 5 repetitions")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS), help="lab, lab-cp, cp-cp")
    ap.add_argument("--rates", default=",".join(RATES))
    ap.add_argument("--rtts", default=",".join(str(r) for r in RTTS_MS), help="base RTTs, ms")
    ap.add_argument("--buffers", default=",".join(f"{b:g}" for b in BUFFERS_BDP), help="buffer sizes, x BDP (e.g. 0.5,2,8)")
    ap.add_argument("--qdiscs", default=",".join(QDISCS))
    ap.add_argument("--reps", type=int, default=None, help=f"repetitions per setting and order (default {REPETITIONS}; --quick: 5)")
    ap.add_argument("--seed", type=int, default=1, help="base seed; every run's seed derives from it")
    ap.add_argument("--jobs", type=int, default=1, help="parallel processes (simulator)")
    ap.add_argument("--json", action="store_true", help="print one JSON object (claims, distributions, runs) instead of tables")
    ap.add_argument(
        "--bbr3",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run every lab BBR flow's run with BBRv3 (the extra 'with BBRv3' column; default on)",
    )
    ap.add_argument("--out", default=None, help="directory for runs.csv, distributions.csv, claims.json and the figures")
    a = ap.parse_args(argv)
    if a.backend not in BACKENDS:
        raise SpecError("--backend", f"unknown {a.backend!r}; allowed: {', '.join(BACKENDS)}")
    scenarios = _list(a.scenarios, SCENARIOS, "--scenarios")
    qdiscs = _list(a.qdiscs, QDISCS, "--qdiscs")
    if a.quick:
        rates, rtts, reps = [BASE[0]], [float(BASE[1])], 5 if a.reps is None else a.reps
    else:
        rates = [x.strip() for x in a.rates.split(",") if x.strip()]
        for r in rates:
            try:
                parse_rate(r)
            except ValueError as e:
                raise SpecError("--rates", str(e)) from None
        rtts, reps = _floats(a.rtts, "--rtts"), REPETITIONS if a.reps is None else a.reps
    if reps < 1:
        raise SpecError("--reps", f"must be >= 1, got {reps}")
    if a.jobs < 1:
        raise SpecError("--jobs", f"must be >= 1, got {a.jobs}")
    buffers = _floats(a.buffers, "--buffers")
    points = grid(scenarios, rates, rtts, buffers, qdiscs, reps)
    t0 = time.perf_counter()
    twins = [t for t in map(bbr3_twin, points) if t is not None] if a.bbr3 else []
    total = len(points) + len(twins)  # the BBRv3 twins are runs too: the count ends at the total
    done, last_line = [0], [-LINE_EVERY_S]

    def progress(n: int) -> None:
        done[0] = min(total, done[0] + n)
        if a.json:
            return
        if sys.stderr.isatty():
            sys.stderr.write(f"\r{done[0]}/{total} runs")
        elif time.perf_counter() - last_line[0] >= LINE_EVERY_S or done[0] == total:  # a log: a line now and then
            last_line[0] = time.perf_counter()
            sys.stderr.write(f"{done[0]}/{total} runs, {time.perf_counter() - t0:.0f} s\n")
            sys.stderr.flush()

    rows = run_grid(points, a.seed, a.backend, a.jobs, progress)
    rows3 = run_grid(twins, a.seed, a.backend, a.jobs, progress) if twins else []
    wall = time.perf_counter() - t0
    outcomes = reproduce_claims(rows)
    table = with_bbr3(distribution_table(rows), distribution_table(rows3)) if a.bbr3 else distribution_table(rows)
    meta = {
        "backend": a.backend,
        "runs": len(rows),
        "bbr3_runs": len(rows3),
        "repetitions": reps,
        "wall_s": wall,
        "scenarios": scenarios,
        "rates": rates,
        "rtts_ms": rtts,
        "buffers_bdp": buffers,
        "qdiscs": qdiscs,
        "seed": a.seed,
    }
    by = {c.id: c for c in CLAIMS}
    claims_json = [asdict(by[o.id]) | {"figure": o.figure, "verdict": o.verdict, "note": o.note} for o in outcomes]
    if a.out:
        _write_out(Path(a.out), rows, table, claims_json, meta, rows3)
    if a.json:
        obj = {
            "preset": "s0",
            **meta,
            "fairness_measure": "fness(A, B) = 1 - A/B if B >= A else B/A - 1",
            "claims": claims_json,
            "distributions": table,
            "rows": [asdict(r) for r in rows],
            "bbr3": {
                "note": "ccfair's addition (S0 had no BBRv3): each run with a lab bbr flow, that flow on bbr3, same seed",
                "vs_cubic": bbr3_summary(rows, rows3),
                "rows": [asdict(r) for r in rows3],
            },
        }
        sys.stdout.write(json.dumps(_clean(obj), allow_nan=False) + "\n")
        return 0
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    print(
        f"S0 preset: {len(rows) + len(rows3)} runs ({len(rows3)} of them BBRv3 twins) on the {a.backend} backend, {reps} repetitions per setting and start order, wall time {wall:.1f} s"
    )
    print("Fairness measure: S0's fness(A, B) over the 35 s window (-1: A takes all, +1: B takes all)\n")
    print_claims(outcomes)
    if rows3:
        print("\nThe same study with BBRv3 (ccfair's addition; S0 had no BBRv3): the BBR flow's share against CUBIC, median")
        print("| setting | order | BBRv1 share | BBRv3 share |")
        print("|---|---|---|---|")
        for t in bbr3_summary(rows, rows3):
            v3 = "-" if t["bbr3_share_median"] is None else f"{t['bbr3_share_median']:.2f}"
            setting = f"{t['rate']}, {t['rtt_ms']:g} ms, {t['buffer_bdp']:g} BDP, {t['qdisc']}"
            print(f"| {setting} | {t['order']} | {t['bbr_share_median']:.2f} | {v3} |")
    print_distributions(table)
    return 0


def _clean(x: Any) -> Any:
    """JSON-ready: NaN/inf -> None, numpy scalars -> Python numbers."""
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


def _write_out(
    d: Path, rows: list[Row], table: list[dict[str, Any]], claims_json: list[dict[str, Any]], meta: dict[str, Any], rows3: list[Row]
) -> None:
    import pandas as pd

    d.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([asdict(r) for r in rows]).to_csv(d / "runs.csv", index=False)
    if rows3:
        pd.DataFrame([asdict(r) for r in rows3]).to_csv(d / "runs-bbr3.csv", index=False)
    pd.DataFrame(table).to_csv(d / "distributions.csv", index=False)
    (d / "claims.json").write_text(json.dumps(_clean({"meta": meta, "claims": claims_json}), indent=2) + "\n")
    for p in write_figures(rows, d):
        print(f"figure: {p}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
