"""ccfair preset s0 (python/ccfair/presets/s0.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from ccfair.presets import s0
from ccfair.spec import Spec


def test_s0_grid_has_the_studys_pairs_orders_and_repetitions() -> None:
    assert len(s0.pairs(["lab"])) == 6  # 3 CCAs, self-pairs included (S0 Fig. 2)
    assert len(s0.pairs(["lab-cp"])) == 6  # CUBIC, BBR x 3 CP-like profiles (S0 Figs. 3-4)
    assert len(s0.pairs(["cp-cp"])) == 6
    pts = s0.grid(s0.SCENARIOS, s0.RATES, s0.RTTS_MS, s0.BUFFERS_BDP, s0.QDISCS, s0.REPETITIONS)
    # 2 rates x 2 RTTs x 2 buffers x 3 qdiscs x 18 pairs x 2 orders x 30 repetitions
    assert len(pts) == 2 * 2 * 2 * 3 * 18 * 2 * 30


def test_s0_timing_and_flipped_order() -> None:
    p = s0.Point("lab-cp", "cubic", "cp-bbr", "10Mbit", 50, 0.5, "droptail", "A first", 0)
    spec = Spec.from_dict(s0.spec_dict(p))
    a, b = spec.flows
    assert (a.name, a.cca, a.start) == ("A", "cubic", 0)
    assert (b.name, b.cca, b.profile, b.start) == ("B", "bbr", "cp-bbr", 5_000_000_000)
    assert (spec.duration, spec.window.start, spec.window.end) == (45_000_000_000, 10_000_000_000, 45_000_000_000)
    assert a.rwnd == b.rwnd == 200
    flipped = Spec.from_dict(s0.spec_dict(p.__class__(**{**p.__dict__, "order": "B first"})))
    fa, fb = flipped.flows
    # B first: the CP-like flow takes the first start time, names stay with the flows
    assert (fa.name, fa.profile, fa.start) == ("B", "cp-bbr", 0)
    assert (fb.name, fb.cca, fb.start) == ("A", "cubic", 5_000_000_000)


def test_iw_only_profiles_run_linux_default_cubic() -> None:
    p = s0.Point("cp-cp", "cdn-iw32", "cdn-iw16", "10Mbit", 50, 0.5, "droptail", "A first", 0)
    a, b = Spec.from_dict(s0.spec_dict(p)).flows
    assert (a.cca, a.init_cwnd, b.cca, b.init_cwnd) == ("cubic", 32, "cubic", 16)


def _fake_results(quick: bool = True) -> list[dict]:
    """Results in task order without simulating: flow B takes 60 % in every run (fness +1/3)."""
    from dataclasses import asdict

    out = []
    for t in s0.tasks(quick):
        p = s0.Point(**t["point"])
        row = s0.Row(
            p.scenario, p.pair, p.a, p.b, p.rate, p.rtt_ms, p.buffer_bdp, p.qdisc, p.order, p.rep, 1, 1 / 3, 0.4, 0.6,
            1.0, 1.0, 0.98, 1.0, 10.0 + p.rep, 10 + p.rep, 5,
        )  # fmt: skip
        out.append(asdict(row))
    return out


def test_measure_covers_every_s0_simulator_claim_with_one_value_per_run() -> None:
    from ccfair.claims import by_study

    ms = s0.measure(_fake_results())
    sim = {c.id for c in by_study("S0") if c.backend == "simulator"}
    assert set(ms) == sim
    # 5 repetitions x 2 start orders per setting (quick)
    assert len(ms["S0.bbr-monopolizes"].values) == 10
    # orientation: B (BBR) takes 60 %, so fness towards BBR is +1/3; towards the first flow it alternates
    assert ms["S0.bbr-monopolizes"].values == pytest.approx([1 / 3] * 10)
    assert sorted(ms["S0.bbr-variance-cubic"].values) == pytest.approx([-1 / 3] * 5 + [1 / 3] * 5)
    assert ms["S0.pacing-vs-cubic"].minus and ms["S0.buffer-inverts"].minus


def test_tasks_take_a_base_seed_and_quick_runs_fewer_repetitions() -> None:
    q, full = s0.tasks(True), s0.tasks(False)
    assert len(full) == len(q) * s0.REPETITIONS // s0.QUICK_REPETITIONS
    assert {t["seed"] for t in s0.tasks(True, seed=3)} == {3}
    p = s0.Point(**q[0]["point"])
    assert s0.spec_dict(p, 1)["seed"] != s0.spec_dict(p, 3)["seed"]


def test_testbed_twins_read_the_stored_runs() -> None:
    from ccfair.claims import by_study

    ms = s0.measure_testbed()
    twins = {c.id for c in by_study("S0") if c.backend == "testbed"}
    assert set(ms) <= twins
    # S0's 14 realism points hold CUBIC vs BBR at 0.5 BDP in both orders, 5 runs each (bench/data)
    assert len(ms["S0.bbr-monopolizes.testbed"].values) == 10
    assert all(-1 <= v <= 1 for v in ms["S0.bbr-monopolizes.testbed"].values)


def test_cli_json_lists_every_claim(tmp_path) -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ccfair",
            "preset",
            "s0",
            "--quick",
            "--reps",
            "1",
            "--qdiscs",
            "droptail,fq_codel",
            "--scenarios",
            "lab",
            "--buffers",
            "0.5,2",
            "--json",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    # lab pairs only: the claims on lab pairs at 0.5 BDP drop-tail are judged
    ids = {c["id"] for c in d["claims"]}
    assert {"S0.bbr-monopolizes", "S0.self-fair-cubic", "S0.pacing-vs-paced"} <= ids
    assert {c["verdict"] for c in d["claims"]} <= {"reproduced", "not reproduced", "inconclusive"}
    assert d["runs"] == 2 * 2 * 6 * 2
    assert all("maxmin_a" in row and "fness" in row for row in d["rows"])
    assert (tmp_path / "runs.csv").is_file() and list(tmp_path.glob("s0-fness-*.png"))


@pytest.mark.parametrize("argv", [["--scenarios", "lab,nope"], ["--backend", "ns3"], ["--buffers", "0"], ["--reps", "0"]])
def test_cli_bad_input_exit_2(argv: list[str]) -> None:
    r = subprocess.run([sys.executable, "-m", "ccfair", "preset", "s0", *argv], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr


def test_notes_name_s0_claims() -> None:
    from ccfair.claims import by_study

    assert set(s0.NOTES) <= {c.id for c in by_study("S0")}
