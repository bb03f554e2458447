"""``ccfair reproduce``: run every study preset, measure every claim, judge it.

Each preset module ``ccfair.presets.sN`` that takes part provides

- ``tasks(quick: bool, seed: int = 1) -> list[dict]``: its runs as small
  picklable dicts (``seed``, the base seed every run's seed derives from, is
  optional: a preset without it ignores ``--seed``);
- ``run_task(task) -> dict``: one run (in a worker process or on a Dask
  worker), returning a small picklable summary;
- ``measure(results) -> {claim_id: ccfair.claims.Measurement}``: each of its
  study's simulator claims (ccfair.claims.CLAIMS) measured on its runs (the
  quantity's value per independent run); optionally ``measure_testbed()`` for
  its ``backend="testbed"`` claims, from stored real-Linux runs;
- optionally ``figures(results)`` (the study's figure types for the HTML
  report) and ``tables(results)``.

Verdicts come only from ``ccfair.claims.rules.judge``: reproduced / not
reproduced / inconclusive; a claim that nothing measured is ``not run`` with
the reason.

All presets' tasks go into one list that the sweep executors
(``ccfair.executors``: in-process, process pool, Dask) run in any order;
results are put back in task order, so the board does not depend on the
executor.
"""

from __future__ import annotations

import base64
import datetime
import html
import importlib
import inspect
import io
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ccfair import claims as registry
from ccfair.claims import rules

__all__ = [
    "BOARD_VERDICTS",
    "PRESETS",
    "Entry",
    "board_json",
    "contradictions",
    "list_json",
    "markdown",
    "reproduce",
    "run_payload",
    "run_preset_tasks",
    "write_docs",
    "write_html",
]

#: The study presets, in study order.
PRESETS = ("s0", "s1", "s2", "s3", "s4")
#: What a claim can show on the board: the rules' verdicts, or not run (the reason in the note).
BOARD_VERDICTS = (*rules.VERDICTS, "not run")
_RUN_API = ("tasks", "run_task", "measure")


def _module(preset: str) -> Any | None:
    """``ccfair.presets.<preset>`` if it has the run API (``tasks``, ``run_task``, ``measure``), else None."""
    try:
        mod = importlib.import_module(f"ccfair.presets.{preset}")
    except ImportError:
        return None
    return mod if all(hasattr(mod, f) for f in _RUN_API) else None


def _tasks(mod: Any, quick: bool, seed: int) -> tuple[list[dict[str, Any]], bool]:
    """The preset's tasks and whether it took the base seed."""
    if "seed" in inspect.signature(mod.tasks).parameters:
        return list(mod.tasks(quick, seed=seed)), True
    return list(mod.tasks(quick)), False


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
    payloads: list[dict[str, Any]] = [{"run_id": f"{preset}-{i}", "preset": preset, "task": t} for i, t in enumerate(task_list)]
    res = _run(payloads, executor, jobs, scheduler)
    return [res[p["run_id"]] for p in payloads]


@dataclass(frozen=True)
class Entry:
    """One claim on the board."""

    id: str
    verdict: str  # one of BOARD_VERDICTS
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    runs: int = 0
    figure: str = ""
    note: str = ""


def _judge_all(measured: dict[str, Any], presets: tuple[str, ...], mods: dict[str, Any]) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for c in registry.CLAIMS:
        if c.preset not in presets:
            continue
        m = measured.get(c.id)
        if m is None:
            mod = mods.get(c.preset)
            why = (
                f"preset {c.preset} is not available (ccfair.presets.{c.preset} with {', '.join(_RUN_API)})"
                if mod is None
                else "no stored testbed runs for it"
                if c.backend == "testbed"
                else "the preset's runs do not measure it"
            )
            out[c.id] = Entry(c.id, "not run", note=why)
            continue
        j = rules.judge(c, m)
        out[c.id] = Entry(c.id, j.verdict, j.estimate, j.low, j.high, j.runs, m.figure, m.note)
    return out


