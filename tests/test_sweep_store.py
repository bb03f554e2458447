"""Running sweeps on the real simulator: executors give identical stores; resume after SIGKILL.

The sweeps here are small (short runs) to keep the suite fast; the
acceptance-size figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from ccfair import (
    _core,  # noqa: F401  a missing extension must fail the suite, not skip it
    store,
)
from ccfair.cli import main
from ccfair.matrix import to_toml
from ccfair.sweep import load_sweep_file, run_sweep
from experiments import cubic_then_bbr

SMALL_SWEEP = {
    "repetitions": 2,
    "flip_order": True,
    "pairs": [["cubic", "bbr"], ["reno", "cubic+pacing"]],
    "bottleneck.buffer": ["0.5bdp", "2bdp"],
}
SMALL_RAW = cubic_then_bbr("small", "4s", ("2s", "4s"), 11, jitter="50ms")
SMALL = to_toml({**SMALL_RAW, "sweep": SMALL_SWEEP})
#: SMALL, 8 s long, 6 repetitions.
LONGER = to_toml({**SMALL_RAW, "duration": "8s", "sweep": {**SMALL_SWEEP, "repetitions": 6}})


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


def _stored(directory: Path) -> dict[str, object]:
    """Everything stored per run except the wall-time-bearing summary: row, flows rows, spec,
    run_config and every table's contents (compared per run: the batching may differ)."""
    out: dict[str, object] = {}
    ids = sorted(store.finished_runs(directory))
    rows, flows = store.read_rows(directory, ids)
    for rid, row in zip(ids, rows):
        r = store.load_run(directory, rid)
        tables = {
            k: None if v is None else (list(v.columns), [str(t) for t in v.dtypes], v.to_csv(index=False)) for k, v in r.tables().items()
        }
        out[rid] = (row, [f for f in flows if f["run_id"] == rid], r.spec.model_dump(mode="json"), r.config, tables)
    return out


def test_executors_give_identical_results(tmp_path, small_file):
    plan = load_sweep_file(small_file)
    n = len(plan.tasks)
    assert n == 16
    runs = {}
    execs = [("inprocess", 1), ("pool", 2)]
    try:
        import distributed  # noqa: F401

        execs.append(("dask", 2))
    except ImportError:
        pass  # reported by test_dask_is_installed below
    for executor, jobs in execs:
        out = tmp_path / executor
        res = run_sweep(plan, out, executor=executor, jobs=jobs, source=SMALL)
        assert (res.stored, res.skipped, res.failed) == (n, 0, {})
        runs[executor] = out
    ref = runs["inprocess"]
    ref_runs = store.load_sweep(ref)
    assert list(ref_runs["run_id"]) == [t.run_id for t in plan.tasks]
    assert ref_runs["jfi"].between(0.5, 1.0).all()
    for executor, out in runs.items():
        pd.testing.assert_frame_equal(store.load_sweep(out), ref_runs)
        pd.testing.assert_frame_equal(store.load_sweep(out, "flows"), store.load_sweep(ref, "flows"))
        pd.testing.assert_frame_equal(store.load_sweep(out, "links"), store.load_sweep(ref, "links"))
        assert _stored(out) == _stored(ref), executor
        assert (out / "runs.parquet").read_bytes() == (ref / "runs.parquet").read_bytes()


def test_dask_is_installed():
    """The test extra installs dask[distributed], so the executor comparison above covers Dask;
    a missing install fails here instead of silently narrowing that comparison."""
    import importlib.util

    from ccfair.executors import EXECUTORS

    assert "dask" in EXECUTORS
    assert importlib.util.find_spec("distributed") is not None, "dask[distributed] is missing: pip install -e '.[test]'"


