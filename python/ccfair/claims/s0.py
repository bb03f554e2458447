"""S0's findings: Rüth, Kunze, Hohlfeld, "An Empirical View on Content Provider
Fairness" (TMA 2019), sections III-E (testbed validation, Figure 2), IV-A (lab
vs content provider, Figures 3-4, Table II), IV-B (content provider vs content
provider, Figure 5), IV-C (CoDel / FQ_CoDel, Figure 6) and V (conclusion).

Every claim is measured by ccfair's S0 preset (python/ccfair/presets/s0.py:
``measure``) from S0's setting: two flows to one client through one
bottleneck (tbf with a one-frame burst), flow B 5 s after flow A, 45 s, fness
over the 35 s from 10 s, receive window 200 segments, each start order run
30 times. fness(A, B) = 1 - A/B if B >= A else B/A - 1 (S0 III-D): -1 is A
taking everything, +1 is B. "Dominates" and "fair" are S0's own ends of that
scale (claims.rules.DOMINATES, FAIR).

The content providers (CPs) are local CP-like senders (python/ccfair/profiles.py):
AkamaiE = ``cdn-iw16`` and AkamaiA = ``cdn-iw32`` (S0 IV: "AkamaiA (then using
IW32) and AkamaiE (then using IW16)"; CUBIC, the Linux default), Cloudflare
and Google = ``cp-bbr`` ("Cloudflare and Google have both publicly announced to
utilize BBR"; BBRv1 with Linux defaults). Amazon, Edgecast and Fastly have no
stand-in: S0 says only that they "use a similar algorithm"; their findings are
in :data:`LEFT_OUT`.

Claims with ``backend="testbed"`` are the same findings measured from stored
real-Linux runs of ccfair's testbed (bench/data/), where those runs exist.
"""

from __future__ import annotations

from ccfair.claims.model import Claim, Rule
from ccfair.claims.rules import ABOVE_ZERO, BELOW_ZERO, DOMINATES, FAIR

__all__ = ["CLAIMS", "LEFT_OUT"]

_BASE = "10 Mbit/s, 50 ms base RTT"
_TIMING = "flow B starts 5 s after A (+- 20 ms), 45 s, fness over 10-45 s, receive window 200 segments, 30 runs per start order"


def _setup(what: str, buffer: str, qdisc: str = "drop-tail", base: str = _BASE) -> str:
    return f"{what}; {base}, buffer {buffer}, {qdisc}; {_TIMING}"


#: Deviations shared by every simulator claim / every claim with CP-like flows / Table II claims.
_SIM = "ccfair's simulator with Linux-like TCP (host noise, TSO on) instead of S0's Linux 4.13 hosts; Gigabit access links are not modelled"
_CP = (
    "the CP is a local CP-like sender (AkamaiE: cdn-iw16, AkamaiA: cdn-iw32, Cloudflare/Google: cp-bbr); S0 names only "
    "the initial window or 'BBR', so the CPs' other tuning, their servers and their 5-10 ms of path beyond the "
    "bottleneck are not modelled"
)
_SAME_BBR = (
    "on the simulator an HTTP download is the server's TCP download, so cp-bbr is the lab BBR sender (BBRv1, Linux "
    "defaults); this claim runs the lab experiment on its own runs (seeds) and differs from it only where the CP's "
    "unknown tuning would"
)
_JITTER = "each run's start times vary by up to 20 ms (seeded), standing in for the testbed's natural run-to-run variation"
_T2 = (
    "Table II's column headers are lost in the study text; the columns are read as BBR@2BDP, BBR@0.5BDP, "
    "Cubic@2BDP, Cubic@0.5BDP: the queue sizes (40-66 packets against 11-16) give the buffers (2 BDP = 83 "
    "packets), and IV-A's sentences on Cloudflare's retransmissions give the CCAs"
)
_T2_MEAN = (
    "published: the mean of Table II's column over AkamaiA, AkamaiE and the mean of Cloudflare and Google (one cp-bbr stand-in for both)"
)
#: The stored testbed runs of the preset's own experiment.
_TB_EXTRA = "bench/data/s0-testbed-extra-2026-11-29.jsonl"
_TB_COLLECTED = f"{_TB_EXTRA}: the runs collected (bench/s0_testbed_collect.py), not 60"
_TB_CUBIC = (
    "CUBIC vs CUBIC runs: bench/data/testbed-cubic-pair-0.5bdp-2026-11-25.jsonl (no start jitter) and "
    f"{_TB_EXTRA} (the preset's experiment), pooled; 10-20 runs, not 60"
)
_TB = (
    "stored runs of ccfair's testbed (real Linux TCP in network namespaces, userspace bottleneck; "
    "bench/data/), not S0's hosts; the runs that exist"
)


