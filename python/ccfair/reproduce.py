"""``ccfair reproduce``: run every study preset and score every claim.

Each preset module ``ccfair.presets.sN`` that takes part provides

- ``tasks(quick: bool) -> list[dict]``: its runs as small picklable dicts;
- ``run_task(task) -> dict``: one run (in a worker process or on a Dask
  worker), returning a small picklable summary;
- ``reproduce_claims(results) -> dict[claim_id, claims.Outcome]`` for the
  claims of its study in :data:`ccfair.claims.CLAIMS`;
- ``figures(results) -> list[(title, matplotlib Figure)]`` (the study's
  figure types, for the HTML report) and optionally ``tables(results) -> str``.

All presets' tasks go into one list that the sweep executors
(``ccfair.executors``: in-process, process pool, Dask) run in any order;
results are put back in task order, so the scoreboard does not depend on the
executor. A preset that is missing (or lacks the functions) leaves its claims
on the board as ``not run``.
"""

from __future__ import annotations

import base64
import html
import importlib
import io
import time
from pathlib import Path
from typing import Any

from ccfair.claims import CLAIMS, Outcome, get

__all__ = ["PRESETS", "reproduce", "run_payload", "run_preset_tasks", "scoreboard_rows", "write_html"]

#: The study presets, in study order.
PRESETS = ("s0", "s1", "s2", "s3", "s4")
_API = ("tasks", "run_task", "reproduce_claims")


