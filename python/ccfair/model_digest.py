"""The model's digest: a hash of the outputs of a fixed set of short simulator runs.

``ccfair reproduce --digest`` prints it; the full reproduction board stores it
(docs/reproduction.json, ``model_digest``) and a test compares the two, so a
change to the model (Rust code, a default, a profile, a CCA's or a queue
discipline's parameters) that moves any result of these runs makes the board
stale until it is regenerated.

The runs cover the main model paths the studies use, each a few simulated
seconds with the defaults (host noise, TSO/GSO), and one of 25 s, longer than
BBR's 10 s min_rtt window, so that what happens when the window expires
(PROBE_RTT, the min_rtt filter) moves the digest: CUBIC, BBRv1, Reno, paced
CUBIC over drop-tail; BBRv2 / BBRv3; CoDel, FQ-CoDel, PIE, RED; DCTCP over a
STEP marker and PI2; Prague over DualPI2; CSAQM; a CP-like HTTP profile with a
32-segment initial window; finite flows from a Poisson group with random loss
(S2's traffic model); DCCP/CCID2 against NewReno; RRMQS (S1). What is hashed
are integers only (per flow: window bytes, retransmissions, ECN marks; per
run: data packets), so the digest does not depend on float
formatting.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["DIGEST_RUNS", "digest", "outputs"]

_D = {"duration": "6s", "window": {"start": "2s", "end": "6s"}, "seed": 7}


def _run(name: str, rate: str, qdisc: Any, flows: list[dict[str, Any]], buffer: str = "1bdp", **extra: Any) -> dict[str, Any]:
    return {"name": name, **_D, "bottleneck": {"rate": rate, "buffer": buffer, "qdisc": qdisc}, "flows": flows, **extra}


def _f(name: str, cca: Any, rtt: str = "40ms", start: str = "0s", **kw: Any) -> dict[str, Any]:
    return {"name": name, "cca": cca, "rtt": rtt, "start": start, **kw}


#: The fixed runs (experiment-file dicts).
DIGEST_RUNS: tuple[dict[str, Any], ...] = (
    _run("cubic-bbr-droptail", "10Mbit", "droptail", [_f("a", "cubic"), _f("b", "bbr", start="1s")], buffer="0.5bdp"),
    _run(
        "bbr-min-rtt-window",
        "10Mbit",
        "droptail",
        [_f("a", "cubic"), _f("b", "bbr", start="1s"), _f("c", "bbr3", rtt="60ms", start="2s")],
        buffer="2bdp",
        duration="25s",
        window={"start": "5s", "end": "25s"},
    ),
    _run("reno-paced-cubic", "10Mbit", "droptail", [_f("a", "reno"), _f("b", "cubic+pacing", rtt="60ms")]),
    _run("bbr2-bbr3", "20Mbit", "droptail", [_f("a", "bbr2"), _f("b", "bbr3")], buffer="2bdp"),
    _run("codel", "10Mbit", "codel", [_f("a", "cubic"), _f("b", "bbr")], buffer="2bdp"),
    _run("fq_codel", "10Mbit", "fq_codel", [_f("a", "cubic"), _f("b", "reno", rtt="80ms")], buffer="2bdp"),
    _run("pie", "10Mbit", "pie", [_f("a", "cubic"), _f("b", "htcp")], buffer="2bdp"),
    _run("red", "10Mbit", {"kind": "red", "min_th": "5pkt", "max_th": "15pkt"}, [_f("a", "reno"), _f("b", "cubic")], buffer="30pkt"),
    _run("dctcp-step", "100Mbit", {"kind": "step", "threshold": "1ms"}, [_f("a", "dctcp", rtt="5ms"), _f("b", "dctcp", rtt="5ms")]),
    _run("dctcp-bbr2-pi2", "100Mbit", "pi2", [_f("a", "dctcp", rtt="10ms"), _f("b", "bbr2", rtt="10ms")]),
    _run("prague-dualpi2", "50Mbit", "dualpi2", [_f("a", "cubic", rtt="20ms"), _f("b", "prague", rtt="20ms")], buffer="2000pkt"),
    _run("csaqm", "100Mbit", "csaqm", [_f("a", "dctcp", rtt="10ms"), _f("b", "bbr2", rtt="10ms")]),
    _run(
        "cp-iw32-http",
        "10Mbit",
        "droptail",
        [_f("a", "cubic", rwnd=200), {"name": "b", "profile": "cdn-iw32", "kind": "http", "http": "2", "rtt": "40ms", "cca": "cubic"}],
    ),
    _run(
        "poisson-loss",
        "50Mbit",
        "droptail",
        [],
        buffer="100pkt",
        window={"start": "0s", "end": "6s"},
        groups=[{"name": "g", "cca": "bbr", "rtt": "30ms", "loss": 0.01, "arrival_rate": 4.0, "size": "300KB", "stop": "4s"}],
    ),
    _run("ccid2-newreno", "10Mbit", "droptail", [_f("a", "ccid2", rtt="50ms"), _f("b", "newreno", rtt="50ms")]),
    _run("rrmqs", "20Mbit", "rrmqs", [_f("a", "cubic"), _f("b", "bbr"), _f("c", "reno")]),
)


def outputs() -> list[dict[str, Any]]:
    """Each digest run's hashed integers (see the module docstring)."""
    from ccfair.api import run

    out = []
    for d in DIGEST_RUNS:
        raw = {k: v for k, v in d.items() if not (k == "flows" and not v)}
        s = run(raw).summary
        flows = [[f["name"], int(f["bytes"]), int(f["retransmissions"]), int(f["ecn_marks"])] for f in s["flows"]]
        out.append({"run": d["name"], "data_packets": int(s["data_packets"]), "flows": flows})
    return out


def digest() -> str:
    """sha256 (hex, first 16 digits) of :func:`outputs` as canonical JSON."""
    blob = json.dumps(outputs(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
