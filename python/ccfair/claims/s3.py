"""S3's findings: Fejes, Gombos, Laki, Nádas, "On the Incompatibility of Scalable
Congestion Controls over the Internet" (extended version).

S3's testbed: one DPDK bottleneck (STEP, PI2, CSAQM, TailDrop) at 1 or
10 Gbit/s, base RTTs 5 and 50 ms, delay target D = K x RTT, a 500 ms
("infinite") buffer or, in the small-buffer cases, 1.33 x D; N connections
starting uniformly in [0, 1] s; BBRv2 (its scalable ECN response) and DCTCP
(Linux 5.4); 3-minute runs. ccfair runs the same on the simulator
(``ccfair.presets.s3``, whose module docstring has the setup).

Quantities, as S3 defines them (Section V): the *relative throughput* of a
connection class (same CC and base RTT) is the class's mean throughput over
the fair share C / N; *utilization* is delivered over capacity; the *average
delay* is the mean queueing delay relative to D; *marking ratio* is the
class's ECN-marked packets over its sent packets; *JFI* is Jain's index over
all connections.

Where S3 states a finding in words ("quite good", "reasonable", "very
small") the claim reads it against one bar declared here before any result
was looked at: :data:`GOOD_JFI`, :data:`REASONABLE_JFI`, :data:`GOOD_UTIL`,
:data:`SMALL_REL`.
"""

from __future__ import annotations

from ccfair.claims.model import Claim, Rule
from ccfair.claims.rules import ABOVE_ZERO

#: "good" / "acceptable" fairness: Jain's index at least this.
GOOD_JFI = 0.9
#: "reasonable" fairness (S3 uses it for "not perfect" cases): Jain's index at least this.
REASONABLE_JFI = 0.8
#: "quite good" utilization.
GOOD_UTIL = 0.95
#: "very small throughput" of a class: relative throughput below this (half its fair share).
SMALL_REL = 0.5
#: S3's run length; the preset's run lengths are in ccfair.presets.s3 (RUN_S).
S3_RUN_S = 180

_RUNS = (
    "1 Gbit/s bottleneck, starts uniform in [0, 1] s, BBRv2 with its scalable ECN response, DCTCP (Linux 5.1+ "
    "loss response); runs of 20 s at 5 ms (window 5-20 s) and 60 s when a 50 ms flow is present (window 20-60 s)"
)
_DURATION = (
    "run length: S3 ran 3 minutes; ccfair runs 20 s (5 ms) and 60 s (50 ms) to fit the board's time budget; "
    "docs/in-network.md 'Run length' has what is known to change with the run length"
)
_RATE = "1 Gbit/s only: S3's 10 Gbit/s runs cost ten times as much per simulated second"
_TESTBED = "S3's Linux 5.4 hosts with GSO/GRO on and unpaced DCTCP; ccfair's DCTCP is unpaced with TSO/GRO modelled (docs/fidelity.md)"


def _c(cid: str, where: str, quote: str, quantity: str, setup: str, deviations: tuple[str, ...], rule: Rule) -> Claim:
    return Claim(f"S3.{cid}", "S3", where, quote, quantity, setup, deviations, rule, "s3")


_MONO_DCTCP = f"mono-DCTCP, RTT 5 ms, 500 ms buffer, STEP / PI2 / CSAQM, N in {{2, 10}}, K in {{0.05, 0.17, 1}}; {_RUNS}"
_MONO_BBR = f"mono-BBRv2 at the mono-DCTCP grid's points; {_RUNS}"
_MULTI = f"multi-CC (N/2 BBRv2 + N/2 DCTCP), RTT 5 ms, 500 ms buffer, N in {{2, 10, 20}}, K in {{0.05, 0.17, 0.5, 2}}; {_RUNS}"
_MULTI50 = f"multi-CC at RTT 50 ms, N in {{2, 10}}, K in {{0.17, 2}}, paired with the 5 ms points; {_RUNS}"
_MRTT = (
    "mono-CC multi-RTT: 4 connections at 50 ms and 16 at 5 ms, target D = K x 5 ms, STEP and PI2 at K in {0.5, 10}, "
    f"CSAQM at K in {{0.17, 0.5, 1, 10}}; {_RUNS}"
)
_MIX_RTT = (
    "multi-CC multi-RTT 2-2-8-8 (BBRv2-50 ms, DCTCP-50 ms, BBRv2-5 ms, DCTCP-5 ms), target D = K x 5 ms, "
    f"K in {{0.5, 10}}, 500 ms buffer and the small buffer (1.33 x D); {_RUNS}"
)
_STD = (_DURATION, _TESTBED)

