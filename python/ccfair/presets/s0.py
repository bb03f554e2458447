"""S0's evaluation (Rüth, Kunze, Hohlfeld, "An Empirical View on Content Provider
Fairness", TMA 2019) as a preset: ``ccfair preset s0``.

Setup (S0 section III): two flows to one client through a dumbbell
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

The claims (S0's findings for 10 Mbit/s, 50 ms, plus three from S0
section IV on CP traffic) are S0's entries of the claims registry
(ccfair.claims), each with the criterion fixed before measuring; every one is printed with ccfair's figure and a verdict,
reproduced or not.

"The same study with BBRv3" (ccfair's addition, S0 had no BBRv3):
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
import functools
import itertools
import json
import math
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ccfair import profiles
from ccfair import scalar_metrics as metrics  # not ccfair.metrics: `ccfair preset s0 --help` loads no pandas
from ccfair.claims.model import Measurement
from ccfair.errors import SpecError
from ccfair.presets.options import add_run_options
from ccfair.progress import LINE_EVERY_S
from ccfair.sweep import ORDERS, derive_seed, flip_flows
from ccfair.units import parse_rate

__all__ = [
    "BBR3",
    "NOTES",
    "Point",
    "bbr3_twin",
    "cells",
    "figures",
    "grid",
    "judged",
    "main",
    "measure",
    "measure_testbed",
    "pairs",
    "run_point",
    "run_task",
    "spec_dict",
    "tasks",
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
#: The setting of S0's lab figures and of its findings at 10 Mbit/s, 50 ms.
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
# ccfair reproduce: tasks, run_task, measure (the claims: ccfair.claims.s0)
# --------------------------------------------------------------------------

#: Repetitions per start order: S0's 30 (III-D), and the quick board's.
QUICK_REPETITIONS = 5
_LAB_SELF = (("cubic", "cubic"), ("bbr", "bbr"), ("cubic+pacing", "cubic+pacing"), ("cubic", "bbr"), ("cubic", "cubic+pacing"))
_LAB_CP = tuple((a, b) for a, b in itertools.product(LAB_VS_CP, CP_LIKE))
_CP_CP = tuple(itertools.combinations_with_replacement(CP_LIKE, 2))


def cells() -> list[tuple[str, str, str, str, float, float, str]]:
    """Every setting the claims need: (scenario, a, b, rate, rtt_ms, buffer_bdp, qdisc)."""
    r, rtt = BASE[0], float(BASE[1])
    out = [("lab", a, b, r, rtt, 0.5, "droptail") for a, b in _LAB_SELF]
    out += [("lab-cp", a, b, r, rtt, buf, "droptail") for buf in BUFFERS_BDP for a, b in _LAB_CP]
    out += [("cp-cp", a, b, r, rtt, buf, "droptail") for buf in BUFFERS_BDP for a, b in _CP_CP]
    out += [("cp-cp", a, b, r, rtt, 2.0, q) for q in ("codel", "fq_codel") for a, b in _CP_CP]
    lab_cp_100 = (("cubic", "cdn-iw16"), ("cubic", "cp-bbr"), ("bbr", "cdn-iw16"), ("bbr", "cp-bbr"), ("bbr", "cdn-iw32"))
    out += [("lab-cp", a, b, r, 100.0, 0.5, "droptail") for a, b in lab_cp_100]
    lab_cp_50m = (("cubic", "cdn-iw16"), ("cubic", "cdn-iw32"), ("cubic", "cp-bbr"), ("bbr", "cdn-iw16"), ("bbr", "cdn-iw32"))
    out += [("lab-cp", a, b, "50Mbit", rtt, 0.5, "droptail") for a, b in lab_cp_50m]
    return out


def tasks(quick: bool = False, seed: int = 1) -> list[dict[str, Any]]:
    """The runs of every S0 claim: each cell of :func:`cells` in both start orders, 30 (quick: 5)
    repetitions each; ``seed`` is the base seed every run's seed derives from."""
    reps = QUICK_REPETITIONS if quick else REPETITIONS
    return [
        {"point": asdict(Point(sc, a, b, rate, rtt, buf, q, order, rep)), "seed": seed}
        for sc, a, b, rate, rtt, buf, q in cells()
        for order in ORDERS
        for rep in range(reps)
    ]


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """One run of :func:`tasks` (in a worker): S0's numbers as a dict (:class:`Row`)."""
    return asdict(run_point(Point(**task["point"]), int(task.get("seed", 1))))