def _module(preset: str) -> Any | None:
    """The module that gives ``preset`` the reproduce API: the preset itself, else
    ``ccfair.presets.<preset>_reproduce`` (an adapter), else None."""
    for name in (f"ccfair.presets.{preset}", f"ccfair.presets.{preset}_reproduce"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        if all(hasattr(mod, f) for f in _API):
            return mod
    return None


def run_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """Executor worker: run one preset task; never raises (errors come back as text)."""
    import traceback

    try:
        mod = _module(payload["preset"])
        if mod is None:
            raise ImportError(f"preset {payload['preset']} has no reproduce API")
        return {"run_id": payload["run_id"], "result": mod.run_task(payload["task"])}
    except Exception as e:  # noqa: BLE001 - reported by the parent
        return {"run_id": payload["run_id"], "error": f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}"}


def _run(payloads: list[dict[str, Any]], executor: str, jobs: int, scheduler: str | None, progress: Any = None) -> dict[str, Any]:
    from ccfair.errors import SimulationError
    from ccfair.executors import run_tasks

    out: dict[str, Any] = {}
    for o in run_tasks(payloads, executor=executor, jobs=jobs, scheduler=scheduler, fn=run_payload):
        if "error" in o:
            raise SimulationError(f"run {o['run_id']} failed: {o['error']}")
        out[o["run_id"]] = o["result"]
        if progress:
            progress(len(out), len(payloads))
    return out


def run_preset_tasks(
    preset: str, task_list: list[dict[str, Any]], executor: str = "pool", jobs: int = 1, scheduler: str | None = None
) -> list[dict[str, Any]]:
    """Run one preset's tasks through the executors; results in task order."""
    if jobs <= 1 and executor == "pool" and scheduler is None:
        executor = "inprocess"
    payloads = [{"run_id": f"{preset}-{i}", "preset": preset, "task": t} for i, t in enumerate(task_list)]
    res = _run(payloads, executor, jobs, scheduler)
    return [res[p["run_id"]] for p in payloads]


def reproduce(
    quick: bool = False,
    executor: str = "pool",
    jobs: int | None = None,
    scheduler: str | None = None,
    presets: tuple[str, ...] = PRESETS,
    progress: Any = None,
) -> dict[str, Any]:
    """Run the presets and evaluate every claim.

    Returns ``{"outcomes": {claim_id: Outcome}, "results": {preset: [...]},
    "wall_s": float, "runs": int, "quick": bool}``.
    """
    from ccfair.executors import default_jobs

    jobs = jobs or default_jobs()
    t0 = time.perf_counter()
    mods = {p: _module(p) for p in presets}
    payloads, index = [], {}
    for p, mod in mods.items():
        if mod is None:
            continue
        tl = mod.tasks(quick)
        index[p] = [f"{p}-{i}" for i in range(len(tl))]
        payloads += [{"run_id": rid, "preset": p, "task": t} for rid, t in zip(index[p], tl)]
    if jobs <= 1 and executor == "pool" and scheduler is None:
        executor = "inprocess"
    res = _run(payloads, executor, jobs, scheduler, progress)
    results = {p: [res[r] for r in ids] for p, ids in index.items()}
    outcomes: dict[str, Outcome] = {}
    for p, mod in mods.items():
        if mod is None:
            continue
        outcomes.update(mod.reproduce_claims(results[p]))
    for c in CLAIMS:
        if c.preset in presets and c.id not in outcomes:
            why = f"preset {c.preset} is not available (ccfair.presets.{c.preset} with {', '.join(_API)})"
            outcomes[c.id] = Outcome("-", "not run", why if mods.get(c.preset) is None else "the preset did not evaluate it")
    return {
        "outcomes": outcomes,
        "results": results,
        "wall_s": time.perf_counter() - t0,
        "runs": len(payloads),
        "quick": quick,
        "jobs": jobs,
        "executor": executor,
    }


def scoreboard_rows(outcomes: dict[str, Outcome]) -> list[dict[str, str]]:
    """One row per claim in registry order: id, study, published, ccfair's figure, verdict, note, source sentence."""
    rows = []
    for c in CLAIMS:
        if c.id not in outcomes:
            continue
        o = outcomes[c.id]
        rows.append(
            {
                "id": c.id,
                "study": c.study,
                "published": c.published,
                "ccfair": o.figure,
                "verdict": o.verdict,
                "note": o.note,
                "source": c.source,
                "criterion": c.criterion,
            }
        )
    return rows


def counts(outcomes: dict[str, Outcome]) -> dict[str, int]:
    """How many claims got each verdict."""
    out: dict[str, int] = {}
    for o in outcomes.values():
        out[o.verdict] = out.get(o.verdict, 0) + 1
    return out


def markdown(rep: dict[str, Any]) -> str:
    """The scoreboard as a Markdown table (docs/reproduction.md)."""
    lines = ["| claim | published | ccfair | verdict |", "|---|---|---|---|"]
    for r in scoreboard_rows(rep["outcomes"]):
        note = f" ({r['note']})" if r["note"] else ""
        cells = [r["id"], r["published"], r["ccfair"], f"**{r['verdict']}**{note}"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    c = counts(rep["outcomes"])
    lines += ["", ", ".join(f"{k}: {v}" for k, v in sorted(c.items())) + f"; {rep['runs']} runs, wall {rep['wall_s']:.0f} s"]
    return "\n".join(lines)


def _png(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


_STYLE = (
    "<style>body{font-family:sans-serif;max-width:1200px;margin:auto}table{border-collapse:collapse;font-size:13px}"
    "td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}.reproduced{background:#dfd}.not.reproduced{background:#fdd}"
    ".src{color:#555;font-size:12px}pre{font-size:12px}</style></head><body>"
)


def write_html(rep: dict[str, Any], path: str | Path) -> Path:
    """One self-contained HTML page: the scoreboard with each claim's source sentence, then every preset's figures and tables."""
    import matplotlib

    matplotlib.use("Agg")
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>ccfair: reproduction of the source studies</title>",
        _STYLE,
        f"<h1>ccfair reproduce{' --quick' if rep['quick'] else ''}</h1>",
        f"<p>{rep['runs']} runs, wall {rep['wall_s']:.0f} s, executor {e(str(rep.get('executor')))}, {rep.get('jobs')} jobs. "
        + e(", ".join(f"{k}: {v}" for k, v in sorted(counts(rep["outcomes"]).items())))
        + "</p>",
        "<table><tr><th>claim</th><th>study's sentence</th><th>published</th><th>ccfair</th><th>criterion</th><th>verdict</th></tr>",
    ]
    for r in scoreboard_rows(rep["outcomes"]):
        cls = r["verdict"].replace(" ", ".")
        note = f"<br><span class='src'>{e(r['note'])}</span>" if r["note"] else ""
        parts.append(
            f"<tr class='{cls}'><td>{e(r['id'])}</td><td class='src'>{e(r['source'])}</td><td>{e(r['published'])}</td>"
            f"<td>{e(r['ccfair'])}</td><td class='src'>{e(r['criterion'])}</td><td>{e(r['verdict'])}{note}</td></tr>"
        )
    parts.append("</table>")
    for p, results in rep["results"].items():
        mod = _module(p)
        if mod is None:
            continue
        parts.append(f"<h2>{e(p.upper())}</h2>")
        if hasattr(mod, "tables"):
            parts.append(f"<pre>{e(mod.tables(results))}</pre>")
        if hasattr(mod, "figures"):
            for title, fig in mod.figures(results):
                parts.append(f"<h3>{e(title)}</h3><img src='data:image/png;base64,{_png(fig)}'>")
    parts.append("</body></html>")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(parts), encoding="utf-8")
    return out


def claim_json(rep: dict[str, Any]) -> dict[str, Any]:
    """JSON-ready scoreboard."""
    return {
        "quick": rep["quick"],
        "runs": rep["runs"],
        "wall_s": round(rep["wall_s"], 1),
        "counts": counts(rep["outcomes"]),
        "claims": scoreboard_rows(rep["outcomes"]),
    }


def describe(claim_id: str) -> str:
    """One line naming a claim (for messages)."""
    c = get(claim_id)
    return f"{c.id} ({c.study}): {c.published}"
