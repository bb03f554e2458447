"""'The same study with BBRv3': the BBRv3 column of presets s0 and s2.

The column is ccfair's addition; the checks are that its runs really ran cca bbr3 (as the
simulator recorded each flow's CCA), that they are the study's runs with only BBR(v1)
replaced (same setting and seed), and that the study's own claims are unchanged by it.
"""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import replace

from ccfair.presets import s0, s2


def _json(main, argv: list[str]) -> dict:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(argv) == 0
    return json.loads(buf.getvalue())


def test_s0_bbr3_twin_replaces_only_the_lab_bbr_flow_and_keeps_the_seed() -> None:
    p = s0.Point("lab", "cubic", "bbr", "10Mbit", 50, 0.5, "droptail", "B first", 3)
    t = s0.bbr3_twin(p)
    assert t == replace(p, b="bbr3")
    assert s0.spec_dict(t)["seed"] == s0.spec_dict(p)["seed"]
    assert s0.bbr3_twin(replace(p, b="cubic+pacing")) is None
    # the CP-like cp-bbr profile stands for a CP's deployment: only the lab flow changes
    assert s0.bbr3_twin(s0.Point("lab-cp", "bbr", "cp-bbr", "10Mbit", 50, 0.5, "droptail", "A first", 0)).b == "cp-bbr"
    assert s0.bbr3_twin(s0.Point("cp-cp", "cp-bbr", "cp-bbr", "10Mbit", 50, 0.5, "droptail", "A first", 0)) is None


def test_s0_quick_bbr3_column_runs_bbr3_and_leaves_the_claims_alone() -> None:
    argv = ["--quick", "--scenarios", "lab", "--qdiscs", "droptail", "--buffers", "0.5", "--reps", "1", "--json"]
    with3, without = _json(s0.main, argv), _json(s0.main, [*argv, "--no-bbr3"])
    assert with3["claims"] == without["claims"]
    assert (with3["bbr3_runs"], without["bbr3_runs"]) == (6, 0)  # cubic-bbr, bbr-bbr, bbr-paced x 2 orders
    col = {(d["pair"], d["order"]): d for d in with3["distributions"]}
    assert col[("cubic vs bbr", "A first")]["bbr3_pair"] == "cubic vs bbr3"
    assert col[("cubic vs bbr", "A first")]["bbr3_fness_median"] is not None
    assert col[("cubic vs cubic", "A first")]["bbr3_pair"] is None
    recorded = {(r["pair"], r["cca_a"], r["cca_b"]) for r in with3["bbr3"]["rows"]}
    assert recorded == {("cubic vs bbr3", "cubic", "bbr3"), ("bbr3 vs bbr3", "bbr3", "bbr3"), ("bbr3 vs cubic+pacing", "bbr3", "cubic")}
    assert {v["order"] for v in with3["bbr3"]["vs_cubic"]} == {"A first", "B first"}


def test_s2_bbr3_arm_is_extra_and_not_in_ccfair_reproduce() -> None:
    assert {t["cca"] for t in s2.tasks(quick=True) if t["kind"] == "mix"} == {"cubic", "bbr"}  # ccfair reproduce's runs
    assert {t["cca"] for t in s2.tasks(quick=True, bbr3=True) if t["kind"] == "mix"} == {"cubic", "bbr", "bbr3"}


def test_s2_quick_bbr3_columns_run_bbr3_and_leave_the_claims_alone() -> None:
    argv = ["--seeds", "1", "--arrivals", "60", "--json"]
    with3, without = _json(s2.main, argv), _json(s2.main, [*argv, "--no-bbr3"])
    assert with3["claims"] == without["claims"]
    # 2 qdiscs x (CUBIC, BBR[, BBRv3]) + the explanations' runs (BBR RTT bias, two buffers)
    assert (with3["runs"], without["runs"]) == (9, 7)
    assert with3["bbr3"]["ccas_recorded"] == ["bbr3"]
    for q in s2.QDISCS:
        assert with3["bbr3"]["figures"][q]["bbr3"]["client_mean_ratio"] > 0
    assert without["bbr3"]["figures"] == {}