def _sel(
    rows: list[Row],
    a: str,
    b: str,
    buf: float = 0.5,
    qdisc: str = "droptail",
    rate: str = BASE[0],
    rtt: float = BASE[1],
    order: str | None = None,
) -> list[Row]:
    return [
        r
        for r in rows
        if (r.a, r.b, r.buffer_bdp, r.qdisc, r.rate, r.rtt_ms) == (a, b, buf, qdisc, rate, float(rtt))
        and (order is None or r.order == order)
    ]


def toward(r: Row, who: str) -> float:
    """fness oriented towards the flow running ``who`` (+1: it takes everything)."""
    if r.b == who:
        return r.fness
    if r.a == who:
        return -r.fness
    raise ValueError(f"{who!r} is neither flow of {r.pair}")


def toward_first(r: Row) -> float:
    """fness oriented towards the flow that started first."""
    return -r.fness if r.order == ORDERS[0] else r.fness


def _first_is(r: Row, who: str) -> bool:
    return (r.a if r.order == ORDERS[0] else r.b) == who


def _m(
    values: Iterable[float], minus: Iterable[float] | None = None, stat: Literal["mean", "median", "std"] = "mean", figure: str = ""
) -> Measurement:
    """A measurement; a difference whose second group has no runs gets no runs at all (not judged)."""
    v = tuple(float(x) for x in values)
    w = () if minus is None else tuple(float(x) for x in minus)
    if minus is not None and not w:
        v = ()
    if not figure and v:
        figure = (
            f"{stat} {_stat(stat, v):.3g}"
            + (f" minus {_stat(stat, w):.3g}" if w else "")
            + f" ({len(v)}{f' / {len(w)}' if w else ''} runs)"
        )
    return Measurement(values=v, minus=w, stat=stat, figure=figure)


def _stat(stat: str, xs: tuple[float, ...]) -> float:
    return float(np.std(xs, ddof=1)) if stat == "std" else float(np.mean(xs)) if xs else math.nan


def _vals(rows: list[Row], field: str, **where: Any) -> np.ndarray:
    sel = [getattr(r, field) for r in rows if all(getattr(r, k) == v for k, v in where.items())]
    return np.asarray(sel, dtype=float)


def _abs(rows: list[Row]) -> list[float]:
    return [abs(r.fness) for r in rows]


def _tw(rows: list[Row], who: str) -> list[float]:
    return [toward(r, who) for r in rows]


def _many(rows: list[Row], pairs: Iterable[tuple[str, str]], **kw: Any) -> list[Row]:
    return [r for a, b in pairs for r in _sel(rows, a, b, **kw)]


_AKAMAI = ("cdn-iw16", "cdn-iw32")
_P = "cubic+pacing"


def _table2(rows: list[Row], field: str, cca: str, buf: float) -> Measurement:
    """Table II: per CP-like, the mean over the lab-first runs; the claim's values are those runs, pooled equally."""
    sel = [r for cp in CP_LIKE for r in _sel(rows, cca, cp, buf=buf, order=ORDERS[0])]
    per_cp = {cp: float(np.mean([getattr(r, field) for r in sel if r.b == cp])) for cp in CP_LIKE}
    fig = ", ".join(f"{cp} {v:.0f}" for cp, v in per_cp.items())
    return _m([getattr(r, field) for r in sel], figure=fig)


