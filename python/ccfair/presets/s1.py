"""S1's evaluation ("Ensuring Transport Fairness with Smart Networks", ETH 2020):
RRMQS + flow meter + feedback on a dumbbell shared by 12 CCAs.

Setup (as S1): 2m+2-node dumbbell, m = 12 senders, one CCA each (BIC,
NewReno, HighSpeed, H-TCP, Hybla, Illinois, LEDBAT, Scalable, Vegas, Veno,
Westwood, YeAH); access links 1 Gbit/s 20 ms, bottleneck 100 Mbit/s 10 ms
with the RRMQS qdisc (S1 4.1.1: hosts and gateways connected through access
links of 20 ms; g_1 and g_2 through the bottleneck of 10 ms). A packet from
h_i to h_{m+i} crosses the sender's access link, the bottleneck and the
receiver's access link, 20 + 10 + 20 = 50 ms, and the ACK the same three
back: the base RTT is 100 ms (``BASE_RTT_MS``). The simulator models the
path delays per flow and treats the 1 Gbit/s access links as infinitely
fast (a 536-byte segment takes 4.3 us at 1 Gbit/s). Each sender has U(100, 200) flows of U(10 000, 100 000) bytes
starting uniformly in [0, ``start_window``). In the rate-bounded variant a
fraction ``capped_fraction`` of the flows is application-limited at
U(0.01, 1) Mbit/s. Queues (main / per measuring queue, packets): small
1200/2, medium 12000/20, large 120000/200; C_f = 2; p = 1/51; window 0.5 s.

Figures:
- J_measure: S1's J(V, V') from the flow meter, with V_j (V'_j) = the
  CCA's main-queue (measuring-set) packets over all windows / its flow-windows
  (Bloom counts), i.e. the flow-weighted mean per-flow packet rate.
- J_real: J(V, V') from offline per-flow throughput (size x 8 / FCT of
  completed flows): V_j = mean over the CCA's flows never pinned, V'_j =
  mean over the flows pinned to its measuring queue.
- accuracy = min(J_measure, J_real) / max(J_measure, J_real).
- J_flow (ours): J(V, V') from the qdisc's flow meter (per-flow lifetime
  rate of completed flows, main vs pinned), and its accuracy against J_real.

Feedback modes: ``off``; ``s1`` (S1's rule as published: drop a CCA's
main-queue packets for a window when I > 1.2, prioritise when I < 0.8);
``s1-relative`` (the same rule on I / geometric mean of the indices);
``improved`` (ours: weighted per-CCA DRR in the main queue, weights moved
proportionally towards equal I, driven by the flow meter; nothing dropped);
``allocate`` (ours: the same DRR, weights set every 100 ms from each CCA's
reference rate V'_j of its pinned flows so far, plus a proportional
correction on the run's cumulative index; see docs/in-network.md).
Flows start uniformly in [0, 5 s) by default.

TCP settings (``tcp``): S1 ran ns-3, whose TCP defaults are a 536-byte
segment (ns-3 ``TcpSocket::SegmentSize``) and an initial window of one
segment (``TcpSocket::InitialCwnd``); ``tcp="ns3"`` (the default) uses
them, so S1's 10-100 KB objects are 19-187 segments that leave slow start
and spend time in each CCA's own congestion avoidance. ``tcp="linux"`` keeps
ccfair's flow defaults (1448-byte MSS, initial window 10): the objects are
7-70 segments and end in slow start, where the 12 CCAs behave alike; the
meter then sees no unfairness to measure (docs/in-network.md, "Why
J_measure did not fall").
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ccfair.claims.s1 import TABLES as _TABLES

if TYPE_CHECKING:  # numpy, pandas and the spec are imported where used: `ccfair --help` stays light
    import pandas as pd

    from ccfair.spec import Spec

#: S1's 12 CCAs, one per sender (canonical names; NewReno = reno).
CCAS = ["bic", "reno", "highspeed", "htcp", "hybla", "illinois", "ledbat", "scalable", "vegas", "veno", "westwood", "yeah"]
#: S1's topology (4.1.1): access links (sender side and receiver side) and bottleneck, one-way delays.
ACCESS_DELAY_MS = 20
BOTTLENECK_DELAY_MS = 10
#: Base RTT: both access links and the bottleneck, in both directions (100 ms).
BASE_RTT_MS = 2 * (2 * ACCESS_DELAY_MS + BOTTLENECK_DELAY_MS)
#: Queue settings: (main queue packets, packets per measuring queue).
QUEUES = {"small": (1200, 2), "medium": (12000, 20), "large": (120000, 200)}
#: Published results (S1 Tables 4.3-4.6, declared in ccfair.claims.s1), small / medium / large.
PUBLISHED: dict[str, dict[str, tuple[float, float, float]]] = {
    "unbounded": {**_TABLES["4.3"], "j_feedback": _TABLES["4.5"]["j_with"]},
    "bounded": {**_TABLES["4.4"], "j_feedback": _TABLES["4.6"]["j_with"]},
}
#: Sender TCP settings: S1's simulator's defaults (ns-3: 536-byte segments,
#: initial window 1 segment) or ccfair's (Linux: MSS 1448, initial window 10).
TCP_DEFAULTS: dict[str, dict[str, Any]] = {"ns3": {"mss": 536, "init_cwnd": 1}, "linux": {}}
#: Feedback modes: S1's rule as published ("s1"), S1's rule on I relative to
#: the geometric mean of the indices ("s1-relative"), ours ("improved"), none.
FEEDBACKS = ("off", "s1", "s1-relative", "improved", "allocate")


def build_spec(
    queue: str = "small",
    bounded: bool = False,
    feedback: str = "s1",
    seed: int = 1,
    start_window_s: float = 5.0,
    duration_s: float | None = None,
    capped_fraction: float = 0.5,
    flows_per_sender: tuple[int, int] = (100, 200),
    qdisc_extra: dict[str, Any] | None = None,
    flow_extra: dict[str, Any] | None = None,
    tcp: str = "ns3",
) -> Spec:
    """The S1 experiment for one queue setting, scenario and feedback mode.

    Flows are drawn from ``seed`` (numpy PCG64), so the same seed gives the
    same flows whatever the feedback mode: the modes are compared on
    identical traffic.
    """
    import numpy as np

    from ccfair.spec import Spec

    if queue not in QUEUES:
        raise ValueError(f"queue must be one of {', '.join(QUEUES)}, got {queue!r}")
    feedback = {"on": "s1"}.get(feedback, feedback)
    if feedback not in FEEDBACKS:
        raise ValueError(f"feedback must be one of on, {', '.join(FEEDBACKS)}, got {feedback!r}")
    if tcp not in TCP_DEFAULTS:
        raise ValueError(f"tcp must be one of {', '.join(TCP_DEFAULTS)}, got {tcp!r}")
    if duration_s is None:
        duration_s = 120.0 if bounded else 40.0
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 0x5331])))
    flows: list[dict[str, Any]] = []
    for cca in CCAS:
        n = int(rng.integers(flows_per_sender[0], flows_per_sender[1] + 1))
        starts = rng.uniform(0.0, start_window_s, n)
        sizes = rng.integers(10_000, 100_001, n)
        capped = rng.random(n) < capped_fraction
        caps = rng.uniform(0.01e6, 1e6, n)
        for k in range(n):
            f: dict[str, Any] = {
                "name": f"{cca}.{k}",
                "cca": cca,
                "rtt": f"{BASE_RTT_MS}ms",
                "start": f"{int(starts[k] * 1e9)}ns",
                "size": f"{int(sizes[k])}B",
            }
            if bounded and capped[k]:
                f["rate_cap"] = f"{int(caps[k])}bit"
            f.update(TCP_DEFAULTS[tcp])
            f.update(flow_extra or {})
            flows.append(f)
    main, per_queue = QUEUES[queue]
    qdisc: dict[str, Any] = {
        "kind": "rrmqs",
        "measure_limit": per_queue,
        "measure_flows": 2,
        "p": 1 / 51,
        "window": "500ms",
        "feedback": "s1" if feedback == "s1-relative" else feedback,
        "relative": feedback == "s1-relative",
        "meter": "flow" if feedback in ("improved", "allocate") else "window",
        # Finite flows release their pin on completion; the idle timeout only
        # guards against flows that never finish.
        "pin_timeout": "30s",
    }
    qdisc.update(qdisc_extra or {})
    return Spec.from_dict(
        {
            "name": f"s1-{queue}-{'bounded' if bounded else 'unbounded'}-{feedback}-{tcp}",
            "duration": f"{duration_s}s",
            "seed": seed,
            "bin": "500ms",
            "bottleneck": {"rate": "100Mbit", "delay": f"{BOTTLENECK_DELAY_MS}ms", "buffer": f"{main}pkt", "qdisc": qdisc},
            "flows": flows,
        }
    )


def j_measure(meter: pd.DataFrame, window_s: float = 0.5) -> tuple[float, pd.DataFrame]:
    """S1's J(V, V') from the flow meter and the per-CCA V, V', I.

    As S1 computes it (section 4.2.1: "my flow meter will report packets rate
    every 0.5 seconds. After the experiment, I average on all the reports"):
    each window's report is the CCA's per-flow packet rate (enqueued packets /
    window / distinct flows) in the main queue and in the RRMQS, and V_j
    (V'_j) is the mean of the CCA's reports over the windows in which that
    part saw at least one of its flows (a window without flows has no
    per-flow rate).
    """
    import numpy as np
    import pandas as pd

    from ccfair import metrics

    m = meter.assign(
        rm=meter["main_pkts"] / meter["main_flows"].where(meter["main_flows"] > 0) / window_s,
        rr=meter["rrmqs_pkts"] / meter["rrmqs_flows"].where(meter["rrmqs_flows"] > 0) / window_s,
    )
    g = m.groupby("cca", sort=False)
    per = pd.DataFrame({"v": g["rm"].mean(), "v_prime": g["rr"].mean()})
    per["index"] = per["v"] / per["v_prime"]
    ok = per.replace([np.inf, -np.inf], np.nan).dropna()
    ok = ok[ok["v_prime"] > 0]
    j = metrics.slowdown_index(ok["v"].tolist(), ok["v_prime"].tolist()) if len(ok) else math.nan
    return j, per


def j_measure_pooled(meter: pd.DataFrame, window_s: float = 0.5) -> float:
    """J(V, V') with V_j (V'_j) = the CCA's packets summed over all windows /
    its summed flow counts (flow-weighted; what this preset printed before it
    followed S1's averaging of the reports). Kept for comparison."""
    import numpy as np
    import pandas as pd

    from ccfair import metrics

    g = meter.groupby("cca", sort=False)
    v = g["main_pkts"].sum() / g["main_flows"].sum() / window_s
    vp = g["rrmqs_pkts"].sum() / g["rrmqs_flows"].sum() / window_s
    ok = pd.DataFrame({"v": v, "vp": vp}).replace([np.inf, -np.inf], np.nan).dropna()
    ok = ok[ok["vp"] > 0]
    return metrics.slowdown_index(ok["v"].tolist(), ok["vp"].tolist()) if len(ok) else math.nan


def j_measure_flow(meter: pd.DataFrame) -> tuple[float, pd.DataFrame]:
    """J(V, V') from our flow meter: V_j (V'_j) = mean lifetime rate of the CCA's
    main (pinned) flows over all windows, weighted by completed flows."""
    import numpy as np
    import pandas as pd

    from ccfair import metrics

    m = meter.copy()
    m["ms"] = (m["main_flow_rate"] * m["main_done"]).fillna(0)
    m["rs"] = (m["rrmqs_flow_rate"] * m["rrmqs_done"]).fillna(0)
    g = m.groupby("cca", sort=False)
    per = pd.DataFrame({"v": g["ms"].sum() / g["main_done"].sum(), "v_prime": g["rs"].sum() / g["rrmqs_done"].sum()})
    per["index"] = per["v"] / per["v_prime"]
    ok = per.replace([np.inf, -np.inf], np.nan).dropna()
    ok = ok[ok["v_prime"] > 0]
    j = metrics.slowdown_index(ok["v"].tolist(), ok["v_prime"].tolist()) if len(ok) else math.nan
    return j, per


def j_real(flows: pd.DataFrame, pinned: pd.DataFrame) -> tuple[float, pd.DataFrame]:
    """J(V, V') from offline per-flow throughput (size / FCT) of main-queue vs pinned flows."""
    import pandas as pd

    from ccfair import metrics

    done = flows[flows["fct_s"].notna()].copy()
    done["tput_bps"] = done["size_bytes"].astype(float) * 8 / done["fct_s"]
    done["pinned"] = done["name"].isin(set(pinned["flow"]))
    per = pd.DataFrame(
        {
            "v": done[~done["pinned"]].groupby("cca")["tput_bps"].mean(),
            "v_prime": done[done["pinned"]].groupby("cca")["tput_bps"].mean(),
            "pinned_flows": done[done["pinned"]].groupby("cca").size(),
        }
    )
    per["index"] = per["v"] / per["v_prime"]
    ok = per.dropna()
    j = metrics.slowdown_index(ok["v"].tolist(), ok["v_prime"].tolist()) if len(ok) else math.nan
    return j, per


def accuracy(j_measure: float, j_real: float) -> float:
    """S1's accuracy (4.2.1): min(J_measure, J_real) / max(J_measure, J_real) (a fraction; S1 prints it in %)."""
    return min(j_measure, j_real) / max(j_measure, j_real) if j_measure > 0 and j_real > 0 else math.nan


def evaluate(result: Any) -> dict[str, Any]:
    """J_measure, J_real, accuracy and flow completion of one S1 run."""
    window_s = result.config["bottleneck"]["qdisc"]["window_ns"] / 1e9
    jm, per_m = j_measure(result.meter, window_s)
    jp = j_measure_pooled(result.meter, window_s)
    jf, _ = j_measure_flow(result.meter)
    jr, per_r = j_real(result.flows, result.pinned)
    acc, acc_f = accuracy(jm, jr), accuracy(jf, jr)
    fl = result.flows
    rated = result.meter[result.meter["index"].notna()]
    return {
        "j_measure": jm,
        "j_measure_pooled": jp,
        "j_real": jr,
        "accuracy": acc,
        "j_flow": jf,
        "accuracy_flow": acc_f,
        "flows": int(len(fl)),
        "completed": int(fl["fct_s"].notna().sum()),
        "last_fct_end_s": float((fl["start_s"] + fl["fct_s"]).max()),
        "pinned": int(len(result.pinned)),
        "fb_drops": int(fl["drops_aqm"].sum()),
        # the share of CCA-windows with an index in which the feedback rule acted (drop or priority)
        "fb_acted": float(rated["action"].isin(("drop", "priority")).mean()) if len(rated) else math.nan,
        "per_cca_measure": per_m,
        "per_cca_real": per_r,
    }


def run_one(queue: str, bounded: bool, feedback: str, seed: int = 1, **kw: Any) -> dict[str, Any]:
    """Build, run and evaluate one setting; adds the wall time (s) of the whole run."""
    import ccfair

    spec = build_spec(queue, bounded, feedback, seed, **kw)
    t0 = time.perf_counter()
    res = ccfair.run(spec)
    out = evaluate(res)
    out["wall_s"] = time.perf_counter() - t0
    out["sim_wall_s"] = res.summary["sim_wall_s"]
    out.update(queue=queue, bounded=bounded, feedback={"on": "s1"}.get(feedback, feedback), seed=seed, tcp=kw.get("tcp", "ns3"))
    return out


def register(app: typer.Typer) -> None:
    @app.command("s1")
    def s1_command(
        queue: Annotated[list[str], typer.Option("--queue", help="small | medium | large | all (repeatable)")] = ["all"],  # noqa: B006
        bounded: Annotated[bool, typer.Option("--bounded", help="S1 scenario 2: some flows rate-capped at U(0.01, 1) Mbit/s")] = False,
        feedback: Annotated[
            list[str], typer.Option("--feedback", help="on (= s1) | s1 | s1-relative | improved | allocate | off | all (repeatable)")
        ] = ["all"],  # noqa: B006
        seed: Annotated[int, typer.Option("--seed", help="first seed")] = 1,
        seeds: Annotated[
            int, typer.Option("--seeds", help="number of seeds (seed, seed+1, ...); the table shows the mean and the range")
        ] = 1,
        json_out: Annotated[bool, typer.Option("--json", help="print one JSON object per run instead of the table")] = False,
        tcp: Annotated[
            str,
            typer.Option(
                "--tcp",
                help="sender TCP defaults: ns3 (S1's simulator: 536-byte segments, initial window 1) | linux (MSS 1448, initial window 10)",
            ),
        ] = "ns3",
    ) -> None:
        """S1: J_measure, J_real, accuracy and J with feedback, next to the published values."""
        from rich.table import Table

        from ccfair.output import print_json, print_table

        queues = list(QUEUES) if "all" in queue else queue
        fbs = list(FEEDBACKS) if "all" in feedback else [{"on": "s1"}.get(f, f) for f in feedback]
        _check_command_choices(queues, fbs, tcp)
        scen = "bounded" if bounded else "unbounded"
        seed_list = list(range(seed, seed + max(1, seeds)))
        span = f"seed {seed}" if len(seed_list) == 1 else f"seeds {seed_list[0]}-{seed_list[-1]}: mean (min-max)"
        table = Table(
            title=f"S1, {scen} flows ({span}, TCP defaults {tcp}); published values in brackets.\n"
            "S1's quantities: J_measure, J_real, accuracy (min/max of the two). ccfair's additions: J_flow and its accuracy vs J_real.",
            title_justify="left",
        )
        for col in _COMMAND_COLUMNS:
            table.add_column(col)
        for q in queues:
            for fb in fbs:
                runs = [run_one(q, bounded, fb, sd, tcp=tcp) for sd in seed_list]
                if json_out:
                    for r in runs:
                        print_json({k: v for k, v in r.items() if not k.startswith("per_cca")})
                    continue
                table.add_row(*_command_row(q, fb, runs, PUBLISHED[scen]))
        if not json_out:
            print_table(table)


#: The columns of ``ccfair preset s1``'s table.
_COMMAND_COLUMNS = (
    "queue",
    "feedback",
    "J_measure (S1)",
    "J_real (S1)",
    "accuracy (S1)",
    "J_flow (ccfair)",
    "acc. J_flow (ccfair)",
    "completed",
    "wall s / run",
)


def _check_command_choices(queues: list[str], fbs: list[str], tcp: str) -> None:
    """``--queue``, ``--feedback`` and ``--tcp`` against the allowed values (SpecError naming the option)."""
    from ccfair.errors import SpecError

    for q in queues:
        if q not in QUEUES:
            raise SpecError("--queue", f"unknown queue setting {q!r}; allowed: {', '.join(QUEUES)}, all")
    for f in fbs:
        if f not in FEEDBACKS:
            raise SpecError("--feedback", f"unknown feedback {f!r}; allowed: on, {', '.join(FEEDBACKS)}, all")
    if tcp not in TCP_DEFAULTS:
        raise SpecError("--tcp", f"unknown TCP defaults {tcp!r}; allowed: {', '.join(TCP_DEFAULTS)}")


def _command_row(q: str, fb: str, runs: list[dict[str, Any]], pub: dict[str, Any]) -> list[str]:
    """One row of ``ccfair preset s1``'s table: the seeds' mean (and range) with the published value in brackets."""
    qi = list(QUEUES).index(q)

    def stat(key: str) -> str:
        xs = [r[key] for r in runs]
        if len(xs) == 1:
            return f"{xs[0]:.3f}"
        return f"{sum(xs) / len(xs):.3f} ({min(xs):.3f}-{max(xs):.3f})"

    if fb == "off":
        pm, pr = f" [{pub['j_measure'][qi]:.3f}]", f" [{pub['j_real'][qi]:.3f}]"
        pa = f" [{pub['accuracy'][qi]:.3f}]" if "accuracy" in pub else ""
    else:
        pm, pr, pa = f" [{pub['j_feedback'][qi]:.3f} with S1 feedback]", "", ""
    return [
        q,
        fb,
        f"{stat('j_measure')}{pm}",
        f"{stat('j_real')}{pr}",
        f"{stat('accuracy')}{pa}",
        stat("j_flow"),
        stat("accuracy_flow"),
        f"{sum(r['completed'] for r in runs)}/{sum(r['flows'] for r in runs)}",
        f"{sum(r['wall_s'] for r in runs) / len(runs):.1f}",
    ]


# ---------------------------------------------------------------------------
# ccfair reproduce (ccfair.reproduce): tasks, claims, figures
# ---------------------------------------------------------------------------

#: Seeds of ``ccfair reproduce`` (full, quick): 12 runs per seed, 1-3 s each on
#: the shared 2-core machine (docs/presets.md has the wall time).
REPRODUCE_SEEDS = 6
QUICK_SEEDS = 3


def tasks(quick: bool = False, seed: int = 1) -> list[dict[str, Any]]:
    """S1's runs for ``ccfair reproduce``: unbounded/bounded x 3 queues x (off, s1) x seeds, ns-3 TCP defaults;
    the runs' seeds are ``(seed - 1) * 1000 + 1, +2, ...`` (base seed 1: 1, 2, ...)."""
    n = QUICK_SEEDS if quick else REPRODUCE_SEEDS
    return [
        {"queue": q, "bounded": b, "feedback": fb, "seed": (seed - 1) * 1000 + s}
        for b in (False, True)
        for q in QUEUES
        for fb in ("off", "s1")
        for s in range(1, n + 1)
    ]


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """One S1 run; the per-CCA tables become plain dicts (picklable, JSON-ready)."""
    r = run_one(task["queue"], task["bounded"], task["feedback"], task["seed"])
    r["per_cca_v_prime"] = r["per_cca_real"]["v_prime"].to_dict()
    r["per_cca_measure"] = r["per_cca_measure"]["index"].to_dict()
    r["per_cca_real"] = r["per_cca_real"]["index"].to_dict()
    return r


def _finite(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _index_correlation(r: dict[str, Any]) -> float:
    """Pearson correlation of ln I_measure with ln I_real over the CCAs both define (one run)."""
    import statistics

    pairs = [
        (math.log(m), math.log(r["per_cca_real"][c]))
        for c, m in r["per_cca_measure"].items()
        if _finite(m) and m > 0 and _finite(r["per_cca_real"].get(c, math.nan)) and r["per_cca_real"][c] > 0
    ]
    if len(pairs) < 3:
        return math.nan
    xs, ys = zip(*pairs)
    return statistics.correlation(xs, ys)


def _jain(xs: list[float]) -> float:
    xs = [x for x in xs if _finite(x)]
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if xs and any(xs) else math.nan


class _Seeds:
    """S1's runs by (bounded, queue, feedback, seed), for quantities with one value per seed."""

    def __init__(self, results: list[dict[str, Any]]) -> None:
        self.runs = {(r["bounded"], r["queue"], r["feedback"], r["seed"]): r for r in results}
        self.seeds = sorted({r["seed"] for r in results})

    def per_seed(self, f: Any, *keys: tuple[bool, str, str]) -> tuple[float, ...]:
        """f(run, ...) for each seed that has every run named by ``keys`` and a finite value."""
        out = []
        for s in self.seeds:
            rs = [self.runs.get((b, q, fb, s)) for b, q, fb in keys]
            if all(rs):
                v = f(*rs)
                if _finite(v):
                    out.append(float(v))
        return tuple(out)

    def over_queues(self, key: str, b: bool, fb: str, agg: Any) -> tuple[float, ...]:
        """agg of ``key`` over the three queue settings, per seed."""
        return self.per_seed(lambda *rs: agg([r[key] for r in rs]), *[(b, q, fb) for q in QUEUES])


def _fmt(xs: tuple[float, ...]) -> str:
    return f"{sum(xs) / len(xs):.3f} over {len(xs)} seeds" if xs else "no runs"


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def measure(results: list[dict[str, Any]]) -> dict[str, Any]:
    """S1's quantities per claim (ccfair.claims.s1), one value per seed; no verdicts (ccfair.claims.rules)."""
    S = _Seeds(results)
    out = {**_measure_tables(S), **_measure_findings(S), **_measure_indices(S)}
    return _with_notes(out, results)


def _measure_tables(S: _Seeds) -> dict[str, Any]:
    """S1's Tables 43-46: J_measure, J_real, accuracy per queue, and J_real with S1's feedback."""
    from ccfair.claims.model import Measurement

    out: dict[str, Measurement] = {}
    for table, b in (("43", False), ("44", True)):
        for key, label in (("j_measure", "j-measure"), ("j_real", "j-real"), ("accuracy", "accuracy")):
            for q in QUEUES:
                xs = S.per_seed(lambda r, k=key: r[k], (b, q, "off"))
                out[f"S1.t{table}-{label}-{q}"] = Measurement(xs, figure=f"{key} {_fmt(xs)}")
    for table, b in (("45", False), ("46", True)):
        for q in QUEUES:
            xs = S.per_seed(lambda r: r["j_real"], (b, q, "s1"))
            out[f"S1.t{table}-j-feedback-{q}"] = Measurement(xs, figure=f"J_real with S1's feedback {_fmt(xs)}")
    return out


def _measure_findings(S: _Seeds) -> dict[str, Any]:
    """S1's findings on the meter's accuracy and on what the feedback gives."""
    from ccfair.claims.model import Measurement

    out: dict[str, Measurement] = {}
    acc_min = S.over_queues("accuracy", False, "off", min)
    out["S1.accuracy-above-90"] = Measurement(tuple(x - 0.90 for x in acc_min), figure=f"lowest accuracy over queues {_fmt(acc_min)}")
    for q in QUEUES:
        xs = S.per_seed(lambda r: r["j_measure"] - r["j_real"], (False, q, "off"))
        out[f"S1.meter-sign-{q}"] = Measurement(xs, figure=f"J_measure - J_real {_fmt(xs)}")
    xs = S.per_seed(lambda a, c: a["j_real"] - c["j_real"], (False, "small", "off"), (False, "large", "off"))
    out["S1.j-falls"] = Measurement(xs, figure=f"J_real(small) - J_real(large) {_fmt(xs)}")
    acc_u, acc_b = S.over_queues("accuracy", False, "off", _mean), S.over_queues("accuracy", True, "off", _mean)
    out["S1.bounded-accuracy-lower"] = Measurement(
        acc_u, minus=acc_b, figure=f"mean accuracy unbounded {_fmt(acc_u)}, bounded {_fmt(acc_b)}"
    )
    fb_min = S.over_queues("j_real", False, "s1", min)
    out["S1.feedback-above-99"] = Measurement(tuple(x - 0.99 for x in fb_min), figure=f"lowest J with feedback over queues {_fmt(fb_min)}")
    for cid, b in (("S1.feedback-improves", False), ("S1.bounded-feedback-improves", True)):
        keys = [(b, q, fb) for q in QUEUES for fb in ("s1", "off")]
        xs = S.per_seed(lambda *rs: _mean([rs[i]["j_real"] - rs[i + 1]["j_real"] for i in range(0, len(rs), 2)]), *keys)
        out[cid] = Measurement(xs, figure=f"J_real with - without S1's feedback {_fmt(xs)}")
    fb_u, fb_b = S.over_queues("j_real", False, "s1", _mean), S.over_queues("j_real", True, "s1", _mean)
    out["S1.bounded-feedback-lower"] = Measurement(
        fb_u, minus=fb_b, figure=f"mean J with feedback unbounded {_fmt(fb_u)}, bounded {_fmt(fb_b)}"
    )
    return out


def _measure_indices(S: _Seeds) -> dict[str, Any]:
    """S1's findings on the per-CCA indices: the meter's against the real ones, BIC, Vegas, RRMQS's V'."""
    from ccfair.claims.model import Measurement

    out: dict[str, Measurement] = {}

    def corr(*rs: dict[str, Any]) -> float:
        return _index_correlation(
            {
                "per_cca_measure": {(c, i): v for i, r in enumerate(rs) for c, v in r["per_cca_measure"].items()},
                "per_cca_real": {(c, i): v for i, r in enumerate(rs) for c, v in r["per_cca_real"].items()},
            }
        )

    c_u = S.per_seed(corr, *[(False, q, "off") for q in QUEUES])
    c_b = S.per_seed(corr, *[(True, q, "off") for q in QUEUES])
    out["S1.index-agreement"] = Measurement(c_u, figure=f"correlation of ln I_measure, ln I_real {_fmt(c_u)}")
    out["S1.index-agreement-bounded-lower"] = Measurement(c_u, minus=c_b, figure=f"correlation unbounded {_fmt(c_u)}, bounded {_fmt(c_b)}")

    def ln_index(r: dict[str, Any], cca: str) -> float:
        i = r["per_cca_real"].get(cca, math.nan)
        return math.log(i) if _finite(i) and i > 0 else math.nan

    bic = S.per_seed(lambda *rs: _mean([ln_index(r, "bic") for r in rs]), *[(False, q, "off") for q in QUEUES])
    out["S1.index-bic-above-fair"] = Measurement(
        bic, figure=f"mean ln I_real(BIC) {_fmt(bic)} (I = {math.exp(sum(bic) / len(bic)) if bic else math.nan:.2f})"
    )
    veg = S.per_seed(lambda r: ln_index(r, "vegas"), (False, "large", "off"))
    out["S1.vegas-harmed-large-buffer"] = Measurement(
        veg, figure=f"ln I_real(Vegas), large queue {_fmt(veg)} (I = {math.exp(sum(veg) / len(veg)) if veg else math.nan:.2f})"
    )
    jp = S.per_seed(lambda *rs: _mean([_jain(list(r["per_cca_v_prime"].values())) for r in rs]), *[(False, q, "off") for q in QUEUES])
    out["S1.rrmqs-fair"] = Measurement(jp, figure=f"Jain's index of V' over the CCAs {_fmt(jp)}")
    return out


def _per_cca_mean(results: list[dict[str, Any]], key: str, bounded: bool, feedback: str, queues: tuple[str, ...]) -> dict[str, float]:
    """Per CCA, the mean of ``key``'s finite values over the runs of the setting."""
    vals: dict[str, list[float]] = {}
    for r in results:
        if (r["bounded"], r["feedback"]) == (bounded, feedback) and r["queue"] in queues:
            for c, v in r[key].items():
                if _finite(v):
                    vals.setdefault(c, []).append(v)
    return {c: sum(v) / len(v) for c, v in vals.items()}


def _span(per: dict[str, float], fmt: str = ".2f") -> str:
    if not per:
        return "no runs"
    lo, hi = min(per, key=per.__getitem__), max(per, key=per.__getitem__)
    return f"{lo} {per[lo]:{fmt}} to {hi} {per[hi]:{fmt}}"


def _with_notes(out: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    """The measured mechanisms behind the figures, as each claim's note (the same text whatever the verdict)."""
    import dataclasses

    spread = _span(_per_cca_mean(results, "per_cca_real", False, "off", ("large",)))
    ccas = (
        "Model gap: ccfair's 12 CCAs differ less on S1's 10-100 KB flows than S1's ns-3 CCAs; I_real at the large queue "
        f"spans {spread} (mean over seeds; S1 Table A.1: LEDBAT 0.29 to BIC 2.66), so J_real stays high at every queue size."
    )
    acted = [r["fb_acted"] for r in results if r["feedback"] == "s1" and not r["bounded"] and _finite(r.get("fb_acted", math.nan))]
    feedback = (
        f"Mechanism: S1's rule drops or prioritises in {sum(acted) / len(acted) if acted else math.nan:.0%} of the CCA-windows "
        "with an index (unbounded runs): the 0.5 s per-window index swings across both thresholds (1.2, 0.8), so the rule acts "
        "on nearly every CCA in turn instead of correcting the outliers. S1 gives neither its index's window-to-window "
        "spread nor how windows without a pinned flow were handled (setup details missing)."
    )
    vp = _per_cca_mean(results, "per_cca_v_prime", False, "off", tuple(QUEUES))
    rrmqs = (
        "Mechanism: round robin shares the measuring set equally among backlogged queues only; a CCA whose C_f = 2 pinned "
        "flows do not keep its C_p-packet queue backlogged gets less. Mean V' over queues and seeds spans "
        f"{_span({c: v / 1e3 for c, v in vp.items()}, '.0f')} kbit/s."
    )
    notes = {"S1.rrmqs-fair": rrmqs}
    for cid in out:
        if cid.startswith(("S1.t43-", "S1.t44-", "S1.meter-sign-")) or cid == "S1.j-falls":
            notes[cid] = ccas
        elif cid.startswith(("S1.t45-", "S1.t46-")) or "feedback" in cid:
            notes[cid] = feedback
    return {cid: dataclasses.replace(m, note=notes.get(cid, m.note)) for cid, m in out.items()}


def _mean_of(results: list[dict[str, Any]], key: str, queue: str, bounded: bool, feedback: str) -> float:
    xs = [r[key] for r in results if (r["queue"], r["bounded"], r["feedback"]) == (queue, bounded, feedback) and not math.isnan(r[key])]
    return sum(xs) / len(xs) if xs else math.nan


def tables(results: list[dict[str, Any]]) -> str:
    """Means over seeds per setting; S1's quantities (J_measure, J_real, accuracy) and ccfair's addition (J_flow)."""
    lines = [
        "| flows | queue | feedback | J_measure (S1) | J_real (S1) | accuracy (S1) | J_flow (ccfair) | published J_measure / J_real / accuracy or J with feedback |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for b in (False, True):
        scen = "bounded" if b else "unbounded"
        pub = PUBLISHED[scen]
        for i, q in enumerate(QUEUES):
            for fb in ("off", "s1"):
                if fb == "off":
                    p = f"{pub['j_measure'][i]} / {pub['j_real'][i]}" + (f" / {pub['accuracy'][i]}" if "accuracy" in pub else "")
                else:
                    p = f"J with feedback {pub['j_feedback'][i]}"
                lines.append(
                    f"| {scen} | {q} | {fb} | {_mean_of(results, 'j_measure', q, b, fb):.3f} | {_mean_of(results, 'j_real', q, b, fb):.3f} "
                    f"| {_mean_of(results, 'accuracy', q, b, fb):.3f} | {_mean_of(results, 'j_flow', q, b, fb):.3f} | {p} |"
                )
    return "\n".join(lines)


def figures(results: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """S1's Table A.1 as a figure: per-CCA index I (measured vs real), seed 1, unbounded, feedback off."""
    import matplotlib.pyplot as plt
    import numpy as np

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4), sharey=True)
    for ax, q in zip(axes, QUEUES):
        r = next((x for x in results if (x["queue"], x["bounded"], x["feedback"], x["seed"]) == (q, False, "off", 1)), None)
        if r is None:
            continue
        ccas = [c for c in CCAS if c in r["per_cca_measure"]]
        xs = np.arange(len(ccas))
        ax.bar(xs - 0.2, [r["per_cca_measure"][c] for c in ccas], 0.4, label="I_measure (meter)")
        ax.bar(xs + 0.2, [r["per_cca_real"].get(c, np.nan) for c in ccas], 0.4, label="I_real (offline)")
        ax.axhline(1.0, color="0.3", lw=0.8)
        ax.set_xticks(xs, ccas, rotation=60, fontsize=8)
        ax.set_title(f"{q} queue")
    axes[0].set_ylabel("I = V / V'")
    axes[0].legend(fontsize="small", frameon=False)
    fig.tight_layout()
    return [("S1: per-CCA fairness index I, meter vs offline (Table A.1 type; seed 1, unbounded, no feedback)", fig)]
