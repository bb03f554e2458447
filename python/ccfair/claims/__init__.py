"""The studies' findings that ccfair checks: one registry.

- ``model``: what a claim is (:class:`Claim`, :class:`Rule`) and what a preset
  measures for it (:class:`Measurement`).
- ``rules``: the statistics and the verdict rules, declared once for all claims.
- ``s0`` .. ``s4``: each study's claims (``CLAIMS``, in the study's order) and
  the findings left out with the reason (``LEFT_OUT``: (quote, reason) pairs).
  A study module that is not there is skipped.

:data:`CLAIMS` is every study module's claims in study order; :func:`get` and
:func:`by_study` look them up. Import checks: ids unique and prefixed with
the study, the study and preset matching the module, backend and rule valid.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ccfair.claims import rules
from ccfair.claims.model import Claim, Measurement, Rule

__all__ = [
    "BACKENDS",
    "CLAIMS",
    "LEFT_OUT",
    "STUDIES",
    "Claim",
    "Measurement",
    "Rule",
    "by_study",
    "get",
    "modules",
]

#: The studies, in order; ``ccfair.claims.<study lower-case>`` holds each one's claims.
STUDIES = ("S0", "S1", "S2", "S3", "S4")
#: Where a claim is measured: the simulator (runs of its preset) or stored real-Linux testbed runs.
BACKENDS = ("simulator", "testbed")


def modules() -> dict[str, ModuleType]:
    """The study modules present, by study."""
    out: dict[str, ModuleType] = {}
    for s in STUDIES:
        name = f"ccfair.claims.{s.lower()}"
        try:
            out[s] = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
    return out


def _check(study: str, claims: tuple[Claim, ...]) -> None:
    for c in claims:
        where = f"ccfair.claims.{study.lower()} claim {c.id!r}"
        if c.study != study or not c.id.startswith(study + "."):
            raise ValueError(f"{where}: study must be {study} and the id start with '{study}.'")
        if c.preset != study.lower():
            raise ValueError(f"{where}: preset must be {study.lower()!r}, got {c.preset!r}")
        if c.backend not in BACKENDS:
            raise ValueError(f"{where}: backend must be one of {', '.join(BACKENDS)}, got {c.backend!r}")
        if not (c.quote.strip() and c.quantity.strip() and c.setup.strip() and c.where.strip()):
            raise ValueError(f"{where}: quote, quantity, setup and where must not be empty")
        rules.check_rule(c.rule, where)


def _collect() -> tuple[tuple[Claim, ...], tuple[tuple[str, str, str], ...]]:
    claims: list[Claim] = []
    left: list[tuple[str, str, str]] = []
    for study, mod in modules().items():
        cs = tuple(mod.CLAIMS)
        _check(study, cs)
        claims += cs
        left += [(study, q, why) for q, why in getattr(mod, "LEFT_OUT", ())]
    ids = [c.id for c in claims]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ValueError(f"duplicate claim ids: {', '.join(dup)}")
    return tuple(claims), tuple(left)


#: Every claim of every study module present, in study order.
#: LEFT_OUT: (study, quote, reason) of every finding a study module leaves out.
CLAIMS, LEFT_OUT = _collect()
_BY_ID = {c.id: c for c in CLAIMS}


def get(claim_id: str) -> Claim:
    """The claim with this id (KeyError names the known ids)."""
    try:
        return _BY_ID[claim_id]
    except KeyError:
        raise KeyError(f"unknown claim {claim_id!r}; known: {', '.join(_BY_ID)}") from None


def by_study(study: str) -> list[Claim]:
    """The claims of one study (``"S0"`` .. ``"S4"``), in registry order."""
    return [c for c in CLAIMS if c.study == study]
