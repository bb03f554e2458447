"""A link's outages (``bottleneck.outages``, a rate link's ``outages``): the experiment field, its
checks (crates/ccfair-sim/src/outages.rs, through the simulator's validation), the RunConfig, the
testbed's bottleneck configuration and the kernel bottleneck's refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ccfair
import pytest
from ccfair.cli import main
from ccfair.errors import SpecError
from ccfair.spec import Spec


def _spec(outages: Any, **bottleneck: Any) -> Spec:
    return Spec.from_dict(
        {
            "duration": "3s",
            "bottleneck": {"rate": "10Mbit", "outages": outages, **bottleneck},
            "flows": [{"cca": "cubic", "rtt": "20ms"}],
        }
    )


def test_outages_are_start_and_duration_pairs_in_any_time_unit_and_reach_the_simulator_in_ns() -> None:
    spec = _spec([["1s", "3ms"], ["1.5s", "250us"], ["2000000000ns", "1ms"]])
    assert spec.to_run_config()["bottleneck"]["outages_ns"] == [
        [1_000_000_000, 3_000_000],
        [1_500_000_000, 250_000],
        [2_000_000_000, 1_000_000],
    ]
    # printed back in human units, so that a dumped spec reads back the same
    assert spec.model_dump(mode="json")["bottleneck"]["outages"][0] == ["1s", "3ms"]
    assert Spec.from_dict(spec.model_dump(mode="json")).to_run_config() == spec.to_run_config()


def test_a_bottleneck_without_outages_gives_the_run_config_it_always_gave() -> None:
    spec = _spec([])
    assert "outages_ns" not in spec.to_run_config()["bottleneck"]


@pytest.mark.parametrize(
    ("outages", "field", "says"),
    [
        ([["1s", "3ms"], ["0.5s", "1ms"]], "bottleneck.outages.1", "in time order"),
        ([["1s", "3ms"], ["1.002s", "1ms"]], "bottleneck.outages.1", "must not overlap"),
        ([["1s", "0ms"]], "bottleneck.outages.0", "must be > 0"),
        ([["1s", "3kg"]], "bottleneck.outages.0", "unknown time unit"),
        ([["-1s", "3ms"]], "bottleneck.outages.0", "must be >= 0"),
        (["1s"], "bottleneck.outages.0", "expected [start, duration]"),
        ([["1s", "3ms", "5ms"]], "bottleneck.outages.0", "expected [start, duration]"),
    ],
)
def test_bad_outages_are_one_error_naming_the_entry_and_what_is_allowed(outages: Any, field: str, says: str) -> None:
    with pytest.raises(SpecError) as e:
        _spec(outages)
    assert e.value.field == field and says in e.value.message


def test_the_cli_refuses_overlapping_outages_with_exit_2_naming_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "x.toml"
    f.write_text(
        'duration = "3s"\n[bottleneck]\nrate = "10Mbit"\noutages = [["1s", "5ms"], ["1s", "1ms"]]\n[[flows]]\ncca = "cubic"\nrtt = "20ms"\n'
    )
    assert main(["check", str(f)]) == 2
    assert capsys.readouterr().err.startswith("error: bottleneck.outages.1: ")


def test_an_outage_costs_a_backlogged_bottleneck_its_length_of_service() -> None:
    # Conservation (outages.rs): CUBIC into a 3 000-packet queue keeps the link backlogged from its
    # first second on; 30 ms of outage at 2 s cost the 4 s run 30 ms of the link's service, to
    # within one frame time (1514 B at 10 Mbit/s: the outage's phase against the frames).
    base = {
        "duration": "4s",
        "bottleneck": {"rate": "10Mbit", "buffer": "3000pkt"},
        "flows": [{"cca": "cubic", "rtt": "20ms", "rwnd": 100_000}],
    }
    plain = ccfair.run(Spec.from_dict(base)).summary["utilization"]
    out = ccfair.run(Spec.from_dict({**base, "bottleneck": {**base["bottleneck"], "outages": [["2s", "30ms"]]}})).summary["utilization"]
    assert plain - out == pytest.approx(0.030 / 4, abs=1514 * 8 / 10e6 / 4)


def test_a_trace_link_refuses_outages_naming_the_field(tmp_path: Path) -> None:
    trace = tmp_path / "t.trace"
    trace.write_text("1\n2\n")
    with pytest.raises(SpecError) as e:
        Spec.from_dict(
            {
                "duration": "3s",
                "links": [{"name": "a", "trace": str(trace), "outages": [["1s", "1ms"]]}],
                "flows": [{"cca": "cubic", "rtt": "20ms"}],
            }
        )
    assert e.value.field == "links.0.outages"


def test_a_rate_links_outages_reach_its_run_config() -> None:
    spec = Spec.from_dict(
        {
            "duration": "3s",
            "links": [{"name": "a", "rate": "10Mbit", "outages": [["1s", "1ms"]]}],
            "flows": [{"cca": "cubic", "rtt": "20ms"}],
        }
    )
    assert spec.to_run_config()["links"][0]["outages_ns"] == [[1_000_000_000, 1_000_000]]


def test_the_kernel_bottleneck_refuses_outages_naming_the_field() -> None:
    from ccfair.testbed import runner

    with pytest.raises(SpecError) as e:
        runner.check_available(_spec([["1s", "1ms"]]).with_overrides(["testbed.bottleneck=kernel"]))
    assert e.value.field == "bottleneck.outages" and "allowed with outages" in e.value.message


def test_the_userspace_bottleneck_is_given_the_dumbbells_outages() -> None:
    from ccfair.testbed import runner

    spec = _spec([["1s", "1ms"]])
    r = runner._Run.__new__(runner._Run)
    r.spec, r.config = spec, spec.to_run_config()
    r.flows = r.config["flows"]
    assert r.link_config([0])["outages_ns"] == [[1_000_000_000, 1_000_000]]
    plain = _spec([])
    r.spec, r.config = plain, plain.to_run_config()
    assert "outages_ns" not in r.link_config([0])