def _measures(rows: list[Row]) -> dict[str, Callable[[], Measurement]]:
    """Each simulator claim's measurement by claim id, in the claims' order."""
    return {
        **_measures_lab(rows),
        **_measures_cp_vs_cp(rows),
        **_measures_aqm(rows),
        "S0.buffer-inverts": lambda: _m(_tw(_sel(rows, "cubic", "cdn-iw32"), "cubic"), _tw(_sel(rows, "cubic", "cdn-iw32", 2.0), "cubic")),
    }


def _measures_lab(rows: list[Row]) -> dict[str, Callable[[], Measurement]]:
    """The claims on the lab CCAs: among themselves and against the CP-like profiles."""
    S, A1, B1 = _sel, ORDERS[0], ORDERS[1]
    cc, bb, pp = S(rows, "cubic", "cubic"), S(rows, "bbr", "bbr"), S(rows, _P, _P)
    return {
        "S0.self-fair-cubic": lambda: _m(_abs(cc)),
        "S0.self-fair-bbr": lambda: _m(_abs(bb)),
        "S0.self-fair-paced": lambda: _m(_abs(pp)),
        "S0.bbr-variance-cubic": lambda: _m(map(toward_first, bb), map(toward_first, cc), stat="std"),
        "S0.bbr-variance-paced": lambda: _m(map(toward_first, bb), map(toward_first, pp), stat="std"),
        "S0.bbr-monopolizes": lambda: _m(_tw(S(rows, "cubic", "bbr"), "bbr")),
        "S0.pacing-vs-cubic": lambda: _m(_abs(S(rows, "cubic", _P)), _abs(cc)),
        "S0.pacing-vs-paced": lambda: _m(_abs(pp), _abs(cc)),
        "S0.cubic-vs-bbr-cps-small": lambda: _m(_tw(S(rows, "cubic", "cp-bbr"), "cp-bbr")),
        "S0.cubic-vs-akamaia-small": lambda: _m(_tw(S(rows, "cubic", "cdn-iw32"), "cdn-iw32")),
        "S0.cubic-vs-akamaie-small": lambda: _m(_abs(S(rows, "cubic", "cdn-iw16")), _abs(S(rows, "cubic", "cdn-iw32"))),
        "S0.cubic-vs-bbr-cps-large": lambda: _m(_tw(S(rows, "cubic", "cp-bbr", 2.0), "cp-bbr"), _tw(S(rows, "cubic", "cp-bbr"), "cp-bbr")),
        "S0.cubic-vs-bbr-cps-large-order": lambda: _m(
            _tw(S(rows, "cubic", "cp-bbr", 2.0, order=B1), "cp-bbr"), _tw(S(rows, "cubic", "cp-bbr", 2.0, order=A1), "cp-bbr")
        ),
        "S0.cubic-vs-akamai-large": lambda: _m(_tw(_many(rows, [("cubic", c) for c in _AKAMAI], buf=2.0), "cubic")),
        "S0.bbr-vs-akamaie-small": lambda: _m(_tw(S(rows, "bbr", "cdn-iw16"), "bbr")),
        "S0.bbr-vs-google-small": lambda: _m(_tw(S(rows, "bbr", "cp-bbr"), "cp-bbr")),
        "S0.bbr-vs-akamai-large": lambda: _m(_tw(_many(rows, [("bbr", c) for c in _AKAMAI], buf=2.0), "bbr")),
        "S0.bbr-vs-akamai-large-order": lambda: _m(
            _tw(_many(rows, [("bbr", c) for c in _AKAMAI], buf=2.0, order=A1), "bbr"),
            _tw(_many(rows, [("bbr", c) for c in _AKAMAI], buf=2.0, order=B1), "bbr"),
        ),
        "S0.bbr-vs-cloudflare-large": lambda: _m(_abs(S(rows, "bbr", "cp-bbr", 2.0, order=B1))),
        "S0.t2-cubic-retrans-bbr-cps": lambda: _m(
            [r.retrans_a for buf in BUFFERS_BDP for r in S(rows, "cubic", "cp-bbr", buf, order=A1)],
            [r.retrans_a for buf in BUFFERS_BDP for r in _many(rows, [("cubic", c) for c in _AKAMAI], buf=buf, order=A1)],
        ),
        "S0.t2-bbr-retrans-cloudflare-buffer": lambda: _m(
            [r.retrans_a for r in S(rows, "bbr", "cp-bbr", order=A1)], [r.retrans_a for r in S(rows, "bbr", "cp-bbr", 2.0, order=A1)]
        ),
        "S0.t2-bbr-retrans-cloudflare-most": lambda: _m(
            [r.retrans_a for r in S(rows, "bbr", "cp-bbr", order=A1)],
            [r.retrans_a for r in _many(rows, [("bbr", c) for c in _AKAMAI], order=A1)],
        ),
        **{
            f"S0.t2-{kind}-{cca}-{tag}": functools.partial(_table2, rows, field, cca, buf)
            for kind, field in (("qsize", "queue_packets_mean"), ("retrans", "retrans_a"))
            for cca in ("bbr", "cubic")
            for buf, tag in ((2.0, "2bdp"), (0.5, "05bdp"))
        },
        "S0.rtt100-no-change": lambda: _m(
            [toward(r, r.a) for r in _many(rows, [(lab, c) for lab in LAB_VS_CP for c in ("cdn-iw16", "cp-bbr")], rtt=100.0)],
            [toward(r, r.a) for r in _many(rows, [(lab, c) for lab in LAB_VS_CP for c in ("cdn-iw16", "cp-bbr")])],
        ),
        "S0.rtt100-akamaia": lambda: _m(_tw(S(rows, "bbr", "cdn-iw32", rtt=100.0), "bbr")),
        "S0.50mbit-bbr-dominates": lambda: _m(_tw(_many(rows, [("bbr", c) for c in _AKAMAI], rate="50Mbit"), "bbr")),
        "S0.50mbit-cubic-bbr-cps": lambda: _m(
            _tw(S(rows, "cubic", "cp-bbr", rate="50Mbit"), "cp-bbr"), _tw(S(rows, "cubic", "cp-bbr"), "cp-bbr")
        ),
        "S0.50mbit-cubic-others": lambda: _m(
            [toward(r, r.b) for r in _many(rows, [("cubic", c) for c in _AKAMAI], rate="50Mbit")],
            [toward(r, r.b) for r in _many(rows, [("cubic", c) for c in _AKAMAI])],
        ),
        "S0.50mbit-akamaia-like-akamaie": lambda: _m(
            _tw(S(rows, "cubic", "cdn-iw32", rate="50Mbit"), "cdn-iw32"), _tw(S(rows, "cubic", "cdn-iw16", rate="50Mbit"), "cdn-iw16")
        ),
    }