def test_runs_table_contents(tmp_path, small_file):
    plan = load_sweep_file(small_file)
    run_sweep(plan, tmp_path / "o", executor="inprocess")
    runs = store.load_sweep(tmp_path / "o")
    assert len(runs) == len(set(runs["run_id"])) == 16
    for col in (
        "pair",
        "bottleneck.buffer",
        "repetition",
        "order",
        "seed",
        "jfi",
        "fness",
        "utilization",
        "queue_delay_mean_ms",
        "queue_delay_p99_ms",
    ):
        assert col in runs.columns, col
    flows = store.load_sweep(tmp_path / "o", "flows")
    assert len(flows) == 32
    # fness is fness(A, B) by flow identity in both orders: recompute it from the flows table
    for rid, sub in flows.groupby("run_id"):
        by = dict(zip(sub["name"], sub["bytes"]))
        a, b = by["A"], by["B"]
        expect = 1 - a / b if b >= a else b / a - 1
        assert runs.loc[runs["run_id"] == rid, "fness"].item() == pytest.approx(expect)
    # in the flipped order the flow that starts first is B
    assert set(runs.loc[runs["order"] == "B first", "first"]) == {"B"}
    assert set(runs.loc[runs["order"] == "A first", "first"]) == {"A"}
    # each run directory is an ordinary result directory
    r = store.load_run(tmp_path / "o", runs["run_id"][0])
    assert r.config["seed"] == runs["seed"][0]
    tp = store.load_sweep(tmp_path / "o", "throughput", run_ids=list(runs["run_id"][:2]))
    assert list(tp["run_id"].unique()) == list(runs["run_id"][:2])


TOPOLOGY = to_toml(
    {
        "name": "two links",
        "duration": "3s",
        "window": {"start": "1s", "end": "3s"},
        "seed": 5,
        "links": [
            {"name": "l1", "rate": "10Mbit", "delay": "5ms", "buffer": "1bdp"},
            {"name": "l2", "rate": "20Mbit", "delay": "5ms", "buffer": "20pkt"},
        ],
        "flows": [
            {"name": "long", "cca": "cubic", "rtt": "40ms", "path": ["l1", "l2"]},
            {"name": "x2", "cca": "reno", "rtt": "20ms", "path": ["l2"]},
        ],
        "sweep": {"repetitions": 2, "links.0.rate": ["10Mbit", "15Mbit"]},
    }
)


def test_the_links_table_holds_every_links_values_of_every_run_and_reads_back(tmp_path):
    """Round trip: one links row per link per run, the values each run's summary reports, in link
    order; the compacted links.parquet is that table; a dumbbell's run has its one "bottleneck" row."""
    path = tmp_path / "topo.toml"
    path.write_text(TOPOLOGY)
    plan = load_sweep_file(path)
    out = tmp_path / "o"
    run_sweep(plan, out, executor="inprocess")
    links = store.load_sweep(out, "links")
    assert tuple(links.columns) == store.LINK_TABLE_COLUMNS
    ids = [t.run_id for t in plan.tasks]
    assert list(links["run_id"]) == [rid for rid in ids for _ in range(2)]
    for rid, sub in links.groupby("run_id", sort=False):
        summary = store.load_run(out, rid).summary["links"]
        assert sub.drop(columns=["run_id", "position"]).to_dict("records") == summary
        assert list(sub["position"]) == [0, 1]
    rates = store.load_sweep(out).set_index("run_id")["links.0.rate"]
    l1 = links[links["name"] == "l1"]
    assert [int(r) for r in l1["rate_bps"]] == [{"10Mbit": 10_000_000, "15Mbit": 15_000_000}[rates[rid]] for rid in l1["run_id"]]
    pd.testing.assert_frame_equal(pd.read_parquet(out / "links.parquet"), links)
    # rebuilt from the batches when the cache is gone: the same table
    (out / "links.parquet").unlink()
    pd.testing.assert_frame_equal(store.load_sweep(out, "links"), links)
    # the report shows the links per grid point
    from ccfair.report import build_report

    page = build_report(out)
    assert "Links per grid point" in page and "l2" in page


def test_a_dumbbell_sweeps_links_table_has_its_one_link_per_run(tmp_path, small_file):
    plan = load_sweep_file(small_file)
    run_sweep(plan, tmp_path / "o", executor="inprocess")
    links = store.load_sweep(tmp_path / "o", "links")
    runs = store.load_sweep(tmp_path / "o")
    assert list(links["run_id"]) == list(runs["run_id"]) and set(links["name"]) == {"bottleneck"}
    assert links["utilisation"].to_numpy() == pytest.approx(runs["utilization"].to_numpy(), abs=0.01)


