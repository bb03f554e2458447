"""Sweeps with testbed runs, without root: routing on Dask (the testbed resource), the quality
gate, run ids and the runs table's columns. The testbed run itself is tests/fake_testbed.py
(the simulator stands in); real testbed campaigns are measured in docs/testbed.md, "Campaigns"."""

from __future__ import annotations

from pathlib import Path

import pytest
from ccfair import store
from ccfair.errors import SpecError
from ccfair.executors import TESTBED_RESOURCE
from ccfair.matrix import to_toml
from ccfair.sweep import load_sweep_file, run_sweep
from experiments import cubic_then_bbr

FAKE = "fake_testbed:run"

GRID_SWEEP = {"repetitions": 3, "pairs": [["cubic", "bbr"], ["reno", "cubic"]], "bottleneck.buffer": ["0.5bdp", "2bdp"]}
GRID = to_toml(cubic_then_bbr("tb", "3s", ("1s", "3s"), 3, bbr_start="0.5s", sweep=GRID_SWEEP))


@pytest.fixture
def grid(tmp_path: Path) -> Path:
    p = tmp_path / "grid.toml"
    p.write_text(GRID)
    return p


def _cluster(workers: dict[str, dict[str, object]]):
    distributed = pytest.importorskip("distributed")
    spec = {name: {"cls": distributed.Nanny, "options": {"nthreads": 2, **opts}} for name, opts in workers.items()}
    return distributed.SpecCluster(
        workers=spec, scheduler={"cls": distributed.Scheduler, "options": {"dashboard_address": ":0"}}, silence_logs=40
    )


def test_testbed_runs_go_only_to_workers_with_the_resource_one_at_a_time(tmp_path, grid):
    """Two workers declare the testbed resource, one does not; every worker has two threads, so
    without the resource request a testbed run could land anywhere, two at once per worker."""
    plan = load_sweep_file(grid, backend="both")
    testbed = [t for t in plan.tasks if t.backend == "testbed"]
    assert len(plan.tasks) == 24 and len(testbed) == 12
    with _cluster({"tb1": {"resources": {TESTBED_RESOURCE: 1}}, "tb2": {"resources": {TESTBED_RESOURCE: 1}}, "plain": {}}) as cluster:
        res = run_sweep(plan, tmp_path / "o", executor="dask", scheduler=cluster.scheduler_address, testbed_fn=FAKE)
    assert (res.stored, res.failed) == (24, {})
    runs = store.load_sweep(tmp_path / "o")
    assert sorted(runs["run_id"]) == sorted(t.run_id for t in plan.tasks) and runs["run_id"].is_unique
    held: dict[str, list[tuple[float, float]]] = {}
    for t in testbed:
        fake = store.load_run(tmp_path / "o", t.run_id).summary["testbed"]["fake"]
        held.setdefault(fake["worker"], []).append((fake["start"], fake["end"]))
    assert set(held) <= {"tb1", "tb2"}, held
    for worker, spans in held.items():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), (worker, spans)  # never two at once
    tb_rows = runs[runs["backend"] == "testbed"]
    assert set(tb_rows["worker"]) == set(held) and set(tb_rows["kernel"]) == {"fake"}
    assert (tb_rows["quality"] == "ok").all() and (tb_rows["attempts"] == 1).all()
    assert runs[runs["backend"] == "sim"]["kernel"].isna().all()


def test_a_cluster_without_testbed_workers_is_refused_naming_the_option(tmp_path, grid):
    plan = load_sweep_file(grid, backend="testbed")
    with _cluster({"plain": {}}) as cluster:
        with pytest.raises(SpecError) as e:
            run_sweep(plan, tmp_path / "o", executor="dask", scheduler=cluster.scheduler_address, testbed_fn=FAKE)
    assert e.value.field == "--backend" and f"--resources {TESTBED_RESOURCE}=1" in e.value.message


