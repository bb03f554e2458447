"""Every claim of the five source studies that ccfair checks, in one place.

The previous scoreboard. Each :class:`Claim` carries the study's own sentence (``source``, quoted or
closely restated from the text in /work/shared/studies/, see BRIEF.md), the
published figure, the preset that measures it and the criterion ccfair
applies, fixed before measuring. The presets (``ccfair.presets.s0`` ..
``s4``) compute the figure and the verdict for the claims of their study
(``reproduce_claims``); ``ccfair reproduce`` (ccfair.reproduce) runs them all
and prints this list as the scoreboard.

Verdicts: ``reproduced``, ``not reproduced`` (the reason known so far goes in
the outcome's note), ``not applicable`` (a production-only observation the
lab cannot measure; the note says why), and ``not run`` (the preset or an
algorithm it needs is not available in this build).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CLAIMS", "VERDICTS", "Claim", "Outcome", "by_study", "get"]

#: The verdicts a claim can get.
VERDICTS = ("reproduced", "not reproduced", "not applicable", "not run")


@dataclass(frozen=True)
class Claim:
    """One published claim: id, study, the study's sentence, the published figure, the preset and ccfair's criterion."""

    id: str
    study: str
    source: str
    published: str
    preset: str
    criterion: str


@dataclass(frozen=True)
class Outcome:
    """ccfair's figure and verdict for one claim."""

    figure: str
    verdict: str
    note: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {self.verdict!r}")


def verdict(ok: bool) -> str:
    """``reproduced`` if ``ok`` else ``not reproduced``."""
    return "reproduced" if ok else "not reproduced"