def test_rerun_does_nothing_and_foreign_dir_refused(tmp_path, small_file, capsys):
    out = tmp_path / "o"
    assert main(["sweep", str(small_file), "--out", str(out), "--executor", "inprocess"]) == 0
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    assert main(["sweep", str(small_file), "--out", str(out), "--executor", "inprocess"]) == 0
    err = capsys.readouterr().err
    assert "0 new, 16 already stored" in err
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before
    # a different sweep into the same directory is refused before running anything
    code = main(["sweep", str(small_file), "--out", str(out), "--set", "seed=12", "--executor", "inprocess"])
    assert code == 2
    assert "different sweep" in capsys.readouterr().err
    # extending the sweep (more repetitions) keeps the stored runs and adds the new ones
    assert main(["sweep", str(small_file), "--out", str(out), "--set", "sweep.repetitions=3", "--executor", "inprocess"]) == 0
    assert "8 new, 16 already stored" in capsys.readouterr().err


def test_a_store_of_another_simulator_build_is_refused_unless_allowed(tmp_path, small_file, capsys):
    # Results are only comparable within one model: runs of two simulator builds in one store
    # would be reported as one sweep, so resuming with another build is refused naming both.
    import json

    out = tmp_path / "o"
    assert main(["sweep", str(small_file), "--out", str(out), "--executor", "inprocess", "--set", "sweep.repetitions=1"]) == 0
    meta = json.loads((out / store.SWEEP_JSON).read_text())
    this_build = meta["versions"]["ccfair._core build"]
    assert this_build and len(this_build) == 16
    meta["versions"]["ccfair._core build"] = "0" * 16
    (out / store.SWEEP_JSON).write_text(json.dumps(meta))
    capsys.readouterr()
    args = ["sweep", str(small_file), "--out", str(out), "--executor", "inprocess"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "another simulator build" in err and "0" * 16 in err and this_build in err and "--allow-other-build" in err
    assert "Traceback" not in err
    assert main([*args, "--allow-other-build"]) == 0
    assert "8 new, 8 already stored" in capsys.readouterr().err
    assert json.loads((out / store.SWEEP_JSON).read_text())["versions"]["ccfair._core build"] == this_build


def test_failed_run_is_recorded_and_retried(tmp_path, small_file, monkeypatch):
    from ccfair import api

    plan = load_sweep_file(small_file)
    victim = plan.tasks[3].run_id
    real = api.simulate

    def flaky(config, spec=None, **kwargs):
        if config["seed"] == plan.tasks[3].seed:
            raise api.SimulationError("injected failure")
        return real(config, spec, **kwargs)

    monkeypatch.setattr(api, "simulate", flaky)
    res = run_sweep(plan, tmp_path / "o", executor="inprocess")
    assert list(res.failed) == [victim] and "injected failure" in res.failed[victim]
    assert (tmp_path / "o" / "failed" / f"{victim}.json").exists()
    assert len(store.load_sweep(tmp_path / "o")) == 15
    monkeypatch.setattr(api, "simulate", real)
    res = run_sweep(plan, tmp_path / "o", executor="inprocess")
    assert (res.stored, res.skipped, res.failed) == (1, 15, {})
    assert not (tmp_path / "o" / "failed" / f"{victim}.json").exists()
    assert list(store.load_sweep(tmp_path / "o")["run_id"]) == [t.run_id for t in plan.tasks]


def test_sigkill_then_resume_stores_every_run_once(tmp_path, subprocess_env):
    """Acceptance: kill a running sweep (the whole process group, SIGKILL) and re-run it."""
    text = LONGER
    path = tmp_path / "kill.toml"
    path.write_text(text)
    out = tmp_path / "o"
    plan = load_sweep_file(path)
    total = len(plan.tasks)
    assert total == 48
    cmd = [sys.executable, "-m", "ccfair", "sweep", str(path), "--out", str(out), "--jobs", "2"]
    proc = subprocess.Popen(cmd, env=subprocess_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    stored_at_kill = 0
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            stored_at_kill = len(store.finished_runs(out))
            if stored_at_kill >= 4:
                break
            time.sleep(0.01)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its worker processes
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL, "the sweep finished before it could be killed; make it longer"
    killed = store.finished_runs(out)
    assert 4 <= len(killed) < total
    batches = {p: p.stat().st_mtime_ns for p in (out / "batches").iterdir() if not p.name.startswith(".")}
    # every stored run is whole: its row, its links rows (a dumbbell: one, "bottleneck") and all its tables
    rows, _ = store.read_rows(out, sorted(killed))
    assert sorted(r["run_id"] for r in rows) == sorted(killed)
    links = store.read_tables(out, sorted(killed))["links"]
    assert sorted((r["run_id"], r["name"]) for r in links) == sorted((rid, "bottleneck") for rid in killed)
    for rid in killed:
        r = store.load_run(out, rid)
        assert r.config["seed"] in {t.seed for t in plan.tasks}
        for name in ("flows", "throughput", "link", "queue", "sojourn"):
            assert len(getattr(r, name)) > 0, (rid, name)

    res = subprocess.run(cmd, env=subprocess_env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"{total - len(killed)} new, {len(killed)} already stored, 0 failed" in res.stderr
    runs = store.load_sweep(out)
    assert sorted(runs["run_id"]) == sorted(t.run_id for t in plan.tasks)
    assert runs["run_id"].is_unique and len(runs) == total
    assert pd.read_parquet(out / "runs.parquet")["run_id"].is_unique
    assert sorted(pd.read_parquet(out / "links.parquet")["run_id"]) == sorted(runs["run_id"])  # one link each, once
    assert not list((out / "batches").glob(".tmp-*"))
    # batches committed before the kill were not rewritten
    assert {p: p.stat().st_mtime_ns for p in batches} == batches
    # and the resumed store equals an uninterrupted one
    fresh = tmp_path / "fresh"
    run_sweep(plan, fresh, executor="inprocess")
    pd.testing.assert_frame_equal(store.load_sweep(fresh), runs)


@pytest.mark.parametrize(
    "changes",
    [
        {"trace": True},  # the trace series
        {"bottleneck": {"rate": "10Mbit", "buffer": "1bdp", "qdisc": {"kind": "rrmqs"}}},  # the RRMQS meter and pinned tables
    ],
)
def test_array_output_gives_the_same_result_as_lists(changes):
    """``simulate(arrays=True)`` (numpy arrays owning the engine's vectors, what sweep workers use)
    and the default lists give the same summary and the same tables, value for value and dtype."""
    from ccfair.api import simulate
    from ccfair.result import Result
    from ccfair.spec import Spec

    raw = copy.deepcopy(SMALL_RAW)
    raw.update(changes)
    spec = Spec.from_dict(raw)
    config = spec.to_run_config(spec.seed)
    as_lists = Result.from_raw(spec, config, simulate(config, spec))
    arrays = simulate(config, spec, arrays=True)
    assert type(arrays["link_tx_bytes"]).__name__ == "ndarray"
    as_arrays = Result.from_raw(spec, config, arrays)
    assert {k: v for k, v in as_lists.summary.items() if k != "sim_wall_s"} == {
        k: v for k, v in as_arrays.summary.items() if k != "sim_wall_s"
    }
    tables = as_lists.tables()
    assert set(tables) == set(as_arrays.tables())
    for name, df in tables.items():
        pd.testing.assert_frame_equal(as_arrays.tables()[name], df, check_exact=True)
    assert (as_lists.trace is not None) == bool(changes.get("trace"))
    assert (as_lists.meter is not None) == ("bottleneck" in changes)


def test_each_run_carries_the_engines_projected_events(small_file):
    """The cost executors order runs by is the engine's own projection (limits.rs), per run."""
    import json

    plan = load_sweep_file(small_file)
    for t in plan.tasks:
        assert t.cost == _core.check(json.dumps(t.config)) > 0
        assert t.payload()["cost"] == t.cost


def test_each_run_hands_the_engine_the_json_its_run_id_hashes(small_file):
    """A worker passes the plan's canonical JSON of the config to the engine instead of encoding
    the config again: it must be that config, and the text the run id is computed from."""
    import hashlib
    import json

    plan = load_sweep_file(small_file)
    for t in plan.tasks:
        text = t.payload()["config_json"]
        assert json.loads(text) == t.config
        assert hashlib.sha256(text.encode()).hexdigest()[:16] == t.run_id


def test_runs_lines_are_the_json_of_each_runs_record(tmp_path, small_file):
    """runs.jsonl is assembled from cached JSON texts (the spec's): each line must be exactly
    ``json.dumps`` of the record, so that readers and older stores see the same text."""
    import json

    plan = load_sweep_file(small_file)
    run_sweep(plan, tmp_path / "o", executor="inprocess")
    lines = [ln for b in (tmp_path / "o" / "batches").iterdir() for ln in (b / "runs.jsonl").read_text().splitlines()]
    assert len(lines) == len(plan.tasks)
    for line in lines:
        rec = json.loads(line)
        assert list(rec) == ["run_id", "tables", "summary", "spec", "run_config"]
        assert line == json.dumps(rec, allow_nan=False)


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"trace": True},  # the trace series
        {"bottleneck": {"rate": "10Mbit", "buffer": "1bdp", "qdisc": {"kind": "rrmqs"}}},  # the RRMQS meter and pinned tables
        {"flows": [{"cca": "cubic", "rtt": "20ms", "size": "300KB"}, {"cca": "bbr", "rtt": "20ms", "start": "1s"}]},  # a finite flow
    ],
)
def test_a_stored_batch_reads_back_as_the_runs_tables(tmp_path, changes):
    """The batch files (one Parquet file per table, run_id dictionary-coded, per-column encodings,
    no stored Arrow schema) read back, run by run, exactly as each run's own pandas tables:
    same columns, dtypes (flows.size_bytes nullable Int64, as in a Result) and values (floats bit
    for bit, NaN included)."""
    from ccfair.api import simulate
    from ccfair.result import Result
    from ccfair.spec import Spec

    raw = copy.deepcopy(SMALL_RAW)
    raw.update(changes)
    items = []
    for seed in (1, 2):
        spec = Spec.from_dict(dict(raw, seed=seed))
        config = spec.to_run_config(seed)
        items.append(
            (
                f"run{seed}",
                {"params": {}, "repetition": 0, "order": "A first", "seed": seed},
                Result.from_raw(spec, config, simulate(config, spec, arrays=True)),
            )
        )
    (tmp_path / "batches").mkdir()
    store.write_batch(tmp_path, [rid for rid, _, _ in items], store.encode_batch(items))
    for rid, _, result in items:
        back = store.load_run(tmp_path, rid)
        expect = result.tables()
        assert set(back.tables()) == set(expect), rid
        for name, df in expect.items():
            pd.testing.assert_frame_equal(back.tables()[name], df, check_exact=True, obj=f"{rid} {name}")
        assert back.summary == result.summary
    for name in store.SERIES_TABLES:
        if name in items[0][2].tables():
            run_id = store.load_sweep(tmp_path, name)["run_id"]  # strings, not categories
            assert pd.api.types.is_string_dtype(run_id) and not isinstance(run_id.dtype, pd.CategoricalDtype), name
            assert list(run_id.unique()) == ["run1", "run2"]


