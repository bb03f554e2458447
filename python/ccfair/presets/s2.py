"""S2's lab reproduction (Verizon Media, "BBR evaluation at a large CDN",
APNIC blog 2019) as a preset: ``ccfair preset s2``.

The blog's lab: "Client traffic delay was set to ~50ms with losses ranging
from 0.001 to 0.1 and bottleneck bandwidth set to 50Mbps. Similarly, for
PoP-to-PoP, only loss and delay were set at ~15ms and 0.0001 to 0.01. For
intra-PoP traffic, we let the VMs max out available capacity ... We ran all
three traffic patterns in parallel with an exponential arrival of flows"
(Figure 7: "Lab setup using KVM, iperf, netem, and tc utilities").

Loss units: the loss levels are netem's, and netem takes its loss in
percent: iproute2's ``tc`` parses ``loss 0.1`` and ``loss 0.1%`` alike as
0.1 % (tc/tc_util.c ``parse_percent``: the number is divided by 100, the
``%`` sign is optional; q_netem.c ``get_percent``). The levels are therefore
0.001-0.1 % (client) and 0.0001-0.01 % (PoP-to-PoP), i.e. loss
probabilities 1e-5 to 1e-3 and 1e-6 to 1e-4 (``LOSS_UNIT``).

Here the three classes share one 50 Mbit/s drop-tail bottleneck (buffer 1 BDP
at the client RTT, 208 packets: our choice, the blog gives none):

- client: base RTT 50 ms, random loss 0.001, 0.01 and 0.1 % (one group each);
- PoP-to-PoP: 15 ms, loss 0.0001, 0.001 and 0.01 %;
- intra-PoP: 1 ms, no random loss.

Every (class, loss) has three Poisson groups (``[[groups]]``, ccfair.traffic):
3 MB objects (0.1/s; the blog's FCT CDFs and throughput use 3 MB objects),
objects of various sizes (lognormal, median 300 KB, sigma 1.5; 0.25/s) for
FCT vs object size, and transfers under 0.5 KB (uniform 100-500 B; 0.5/s)
for the blog's "less than 0.5KB" finding. Offered load is about 30 Mbit/s
(60 %). Arrivals stop at ``arrivals_s`` (600 s); the run continues 120 s so
that slow flows complete; flows still open then are reported as incomplete.

A/B: the same arrivals (same seed) with every sender on CUBIC (control) and
on BBR(v1) (test), as when the blog turned BBR on at a PoP's servers. The
preset's own table adds the same pair with fq_codel at the bottleneck (the
blog's reader asks for it); ``ccfair reproduce`` runs drop-tail only.

Two small experiments check the blog's explanations ("Why does this
happen?"): ``rtt``, three BBR flows of 50, 15 and 1 ms RTT sharing the
bottleneck for 60 s (BBR vs BBR); ``buffer``, one CUBIC and one BBR flow at
50 ms with a small (0.5 BDP) and a large (8 BDP) buffer for 60 s (CUBIC vs
BBR).

"The same study with BBRv3" (ccfair's addition, the blog had no BBRv3): a
third arm with every sender on ``bbr3`` on the same arrivals, printed as
extra columns beside BBR(v1)'s figures and in ``--json`` ("bbr3"). It never
enters the claims, and ``ccfair reproduce`` does not run it (``tasks(quick)``
without ``bbr3=True``); ``--no-bbr3`` skips it here.

Figures: per class, throughput of 3 MB objects (size / FCT) mean and 5th
percentile, FCT CDFs of 3 MB objects, and FCT vs object size. ``measure``
gives the claims' quantities (ccfair.claims.s2), one value per seed.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from typing import Any

from ccfair.presets.options import add_run_options

RATE = "50Mbit"
BUFFER_PKTS = 208  # 50 Mbit/s x 50 ms / 1500 B
#: The blog's loss levels are netem's, in percent; x LOSS_UNIT = loss probability.
LOSS_UNIT = 0.01
#: Per class: base RTT (ms) and the blog's loss levels (netem percent).
CLASSES: dict[str, tuple[int, tuple[float, ...]]] = {
    "client": (50, (0.001, 0.01, 0.1)),
    "pop": (15, (0.0001, 0.001, 0.01)),
    "intra": (1, (0.0,)),
}
ARRIVALS_3MB_PER_S = 0.1
ARRIVALS_MIX_PER_S = 0.25
ARRIVALS_TINY_PER_S = 0.5
MIX_SIZE = {"dist": "lognormal", "median": "300KB", "sigma": 1.5}
#: The blog's "less than 0.5KB of data" transfers.
TINY_SIZE = {"dist": "uniform", "min": "100B", "max": "500B"}
TINY_MAX_BYTES = 500
DRAIN_S = 120
ARRIVALS_S = 600
CCAS = ("cubic", "bbr")
#: The extra arm: the same study with BBRv3 (ccfair's addition).
BBR3 = "bbr3"
QDISCS = ("droptail", "fq_codel")
SIZE_BINS = (0, 100_000, 1_000_000, 10_000_000, math.inf)
#: Seeds of ``ccfair reproduce`` (full, quick).
SEEDS, QUICK_SEEDS = 8, 3
#: The explanations' experiments: BBR flows' RTTs (ms) and the CUBIC-vs-BBR buffers (BDP at 50 ms).
RTT_BIAS_MS = (50, 15, 1)
BUFFERS_BDP = {"small": 0.5, "large": 8.0}
SIDE_DURATION_S = 60
SIDE_WINDOW_START_S = 10


def _gname(cls: str, loss: float, kind: str) -> str:
    """Group name: class, object kind and loss probability in parts per million (flows are named ``<group>.<i>``)."""
    return f"{cls}-{kind}-{round(loss * 1e6)}ppm"


def spec_dict(
    cca: str, qdisc: str = "droptail", seed: int = 1, arrivals_s: int = ARRIVALS_S, loss_unit: float = LOSS_UNIT
) -> dict[str, Any]:
    """The experiment: three classes x loss levels x (3 MB, mixed sizes, < 0.5 KB) Poisson groups, all on ``cca``.

    ``loss_unit`` turns the blog's loss levels into probabilities (netem's percent: 0.01).
    """
    groups = []
    for cls, (rtt, levels) in CLASSES.items():
        for level in levels:
            loss = level * loss_unit
            common = {"cca": cca, "rtt": f"{rtt}ms", "loss": loss, "stop": f"{arrivals_s}s"}
            groups.append({"name": _gname(cls, loss, "3MB"), "arrival_rate": ARRIVALS_3MB_PER_S, "size": "3MB", **common})
            groups.append({"name": _gname(cls, loss, "mix"), "arrival_rate": ARRIVALS_MIX_PER_S, "size": MIX_SIZE, **common})
            groups.append({"name": _gname(cls, loss, "tiny"), "arrival_rate": ARRIVALS_TINY_PER_S, "size": TINY_SIZE, **common})
    return {
        "name": f"s2-{cca}-{qdisc}",
        "duration": f"{arrivals_s + DRAIN_S}s",
        "seed": seed,
        "bottleneck": {"rate": RATE, "delay": "0ms", "buffer": f"{BUFFER_PKTS}pkt", "qdisc": qdisc},
        "groups": groups,
    }


def rtt_bias_spec(seed: int) -> dict[str, Any]:
    """BBR vs BBR (the blog's "BBR vs. BBR"): one long BBR flow per RTT of ``RTT_BIAS_MS``, 60 s, starts jittered by 1 s."""
    return {
        "name": "s2-bbr-rtt-bias",
        "duration": f"{SIDE_DURATION_S}s",
        "window": {"start": f"{SIDE_WINDOW_START_S}s", "end": f"{SIDE_DURATION_S}s"},
        "seed": seed,
        "bottleneck": {"rate": RATE, "delay": "0ms", "buffer": f"{BUFFER_PKTS}pkt", "qdisc": "droptail"},
        "flows": [{"name": f"bbr{r}", "cca": "bbr", "rtt": f"{r}ms", "start": "0s", "start_jitter": "1s"} for r in RTT_BIAS_MS],
    }


def buffer_spec(buffer: str, seed: int) -> dict[str, Any]:
    """CUBIC vs BBR at 50 ms with a small or large buffer (the blog's "Cubic vs. BBR"); 60 s, starts jittered by 1 s."""
    return {
        "name": f"s2-cubic-bbr-{buffer}-buffer",
        "duration": f"{SIDE_DURATION_S}s",
        "window": {"start": f"{SIDE_WINDOW_START_S}s", "end": f"{SIDE_DURATION_S}s"},
        "seed": seed,
        "bottleneck": {"rate": RATE, "delay": "0ms", "buffer": f"{BUFFERS_BDP[buffer]}bdp", "qdisc": "droptail"},
        "flows": [{"name": c, "cca": c, "rtt": "50ms", "start": "0s", "start_jitter": "1s"} for c in CCAS],
    }


def tasks(
    quick: bool = False,
    seed: int = 1,
    bbr3: bool = False,
    qdiscs: tuple[str, ...] = ("droptail",),
    seeds: int | None = None,
    arrivals_s: int = ARRIVALS_S,
) -> list[dict[str, Any]]:
    """The A/B runs (CUBIC, BBR) per qdisc and seed (with ``bbr3`` also the BBRv3 arm on the same arrivals),
    and the explanations' experiments per seed; the runs' seeds are ``(seed - 1) * 1000 + 1, +2, ...``."""
    n = seeds or (QUICK_SEEDS if quick else SEEDS)
    ss = [(seed - 1) * 1000 + s for s in range(1, n + 1)]
    ccas = (*CCAS, BBR3) if bbr3 else CCAS
    out: list[dict[str, Any]] = [
        {"kind": "mix", "cca": c, "qdisc": q, "seed": s, "arrivals_s": arrivals_s} for q in qdiscs for s in ss for c in ccas
    ]
    out += [{"kind": "rtt", "seed": s} for s in ss]
    out += [{"kind": "buffer", "buffer": b, "seed": s} for b in BUFFERS_BDP for s in ss]
    return out


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """One run. Mix: per flow class, loss, kind, size, FCT (None if incomplete), retransmissions.
    Side experiments: per flow name, CCA and throughput share of the window."""
    from ccfair.api import run
    from ccfair.spec import Spec

    t0 = time.perf_counter()
    kind = task.get("kind", "mix")
    if kind != "mix":
        spec = rtt_bias_spec(task["seed"]) if kind == "rtt" else buffer_spec(task["buffer"], task["seed"])
        fl = run(Spec.from_dict(spec)).flows
        shares = {str(n): float(x) for n, x in zip(fl["name"], fl["share"])}
        return {"task": task, "shares": shares, "wall_s": time.perf_counter() - t0}
    res = run(Spec.from_dict(spec_dict(task["cca"], task["qdisc"], task["seed"], task["arrivals_s"])))
    fl = res.flows
    flows = []
    for name, cca, size, fct, rtx, sent in zip(
        fl["name"], fl["cca"], fl["size_bytes"], fl["fct_s"], fl["retransmissions"], fl["sent_packets"]
    ):
        group, index = str(name).split(".")
        cls, kind_, loss = group.split("-", 2)
        flows.append(
            {
                "cls": cls,
                "cca": str(cca),
                "kind": kind_,
                "loss": int(loss[:-3]) / 1e6,
                "i": int(index),
                "size": int(size),
                "fct": None if math.isnan(fct) else float(fct),
                "rtx": int(rtx),
                "sent": int(sent),
            }
        )
    summ = res.summary
    return {
        "task": task,
        "flows": flows,
        "queue_pkts_mean": float(summ["queue_packets_mean"]),
        "drops": int(fl["drops"].sum()),
        "sent": int(fl["sent_packets"].sum()),
        "utilization": float(summ["utilization"]),
        "wall_s": time.perf_counter() - t0,
    }


# ---------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------


def _sel(results: list[dict[str, Any]], cca: str, qdisc: str, **kw: Any) -> list[dict[str, Any]]:
    out = []
    for r in results:
        if r["task"].get("kind", "mix") != "mix" or (r["task"]["cca"], r["task"]["qdisc"]) != (cca, qdisc):
            continue
        for f in r["flows"]:
            if all((f[k] in v) if isinstance(v, (tuple, list, set)) else f[k] == v for k, v in kw.items()):
                out.append(f)
    return out


def tputs_3mb(results: list[dict[str, Any]], cca: str, qdisc: str, classes: tuple[str, ...], loss: float | None = None) -> list[float]:
    """Throughput (bit/s) of the completed 3 MB objects of ``classes`` (and loss level)."""
    kw: dict[str, Any] = {"kind": "3MB", "cls": classes}
    if loss is not None:
        kw["loss"] = loss
    return [f["size"] * 8 / f["fct"] for f in _sel(results, cca, qdisc, **kw) if f["fct"]]


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def _pct(xs: list[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(xs, q)) if xs else math.nan


def completion(results: list[dict[str, Any]], cca: str, qdisc: str) -> tuple[int, int]:
    fl = _sel(results, cca, qdisc)
    return sum(f["fct"] is not None for f in fl), len(fl)


def fct_by_size(results: list[dict[str, Any]], cca: str, qdisc: str, cls: str = "client") -> list[float]:
    """Median FCT (s) of the class's completed flows per size bin (SIZE_BINS)."""
    import numpy as np

    fl = [f for f in _sel(results, cca, qdisc, cls=cls) if f["fct"]]
    out = []
    for lo, hi in itertools.pairwise(SIZE_BINS):
        xs = [f["fct"] for f in fl if lo <= f["size"] < hi]
        out.append(float(np.median(xs)) if xs else math.nan)
    return out


# ---------------------------------------------------------------------------
# The claims' quantities (ccfair.claims.s2): one value per seed, no verdicts
# ---------------------------------------------------------------------------

#: The client class's loss levels as probabilities: lowest (a low-retransmit AS), middle (the wireline
#: provider), highest (a high-retransmit AS).
CLIENT_LOSS = tuple(level * LOSS_UNIT for level in CLASSES["client"][1])
SMALL_MAX_BYTES = 100_000
LARGE_MIN_BYTES = 1_000_000


def _flows_of(
    r: dict[str, Any], classes: tuple[str, ...], kinds: tuple[str, ...] = ("3MB", "mix", "tiny"), loss: float | None = None
) -> list[dict[str, Any]]:
    return [
        f
        for f in r["flows"]
        if f["cls"] in classes and f["kind"] in kinds and (loss is None or math.isclose(f["loss"], loss, rel_tol=1e-9, abs_tol=1e-12))
    ]


def _tput(fl: list[dict[str, Any]]) -> list[float]:
    return [f["size"] * 8 / f["fct"] for f in fl if f["fct"]]


def _fct(fl: list[dict[str, Any]], lo: float = 0, hi: float = math.inf) -> list[float]:
    return [f["fct"] for f in fl if f["fct"] and lo <= f["size"] < hi]


def _ln(a: float, b: float) -> float:
    return math.log(a / b) if a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b) else math.nan


def _median(xs: list[float]) -> float:
    import statistics

    return statistics.median(xs) if xs else math.nan


def _std(xs: list[float]) -> float:
    import statistics

    return statistics.stdev(xs) if len(xs) > 1 else math.nan


def _over_seeds(xs: tuple[float, ...], f: Any = lambda x: f"{x:+.3f}") -> str:
    """The mean of per-seed values as ``f`` writes it, and how many seeds."""
    return f"{f(sum(xs) / len(xs))} over {len(xs)} seeds" if xs else "no runs"


def _as_percent(x: float) -> str:
    return f"{x:+.1f} %"


def _as_factor(x: float) -> str:
    """A log ratio as a factor."""
    return f"x{math.exp(x):.2f}"


def measure(results: list[dict[str, Any]]) -> dict[str, Any]:
    """S2's quantities per claim (ccfair.claims.s2), one value per seed (drop-tail A/B on the same arrivals)."""
    from ccfair.claims.model import Measurement

    mix = {
        (r["task"]["cca"], r["task"]["seed"]): r
        for r in results
        if r["task"].get("kind", "mix") == "mix" and r["task"]["qdisc"] == "droptail"
    }
    seeds = sorted({s for c, s in mix if (("cubic", s) in mix and ("bbr", s) in mix)})

    def ab(f: Any) -> tuple[float, ...]:
        """f(cubic run, bbr run) per seed, finite values only."""
        xs = [f(mix[("cubic", s)], mix[("bbr", s)]) for s in seeds]
        return tuple(float(x) for x in xs if math.isfinite(x))

    out: dict[str, Measurement] = {**_measure_client(ab), **_measure_pop(ab)}
    side, means = _measure_side(results)
    out.update(side)
    return _with_notes(out, [mix[k] for k in sorted(mix) if k[1] in seeds], means)


def _ln_tput(classes: tuple[str, ...], loss: float | None = None) -> Any:
    """ln(mean 3 MB throughput BBR / CUBIC) of the flows of ``classes`` (at client loss ``loss``)."""
    return lambda c, b: _ln(_mean(_tput(_flows_of(b, classes, ("3MB",), loss))), _mean(_tput(_flows_of(c, classes, ("3MB",), loss))))


def _ln_fct(classes: tuple[str, ...], kinds: tuple[str, ...], loss: float | None = None, lo: float = 0, hi: float = math.inf) -> Any:
    """ln(mean FCT CUBIC / mean FCT BBR): > 0 when BBR's flows finish sooner."""
    return lambda c, b: _ln(
        _mean(_fct(_flows_of(c, classes, kinds, loss), lo, hi)), _mean(_fct(_flows_of(b, classes, kinds, loss), lo, hi))
    )


def _size_benefit(loss: float) -> Any:
    """ln FCT ratio CUBIC/BBR of the client's large objects minus that of its small ones."""
    big, small = (
        _ln_fct(("client",), ("3MB", "mix"), loss, lo=LARGE_MIN_BYTES),
        _ln_fct(("client",), ("mix", "tiny"), loss, hi=SMALL_MAX_BYTES),
    )
    return lambda c, b: big(c, b) - small(c, b)


def _measure_client(ab: Any) -> dict[str, Any]:
    """The claims on the client traffic class: throughput, FCT, and their growth with loss."""
    from ccfair.claims.model import Measurement

    low, mid, high = CLIENT_LOSS
    out: dict[str, Measurement] = {}
    xs = ab(lambda c, b: (_mean(_tput(_flows_of(b, ("client",), ("3MB",)))) / _mean(_tput(_flows_of(c, ("client",), ("3MB",)))) - 1) * 100)
    out["S2.client-gain"] = Measurement(xs, figure=f"client 3 MB mean throughput BBR vs CUBIC {_over_seeds(xs, _as_percent)}")
    xs = ab(lambda c, b: _ln(_pct(_tput(_flows_of(b, ("client",), ("3MB",))), 5), _pct(_tput(_flows_of(c, ("client",), ("3MB",))), 5)))
    out["S2.client-p5"] = Measurement(xs, figure=f"client 3 MB 5th-percentile throughput BBR/CUBIC {_over_seeds(xs, _as_factor)}")
    xs = ab(_ln_fct(("client",), ("3MB", "mix", "tiny")))
    out["S2.client-fct"] = Measurement(xs, figure=f"client mean FCT CUBIC/BBR (all sizes) {_over_seeds(xs, _as_factor)}")
    xs = ab(_ln_tput(("client",), mid))
    out["S2.wireline-tput"] = Measurement(xs, figure=f"client 3 MB throughput BBR/CUBIC at {mid:.0e} loss {_over_seeds(xs, _as_factor)}")
    xs = ab(_ln_fct(("client",), ("3MB", "mix", "tiny"), mid))
    out["S2.wireline-fct"] = Measurement(xs, figure=f"client mean FCT CUBIC/BBR at {mid:.0e} loss {_over_seeds(xs, _as_factor)}")
    xs = ab(lambda c, b: _ln(_std(_fct(_flows_of(c, ("client",), ("3MB",), mid))), _std(_fct(_flows_of(b, ("client",), ("3MB",), mid)))))
    out["S2.wireline-jitter"] = Measurement(xs, figure=f"client 3 MB FCT std CUBIC/BBR at {mid:.0e} loss {_over_seeds(xs, _as_factor)}")
    xs = ab(_size_benefit(mid))
    out["S2.wireline-large-benefit"] = Measurement(xs, figure=f"ln FCT ratio >= 1 MB minus < 100 KB at {mid:.0e} loss {_over_seeds(xs)}")
    hi_, lo_ = ab(_ln_tput(("client",), high)), ab(_ln_tput(("client",), low))
    out["S2.gain-grows-with-loss"] = Measurement(
        ab(lambda c, b: _ln_tput(("client",), high)(c, b) - _ln_tput(("client",), low)(c, b)),
        figure=f"client 3 MB throughput BBR/CUBIC {_over_seeds(lo_, _as_factor)} at {low:.0e} loss, {_over_seeds(hi_, _as_factor)} at {high:.0e}",
    )
    out["S2.retransmits-high"] = Measurement(
        hi_, figure=f"client 3 MB throughput BBR/CUBIC at {high:.0e} loss {_over_seeds(hi_, _as_factor)}"
    )
    out["S2.retransmits-low"] = Measurement(
        lo_, figure=f"client 3 MB throughput BBR/CUBIC at {low:.0e} loss {_over_seeds(lo_, _as_factor)}"
    )
    xs = ab(_size_benefit(high))
    out["S2.large-objects"] = Measurement(xs, figure=f"ln FCT ratio CUBIC/BBR >= 1 MB minus < 100 KB at {high:.0e} loss {_over_seeds(xs)}")
    xs = ab(_ln_fct(("client",), ("3MB",)))
    out["S2.lab-client-fct"] = Measurement(xs, figure=f"client 3 MB mean FCT CUBIC/BBR {_over_seeds(xs, _as_factor)}")
    xs = ab(lambda c, b: math.exp(_ln_fct(("client",), ("mix",), hi=SMALL_MAX_BYTES)(c, b)))
    out["S2.lab-small-marginal"] = Measurement(xs, figure=f"client < 100 KB mean FCT CUBIC/BBR {_over_seeds(xs, lambda x: f'x{x:.2f}')}")
    return out


def _measure_pop(ab: Any) -> dict[str, Any]:
    """The claims on the PoP-to-PoP and intra-PoP classes (low RTT)."""
    from ccfair.claims.model import Measurement

    out: dict[str, Measurement] = {}
    xs = ab(lambda c, b: -_ln_fct(("pop",), ("3MB",))(c, b))
    out["S2.lab-pop-fct"] = Measurement(xs, figure=f"PoP-to-PoP 3 MB mean FCT BBR/CUBIC {_over_seeds(xs, _as_factor)}")
    xs = ab(_ln_tput(("pop", "intra")))
    out["S2.low-rtt-regression"] = Measurement(xs, figure=f"PoP-to-PoP + intra-PoP 3 MB throughput BBR/CUBIC {_over_seeds(xs, _as_factor)}")
    ys = tuple(math.exp(x) for x in xs)
    pop, intra = ab(_ln_tput(("pop",))), ab(_ln_tput(("intra",)))
    out["S2.low-rtt-halved"] = Measurement(
        ys,
        figure=f"BBR/CUBIC {_over_seeds(ys, lambda x: f'x{x:.2f}')} (PoP-to-PoP {_over_seeds(pop, _as_factor)}, intra-PoP {_over_seeds(intra, _as_factor)})",
    )
    out["S2.intra-suffers"] = Measurement(intra, figure=f"intra-PoP 3 MB throughput BBR/CUBIC {_over_seeds(intra, _as_factor)}")
    xs = ab(
        lambda c, b: _median(_fct(_flows_of(b, ("pop", "intra"), ("tiny",)))) / _median(_fct(_flows_of(c, ("pop", "intra"), ("tiny",))))
    )
    out["S2.tiny-similar"] = Measurement(
        xs, figure=f"PoP-to-PoP + intra-PoP < 0.5 KB median FCT BBR/CUBIC {_over_seeds(xs, lambda x: f'x{x:.2f}')}"
    )
    return out


def _measure_side(results: list[dict[str, Any]]) -> tuple[dict[str, Any], list[float]]:
    """The side experiments' claims (BBR's RTT bias, the buffer extremes) and BBR's mean share per RTT."""
    from ccfair.claims.model import Measurement

    out: dict[str, Measurement] = {}
    side = [r for r in results if r["task"].get("kind", "mix") != "mix"]
    rtt = [r["shares"] for r in side if r["task"]["kind"] == "rtt"]
    names = [f"bbr{r}" for r in RTT_BIAS_MS]
    xs = tuple(min(sh[a] - sh[b] for a, b in itertools.pairwise(names)) for sh in rtt)
    means = [sum(sh[n] for sh in rtt) / len(rtt) for n in names] if rtt else []
    out["S2.bbr-rtt-bias"] = Measurement(
        xs, figure="BBR shares " + " / ".join(f"{r} ms {m:.2f}" for r, m in zip(RTT_BIAS_MS, means)) + f"; smallest step {_over_seeds(xs)}"
    )
    for cid, buf, cca in (("S2.large-buffer-cubic", "large", "cubic"), ("S2.small-buffer-bbr", "small", "bbr")):
        xs = tuple(r["shares"][cca] - 0.5 for r in side if r["task"]["kind"] == "buffer" and r["task"]["buffer"] == buf)
        out[cid] = Measurement(
            xs, figure=f"{cca.upper() if cca == 'bbr' else 'CUBIC'} share at {BUFFERS_BDP[buf]:g} BDP minus 0.5 {_over_seeds(xs)}"
        )
    return out, means


#: Wire time of one full-size packet at the lab's 50 Mbit/s (ms).
_PKT_MS = 1500 * 8 / 50e6 * 1e3


def _with_notes(out: dict[str, Any], mix: list[dict[str, Any]], rtt_shares: list[float]) -> dict[str, Any]:
    """The measured mechanisms behind the figures, as each claim's note (the same text whatever the verdict)."""
    import dataclasses

    def arm(cca: str) -> list[dict[str, Any]]:
        return [r for r in mix if r["task"]["cca"] == cca]

    q = {c: _mean([r.get("queue_pkts_mean", math.nan) for r in arm(c)]) for c in CCAS}
    queue = (
        f"Mechanism: the BBR arm keeps a standing queue at the shared bottleneck, mean {q['bbr']:.0f} packets "
        f"({q['bbr'] * _PKT_MS:.0f} ms) against CUBIC's {q['cubic']:.0f} ({q['cubic'] * _PKT_MS:.0f} ms); a transfer of a "
        "few packets waits behind it, so BBR lengthens short transfers. The blog gives no buffer sizes (setup details missing)."
    )

    def ratio(cls: tuple[str, ...], loss: float | None = None) -> float:
        b = _mean([_mean(_tput(_flows_of(r, cls, ("3MB",), loss))) for r in arm("bbr")])
        c = _mean([_mean(_tput(_flows_of(r, cls, ("3MB",), loss))) for r in arm("cubic")])
        return b / c if c else math.nan

    def rtx(loss: float) -> float:
        fl = [f for r in arm("cubic") for f in _flows_of(r, ("client",), ("3MB",), loss)]
        return sum(f["rtx"] for f in fl) / max(1, sum(f["sent"] for f in fl))

    by_loss = ", ".join(f"x{ratio(('client',), x):.2f} at {x * 100:g} %" for x in CLIENT_LOSS)
    loss = (
        f"Client 3 MB throughput BBR/CUBIC by loss level: {by_loss}; CUBIC retransmits "
        + " / ".join(f"{rtx(x):.2%}" for x in CLIENT_LOSS)
        + " of its client packets."
    )
    contradiction = (
        " The study contradicts itself for low-loss client paths: the wireline provider 'Here as well, we saw both "
        "throughput (for large objects) and flow completion time (shown in Figure 3) improvements using BBR' against "
        "'for ASes with less loss Cubic has no reason to back-off and performs better than BBR'."
    )
    low_rtt = (
        "Setup details missing: the blog does not say whether PoP-to-PoP and intra-PoP traffic shared a bottleneck with "
        f"client traffic, nor its buffers. In ccfair's one shared bottleneck PoP-to-PoP 3 MB throughput changes "
        f"x{ratio(('pop',)):.2f} and intra-PoP x{ratio(('intra',)):.2f} with BBR, while the BBR-vs-BBR runs give the "
        "50 ms flow "
        + (f"{rtt_shares[0]:.0%} against the 1 ms flow's {rtt_shares[-1]:.0%}" if rtt_shares else "(not run)")
        + " (S2.bbr-rtt-bias)."
    )
    drops = {c: sum(r.get("drops", 0) for r in arm(c)) / max(1, sum(r.get("sent", 0) for r in arm(c))) for c in CCAS}
    dropped = f" The bottleneck drops {drops['bbr']:.2%} of the BBR arm's packets against {drops['cubic']:.2%} of CUBIC's."
    slow = {c: _mean([float(f["fct"] > 1.0) for r in arm(c) for f in _flows_of(r, ("pop", "intra"), ("tiny",)) if f["fct"]]) for c in CCAS}
    tiny = (
        dropped.strip() + f" {slow['bbr']:.1%} of BBR's PoP-to-PoP and intra-PoP < 0.5 KB transfers take over 1 s (a lost SYN or "
        f"segment waits for the retransmission timer) against {slow['cubic']:.1%} of CUBIC's, which the mean FCT shows and the "
        "median does not."
    )
    queue += dropped
    notes = {
        "S2.tiny-similar": tiny,
        **dict.fromkeys(("S2.lab-small-marginal", "S2.wireline-fct", "S2.client-fct", "S2.large-objects"), queue),
        "S2.wireline-large-benefit": queue,
        **dict.fromkeys(("S2.client-gain", "S2.retransmits-high", "S2.gain-grows-with-loss", "S2.client-p5"), loss),
        **dict.fromkeys(("S2.retransmits-low", "S2.wireline-tput"), loss + contradiction),
        **dict.fromkeys(("S2.low-rtt-halved", "S2.low-rtt-regression", "S2.intra-suffers", "S2.lab-pop-fct"), low_rtt),
    }
    return {cid: dataclasses.replace(m, note=notes.get(cid, m.note)) for cid, m in out.items()}


def bbr3_figures(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The BBRv3 arm's figures beside BBR(v1)'s, per qdisc: 3 MB throughput over CUBIC's (client mean and
    p5, PoP-to-PoP + intra-PoP mean, client per loss level). Empty if the arm was not run."""
    if not any(r["task"].get("cca") == BBR3 for r in results):
        return {}
    out: dict[str, dict[str, Any]] = {}
    losses = [level * LOSS_UNIT for level in CLASSES["client"][1]]
    for q in QDISCS:
        row: dict[str, Any] = {}
        for c in ("bbr", BBR3):

            def ratio(classes: tuple[str, ...], loss: float | None = None, p5: bool = False, c: str = c) -> float:
                f = (lambda xs: _pct(xs, 5)) if p5 else _mean
                return f(tputs_3mb(results, c, q, classes, loss)) / f(tputs_3mb(results, "cubic", q, classes, loss))

            row[c] = {
                "client_mean_ratio": ratio(("client",)),
                "client_p5_ratio": ratio(("client",), p5=True),
                "low_rtt_mean_ratio": ratio(("pop", "intra")),
                "client_ratio_by_loss": {f"{loss:g}": ratio(("client",), loss) for loss in losses},
            }
        out[q] = row
    return out


def figures(results: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """S2's figure types: FCT CDFs of 3 MB objects (client, PoP-to-PoP; Figure 8) and FCT vs object size (Figure 6)."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from ccfair import plots

    figs = []
    for q in QDISCS:
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        for ax, cls in zip(axes, ("client", "pop")):
            rows = [
                {"class": c.upper() if c == "bbr" else "CUBIC", "fct_s": f["fct"]}
                for c in CCAS
                for f in _sel(results, c, q, cls=cls, kind="3MB")
                if f["fct"]
            ]
            if rows:
                plots.fct_cdf(pd.DataFrame(rows), ax=ax, title=f"{cls} 3 MB objects ({q})")
        fig.tight_layout()
        figs.append((f"S2: FCT CDF of 3 MB objects, {q} (Figure 8 type)", fig))
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for c in CCAS:
        fl = [f for f in _sel(results, c, "droptail", cls="client") if f["fct"]]
        ax.scatter([f["size"] for f in fl], [f["fct"] for f in fl], s=6, alpha=0.5, label=c.upper() if c == "bbr" else "CUBIC")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("object size (bytes)")
    ax.set_ylabel("flow completion time (s)")
    ax.legend(frameon=False)
    figs.append(("S2: client FCT vs object size, drop-tail (Figure 6 type)", fig))
    return figs


def tables(results: list[dict[str, Any]]) -> str:
    """Per qdisc and class the 3 MB throughput of each arm; with the BBRv3 arm two extra columns."""
    v3 = any(r["task"].get("cca") == BBR3 for r in results)
    head = "| qdisc | class | CUBIC mean / p5 Mbit/s (3 MB) | BBR mean / p5 Mbit/s (3 MB) | BBR/CUBIC mean |"
    extra = " with BBRv3 (ccfair's addition): mean / p5 Mbit/s | BBRv3/CUBIC mean |" if v3 else ""
    lines = [head + extra, "|---|---|---|---|---|" + ("---|---|" if v3 else "")]
    for q in QDISCS:
        for cls in CLASSES:
            c, b = tputs_3mb(results, "cubic", q, (cls,)), tputs_3mb(results, "bbr", q, (cls,))
            line = f"| {q} | {cls} | {_mean(c) / 1e6:.1f} / {_pct(c, 5) / 1e6:.2f} | {_mean(b) / 1e6:.1f} / {_pct(b, 5) / 1e6:.2f} | {_mean(b) / _mean(c):.2f} |"
            if v3:
                b3 = tputs_3mb(results, BBR3, q, (cls,))
                line += f" {_mean(b3) / 1e6:.1f} / {_pct(b3, 5) / 1e6:.2f} | {_mean(b3) / _mean(c):.2f} |"
            lines.append(line)
    for q in QDISCS:
        for cca in (*CCAS, BBR3) if v3 else CCAS:
            done, n = completion(results, cca, q)
            lines.append(f"\n{q} {cca}: {done}/{n} flows completed")
    return "\n".join(lines)


def _json_safe(x: Any) -> Any:
    """NaN (an empty selection) -> None, so ``--json`` stays strict JSON."""
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_json_safe(v) for v in x]
    return None if isinstance(x, float) and math.isnan(x) else x