def _c(
    id: str,
    where: str,
    quote: str,
    quantity: str,
    setup: str,
    rule: Rule,
    deviations: tuple[str, ...] = (),
    backend: str = "simulator",
) -> Claim:
    devs = (_TB,) + deviations if backend == "testbed" else (_SIM, _JITTER) + deviations
    return Claim(id, "S0", where, quote, quantity, setup, devs, rule, "s0", backend)


_Q_SELF = "all algorithms generally show a large degree of fairness to themselves (intra-protocol fairness)"
_Q_BBR_VAR = "with BBR showing a bit of a larger variance compared to the others"
_Q_MONO = "BBR clearly monopolizes the bandwidth regardless of which flow starts first"
_Q_PACING = "pacing seems to decrease fairness when competing with both paced and non-paced Cubic flows"
_ABS = "|fness| per run (both start orders; for a self-pair the start order only mirrors fness), mean over runs"
_FIRST = "fness oriented towards the flow that starts first, per run (both orders), std over runs"

_SIM_CLAIMS: tuple[Claim, ...] = (
    # ---------------------------------------------------------------- III-E, Figure 2 (lab, 0.5 BDP)
    _c(
        "S0.self-fair-cubic",
        "III-E, Fig. 2",
        _Q_SELF,
        "CUBIC vs CUBIC: " + _ABS,
        _setup("lab CUBIC vs lab CUBIC", "0.5 BDP"),
        FAIR,
    ),
    _c(
        "S0.self-fair-bbr",
        "III-E, Fig. 2",
        _Q_SELF,
        "BBR vs BBR: " + _ABS,
        _setup("lab BBR vs lab BBR", "0.5 BDP"),
        FAIR,
    ),
    _c(
        "S0.self-fair-paced",
        "III-E, Fig. 2",
        _Q_SELF,
        "paced CUBIC vs paced CUBIC: " + _ABS,
        _setup("lab CUBIC with pacing (fq) vs the same", "0.5 BDP"),
        FAIR,
    ),
    _c(
        "S0.bbr-variance-cubic",
        "III-E, Fig. 2",
        _Q_BBR_VAR,
        f"BBR vs BBR minus CUBIC vs CUBIC: {_FIRST}, difference of the two stds",
        _setup("lab BBR vs BBR and lab CUBIC vs CUBIC", "0.5 BDP"),
        ABOVE_ZERO,
    ),
    _c(
        "S0.bbr-variance-paced",
        "III-E, Fig. 2",
        _Q_BBR_VAR,
        f"BBR vs BBR minus paced CUBIC vs paced CUBIC: {_FIRST}, difference of the two stds",
        _setup("lab BBR vs BBR and lab paced CUBIC vs paced CUBIC", "0.5 BDP"),
        ABOVE_ZERO,
    ),
    _c(
        "S0.bbr-monopolizes",
        "III-E, Fig. 2",
        _Q_MONO,
        "CUBIC vs BBR: fness oriented towards BBR per run, both start orders pooled, mean",
        _setup("lab CUBIC vs lab BBR", "0.5 BDP"),
        DOMINATES,
    ),
    _c(
        "S0.pacing-vs-cubic",
        "III-E, Fig. 2",
        _Q_PACING,
        "mean |fness| of CUBIC vs paced CUBIC minus mean |fness| of CUBIC vs CUBIC (both orders)",
        _setup("lab CUBIC vs paced CUBIC, and CUBIC vs CUBIC", "0.5 BDP"),
        ABOVE_ZERO,
    ),
    _c(
        "S0.pacing-vs-paced",
        "III-E, Fig. 2",
        _Q_PACING,
        "mean |fness| of paced CUBIC vs paced CUBIC minus mean |fness| of CUBIC vs CUBIC (both orders)",
        _setup("lab paced CUBIC vs paced CUBIC, and CUBIC vs CUBIC", "0.5 BDP"),
        ABOVE_ZERO,
    ),
    # ---------------------------------------------------------------- IV-A, Figure 3 (lab CUBIC vs CP)
    _c(
        "S0.cubic-vs-bbr-cps-small",
        "IV-A, Fig. 3 top",
        "Cloudflare and Google clearly dominate the traffic in all instances giving little bandwidth to our Cubic flow",
        "lab CUBIC vs cp-bbr: fness oriented towards the CP per run, both orders, mean",
        _setup("lab CUBIC vs CP-like BBR (Cloudflare, Google)", "0.5 BDP"),
        DOMINATES,
        (
            _CP,
            _SAME_BBR,
        ),
    ),
    _c(
        "S0.cubic-vs-akamaia-small",
        "IV-A, Fig. 3 top",
        "AkamaiA is similar to Cloudflare and Google in that it completely dominates our testbed Cubic flow",
        "lab CUBIC vs cdn-iw32: fness oriented towards the CP per run, both orders, mean",
        _setup("lab CUBIC vs CP-like AkamaiA (CUBIC, IW32)", "0.5 BDP"),
        DOMINATES,
        (_CP,),
    ),
    _c(
        "S0.cubic-vs-akamaie-small",
        "IV-A, Fig. 3 top",
        "The two Akamai flows offer a different behavior with AkamaiE showing the highest degree of fairness",
        "mean |fness| of lab CUBIC vs cdn-iw16 minus mean |fness| of lab CUBIC vs cdn-iw32 (both orders)",
        _setup("lab CUBIC vs CP-like AkamaiE (IW16) and AkamaiA (IW32)", "0.5 BDP"),
        BELOW_ZERO,
        (_CP,),
    ),
    _c(
        "S0.cubic-vs-bbr-cps-large",
        "IV-A, Fig. 3 bottom",
        "Now, the Cloudflare and Google flows do not dominate anymore",
        "lab CUBIC vs cp-bbr: fness oriented towards the CP at 2 BDP minus at 0.5 BDP (both orders)",
        _setup("lab CUBIC vs CP-like BBR", "2 BDP against 0.5 BDP"),
        BELOW_ZERO,
        (
            _CP,
            _SAME_BBR,
        ),
    ),
    _c(
        "S0.cubic-vs-bbr-cps-large-order",
        "IV-A, Fig. 3 bottom",
        "the fairness heavily depends on which flow was initiated first",
        "lab CUBIC vs cp-bbr: the CP's fness (oriented towards it) when the CP starts first minus when CUBIC starts first",
        _setup("lab CUBIC vs CP-like BBR", "2 BDP"),
        ABOVE_ZERO,
        (
            _CP,
            _SAME_BBR,
        ),
    ),
    _c(
        "S0.cubic-vs-akamai-large",
        "IV-A, Fig. 3 bottom",
        "both Akamai flows are completely dominated by the testbed Cubic flow, no matter which flow is started first",
        "lab CUBIC vs cdn-iw16 and vs cdn-iw32: fness oriented towards lab CUBIC per run, both orders and both CPs, mean",
        _setup("lab CUBIC vs CP-like AkamaiE and AkamaiA", "2 BDP"),
        DOMINATES,
        (_CP,),
    ),
    # ---------------------------------------------------------------- IV-A, Figure 4 (lab BBR vs CP)
    _c(
        "S0.bbr-vs-akamaie-small",
        "IV-A, Fig. 4 top",
        "the testbed BBR flow dominates the flows of Amazon, Edgecast, and Fastly. The same is true for AkamaiE",
        "lab BBR vs cdn-iw16: fness oriented towards lab BBR per run, both orders, mean",
        _setup("lab BBR vs CP-like AkamaiE", "0.5 BDP"),
        DOMINATES,
        (_CP,),
    ),
    _c(
        "S0.bbr-vs-google-small",
        "IV-A, Fig. 4 top",
        "For Google, however, our testbed flow always clearly loses to the CP.",
        "lab BBR vs cp-bbr: fness oriented towards the CP per run, both orders, mean",
        _setup("lab BBR vs CP-like Google (BBR)", "0.5 BDP"),
        DOMINATES,
        (
            _CP,
            _SAME_BBR,
        ),
    ),
    _c(
        "S0.bbr-vs-akamai-large",
        "IV-A, Fig. 4 bottom",
        "In the large buffer scenario, the flows of most CPs show very similar behavior in that the testbed flow dominates the competition.",
        "lab BBR vs cdn-iw16 and vs cdn-iw32: fness oriented towards lab BBR per run, both orders and both CPs, mean",
        _setup("lab BBR vs CP-like AkamaiE and AkamaiA", "2 BDP"),
        DOMINATES,
        (_CP,),
    ),
    _c(
        "S0.bbr-vs-akamai-large-order",
        "IV-A, Fig. 4 bottom",
        "The effect is hereby most visible when the testbed flow starts first while it is slightly ameliorated when the CP is the first flow.",
        "lab BBR vs cdn-iw16 and cdn-iw32: lab BBR's fness (oriented towards it) when it starts first minus when the CP starts first",
        _setup("lab BBR vs CP-like AkamaiE and AkamaiA", "2 BDP"),
        ABOVE_ZERO,
        (_CP,),
    ),
    _c(
        "S0.bbr-vs-cloudflare-large",
        "IV-A, Fig. 4 bottom",
        "Cloudflare being the only real exception as it achieves a balanced fairness level when the CP flow is started first",
        "lab BBR vs cp-bbr, the CP starting first: |fness| per run, mean",
        _setup("lab BBR vs CP-like Cloudflare (BBR), CP first", "2 BDP"),
        FAIR,
        (
            _CP,
            _SAME_BBR,
        ),
    ),
    # ---------------------------------------------------------------- IV-A, Table II (testbed flow first)
    _c(
        "S0.t2-cubic-retrans-bbr-cps",
        "IV-A, Table II",
        "for a testbed Cubic flow, Cloudflare and Google cause significantly higher retransmission counts than the other CPs",
        "retransmissions of the lab CUBIC flow (whole run) against cp-bbr minus against cdn-iw16 / cdn-iw32; lab flow first; "
        "0.5 and 2 BDP pooled",
        _setup("lab CUBIC (first) vs CP-like flows", "0.5 and 2 BDP"),
        ABOVE_ZERO,
        (_CP,),
    ),
    _c(
        "S0.t2-bbr-retrans-cloudflare-buffer",
        "IV-A, Table II",
        "Cloudflare induces very few retransmissions for the BBR testbed flow in the large buffer scenario but the most "
        "retransmissions in the small buffer scenario",
        "retransmissions of the lab BBR flow (whole run) against cp-bbr at 0.5 BDP minus at 2 BDP; lab flow first",
        _setup("lab BBR (first) vs CP-like Cloudflare", "0.5 and 2 BDP"),
        ABOVE_ZERO,
        (_CP,),
    ),
    _c(
        "S0.t2-bbr-retrans-cloudflare-most",
        "IV-A, Table II",
        "Cloudflare induces very few retransmissions for the BBR testbed flow in the large buffer scenario but the most "
        "retransmissions in the small buffer scenario",
        "retransmissions of the lab BBR flow (whole run) against cp-bbr minus against cdn-iw16 / cdn-iw32; 0.5 BDP; lab flow first",
        _setup("lab BBR (first) vs CP-like flows", "0.5 BDP"),
        ABOVE_ZERO,
        (_CP,),
    ),
    *(
        _c(
            f"S0.t2-{kind}-{cca.lower()}-{tag}",
            f"IV-A, Table II, {cca}@{buf}BDP",
            "TABLE II: Average queue size (QSize) and retransmissions (Retrans) of the testbed originating flows for the "
            "10 Mbps, 50 ms scenario with the testbed flow starting first.",
            ("mean bottleneck queue (packets, over the window)" if kind == "qsize" else "retransmissions of the lab flow (whole run)")
            + f", lab {cca} first against cdn-iw16, cdn-iw32, cp-bbr, mean of the three CPs' means",
            _setup(f"lab {cca} (first) vs CP-like flows", f"{buf} BDP"),
            Rule("value", published=pub, scale="ratio"),
            (_CP, _T2, _T2_MEAN),
        )
        for kind, cca, buf, tag, pub in (
            ("qsize", "BBR", "2", "2bdp", (43 + 42 + (40 + 40) / 2) / 3),
            ("qsize", "BBR", "0.5", "05bdp", (14 + 13 + (13 + 15) / 2) / 3),
            ("qsize", "Cubic", "2", "2bdp", (60 + 59 + (57 + 55) / 2) / 3),
            ("qsize", "Cubic", "0.5", "05bdp", (16 + 12 + (12 + 14) / 2) / 3),
            ("retrans", "BBR", "2", "2bdp", (175 + 210 + (22 + 215) / 2) / 3),
            ("retrans", "BBR", "0.5", "05bdp", (1244 + 967 + (1319 + 760) / 2) / 3),
            ("retrans", "Cubic", "2", "2bdp", (22 + 24 + (40 + 50) / 2) / 3),
            ("retrans", "Cubic", "0.5", "05bdp", (80 + 70 + (166 + 184) / 2) / 3),
        )
    ),
    # ---------------------------------------------------------------- IV-A, other RTT and bandwidth
    _c(
        "S0.rtt100-no-change",
        "IV-A, Higher RTT and Higher Bandwidth",
        "When we investigate our other settings with larger RTTs we observe no qualitative difference in fairness for all but AkamaiA.",
        "lab CUBIC and lab BBR vs cdn-iw16 and cp-bbr: fness oriented towards the lab flow at 100 ms minus at 50 ms "
        "(both orders, the four pairs pooled)",
        _setup("lab CUBIC / BBR vs CP-like AkamaiE and BBR", "0.5 BDP", base="10 Mbit/s, 100 ms against 50 ms"),
        Rule("value", published=0.0, scale="fness"),
        (_CP, "'no qualitative difference' read as a change of the mean fness within the fness tolerance"),
    ),
    _c(
        "S0.rtt100-akamaia",
        "IV-A, Higher RTT and Higher Bandwidth",
        "AkamaiA’s bimodal fairness distribution in the 50% BDP setting shifts towards the testbed dominating all measurements.",
        "lab BBR vs cdn-iw32: fness oriented towards lab BBR per run, both orders, mean",
        _setup("lab BBR vs CP-like AkamaiA", "0.5 BDP", base="10 Mbit/s, 100 ms base RTT"),
        DOMINATES,
        (_CP,),
    ),
    _c(
        "S0.50mbit-bbr-dominates",
        "IV-A, Higher RTT and Higher Bandwidth",
        "When increasing the bandwidth, testbed BBR flows still dominate",
        "lab BBR vs cdn-iw16 and vs cdn-iw32: fness oriented towards lab BBR per run, both orders and both CPs, mean",
        _setup("lab BBR vs CP-like AkamaiE and AkamaiA", "0.5 BDP", base="50 Mbit/s, 50 ms base RTT"),
        DOMINATES,
        (_CP,),
    ),
    _c(
        "S0.50mbit-cubic-bbr-cps",
        "IV-A, Higher RTT and Higher Bandwidth",
        "Looking at changes for testbed Cubic flows, we observe no significant difference when competing against Cloudflare and Google.",
        "lab CUBIC vs cp-bbr: fness oriented towards the CP at 50 Mbit/s minus at 10 Mbit/s (both orders)",
        _setup("lab CUBIC vs CP-like BBR", "0.5 BDP", base="50 Mbit/s against 10 Mbit/s, 50 ms"),
        Rule("value", published=0.0, scale="fness"),
        (_CP, "'no significant difference' read as a change of the mean fness within the fness tolerance"),
    ),
    _c(
        "S0.50mbit-cubic-others",
        "IV-A, Higher RTT and Higher Bandwidth",
        "For the others, we observe a slight trend towards more bandwidth for the CPs.",
        "lab CUBIC vs cdn-iw16 and cdn-iw32: fness oriented towards the CP at 50 Mbit/s minus at 10 Mbit/s (both orders, both CPs)",
        _setup("lab CUBIC vs CP-like AkamaiE and AkamaiA", "0.5 BDP", base="50 Mbit/s against 10 Mbit/s, 50 ms"),
        ABOVE_ZERO,
        (_CP, "the others are Amazon, Edgecast, Fastly and the two Akamai; only the Akamai have stand-ins"),
    ),
    _c(
        "S0.50mbit-akamaia-like-akamaie",
        "IV-A, Higher RTT and Higher Bandwidth",
        "Again, AkamaiA stands out in the small queue setting and behaves like AkamaiE when increasing the bandwidth.",
        "lab CUBIC vs cdn-iw32 minus lab CUBIC vs cdn-iw16: fness oriented towards the CP (both orders), at 50 Mbit/s",
        _setup("lab CUBIC vs CP-like AkamaiA and AkamaiE", "0.5 BDP", base="50 Mbit/s, 50 ms base RTT"),
        Rule("value", published=0.0, scale="fness"),
        (_CP, "'behaves like' read as a difference of the mean fness within the fness tolerance"),
    ),
    _c(
        "S0.cps-fairer-large-buffer",
        "IV-A, Takeaway",
        "Generally, it seems that the CC algorithms employed by the CPs are achieving better fairness with off-the-shelf "
        "algorithms when more buffer size is available.",
        "mean |fness| over every lab (CUBIC, BBR) vs CP-like pair at 2 BDP minus at 0.5 BDP (both orders)",
        _setup("lab CUBIC / BBR vs every CP-like flow", "2 BDP against 0.5 BDP"),
        BELOW_ZERO,
        (_CP,),
    ),
    # ---------------------------------------------------------------- IV-B, Figure 5 (CP vs CP)
    _c(
        "S0.cp-akamaie-vs-bbr-cps-small",
        "IV-B, Fig. 5 top",
        "For the scenarios where we focus on AkamaiE (left) and Amazon (middle), it is obvious that they are massively "
        "dominated by Cloudflare and Google.",
        "cdn-iw16 vs cp-bbr: fness oriented towards cp-bbr per run, both orders, mean",
        _setup("CP-like AkamaiE vs CP-like Cloudflare/Google", "0.5 BDP"),
        DOMINATES,
        (_CP,),
    ),
    _c(
        "S0.cp-akamaia-first-small",
        "IV-B, Fig. 5 top",
        "The same holds when they compete against a first flow originating from AkamaiA, while the behavior is much fairer "
        "when the AkamaiA flow is started second.",
        "cdn-iw16 vs cdn-iw32: |fness| when AkamaiA starts first minus when it starts second",
        _setup("CP-like AkamaiE vs CP-like AkamaiA", "0.5 BDP"),
        ABOVE_ZERO,
        (_CP,),
    ),
    _c(
        "S0.cp-google-first-small",
        "IV-B, Fig. 5 top",
        "Google generally dominates Cloudflare when it starts first",
        "cp-bbr vs cp-bbr: fness oriented towards the first flow per run, both orders, mean",
        _setup("CP-like Google vs CP-like Cloudflare (both cp-bbr)", "0.5 BDP"),
        DOMINATES,
        (_CP, "Google and Cloudflare are the same cp-bbr stand-in: S0 gives nothing that sets them apart"),
    ),
    _c(
        "S0.cp-bbr-cps-large-less",
        "IV-B, Fig. 5 bottom",
        "Regarding Cloudflare (right), we observe that the strict dominance is less profound than in the small buffer "
        "scenario yet still favoring it.",
        "cp-bbr vs cdn-iw16 and cdn-iw32: fness oriented towards cp-bbr at 2 BDP minus at 0.5 BDP (both orders, both CPs)",
        _setup("CP-like Cloudflare vs CP-like AkamaiE and AkamaiA", "2 BDP against 0.5 BDP"),
        BELOW_ZERO,
        (_CP,),
    ),
    _c(
        "S0.cp-bbr-dominates-akamai-large",
        "IV-B, Fig. 5 bottom",
        "However, Cloudflare does not seem to cooperate well with the two Akamai flows or Google, as it dominates them in "
        "all these scenarios.",
        "cp-bbr vs cdn-iw16 and vs cdn-iw32: fness oriented towards cp-bbr per run, both orders and both CPs, mean",
        _setup("CP-like Cloudflare vs CP-like AkamaiE and AkamaiA", "2 BDP"),
        DOMINATES,
        (_CP, "Google (also cp-bbr) is left out of this claim: against itself the stand-in cannot dominate"),
    ),
    _c(
        "S0.cp-akamaie-second-large",
        "IV-B, Fig. 5 bottom",
        "When the AkamaiE flow is the first contester (left), it is dominated by the other CPs while it seems to be able to "
        "better claim bandwidth when it enters as the second flow.",
        "cdn-iw16 vs cdn-iw32 and vs cp-bbr: AkamaiE's share of the pair when it starts second minus when it starts first",
        _setup("CP-like AkamaiE vs CP-like AkamaiA and Cloudflare/Google", "2 BDP"),
        ABOVE_ZERO,
        (_CP,),
    ),
    _c(
        "S0.cp-fairer-large-buffer",
        "IV-B, Takeaway",
        "As observed earlier, larger buffers seem to enable a better level of fairness even though they are still far from "
        "being equal in most cases.",
        "mean |fness| over every CP-like vs CP-like pair at 2 BDP minus at 0.5 BDP (both orders)",
        _setup("every pair of CP-like flows", "2 BDP against 0.5 BDP"),
        BELOW_ZERO,
        (_CP,),
    ),
    # ---------------------------------------------------------------- IV-C, Figure 6 (CP vs CP, 2 BDP, AQM)
    _c(
        "S0.codel-bbr-cps-fair",
        "IV-C, Fig. 6 top",
        "CoDel (top) seems to achieve a very high level of fairness when Amazon competes with Edgecast and Fastly and when "
        "Cloudflare competes with Google.",
        "cp-bbr vs cp-bbr under CoDel: |fness| per run, both orders, mean",
        _setup("CP-like Cloudflare vs CP-like Google (both cp-bbr)", "2 BDP", "CoDel (Linux defaults: 5 ms target, 100 ms interval)"),
        FAIR,
        (_CP, "Amazon vs Edgecast / Fastly: no stand-ins"),
    ),
    _c(
        "S0.codel-akamaie-first",
        "IV-C, Fig. 6 top",
        "What is more, when it is started first, Akamai also dominates Cloudflare and Google",
        "cdn-iw16 vs cp-bbr under CoDel, AkamaiE first: fness oriented towards AkamaiE per run, mean",
        _setup("CP-like AkamaiE (first) vs CP-like Cloudflare/Google", "2 BDP", "CoDel"),
        DOMINATES,
        (_CP,),
    ),
    _c(
        "S0.codel-intra",
        "IV-C, Takeaway",
        "it can be said that CoDel above all seems to improve the intra-protocol fairness in large buffers.",
        "cp-bbr vs cp-bbr (Cloudflare vs Google): mean |fness| under CoDel minus under drop-tail (both orders)",
        _setup("CP-like Cloudflare vs Google", "2 BDP", "CoDel against drop-tail"),
        BELOW_ZERO,
        (_CP, "intra-protocol CP pairs S0 names: Cloudflare/Google (BBR) and Amazon/Edgecast/Fastly (no stand-ins)"),
    ),
    _c(
        "S0.codel-mixed-unfair",
        "IV-C, Takeaway",
        "This is bad news for the heterogeneous Internet, as scenarios with different algorithms suffer from severe unfairness.",
        "under CoDel: mean |fness| of cp-bbr vs cdn-iw16 / cdn-iw32 (BBR vs CUBIC) minus that of cp-bbr vs cp-bbr (both orders)",
        _setup("CP-like pairs with different and with the same CCA", "2 BDP", "CoDel"),
        ABOVE_ZERO,
        (_CP,),
    ),
    _c(
        "S0.fq-codel-fair",
        "IV-C, Fig. 6 bottom",
        "Now, throughout all measurements, fairness is close to the equilibrium and we only observe slight variations.",
        "every CP-like vs CP-like pair under FQ_CoDel: |fness| per run, both orders and all pairs, mean",
        _setup("every pair of CP-like flows", "2 BDP", "FQ_CoDel (Linux defaults)"),
        FAIR,
        (_CP,),
    ),
    _c(
        "S0.fq-codel-improves",
        "IV-C, Fig. 6 bottom",
        "Shifting towards the flow-queuing variant (bottom), which is designed to produce a fair queuing, we observe a "
        "tremendous increase in fairness.",
        "every CP-like vs CP-like pair: mean |fness| under FQ_CoDel minus under CoDel (both orders)",
        _setup("every pair of CP-like flows", "2 BDP", "FQ_CoDel against CoDel"),
        BELOW_ZERO,
        (_CP,),
    ),
    _c(
        "S0.fq-codel-akamaie-slight",
        "IV-C, Fig. 6 bottom",
        "When looking at AkamaiE we see the largest variation relative to the others with AkamaiE slightly dominating most of the others.",
        "cdn-iw16 vs cdn-iw32 and vs cp-bbr under FQ_CoDel: fness oriented towards AkamaiE per run, both orders, mean",
        _setup("CP-like AkamaiE vs CP-like AkamaiA and Cloudflare/Google", "2 BDP", "FQ_CoDel"),
        ABOVE_ZERO,
        (_CP,),
    ),
    # ---------------------------------------------------------------- V, conclusion
    _c(
        "S0.buffer-inverts",
        "V",
        "We find that the bottleneck buffer size significantly impacts the fairness enabling it to invert observations when "
        "going from small to large.",
        "lab CUBIC vs cdn-iw32 (AkamaiA, IV-A: dominates CUBIC at 0.5 BDP, dominated at 2 BDP): fness oriented towards "
        "lab CUBIC per run (both orders), mean at 0.5 BDP (first group, < 0) and at 2 BDP (second group, > 0)",
        _setup("lab CUBIC vs CP-like AkamaiA", "0.5 BDP and 2 BDP"),
        Rule("sign-change", sign=-1),
        (_CP,),
    ),
)


