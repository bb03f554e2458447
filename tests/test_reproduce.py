"""`ccfair reproduce` (runs, verdicts, the board, staleness) and the S2/S4 presets' experiment builders.

Sources: the study texts (shared/studies beside the repository) for the
setups; S4 Tables III-VIII for the published numbers the presets print.
"""

from __future__ import annotations

import json
import math
import types
from pathlib import Path

import pytest
from ccfair import claims, reproduce
from ccfair.claims import Measurement
from ccfair.presets import s1, s2, s3, s4
from ccfair.spec import Spec

ROOT = Path(__file__).resolve().parent.parent


def _fake_preset(values: tuple[float, ...]) -> types.ModuleType:
    fake = types.ModuleType("ccfair.presets.s0")
    fake.tasks = lambda quick, seed=1: [{"x": v + seed - 1} for v in values]
    fake.run_task = lambda t: {"x": t["x"]}
    fake.measure = lambda results: {"S0.bbr-monopolizes": Measurement(tuple(r["x"] for r in results))}
    return fake


def test_reproduce_runs_a_preset_through_the_executor_and_judges_with_the_rules(monkeypatch):
    fake = _fake_preset((0.95, 0.9, 0.92, 0.91, 0.93, 0.9))
    monkeypatch.setattr(reproduce, "_module", lambda p: fake if p == "s0" else None)
    rep = reproduce.reproduce(quick=True, executor="inprocess", jobs=1, presets=("s0",))
    e = rep["entries"]["S0.bbr-monopolizes"]
    assert e.verdict == "reproduced" and e.runs == 6 and e.estimate == pytest.approx(5.51 / 6)
    # S0 claims the fake preset does not measure are on the board as not run, with the reason
    assert rep["entries"]["S0.self-fair-cubic"].verdict == "not run"
    assert "do not measure" in rep["entries"]["S0.self-fair-cubic"].note
    board = reproduce.board_json(rep, digest="abc")
    json.dumps(board, allow_nan=False)
    assert board["model_digest"] == "abc" and board["counts"]["reproduced"] == 1
    md = reproduce.markdown(board)
    assert "| S0.bbr-monopolizes |" in md and "## Findings left out" in md


def test_reproduce_passes_the_seed_to_presets_that_take_one(monkeypatch):
    fake = _fake_preset((0.0, 0.0, 0.0))
    monkeypatch.setattr(reproduce, "_module", lambda p: fake if p == "s0" else None)
    rep = reproduce.reproduce(quick=True, executor="inprocess", jobs=1, presets=("s0",), seed=3)
    assert rep["seeded"] == ["s0"] and rep["results"]["s0"] == [{"x": 2.0}] * 3