def reproduce(
    quick: bool = False,
    executor: str = "pool",
    jobs: int | None = None,
    scheduler: str | None = None,
    presets: tuple[str, ...] = PRESETS,
    progress: Any = None,
    seed: int = 1,
) -> dict[str, Any]:
    """Run the presets and judge every claim.

    Returns ``{"entries": {claim_id: Entry}, "results": {preset: [...]},
    "wall_s", "runs", "quick", "seed", "jobs", "executor", "presets", "seeded": [presets that took the seed]}``.
    """
    from ccfair.executors import default_jobs

    jobs = jobs or default_jobs()
    t0 = time.perf_counter()
    mods = {p: _module(p) for p in presets}
    payloads, index, seeded = [], {}, []
    for p, mod in mods.items():
        if mod is None:
            continue
        tl, took = _tasks(mod, quick, seed)
        if took:
            seeded.append(p)
        index[p] = [f"{p}-{i}" for i in range(len(tl))]
        payloads += [{"run_id": rid, "preset": p, "task": t} for rid, t in zip(index[p], tl)]
    if jobs <= 1 and executor == "pool" and scheduler is None:
        executor = "inprocess"
    res = _run(payloads, executor, jobs, scheduler, progress)
    results = {p: [res[r] for r in ids] for p, ids in index.items()}
    measured: dict[str, Any] = {}
    for p, mod in mods.items():
        if mod is None:
            continue
        measured.update(mod.measure(results[p]))
        if hasattr(mod, "measure_testbed"):
            measured.update(mod.measure_testbed())
    return {
        "entries": _judge_all(measured, presets, mods),
        "results": results,
        "wall_s": time.perf_counter() - t0,
        "runs": len(payloads),
        "quick": quick,
        "seed": seed,
        "seeded": seeded,
        "jobs": jobs,
        "executor": executor,
        "presets": list(presets),
    }


# --------------------------------------------------------------------------
# The registry and the board as data
# --------------------------------------------------------------------------


def _claim_dict(c: registry.Claim) -> dict[str, Any]:
    d = asdict(c)
    d["deviations"] = list(c.deviations)
    d["rule"] = asdict(c.rule) | {"text": rules.describe(c.rule)}
    return d


def list_json() -> dict[str, Any]:
    """The registry without running anything (``ccfair reproduce --list --json``)."""
    per: dict[str, int] = {}
    for c in registry.CLAIMS:
        per[c.study] = per.get(c.study, 0) + 1
    return {
        "claims": [_claim_dict(c) for c in registry.CLAIMS],
        "count": len(registry.CLAIMS),
        "per_study": per,
        "tolerances": {k: list(v) for k, v in rules.TOLERANCES.items()},
        "left_out": [{"study": s, "quote": q, "reason": r} for s, q, r in registry.LEFT_OUT],
    }


def counts(entries: dict[str, Entry]) -> dict[str, int]:
    """How many claims got each verdict."""
    out: dict[str, int] = {}
    for e in entries.values():
        out[e.verdict] = out.get(e.verdict, 0) + 1
    return out


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def board_json(rep: dict[str, Any], digest: str | None = None) -> dict[str, Any]:
    """The board as JSON (docs/reproduction.json): digest, commit, date, wall time, per claim its verdict and figures."""
    rows = []
    for c in registry.CLAIMS:
        e = rep["entries"].get(c.id)
        if e is None:
            continue
        rows.append(
            {
                "id": c.id,
                "study": c.study,
                "backend": c.backend,
                "where": c.where,
                "verdict": e.verdict,
                "estimate": e.estimate,
                "interval": None if e.low is None else [e.low, e.high],
                "runs": e.runs,
                "rule": rules.describe(c.rule),
                "figure": e.figure,
                "note": e.note,
                "quote": c.quote,
                "quantity": c.quantity,
                "setup": c.setup,
                "deviations": list(c.deviations),
            }
        )
    out = {
        "model_digest": digest,
        "commit": _git("rev-parse", "--short=12", "HEAD"),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": _command(rep),
        "wall_s": round(rep["wall_s"], 1),
        "runs": rep["runs"],
        "jobs": rep["jobs"],
        "executor": rep["executor"],
        "quick": rep["quick"],
        "seed": rep["seed"],
        "presets": rep["presets"],
        "counts": counts(rep["entries"]),
        "claims": rows,
        "left_out": [{"study": s, "quote": q, "reason": r} for s, q, r in registry.LEFT_OUT],
    }
    return out


def _command(rep: dict[str, Any]) -> str:
    parts = ["ccfair reproduce"]
    if rep["quick"]:
        parts.append("--quick")
    parts.append(f"--jobs {rep['jobs']}")
    if rep["seed"] != 1:
        parts.append(f"--seed {rep['seed']}")
    if tuple(rep["presets"]) != PRESETS:
        parts.append(f"--presets {','.join(rep['presets'])}")
    return " ".join(parts)