def _measures_cp_vs_cp(rows: list[Row]) -> dict[str, Callable[[], Measurement]]:
    """The claims on the CP-like profiles against each other."""
    S, A1, B1 = _sel, ORDERS[0], ORDERS[1]
    return {
        "S0.cps-fairer-large-buffer": lambda: _m(_abs(_many(rows, _LAB_CP, buf=2.0)), _abs(_many(rows, _LAB_CP))),
        "S0.cp-akamaie-vs-bbr-cps-small": lambda: _m(_tw(S(rows, "cdn-iw16", "cp-bbr"), "cp-bbr")),
        "S0.cp-akamaia-first-small": lambda: _m(
            _abs(S(rows, "cdn-iw16", "cdn-iw32", order=B1)), _abs(S(rows, "cdn-iw16", "cdn-iw32", order=A1))
        ),
        "S0.cp-google-first-small": lambda: _m(map(toward_first, S(rows, "cp-bbr", "cp-bbr"))),
        "S0.cp-bbr-cps-large-less": lambda: _m(
            _tw(_many(rows, [(c, "cp-bbr") for c in _AKAMAI], buf=2.0), "cp-bbr"),
            _tw(_many(rows, [(c, "cp-bbr") for c in _AKAMAI]), "cp-bbr"),
        ),
        "S0.cp-bbr-dominates-akamai-large": lambda: _m(_tw(_many(rows, [(c, "cp-bbr") for c in _AKAMAI], buf=2.0), "cp-bbr")),
        "S0.cp-akamaie-second-large": lambda: _m(
            [
                r.share_a / (r.share_a + r.share_b)
                for r in _many(rows, [("cdn-iw16", "cdn-iw32"), ("cdn-iw16", "cp-bbr")], buf=2.0, order=B1)
            ],
            [
                r.share_a / (r.share_a + r.share_b)
                for r in _many(rows, [("cdn-iw16", "cdn-iw32"), ("cdn-iw16", "cp-bbr")], buf=2.0, order=A1)
            ],
        ),
        "S0.cp-fairer-large-buffer": lambda: _m(_abs(_many(rows, _CP_CP, buf=2.0)), _abs(_many(rows, _CP_CP))),
    }