def _on_testbed(sim_id: str, quantity: str, what: str, tail: str, deviation: str) -> Claim:
    """The simulator claim ``sim_id``'s finding (where, quote, rule) measured from stored testbed runs of S0's lab setting."""
    sim = next(c for c in _SIM_CLAIMS if c.id == sim_id)
    setup = f"{what} on ccfair's testbed; 10 Mbit/s, 50 ms, 0.5 BDP, drop-tail{tail}"
    return _c(f"{sim_id}.testbed", sim.where, sim.quote, quantity, setup, sim.rule, (deviation,), backend="testbed")


#: The same findings on stored testbed runs.
_TESTBED_CLAIMS = (
    _on_testbed(
        "S0.bbr-monopolizes",
        "CUBIC vs BBR: fness oriented towards BBR per run, both start orders pooled, mean",
        "lab CUBIC vs lab BBR",
        "; S0's timing; 5 runs per start order",
        "bench/data/realism-testbed-2026-11-25.jsonl: no start jitter, 5 runs per order (not 30)",
    ),
    _on_testbed("S0.self-fair-cubic", "CUBIC vs CUBIC: |fness| per run, mean", "lab CUBIC vs lab CUBIC", "; S0's timing", _TB_CUBIC),
    _on_testbed("S0.self-fair-bbr", "BBR vs BBR: |fness| per run, mean", "lab BBR vs lab BBR", "; the preset's runs", _TB_COLLECTED),
    _on_testbed(
        "S0.self-fair-paced",
        "paced CUBIC vs paced CUBIC: |fness| per run, mean",
        "lab paced CUBIC vs the same",
        "; the preset's runs",
        _TB_COLLECTED,
    ),
    _on_testbed(
        "S0.bbr-variance-cubic",
        "BBR vs BBR minus CUBIC vs CUBIC: fness oriented towards the first flow per run, difference of the two stds",
        "lab BBR vs BBR and lab CUBIC vs CUBIC",
        "",
        f"BBR runs: {_TB_EXTRA}; {_TB_CUBIC}",
    ),
    _on_testbed(
        "S0.pacing-vs-cubic",
        "mean |fness| of CUBIC vs paced CUBIC minus mean |fness| of CUBIC vs CUBIC",
        "lab CUBIC vs paced CUBIC (both orders) and CUBIC vs CUBIC",
        "",
        f"paced runs: {_TB_EXTRA}; {_TB_CUBIC}",
    ),
    _on_testbed(
        "S0.pacing-vs-paced",
        "mean |fness| of paced CUBIC vs paced CUBIC minus mean |fness| of CUBIC vs CUBIC",
        "lab paced CUBIC vs paced CUBIC and CUBIC vs CUBIC",
        "",
        f"paced runs: {_TB_EXTRA}; {_TB_CUBIC}",
    ),
)

