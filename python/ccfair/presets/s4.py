"""S4's evaluation (Bhatti & Bateman, "Transport Protocol Throughput Fairness",
J. Networks 2009) as a preset: ``ccfair preset s4``.

Pair-wise testbed study (S4 section III): a dumbbell at 100 Mbit/s, RTT 25 /
50 / 100 / 200 ms (split both ways: here the flows' base RTT), router buffer
100 % of the BDP, 300 s runs, flow 1 at 0 s, flow 2 at 30 s, 1 s throughput
samples analysed from 60 s to 300 s, 5 runs (seeds) per setting. Each flow
starts within 100 ms after its nominal time (``START_JITTER``, from the seed),
so that the runs differ as a testbed's do; the simulator has no other source
of run-to-run variation in this setting. CCAs:
NewReno, BIC, CUBIC, Compound TCP and DCCP/CCID2.

- calibration: two flows of the same CCA (Tables III, IV): J and the
  per-position mean throughput that gives the NRU weights (w_n = 1 / Rr_n,
  S4 eq. 10: Rr_n from the same CCA in the same flow position, Table IV);
- CCID2 first vs each TCP (Tables V, VI; Figures 8-12): J, NRU tuple
  <U_N-, U_N, U_N+> and case A-E;
- each TCP first vs CCID2 (Table IX): the flow-order effect.

J is S4's Jain's index on the 1 s samples, J(t), averaged over the analysis
window (the published same-CCA J values are below Jain's index of the mean
throughputs of Table IV, which fits a mean of J(t), not J of the means; both
are computed, ``j`` is the mean of J(t)).

14-flow simulation (S4 section V.D, Tables VII, VIII): 14 senders, one of
each TCP variant of the ns-2 TCP-Linux suite S4 used ([23]: NewReno, BIC,
CUBIC, HighSpeed, H-TCP, Hybla, Illinois, TCP-LP, Scalable, Vegas, Veno,
Westwood, YeAH, Compound); same topology; segments of ns-2's default 1000
bytes (``MSS_14_BYTES``); flows start every 30 s from 0 s;
900 s; analysed from 420 s to 900 s; NRU weights from a calibration run of
14 flows of the same CCA (per start position). One run per RTT, as S4.

Quick mode (``--quick``): 1 seed instead of 5, 14-flow runs at 25/50/100/200
ms without the NRU calibration runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import math
import statistics
import sys
import time
from typing import Any

from ccfair.claims.model import Measurement
from ccfair.claims.s4 import (
    GOOD_J,
    LABEL,
    RTTS_14,
    RTTS_14_NRU,
    RTTS_MS,
    TABLE_III,
    TABLE_IX,
    TABLE_V,
    TABLE_VII_UN,
    TABLE_VIII,
)
from ccfair.presets.options import add_run_options

#: The TCP variants S4 pits against CCID2, and all five CCAs.
TCPS = ("reno", "bic", "cubic", "ctcp")
CCAS = (*TCPS, "ccid2")
#: The 14 variants of the ns-2 TCP-Linux suite (S4 [23]), one per flow, in start order.
CCAS_14 = ("reno", "bic", "cubic", "highspeed", "htcp", "hybla", "illinois", "lp", "scalable", "vegas", "veno", "westwood", "yeah", "ctcp")
RTTS_14_QUICK = (25, 50, 100, 200)
#: Runs per pair setting (S4: five); in --quick.
SEEDS = 5
QUICK_SEEDS = 2
#: Single-flow runs (S4 Figures 3(a)-7(a)): RTTs and runs per CCA and RTT.
SINGLE_RTTS_MS = (25, 200)
SINGLE_SEEDS = 3
#: Each flow starts within this much after its nominal time, drawn from the run's seed. The
#: simulator is otherwise deterministic: without it S4's 5 runs (seeds 1-5) would be one run
#: five times; on S4's testbed, scripted iperf starts and the hosts give run-to-run variation.
START_JITTER = "100ms"
#: Segment size of the 14-flow simulation: ns-2's default TCP packet size (tcl/lib/ns-default.tcl:
#: ``Agent/TCP set packetSize_ 1000``); S4 ran it in ns-2 and does not give another. The pair-wise
#: testbed runs keep ccfair's MSS (1448 B, MTU 1500 as on S4's testbed). docs/fidelity.md has the
#: 14-flow J with both sizes.
MSS_14_BYTES = 1000

#: Published (S4), declared in ccfair.claims.s4: Table III (J, same CCA), Table V (J, CCID2
#: first), Tables VII/VIII (14 flows); Table IX (J, TCP first) only in the rows the text keeps.
PUB_TCP_FIRST_J = {t: TABLE_IX[t] for t in ("bic", "cubic")}


def pair_spec(a: str, b: str, rtt_ms: int, seed: int, *, duration_s: int = 300) -> dict[str, Any]:
    """Flow 1 (``a``) at 0 s, flow 2 (``b``) at 30 s; 1 BDP drop-tail; window 60 s - end."""
    return {
        "name": f"s4-{a}-{b}-{rtt_ms}ms",
        "duration": f"{duration_s}s",
        "window": {"start": "60s", "end": f"{duration_s}s"},
        "seed": seed,
        "bin": "1s",
        "bottleneck": {"rate": "100Mbit", "delay": "0ms", "buffer": "1bdp", "qdisc": "droptail"},
        "flows": [
            {"name": "flow1", "cca": a, "rtt": f"{rtt_ms}ms", "start": "0s", "start_jitter": START_JITTER},
            {"name": "flow2", "cca": b, "rtt": f"{rtt_ms}ms", "start": "30s", "start_jitter": START_JITTER},
        ],
    }


def many_spec(ccas: tuple[str, ...] | list[str], rtt_ms: int, seed: int = 1, mss: int = MSS_14_BYTES) -> dict[str, Any]:
    """S4's 14-flow simulation: flow i starts at 30 i s; 900 s; analysed from 420 s; ns-2's 1000-byte segments."""
    return {
        "name": f"s4-14flow-{rtt_ms}ms",
        "duration": "900s",
        "window": {"start": "420s", "end": "900s"},
        "seed": seed,
        "bin": "1s",
        "bottleneck": {"rate": "100Mbit", "delay": "0ms", "buffer": "1bdp", "qdisc": "droptail"},
        "flows": [
            {"name": f"f{i:02d}", "cca": c, "rtt": f"{rtt_ms}ms", "start": f"{30 * i}s", "start_jitter": START_JITTER, "mss": mss}
            for i, c in enumerate(ccas)
        ],
    }


def lp_available() -> bool:
    """Whether this simulator build has TCP-LP (cc ``lp``), needed for the 14-flow run."""
    from ccfair import ccas

    return "lp" in ccas.available()


def tasks(quick: bool = False, seeds: int | None = None, seed: int = 1) -> list[dict[str, Any]]:
    """Every run of the preset as a small picklable dict (see :func:`run_task`).

    Full: the pairs with ``SEEDS`` seeds, single flows at 25 and 200 ms with
    ``SINGLE_SEEDS``, the 14-flow run at every RTT of Table VIII and its 14
    calibration runs at ``RTTS_14_NRU``. Quick: ``QUICK_SEEDS`` seeds, the
    14-flow run at four RTTs, no calibration runs. A task's ``seed`` is its
    repetition; the run's seed is ``seed_of(task)``, moved by the base ``seed``.
    """
    n = seeds if seeds is not None else (QUICK_SEEDS if quick else SEEDS)
    out: list[dict[str, Any]] = []
    for rtt in RTTS_MS:
        for s in range(1, n + 1):
            for c in CCAS:
                out.append({"kind": "pair", "a": c, "b": c, "rtt": rtt, "seed": s})
            for t in TCPS:
                out.append({"kind": "pair", "a": "ccid2", "b": t, "rtt": rtt, "seed": s})
                out.append({"kind": "pair", "a": t, "b": "ccid2", "rtt": rtt, "seed": s})
    for rtt in SINGLE_RTTS_MS:
        for s in range(1, (QUICK_SEEDS if quick else SINGLE_SEEDS) + 1):
            for c in CCAS:
                out.append({"kind": "single", "a": c, "rtt": rtt, "seed": s})
    if lp_available():
        for rtt in RTTS_14_QUICK if quick else RTTS_14:
            out.append({"kind": "many", "cal": None, "rtt": rtt, "seed": 1})
            if not quick and rtt in RTTS_14_NRU:
                for c in CCAS_14:
                    out.append({"kind": "many", "cal": c, "rtt": rtt, "seed": 1})
    if seed != 1:
        for task in out:
            task["base_seed"] = seed
    return out


def seed_of(task: dict[str, Any]) -> int:
    """The run's seed: the repetition, moved by 1000 per base seed above 1."""
    return task["seed"] + 1000 * (task.get("base_seed", 1) - 1)


