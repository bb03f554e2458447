"""What a claim is, and what a preset measures for it.

A :class:`Claim` is one finding of a study: its words (verbatim), the quantity
as the study defines it, the setup, every deviation of ccfair's setup from the
study's with its reason, and the :class:`Rule` that turns measurements into a
verdict (``ccfair.claims.rules``). A preset's ``measure(results)`` returns one
:class:`Measurement` per claim it measures: the quantity's value in each
independent run, from which the rules compute an estimate and a bootstrap
confidence interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Claim", "Measurement", "Rule"]


@dataclass(frozen=True)
class Rule:
    """How a claim is judged.

    ``direction``: the study says the quantity is above zero (``sign=+1``) or
    below it (``sign=-1``). ``value``: the study gives a number (``published``,
    in the quantity's unit); ``scale`` names the tolerance that applies to that
    kind of number (``ccfair.claims.rules.TOLERANCES``). ``sign-change``: an
    observation inverts between two conditions: the measurement's ``values``
    group lies on the side ``sign`` of zero and its ``minus`` group on the other.
    """

    kind: Literal["direction", "value", "sign-change"]
    sign: int = 1
    published: float | None = None
    scale: str = ""


@dataclass(frozen=True)
class Claim:
    """One finding of one study."""

    id: str  # "S2.client-gain"
    study: str  # "S0" .. "S4"
    where: str  # section / table / figure of the study
    quote: str  # verbatim from the study text (whitespace and line breaks aside)
    quantity: str  # the quantity as the study defines it: formula, flows, time window
    setup: str  # the study's setup, as ccfair runs it
    deviations: tuple[str, ...]  # each: what differs from the study, and why
    rule: Rule
    preset: str  # "s0" .. "s4": the preset whose runs measure it
    backend: str = "simulator"  # "testbed": measured from stored real-Linux runs


@dataclass(frozen=True)
class Measurement:
    """The claim's quantity measured over independent runs.

    The estimate is ``stat(values)``, or ``stat(values) - stat(minus)`` when a
    second group is given (e.g. A-first runs minus B-first runs).
    """

    values: tuple[float, ...]
    minus: tuple[float, ...] = ()
    stat: Literal["mean", "median", "std"] = "mean"
    figure: str = ""  # ccfair's figure in a few words, for the board
    note: str = ""
