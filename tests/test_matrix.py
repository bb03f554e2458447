"""`ccfair matrix`: ordered CCA pairs as a sweep, per-pair shares / max-min shares / harm, heatmaps."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from ccfair import matrix, store
from ccfair.cli import main
from ccfair.errors import SpecError


def test_sweep_dict_has_every_ordered_pair_of_the_ccas() -> None:
    raw = matrix.sweep_dict(matrix.default_setting(), ["cubic", "bbr", "bbrv3"], repetitions=5)
    pairs = raw["sweep"]["pairs"]
    assert len(pairs) == 9
    assert ["bbr", "cubic"] in pairs and ["cubic", "bbr"] in pairs and ["bbr3", "bbr3"] in pairs
    assert raw["sweep"]["repetitions"] == 5
    assert "flip_order" not in raw["sweep"], "ordered pairs already cover both start orders"


def test_default_setting_is_s0s_base_case() -> None:
    raw = matrix.default_setting()
    assert raw["bottleneck"] == {"rate": "10Mbit", "buffer": "0.5bdp", "qdisc": "droptail"}
    assert [f["rtt"] for f in raw["flows"]] == ["50ms", "50ms"]
    assert raw["flows"][1]["start"] == "5s"
    assert raw["window"] == {"start": "10s", "end": "45s"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"cca_names": ["cubic", "nosuchcca"]}, "--ccas"),
        ({"cca_names": ["cubic", "CUBIC"]}, "--ccas"),
        ({"cca_names": []}, "--ccas"),
        ({"cca_names": ["cubic"], "repetitions": 0}, "--repetitions"),
    ],
)
def test_bad_matrix_input_names_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(SpecError) as e:
        matrix.sweep_dict(matrix.default_setting(), **kwargs)
    assert e.value.field == field


def test_a_file_with_its_own_pairs_is_refused() -> None:
    base = dict(matrix.default_setting(), sweep={"pairs": [["cubic", "bbr"]]})
    with pytest.raises(SpecError) as e:
        matrix.sweep_dict(base, ["cubic"])
    assert e.value.field == "sweep.pairs"


def test_matrix_toml_reads_back_as_the_same_sweep() -> None:
    raw = matrix.sweep_dict(matrix.default_setting(), ["cubic", "cubic+pacing"], repetitions=2)
    assert tomllib.loads(matrix.to_toml(raw)) == raw


def _synthetic() -> tuple[pd.DataFrame, pd.DataFrame]:
    # Throughput of flow 0 / flow 1 (Mbit/s) per ordered pair, one run each.
    tp = {("x", "x"): (5, 5), ("x", "y"): (2, 8), ("y", "x"): (6, 4), ("y", "y"): (4, 6)}
    runs, flows = [], []
    for i, ((a, b), (ta, tb)) in enumerate(tp.items()):
        rid = f"r{i}"
        runs.append({"run_id": rid, "pair": f"{a} vs {b}", "jfi": 1.0})
        for pos, t in ((0, ta), (1, tb)):
            flows.append({"run_id": rid, "position": pos, "share": t / 10, "maxmin_share": t / 5, "throughput_bps": t * 1e6})
    return pd.DataFrame(runs), pd.DataFrame(flows)


def test_harm_is_against_the_same_position_in_the_self_pair() -> None:
    s = matrix.summarize(*_synthetic()).set_index(["a", "b"])
    # x as flow 0 gets 5 against x, 2 against y: harm (5 - 2) / 5 = 0.6.
    assert s.loc[("x", "y"), "harm_a"] == pytest.approx(0.6)
    # y as flow 1 gets 6 against y, 8 against x: harm (6 - 8) / 6 < 0 (better off).
    assert s.loc[("x", "y"), "harm_b"] == pytest.approx(-1 / 3)
    assert s.loc[("y", "x"), "harm_a"] == pytest.approx((4 - 6) / 4)
    assert s.loc[("x", "x"), "harm_a"] == 0.0
    assert s.loc[("x", "y"), "share_a"] == pytest.approx(0.2)
    assert s.loc[("x", "y"), "maxmin_a"] == pytest.approx(0.4)


def test_is_matrix_needs_every_ordered_pair() -> None:
    runs, _ = _synthetic()
    assert matrix.is_matrix(runs)
    assert not matrix.is_matrix(runs[runs["pair"] != "y vs x"])
    assert not matrix.is_matrix(runs.drop(columns="pair"))


def test_matrix_command_runs_the_pairs_into_a_sweep_store(tmp_path: Path, capsys) -> None:
    # S0's base case finding: BBR takes nearly all of a 0.5-BDP buffer from CUBIC,
    # whichever starts first; each CCA against itself is near half. One run of a
    # self-pair is one draw of a chaotic outcome (bbr/bbr: 2-3 of 40 seeds outside
    # (0.3, 0.7), mean 0.57), so the shares are means of three repetitions.
    out = tmp_path / "m"
    code = main(["matrix", "--out", str(out), "--ccas", "cubic,bbr", "-r", "3", "-j", "1", "--executor", "inprocess"])
    assert code in (0, None)
    s = pd.read_parquet(out / matrix.SUMMARY_FILE).set_index(["a", "b"])
    assert len(s) == 4
    assert s.loc[("bbr", "cubic"), "share_a"] > 0.8
    assert s.loc[("cubic", "bbr"), "share_b"] > 0.8
    assert s.loc[("cubic", "bbr"), "harm_a"] > 0.5
    for a in ("cubic", "bbr"):
        assert 0.3 < s.loc[(a, a), "share_a"] < 0.7
    assert not math.isnan(s.loc[("cubic", "bbr"), "maxmin_a"])
    assert len(store.load_sweep(out)) == 4 * 3
    assert (out / "figures" / "matrix-share-a.png").exists() and (out / "figures" / "matrix-harm-a.svg").exists()
    assert (out / matrix.MATRIX_FILE).exists()


def test_matrix_command_bad_cca_exits_2(tmp_path: Path, capsys) -> None:
    code = main(["matrix", "--out", str(tmp_path / "m"), "--ccas", "cubic,nosuchcca"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip().startswith("error: --ccas: "), err
