"""`ccfair fidelity` and its store, on stored testbed runs (tests/data/fidelity; CI never runs the testbed)."""

from __future__ import annotations

import json
import shutil
import signal
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ccfair.cli import main
from ccfair.fidelity import collect as collect_mod
from ccfair.fidelity.points import (
    UTILISATION_TOLERANCE,
    append_run,
    frame_time_s,
    gate_failures,
    load_set,
    read_runs,
    repair_tail,
    runs_by_point,
    select_runs,
    spec_sha,
    stall_limit_s,
    stall_lost_limit_s,
)
from ccfair.spec import Spec

FIXTURE = Path(__file__).parent / "data" / "fidelity"


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_fidelity_json_has_the_kernel_runs_and_as_many_simulator_seeds(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json(capsys, ["fidelity", "--json", "--data", str(FIXTURE)])
    assert [p["id"] for p in out["points"]] == ["cubic/bbr", "reno/cubic"]
    stored = [json.loads(line) for line in (FIXTURE / "kernel" / "tiny.jsonl").read_text().splitlines()]
    for p in out["points"]:
        runs = sorted((r for r in stored if r["point"] == p["id"]), key=lambda r: r["seed"])
        kernel = [r["summary"]["flows"][1]["share"] for r in runs]  # two flows: B is the second
        assert p["kernel_runs"] == p["sim_runs"] == len(runs) == 2
        assert p["kernel_share_b"] == pytest.approx(statistics.fmean(kernel))
        assert p["kernel_share_b_range"] == [min(kernel), max(kernel)]
        assert p["diff"] == pytest.approx(p["sim_share_b"] - p["kernel_share_b"])
        assert p["kernel_utilisation"] == pytest.approx(statistics.fmean(r["summary"]["utilization"] for r in runs))
    reno_cubic = out["points"][1]
    assert reno_cubic["rate"] == 20_000_000 and reno_cubic["rtt"] == 0.05 and reno_cubic["buffer"] == 42
    assert (reno_cubic["cca_a"], reno_cubic["cca_b"], reno_cubic["flows"]) == ("reno", "cubic", 2)
    assert out["mean_abs"] == pytest.approx(statistics.fmean(abs(p["diff"]) for p in out["points"]))
    assert out["worst_abs"] == max(abs(p["diff"]) for p in out["points"])


def test_the_simulator_side_is_seeds_one_to_n_of_the_point(capsys: pytest.CaptureFixture[str]) -> None:
    import ccfair

    out = _json(capsys, ["fidelity", "--json", "--data", str(FIXTURE), "--set", "tiny"])
    point = load_set("tiny", FIXTURE).points[0]
    shares = [ccfair.run(Spec.from_dict(point.raw()), seed=s).summary["flows"][1]["share"] for s in (1, 2)]
    assert out["points"][0]["sim_share_b_runs"] == shares


def test_a_line_cut_by_a_kill_is_ignored_and_cut_before_the_next_append(tmp_path: Path) -> None:
    f = tmp_path / "k.jsonl"
    append_run(f, {"point": "x", "seed": 1})
    with f.open("a") as fh:
        fh.write('{"point": "x", "se')  # the writer died here
    assert read_runs(f) == [{"point": "x", "seed": 1}]
    repair_tail(f)
    append_run(f, {"point": "x", "seed": 2})
    assert read_runs(f) == [{"point": "x", "seed": 1}, {"point": "x", "seed": 2}]


def test_collect_runs_only_what_is_missing_and_appends_a_line_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "fid"
    shutil.copytree(FIXTURE, data)
    (data / "points" / "tiny.toml").write_text(
        (FIXTURE / "points" / "tiny.toml").read_text().replace('base = "../../../../', f'base = "{FIXTURE.parents[2]}/')
    )
    ps = load_set("tiny", data)
    assert collect_mod.pending(ps, 2) == []
    assert [(p.id, s) for p, s in collect_mod.pending(ps, 3)] == [("cubic/bbr", 3), ("reno/cubic", 3)]
    stored = read_runs(ps.kernel_path)

    def fake_run(point, seed):  # the testbed stands in: a stored run of the point under a new seed
        rec = dict(next(r for r in stored if r["point"] == point.id))
        return {**rec, "seed": seed}

    monkeypatch.setattr(collect_mod, "run_one", fake_run)
    assert collect_mod.collect(ps, 3, 2, lambda line: None) == (2, 0)
    assert len(read_runs(ps.kernel_path)) == 6
    assert collect_mod.collect(ps, 3, 2, lambda line: None) == (0, 0)  # resumed: nothing left


def test_an_interrupted_collect_stores_the_run_under_way_and_starts_no_new_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import _thread

    ps = load_set("tiny", _tiny(tmp_path))
    stored = read_runs(ps.kernel_path)
    started: list[int] = []

    def fake_run(point, seed):  # Ctrl-C reaches the collector (its main thread) while the first run is under way
        started.append(seed)
        if len(started) == 1:
            _thread.interrupt_main()
            time.sleep(0.2)
        return {**dict(next(r for r in stored if r["point"] == point.id)), "seed": seed}

    monkeypatch.setattr(collect_mod, "run_one", fake_run)
    lines: list[str] = []
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, whatever ran before
    try:
        with pytest.raises(KeyboardInterrupt):
            collect_mod.collect(ps, 5, 1, lines.append)  # six runs to do, one at a time
    finally:
        signal.signal(signal.SIGINT, previous)
    assert started == [3]
    assert len(read_runs(ps.kernel_path)) == len(stored) + 1
    assert any("interrupted" in line and "resumes" in line for line in lines)


def test_runs_of_an_edited_point_are_not_used(tmp_path: Path) -> None:
    data = tmp_path / "fid"
    shutil.copytree(FIXTURE, data)
    toml = data / "points" / "tiny.toml"
    toml.write_text(
        toml.read_text()
        .replace('base = "../../../../', f'base = "{FIXTURE.parents[2]}/')
        .replace('"bottleneck.rate=20Mbit"', '"bottleneck.rate=30Mbit"')
    )
    runs, stale = runs_by_point(load_set("tiny", data))
    assert (len(runs["cubic/bbr"]), len(runs["reno/cubic"]), stale) == (2, 0, 2)
    assert spec_sha({"a": 1}) != spec_sha({"a": 2})


def test_runs_of_an_edited_bpf_port_are_not_used_and_runs_before_ports_were_recorded_are(tmp_path: Path) -> None:
    # A run records the digests of the BPF ports it ran (bpfcc.source_digest), folded into its
    # spec_sha; it counts while they are the ports' current sources.
    from ccfair.testbed import bpfcc

    data = tmp_path / "fid"
    shutil.copytree(FIXTURE, data)
    toml = data / "points" / "tiny.toml"
    toml.write_text(toml.read_text().replace('base = "../../../../', f'base = "{FIXTURE.parents[2]}/'))
    path = data / "kernel" / "tiny.jsonl"
    ps = load_set("tiny", data)
    before, _ = runs_by_point(ps)
    point = ps.points[0]
    raw, base = point.raw(), before[point.id][0]
    assert "bpf_ports" not in base
    now = {"lp": bpfcc.source_digest("lp")}
    assert now["lp"] is not None and spec_sha(raw, now) != spec_sha(raw) and spec_sha(raw, {}) == spec_sha(raw)
    for seed, ports in ((99, now), (98, {"lp": "0" * 16})):
        append_run(path, {**base, "seed": seed, "bpf_ports": ports, "spec_sha": spec_sha(raw, ports)})
    counted, _ = runs_by_point(load_set("tiny", data))
    seeds = [r["seed"] for r in counted[point.id]]
    assert 99 in seeds and 98 not in seeds, "the run of the current port counts, the edited port's does not"
    assert len(seeds) == len(before[point.id]) + 1, "runs without bpf_ports still count"


def test_a_bad_set_file_names_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "points").mkdir()
    (tmp_path / "points" / "bad.toml").write_text('base = "x.toml"\nrnus = 3\n')
    assert main(["fidelity", "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "rnus" in err and "unknown key" in err and "Traceback" not in err
    assert main(["fidelity", "--data", str(tmp_path), "--set", "nope"]) == 2
    assert "no set 'nope'" in capsys.readouterr().err


def test_without_set_the_comparison_and_collect_take_the_reference_map_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ccfair.fidelity.compare import load_sets

    data = tmp_path / "fidelity"
    (data / "points").mkdir(parents=True)
    base = (Path(__file__).parent.parent / "examples" / "s0-cubic-vs-bbr.toml").resolve()
    old = f'base = "{base}"\nmap = false\n[[points]]\nid = "superseded"\nset = []\n'
    (data / "points" / "old.toml").write_text(old)
    (data / "points" / "tiny.toml").write_text(old.replace("map = false\n", ""))
    assert [ps.name for ps in load_sets(None, data)] == ["tiny"]
    assert [ps.name for ps in load_sets(["old"], data)] == ["old"]
    assert [ps.name for ps in load_sets(["old", "tiny"], data)] == ["old", "tiny"]
    (data / "points" / "old.toml").write_text(old.replace("map = false", 'map = "no"'))
    assert main(["fidelity", "--data", str(data), "--set", "old"]) == 2
    err = capsys.readouterr().err
    assert "old.toml: map" in err and "true or false" in err and "Traceback" not in err


def test_html_has_the_heatmap_and_a_row_per_point(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "f.html"
    assert main(["fidelity", "--data", str(FIXTURE), "--html", str(page)]) == 0
    text = page.read_text()
    assert "data:image/png;base64," in text
    assert text.count("<tr><td>tiny</td>") == 2
    assert "2 points: mean |diff|" in capsys.readouterr().out


def test_a_second_collector_of_the_same_set_is_refused(tmp_path: Path) -> None:
    from ccfair.errors import SpecError

    data = tmp_path / "fid"
    shutil.copytree(FIXTURE, data)
    (data / "points" / "tiny.toml").write_text(
        (FIXTURE / "points" / "tiny.toml").read_text().replace('base = "../../../../', f'base = "{FIXTURE.parents[2]}/')
    )
    ps = load_set("tiny", data)
    with collect_mod.set_lock(ps):
        with pytest.raises(SpecError, match="being collected by PID"):
            collect_mod.collect(ps, 3, 1, lambda line: None)


def test_the_simulator_flows_start_when_the_kernel_runs_flows_really_started(tmp_path: Path) -> None:
    import ccfair
    from ccfair.fidelity.compare import compare

    data = tmp_path / "fid"
    shutil.copytree(FIXTURE, data)
    (data / "points" / "tiny.toml").write_text(
        (FIXTURE / "points" / "tiny.toml").read_text().replace('base = "../../../../', f'base = "{FIXTURE.parents[2]}/')
    )
    lines = [json.loads(line) for line in (data / "kernel" / "tiny.jsonl").read_text().splitlines()]
    for r in lines:
        r["flow_start_s"] = [0.5, 2.25]  # as a loaded host starts the agents: late
    (data / "kernel" / "tiny.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    ps = load_set("tiny", data)
    late = compare([ps])["points"][0]
    as_spec = compare([ps], measured_starts=False)["points"][0]
    spec = Spec.from_dict(ps.points[0].raw()).with_overrides(["flows.0.start=500ms", "flows.1.start=2250ms"])
    assert late["sim_share_b_runs"] == [ccfair.run(spec, seed=s).summary["flows"][1]["share"] for s in (1, 2)]
    assert late["sim_share_b_runs"] != as_spec["sim_share_b_runs"]


def test_the_simulator_reads_the_kernel_runs_recorded_tcp_timestamp_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A testbed run records its hosts' TCP timestamp clock at time zero (CLOCK_MONOTONIC, which
    # Linux's tcp_clock_ns reads: ts_epoch_ns); the simulator's hosts then read the same clock
    # (RunConfig tcp_timestamp_epoch_ns); runs stored without it draw one from the seed.
    import ccfair.api
    from ccfair.fidelity.compare import compare

    data = _tiny(tmp_path)
    lines = [json.loads(line) for line in (data / "kernel" / "tiny.jsonl").read_text().splitlines()]
    lines[0]["ts_epoch_ns"] = 59_059_023_581_346
    (data / "kernel" / "tiny.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    seen: dict[int, Any] = {}
    real = ccfair.api.simulate

    def spy(config: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        seen[config["seed"]] = config.get("tcp_timestamp_epoch_ns")
        return real(config, *args, **kwargs)

    monkeypatch.setattr(ccfair.api, "simulate", spy)
    compare([load_set("tiny", data)])
    by_seed = {r["seed"]: r.get("ts_epoch_ns") for r in lines if r["point"] == lines[0]["point"]}
    assert {s: seen[s] for s in by_seed} == by_seed and 59_059_023_581_346 in seen.values()


def test_each_simulator_run_replays_its_kernel_runs_recorded_stalls_as_the_bottlenecks_outages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A testbed run records its bottleneck's stalls ([end, lost] ns after t0, shaper.rs Stats::stalls);
    # the simulator run paired with it gets them as the outages [start, duration] = [end, lost] on the
    # same time origin as the measured flow starts; runs without the record run as the spec says.
    import ccfair.api

    data = _tiny(tmp_path)
    lines = [json.loads(line) for line in (data / "kernel" / "tiny.jsonl").read_text().splitlines()]
    stalls = [[1_200_345_678, 4_000_000], [2_500_000_000, 350_000]]
    lines[0].setdefault("summary", {}).setdefault("testbed", {}).setdefault("bottleneck", {})["stalls"] = stalls
    (data / "kernel" / "tiny.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    seen: list[tuple[int, Any]] = []
    real = ccfair.api.simulate

    def spy(config: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        seen.append((config["seed"], config["bottleneck"].get("outages_ns")))
        return real(config, *args, **kwargs)

    monkeypatch.setattr(ccfair.api, "simulate", spy)
    out = _json(capsys, ["fidelity", "--json", "--data", str(data), "--set", "tiny"])
    replayed = [(seed, o) for seed, o in seen if o is not None]
    assert replayed == [(lines[0]["seed"], stalls)]
    counts = {p["id"]: p["sim_runs_replaying_stalls"] for p in out["points"]}
    assert counts == {lines[0]["point"]: 1, **{p: 0 for p in counts if p != lines[0]["point"]}}
    assert out["sim_runs_replaying_stalls"] == 1
    seen.clear()
    off = _json(capsys, ["fidelity", "--json", "--data", str(data), "--set", "tiny", "--no-replay-stalls"])
    assert all(o is None for _, o in seen) and off["sim_runs_replaying_stalls"] == 0


def _tiny(tmp_path: Path) -> Path:
    data = tmp_path / "fid"
    shutil.copytree(FIXTURE, data)
    (data / "points" / "tiny.toml").write_text(
        (FIXTURE / "points" / "tiny.toml").read_text().replace('base = "../../../../', f'base = "{FIXTURE.parents[2]}/')
    )
    return data


def test_a_run_passes_the_gate_only_with_its_host_facts_within_the_testbed_limits(tmp_path: Path) -> None:
    """The campaigns' limits (testbed/quality.py: p99 lateness <= one frame time, load <= 10 per CPU)
    plus every flow started at most 0.5 s late; a run that did not record a fact fails."""
    ps = load_set("tiny", _tiny(tmp_path))
    point = ps.points[0]
    spec = point.spec()  # flow A at 0 s, B at 1 s, 10 Mbit/s: one frame is 1211 us
    rec = dict(read_runs(ps.kernel_path)[1])
    assert rec["point"] == point.id
    good = {**rec, "flow_start_s": [0.01, 1.2], "host": {**rec["host"], "cpus": 2}}
    assert gate_failures(spec, good) == []
    assert gate_failures(spec, {**good, "flow_start_s": [0.0, 1.6]}) == ["a flow started 0.60 s late > 0.5 s"]
    assert gate_failures(spec, {**good, "flow_start_s": None}) == ["flow starts not recorded"]
    loaded = {**good, "host": {**good["host"], "load_after": [25.0, 20.0, 10.0]}}
    assert gate_failures(spec, loaded) == ["host load 12.5 per CPU > 10"]
    late = {**good, "host": {**good["host"], "bottleneck_late_p99_us": 1300}}
    assert gate_failures(spec, late)[0].startswith("bottleneck late p99 1300 us > 1 frame time (1211 us)")


def test_a_run_whose_bottleneck_stalled_for_more_than_a_tenth_of_the_utilisation_tolerance_fails_the_gate(tmp_path: Path) -> None:
    """A stall of s on a backlogged link loses s minus the one-frame token bucket of service: the
    longest stall that keeps the lost service within UTILISATION_TOLERANCE / 10 of the window."""
    ps = load_set("tiny", _tiny(tmp_path))
    point = ps.points[0]
    spec = point.spec()  # window 3-8 s, 10 Mbit/s: a 1514-byte frame is 1211.2 us
    assert frame_time_s(spec) == pytest.approx(1514 * 8 / 10e6)
    limit = stall_limit_s(spec)
    window_s = 5.0
    assert (limit - frame_time_s(spec)) / window_s == pytest.approx(UTILISATION_TOLERANCE / 10)
    assert limit == pytest.approx(6.2112e-3)
    rec = dict(read_runs(ps.kernel_path)[1])
    good = {**rec, "flow_start_s": [0.01, 1.2], "host": {**rec["host"], "cpus": 2}}

    def stalled(ns: int | None) -> dict[str, Any]:
        return {**good, "host": {**good["host"], "bottleneck_late_max_ns": ns}}

    assert gate_failures(spec, stalled(6_211_000)) == []
    assert gate_failures(spec, stalled(6_212_000)) == ["bottleneck stalled 6.2 ms > 6.2 ms"]
    assert gate_failures(spec, stalled(40_000_000)) == ["bottleneck stalled 40.0 ms > 6.2 ms"]
    assert gate_failures(spec, stalled(None)) == ["no host facts"]


def test_a_run_whose_bottleneck_stalls_lost_more_service_than_a_tenth_of_the_utilisation_tolerance_fails_the_gate(
    tmp_path: Path,
) -> None:
    """Many short stalls each under the longest-stall limit still cost the window their sum: a run
    that records the service its stalls lost is held to UTILISATION_TOLERANCE / 10 of its window."""
    ps = load_set("tiny", _tiny(tmp_path))
    spec = ps.points[0].spec()  # window 3-8 s: 5 ms of service may be lost
    assert stall_lost_limit_s(spec) == pytest.approx(UTILISATION_TOLERANCE / 10 * 5.0)
    rec = dict(read_runs(ps.kernel_path)[1])
    good = {**rec, "flow_start_s": [0.01, 1.2], "host": {**rec["host"], "cpus": 2}}

    def lost(ns: int) -> dict[str, Any]:
        summary = {**good["summary"], "testbed": {"bottleneck": {"stall_lost_ns": ns}}}
        return {**good, "summary": summary}

    assert gate_failures(spec, good) == []
    assert gate_failures(spec, lost(5_000_000)) == []
    assert gate_failures(spec, lost(5_001_000)) == ["bottleneck stalls lost 5.0 ms > 5.0 ms"]


def test_a_point_uses_its_gated_runs_when_it_has_enough_else_all(tmp_path: Path) -> None:
    ps = load_set("tiny", _tiny(tmp_path))
    point = ps.points[0]
    runs = [r for r in read_runs(ps.kernel_path) if r["point"] == point.id]  # seeds 1, 2: no start times
    assert select_runs(point, runs, 2) == runs
    fresh = [{**r, "seed": r["seed"] + 2, "flow_start_s": [0.0, 1.0], "host": {**r["host"], "cpus": 2}} for r in runs]
    assert [r["seed"] for r in select_runs(point, runs + fresh, 2)] == [3, 4]
    assert [r["seed"] for r in select_runs(point, runs + fresh[:1], 2)] == [1, 2, 3]


def test_gated_collect_adds_new_seeds_until_enough_runs_pass(tmp_path: Path) -> None:
    ps = load_set("tiny", _tiny(tmp_path))
    # no stored run records its flow starts: each point needs 2 new seeds after its highest
    assert sorted((p.id, s) for p, s in collect_mod.pending(ps, 2, gated=True)) == [
        ("cubic/bbr", 3),
        ("cubic/bbr", 4),
        ("reno/cubic", 3),
        ("reno/cubic", 4),
    ]


def _gated_fake(ps, passes: Callable[[int], bool], started: list[tuple[str, int]]):
    """A stand-in testbed: a stored run of the point under a new seed, passing the gate when ``passes(seed)``."""
    stored = read_runs(ps.kernel_path)

    def fake_run(point, seed):
        started.append((point.id, seed))
        rec = dict(next(r for r in stored if r["point"] == point.id))
        starts = [0.01, 1.2] if passes(seed) else None
        return {**rec, "seed": seed, "flow_start_s": starts, "host": {**rec["host"], "cpus": 2}}

    return fake_run


def test_gated_collect_passes_again_until_every_point_has_its_runs_that_pass_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ps = load_set("tiny", _tiny(tmp_path))
    started: list[tuple[str, int]] = []
    monkeypatch.setattr(collect_mod, "run_one", _gated_fake(ps, lambda seed: seed != 4, started))
    lines: list[str] = []
    assert collect_mod.collect(ps, 2, 1, lines.append, gated=True) == (6, 0)  # seeds 3, 4; then 5 for the failed 4
    assert sorted(started) == [
        ("cubic/bbr", 3),
        ("cubic/bbr", 4),
        ("cubic/bbr", 5),
        ("reno/cubic", 3),
        ("reno/cubic", 4),
        ("reno/cubic", 5),
    ]
    assert collect_mod.pending(ps, 2, gated=True) == []
    assert any("another pass" in line for line in lines)


def test_gated_collect_stops_when_a_pass_adds_no_run_that_passes_the_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ps = load_set("tiny", _tiny(tmp_path))
    started: list[tuple[str, int]] = []
    monkeypatch.setattr(collect_mod, "run_one", _gated_fake(ps, lambda seed: False, started))
    lines: list[str] = []
    assert collect_mod.collect(ps, 2, 1, lines.append, gated=True) == (4, 0)
    assert len(started) == 4
    assert any("no run of that pass passed the gate" in line and "4 still missing" in line for line in lines)


def test_the_simulators_spread_is_the_mean_range_of_sets_of_as_many_runs_as_the_kernel_has() -> None:
    """The range grows with the sample: K simulator runs per kernel run form K sets of n runs
    (run-major order), and the spread is their mean range, not the range of all K n runs."""
    from ccfair.fidelity.compare import mean_range

    runs = [0.1, 0.5, 0.2, 0.5, 0.4, 0.5]  # kernel runs 1-3, two simulator seeds each
    assert mean_range(runs, 2) == pytest.approx((0.3 + 0.0) / 2)
    assert mean_range(runs, 1) == pytest.approx(0.4)
    with pytest.raises(ValueError, match="do not form 4 equal sets"):
        mean_range(runs, 4)


def test_outside_counts_points_beyond_the_utilisation_and_queue_tolerances() -> None:
    from ccfair.fidelity.compare import outside

    def pt(i: str, ku: float, su: float, kq: float, sq: float) -> dict[str, Any]:
        return {"id": i, "kernel_utilisation": ku, "sim_utilisation": su, "kernel_queue_packets": kq, "sim_queue_packets": sq}

    pts = [pt("a", 0.985, 1.0, 10.0, 10.5), pt("b", 0.995, 1.0, 10.0, 11.5), pt("c", 0.99, 0.99, 0.0, 3.0)]
    assert outside(pts) == (["a"], ["b"])


def _little_queue_packets(summary: dict[str, Any], frame_s: float) -> float:
    """Little's law on the bottleneck: frames per second x time each spends there (its wait, then one
    frame time on the link; a saturated link, so every frame takes its frame time)."""
    frames_per_s = summary["utilization"] / frame_s
    return frames_per_s * (summary["queue_delay_ms"]["mean"] / 1e3 + frame_s)


def test_the_sampled_mean_queue_is_littles_time_average_on_both_sides_even_with_the_rtt_a_multiple_of_the_sample_interval(
    tmp_path: Path,
) -> None:
    """The comparison's mean queue (samples every `sample`, 10 ms) against Little's law from the
    per-packet sojourn times, which samples nothing: a grid locked to the RTT (10 ms) would bias it."""
    import ccfair
    from ccfair.fidelity.points import frame_time_s

    ps = load_set("tiny", _tiny(tmp_path))
    for rec in read_runs(ps.kernel_path):  # the testbed's runs
        spec = next(p for p in ps.points if p.id == rec["point"]).spec()
        s = rec["summary"]
        assert s["queue_packets_mean"] == pytest.approx(_little_queue_packets(s, frame_time_s(spec)), rel=0.03)
    spec = Spec.from_dict(
        {
            **ps.points[1].raw(),
            "bottleneck": {"rate": "10Mbit", "buffer": "2bdp"},
            "flows": [
                {"name": "A", "cca": "reno", "rtt": "10ms", "start": "0s"},
                {"name": "B", "cca": "reno", "rtt": "10ms", "start": "1s"},
            ],
        }
    )
    s = ccfair.run(spec, seed=1).summary
    assert s["utilization"] > 0.99
    assert s["queue_packets_mean"] == pytest.approx(_little_queue_packets(s, frame_time_s(spec)), rel=0.03)