def judged(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each S2 claim's figure and verdict (``ccfair.claims.rules.judge`` on :func:`measure`)."""
    from ccfair.claims import rules
    from ccfair.claims.s2 import CLAIMS

    ms = measure(results)
    return rules.judged_json((c, ms[c.id]) for c in CLAIMS)


def main(argv: list[str] | None = None) -> int:
    import json

    from ccfair.reproduce import run_preset_tasks

    ap = argparse.ArgumentParser(prog="ccfair preset s2", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"{QUICK_SEEDS} seeds (full: {SEEDS})")
    ap.add_argument("--seeds", type=int, default=None, help="number of seeds (overrides --quick)")
    ap.add_argument("--arrivals", type=int, default=ARRIVALS_S, help=f"seconds of flow arrivals (default {ARRIVALS_S})")
    add_run_options(
        ap,
        "parallel processes",
        json_help="print one JSON object with the claims",
        bbr3_help="also run the study with every sender on BBRv3 (extra columns; default on)",
    )
    a = ap.parse_args(argv)
    if a.seeds is not None and a.seeds < 1:
        ap.error(f"--seeds must be >= 1, got {a.seeds}")
    if a.arrivals < 1:
        ap.error(f"--arrivals must be >= 1 s, got {a.arrivals}")
    t0 = time.perf_counter()
    results = run_preset_tasks("s2", tasks(a.quick, bbr3=a.bbr3, qdiscs=QDISCS, seeds=a.seeds, arrivals_s=a.arrivals), jobs=a.jobs)
    claims = judged(results)
    wall = time.perf_counter() - t0
    if a.json:
        print(
            json.dumps(
                _json_safe(
                    {
                        "study": "S2",
                        "claims": claims,
                        "bbr3": {
                            "note": "ccfair's addition (the blog had no BBRv3): every sender on bbr3, same arrivals; ratios over CUBIC",
                            "figures": bbr3_figures(results),
                            "ccas_recorded": sorted({f["cca"] for r in results if r["task"].get("cca") == BBR3 for f in r["flows"]}),
                        },
                        "runs": len(results),
                        "wall_s": round(wall, 1),
                    }
                )
            )
        )
        return 0
    print(tables(results))
    print("\nClaims (ccfair.claims.s2; verdicts from ccfair.claims.rules):")
    for cid, o in claims.items():
        lo, hi = o["interval"]
        print(f"- {cid}: {o['figure']}; estimate {o['estimate']:+.3f} [{lo:+.3f}, {hi:+.3f}] => {o['verdict']}")
    fig3 = bbr3_figures(results)
    if fig3:
        print("\nThe same study with BBRv3 (ccfair's addition; the blog had no BBRv3), 3 MB throughput over CUBIC's:")
        print("| qdisc | client mean BBR / BBRv3 | client p5 BBR / BBRv3 | PoP+intra mean BBR / BBRv3 |")
        print("|---|---|---|---|")
        for q, row in fig3.items():
            v1, v3 = row["bbr"], row[BBR3]
            cells = [f"x{v1[k]:.2f} / x{v3[k]:.2f}" for k in ("client_mean_ratio", "client_p5_ratio", "low_rtt_mean_ratio")]
            print(f"| {q} | " + " | ".join(cells) + " |")
    print(f"\n{len(results)} runs, wall {wall:.1f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