def test_testbed_run_ids_differ_from_the_simulators_and_seeds_match(grid):
    sim, both = load_sweep_file(grid), load_sweep_file(grid, backend="both")
    by_backend = {b: [t for t in both.tasks if t.backend == b] for b in ("sim", "testbed")}
    assert [t.run_id for t in by_backend["sim"]] == [t.run_id for t in sim.tasks]  # simulator ids unchanged
    assert not {t.run_id for t in by_backend["testbed"]} & {t.run_id for t in sim.tasks}
    assert [t.seed for t in by_backend["testbed"]] == [t.seed for t in sim.tasks]


def test_resuming_with_another_backend_is_refused_naming_both(tmp_path, grid):
    run_sweep(load_sweep_file(grid, backend="testbed"), tmp_path / "o", executor="inprocess", testbed_fn=FAKE)
    with pytest.raises(SpecError) as e:
        run_sweep(load_sweep_file(grid), tmp_path / "o", executor="inprocess")
    assert e.value.field == "--backend" and "--backend testbed" in e.value.message


def test_a_run_over_the_quality_limits_is_rerun_then_stored_marked(tmp_path, grid, monkeypatch):
    """A run whose bottleneck lateness exceeds one frame time is re-run; after MAX_ATTEMPTS it is
    stored with the reason in `quality` (the limits: ccfair.testbed.quality)."""
    import fake_testbed
    from ccfair.testbed import quality

    calls = []
    real = fake_testbed.run

    def late(experiment, seed):
        r = real(experiment, seed)
        calls.append(seed)
        # 10 Mbit/s, 1514-byte frames: one frame time is 1211 us; the first point is always late
        r.summary["testbed"]["bottleneck"]["late_p99_us"] = 5000.0 if experiment["bottleneck"]["buffer"] == "0.5bdp" else 10.0
        return r

    monkeypatch.setattr(fake_testbed, "HOLD_S", 0.0)
    monkeypatch.setattr(fake_testbed, "run", late)
    plan = load_sweep_file(grid, backend="testbed")
    run_sweep(plan, tmp_path / "o", executor="inprocess", testbed_fn=FAKE)
    runs = store.load_sweep(tmp_path / "o").set_index("run_id")
    late_runs = runs[runs["bottleneck.buffer"] == "0.5bdp"]
    assert (late_runs["attempts"] == quality.MAX_ATTEMPTS).all()
    assert late_runs["quality"].str.startswith("over limits: bottleneck late p99 5000 us > 1 frame time (1211 us)").all()
    ok = runs[runs["bottleneck.buffer"] == "2bdp"]
    assert (ok["quality"] == "ok").all() and (ok["attempts"] == 1).all()
    assert len(calls) == quality.MAX_ATTEMPTS * len(late_runs) + len(ok)


def test_a_worker_task_returns_the_runs_it_did_not_start_after_its_time_budget(monkeypatch, grid):
    """Small commits: a task stops starting runs after BATCH_BUDGET_S and hands the rest back;
    the executors queue them again, so every run is done exactly once."""
    from ccfair import executors

    monkeypatch.setattr(executors, "BATCH_BUDGET_S", 0.0)  # every task: one run, then the rest back
    plan = load_sweep_file(grid)
    outs = list(executors.run_tasks([t.payload() for t in plan.tasks], "inprocess", batch=len(plan.tasks)))
    assert [o["n"] for o in outs] == [1] * len(plan.tasks)
    assert [len(o["rest"]) for o in outs] == list(range(len(plan.tasks) - 1, -1, -1))
    assert sorted(r for o in outs for r in o["run_ids"]) == sorted(t.run_id for t in plan.tasks)


def test_the_docs_state_the_quality_gates_limits_as_declared(root):
    """The limits are declared once (ccfair.testbed.quality); docs/testbed.md states the same values."""
    from ccfair.testbed import quality

    text = (root / "docs" / "testbed.md").read_text()
    assert f"`LATE_P99_MAX_FRAMES = {quality.LATE_P99_MAX_FRAMES}`" in text
    assert f"<= {quality.LOAD_PER_CPU_MAX:g} (`LOAD_PER_CPU_MAX`)" in text
    assert f"up to {quality.MAX_ATTEMPTS} attempts in all (`MAX_ATTEMPTS`" in text
