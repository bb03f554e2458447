"""Congestion-control algorithm names: what the simulator knows, and aliases.

The simulator (``ccfair._core.ccas()``) is the authority on which algorithms
exist. When the extension is not built (e.g. while editing an experiment file
on a machine without a Rust toolchain) spec validation falls back to
:data:`FALLBACK`, the algorithms of the first release.

Aliases are resolved here, in Python, so the Rust side only ever sees
canonical names. A ``"+pacing"`` suffix (``"cubic+pacing"``) selects the
algorithm with pacing switched on.
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["ALIASES", "FALLBACK", "PACING_SUFFIX", "available", "catalogue", "resolve"]

#: Algorithms assumed when ``ccfair._core`` is not importable: (name, source).
FALLBACK: tuple[tuple[str, str], ...] = (
    ("reno", "RFC 5681 / RFC 6582 (NewReno)"),
    ("cubic", "RFC 9438, Linux tcp_cubic.c (HyStart)"),
    ("bbr", "BBRv1: Linux tcp_bbr.c, draft-cardwell-iccrg-bbr-congestion-control"),
    ("dctcp", "DCTCP: RFC 8257, Linux tcp_dctcp.c"),
    ("prague", "TCP Prague (L4S), RTT-independent increase"),
    ("prague-rttdep", "TCP Prague without RTT-independence"),
)

#: Other spellings accepted in experiment files -> canonical simulator name.
ALIASES: dict[str, str] = {
    "newreno": "reno",
    "new-reno": "reno",
    "new_reno": "reno",
    "bbr1": "bbr",
    "bbrv1": "bbr",
    # Loss-based CCAs of S1: Linux names are canonical; ns-3 class names
    # (TcpBic, TcpWestwoodPlus, ...) and common spellings map to them.
    "tcpbic": "bic",
    "bic-tcp": "bic",
    "hstcp": "highspeed",
    "high-speed": "highspeed",
    "tcphighspeed": "highspeed",
    "h-tcp": "htcp",
    "tcphtcp": "htcp",
    "tcphybla": "hybla",
    "tcp-illinois": "illinois",
    "tcpillinois": "illinois",
    "stcp": "scalable",
    "tcpscalable": "scalable",
    "tcpveno": "veno",
    "westwood+": "westwood",
    "westwoodplus": "westwood",
    "westwood-plus": "westwood",
    "tcpwestwoodplus": "westwood",
    "yeah-tcp": "yeah",
    "tcpyeah": "yeah",
    "tcp-prague": "prague",
    "bbrv2": "bbr2",
    "bbrv3": "bbr3",
    "tcpvegas": "vegas",
    "tcpledbat": "ledbat",
    "ledbat-25ms": "ledbat25",
    "compound": "ctcp",
    "compoundtcp": "ctcp",
    "compound-tcp": "ctcp",
    "tcpcompound": "ctcp",
    "tcp-lp": "lp",
    "tcplp": "lp",
    "dccp": "ccid2",
    "ccid-2": "ccid2",
    "dccp-ccid2": "ccid2",
}

#: Suffix that turns pacing on: ``"cubic+pacing"``.
PACING_SUFFIX = "+pacing"


@lru_cache(maxsize=1)
def catalogue() -> tuple[tuple[str, str], ...]:
    """(name, source) of every algorithm, from the simulator if built, else :data:`FALLBACK`."""
    try:
        from ccfair import _core
    except ImportError:
        return FALLBACK
    return tuple((str(name), str(source)) for name, source in _core.ccas())


def available() -> list[str]:
    """Canonical names of the algorithms that can be used in an experiment."""
    return [name for name, _ in catalogue()]


def resolve(name: str) -> tuple[str, bool]:
    """Map a name as written to ``(canonical_name, pacing_requested)``.

    Case-insensitive; applies :data:`ALIASES` and the ``+pacing`` suffix.
    Raises :class:`ValueError` listing the allowed names if the algorithm is unknown.
    """
    written = name.strip().lower()
    pacing = written.endswith(PACING_SUFFIX)
    if pacing:
        written = written[: -len(PACING_SUFFIX)]
    canonical = ALIASES.get(written, written)
    known = available()
    if canonical not in known:
        aliases = ", ".join(f"{a}={c}" for a, c in ALIASES.items() if c in known)
        raise ValueError(
            f"unknown CCA {name!r}; allowed: {', '.join(known)}"
            f" (aliases: {aliases}; add '{PACING_SUFFIX}' to pace, e.g. 'cubic{PACING_SUFFIX}')"
        )
    return canonical, pacing


#: CCAs that are ECN-based and default to scalable ECN when a flow leaves
#: ``ecn`` unset (Rust: ``CongestionControl::needs_ecn``; tests/test_spec_warnings.py
#: checks the two agree).
ECN_NATIVE = frozenset({"dctcp", "prague", "prague-rttdep"})
