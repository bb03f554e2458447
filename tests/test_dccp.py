"""DCCP / CCID 2 as a transport: naming, validation and one short run."""

from __future__ import annotations

import ccfair
import pytest
from ccfair import ccas
from ccfair.errors import SpecError
from ccfair.spec import Spec


def _spec(**flow: object) -> dict:
    return {
        "duration": "8s",
        "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
        "flows": [{"rtt": "50ms", **flow}],
    }


@pytest.mark.parametrize("written", ["ccid2", "CCID2", "dccp", "ccid-2"])
def test_ccid2_names_select_the_dccp_transport(written: str) -> None:
    spec = Spec.from_dict(_spec(cca=written))
    f = spec.to_run_config()["flows"][0]
    assert (f["cca"], f["transport"]) == ("ccid2", "dccp")
    assert Spec.from_dict(_spec(cca="cubic")).to_run_config()["flows"][0]["transport"] == "tcp"


def test_ccid2_is_listed_with_its_rfc() -> None:
    src = dict(ccas.catalogue())
    assert "RFC 4341" in src["ccid2"]


@pytest.mark.parametrize(
    ("flow", "field", "text"),
    [
        ({"cca": "cubic", "transport": "dccp"}, "flows.0.cca", "ccid2"),
        ({"cca": "ccid2", "transport": "tcp"}, "flows.0.transport", "dccp"),
        ({"cca": "ccid2", "pacing": True}, "flows.0.pacing", "dccp"),
        ({"cca": "ccid2+pacing"}, "flows.0.pacing", "dccp"),
        ({"cca": "ccid2", "rate_cap": "1Mbit"}, "flows.0.rate_cap", "dccp"),
        ({"cca": "ccid2", "ecn": "classic"}, "flows.0.ecn", "off"),
        ({"cca": "ccid2", "transport": "quic"}, "flows.0.transport", "dccp"),
    ],
)
def test_bad_dccp_options_name_the_field(flow: dict, field: str, text: str) -> None:
    with pytest.raises(SpecError) as e:
        Spec.from_dict(_spec(**flow))
    assert e.value.field == field
    assert text in e.value.message


def test_ccid2_run_delivers_without_retransmissions() -> None:
    res = ccfair.run(Spec.from_dict(_spec(cca="ccid2", transport="dccp")))
    f = res.summary["flows"][0]
    assert f["cca"] == "ccid2"
    assert f["retransmissions"] == 0
    # Slow start from 10 packets then congestion avoidance on a 10 Mbit/s link.
    assert f["throughput_bps"] > 8e6