#: Every S0 claim: the simulator's, then the testbed twins.
CLAIMS: tuple[Claim, ...] = _SIM_CLAIMS + _TESTBED_CLAIMS

_NO_STANDIN = "no stand-in for Amazon, Edgecast or Fastly: S0 says only that they 'use a similar algorithm' (IV-C), nothing to configure"
_MODES = "a split of runs into two modes needs a threshold S0 does not give (the figure shows two clusters, no numbers)"

#: S0's findings not on the board, each with the reason.
LEFT_OUT: tuple[tuple[str, str], ...] = (
    ("Apart from these two, Amazon and Edgecast struggle against our Cubic flow even when their flow starts first", _NO_STANDIN),
    ("In contrast, Fastly—at least when having a headstart—is able to achieve rough fairness.", _NO_STANDIN),
    (
        "Similarly for Amazon, Edgecast, and Fastly, when the testbed initiates the first flow, they struggle to gain enough bandwidth.",
        _NO_STANDIN,
    ),
    (
        "For Amazon and Fastly, we observe a bi-modal distribution of the traffic shares, one that more closely matches the "
        "testbed-first case and another that tends to favor the CP.",
        _NO_STANDIN + "; " + _MODES,
    ),
    (
        "AkamaiA shows an interesting behavior, as part of the experimental iterations also show the clear dominance of the "
        "testbed flow while about half of the iterations either show a very fair result (when the testbed is started first) "
        "or a dominance of the Akamai flow (when Akamai is started first).",
        _MODES,
    ),
    (
        "Cloudflare shows a wide range of observed fairness ratios from dominating the testbed flow to the opposite.",
        "a range 'from dominating to the opposite' has no number to compare (S0's figure only); the spread of BBR against "
        "BBR is on the board (S0.bbr-variance-*)",
    ),
    (
        "Especially, Amazon, Edgecast, and Fastly can claim slightly more bandwidth on average.",
        _NO_STANDIN,
    ),
    (
        "testbed BBR flows still dominate but the fairness focusses for Cloudflare and Google, especially for smaller buffer sizes",
        "'focusses' (a narrower distribution at 50 Mbit/s) has no number; the domination half is S0.50mbit-bbr-dominates",
    ),
    (
        "Yet in small buffer settings, BBR currently claims nearly all bandwidth and shows a large variability in fairness "
        "and performance when competing with other BBR flows causing unpredictable performance.",
        "a summary of III-E: measured as S0.bbr-monopolizes and S0.bbr-variance-* (the same runs would count twice)",
    ),
    (
        "Especially Cloudflare (right) seems to dominate most of the other CPs with the only exception being when it is "
        "forced to compete with Google and AkamaiA.",
        "the same pairs and runs as S0.cp-akamaie-vs-bbr-cps-small (Cloudflare vs AkamaiE), whose sentence is more specific",
    ),
    (
        "Here, roughly half of the results indicate significant domination by AkamaiA.",
        _MODES,
    ),
    (
        "When interacting, Amazon, Edgecast, and Fastly show a rather high degree of fairness.",
        _NO_STANDIN,
    ),
    (
        "When AkamaiE competes against Edgecast and Fastly, a large range of observed fairness values can be seen, ranging "
        "from medium dominance of Edgecast and Fastly to total domination of AkamaiE.",
        _NO_STANDIN,
    ),
    (
        "When the Cloudflare flow starts first, there is a higher degree of fairness when competing against Amazon, "
        "Edgecast, and Fastly, yet they struggle when Cloudflare’s flow starts first.",
        _NO_STANDIN,
    ),
    (
        "Especially when competing against Cloudflare, Edgecast, and Google, high fairness levels are achieved.",
        _NO_STANDIN + " (the sentence is about Amazon)",
    ),
    (
        "For the AkamaiE flow, the application of CoDel comes in hand with a clear domination of Akamai when competing "
        "against Amazon, Edgecast, and Fastly.",
        _NO_STANDIN,
    ),
    (
        "AkamaiE starting first is hereby characterized by a dominance of AkamaiE half of the time and a fair behavior the "
        "other half, while this is the exact opposite if AkamaiA is started first.",
        _MODES,
    ),
    (
        "Looking at Amazon, we see a slight advantage that diminishes for Edgecast and Fastly.",
        _NO_STANDIN,
    ),
    (
        "In the Cloudflare case, Amazon, Edgecast and Fastly get slightly less bandwidth while Google is very fair and the "
        "Akamai’s again showing a slight bimodal pattern.",
        _NO_STANDIN + "; Google vs Cloudflare under FQ_CoDel is inside S0.fq-codel-fair",
    ),
    (
        "Luckily, the flow-queuing variant enables a large degree of fairness even in heterogeneous settings.",
        "a summary of IV-C: the same runs as S0.fq-codel-fair",
    ),
)
