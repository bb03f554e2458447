"""The studies' findings that ccfair checks: one registry.

- ``model``: what a claim is (:class:`Claim`, :class:`Rule`) and what a preset
  measures for it (:class:`Measurement`).
- ``rules``: the statistics and the verdict rules, declared once for all claims.
- ``s0`` .. ``s4``: each study's claims, in the study's order.
- ``legacy``: the previous scoreboard's claims, used by presets not yet moved to
  :class:`Measurement`; removed once every preset measures.
"""

from __future__ import annotations

from ccfair.claims.legacy import CLAIMS, VERDICTS, Claim, Outcome, by_study, get, verdict

__all__ = ["CLAIMS", "VERDICTS", "Claim", "Outcome", "by_study", "get", "verdict"]