def _session_processes(sid: int) -> list[int]:
    """Live (not zombie) processes of session ``sid``."""
    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            fields = (p / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            out.append(int(p.name))
    return out


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killing_the_main_process_leaves_no_worker_fork_server_or_tracker(tmp_path, subprocess_env, sig):
    """Issue: SIGTERM or kill -9 of a sweep's main PID left the fork server, the resource tracker and
    the workers running. The sweep runs in its own session; after its main process is signalled
    (it alone) every process of that session must be gone (the workers watch the main process,
    the fork server has a parent-death signal, the tracker exits when its pipe closes)."""
    text = LONGER
    path = tmp_path / "s.toml"
    path.write_text(text)
    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "ccfair", "sweep", str(path), "--out", str(out), "--jobs", "2"]
    proc = subprocess.Popen(cmd, env=subprocess_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None and not store.finished_runs(out):
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep finished before it could be killed; make it longer"
    assert len(_session_processes(proc.pid)) >= 4  # main, fork server, resource tracker, workers
    os.kill(proc.pid, sig)
    proc.wait(timeout=60)
    left = _session_processes(proc.pid)
    deadline = time.monotonic() + 30
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _session_processes(proc.pid)
    for pid in left:  # leave nothing behind whatever the outcome
        os.kill(pid, signal.SIGKILL)
    assert left == []
    assert proc.returncode == (-signal.SIGKILL if sig == signal.SIGKILL else 128 + signal.SIGTERM)
