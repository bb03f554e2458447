"""``ccfair reproduce``'s view of S0's preset (presets/s0.py, helper `profiles`).

presets/s0.py runs S0's grid with its own runner and returns its claims as a
list; this module gives it the API ccfair.reproduce expects (``tasks``,
``run_task``, ``reproduce_claims`` -> {claim id: ccfair.claims.Outcome},
``figures``) without changing what it measures. All S0 claims are at S0's
base setting (10 Mbit/s, 50 ms), so both modes run only that: every scenario
(lab, lab vs CP-like, CP-like vs CP-like), 0.5 and 2 BDP, drop-tail, CoDel
and FQ-CoDel, both start orders; 5 repetitions (``quick``) or S0's 30.
When presets/s0.py gains the API itself, ccfair.reproduce uses that instead.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ccfair.claims import Outcome
from ccfair.presets import s0

QUICK_REPETITIONS = 5
#: s0's verdict words -> ccfair.claims verdicts ("n.a." there means: the grid run lacks the setting).
_VERDICTS = {"reproduced": "reproduced", "not reproduced": "not reproduced", "n.a.": "not run"}


def tasks(quick: bool = False) -> list[dict[str, Any]]:
    reps = QUICK_REPETITIONS if quick else s0.REPETITIONS
    pts = s0.grid(s0.SCENARIOS, [s0.BASE[0]], [float(s0.BASE[1])], s0.BUFFERS_BDP, s0.QDISCS, reps)
    return [asdict(p) for p in pts]


def run_task(task: dict[str, Any]) -> dict[str, Any]:
    return asdict(s0.run_point(s0.Point(**task)))


def _rows(results: list[dict[str, Any]]) -> list[Any]:
    return [s0.Row(**r) for r in results]


def reproduce_claims(results: list[dict[str, Any]]) -> dict[str, Outcome]:
    return {o.id: Outcome(o.figure, _VERDICTS.get(o.verdict, "not run"), o.note) for o in s0.reproduce_claims(_rows(results))}


def figures(results: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """S0's figure type: fness per run plus KDE per pair, "A first" | "B first", per buffer and qdisc (lab pairs)."""
    import pandas as pd

    from ccfair.plots import fness_scatter_kde

    df = pd.DataFrame(results)
    df = df[df["scenario"] == "lab"]
    out = []
    for (buf, q), sub in df.groupby(["buffer_bdp", "qdisc"], sort=False):
        title = f"S0: {s0.BASE[0]}, {s0.BASE[1]} ms, {buf:g} BDP, {q} (lab CCAs)"
        out.append((title, fness_scatter_kde(sub, pair_col="pair", order_col="order", a_col="a", b_col="b", title=title)))
    return out
