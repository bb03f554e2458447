"""Sweeps: expansion of the [sweep] table, derived seeds, start-order flipping, bad sweep files.

Pure Python (no simulator): a plan is expanded and validated without running anything.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import pytest
from ccfair.cli import main
from ccfair.errors import SpecError
from ccfair.spec import Spec
from ccfair.spec_input import load_toml
from ccfair.sweep import ORDERS, derive_seed, flip_flows, plan_sweep, run_id_of


@pytest.fixture
def base(s0_dict) -> dict:
    return copy.deepcopy(s0_dict)


def with_sweep(base: dict, sweep: dict) -> dict:
    d = copy.deepcopy(base)
    d["sweep"] = sweep
    return d


def test_grid_size_and_assignments(base):
    plan = plan_sweep(
        with_sweep(
            base,
            {
                "repetitions": 3,
                "flip_order": True,
                "bottleneck.rate": ["10Mbit", "50Mbit"],
                "bottleneck.buffer": ["0.5bdp", "2bdp"],
                "flows.1.cca": ["bbr", "reno"],
            },
        )
    )
    assert plan.n_points == 8
    assert len(plan.tasks) == 8 * 2 * 3
    assert len({t.run_id for t in plan.tasks}) == len(plan.tasks)
    # every (point, order, repetition) exactly once
    keys = {(json.dumps(t.params, sort_keys=True), t.order, t.repetition) for t in plan.tasks}
    assert len(keys) == len(plan.tasks)
    t = next(
        t
        for t in plan.tasks
        if t.params == {"bottleneck.rate": "50Mbit", "bottleneck.buffer": "2bdp", "flows.1.cca": "reno"} and t.order == ORDERS[0]
    )
    assert t.config["bottleneck"]["rate_bps"] == 50_000_000
    assert t.config["flows"][1]["cca"] == "reno"
    assert t.config["seed"] == t.seed
    assert t.run_id == run_id_of(t.config)
    # the buffer is resolved per point: 2 BDP at 50 Mbit/s and 50 ms = 417 packets (docs/experiment-file.md's rule)
    assert t.config["bottleneck"]["qdisc"]["limit_packets"] == 417


def test_nested_and_quoted_axis_keys_are_the_same(base):
    a = plan_sweep(with_sweep(base, {"bottleneck.rate": ["10Mbit", "50Mbit"]}))
    b = plan_sweep(with_sweep(base, {"bottleneck": {"rate": ["10Mbit", "50Mbit"]}}))
    assert [t.run_id for t in a.tasks] == [t.run_id for t in b.tasks]


def test_wildcard_sets_every_flow(base):
    plan = plan_sweep(with_sweep(base, {"flows.*.rtt": ["50ms", "100ms"]}))
    rtts = sorted({tuple(f["rtt_ns"] for f in t.config["flows"]) for t in plan.tasks})
    assert rtts == [(50_000_000, 50_000_000), (100_000_000, 100_000_000)]


def test_zipped_axis_via_table_value(base):
    """A table-valued axis (e.g. a qdisc with parameters) is one value, shown as JSON in the runs table."""
    plan = plan_sweep(with_sweep(base, {"bottleneck.qdisc": ["droptail", {"kind": "droptail"}], "seeds": "independent"}))
    assert [t.params["bottleneck.qdisc"] for t in plan.tasks] == ["droptail", '{"kind":"droptail"}']


def test_pairs_of_set_with_self_pairs(base):
    plan = plan_sweep(with_sweep(base, {"pairs": {"of": ["cubic", "bbr", "cubic+pacing"]}, "flip_order": True}))
    pairs = list(dict.fromkeys(t.params["pair"] for t in plan.tasks))
    assert pairs == [
        "cubic vs cubic",
        "cubic vs bbr",
        "cubic vs cubic+pacing",
        "bbr vs bbr",
        "bbr vs cubic+pacing",
        "cubic+pacing vs cubic+pacing",
    ]
    assert len(plan.tasks) == 6 * 2
    t = next(t for t in plan.tasks if t.params["pair"] == "bbr vs cubic+pacing" and t.order == ORDERS[0])
    f = t.config["flows"]
    assert (f[0]["cca"], f[0]["pacing"], f[1]["cca"], f[1]["pacing"]) == ("bbr", False, "cubic", True)
    distinct = plan_sweep(with_sweep(base, {"pairs": {"of": ["cubic", "bbr", "reno"], "self": False}}))
    assert len(distinct.tasks) == 3


def test_flip_swaps_settings_keeps_start_times(base):
    raw = copy.deepcopy(base)
    raw["flows"][0].update(pacing=True, rwnd=100, start_jitter="10ms")
    flipped = flip_flows(raw)
    a, b = flipped["flows"]
    # position 0 keeps the first start time but now carries B's flow
    assert (a["name"], a["cca"], a["start"], a["start_jitter"]) == ("B", "bbr", "0s", "10ms")
    assert (b["name"], b["cca"], b["start"], b["pacing"], b["rwnd"]) == ("A", "cubic", "5s", True, 100)
    assert "start_jitter" not in b
    # default names are filled in first, so A still names the same flow
    raw2 = copy.deepcopy(base)
    for f in raw2["flows"]:
        del f["name"]
    assert [f["name"] for f in flip_flows(raw2)["flows"]] == ["B", "A"]


def test_flipped_run_starts_b_first_and_keeps_names(base):
    plan = plan_sweep(with_sweep(base, {"flip_order": True}))
    a_first, b_first = plan.tasks
    assert a_first.order == "A first" and b_first.order == "B first"
    fa, fb = a_first.config["flows"], b_first.config["flows"]
    assert [(f["name"], f["cca"], f["start_ns"]) for f in fa] == [("A", "cubic", 0), ("B", "bbr", 5_000_000_000)]
    assert [(f["name"], f["cca"], f["start_ns"]) for f in fb] == [("B", "bbr", 0), ("A", "cubic", 5_000_000_000)]
    assert (b_first.flow_a, b_first.flow_b) == ("A", "B")


def test_seeds_independent_of_axis_order_and_of_other_values(base):
    axes = {"bottleneck.rate": ["10Mbit", "50Mbit"], "bottleneck.buffer": ["0.5bdp", "2bdp"]}
    p1 = plan_sweep(with_sweep(base, {"repetitions": 2, **axes}))
    p2 = plan_sweep(with_sweep(base, {"repetitions": 2, **dict(reversed(list(axes.items())))}))
    key = lambda t: (json.dumps(t.params, sort_keys=True), t.order, t.repetition)  # noqa: E731
    m1 = {key(t): (t.seed, t.run_id) for t in p1.tasks}
    m2 = {key(t): (t.seed, t.run_id) for t in p2.tasks}
    assert m1 == m2
    # extending the grid (a value, a repetition) keeps every existing run
    p3 = plan_sweep(
        with_sweep(base, {"repetitions": 3, "bottleneck.rate": ["10Mbit", "50Mbit", "100Mbit"], "bottleneck.buffer": ["0.5bdp", "2bdp"]})
    )
    m3 = {key(t): (t.seed, t.run_id) for t in p3.tasks}
    assert m1.items() <= m3.items()
    # repetitions and points get distinct seeds; the derivation is a fixed function
    assert len({s for s, _ in m1.values()}) == len(m1)
    assert p1.tasks[0].seed == derive_seed(1, p1.tasks[0].params, "A first", 0)


def test_common_seeds(base):
    plan = plan_sweep(with_sweep(base, {"seeds": "common", "repetitions": 2, "flip_order": True, "bottleneck.rate": ["10Mbit", "50Mbit"]}))
    by_rep = {}
    for t in plan.tasks:
        by_rep.setdefault(t.repetition, set()).add(t.seed)
    assert all(len(s) == 1 for s in by_rep.values())
    assert by_rep[0] != by_rep[1]


def test_base_seed_changes_every_seed(base):
    p1 = plan_sweep(with_sweep(base, {"repetitions": 2}))
    base2 = copy.deepcopy(base)
    base2["seed"] = 2
    p2 = plan_sweep(with_sweep(base2, {"repetitions": 2}))
    assert not {t.seed for t in p1.tasks} & {t.seed for t in p2.tasks}


def test_deterministic(base):
    sweep = {"repetitions": 2, "flip_order": True, "pairs": [["cubic", "bbr"]]}
    a = plan_sweep(with_sweep(base, sweep))
    b = plan_sweep(with_sweep(base, sweep))
    assert [t.payload() for t in a.tasks] == [t.payload() for t in b.tasks]


def test_every_task_validates_as_a_spec(base):
    plan = plan_sweep(with_sweep(base, {"flip_order": True, "pairs": [["cubic", "bbr"]]}))
    for t in plan.tasks:
        assert Spec.from_dict(t.experiment).to_run_config(t.seed) == t.config


# ------------------------------------------------------------------ bad files


@pytest.mark.parametrize(
    ("sweep", "field", "words"),
    [
        ({"bottleneck.rat": ["10Mbit"]}, "sweep.bottleneck.rat", ["unknown parameter path", "'rat'", "rate"]),
        ({"bottlenek.rate": ["10Mbit"]}, "sweep.bottlenek.rate", ["unknown parameter path", "bottleneck"]),
        ({"flows.5.cca": ["reno"]}, "sweep.flows.5.cca", ["2 entries"]),
        ({"flows.x.cca": ["reno"]}, "sweep.flows.x.cca", ["index"]),
        ({"bottleneck.rate": []}, "sweep.bottleneck.rate", ["empty"]),
        ({"bottleneck.rate": "10Mbit"}, "sweep.bottleneck.rate", ["list of values"]),
        ({"repetitions": 0}, "sweep.repetitions", [">= 1", "0"]),
        ({"repetitions": -2}, "sweep.repetitions", [">= 1"]),
        ({"repetitions": 1.5}, "sweep.repetitions", ["integer"]),
        ({"flip_order": "yes"}, "sweep.flip_order", ["true or false"]),
        ({"seeds": "random"}, "sweep.seeds", ["independent, common"]),
        ({"pairs": []}, "sweep.pairs", ["empty"]),
        ({"pairs": {"of": []}}, "sweep.pairs.of", ["empty"]),
        ({"pairs": [["cubic", "bbr", "reno"]]}, "sweep.pairs.0", ["only 2"]),
        ({"seed": [1, 2]}, "sweep.seed", ["repetitions"]),
        ({"bottleneck.rate": ["10Mbit"], "bottleneck": {"rate": ["50Mbit"]}}, "sweep.bottleneck.rate", ["already"]),
    ],
)
def test_bad_sweep_names_the_problem(base, sweep, field, words):
    with pytest.raises(SpecError) as info:
        plan_sweep(with_sweep(base, sweep))
    assert info.value.field == field, str(info.value)
    for w in words:
        assert w in info.value.message, info.value.message


def test_bad_value_names_the_grid_point(base):
    with pytest.raises(SpecError) as info:
        plan_sweep(with_sweep(base, {"bottleneck.rate": ["10Mbit", "10Mbyte"], "flows.1.cca": ["bbr"]}))
    msg = str(info.value)
    assert 'bottleneck.rate = "10Mbyte"' in msg and "bottleneck.rate" in info.value.field
    with pytest.raises(SpecError) as info:
        plan_sweep(with_sweep(base, {"pairs": [["cubic", "vegasx"]]}))
    assert "flows.1.cca" in info.value.field and "vegasx" in info.value.message


def test_no_sweep_table(base):
    with pytest.raises(SpecError) as info:
        plan_sweep(base)
    assert info.value.field == "sweep"


def test_duplicate_runs_refused(base):
    # "droptail" and "fifo" are the same discipline; with common seeds they are the same run
    with pytest.raises(SpecError) as info:
        plan_sweep(with_sweep(base, {"seeds": "common", "bottleneck.qdisc": ["droptail", "fifo"]}))
    assert "same run" in info.value.message


def _write(tmp_path: Path, base: dict, sweep_toml: str) -> Path:
    flows = "\n".join(
        f'[[flows]]\nname = "{f["name"]}"\ncca = "{f["cca"]}"\nrtt = "{f["rtt"]}"\nstart = "{f["start"]}"\n' for f in base["flows"]
    )
    text = (
        f'duration = "{base["duration"]}"\nwindow = {{ start = "10s", end = "45s" }}\n'
        f'[bottleneck]\nrate = "10Mbit"\nbuffer = "0.5bdp"\n\n{flows}\n[sweep]\n{sweep_toml}\n'
    )
    p = tmp_path / "sweep.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    ("sweep_toml", "field"),
    [
        ('"bottleneck.rat" = ["10Mbit"]', "sweep.bottleneck.rat"),
        ('"bottleneck.rate" = []', "sweep.bottleneck.rate"),
        ("repetitions = 0", "sweep.repetitions"),
    ],
)
def test_cli_bad_sweep_exits_2_before_any_run(tmp_path, capsys, base, sweep_toml, field):
    path = _write(tmp_path, base, sweep_toml)
    out = tmp_path / "out"
    code = main(["sweep", str(path), "--out", str(out), "--executor", "inprocess"])
    _, err = capsys.readouterr()
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {field}: "), err
    assert not out.exists()  # nothing was started or created


def test_cli_dry_run_and_set(tmp_path, capsys, base):
    path = _write(tmp_path, base, 'repetitions = 2\nflip_order = true\n"bottleneck.buffer" = ["0.5bdp", "2bdp"]')
    code = main(["sweep", str(path), "--out", str(tmp_path / "o"), "--dry-run", "--set", "sweep.repetitions=5"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "= 20 runs" in err
    assert "bottleneck.buffer: 0.5bdp, 2bdp" in out
    assert not (tmp_path / "o").exists()


def test_run_ignores_sweep_table(tmp_path, capsys, base, fake_sim):
    path = _write(tmp_path, base, '"bottleneck.buffer" = ["0.5bdp", "2bdp"]')
    code = main(["check", str(path)])
    out, _ = capsys.readouterr()
    assert code == 0
    assert json.loads(out)["bottleneck"]["qdisc"]["limit_packets"] == 21


def test_itertools_product_order_is_file_order(base):
    plan = plan_sweep(with_sweep(base, {"bottleneck.rate": ["10Mbit", "50Mbit"], "bottleneck.buffer": ["0.5bdp", "2bdp"]}))
    got = [(t.params["bottleneck.rate"], t.params["bottleneck.buffer"]) for t in plan.tasks]
    assert got == list(itertools.product(["10Mbit", "50Mbit"], ["0.5bdp", "2bdp"]))


def test_mixed_type_values_become_one_text_column(base):
    plan = plan_sweep(with_sweep(base, {"flows.0.rwnd": [100, 200], "bottleneck.buffer": ["21pkt", "2bdp"], "flows.1.start": [0, "5s"]}))
    assert {type(t.params["flows.0.rwnd"]) for t in plan.tasks} == {int}
    assert {t.params["flows.1.start"] for t in plan.tasks} == {"0", "5s"}


def test_spec_from_toml_reads_the_base_experiment_of_a_sweep_file(examples):
    spec = Spec.from_toml(examples / "s0-lab-grid.toml")
    assert [f.label for f in spec.flows] == ["cubic", "bbr"]
    plan = plan_sweep(load_toml(examples / "s0-lab-grid.toml"))
    # S0's lab grid with drop-tail only: 2 rates x 2 RTTs x 2 buffers x 6 pairs x 2 orders x 30 repetitions
    assert len(plan.tasks) == 2 * 2 * 2 * 3 * 6 * 2 * 30


def test_plan_batches_start_with_the_costliest_runs_and_shrink_towards_the_end():
    """Guided self-scheduling: every run exactly once, in descending expected cost (plan order
    among equal costs), batches of at most MAX_BATCH runs that shrink to MIN_BATCH at the end."""
    from ccfair.executors import MAX_BATCH, MIN_BATCH, plan_batches

    payloads = [{"run_id": f"r{i}", "cost": float(i % 5)} for i in range(1000)]
    batches = plan_batches(payloads, jobs=2)
    flat = [p for b in batches for p in b]
    assert sorted(p["run_id"] for p in flat) == sorted(p["run_id"] for p in payloads)
    costs = [p["cost"] for p in flat]
    assert costs == sorted(costs, reverse=True)
    for c in set(costs):  # stable: plan order among runs of equal cost
        ids = [int(p["run_id"][1:]) for p in flat if p["cost"] == c]
        assert ids == sorted(ids)
    sizes = [len(b) for b in batches]
    assert sizes[0] == MAX_BATCH and sizes == sorted(sizes, reverse=True)
    assert sizes[-1] <= MIN_BATCH and min(sizes[:-1]) == MIN_BATCH
    # without costs (e.g. payloads of an older planner) the plan order is kept
    plain = plan_batches([{"run_id": str(i)} for i in range(10)], jobs=2)
    assert [p["run_id"] for b in plain for p in b] == [str(i) for i in range(10)]
