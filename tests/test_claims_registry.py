"""The claims registry (ccfair.claims) and the verdict rules (ccfair.claims.rules).

Sources: the study texts (``shared/studies`` beside the repository; README
there maps S0-S4 to files) for every quote; the bootstrap and its small-sample
expansion: Hesterberg, "What Teachers Should Know About the Bootstrap", The
American Statistician 69(4), 2015; Student's t quantiles (t_{0.975,4} = 2.776).
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import pytest
from ccfair import claims
from ccfair.claims import rules
from ccfair.claims.model import Claim, Measurement, Rule

ROOT = Path(__file__).resolve().parent.parent
#: The study texts: $CCFAIR_STUDIES, else shared/studies beside the repository (or beside its parent, for a
#: worktree one level down).
_CANDIDATES = [Path(os.environ["CCFAIR_STUDIES"])] if os.environ.get("CCFAIR_STUDIES") else []
_CANDIDATES += [ROOT.parent / "shared" / "studies", ROOT.parent.parent / "shared" / "studies"]
STUDIES = next((p for p in _CANDIDATES if p.is_dir()), _CANDIDATES[0])
#: The board's floor: it covers every finding, at least this many.
MIN_CLAIMS, MIN_PER_STUDY = 60, 8


def _norm(text: str) -> str:
    return " ".join(text.split())


def _study_texts() -> dict[str, str]:
    out = {}
    for f in sorted(STUDIES.glob("[0-9][0-9][0-9]_*.txt")):
        out[f"S{int(f.name[:3])}"] = _norm(f.read_text(encoding="utf-8"))
    return out


def test_every_quote_is_verbatim_in_its_study_text():
    texts = _study_texts()
    if not texts:
        pytest.skip(f"the study texts are not here ({STUDIES}); CI has no copy")
    missing = [c.id for c in claims.CLAIMS if _norm(c.quote) not in texts[c.study]]
    assert not missing, f"quotes not found verbatim in the study text: {missing}"
    left = [q[:60] for s, q, _ in claims.LEFT_OUT if _norm(q) not in texts[s]]
    assert not left, f"left-out findings not found verbatim: {left}"


def test_registry_has_every_study_and_enough_claims():
    present = sorted(claims.modules())
    if len(present) < len(claims.STUDIES):
        pytest.skip(f"runs once all five study modules exist (ccfair.claims.s0 .. s4); present: {', '.join(present)}")
    per = {s: len(claims.by_study(s)) for s in claims.STUDIES}
    assert len(claims.CLAIMS) >= MIN_CLAIMS, per
    assert min(per.values()) >= MIN_PER_STUDY, per


def test_each_study_module_has_enough_claims_and_lists_what_it_leaves_out():
    for study, mod in claims.modules().items():
        assert len(mod.CLAIMS) >= MIN_PER_STUDY, study
        assert all(len(x) == 2 and all(x) for x in getattr(mod, "LEFT_OUT", ())), study


def test_claims_have_the_fields_the_board_needs():
    for c in claims.CLAIMS:
        assert re.fullmatch(r"S[0-4]\.[a-z0-9.-]+", c.id), c.id
        assert c.backend in claims.BACKENDS and c.preset == c.study.lower()
        assert c.deviations and all(d.strip() for d in c.deviations), c.id
    assert claims.get(claims.CLAIMS[0].id) is claims.CLAIMS[0]
    with pytest.raises(KeyError, match="unknown claim"):
        claims.get("S9.nothing")


def test_a_claim_with_an_incomplete_rule_is_refused():
    with pytest.raises(ValueError, match="published"):
        rules.check_rule(Rule("value", scale="share"), "x")
    with pytest.raises(ValueError, match="sign"):
        rules.check_rule(Rule("direction", sign=0), "x")
    with pytest.raises(ValueError, match="kind"):
        rules.check_rule(Rule("maybe"), "x")  # type: ignore[arg-type]


def _claim(rule: Rule) -> Claim:
    return Claim("S0.x", "S0", "-", "-", "-", "-", ("-",), rule, "s0")


def test_direction_verdicts_follow_the_interval():
    up = _claim(Rule("direction", sign=+1))
    assert rules.judge(up, Measurement((0.5, 0.6, 0.55, 0.52, 0.58))).verdict == "reproduced"
    assert rules.judge(up, Measurement((-0.5, -0.6, -0.55, -0.52, -0.58))).verdict == "not reproduced"
    assert rules.judge(up, Measurement((-0.5, 0.6, 0.1, -0.2, 0.3))).verdict == "inconclusive"
    down = _claim(Rule("direction", sign=-1))
    assert rules.judge(down, Measurement((0.1, 0.2, 0.15), minus=(0.5, 0.6, 0.55))).verdict == "reproduced"


def test_value_verdicts_use_the_scales_tolerance():
    c = _claim(Rule("value", published=1.0, scale="fness"))  # band 0.8 .. 1.2
    assert rules.judge(c, Measurement((0.9, 0.91, 0.92, 0.9, 0.93))).verdict == "reproduced"
    assert rules.judge(c, Measurement((0.1, 0.12, 0.11, 0.1, 0.13))).verdict == "not reproduced"
    assert rules.judge(c, Measurement((0.6, 0.95, 0.8, 0.7, 0.9))).verdict == "inconclusive"
    assert rules.band(Rule("value", published=100.0, scale="ratio")) == (75.0, 125.0)


def test_sign_change_needs_each_condition_on_its_own_side():
    c = _claim(Rule("sign-change", sign=-1))
    assert rules.judge(c, Measurement((-0.5, -0.6, -0.4), minus=(0.5, 0.6, 0.4))).verdict == "reproduced"
    # the difference is clearly negative, yet the second condition is not above zero
    assert rules.judge(c, Measurement((-0.9, -0.8, -0.85), minus=(-0.1, -0.2, -0.15))).verdict == "not reproduced"
    assert rules.judge(c, Measurement((-0.5, -0.6, -0.4), minus=(0.5, -0.3, 0.2))).verdict == "inconclusive"


def test_the_expanded_interval_is_the_t_widening_of_the_bootstrap():
    # alpha'/2 = Phi(-sqrt(n/(n-1)) t_{0.975,n-1}); n = 5: t = 2.776
    from statistics import NormalDist

    assert rules._t975(4) == pytest.approx(2.776, abs=0.002)
    assert rules._tail(5) == pytest.approx(NormalDist().cdf(-((5 / 4) ** 0.5) * 2.776), rel=0.01)
    assert rules._tail(30) > rules._tail(5)


def test_the_interval_covers_a_mean_about_95_percent_of_the_time_with_five_runs():
    # normal runs, true mean 0: the plain percentile interval covers ~85 % with n = 5, the expanded one ~93 %
    rng = random.Random(5)
    hits = sum(
        lo <= 0.0 <= hi for lo, hi in (rules.interval(Measurement(tuple(rng.gauss(0, 1) for _ in range(5))))[1:] for _ in range(200))
    )
    assert hits >= 0.9 * 200


def test_fewer_runs_give_a_wider_interval():
    rng = random.Random(2)
    xs = tuple(rng.gauss(1.0, 0.5) for _ in range(60))
    _, lo_all, hi_all = rules.interval(Measurement(xs))
    _, lo_few, hi_few = rules.interval(Measurement(xs[:10]))
    assert hi_few - lo_few > hi_all - lo_all


def test_a_single_run_is_inconclusive_whatever_its_value():
    """One run cannot show its own run-to-run spread: its bootstrap interval is a point, so no verdict is drawn."""
    far = Claim("x", "S0", "", "", "q", "", (), Rule("value", published=0.0, scale="share"), "s0")
    assert rules.judge(far, Measurement(values=(0.9,))).verdict == "inconclusive"
    assert rules.judge(far, Measurement(values=(0.9, 0.91, 0.89))).verdict == "not reproduced"
    diff = Claim("y", "S0", "", "", "q", "", (), Rule("direction", sign=1), "s0")
    assert rules.judge(diff, Measurement(values=(0.5, 0.6), minus=(0.1,))).verdict == "inconclusive"
