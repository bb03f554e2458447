"""S2's lab reproduction (Verizon Media, "BBR evaluation at a large CDN",
APNIC blog 2019; BRIEF S2) as a preset: ``ccfair preset s2``.

The blog's lab: "Client traffic delay was set to ~50ms with losses ranging
from 0.001 to 0.1 and bottleneck bandwidth set to 50Mbps. Similarly, for
PoP-to-PoP, only loss and delay were set at ~15ms and 0.0001 to 0.01. For
intra-PoP traffic, we let the VMs max out available capacity ... We ran all
three traffic patterns in parallel with an exponential arrival of flows".
Here the three classes share one 50 Mbit/s drop-tail bottleneck (buffer 1 BDP
at the client RTT, 208 packets: our choice, the blog gives none):

- client: base RTT 50 ms, random loss 0.001, 0.01 and 0.1 (one group each);
- PoP-to-PoP: 15 ms, loss 0.0001, 0.001 and 0.01;
- intra-PoP: 1 ms, no random loss.

Every (class, loss) has two Poisson groups (``[[groups]]``, ccfair.traffic):
3 MB objects (0.1/s; the blog's FCT CDFs and throughput use 3 MB objects)
and objects of various sizes (lognormal, median 300 KB, sigma 1.5; 0.25/s)
for FCT vs object size. Offered load is about 30 Mbit/s (60 %). Arrivals
stop at ``arrivals_s`` (120 s quick, 600 s full); the run continues 120 s so
that slow flows complete; flows still open then are reported as incomplete.

A/B: the same arrivals (same seed) with every sender on CUBIC (control) and
on BBR(v1) (test), as when the blog turned BBR on at a PoP's servers; and the
same pair with fq_codel at the bottleneck (the blog's reader asks for it).

"The same study with BBRv3" (issue 15; ccfair's addition, the blog had no
BBRv3): a third arm with every sender on ``bbr3`` on the same arrivals, printed
as extra columns beside BBR(v1)'s figures and in ``--json`` ("bbr3"). It
never enters the claims, and ``ccfair reproduce`` does not run it
(``tasks(quick)`` without ``bbr3=True``); ``--no-bbr3`` skips it here.

Figures: per class, throughput of 3 MB objects (size / FCT) mean and 5th
percentile, FCT CDFs of 3 MB objects, and FCT vs object size.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from typing import Any

from ccfair.claims import Outcome, verdict

RATE = "50Mbit"
BUFFER_PKTS = 208  # 50 Mbit/s x 50 ms / 1500 B
CLASSES: dict[str, tuple[int, tuple[float, ...]]] = {
    "client": (50, (0.001, 0.01, 0.1)),
    "pop": (15, (0.0001, 0.001, 0.01)),
    "intra": (1, (0.0,)),
}
ARRIVALS_3MB_PER_S = 0.1
ARRIVALS_MIX_PER_S = 0.25
MIX_SIZE = {"dist": "lognormal", "median": "300KB", "sigma": 1.5}
DRAIN_S = 120
CCAS = ("cubic", "bbr")
#: The extra arm: the same study with BBRv3 (ccfair's addition).
BBR3 = "bbr3"
QDISCS = ("droptail", "fq_codel")
SIZE_BINS = (0, 100_000, 1_000_000, 10_000_000, math.inf)


def _gname(cls: str, loss: float, kind: str) -> str:
    """Group name: class, object kind and loss in parts per million (flows are named ``<group>.<i>``)."""
    return f"{cls}-{kind}-{round(loss * 1e6)}ppm"


def spec_dict(cca: str, qdisc: str = "droptail", seed: int = 1, arrivals_s: int = 600) -> dict[str, Any]:
    """The experiment: three classes x loss levels x (3 MB, mixed sizes) Poisson groups, all on ``cca``."""
    groups = []
    for cls, (rtt, losses) in CLASSES.items():
        for loss in losses:
            common = {"cca": cca, "rtt": f"{rtt}ms", "loss": loss, "stop": f"{arrivals_s}s"}
            groups.append({"name": _gname(cls, loss, "3MB"), "arrival_rate": ARRIVALS_3MB_PER_S, "size": "3MB", **common})
            groups.append({"name": _gname(cls, loss, "mix"), "arrival_rate": ARRIVALS_MIX_PER_S, "size": MIX_SIZE, **common})
    return {
        "name": f"s2-{cca}-{qdisc}",
        "duration": f"{arrivals_s + DRAIN_S}s",
        "seed": seed,
        "bottleneck": {"rate": RATE, "delay": "0ms", "buffer": f"{BUFFER_PKTS}pkt", "qdisc": qdisc},
        "groups": groups,
    }


def tasks(quick: bool = False, bbr3: bool = False) -> list[dict[str, Any]]:
    """The A/B runs (CUBIC, BBR) per qdisc and seed; with ``bbr3`` also the BBRv3 arm on the same arrivals."""
    seeds = (1,) if quick else (1, 2, 3)
    arr = 120 if quick else 600
    ccas = (*CCAS, BBR3) if bbr3 else CCAS
    return [{"cca": c, "qdisc": q, "seed": s, "arrivals_s": arr} for q in QDISCS for s in seeds for c in ccas]


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    """One run; per flow: class, loss, kind, size, FCT (None if incomplete), retransmissions."""
    from ccfair.api import run
    from ccfair.spec import Spec

    t0 = time.perf_counter()
    res = run(Spec.from_dict(spec_dict(task["cca"], task["qdisc"], task["seed"], task["arrivals_s"])))
    fl = res.flows
    flows = []
    for name, cca, size, fct, rtx, sent in zip(
        fl["name"], fl["cca"], fl["size_bytes"], fl["fct_s"], fl["retransmissions"], fl["sent_packets"]
    ):
        cls, kind, loss = str(name).split(".")[0].split("-", 2)
        flows.append(
            {
                "cls": cls,
                "cca": str(cca),
                "kind": kind,
                "loss": int(loss[:-3]) / 1e6,
                "size": int(size),
                "fct": None if math.isnan(fct) else float(fct),
                "rtx": int(rtx),
                "sent": int(sent),
            }
        )
    return {"task": task, "flows": flows, "wall_s": time.perf_counter() - t0}


# ---------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------


def _sel(results: list[dict[str, Any]], cca: str, qdisc: str, **kw: Any) -> list[dict[str, Any]]:
    out = []
    for r in results:
        if (r["task"]["cca"], r["task"]["qdisc"]) != (cca, qdisc):
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
# Claims
# ---------------------------------------------------------------------------


def reproduce_claims(results: list[dict[str, Any]]) -> dict[str, Outcome]:
    """Figures and verdicts of S2's claims (ccfair.claims ids S2.*): drop-tail decides, fq_codel is printed beside it."""
    out: dict[str, Outcome] = {}

    def ratio(q: str, classes: tuple[str, ...], loss: float | None = None, stat: str = "mean") -> float:
        f = _mean if stat == "mean" else (lambda xs: _pct(xs, 5))
        return f(tputs_3mb(results, "bbr", q, classes, loss)) / f(tputs_3mb(results, "cubic", q, classes, loss))

    g, gf = ratio("droptail", ("client",)), ratio("fq_codel", ("client",))
    out["S2.client-gain"] = Outcome(f"client 3 MB throughput BBR/CUBIC {g - 1:+.0%} (fq_codel {gf - 1:+.0%})", verdict(g > 1))
    p, pf = ratio("droptail", ("client",), stat="p5"), ratio("fq_codel", ("client",), stat="p5")
    out["S2.p5"] = Outcome(f"client 5th-percentile throughput BBR/CUBIC {p:.2f}x (fq_codel {pf:.2f}x)", verdict(p > 1))
    lo, lof = ratio("droptail", ("pop", "intra")), ratio("fq_codel", ("pop", "intra"))
    pop, intra = ratio("droptail", ("pop",)), ratio("droptail", ("intra",))
    out["S2.low-rtt-halved"] = Outcome(
        f"PoP-to-PoP + intra-PoP 3 MB throughput BBR/CUBIC x{lo:.2f} (PoP {pop:.2f}, intra {intra:.2f}; fq_codel x{lof:.2f})",
        verdict(lo <= 0.75),
        ""
        if lo <= 0.75
        else "in this single-bottleneck mix BBR's low-RTT flows are not squeezed by the 50 ms BBR flows (reason not isolated)",
    )
    losses = CLASSES["client"][1]
    rs = [ratio("droptail", ("client",), loss) for loss in losses]
    rtx = [_mean([f["rtx"] / max(f["sent"], 1) for f in _sel(results, "cubic", "droptail", cls="client", loss=loss)]) for loss in losses]
    out["S2.retransmits"] = Outcome(
        "client BBR/CUBIC throughput " + ", ".join(f"x{r:.2f} at loss {loss:g} (CUBIC rtx {x:.1%})" for r, loss, x in zip(rs, losses, rtx)),
        verdict(rs[-1] > rs[0] and rs[-1] > 1),
    )
    fc, fb = fct_by_size(results, "cubic", "droptail"), fct_by_size(results, "bbr", "droptail")
    sp = [c / b if b and not math.isnan(b) and not math.isnan(c) else math.nan for c, b in zip(fc, fb)]
    ok_bins = [i for i, x in enumerate(sp) if not math.isnan(x)]
    ok = len(ok_bins) >= 2 and sp[ok_bins[-1]] > sp[ok_bins[0]]
    names = ("<100KB", "100KB-1MB", "1-10MB", ">10MB")
    out["S2.large-objects"] = Outcome("client median FCT CUBIC/BBR " + ", ".join(f"{names[i]} {sp[i]:.2f}" for i in ok_bins), verdict(ok))
    return out