def single_spec(cca: str, rtt_ms: int, seed: int, *, duration_s: int = 300) -> dict[str, Any]:
    """One flow alone on the pair-wise dumbbell (S4 section III.A's single-flow runs), window 0 - end."""
    d = pair_spec(cca, cca, rtt_ms, seed, duration_s=duration_s)
    d["name"] = f"s4-single-{cca}-{rtt_ms}ms"
    d["window"] = {"start": "0s", "end": f"{duration_s}s"}
    d["flows"] = d["flows"][:1]
    return d


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """Run one task; returns the task, per-flow window-mean throughput, mean J(t), J of the means and 1 s samples."""
    from ccfair import metrics
    from ccfair.api import run
    from ccfair.spec import Spec

    if task["kind"] == "pair":
        d = pair_spec(task["a"], task["b"], task["rtt"], seed_of(task))
    elif task["kind"] == "single":
        d = single_spec(task["a"], task["rtt"], seed_of(task))
    else:
        d = many_spec([task["cal"]] * len(CCAS_14) if task["cal"] else CCAS_14, task["rtt"], seed_of(task))
    t0 = time.perf_counter()
    res = run(Spec.from_dict(d))
    x = metrics.throughput_matrix(res)
    means = [float(v) for v in x.mean(axis=0)]
    return {
        "task": task,
        "flows": list(x.columns),
        "tput": means,
        "j": metrics.mean_jain_over_time(res) if len(means) > 1 else math.nan,
        "j_means": metrics.jain(means) if len(means) > 1 else math.nan,
        "samples": [[float(v) for v in x[c]] for c in x.columns],
        "wall_s": time.perf_counter() - t0,
    }


# ---------------------------------------------------------------------------
# Tables from the run outputs
# ---------------------------------------------------------------------------


def _pairs(results: list[dict[str, Any]], a: str, b: str, rtt: int) -> list[dict[str, Any]]:
    return [r for r in results if r["task"]["kind"] == "pair" and (r["task"]["a"], r["task"]["b"], r["task"]["rtt"]) == (a, b, rtt)]


def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else math.nan


def pair_j(results: list[dict[str, Any]], a: str, b: str, rtt: int) -> float:
    """Mean over runs of the mean J(t)."""
    return _mean([r["j"] for r in _pairs(results, a, b, rtt)])