CLAIMS: tuple[Claim, ...] = (
    # --- S0: Rüth, Kunze, Hohlfeld, "An Empirical View on Content Provider Fairness" (TMA 2019); texts and
    # criteria as helper `profiles` fixed them for presets/s0.py.
    Claim(
        "S0.self-fair",
        "S0",
        "every CCA is roughly fair to itself (BBR with more variance) [BRIEF S0; S0 Fig. 2]",
        "intra-CCA fness near 0",
        "s0",
        "median fness of CUBIC-CUBIC and BBR-BBR within +-0.2 at 0.5 and 2 BDP, drop-tail; std of BBR-BBR fness > std of CUBIC-CUBIC",
    ),
    Claim(
        "S0.bbr-starves-cubic",
        "S0",
        "at 0.5 BDP BBR takes nearly all bandwidth from CUBIC whichever starts first [BRIEF S0; S0 Fig. 2]",
        "fness near -1/+1 towards BBR",
        "s0",
        "median BBR share of the pair >= 0.8 in both start orders (|fness| >= 0.75 towards BBR), 0.5 BDP drop-tail",
    ),
    Claim(
        "S0.2bdp-order",
        "S0",
        "at 2 BDP the picture changes: CUBIC no longer starved, order matters [BRIEF S0]",
        "CUBIC share rises; order effect",
        "s0",
        "CUBIC's median share vs BBR at 2 BDP > at 0.5 BDP, and the median fness differs between start orders by >= 0.1 at 2 BDP (drop-tail)",
    ),
    Claim(
        "S0.pacing",
        "S0",
        "pacing lowers CUBIC's fairness [BRIEF S0]; 'pacing seems to decrease fairness when competing with both "
        "paced and non-paced Cubic flows' [S0 III-E]",
        "CUBIC+pacing less fair",
        "s0",
        "mean |fness| of CUBIC+pacing vs CUBIC and of CUBIC+pacing vs CUBIC+pacing each > that of CUBIC vs CUBIC, 0.5 BDP drop-tail",
    ),
    Claim(
        "S0.codel",
        "S0",
        "with CoDel intra-CCA fairness improves but mixed CCAs stay unfair [BRIEF S0; S0 IV-C at 2 BDP]",
        "intra fair, mixed unfair",
        "s0",
        "2 BDP: mean |fness| of the self-pairs under CoDel <= under drop-tail, and CUBIC-vs-BBR mean |fness| >= 0.3 under CoDel",
    ),
    Claim(
        "S0.fq_codel",
        "S0",
        "with FQ_CoDel every pair is close to fair [BRIEF S0; S0 IV-C at 2 BDP]",
        "all pairs fness near 0",
        "s0",
        "every lab pair's median |fness| <= 0.1 under FQ_CoDel at 2 BDP",
    ),
    Claim(
        "S0.cp-bbr-vs-cubic",
        "S0",
        "Cloudflare and Google [BBR] clearly dominate the traffic in all instances giving little "
        "bandwidth to our Cubic flow [S0 IV-A, 0.5 BDP]",
        "CP BBR dominates lab CUBIC",
        "s0",
        "lab CUBIC vs cp-bbr: median cp-bbr share >= 0.8 in both start orders, 0.5 BDP drop-tail",
    ),
    Claim(
        "S0.cp-iw32-vs-cubic",
        "S0",
        "AkamaiA [IW32] ... completely dominates our testbed Cubic flow [S0 IV-A, 0.5 BDP]",
        "CP IW32 dominates lab CUBIC",
        "s0",
        "lab CUBIC vs cdn-iw32: median cdn-iw32 share >= 0.8 in both start orders, 0.5 BDP drop-tail",
    ),
    Claim(
        "S0.cp-fq_codel",
        "S0",
        "FQ_CoDel: throughout all measurements, fairness is close to the equilibrium [S0 IV-C, CP vs CP, 2 BDP]",
        "CP pairs fair under FQ_CoDel",
        "s0",
        "every cp-cp pair's median |fness| <= 0.1 under FQ_CoDel at 2 BDP",
    ),
    # --- S1: "Ensuring Transport Fairness with Smart Networks" (ETH semester thesis, 2020).
    Claim(
        "S1.accuracy",
        "S1",
        "My result shows that my method is able to measure unfairness, and the accuracy is higher than 90% "
        "(Table 4.3: accuracy = min(J_measure, J_real) / max(J_measure, J_real))",
        "99.5 / 95.9 / 92.9 % (small / medium / large)",
        "s1",
        "S1's accuracy within 0.05 of the published value at every queue size (unbounded flows, feedback off)",
    ),
    Claim(
        "S1.j-falls",
        "S1",
        "Table 4.3: J_measure 0.927 / 0.896 / 0.776 and J_real 0.922 / 0.859 / 0.721: fairness falls as the queues grow",
        "J_real 0.922 / 0.859 / 0.721",
        "s1",
        "J_real and J_measure each decrease from small to large queues, and J_real within 0.1 of the published value",
    ),
    Claim(
        "S1.feedback",
        "S1",
        "My result shows that the feedback loop can ensure fairness with J > 0.99 (Table 4.5)",
        "J with feedback 0.996 / 0.993 / 0.992",
        "s1",
        "J_real with S1's feedback > 0.99 at every queue size",
    ),
    Claim(
        "S1.bounded",
        "S1",
        "after using the feedback loop, fairness is improved. However, the performance is much lower than when all "
        "flows have unbounded rates (Table 4.6, some flows rate-bounded)",
        "J without / with feedback 0.948 / 0.975, 0.857 / 0.878, 0.719 / 0.881",
        "s1",
        "bounded flows: J_real with S1's feedback >= J_real without at every queue size",
    ),
    # --- S2: Verizon Media, "BBR evaluation at a large CDN" (APNIC blog, 2019).
    Claim(
        "S2.client-gain",
        "S2",
        "For this wireless provider, as soon as we enabled BBR, on average, we saw a 6-8% throughput improvement",
        "+6-8 % throughput (lossy client class)",
        "s2",
        "mean throughput of the client class's 3 MB objects with BBR > with CUBIC (the lab shows the direction; "
        "the size of the gain is printed next to the published 6-8 %)",
    ),
    Claim(
        "S2.p5",
        "S2",
        "A Cumulative Distribution Function (CDF) of the 5th percentile throughput. BBR flows show a significant improvement",
        "5th-percentile throughput higher with BBR",
        "s2",
        "5th-percentile throughput of client 3 MB objects with BBR > with CUBIC",
    ),
    Claim(
        "S2.low-rtt-halved",
        "S2",
        "in the presence of both high and low RTT flows, the TCP flows which have very low RTTs suffered from using BBR "
        "... Throughput decreased by about half with BBR (PoP-to-PoP and intra-PoP)",
        "low-RTT throughput about x0.5",
        "s2",
        "mean throughput of the PoP-to-PoP and intra-PoP 3 MB objects with BBR / with CUBIC <= 0.75",
    ),
    Claim(
        "S2.retransmits",
        "S2",
        "BBR performs well only for cases that have a high number of retransmits, in other words, for ASes with less "
        "loss Cubic has no reason to back-off and performs better than BBR",
        "BBR's gain grows with loss",
        "s2",
        "client BBR/CUBIC throughput ratio at the highest loss rate > at the lowest loss rate, and > 1 at the highest",
    ),
    Claim(
        "S2.large-objects",
        "S2",
        "BBR only started showing noticeable benefits for larger objects, in the order of MBs (Figure 6)",
        "BBR's FCT benefit grows with size",
        "s2",
        "client CUBIC/BBR FCT ratio in the largest object-size bin > in the smallest bin",
    ),
    # --- S3: Fejes et al., "On the Incompatibility of Scalable Congestion Controls over the Internet".
    Claim(
        "S3.dctcp-util",
        "S3",
        "mono-DCTCP utilization is poor with small targets and few flows (below 60 % for 2 flows with STEP at K = 0.17)",
        "utilization < 0.60",
        "s3",
        "utilization of 2 DCTCP flows over STEP, K = 0.17, < 0.60 (RTT 5 ms)",
    ),
    Claim(
        "S3.step-dctcp",
        "S3",
        "STEP favours DCTCP over BBRv2",
        "DCTCP ahead under STEP",
        "s3",
        "DCTCP's relative throughput > BBRv2's in the majority of the STEP points run",
    ),
    Claim(
        "S3.pi2-bbr2",
        "S3",
        "under PI2 BBRv2 suppresses DCTCP",
        "BBRv2 ahead under PI2",
        "s3",
        "BBRv2's relative throughput > DCTCP's in the majority of the PI2 points run",
    ),
    Claim(
        "S3.csaqm",
        "S3",
        "CSAQM gives good fairness in most cases",
        "CSAQM JFI highest",
        "s3",
        "CSAQM's JFI > STEP's and > PI2's in the majority of the points run",
    ),
    Claim(
        "S3.multi-rtt",
        "S3",
        "with mixed RTTs DCTCP's short-RTT flows win while BBR's long-RTT flows win (2-2-8-8: DCTCP-50ms gets very small "
        "throughput ... PI2 gives the BBR-50ms class unfairly high share)",
        "DCTCP-5 and BBR-50 ahead",
        "s3",
        "2-2-8-8 mix (BBRv2-50, DCTCP-50, BBRv2-5, DCTCP-5 ms), target K = 1 x 5 ms: DCTCP-5 > DCTCP-50 in relative "
        "throughput under STEP and PI2, and BBRv2-50 > BBRv2-5 under PI2",
    ),
    # --- S4: Bhatti & Bateman, "Transport Protocol Throughput Fairness" (J. Networks 2009).
    Claim(
        "S4.self-pairs",
        "S4",
        "Table III shows the mean value of JFI ... confirming good fairness of each protocol against another flow of the same protocol",
        "J 0.89-0.97",
        "s4",
        "mean J of every same-CCA pair (NewReno, BIC, CUBIC, Compound, CCID2) >= 0.85 at every RTT",
    ),
    Claim(
        "S4.ccid2-newreno",
        "S4",
        "there is good fairness between DCCP/CCID2 and NewReno, with J > 0.90",
        "J 0.91-0.96",
        "s4",
        "CCID2 (flow 1) vs NewReno: mean J > 0.90 at every RTT",
    ),
    Claim(
        "S4.ccid2-highspeed",
        "S4",
        "BIC, CUBIC and Compound run against DCCP/CCID2 ... the JFI value is below 0.8 at all values of RTT above 25ms "
        "... greatest unfairness in all three cases is at 100ms",
        "J 0.67-0.85 at 50-200 ms; minimum at 100 ms",
        "s4",
        "CCID2 (flow 1) vs BIC, CUBIC, Compound: mean J at 50-200 ms below the 25 ms value and <= 0.85, minimum at 100 ms for most of the three",
    ),
    Claim(
        "S4.order",
        "S4",
        "when the order of flows is reversed, there are slightly different results (Table IX vs Table V)",
        "J changes with flow order",
        "s4",
        "|J(CCID2 first) - J(TCP first)| >= 0.05 for at least one TCP variant and RTT",
    ),
    Claim(
        "S4.nru-case",
        "S4",
        "We see the great difference in value between U_N+ and U_N- ... for BIC, CUBIC and Compound vs CCID2 (Figures 10-12)",
        "case B: CCID2 worse, TCP better",
        "s4",
        "CCID2 vs BIC/CUBIC/Compound at 100 ms: NRU case B with CCID2's U_n < 0 for each",
    ),
    Claim(
        "S4.14-flow",
        "S4",
        "Table VIII: JFI values for 14 flows (single run), 14 TCP variants of the ns-2 Linux suite, flows started every 30 s, 900 s",
        "J 0.51 / 0.30 / 0.24 / 0.19 at 25 / 50 / 100 / 200 ms",
        "s4",
        "J decreases monotonically over 25, 50, 100, 200 ms and each value is within 0.1 of the published one",
    ),
    Claim(
        "S4.14-flow-nru",
        "S4",
        "Table VII: system NRU U_N falls from -10.51 dB (25 ms) to -18.47 dB (200 ms) for the 14-flow test",
        "U_N -10.5 .. -18.5 dB, falling",
        "s4",
        "U_N < 0 at every RTT and U_N(200 ms) < U_N(25 ms)",
    ),
)

_BY_ID = {c.id: c for c in CLAIMS}
if len(_BY_ID) != len(CLAIMS):  # pragma: no cover - a data error, caught at import
    raise RuntimeError("duplicate claim id in ccfair.claims.CLAIMS")


def get(claim_id: str) -> Claim:
    """The claim with this id (KeyError names the known ids)."""
    try:
        return _BY_ID[claim_id]
    except KeyError:
        raise KeyError(f"unknown claim {claim_id!r}; known: {', '.join(_BY_ID)}") from None


def by_study(study: str) -> list[Claim]:
    """The claims of one study (``"S0"`` .. ``"S4"``), in registry order."""
    return [c for c in CLAIMS if c.study == study]