def bbr3_figures(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The BBRv3 arm's figures beside BBR(v1)'s, per qdisc: 3 MB throughput over CUBIC's (client mean and
    p5, PoP-to-PoP + intra-PoP mean, client per loss level). Empty if the arm was not run."""
    if not any(r["task"]["cca"] == BBR3 for r in results):
        return {}
    out: dict[str, dict[str, Any]] = {}
    losses = CLASSES["client"][1]
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
    v3 = any(r["task"]["cca"] == BBR3 for r in results)
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
        for c in (*CCAS, BBR3) if v3 else CCAS:
            done, n = completion(results, c, q)
            lines.append(f"\n{q} {c}: {done}/{n} flows completed")
    return "\n".join(lines)


def _json_safe(x: Any) -> Any:
    """NaN (an empty selection) -> None, so ``--json`` stays strict JSON."""
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    return None if isinstance(x, float) and math.isnan(x) else x


def main(argv: list[str] | None = None) -> int:
    import json

    from ccfair.claims import get
    from ccfair.reproduce import run_preset_tasks

    ap = argparse.ArgumentParser(prog="ccfair preset s2", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one seed, arrivals for 120 s (full: seeds 1-3, 600 s)")
    ap.add_argument("--jobs", type=int, default=1, help="parallel processes")
    ap.add_argument("--json", action="store_true", help="print one JSON object with the claims")
    ap.add_argument(
        "--bbr3",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run the study with every sender on BBRv3 (extra columns; default on)",
    )
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    results = run_preset_tasks("s2", tasks(a.quick, bbr3=a.bbr3), jobs=a.jobs)
    claims = reproduce_claims(results)
    wall = time.perf_counter() - t0
    if a.json:
        print(
            json.dumps(
                {
                    "study": "S2",
                    "claims": {k: {"figure": o.figure, "verdict": o.verdict, "note": o.note} for k, o in claims.items()},
                    "bbr3": {
                        "note": "ccfair's addition (the blog had no BBRv3): every sender on bbr3, same arrivals; ratios over CUBIC",
                        "figures": _json_safe(bbr3_figures(results)),
                        "ccas_recorded": sorted({f["cca"] for r in results if r["task"]["cca"] == BBR3 for f in r["flows"]}),
                    },
                    "runs": len(results),
                    "wall_s": round(wall, 1),
                }
            )
        )
        return 0
    print(tables(results))
    print("\nClaims (ccfair.claims):")
    for cid, o in claims.items():
        print(f"- {cid}: {get(cid).published} -> ccfair: {o.figure} => {o.verdict}{' (' + o.note + ')' if o.note else ''}")
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