def _measures_aqm(rows: list[Row]) -> dict[str, Callable[[], Measurement]]:
    """The claims on CoDel and FQ-CoDel at 2 BDP."""
    S, A1 = _sel, ORDERS[0]
    return {
        "S0.codel-bbr-cps-fair": lambda: _m(_abs(S(rows, "cp-bbr", "cp-bbr", 2.0, "codel"))),
        "S0.codel-akamaie-first": lambda: _m(_tw(S(rows, "cdn-iw16", "cp-bbr", 2.0, "codel", order=A1), "cdn-iw16")),
        "S0.codel-intra": lambda: _m(_abs(S(rows, "cp-bbr", "cp-bbr", 2.0, "codel")), _abs(S(rows, "cp-bbr", "cp-bbr", 2.0))),
        "S0.codel-mixed-unfair": lambda: _m(
            _abs(_many(rows, [(c, "cp-bbr") for c in _AKAMAI], buf=2.0, qdisc="codel")), _abs(S(rows, "cp-bbr", "cp-bbr", 2.0, "codel"))
        ),
        "S0.fq-codel-fair": lambda: _m(_abs(_many(rows, _CP_CP, buf=2.0, qdisc="fq_codel"))),
        "S0.fq-codel-improves": lambda: _m(
            _abs(_many(rows, _CP_CP, buf=2.0, qdisc="fq_codel")), _abs(_many(rows, _CP_CP, buf=2.0, qdisc="codel"))
        ),
        "S0.fq-codel-akamaie-slight": lambda: _m(
            _tw(_many(rows, [("cdn-iw16", "cdn-iw32"), ("cdn-iw16", "cp-bbr")], buf=2.0, qdisc="fq_codel"), "cdn-iw16")
        ),
    }


def measure(results: list[dict[str, Any]]) -> dict[str, Measurement]:
    """Each simulator claim of ccfair.claims.s0 measured on the runs of :func:`tasks` (results in task order)."""
    rows = [Row(**r) for r in results]
    out = {}
    for cid, fn in _measures(rows).items():
        m = fn()
        if m.values:
            out[cid] = replace(m, note=NOTES.get(cid, ""))
    return out


#: The stored real-Linux runs of S0's lab pairs (bench/data/, read only; CI reads them, never re-measures).
TESTBED_DATA = Path(__file__).resolve().parents[3] / "bench" / "data"
_TB_REALISM = "realism-testbed-2026-11-25.jsonl"
_TB_CUBIC = "testbed-cubic-pair-0.5bdp-2026-11-25.jsonl"
_TB_EXTRA = "s0-testbed-extra-2026-11-29.jsonl"