def pair_tput(results: list[dict[str, Any]], a: str, b: str, rtt: int) -> tuple[float, float]:
    """Mean window throughput (bit/s) of flow 1 and flow 2 over runs."""
    rs = _pairs(results, a, b, rtt)
    return _mean([r["tput"][0] for r in rs]), _mean([r["tput"][1] for r in rs])


def pair_nru(results: list[dict[str, Any]], a: str, b: str, rtt: int) -> dict[str, Any]:
    """S4's NRU of the pair (mean over runs of U_N, U_N+, U_N-; flow NRUs; case of the run-mean flow NRUs).

    Weights (S4 eq. 10): flow 1 gets 1 / the mean throughput of flow 1 in
    ``a``'s calibration (a vs a), flow 2 1 / flow 2's in ``b``'s.
    """
    from ccfair import metrics

    w1 = 1.0 / pair_tput(results, a, a, rtt)[0]
    w2 = 1.0 / pair_tput(results, b, b, rtt)[1]
    un: list[list[float]] = []
    for r in _pairs(results, a, b, rtt):
        per = []
        for samples, w in zip(r["samples"], (w1, w2)):
            u = [10 * math.log10(max(s, 1.0) * w) for s in samples]
            per.append(sum(u) / len(u))
        un.append(per)
    flow_nru = [_mean([u[0] for u in un]), _mean([u[1] for u in un])]
    summ = metrics.nru_summary({"flow1": flow_nru[0], "flow2": flow_nru[1]})
    return {"U_n": flow_nru, "U_N": summ.system, "U_N+": summ.positive, "U_N-": summ.negative, "case": summ.case}