def test_against_a_board_with_the_opposite_verdict_exits_1(monkeypatch, tmp_path, capsys):
    from ccfair.cli import main

    fake = _fake_preset((0.95, 0.9, 0.92, 0.91, 0.93, 0.9))  # S0.bbr-monopolizes: reproduced
    monkeypatch.setattr(reproduce, "_module", lambda p: fake if p == "s0" else None)
    other = tmp_path / "board.json"
    other.write_text(json.dumps({"claims": [{"id": "S0.bbr-monopolizes", "verdict": "not reproduced"}]}))
    assert main(["reproduce", "--presets", "s0", "--executor", "inprocess", "--against", str(other), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["against"]["opposite"] == [{"id": "S0.bbr-monopolizes", "there": "not reproduced", "here": "reproduced"}]
    other.write_text(json.dumps({"claims": [{"id": "S0.bbr-monopolizes", "verdict": "inconclusive"}]}))
    assert main(["reproduce", "--presets", "s0", "--executor", "inprocess", "--against", str(other), "--json"]) == 0
    other.write_text("not json")
    assert main(["reproduce", "--presets", "s0", "--against", str(other)]) == 2


def test_quick_and_full_boards_contradict_only_on_opposite_verdicts():
    a = {"claims": [{"id": "x", "verdict": "reproduced"}, {"id": "y", "verdict": "inconclusive"}]}
    b = {"claims": [{"id": "x", "verdict": "not reproduced"}, {"id": "y", "verdict": "reproduced"}]}
    assert reproduce.contradictions(a, b) == [("x", "reproduced", "not reproduced")]


def test_list_json_prints_the_registry_without_running(capsys):
    from ccfair.cli import main

    assert main(["reproduce", "--list", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["count"] == len(claims.CLAIMS)
    keys = {"id", "study", "where", "quote", "quantity", "setup", "deviations", "rule", "preset", "backend"}
    assert all(keys <= set(c) for c in d["claims"])


def test_the_board_is_not_stale():
    """docs/reproduction.json was produced by the model in this tree: the digest of the fixed runs matches.
    A model change (code, default, parameter) that moves any digest run fails here until
    `ccfair reproduce --jobs 2 --write-docs` regenerates the board."""
    pytest.importorskip("ccfair._core")
    from ccfair.model_digest import digest

    board = json.loads((ROOT / "docs" / "reproduction.json").read_text())
    assert digest() == board["model_digest"], (
        "the model changed since docs/reproduction.json: re-run `ccfair reproduce --jobs 2 --write-docs`"
    )


def test_a_digest_run_outlasts_bbrs_min_rtt_window_and_its_bbr_flow_enters_probe_rtt():
    """BBR's min_rtt expires after 10 s without a lower sample (tcp_bbr.c `bbr_min_rtt_win_sec`); then
    PROBE_RTT holds cwnd at 4 packets (`bbr_cwnd_min_target`). A digest run must get there, or a
    change to that path (the min_rtt filter, PROBE_RTT) would leave the digest unchanged."""
    pytest.importorskip("ccfair._core")
    from ccfair.api import run
    from ccfair.model_digest import DIGEST_RUNS

    d = next(r for r in DIGEST_RUNS if r["name"] == "bbr-min-rtt-window")
    res = run({**d, "trace": True, "sample": "10ms"})
    tr = res.trace
    bbr = tr[(tr["flow"] == "b") & (tr["time_s"] > 1.0 + 10.0)]
    assert (bbr["cwnd_pkts"] <= 4).any(), "the BBR flow never entered PROBE_RTT after its 10 s min_rtt window"


def test_s2_spec_has_the_three_classes_with_the_blogs_rtts_and_loss_ranges():
    d = s2.spec_dict("bbr", "fq_codel", seed=3, arrivals_s=60)
    spec = Spec.from_dict(d)
    cfg = spec.to_run_config()
    assert cfg["bottleneck"]["rate_bps"] == 50_000_000
    groups = {g["name"]: g for g in d["groups"]}
    client = [g for n, g in groups.items() if n.startswith("client")]
    pop = [g for n, g in groups.items() if n.startswith("pop")]
    assert {g["rtt"] for g in client} == {"50ms"} and {g["rtt"] for g in pop} == {"15ms"}
    # The blog's netem levels are percent: 0.001-0.1 % and 0.0001-0.01 % (tests/test_presets_s12.py).
    assert min(g["loss"] for g in client) == pytest.approx(1e-5) and max(g["loss"] for g in client) == pytest.approx(1e-3)
    assert min(g["loss"] for g in pop) == pytest.approx(1e-6) and max(g["loss"] for g in pop) == pytest.approx(1e-4)
    assert all(g["cca"] == "bbr" for g in d["groups"])
    # Same seed, other CCA: the same arrivals (A/B on identical traffic).
    other = Spec.from_dict(s2.spec_dict("cubic", "fq_codel", seed=3, arrivals_s=60)).to_run_config()["flows"]
    mine = cfg["flows"]
    assert [(f["start_ns"], f["size_bytes"]) for f in other] == [(f["start_ns"], f["size_bytes"]) for f in mine]


def test_s2_group_names_round_trip_class_kind_and_loss():
    name = s2._gname("pop", 0.0001, "3MB")
    cls, kind, loss = name.split("-", 2)
    assert (cls, kind, int(loss[:-3]) / 1e6) == ("pop", "3MB", 0.0001)


def test_s4_pair_spec_is_the_testbed_setting():
    cfg = Spec.from_dict(s4.pair_spec("ccid2", "cubic", 100, 2)).to_run_config()
    assert cfg["bottleneck"]["rate_bps"] == 100_000_000
    # 1 BDP at 100 ms: 100 Mbit/s x 100 ms / 1500 B = 833 packets.
    assert cfg["bottleneck"]["qdisc"]["limit_packets"] == 833
    assert [f["start_ns"] for f in cfg["flows"]] == [0, 30_000_000_000]
    assert {f["start_jitter_ns"] for f in cfg["flows"]} == {100_000_000}  # seeded start jitter: runs differ
    assert (cfg["window_start_ns"], cfg["window_end_ns"], cfg["bin_ns"]) == (60_000_000_000, 300_000_000_000, 1_000_000_000)


def test_s4_fourteen_flow_spec_starts_a_flow_every_30_s_and_analyses_from_420_s():
    ccas = [c for c in s4.CCAS_14 if c != "lp"]  # lp may not be in this build; the schedule does not depend on it
    cfg = Spec.from_dict(s4.many_spec(ccas, 50)).to_run_config()
    assert [f["start_ns"] // 10**9 for f in cfg["flows"]] == [30 * i for i in range(len(ccas))]
    assert cfg["window_start_ns"] == 420 * 10**9 and cfg["duration_ns"] == 900 * 10**9
    assert len(s4.CCAS_14) == 14 and "lp" in s4.CCAS_14


def test_s4_nru_of_a_pair_uses_the_calibration_of_each_flows_position():
    # Calibration: a vs a gives flow 1 10 Mbit/s; b vs b gives flow 2 40 Mbit/s.
    # Pair a vs b: flow 1 5 Mbit/s (-3.01 dB), flow 2 80 Mbit/s (+3.01 dB) -> case B.
    def run(a, b, t1, t2):
        return {"task": {"kind": "pair", "a": a, "b": b, "rtt": 25, "seed": 1}, "tput": [t1, t2], "samples": [[t1] * 3, [t2] * 3], "j": 1.0}

    res = [run("a", "a", 10e6, 10e6), run("b", "b", 40e6, 40e6), run("a", "b", 5e6, 80e6)]
    n = s4.pair_nru(res, "a", "b", 25)
    assert n["U_n"][0] == pytest.approx(10 * math.log10(0.5)) and n["U_n"][1] == pytest.approx(10 * math.log10(2))
    assert n["case"] == "B"


def test_s3_reproduce_tasks_include_mono_and_multi_rtt_runs():
    mixes = {t["mix"] for t in s3.tasks(quick=True)}
    assert mixes == {"dctcp", "bbr2", "multi", "mrtt-dctcp", "mrtt-bbr2", "mix-rtt"}
    assert sum(m[3] for m in s3.MULTI_RTT) == 20  # 2-2-8-8 as S3's Figure 16


def test_cli_preset_s4_rejects_a_bad_option_with_exit_2(capsys):
    from ccfair.cli import main

    assert main(["preset", "s4", "--seeds", "x"]) == 2
    assert main(["reproduce", "--executor", "nope"]) == 2
    assert "--executor" in capsys.readouterr().err
    assert main(["reproduce", "--presets", "s9"]) == 2
    assert "--presets" in capsys.readouterr().err
    assert main(["reproduce", "--quick", "--write-docs"]) == 2
    assert "--write-docs" in capsys.readouterr().err


def test_preset_tasks_give_the_same_results_in_a_process_pool_as_in_process():
    tl = s1.tasks()[:2]
    a = reproduce.run_preset_tasks("s1", tl, executor="pool", jobs=2)
    b = reproduce.run_preset_tasks("s1", tl, executor="inprocess", jobs=1)
    assert [(x["queue"], x["seed"], x["j_measure"], x["j_real"]) for x in a] == [
        (x["queue"], x["seed"], x["j_measure"], x["j_real"]) for x in b
    ]