def contradictions(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Claims whose verdicts are opposite (reproduced vs not reproduced) in two boards (board_json dicts)."""
    va = {r["id"]: r["verdict"] for r in a["claims"]}
    out = []
    for r in b["claims"]:
        x, y = va.get(r["id"]), r["verdict"]
        if {x, y} == {"reproduced", "not reproduced"}:
            out.append((r["id"], str(x), y))
    return out


# --------------------------------------------------------------------------
# Markdown: docs/reproduction.md
# --------------------------------------------------------------------------


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def _cell(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


_DOC_HEAD = """# Reproducing the five studies: `ccfair reproduce`

This file is generated by `ccfair reproduce --jobs 2 --write-docs` from
docs/reproduction.json (the same run); do not edit it by hand. What the board
is, how verdicts are computed and how to regenerate it are below the board in
"How the board works".
"""

_DOC_HOW = """## How the board works

**Claims.** One registry, `python/ccfair/claims/` (`s0.py` .. `s4.py`, one
module per study, in the study's order): each claim has an id, the study, the
section / table / figure, a quote found verbatim in the study text
(whitespace aside; `tests/test_claims_registry.py` checks every quote against
the study texts when they are present), the quantity as the study defines it,
the study's setup as ccfair runs it, every deviation with its reason, the rule,
the preset whose runs measure it, and the backend: `simulator` (the preset's
runs) or `testbed` (stored real-Linux runs of ccfair's testbed in
`bench/data/`; CI reads them, it never re-measures). `ccfair reproduce --list
--json` prints the registry without running anything. Findings left out are
listed at the end with the reason.

**Measurements.** Each preset (`python/ccfair/presets/sN.py`) runs its tasks
through the sweep executors (in-process, process pool, Dask) and its
`measure(results)` returns, per claim, the quantity's value in each
independent run (optionally a second group when the claim is a difference of
two conditions). Presets hold no verdict logic.

**Verdicts** (`python/ccfair/claims/rules.py`, the one place criteria live;
each change to a criterion is its own commit with the reason):

- the estimate is the mean (or median / standard deviation) over runs, or the
  difference of two groups';
- its 95 % interval is an expanded percentile bootstrap over runs (4000
  resamples, fixed seed; widened for few runs as the t interval is, so that
  five runs are not over-confident);
- `direction` claims are *reproduced* when the whole interval lies on the
  study's side of zero, *not reproduced* when it lies wholly on the other
  side, *inconclusive* otherwise;
- `value` claims compare the interval with the band published +- the
  tolerance of the kind of number (`rules.TOLERANCES`: {tolerances}): inside
  the band *reproduced*, disjoint *not reproduced*, overlapping *inconclusive*. S0's words "dominates" and "fair" are its own fness ends,
  1 and 0 (`rules.DOMINATES`, `rules.FAIR`);
- `sign-change` claims (an observation that inverts between two conditions)
  need each condition's own interval on its own side of zero.

A claim that nothing measured is *not run*, with the reason. *Not
reproduced* claims carry a note saying why where it is known (a model gap, a
setup detail the study does not give, the study contradicting itself, or the
testbed disagreeing with the study too).

**Quick vs full.** `--quick` runs fewer repetitions (S0: 5 per start order
instead of 30); its intervals are wider, so a claim may be *inconclusive*
there, never the opposite verdict of the full run. `--seed N` moves every
run's seed (presets whose `tasks` take a seed); the check over three seeds is
in "Quick against full" below.

**Never stale.** `ccfair reproduce --digest` prints a digest of the model: a
hash of the integer outputs of a fixed set of short simulator runs covering
the main model paths (python/ccfair/model_digest.py: CUBIC, BBRv1-v3, Reno,
paced CUBIC, DCTCP, Prague, CCID2; drop-tail, CoDel, FQ-CoDel, PIE, RED, STEP,
PI2, DualPI2, CSAQM, RRMQS; a CP-like HTTP profile; Poisson finite flows with
random loss; host noise and TSO on as by default; one run of 25 s, past BBR's
10 s min_rtt window, reaches PROBE_RTT). The full run stores it in
docs/reproduction.json (`model_digest`); `tests/test_reproduce.py::
test_the_board_is_not_stale` fails when the tree's digest differs, so a model
change brings a re-run of the board with it.

**Regenerate** (from the repository root; both files in one command):

    ccfair reproduce --jobs 2 --write-docs

Options: `--quick`, `--seed N`, `--presets s0,s2`, `--executor
inprocess|pool|dask`, `--scheduler ADDRESS`, `--html FILE`, `--json`,
`--list --json`, `--digest`, `--against FILE` (list the claims whose verdict
is the opposite of the board in FILE; exit 1 if any). The quick check:

    for s in 1 2 3; do ccfair reproduce --quick --seed $s --jobs 2 --against docs/reproduction.json; done
"""


def _tolerances() -> str:
    def one(name: str, ab: float, rel: float) -> str:
        if ab and rel:
            return f"{name} max({ab:g}, {rel:.0%})"
        return f"{name} {ab:g}" if ab else f"{name} {rel:.0%}"

    return ", ".join(one(k, *v) for k, v in rules.TOLERANCES.items())


def markdown(board: dict[str, Any], extra: str = "") -> str:
    """docs/reproduction.md from a board_json dict."""
    c = board["counts"]
    lines = [
        _DOC_HEAD,
        "## The board",
        "",
        f"`{board['command']}` at commit `{board['commit']}`, {board['date']}: {board['runs']} runs, "
        f"wall time {board['wall_s']:.0f} s on {board['jobs']} jobs ({board['executor']}); model digest "
        f"`{board['model_digest']}`. Verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())) + ".",
        "",
        "Estimate and interval are in the quantity's unit (see `ccfair reproduce --list --json` for each claim's "
        "quantity, setup and deviations).",
    ]
    for study in registry.STUDIES:
        rows = [r for r in board["claims"] if r["study"] == study]
        if not rows:
            continue
        lines += ["", f"### {study}", "", "| claim | where | rule | estimate [95 % interval], runs | verdict |", "|---|---|---|---|---|"]
        for r in rows:
            iv = r["interval"]
            fig = "-" if r["estimate"] is None else f"{_num(r['estimate'])} [{_num(iv[0])}, {_num(iv[1])}], {r['runs']}"
            note = f" ({r['note']})" if r["note"] and r["verdict"] != "reproduced" else ""
            tb = " (testbed)" if r["backend"] == "testbed" else ""
            lines.append(
                f"| {_cell(r['id'])}{tb} | {_cell(r['where'])} | {_cell(r['rule'])} | {_cell(fig)} | **{r['verdict']}**{_cell(note)} |"
            )
    lines += ["", extra.strip(), ""] if extra.strip() else [""]
    lines.append(_DOC_HOW.replace("{tolerances}", _tolerances()))
    lines += ["## Findings left out", "", "| study | finding | why |", "|---|---|---|"]
    for r in board["left_out"]:
        lines.append(f"| {r['study']} | {_cell(r['quote'])} | {_cell(r['reason'])} |")
    return "\n".join(lines) + "\n"


#: Hand-kept sections of docs/reproduction.md that a run does not produce (measured figures with their
#: commands), between these markers; write_docs keeps them.
_KEEP_BEGIN, _KEEP_END = "<!-- kept: begin -->", "<!-- kept: end -->"


def _kept(md_path: Path) -> str:
    if not md_path.exists():
        return ""
    text = md_path.read_text(encoding="utf-8")
    i, j = text.find(_KEEP_BEGIN), text.find(_KEEP_END)
    return text[i : j + len(_KEEP_END)] if 0 <= i < j else ""


def write_docs(rep: dict[str, Any], docs: Path, digest: str) -> tuple[Path, Path]:
    """Write docs/reproduction.json and docs/reproduction.md (keeping the hand-kept sections)."""
    import json

    board = board_json(rep, digest)
    jp, mp = docs / "reproduction.json", docs / "reproduction.md"
    docs.mkdir(parents=True, exist_ok=True)
    jp.write_text(json.dumps(board, indent=1, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")
    mp.write_text(markdown(board, _kept(mp)), encoding="utf-8")
    return jp, mp


# --------------------------------------------------------------------------
# HTML report
# --------------------------------------------------------------------------


def _png(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


_STYLE = (
    "<style>body{font-family:sans-serif;max-width:1200px;margin:auto}table{border-collapse:collapse;font-size:13px}"
    "td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}.reproduced{background:#dfd}.not.reproduced{background:#fdd}"
    ".inconclusive{background:#ffd}.src{color:#555;font-size:12px}pre{font-size:12px}</style></head><body>"
)


def write_html(rep: dict[str, Any], path: str | Path) -> Path:
    """One self-contained HTML page: the board with each claim's quote and rule, then every preset's figures and tables."""
    import matplotlib

    matplotlib.use("Agg")
    e = html.escape
    board = board_json(rep)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>ccfair: reproduction of the source studies</title>",
        _STYLE,
        f"<h1>{e(board['command'])}</h1>",
        f"<p>{board['runs']} runs, wall {board['wall_s']:.0f} s. "
        + e(", ".join(f"{k}: {v}" for k, v in sorted(board["counts"].items())))
        + "</p>",
        "<table><tr><th>claim</th><th>study's words</th><th>rule</th><th>estimate [95 %]</th><th>verdict</th></tr>",
    ]
    for r in board["claims"]:
        cls = r["verdict"].replace(" ", ".")
        iv = r["interval"]
        fig = "-" if r["estimate"] is None else f"{_num(r['estimate'])} [{_num(iv[0])}, {_num(iv[1])}] ({r['runs']} runs)"
        note = f"<br><span class='src'>{e(r['note'])}</span>" if r["note"] else ""
        parts.append(
            f"<tr class='{cls}'><td>{e(r['id'])}</td><td class='src'>{e(r['quote'])}</td><td class='src'>{e(r['rule'])}</td>"
            f"<td>{e(fig)}<br><span class='src'>{e(r['figure'])}</span></td><td>{e(r['verdict'])}{note}</td></tr>"
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