CLAIMS: tuple[Claim, ...] = (
    # --- V.A mono-CC, equal RTT: DCTCP -------------------------------------------------------
    _c(
        "mono-dctcp-fair",
        "Section V.A, Figure 2",
        "though the fairness among the connections are quite good in most cases",
        f"JFI minus {GOOD_JFI} ('quite good'); one value per grid point",
        _MONO_DCTCP,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mono-dctcp-util-small-target",
        "Section V.A, Figure 1",
        "The worst utilization can be seen for small target delays with limited number of flows (2 and 10).",
        "utilization at K = 1 minus utilization at K = 0.05, per AQM and N in {2, 10}",
        _MONO_DCTCP,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "dctcp-util",
        "Section V.A, Figure 1",
        "$K = 0.17$  with STEP AQM reflects the recommended ECN-marking setup for DCTCP, resulting in utilization below 60% for two flows.",
        "0.60 minus the utilization of 2 DCTCP flows, STEP, K = 0.17, RTT 5 ms; one value per run (seeds 1-5)",
        _MONO_DCTCP,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "step-lowest-util",
        "Section V.A, Figure 1",
        "Surprisingly, the STEP AQM used during the DCTCP design provides the smallest utilization.",
        "the lower of PI2's and CSAQM's utilization minus STEP's, per (N, K)",
        _MONO_DCTCP,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mono-dctcp-delay",
        "Section V.A, Figure 3",
        "all the investigated AQMs keep the queuing delay below the target value (1 in the figure) in most of the cases.",
        "1 minus the mean queueing delay relative to D; one value per grid point",
        _MONO_DCTCP,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "step-conservative",
        "Section V.A, Figure 3",
        "STEP looks somewhat conservative while PI2 cannot properly control the delay for 2 flows when the target value is small.",
        "first half: the lower of PI2's and CSAQM's mean delay relative to D minus STEP's, per (N, K)",
        _MONO_DCTCP,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "pi2-delay-2-flows",
        "Section V.A, Figure 3",
        "STEP looks somewhat conservative while PI2 cannot properly control the delay for 2 flows when the target value is small.",
        "second half: PI2's mean delay relative to D minus 1, N = 2, K in {0.05, 0.17}; seeds 1-3",
        _MONO_DCTCP,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "small-buffer-util",
        "Section V.A, Figure 4",
        "Figure 4 shows that the utilization in the small buffer case is even worse.",
        "mono-DCTCP utilization with the 500 ms buffer minus with the small buffer (1.33 x D), per AQM, N in {2, 10}, K in {0.17, 1}",
        _MONO_DCTCP + "; the same points with the small buffer",
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mono-dctcp-50ms-util",
        "Section V.A",
        "Though the utilization becomes higher, the fairness is significantly degraded, except for CSAQM (see [17]).",
        "first part: mono-DCTCP utilization at 50 ms minus at 5 ms, per AQM, N = 10, K in {0.17, 1}",
        _MONO_DCTCP + "; the N = 10 points also at 50 ms",
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mono-dctcp-50ms-unfair",
        "Section V.A",
        "Though the utilization becomes higher, the fairness is significantly degraded, except for CSAQM (see [17]).",
        "second part: mono-DCTCP JFI at 5 ms minus at 50 ms, STEP and PI2, N = 10, K in {0.17, 1}",
        _MONO_DCTCP + "; the N = 10 points also at 50 ms",
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mono-dctcp-50ms-csaqm",
        "Section V.A",
        "Though the utilization becomes higher, the fairness is significantly degraded, except for CSAQM (see [17]).",
        f"the exception: mono-DCTCP JFI under CSAQM at 50 ms minus {GOOD_JFI}, N = 10, K in {{0.17, 1}}",
        _MONO_DCTCP + "; the N = 10 points also at 50 ms",
        _STD,
        ABOVE_ZERO,
    ),
    # --- V.A mono-CC, equal RTT: BBRv2 -------------------------------------------------------
    _c(
        "mono-bbr-util",
        "Section V.A, Figure 5",
        "One can observe that the utilization is higher than for DCTCP, even for small target delays and small number of TCP connections.",
        "mono-BBRv2 utilization minus mono-DCTCP utilization at the same (AQM, N, K), RTT 5 ms",
        _MONO_BBR,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mono-bbr-fair",
        "Section V.A",
        "Note that we have got acceptable fairness for all the investigated AQMs (see [17]).",
        f"mono-BBRv2 JFI minus {GOOD_JFI}, RTT 5 ms; one value per grid point",
        _MONO_BBR,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mono-bbr-50ms-step-k",
        "Section V.A, Figure 6",
        "With STEP, Jain's fairness index only starts reducing as the delay target increases.",
        "mono-BBRv2 at 50 ms under STEP: JFI at K = 0.05 minus JFI at K = 1, N in {2, 10}",
        f"mono-BBRv2, RTT 50 ms, STEP and PI2 at N in {{2, 10}}, CSAQM at N = 10, K in {{0.05, 1}}; {_RUNS}",
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mono-bbr-50ms-pi2-delay",
        "Section V.A, Figure 6",
        "the target delay is properly kept by STEP and CSAQM, but PI2 exceeds delay targets for small  $K$ s and leads "
        "to underutilization in these cases.",
        "PI2's mean delay relative to D minus 1, mono-BBRv2 at 50 ms, K = 0.05, N in {2, 10}",
        f"mono-BBRv2, RTT 50 ms, STEP and PI2 at N in {{2, 10}}, CSAQM at N = 10, K in {{0.05, 1}}; {_RUNS}",
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mono-bbr-50ms-pi2-util",
        "Section V.A, Figure 6",
        "the target delay is properly kept by STEP and CSAQM, but PI2 exceeds delay targets for small  $K$ s and leads "
        "to underutilization in these cases.",
        "STEP's utilization minus PI2's, mono-BBRv2 at 50 ms, K = 0.05, N in {2, 10}",
        f"mono-BBRv2, RTT 50 ms, STEP and PI2 at N in {{2, 10}}, CSAQM at N = 10, K in {{0.05, 1}}; {_RUNS}",
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mono-bbr-50ms-delay-kept",
        "Section V.A, Figure 6",
        "the target delay is properly kept by STEP and CSAQM, but PI2 exceeds delay targets for small  $K$ s and leads "
        "to underutilization in these cases.",
        "1 minus the mean delay relative to D under STEP and CSAQM, mono-BBRv2 at 50 ms; one value per point",
        f"mono-BBRv2, RTT 50 ms, STEP and PI2 at N in {{2, 10}}, CSAQM at N = 10, K in {{0.05, 1}}; {_RUNS}",
        _STD,
        ABOVE_ZERO,
    ),
    # --- V.B multi-CC, equal RTT -----------------------------------------------------------------
    _c(
        "multi-util",
        "Section V.B, Figure 9",
        "the utilization is quite good for all the AQMs, significant deviation from full utilization can only be seen "
        "for small number of connections with small delay targets.",
        f"utilization minus {GOOD_UTIL} ('quite good') at every point except N = 2 with K <= 0.17",
        _MULTI,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "multi-unfair",
        "Section V.B, Figure 7",
        "Except CSAQM, significant unfairness can be observed.",
        f"{GOOD_JFI} minus the JFI under STEP and PI2; one value per point",
        _MULTI,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "step-dctcp",
        "Section V.B, Figure 8",
        "while STEP favors DCTCP flows in most cases, in PI2 DCTCP flows are suppressed by the BBR traffic, esp.",
        "under STEP: DCTCP's minus BBRv2's relative throughput; one value per point",
        _MULTI,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "pi2-bbr2",
        "Section V.B, Figure 8",
        "while STEP favors DCTCP flows in most cases, in PI2 DCTCP flows are suppressed by the BBR traffic, esp.",
        "under PI2: BBRv2's minus DCTCP's relative throughput; one value per point",
        _MULTI,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "pi2-bbr2-small-n",
        "Section V.B, Figure 8",
        "while STEP favors DCTCP flows in most cases, in PI2 DCTCP flows are suppressed by the BBR traffic, esp.",
        "'esp. for small number of flows': under PI2, (BBRv2 minus DCTCP relative throughput) at N = 2 minus the same at N = 20, per K",
        _MULTI,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "pi2-k2-ratio",
        "Section V.B, Figure 8",
        "Increased target delay ( $K = 2$ ) can help PI2 to achieve an acceptable 1:3 DCTCP- $\\pi$  fairness ratio.",
        "DCTCP's relative throughput over BBRv2's under PI2 at K = 2 (1:3 = 0.33); one value per N in {2, 10, 20} and seed 1-3",
        _MULTI,
        _STD,
        Rule("value", published=1 / 3, scale="ratio"),
    ),
    _c(
        "csaqm-good",
        "Section V.B, Figure 7",
        "Through its in-network resource sharing mechanisms, CSAQM can apply different empirical marking probabilities "
        "for the dissonant flows, taking their specific behavior into account and thus resulting in good fairness even "
        "among BBR and DCTCP traffic.",
        f"CSAQM's JFI minus {GOOD_JFI}, on its own; one value per point",
        _MULTI,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "csaqm-best",
        "Section V.B, Figure 7",
        "Except CSAQM, significant unfairness can be observed.",
        "CSAQM's JFI minus the higher of STEP's and PI2's at the same point",
        _MULTI,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "pi2-marks-equal",
        "Section V.B, Figure 10",
        "While PI2 and BBR result in the same ECN-marking ratio for both BBR and DCTCP, CSAQM can find the appropriate "
        "marking ratio for the different classes.",
        "first half: BBRv2's marking ratio over DCTCP's under PI2 (the same ratio: 1); one value per point",
        _MULTI,
        _STD + ("'PI2 and BBR' read as 'PI2' (BBR is not an AQM; STEP is not named)",),
        Rule("value", published=1.0, scale="ratio"),
    ),
    _c(
        "csaqm-marks-differ",
        "Section V.B, Figure 10",
        "While PI2 and BBR result in the same ECN-marking ratio for both BBR and DCTCP, CSAQM can find the appropriate "
        "marking ratio for the different classes.",
        "second half: |ln(BBRv2 marking ratio / DCTCP marking ratio)| under CSAQM minus the same under PI2, per point",
        _MULTI,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "rtt50-fairer",
        "Section V.B, Figure 11",
        "larger RTT helps both STEP and PI2 in achieving slightly better fairness,",
        "JFI at 50 ms minus JFI at 5 ms at the same (AQM, N, K), STEP and PI2",
        _MULTI50,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "pi2-large-k",
        "Section V.B, Figures 11-13",
        "PI2 only shows some improvements if delay target factor  $K$  is large.",
        "PI2's JFI at K = 2 minus at K = 0.17, per N and RTT",
        _MULTI + "; " + _MULTI50,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "csaqm-less-prone",
        "Section V.B, Figures 11-13",
        "CSAQM can still reach good fairness in most cases, and is less prone to its parameter settings.",
        "spread of JFI over K (population std) of STEP and PI2 (their mean) minus CSAQM's, per N and RTT",
        _MULTI + "; " + _MULTI50,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "csaqm-50ms-reasonable",
        "Section V.B, Figure 11",
        "It is not perfect, but reasonable even for 50 ms RTT and low number of flows.",
        f"CSAQM's JFI at 50 ms minus {REASONABLE_JFI} ('reasonable'), N in {{2, 10}}, K in {{0.17, 2}}",
        _MULTI50,
        _STD,
        ABOVE_ZERO,
    ),
    # --- V.C heterogeneous RTTs ------------------------------------------------------------------
    _c(
        "rtt-dctcp",
        "Section V.C, Figure 14",
        "connections with 5 ms RTT reach much higher throughput than with 50 ms as expected.",
        "mono-DCTCP multi-RTT: relative throughput of the 5 ms class minus the 50 ms class, per AQM and K",
        _MRTT,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "rtt-dctcp-large-k",
        "Section V.C, Figure 14",
        "Large delay targets in STEP and PI2 can slightly improve the fairness between the flow classes of different RTT.",
        "mono-DCTCP multi-RTT, STEP and PI2: the 50 ms class's relative throughput over the 5 ms class's at K = 10 minus at K = 0.5",
        _MRTT,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "rtt-csaqm-large-k",
        "Section V.C, Figure 14",
        "even CSAQM can only handle large differences in the RTTs if the delay target is large (around the maximum RTT).",
        "mono-DCTCP multi-RTT under CSAQM: the 50 ms class's relative throughput over the 5 ms class's at K = 10 "
        "(D = 50 ms) minus at K in {0.17, 0.5, 1}",
        _MRTT,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "rtt-bbr-fairer",
        "Section V.C, Figure 15",
        "In the BBR case, both STEP and PI2 show much better fairness, the 50 ms RTT flows get somewhat higher share in "
        "general and as the target delay increases it becomes even worse.",
        "multi-RTT, STEP and PI2: JFI with BBRv2 minus JFI with DCTCP at the same (AQM, K)",
        _MRTT + "; BBRv2 and DCTCP",
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "rtt-bbr-50-higher",
        "Section V.C, Figure 15",
        "In the BBR case, both STEP and PI2 show much better fairness, the 50 ms RTT flows get somewhat higher share in "
        "general and as the target delay increases it becomes even worse.",
        "mono-BBRv2 multi-RTT, STEP and PI2: relative throughput of the 50 ms class minus the 5 ms class, per AQM and K",
        _MRTT + "; BBRv2",
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "rtt-bbr-50-grows-with-k",
        "Section V.C, Figure 15",
        "In the BBR case, both STEP and PI2 show much better fairness, the 50 ms RTT flows get somewhat higher share in "
        "general and as the target delay increases it becomes even worse.",
        "mono-BBRv2 multi-RTT, STEP and PI2: (50 ms class minus 5 ms class relative throughput) at K = 10 minus at K = 0.5",
        _MRTT + "; BBRv2",
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "rtt-bbr-csaqm",
        "Section V.C, Figure 15",
        "CSAQM can enforce good fairness as long as  $K < 1$  (until the delay-based congestion detection of BBR is not turned on).",
        f"mono-BBRv2 multi-RTT under CSAQM: JFI minus {GOOD_JFI} at K in {{0.17, 0.5}}",
        _MRTT + "; BBRv2",
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mix-rtt-unfair",
        "Section V.C, Figure 17",
        "fairness with STEP and PI2 is quite bad in general. DCTCP-50ms gets very small throughput",
        f"first part: {REASONABLE_JFI} minus the JFI under STEP and PI2 (2-2-8-8, 500 ms buffer), per AQM and K",
        _MIX_RTT,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mix-rtt-dctcp50-small",
        "Section V.C, Figure 16",
        "fairness with STEP and PI2 is quite bad in general. DCTCP-50ms gets very small throughput",
        f"second part: {SMALL_REL} minus the DCTCP-50 ms class's relative throughput under STEP and PI2, per AQM and K",
        _MIX_RTT,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mix-rtt-csaqm",
        "Section V.C, Figure 17",
        "CSAQM provides reasonable fairness for all connection groups, except for DCTCP-50ms when the number of flows is high (4-4-16-16).",
        f"CSAQM's JFI (2-2-8-8, 500 ms buffer) minus {REASONABLE_JFI}, per K",
        _MIX_RTT,
        _STD + ("the 4-4-16-16 exception is not run (time budget)",),
        ABOVE_ZERO,
    ),
    _c(
        "mix-rtt-pi2-bbr50",
        "Section V.C, Figure 16",
        "It is interesting to note that PI2 gives the BBR-50ms class unfairly high share, while STEP is free of this symptom.",
        "first part: the BBRv2-50 ms class's relative throughput under PI2 minus 1, per K",
        _MIX_RTT,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mix-rtt-step-bbr50",
        "Section V.C, Figure 16",
        "It is interesting to note that PI2 gives the BBR-50ms class unfairly high share, while STEP is free of this symptom.",
        "second part: the BBRv2-50 ms class's relative throughput under PI2 minus under STEP, per K",
        _MIX_RTT,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mix-rtt-small-buffer",
        "Section V.C, Figure 18",
        "Figure 18 shows that the fairness in the small physical buffer case is better than in case of long buffers for "
        "STEP and PI2, while for CSAQM it consistently remains reasonable.",
        "2-2-8-8: JFI with the small buffer minus with the 500 ms buffer, STEP and PI2, per K",
        _MIX_RTT,
        _STD,
        ABOVE_ZERO,
    ),
    _c(
        "mix-rtt-small-buffer-csaqm",
        "Section V.C, Figure 18",
        "Figure 18 shows that the fairness in the small physical buffer case is better than in case of long buffers for "
        "STEP and PI2, while for CSAQM it consistently remains reasonable.",
        f"2-2-8-8 with the small buffer: CSAQM's JFI minus {REASONABLE_JFI}, per K",
        _MIX_RTT,
        _STD,
        ABOVE_ZERO,
    ),
    # --- VII summary -----------------------------------------------------------------------------
    _c(
        "bbr-small-buffer",
        "Section VII",
        "the performance of BBRv2 is generally superior to that of DCTCP, especially for small buffers.",
        "mono-CC utilization with the small buffer: BBRv2's minus DCTCP's at the same (AQM, N, K), RTT 5 ms",
        _MONO_DCTCP + "; both CCs, the small-buffer points",
        _STD,
        ABOVE_ZERO,
    ),
)

