"""Queue-discipline capabilities come from the simulator's registry (Rust ``qdisc::Capabilities``),
never from a discipline's name: each is checked here against what every registered discipline does."""

from __future__ import annotations

import ccfair
from ccfair import qdiscs
from ccfair.spec import Spec

#: The experiment-file settings a discipline has no default for.
_REQUIRED = {"step": {"threshold": "10pkt"}}


def _spec(kind: str, **extra) -> Spec:
    q = {"kind": kind, **_REQUIRED.get(kind, {}), **extra}
    flows = [{"cca": "cubic", "rtt": "20ms"}, {"cca": "bbr", "rtt": "20ms"}]
    return Spec.from_dict({"duration": "1s", "bottleneck": {"rate": "10Mbit", "qdisc": q}, "flows": flows})


def test_every_discipline_warns_without_ecn_flows_exactly_when_it_declares_needing_them():
    for kind in qdiscs.kinds():
        ecn = {"ecn": True} if any(p["name"] == "ecn" for p in qdiscs.params_of(kind)) else {}
        warned = any(f == "bottleneck.qdisc" and "ECN-capable" in m for f, m in _spec(kind, **ecn).warnings())
        assert warned == qdiscs.needs_ecn_flows(kind), kind
    assert [k for k in qdiscs.kinds() if qdiscs.needs_ecn_flows(k)] == ["step"]


def test_every_discipline_gives_meter_tables_exactly_when_it_declares_a_meter():
    for kind in qdiscs.kinds():
        res = ccfair.run(_spec(kind))
        assert (res.meter is not None) == qdiscs.has_meter(kind), kind
    assert [k for k in qdiscs.kinds() if qdiscs.has_meter(k)] == ["rrmqs"]