def _jsonl(name: str) -> list[dict[str, Any]]:
    path = TESTBED_DATA / name
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def testbed_rows() -> list[tuple[str, str, str, float]]:
    """Every stored testbed run at S0's base setting, 0.5 BDP, drop-tail: (a, b, order, fness)."""
    out = []
    for r in _jsonl(_TB_REALISM):
        a_b, bdp = r["point"].split()
        if bdp == "0.5":
            a, b = a_b.split("/")
            out.append((a, b, ORDERS[0], float(r["summary"]["fness"])))
    out += [("cubic", "cubic", ORDERS[0], float(r["summary"]["fness"])) for r in _jsonl(_TB_CUBIC)]
    for r in _jsonl(_TB_EXTRA):
        p = r["point"]
        out.append((p["a"], p["b"], p["order"], float(r["summary"]["fness"])))
    return out


def measure_testbed() -> dict[str, Measurement]:
    """The testbed twins of ccfair.claims.s0 (``backend="testbed"``) from the stored runs; a claim without runs is absent."""
    tb = testbed_rows()

    def f(a: str, b: str) -> list[tuple[str, float]]:
        return [(o, x) for (ra, rb, o, x) in tb if (ra, rb) == (a, b)]

    def first(rs: list[tuple[str, float]]) -> list[float]:
        return [-x if o == ORDERS[0] else x for o, x in rs]

    cc, bb, pp = f("cubic", "cubic"), f("bbr", "bbr"), f(_P, _P)
    # the realism campaign names the pair by start order: "bbr/cubic" is BBR first (flow A = BBR)
    bbr_cubic = [x for _, x in f("cubic", "bbr")] + [-x for _, x in f("bbr", "cubic")]
    got: dict[str, tuple[list[float], list[float], Literal["mean", "median", "std"]]] = {
        "S0.bbr-monopolizes.testbed": (bbr_cubic, [], "mean"),
        "S0.self-fair-cubic.testbed": ([abs(x) for _, x in cc], [], "mean"),
        "S0.self-fair-bbr.testbed": ([abs(x) for _, x in bb], [], "mean"),
        "S0.self-fair-paced.testbed": ([abs(x) for _, x in pp], [], "mean"),
        "S0.bbr-variance-cubic.testbed": (first(bb), first(cc), "std"),
        "S0.pacing-vs-cubic.testbed": ([abs(x) for _, x in f("cubic", _P)], [abs(x) for _, x in cc], "mean"),
        "S0.pacing-vs-paced.testbed": ([abs(x) for _, x in pp], [abs(x) for _, x in cc], "mean"),
    }
    out = {}
    for cid, (v, w, stat) in got.items():
        needs_minus = cid in ("S0.bbr-variance-cubic.testbed", "S0.pacing-vs-cubic.testbed", "S0.pacing-vs-paced.testbed")
        if len(v) >= 2 and (len(w) >= 2 or not needs_minus):
            out[cid] = replace(_m(v, w if needs_minus else None, stat=stat), note=NOTES.get(cid, ""))
    return out