def many_results(results: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Per RTT of the 14-flow mix: J (mean J(t)), J of means, and, when the calibration runs are there, the NRU summary."""
    from ccfair import metrics

    out: dict[int, dict[str, Any]] = {}
    mixes = {r["task"]["rtt"]: r for r in results if r["task"]["kind"] == "many" and r["task"]["cal"] is None}
    cals = {(r["task"]["rtt"], r["task"]["cal"]): r for r in results if r["task"]["kind"] == "many" and r["task"]["cal"]}
    for rtt, r in sorted(mixes.items()):
        row: dict[str, Any] = {"j": r["j"], "j_means": r["j_means"], "tput": r["tput"]}
        if all((rtt, c) in cals for c in CCAS_14):
            flow_nru = {}
            for i, (c, samples) in enumerate(zip(CCAS_14, r["samples"])):
                w = 1.0 / max(cals[(rtt, c)]["tput"][i], 1.0)
                u = [10 * math.log10(max(s, 1.0) * w) for s in samples]
                flow_nru[c] = sum(u) / len(u)
            s = metrics.nru_summary(flow_nru)
            row.update({"U_n": flow_nru, "U_N": s.system, "U_N+": s.positive, "U_N-": s.negative, "case": s.case})
        out[rtt] = row
    return out


# ---------------------------------------------------------------------------
# Claims (ccfair.claims ids S4.*)
# ---------------------------------------------------------------------------


def judged(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each S4 claim the runs measure, with its figure and verdict (``ccfair.claims.rules.judge`` on :func:`measure`)."""
    from ccfair.claims import get, rules

    return rules.judged_json((get(cid), m) for cid, m in measure(results).items())


# ---------------------------------------------------------------------------
# Measurements of the claims (ccfair.claims.s4): per-run values, no verdicts
# ---------------------------------------------------------------------------

MBIT = 1e6
#: The high-speed TCPs of S4's comparisons.
HIGH_SPEED = ("bic", "cubic", "ctcp")


def _seeds(results: list[dict[str, Any]], kind: str, a: str, b: str | None, rtt: int) -> dict[int, dict[str, Any]]:
    """The runs of one setting by seed."""
    return {
        r["task"]["seed"]: r
        for r in results
        if r["task"]["kind"] == kind and r["task"]["a"] == a and r["task"].get("b") == b and r["task"]["rtt"] == rtt
    }


def _share1(r: dict[str, Any]) -> float:
    return r["tput"][0] / (r["tput"][0] + r["tput"][1])


def _flow_nru(samples: list[float], expected_bps: float) -> float:
    """S4's flow NRU (eqs. 3-5, 10): mean over the samples of 10 log10(r(t) / Rr), dB (r(t) floored at 1 bit/s)."""
    return statistics.fmean(10 * math.log10(max(x, 1.0) / expected_bps) for x in samples)


def run_nru(results: list[dict[str, Any]], r: dict[str, Any]) -> tuple[float, float]:
    """(U_1, U_2) of one pair run; Rr_n = flow n's mean throughput in the same-CCA pair of its CCA at that RTT (Table IV's role)."""
    t = r["task"]
    w1 = pair_tput(results, t["a"], t["a"], t["rtt"])[0]
    w2 = pair_tput(results, t["b"], t["b"], t["rtt"])[1]
    return _flow_nru(r["samples"][0], w1), _flow_nru(r["samples"][1], w2)


def _per_seed(results: list[dict[str, Any]], a: str, b: str, f: Any) -> list[float]:
    """f(runs by RTT) for every seed that has all four RTTs."""
    by_rtt = {rtt: _seeds(results, "pair", a, b, rtt) for rtt in RTTS_MS}
    seeds = sorted(set.intersection(*(set(v) for v in by_rtt.values())))
    return [f({rtt: by_rtt[rtt][s] for rtt in RTTS_MS}) for s in seeds]


def _pairs_values(results: list[dict[str, Any]], a: str, b: str, rtts: tuple[int, ...], f: Any) -> list[float]:
    return [f(r) for rtt in rtts for _, r in sorted(_seeds(results, "pair", a, b, rtt).items())]


def _m(values: list[float], figure: str, note: str = "", minus: list[float] | None = None) -> Measurement:
    return Measurement(tuple(values), tuple(minus or ()), figure=figure, note=note)


def _per_rtt(results: list[dict[str, Any]], a: str, b: str, f: Any, fmt: str = "{:.2f}") -> str:
    return " / ".join(fmt.format(statistics.fmean(_pairs_values(results, a, b, (rtt,), f))) for rtt in RTTS_MS) + " at 25/50/100/200 ms"


_CTCP_NOTE = (
    "model: ccfair's Compound keeps its delay window at 0 in most rounds of a 1-BDP drop-tail queue (the Caltech "
    "module's gamma rule), so it behaves as Reno against CCID2 (bench/s4_compound.py, docs/fidelity.md 'Compound TCP "
    "vs CCID2'); a Compound whose delay window never drains gives S4's unfairness"
)
_HS_NOTE = (
    "model gap, cause not isolated: ccfair's BIC and CUBIC take more of the link from CCID2 than S4's testbed flows "
    "did, already at 25 ms where S4 measured J 0.94; S4's Linux 2.6.22 BIC/CUBIC and CCID2 details (e.g. CCID2's "
    "sequence window) are not modelled"
)
_SECOND_FLOW_NOTE = (
    "S4's Table IV has the later flow well ahead for BIC and CUBIC at every RTT (flow 1 about 0.35 of the pair) and "
    "does not say why; in ccfair the two flows of one CCA end up near equal over 60-300 s (cause of S4's asymmetry "
    "not identified)"
)
NOTES = {
    "self-share-bic": _SECOND_FLOW_NOTE,
    "self-share-cubic": _SECOND_FLOW_NOTE,
    "self-share-reno": _SECOND_FLOW_NOTE,
    "ccid2-j-bic": _HS_NOTE,
    "ccid2-j-cubic": _HS_NOTE,
    "ccid2-share-bic": _HS_NOTE,
    "ccid2-share-cubic": _HS_NOTE,
    "bic-cubic-higher": _HS_NOTE,
    "ccid2-j-ctcp": _CTCP_NOTE,
    "ccid2-share-ctcp": _CTCP_NOTE,
    "unfair-dip-100": "with Compound as Reno (" + _CTCP_NOTE + ") and BIC/CUBIC still falling at 200 ms; S4 itself "
    "does not know the dip's cause ('It is not clear from our experiments why the fairness decreases ... but then "
    "increases')",
    "nru-dip-100": "see S4.unfair-dip-100",
    "ccid2-recovers-200": "S4's explanation ('the larger window size at the higher BDP') is its belief, 'though we have "
    "not yet examined this explicitly'; in ccfair CCID2 keeps losing share to BIC and CUBIC up to 200 ms",
    "compound-best-utilisation": "S4 contradicts itself: its Table IV gives Compound 44 + 43 = 87 Mb/s at 200 ms "
    "against NewReno's 38 + 56 = 94 and BIC's 34 + 60 = 94, so Compound does not have the highest total; "
    "in ccfair Compound runs as Reno in a 1-BDP queue (docs/presets.md 'Compound TCP vs CCID2')",
    "ccid2-alone-high-bdp": "ccfair's lone CCID2 flow fills the 1-BDP link at 200 ms as a lone Reno flow does, "
    "but for its start-up; S4's Linux 2.6.22 CCID2 fell short at high BDP (its CCID2 pair totals 65 Mb/s at 200 ms, "
    "Table IV); not modelled there: Linux's sequence-window limit on cwnd (RFC 4340 7.5.2) and 2.6.22's Ack Ratio "
    "handling (cause not isolated)",
    "newreno-slightly-higher": "S4 contradicts itself: its Table VI gives CCID2 56 against NewReno 38 Mb/s at 25 ms "
    "and 52 against 42 at 50 ms ('| NewReno | 56 | 38 | 52 | 42 | 41 | 50 | 32 | 36 |'), i.e. CCID2 higher at "
    "the two lower RTTs",
    "nru-tcp-above": "S4 contradicts itself for NewReno: Table VI gives CCID2 the higher throughput at 25 and 50 ms "
    "(56 against 38, 52 against 42 Mb/s)",
    "highspeed-below-0.8": "S4 contradicts itself: its Table V has J = 0.85 for CUBIC at 200 ms and for Compound at "
    "50 and 200 ms, and 0.80 for BIC and CUBIC at 50 ms",
    "ccid2-first-worse-case": "S4 contradicts itself: Table IX minus Table V averages -0.02 over the 16 settings "
    "(NewReno lower with the TCP first at every RTT, BIC and CUBIC 0.25 lower at 200 ms), i.e. the TCP-first "
    "runs are not the fairer case",
    "bic-25-similar": "S4 misquotes its Table IV here ('BIC (Table IV Flow 2) is 51Mb/s' where Table IV gives BIC "
    "flow 2 61 Mb/s at 25 ms; 51 is CCID2's flow 2); the published value uses CCID2's own numbers (40 against 43 Mb/s); " + _HS_NOTE,
    "bic-100-third": "S4's text and tables differ slightly: 'DCCP/CCID2 (Table VI Flow 1) is 15Mb/s' where Table VI "
    "gives 16 Mb/s; 'BIC (Table IV Flow 2) is 49Mb/s' where Table IV gives 63; " + _HS_NOTE,
    "14-flow-nru-improves": "S4 contradicts itself: its Table VII gives U_N -12.97 dB at 100 ms falling to -18.47 dB "
    "at 200 ms (every step lower), while the text says the mean system fairness improves after 100 ms",
    "14-flow-nru": "the NRU weights come from ccfair's own 14-flow single-CCA runs; S4 says only 'a run of 14 flows "
    "of the same type' (which flow's position gives each weight is not stated; ccfair uses the same start position)",
    "14-flow-j": "S4's 14-flow run is a single ns-2 run of Linux 2.6-era modules; S4: 'the actual protocol behaviour "
    "is not important' there",
}


def measure(results: list[dict[str, Any]]) -> dict[str, Measurement]:
    """Per claim of ccfair.claims.s4, the quantity's value in each run (or group of runs); no verdicts."""
    out = {**_measure_alone_and_self(results), **_measure_against_ccid2(results), **_measure_order(results)}
    out.update(measure_many(results))
    return {f"S4.{k}": dataclasses.replace(m, note=m.note or NOTES.get(k, "")) for k, m in out.items()}


def _measure_alone_and_self(results: list[dict[str, Any]]) -> dict[str, Measurement]:
    """Same-CCA pairs (Tables III, IV) and single flows (Figures 3(a)-7(a))."""
    out: dict[str, Measurement] = {}
    for c in CCAS:
        v = _per_seed(results, c, c, lambda rs: statistics.fmean(r["j"] for r in rs.values()))
        out[f"self-j-{c}"] = _m(v, "J " + _per_rtt(results, c, c, lambda r: r["j"]))
        v = _per_seed(results, c, c, lambda rs: statistics.fmean(_share1(r) for r in rs.values()))
        out[f"self-share-{c}"] = _m(v, "flow 1 share " + _per_rtt(results, c, c, _share1))
    tot = {c: _seeds(results, "pair", c, c, 200) for c in CCAS}
    seeds200 = sorted(set.intersection(*(set(v) for v in tot.values())))
    v = [sum(tot["ctcp"][s]["tput"]) / MBIT - max(sum(tot[c][s]["tput"]) / MBIT for c in CCAS if c != "ctcp") for s in seeds200]
    out["compound-best-utilisation"] = _m(
        v,
        "totals at 200 ms (Mbit/s): "
        + ", ".join(f"{LABEL[c]} {statistics.fmean(sum(r['tput']) for r in tot[c].values()) / MBIT:.0f}" for c in CCAS),
    )
    single = {(c, rtt): _seeds(results, "single", c, None, rtt) for c in CCAS for rtt in SINGLE_RTTS_MS}
    peaks = [max(r["samples"][0]) / MBIT for c in CCAS for r in single[(c, 25)].values()]
    out["single-peak"] = _m(peaks, f"peak 1 s throughput at 25 ms {min(peaks):.1f}-{max(peaks):.1f} Mbit/s" if peaks else "-")
    for t in ("bic", "cubic", "ctcp"):
        s_t, s_r = single[(t, 200)], single[("reno", 200)]
        v = [(s_t[s]["tput"][0] - s_r[s]["tput"][0]) / MBIT for s in sorted(set(s_t) & set(s_r))]
        out[f"single-{t}-vs-newreno"] = _m(
            v,
            f"alone at 200 ms: {LABEL[t]} {_mean([r['tput'][0] for r in s_t.values()]) / MBIT:.1f}, NewReno {_mean([r['tput'][0] for r in s_r.values()]) / MBIT:.1f} Mbit/s",
        )
    a25, a200 = single[("ccid2", 25)], single[("ccid2", 200)]
    v = [(a25[s]["tput"][0] - a200[s]["tput"][0]) / MBIT for s in sorted(set(a25) & set(a200))]
    out["ccid2-alone-high-bdp"] = _m(
        v,
        f"CCID2 alone {_mean([r['tput'][0] for r in a25.values()]) / MBIT:.1f} Mbit/s at 25 ms, {_mean([r['tput'][0] for r in a200.values()]) / MBIT:.1f} at 200 ms",
    )
    return out


def _measure_against_ccid2(results: list[dict[str, Any]]) -> dict[str, Measurement]:
    """CCID2 first against each TCP (Tables V, VI; NRU)."""
    out: dict[str, Measurement] = {}
    for t in TCPS:
        v = _per_seed(results, "ccid2", t, lambda rs: statistics.fmean(r["j"] for r in rs.values()))
        out[f"ccid2-j-{t}"] = _m(v, "J " + _per_rtt(results, "ccid2", t, lambda r: r["j"]))
        v = _per_seed(results, "ccid2", t, lambda rs: statistics.fmean(_share1(r) for r in rs.values()))
        out[f"ccid2-share-{t}"] = _m(v, "CCID2 share " + _per_rtt(results, "ccid2", t, _share1))
    out["ccid2-newreno-good"] = _m(
        _pairs_values(results, "ccid2", "reno", RTTS_MS, lambda r: r["j"] - GOOD_J),
        "J " + _per_rtt(results, "ccid2", "reno", lambda r: r["j"]),
    )
    out["ccid2-newreno-rtt"] = _m(
        _per_seed(results, "ccid2", "reno", lambda rs: (_share1(rs[25]) + _share1(rs[50]) - _share1(rs[100]) - _share1(rs[200])) / 2),
        "CCID2 share " + _per_rtt(results, "ccid2", "reno", _share1),
    )

    def tput_fig(a: str, b: str) -> str:
        f1 = _per_rtt(results, a, b, lambda r: r["tput"][0] / MBIT, "{:.0f}")
        return f1 + " vs " + _per_rtt(results, a, b, lambda r: r["tput"][1] / MBIT, "{:.0f}")

    out["newreno-slightly-higher"] = _m(
        _pairs_values(results, "ccid2", "reno", RTTS_MS, lambda r: (r["tput"][1] - r["tput"][0]) / MBIT),
        "Mbit/s CCID2 " + tput_fig("ccid2", "reno"),
        NOTES["newreno-slightly-higher"],
    )
    hs = HIGH_SPEED
    out["highspeed-below-0.8"] = _m(
        [0.8 - x for t in hs for x in _pairs_values(results, "ccid2", t, (50, 100, 200), lambda r: r["j"])],
        "; ".join(f"{LABEL[t]} J " + _per_rtt(results, "ccid2", t, lambda r: r["j"]) for t in hs),
        NOTES["highspeed-below-0.8"],
    )
    out["bic-cubic-higher"] = _m(
        [x for t in ("bic", "cubic") for x in _pairs_values(results, "ccid2", t, RTTS_MS, lambda r: (r["tput"][1] - r["tput"][0]) / MBIT)],
        "; ".join(f"Mbit/s CCID2 vs {LABEL[t]}: " + tput_fig("ccid2", t) for t in ("bic", "cubic")),
    )
    out["unfair-dip-100"] = _m(
        [x for t in hs for x in _per_seed(results, "ccid2", t, lambda rs: min(rs[50]["j"], rs[200]["j"]) - rs[100]["j"])],
        "; ".join(f"{LABEL[t]} J " + _per_rtt(results, "ccid2", t, lambda r: r["j"]) for t in hs),
    )

    def spread(r: dict[str, Any]) -> float:
        u1, u2 = run_nru(results, r)
        return u2 - u1

    out["nru-dip-100"] = _m(
        [x for t in hs for x in _per_seed(results, "ccid2", t, lambda rs: spread(rs[100]) - max(spread(rs[50]), spread(rs[200])))],
        "; ".join(f"{LABEL[t]} U_n(TCP) - U_n(CCID2) " + _per_rtt(results, "ccid2", t, spread, "{:.1f}") + " dB" for t in hs),
    )
    out["ccid2-recovers-200"] = _m(
        [x for t in hs for x in _per_seed(results, "ccid2", t, lambda rs: (rs[200]["tput"][0] - rs[100]["tput"][0]) / MBIT)],
        "; ".join(f"CCID2 vs {LABEL[t]} " + _per_rtt(results, "ccid2", t, lambda r: r["tput"][0] / MBIT, "{:.0f}") + " Mbit/s" for t in hs),
    )
    out["nru-tcp-above"] = _m(
        [x for t in TCPS for x in _pairs_values(results, "ccid2", t, RTTS_MS, spread)],
        "; ".join(f"{LABEL[t]} " + _per_rtt(results, "ccid2", t, spread, "{:+.1f}") + " dB" for t in TCPS),
        NOTES["nru-tcp-above"],
    )
    out["bic-25-similar"] = _m(
        _pairs_values(results, "ccid2", "bic", (25,), lambda r: run_nru(results, r)[0]),
        "U_n(CCID2) against BIC " + _per_rtt(results, "ccid2", "bic", lambda r: run_nru(results, r)[0], "{:+.1f}") + " dB",
        NOTES["bic-25-similar"],
    )
    ref = pair_tput(results, "ccid2", "ccid2", 100)[0]
    out["bic-100-third"] = _m(
        _pairs_values(results, "ccid2", "bic", (100,), lambda r: r["tput"][0] / ref),
        f"CCID2 {pair_tput(results, 'ccid2', 'bic', 100)[0] / MBIT:.1f} Mbit/s against BIC, {ref / MBIT:.1f} against CCID2 (100 ms)",
        NOTES["bic-100-third"],
    )
    return out


def _measure_order(results: list[dict[str, Any]]) -> dict[str, Measurement]:
    """The TCP first against CCID2 (Tables IX, X) next to CCID2 first."""
    out: dict[str, Measurement] = {}
    for rtt in (50, 100, 200):
        first_tcp = [x for t in ("bic", "cubic") for x in _pairs_values(results, t, "ccid2", (rtt,), lambda r: r["j"])]
        first_ccid2 = [x for t in ("bic", "cubic") for x in _pairs_values(results, "ccid2", t, (rtt,), lambda r: r["j"])]
        out[f"order-{rtt}"] = _m(
            first_tcp, f"J TCP first {_mean(first_tcp):.2f}, CCID2 first {_mean(first_ccid2):.2f} (BIC, CUBIC, {rtt} ms)", minus=first_ccid2
        )
    out["tcp-first-dip-gone"] = _m(
        [x for t in ("bic", "cubic") for x in _per_seed(results, t, "ccid2", lambda rs: rs[100]["j"] - rs[200]["j"])],
        "; ".join(f"{LABEL[t]} first J " + _per_rtt(results, t, "ccid2", lambda r: r["j"]) for t in ("bic", "cubic")),
    )
    out["tcp-first-distinction"] = _m(
        [
            statistics.pstdev([pair_j(results, t, "ccid2", rtt) for t in HIGH_SPEED])
            - statistics.pstdev([pair_j(results, "ccid2", t, rtt) for t in HIGH_SPEED])
            for rtt in RTTS_MS
        ],
        "std of the three J, TCP first / CCID2 first: "
        + ", ".join(
            f"{statistics.pstdev([pair_j(results, t, 'ccid2', rtt) for t in HIGH_SPEED]):.2f}/{statistics.pstdev([pair_j(results, 'ccid2', t, rtt) for t in HIGH_SPEED]):.2f}"
            for rtt in RTTS_MS
        )
        + " at 25/50/100/200 ms",
    )
    first_tcp = [x for t in TCPS for x in _pairs_values(results, t, "ccid2", RTTS_MS, lambda r: r["j"])]
    first_ccid2 = [x for t in TCPS for x in _pairs_values(results, "ccid2", t, RTTS_MS, lambda r: r["j"])]
    out["ccid2-first-worse-case"] = _m(
        first_tcp,
        f"mean J TCP first {_mean(first_tcp):.3f}, CCID2 first {_mean(first_ccid2):.3f}",
        NOTES["ccid2-first-worse-case"],
        minus=first_ccid2,
    )
    out["tcp-first-share"] = _m(
        [x for t in ("bic", "cubic") for x in _pairs_values(results, t, "ccid2", (100, 200), _share1)],
        "; ".join(f"{LABEL[t]} first, its share " + _per_rtt(results, t, "ccid2", _share1) for t in ("bic", "cubic")),
    )
    return out


def measure_many(results: list[dict[str, Any]]) -> dict[str, Measurement]:
    """The 14-flow claims (Tables VII, VIII); empty when the runs are not there (no TCP-LP in this build)."""
    many = many_results(results)
    if not many:
        return {}
    rtts = sorted(many)
    out = {
        "14-flow-j": _m(
            [many[r]["j"] - TABLE_VIII[r] for r in rtts],
            "J " + " / ".join(f"{many[r]['j']:.2f}" for r in rtts) + f" at {'/'.join(map(str, rtts))} ms",
            NOTES["14-flow-j"],
        ),
        "14-flow-j-falls": _m(
            [many[a]["j"] - many[b]["j"] for a, b in itertools.pairwise(rtts)], "J " + " / ".join(f"{many[r]['j']:.2f}" for r in rtts)
        ),
    }
    cal = [r for r in rtts if "U_N" in many[r]]
    if cal:
        out["14-flow-nru"] = _m(
            [many[r]["U_N"] - TABLE_VII_UN[r] for r in cal],
            "U_N " + " / ".join(f"{many[r]['U_N']:.1f}" for r in cal) + f" dB at {'/'.join(map(str, cal))} ms",
            NOTES["14-flow-nru"],
        )
    if 100 in cal and 200 in cal:
        out["14-flow-nru-improves"] = _m(
            [many[200]["U_n"][c] - many[100]["U_n"][c] for c in CCAS_14],
            f"U_N {many[100]['U_N']:.1f} dB at 100 ms, {many[200]['U_N']:.1f} at 200 ms",
            NOTES["14-flow-nru-improves"],
        )
    return out


# ---------------------------------------------------------------------------
# Report figures and the printed tables
# ---------------------------------------------------------------------------


def figures(results: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """S4's figure types: J and NRU vs RTT per pair (Figures 8-12) and the 14-flow J vs RTT (Figure 13b)."""
    import pandas as pd

    from ccfair import plots

    rows = []
    for t in TCPS:
        for rtt in RTTS_MS:
            n = pair_nru(results, "ccid2", t, rtt)
            for r in _pairs(results, "ccid2", t, rtt):
                rows.append(
                    {"pair": f"CCID2 vs {LABEL[t]}", "rtt_ms": rtt, "jfi": r["j"], "U_N": n["U_N"], "U_N+": n["U_N+"], "U_N-": n["U_N-"]}
                )
    figs = [("S4: CCID2 (flow 1) vs TCP (flow 2): J and NRU vs RTT (Figures 8-12)", plots.jfi_nru_vs_rtt(pd.DataFrame(rows)))]
    many = many_results(results)
    if many:
        df = pd.DataFrame(
            [{"pair": "ccfair", "rtt_ms": r, "jfi": v["j"]} for r, v in many.items()]
            + [{"pair": "published (ns-2)", "rtt_ms": r, "jfi": v} for r, v in TABLE_VIII.items()]
        )
        figs.append(("S4: 14 flows, 14 CCAs: J vs RTT (Table VIII, Figure 13b)", plots.jfi_nru_vs_rtt(df, nru_cols=())))
    return figs


def _per_rtt_table(title: str, first: str) -> list[str]:
    """A Markdown table's title and header: a column ``first``, then one per RTT of RTTS_MS."""
    return [title, "", f"| {first} | " + " | ".join(f"{r} ms" for r in RTTS_MS) + " |", "|---|" + "---|" * len(RTTS_MS)]


def tables(results: list[dict[str, Any]]) -> str:
    """The preset's tables as Markdown, published values in brackets."""
    lines = _per_rtt_table("Same-CCA pairs (Table III): mean J(t) [published]", "CCA")
    for c in CCAS:
        lines.append(
            f"| {LABEL[c]} | " + " | ".join(f"{pair_j(results, c, c, r):.2f} [{TABLE_III[c][i]:.2f}]" for i, r in enumerate(RTTS_MS)) + " |"
        )
    lines += ["", *_per_rtt_table("Same-CCA pairs (Table IV): mean throughput flow 1 / flow 2, Mbit/s", "CCA")]
    for c in CCAS:
        lines.append(
            f"| {LABEL[c]} | "
            + " | ".join("{:.0f} / {:.0f}".format(*(x / 1e6 for x in pair_tput(results, c, c, r))) for r in RTTS_MS)
            + " |"
        )
    lines += ["", "CCID2 first (Table V): J [published]; throughput CCID2 / TCP Mbit/s (Table VI); NRU <U_N-, U_N, U_N+> dB, case", ""]
    lines += ["| TCP | RTT ms | J | tput | NRU | case |", "|---|---|---|---|---|---|"]
    for t in TCPS:
        for i, r in enumerate(RTTS_MS):
            n = pair_nru(results, "ccid2", t, r)
            tp = pair_tput(results, "ccid2", t, r)
            lines.append(
                f"| {LABEL[t]} | {r} | {pair_j(results, 'ccid2', t, r):.2f} [{TABLE_V[t][i]:.2f}] | {tp[0] / 1e6:.0f} / {tp[1] / 1e6:.0f} "
                f"| <{n['U_N-']:.1f}, {n['U_N']:.1f}, {n['U_N+']:.1f}> | {n['case']} |"
            )
    lines += ["", *_per_rtt_table("TCP first (Table IX): J [published where S4 prints it]", "TCP")]
    for t in TCPS:
        pub = PUB_TCP_FIRST_J.get(t)
        lines.append(
            f"| {LABEL[t]} | "
            + " | ".join(f"{pair_j(results, t, 'ccid2', r):.2f}" + (f" [{pub[i]:.2f}]" if pub else "") for i, r in enumerate(RTTS_MS))
            + " |"
        )
    many = many_results(results)
    if many:
        lines += ["", "14 flows, 14 CCAs (Tables VII, VIII): mean J(t) [published], J of mean throughputs, U_N dB [published]", ""]
        lines += ["| RTT ms | J | J of means | U_N | case |", "|---|---|---|---|---|"]
        for r, v in many.items():
            un = f"{v['U_N']:.1f} [{TABLE_VII_UN[r]:.1f}]" if "U_N" in v else "-"
            lines.append(f"| {r} | {v['j']:.2f} [{TABLE_VIII[r]:.2f}] | {v['j_means']:.2f} | {un} | {v.get('case', '-')} |")
    else:
        lines += ["", "14-flow simulation not run: cc 'lp' (TCP-LP) is not in this simulator build."]
    return "\n".join(lines)


def run_all(task_list: list[dict[str, Any]], jobs: int = 1, executor: str = "pool") -> list[dict[str, Any]]:
    """Run tasks through the sweep executors (``ccfair.reproduce.run_generic``)."""
    from ccfair.reproduce import run_preset_tasks

    return run_preset_tasks("s4", task_list, executor=executor, jobs=jobs)


def main(argv: list[str] | None = None) -> int:
    import json

    ap = argparse.ArgumentParser(prog="ccfair preset s4", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 seed; 14-flow runs at 4 RTTs without NRU calibration")
    ap.add_argument("--seeds", type=int, default=None, help=f"runs per pair setting (default {SEEDS}; 1 with --quick)")
    add_run_options(ap, "parallel processes", json_help="print one JSON object: claims and tables' figures")
    a = ap.parse_args(argv)
    if a.seeds is not None and a.seeds < 1:
        from ccfair.errors import SpecError

        raise SpecError("--seeds", f"must be >= 1, got {a.seeds}")
    t0 = time.perf_counter()
    results = run_all(tasks(a.quick, a.seeds), jobs=a.jobs)
    claims = judged(results)
    wall = time.perf_counter() - t0
    if a.json:
        print(json.dumps(json_summary(results, claims, wall)))
        return 0
    print(tables(results))
    print("\nClaims (ccfair.claims.s4, judged by ccfair.claims.rules):")
    for cid, o in claims.items():
        lo, hi = o["interval"]
        note = f" ({o['note']})" if o["note"] and o["verdict"] != "reproduced" else ""
        print(f"- {cid}: {o['estimate']:.3g} [{lo:.3g}, {hi:.3g}], {o['runs']} runs => {o['verdict']}{note}")
    print(f"\n{len(results)} runs, wall {wall:.1f} s")
    return 0


def json_summary(results: list[dict[str, Any]], claims: dict[str, dict[str, Any]], wall_s: float) -> dict[str, Any]:
    """JSON-ready summary: claims, pair J/throughput/NRU, 14-flow figures."""

    def num(x: float) -> float | None:
        return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else round(float(x), 4)

    pairs = []
    for r in sorted({(x["task"]["a"], x["task"]["b"], x["task"]["rtt"]) for x in results if x["task"]["kind"] == "pair"}):
        a, b, rtt = r
        tp = pair_tput(results, a, b, rtt)
        row = {
            "flow1": a,
            "flow2": b,
            "rtt_ms": rtt,
            "j": num(pair_j(results, a, b, rtt)),
            "tput_mbps": [num(tp[0] / 1e6), num(tp[1] / 1e6)],
        }
        if a == "ccid2" and b != "ccid2":
            n = pair_nru(results, a, b, rtt)
            row["nru"] = {"U_N": num(n["U_N"]), "U_N+": num(n["U_N+"]), "U_N-": num(n["U_N-"]), "case": n["case"]}
        pairs.append(row)
    many = {
        str(k): {"j": num(v["j"]), "j_means": num(v["j_means"]), "U_N": num(v.get("U_N", math.nan)), "published_j": TABLE_VIII[k]}
        for k, v in many_results(results).items()
    }
    return {
        "study": "S4",
        "claims": claims,
        "pairs": pairs,
        "fourteen_flows": many,
        "runs": len(results),
        "wall_s": round(wall_s, 1),
        "j_median_run_wall_s": round(statistics.median([r["wall_s"] for r in results]), 3) if results else None,
    }


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