#: Findings not on the board: (verbatim quote, why).
LEFT_OUT: tuple[tuple[str, str], ...] = (
    (
        "Strangely, the buffer size requirement for decent utilization is larger for DCTCP than for Cubic (see [7]).",
        "compares with Cubic results of another paper ([7]); S3 has no Cubic runs",
    ),
    (
        "With PI2, it is not so clear; when the number of connections is small (2 and 10), the observed behavior is "
        "similar to the one of STEP, but for 40 and 100 connections, the obtained unfairness is significant and seems "
        "independent of the target delay parameter.",
        "N = 40 is outside S3's stated grid (2, 10, 20, 100) and N = 100 runs at 50 ms cost about 3 minutes of CPU "
        "each; not within the board's time budget",
    ),
    (
        "One can also observe that the marking ratios required for the two CCs rely on both  $N$  and  $K$ , "
        "indicating fundamental differences on how ECN-CE is handled by them.",
        "no direction or size given; the class difference itself is S3.csaqm-marks-differ",
    ),
    (
        "but at 10 Gbps the fairness among the two classes is generally worse than at a 1 Gbps bottleneck.",
        "10 Gbit/s runs cost ten times as much per simulated second; docs/in-network.md has a 10 Gbit/s table outside the board",
    ),
    (
        "One can also notice that drawing a general rule of thumb for appropriate parameter settings seems hard or "
        "even impossible in case of STEP and PI2.",
        "an opinion about parameter tuning, not a measured finding",
    ),
    (
        "One can also observe that while DCTCP flows with smaller RTT suppresses the others with larger RTT, in BBR "
        "the opposite behavior can be experienced, also reflecting fundamental differences between these CCs.",
        "the same two findings as S3.rtt-dctcp and S3.rtt-bbr-50-higher",
    ),
    (
        "Interestingly, BBR with CSAQM can reach very good fairness even for extremely small delay targets.",
        "part of S3.rtt-bbr-csaqm (its K = 0.17 point); 'very good' has no separate bar",
    ),
    (
        "in some cases BBR-5ms flows are also suppressed",
        "existential ('in some cases'), no setting named; it cannot fail on any grid",
    ),
    (
        "The utilization with DCTCP was much worse than expected, according to [10].",
        "the same finding as S3.dctcp-util (Section VI restates it)",
    ),
    (
        "They perform poorly in both multi-CC equal-RTT; and mono-CC multi-RTT scenarios.",
        "the summary of S3.multi-unfair and S3.rtt-dctcp",
    ),
)
