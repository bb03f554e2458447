"""Absurd inputs refused before they exhaust the machine, the sweep store's
lock, conflicting sweep axes, and the small ones (negative rtt, near-miss keys,
misspelt [sweep] settings, the report's queue-figure caption).

The resource projection (crates/ccfair-sim/src/limits.rs) is exercised through the
real engine; its Rust unit tests check the projection's terms.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import ccfair
import pytest
from ccfair import store
from ccfair.api import check_resources
from ccfair.errors import SpecError
from ccfair.matrix import to_toml
from ccfair.spec import Spec
from ccfair.sweep import load_sweep_file, run_sweep
from experiments import cubic_then_bbr

CORPUS = Path(__file__).resolve().parent / "bad_inputs"

#: The five absurd cases and the field each refusal must name.
ABSURD = {
    "absurd-rate-gbit": "bottleneck.rate",  # rate = "1000000Gbit"
    "absurd-rate-float": "bottleneck.rate",  # rate = 1e15
    "absurd-count": "flows.0.count",  # count = 10^30 (an integer)
    "absurd-duration": "duration",  # duration = "1000000h"
    "absurd-bins-flows": "bin",  # 10000 flows x 1 ms bins
}

#: Runs the CLI in a fresh interpreter and prints its peak RSS (KiB) last on stdout: VmHWM of
#: /proc/self/status, the high-water mark of this process's own memory (getrusage's ru_maxrss
#: would carry over the RSS of the forking parent, here the pytest process).
RSS_PROBE = (
    "import sys\n"
    "from ccfair.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM:')][0]\n"
    "print(int(hwm.split()[1]))\n"
    "sys.exit(code)\n"
)


@pytest.mark.parametrize("name", sorted(ABSURD))
def test_absurd_input_exits_2_naming_the_field_in_little_memory(name, subprocess_env):
    """`ccfair run` on each case: exit 2, one line naming the field, peak RSS < 200 MB.
    (Wall time is measured in bench/absurd_inputs.py, not asserted here.)"""
    path = CORPUS / f"{name}.toml"
    p = subprocess.run(
        [sys.executable, "-c", RSS_PROBE, "run", str(path)],
        capture_output=True,
        text=True,
        env=subprocess_env,
        timeout=120,
    )
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(f"error: {ABSURD[name]}: "), p.stderr
    rss_kib = int(p.stdout.split()[-1])
    assert rss_kib < 200 * 1024, rss_kib


@pytest.mark.parametrize("name", sorted(ABSURD))
def test_absurd_input_raises_spec_error_from_python(name):
    with pytest.raises(SpecError) as info:
        ccfair.run(CORPUS / f"{name}.toml")
    assert info.value.field == ABSURD[name]


def test_allocation_failure_is_a_spec_error_not_an_abort(subprocess_env):
    """With every limit raised, the million-hour run reaches the engine's allocation of its
    per-bin series; under a 2 GB address-space limit that allocation fails, which must be a
    SpecError (exit 2), not an abort (exit 134) or a killed interpreter."""
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "import ccfair\n"
        "from ccfair.errors import SpecError\n"
        "from ccfair.spec import Spec\n"
        "s = Spec.from_toml(sys.argv[1]).with_overrides(\n"
        "    ['limits.memory=\"1000000GB\"', 'limits.events=18000000000000000000', 'limits.wall=\"1000000h\"'])\n"
        "try:\n"
        "    ccfair.run(s)\n"
        "except SpecError as e:\n"
        "    print('SpecError', e.field)\n"
        "    sys.exit(2)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, str(CORPUS / "absurd-duration.toml")],
        capture_output=True,
        text=True,
        env=subprocess_env,
        timeout=120,
    )
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert p.stdout.strip() == "SpecError bin"


def test_limits_can_be_raised_and_lowered(examples):
    """[limits] moves the bounds both ways: the S0 base case is refused under 1 MB; the
    10^15 bit/s case, allowed its memory, is next refused for its events (~2e13 > 10^12),
    and runs the check once every limit is raised."""
    spec = Spec.from_toml(examples / "s0-cubic-vs-bbr.toml")
    check_resources(spec.to_run_config(), spec)
    low = spec.with_overrides(['limits.memory="1MB"'])
    with pytest.raises(SpecError) as info:
        check_resources(low.to_run_config(), low)
    assert "over the limit of 976.6 KiB" in info.value.message
    big = spec.with_overrides(['bottleneck.rate="1000000Gbit"', 'limits.memory="1000000000GB"'])
    with pytest.raises(SpecError) as info:
        check_resources(big.to_run_config(), big)
    assert info.value.field == "bottleneck.rate" and "events" in info.value.message
    free = big.with_overrides(["limits.events=18000000000000000000", 'limits.wall="1000000h"'])
    check_resources(free.to_run_config(), free)


# --------------------------------------------------------------------------- small ones


def test_negative_rtt_says_greater_than_zero(s0_dict):
    s0_dict["flows"][0]["rtt"] = "-50ms"
    with pytest.raises(SpecError) as info:
        Spec.from_dict(s0_dict)
    assert info.value.field == "flows.0.rtt"
    assert info.value.message.startswith("must be > 0"), info.value.message


def test_missing_key_with_near_miss_spelling_suggests_it(s0_dict):
    s0_dict["bottleneck"]["rat"] = s0_dict["bottleneck"].pop("rate")
    with pytest.raises(SpecError) as info:
        Spec.from_dict(s0_dict)
    assert info.value.field == "bottleneck.rate"
    assert "did you mean 'rate'" in info.value.message and "'rat'" in info.value.message


def _sweep_text(sweep: str) -> str:
    return to_toml(cubic_then_bbr("sweep", "3s", ("1s", "3s"), 1)) + "\n[sweep]\n" + textwrap.dedent(sweep)


def test_misspelt_sweep_setting_is_not_an_axis(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(_sweep_text('repetitons = 2\n"bottleneck.rate" = ["10Mbit"]\n'))
    with pytest.raises(SpecError) as info:
        load_sweep_file(f)
    assert info.value.field == "sweep.repetitons"
    assert "did you mean 'repetitions'" in info.value.message


@pytest.mark.parametrize(
    "sweep, field, other",
    [
        ('"flows.0.cca" = ["reno"]\npairs = [["cubic", "bbr"]]\n', "sweep.pairs", "sweep.flows.0.cca"),
        ('pairs = [["cubic", "bbr"]]\n"flows.0.cca" = ["reno"]\n', "sweep.flows.0.cca", "sweep.pairs"),
        ('"flows.*.cca" = ["reno"]\npairs = [["cubic", "bbr"]]\n', "sweep.pairs", "sweep.flows.*.cca"),
        ('flows = [[{cca = "reno", rtt = "20ms"}]]\n"flows.1.rtt" = ["10ms"]\n', "sweep.flows.1.rtt", "sweep.flows"),
    ],
)
def test_axis_conflicting_with_pairs_or_flows_is_refused_naming_both(tmp_path, sweep, field, other):
    f = tmp_path / "s.toml"
    f.write_text(_sweep_text(sweep))
    with pytest.raises(SpecError) as info:
        load_sweep_file(f)
    assert info.value.field == field
    assert other in info.value.message


def test_set_on_an_axis_path_is_refused(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(_sweep_text('pairs = [["cubic", "bbr"]]\n'))
    with pytest.raises(SpecError) as info:
        load_sweep_file(f, ["flows.0.cca=reno"])
    assert info.value.field == "--set" and "sweep.pairs" in info.value.message


def test_runs_table_records_the_ccas_that_ran(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(_sweep_text('pairs = [["reno", "bbr"], ["cubic", "reno"]]\nflip_order = true\n'))
    out = tmp_path / "o"
    run_sweep(load_sweep_file(f), out, executor="inprocess")
    runs = store.load_sweep(out)
    flows = store.load_sweep(out, "flows")
    for _, r in runs.iterrows():
        ran = flows[flows.run_id == r.run_id].sort_values("position")
        cfg = store.load_run(out, r.run_id).config
        assert list(ran.cca) == [fl["cca"] for fl in cfg["flows"]]
        assert sorted(r.pair.split(" vs ")) == sorted(ran.cca), (r.pair, list(ran.cca))


def test_queue_figure_caption_matches_what_it_draws(monkeypatch):
    import pandas as pd
    from ccfair import report

    queue = pd.DataFrame({"time_s": [0.0, 0.01], "packets": [0, 3]})
    sojourn = pd.DataFrame({"bin_start_ms": [0.0, 0.1], "bin_end_ms": [0.1, 0.2], "count": [5, 2]})
    fig, caption = report._queue_figure(queue, sojourn, "run x")
    assert len(fig.axes) == 1 and caption == "Queueing-delay histogram (analysis window)"
    monkeypatch.setattr(report, "_try_plots", lambda *a, **k: None)
    fig, caption = report._queue_figure(queue, sojourn, "run x")
    assert len(fig.axes) == 2 and "queue over time" in caption and "histogram" in caption


# --------------------------------------------------------------------------- the store lock

SMALL_SWEEP = _sweep_text('"bottleneck.buffer" = ["0.5bdp", "1bdp", "2bdp"]\nrepetitions = 2\n')


def _store_bytes(d: Path) -> dict[str, bytes]:
    """Every file of a store except the lock (it holds the writer's PID), with the one value
    that differs between identical runs, the simulator's wall time (``sim_wall_s`` of each
    run's summary, in ``runs.jsonl`` or ``summary.json``), taken out. The batches are compared
    run by run (which runs share a batch depends on timing: a worker task hands back the runs
    it has not started after ``executors.BATCH_BUDGET_S``): per run its rows.jsonl and
    runs.jsonl record and its rows of every batch table."""
    import pandas as pd

    out = {}
    for p in sorted(d.rglob("*")):
        if not p.is_file() or p.name == store.LOCK_FILE:
            continue
        if p.parent.parent.name == store.BATCHES_DIR:
            if p.suffix == ".parquet":
                for rid, part in pd.read_parquet(p).groupby("run_id", sort=False):
                    out[f"run {rid} {p.name}"] = part.reset_index(drop=True).to_csv(index=False).encode()
            elif p.suffix == ".jsonl":
                for ln in p.read_text().splitlines():
                    rec = json.loads(ln)
                    rec.get("summary", {}).pop("sim_wall_s", None)
                    rid = rec["run_id"] if "run_id" in rec else rec["row"]["run_id"]
                    out[f"run {rid} {p.name}"] = json.dumps(rec, sort_keys=True).encode()
            continue
        data = p.read_bytes()
        if p.name == "summary.json":
            s = json.loads(data)
            s.pop("sim_wall_s", None)
            data = json.dumps(s, sort_keys=True).encode()
        elif p.name == "runs.jsonl":
            lines = [json.loads(ln) for ln in data.splitlines() if ln.strip()]
            for ln in lines:
                ln.get("summary", {}).pop("sim_wall_s", None)
            data = "\n".join(json.dumps(ln, sort_keys=True) for ln in lines).encode()
        out[str(p.relative_to(d))] = data
    return out


def _cli(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "ccfair", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_locked_store_refuses_a_second_sweep_naming_the_pid(tmp_path, subprocess_env):
    f = tmp_path / "s.toml"
    f.write_text(SMALL_SWEEP)
    out = tmp_path / "o"
    with store.lock(out):
        p = _cli(["sweep", str(f), "--out", str(out), "--executor", "inprocess"], subprocess_env)
        _, err = p.communicate(timeout=120)
    assert p.returncode == 2, err
    assert f"PID {os.getpid()}" in err and "--wait" in err
    assert sorted(x.name for x in out.iterdir()) == [store.LOCK_FILE]  # nothing else written


def test_two_concurrent_different_sweeps_one_refused_store_is_one_clean_sweep(tmp_path, subprocess_env):
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(SMALL_SWEEP)
    b.write_text(SMALL_SWEEP.replace('"1bdp"', '"4bdp"'))
    out = tmp_path / "shared"
    procs = {
        name: _cli(["sweep", str(p), "--out", str(out), "--executor", "inprocess"], subprocess_env) for name, p in (("a", a), ("b", b))
    }
    results = {name: (p.wait(timeout=300), p.stderr.read()) for name, p in procs.items()}
    codes = sorted(c for c, _ in results.values())
    assert codes == [0, 2], results
    winner = next(n for n, (c, _) in results.items() if c == 0)
    loser_err = next(e for c, e in results.values() if c == 2)
    assert "PID" in loser_err or "different sweep" in loser_err, loser_err
    clean = tmp_path / "clean"
    p = _cli(["sweep", str(a if winner == "a" else b), "--out", str(clean), "--executor", "inprocess"], subprocess_env)
    assert p.wait(timeout=300) == 0
    got, want = _store_bytes(out), _store_bytes(clean)
    assert sorted(got) == sorted(want)
    assert [k for k in want if got[k] != want[k]] == []


def test_two_concurrent_identical_sweeps_compute_no_run_twice(tmp_path, subprocess_env):
    f = tmp_path / "s.toml"
    f.write_text(SMALL_SWEEP)
    out = tmp_path / "o"
    n = len(load_sweep_file(f).tasks)
    procs = [_cli(["sweep", str(f), "--out", str(out), "--executor", "inprocess", "--wait"], subprocess_env) for _ in range(2)]
    errs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    new = [int(e.split(" new,")[0].rsplit(" ", 1)[-1]) for e in errs]
    assert sorted(new) == [0, n], errs  # one computed every run, the other none