def figures(results: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """S0's figure type: fness per run plus KDE per pair, "A first" | "B first", per buffer and qdisc (lab pairs)."""
    import pandas as pd

    from ccfair.plots import fness_scatter_kde

    df = pd.DataFrame(results)
    df = df[(df["scenario"] == "lab") & (df["rate"] == BASE[0]) & (df["rtt_ms"] == float(BASE[1]))]
    out = []
    for (buf, q), sub in df.groupby(["buffer_bdp", "qdisc"], sort=False):
        title = f"S0: {BASE[0]}, {BASE[1]} ms, {buf:g} BDP, {q} (lab CCAs)"
        out.append((title, fness_scatter_kde(sub, pair_col="pair", order_col="order", a_col="a", b_col="b", title=title)))
    return out


_TB_2BDP = (
    "ccfair's testbed agrees with the simulator, not with S0: real Linux BBRv1 vs CUBIC at 2 BDP "
    "(bench/data/realism-testbed-2026-11-25.jsonl, 5-10 runs per order) gives a mean fness towards BBR of 0.40 "
    "when BBR starts first and 0.55 when CUBIC does, and a mean queue of 65 packets"
)
_IW_ONLY = (
    "setup detail the study does not give: the Akamai stand-ins differ from a lab CUBIC flow only in the initial "
    "window, which matters in the first round trips, long before the 10-45 s window; S0 itself suspects more "
    "differences ('Akamai uses different configuration parameters')"
)
_SAME_SENDER = (
    "setup detail the study does not give: the cp-bbr stand-in is the same BBRv1 sender as the lab flow, so the pair "
    "is BBR against BBR; what makes the CP win (its tuning) is not known"
)

#: Why a claim is not reproduced, where the mechanism is known (shown on the board beside the verdict).
NOTES: dict[str, str] = {
    "S0.self-fair-bbr": (
        "model and testbed agree against S0: two BBRv1 flows in a 0.5 BDP buffer keep a first-flow advantage (the "
        "testbed twin S0.self-fair-bbr.testbed shows it too)"
    ),
    "S0.self-fair-bbr.testbed": "the testbed disagrees with the study too: the BBR flow that starts first keeps more in every run",
    "S0.pacing-vs-paced": (
        "model gap or setup: in the simulator a paced CUBIC pair is fairer than an unpaced one; the testbed twin "
        "S0.pacing-vs-paced.testbed is inconclusive, while on the testbed one paced flow against an unpaced one "
        "is less fair (S0.pacing-vs-cubic.testbed reproduced), as S0 says"
    ),
    "S0.cubic-vs-akamaia-small": _IW_ONLY,
    "S0.cubic-vs-akamai-large": _IW_ONLY,
    "S0.cubic-vs-bbr-cps-large-order": (
        "S0 does not say which order favours the CP; read as the first flow's advantage, the simulator shows the "
        "opposite (the BBR flow gains when it starts second); " + _TB_2BDP
    ),
    "S0.bbr-vs-google-small": _SAME_SENDER,
    "S0.cp-google-first-small": _SAME_SENDER + "; the first BBR flow keeps an advantage, short of domination",
    "S0.bbr-vs-akamai-large": "the CUBIC-like CPs keep part of the link against BBR at 2 BDP; " + _TB_2BDP,
    "S0.bbr-vs-akamai-large-order": "the simulated BBR flow gains when it starts second, not first; " + _TB_2BDP,
    "S0.cp-bbr-dominates-akamai-large": "BBR does not dominate CUBIC-like flows at 2 BDP; " + _TB_2BDP,
    "S0.t2-qsize-bbr-2bdp": (
        "the queue follows the competing CUBIC-like flow, which keeps its share at 2 BDP (S0.bbr-vs-akamai-large); " + _TB_2BDP
    ),
    "S0.t2-retrans-bbr-2bdp": "retransmission counts depend on the CPs' loss recovery and tuning, which S0 does not give",
    "S0.t2-retrans-cubic-2bdp": "retransmission counts depend on the CPs' loss recovery and tuning, which S0 does not give",
    "S0.t2-retrans-cubic-05bdp": "retransmission counts depend on the CPs' loss recovery and tuning, which S0 does not give",
    "S0.codel-akamaie-first": (
        "under CoDel the simulated BBRv1 takes about 90 % from a CUBIC-like flow in either order "
        "(S0.codel-mixed-unfair), so AkamaiE cannot dominate it; S0's AkamaiE differs in ways S0 does not give"
    ),
    "S0.codel-intra": "in the simulator two BBR flows are already fair in a 2 BDP drop-tail buffer, so CoDel cannot improve them",
    "S0.fq-codel-akamaie-slight": (
        "under FQ-CoDel the simulated AkamaiE gets slightly less than its peers, within 0.04 of equal; S0's slight "
        "advantage depends on its stack"
    ),
}


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


def judged(rows: list[Row]) -> list[dict[str, Any]]:
    """Every S0 simulator claim the rows measure, judged (ccfair.claims.rules): id, verdict, estimate, interval, runs, figure."""
    from ccfair.claims import get
    from ccfair.claims.rules import judge

    out = []
    for cid, m in measure([asdict(r) for r in rows]).items():
        j = judge(get(cid), m)
        out.append(
            {
                "id": cid,
                "verdict": j.verdict,
                "estimate": j.estimate,
                "low": j.low,
                "high": j.high,
                "runs": j.runs,
                "figure": m.figure,
                "note": m.note,
            }
        )
    return out


def print_claims(judgements: list[dict[str, Any]], write: Callable[[str], None] = print) -> None:
    from ccfair.claims import get
    from ccfair.claims.rules import describe

    write("| claim | S0 says | rule | ccfair: estimate [95 % interval] | verdict |")
    write("|---|---|---|---|---|")
    for o in judgements:
        c = get(o["id"])
        fig = f"{o['estimate']:.3g} [{o['low']:.3g}, {o['high']:.3g}], {o['runs']} runs"
        cells = [o["id"], c.quote, describe(c.rule), fig]
        write("| " + " | ".join(x.replace("|", "\\|") for x in cells) + f" | **{o['verdict']}** |")


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
    a = _parser().parse_args(argv)
    scenarios, qdiscs, rates, rtts, buffers, reps = _settings(a)
    points = grid(scenarios, rates, rtts, buffers, qdiscs, reps)
    t0 = time.perf_counter()
    twins = [t for t in map(bbr3_twin, points) if t is not None] if a.bbr3 else []
    total = len(points) + len(twins)  # the BBRv3 twins are runs too: the count ends at the total
    progress = _progress(total, t0, quiet=a.json)
    rows = run_grid(points, a.seed, a.backend, a.jobs, progress)
    rows3 = run_grid(twins, a.seed, a.backend, a.jobs, progress) if twins else []
    wall = time.perf_counter() - t0
    outcomes = judged(rows)
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
    claims_json = outcomes
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
    _print_text(a.backend, reps, wall, rows, rows3, outcomes, table)
    return 0


def _parser() -> argparse.ArgumentParser:
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
    add_run_options(
        ap,
        "parallel processes (simulator)",
        json_help="print one JSON object (claims, distributions, runs) instead of tables",
        bbr3_help="also run every lab BBR flow's run with BBRv3 (the extra 'with BBRv3' column; default on)",
    )
    ap.add_argument("--out", default=None, help="directory for runs.csv, distributions.csv, claims.json and the figures")
    return ap


def _settings(a: argparse.Namespace) -> tuple[list[str], list[str], list[str], list[float], list[float], int]:
    """The grid's axes and repetitions from the options, each checked (SpecError naming the option)."""
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
    return scenarios, qdiscs, rates, rtts, buffers, reps


def _progress(total: int, t0: float, *, quiet: bool) -> Callable[[int], None]:
    """A callback counting finished runs: a line on a terminal, a line now and then in a log."""
    done, last_line = [0], [-LINE_EVERY_S]

    def progress(n: int) -> None:
        done[0] = min(total, done[0] + n)
        if quiet:
            return
        if sys.stderr.isatty():
            sys.stderr.write(f"\r{done[0]}/{total} runs")
        elif time.perf_counter() - last_line[0] >= LINE_EVERY_S or done[0] == total:  # a log: a line now and then
            last_line[0] = time.perf_counter()
            sys.stderr.write(f"{done[0]}/{total} runs, {time.perf_counter() - t0:.0f} s\n")
            sys.stderr.flush()

    return progress


def _print_text(
    backend: str, reps: int, wall: float, rows: list[Row], rows3: list[Row], outcomes: list[dict[str, Any]], table: list[dict[str, Any]]
) -> None:
    """The claims, the BBRv3 column and the distributions as tables on stdout."""
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    print(
        f"S0 preset: {len(rows) + len(rows3)} runs ({len(rows3)} of them BBRv3 twins) on the {backend} backend, {reps} repetitions per setting and start order, wall time {wall:.1f} s"
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
