"""S4's findings: Bhatti & Bateman, "Transport Protocol Throughput Fairness" (J. Networks 2009).

Pair-wise testbed runs (100 Mbit/s dumbbell, 1 BDP router buffer, RTT 25 / 50
/ 100 / 200 ms, 300 s, flow 1 at 0 s and flow 2 at 30 s, 1 s iperf samples
from 60 s to 300 s, five runs per setting) of NewReno, BIC, CUBIC, Compound
and DCCP/CCID2, and a 14-flow, 14-CCA ns-2 simulation (900 s, flows every
30 s, analysed from 420 s, one run per RTT). ccfair runs the same on the
simulator (``ccfair.presets.s4``; its module docstring has the setup).

Quantities, as S4 defines them:

- J: Jain's index of the flows' 1 s throughputs, J(t) (S4 eq. 2), averaged
  over the analysis window ("J is the mean value of J(t) values").
- NRU of a flow (S4 eqs. 3-5, 10): U_n = mean over the window of
  10 log10(r_n(t) / Rr_n) dB, with Rr_n the mean throughput of the same CCA
  in the same flow position in the same-CCA pair at that RTT (Table IV; for
  14 flows, the run of 14 flows of one CCA). U_N is the mean of the U_n.
- Throughput shares: a flow's mean throughput over 60-300 s divided by the
  pair's total.

The published numbers below are S4's tables, transcribed once; each claim's
``published`` derives from them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ccfair.claims.model import Claim, Rule
from ccfair.claims.rules import ABOVE_ZERO

RTTS_MS = (25, 50, 100, 200)
RTTS_14 = (25, 50, 75, 100, 125, 150, 175, 200)
LABEL = {"reno": "NewReno", "bic": "BIC", "cubic": "CUBIC", "ctcp": "Compound", "ccid2": "CCID2"}

# S4's tables, each number transcribed once. Tables III-VI: the rows as S4 prints them (the claims
# quote them), the numbers read from those rows; the other tables: the numbers.


def _cells(row: str) -> list[str]:
    """The cells of a printed row ``| label | a | b | ... |`` after its label."""
    return [x.strip() for x in row.strip(" |").split("|")][1:]


def _pairs(row: str) -> tuple[tuple[int, int], ...]:
    """A printed row of (flow 1, flow 2) throughputs per RTT as pairs of Mbit/s."""
    n = [int(x) for x in _cells(row)]
    return tuple(zip(n[0::2], n[1::2]))


def _row(label: str, cells: Iterable[str]) -> str:
    """A table row as S4 prints it."""
    return f"| {label} | {' | '.join(cells)} |"


#: Tables III-VI as printed (Table III with the figure of its example; Table V with a second figure after each J).
_TABLE_III_ROWS = {
    "reno": "| NewReno | 0.93 | 0.94 | 0.93 | 0.93 | 3(b) |",
    "bic": "| BIC | 0.91 | 0.91 | 0.89 | 0.92 | 4(b) |",
    "cubic": "| CUBIC | 0.90 | 0.90 | 0.90 | 0.90 | 5(b) |",
    "ctcp": "| Compound TCP | 0.97 | 0.95 | 0.93 | 0.90 | 6(b) |",
    "ccid2": "| CCID2 | 0.96 | 0.95 | 0.97 | 0.91 | 7(b) |",
}
_TABLE_IV_ROWS = {
    "reno": "| NewReno | 39 | 55 | 40 | 54 | 38 | 56 | 38 | 56 |",
    "bic": "| BIC | 33 | 61 | 33 | 61 | 32 | 63 | 34 | 60 |",
    "cubic": "| CUBIC | 33 | 61 | 33 | 62 | 33 | 61 | 33 | 62 |",
    "ctcp": "| Compound TCP | 43 | 51 | 52 | 42 | 49 | 43 | 44 | 43 |",
    "ccid2": "| CCID2 | 43 | 51 | 47 | 47 | 45 | 48 | 33 | 32 |",
}
_TABLE_V_ROWS = {
    "reno": "| Reno | 0.94, 0.01 | 0.96, 0.01 | 0.94, 0.02 | 0.91, 0.03 |",
    "bic": "| BIC | 0.94, 0.02 | 0.80, 0.07 | 0.67, 0.11 | 0.78, 0.1 |",
    "cubic": "| CUBIC | 0.94, 0.02 | 0.80, 0.08 | 0.69, 0.11 | 0.85, 0.1 |",
    "ctcp": "| Compound TCP | 0.93, 0.02 | 0.85, 0.05 | 0.69, 0.11 | 0.85, 0.9 |",
}
_TABLE_VI_ROWS = {
    "reno": "| NewReno | 56 | 38 | 52 | 42 | 41 | 50 | 32 | 36 |",
    "bic": "| BIC | 40 | 54 | 26 | 67 | 16 | 74 | 23 | 70 |",
    "cubic": "| CUBIC | 40 | 54 | 25 | 68 | 16 | 74 | 27 | 67 |",
    "ctcp": "| Compound TCP | 38 | 56 | 30 | 63 | 16 | 74 | 28 | 65 |",
}
#: Table III: J of two flows of the same protocol, per RTT (25, 50, 100, 200 ms).
TABLE_III = {c: tuple(float(x) for x in _cells(row)[:4]) for c, row in _TABLE_III_ROWS.items()}
#: Table IV: throughput (Mbit/s) of flow 1 and flow 2 of the same protocol, per RTT.
TABLE_IV = {c: _pairs(row) for c, row in _TABLE_IV_ROWS.items()}
#: Table V: J, flow 1 = CCID2, flow 2 = the TCP, per RTT.
TABLE_V = {t: tuple(float(x.split(",")[0]) for x in _cells(row)) for t, row in _TABLE_V_ROWS.items()}
#: Table VI: throughput (Mbit/s) of CCID2 (flow 1) and the TCP (flow 2), per RTT.
TABLE_VI = {t: _pairs(row) for t, row in _TABLE_VI_ROWS.items()}
#: Table IX: J, flow 1 = the TCP, flow 2 = CCID2, per RTT.
TABLE_IX = {
    "reno": (0.89, 0.88, 0.90, 0.80),
    "bic": (0.92, 0.93, 0.85, 0.53),
    "cubic": (0.93, 0.93, 0.83, 0.60),
    "ctcp": (0.95, 0.83, 0.66, 0.86),
}
#: Table X: throughput (Mbit/s) of the TCP (flow 1) and CCID2 (flow 2), per RTT.
TABLE_X = {
    "reno": ((17, 29), (18, 32), (21, 31), (15, 37)),
    "bic": ((19, 28), (25, 27), (32, 16), (36, 8)),
    "cubic": ((19, 29), (25, 27), (34, 15), (35, 8)),
    "ctcp": ((52, 42), (65, 28), (66, 16), (66, 28)),
}
#: Table VIII: J of the 14-flow simulation, per RTT of RTTS_14.
TABLE_VIII = dict(zip(RTTS_14, (0.51, 0.30, 0.25, 0.24, 0.22, 0.20, 0.20, 0.19)))
#: Table VII: the middle element of each tuple (U_N, dB), per RTT of RTTS_14.
TABLE_VII_UN = dict(zip(RTTS_14, (-10.51, -11.70, -12.28, -12.97, -15.57, -16.98, -17.74, -18.47)))

#: RTTs of the 14-flow runs that have the 14 calibration runs each (NRU weights); the NRU claims use these.
RTTS_14_NRU = (100, 200)
#: What "good fairness" means where S4 gives no number: J above this (S4's own bar for NewReno vs CCID2).
GOOD_J = 0.90


def _share1(pairs: Iterable[tuple[int, int]]) -> float:
    return statistics.fmean(a / (a + b) for a, b in pairs)


_PAIR = (
    "100 Mbit/s dumbbell, drop-tail buffer of 1 BDP, flow 1 at 0 s (+ up to 100 ms), flow 2 at 30 s, 300 s, "
    "1 s samples over 60-300 s, MSS 1448 B, five runs (seeds 1-5) per setting"
)
_SINGLE = "one flow alone on the 100 Mbit/s, 1-BDP dumbbell, 300 s, 1 s samples over 0-300 s, three runs (seeds 1-3)"
_MANY = (
    "14 flows, one of each ns-2 TCP-Linux variant (NewReno, BIC, CUBIC, HighSpeed, H-TCP, Hybla, Illinois, TCP-LP, "
    "Scalable, Vegas, Veno, Westwood, YeAH, Compound), flow i starts at 30 i s, 900 s, window 420-900 s, 1000-byte "
    "segments (ns-2's default), 100 Mbit/s, 1 BDP; one run per RTT as S4"
)
_JITTER = (
    "each flow starts up to 100 ms after its nominal time, drawn from the run's seed: the simulator has no other "
    "run-to-run variation, S4's testbed had scripted starts and host noise"
)
_KERNEL = (
    "S4's hosts ran Linux 2.6.22 out of the box; ccfair's models follow current Linux (docs/fidelity.md), "
    "e.g. CCID2 without Linux's sequence-window limits (RFC 4340 7.5.2) and without 2.6.22's slow-start details"
)
_CTCP = (
    "Compound is modelled from the paper and the Caltech module S4 used; in a 1-BDP drop-tail queue its delay "
    "window stays at 0 in 93-97 % of the rounds, so it runs as Reno (docs/presets.md "
    "'Compound TCP vs CCID2')"
)
_14 = (
    "S4's simulation ran Linux 2.6-era congestion-control modules inside ns-2 (TCP-Linux); ccfair runs its own "
    "models of the 14 CCAs; S4 warns 'these simulation results should not be considered as rigorous'"
)


def _c(cid: str, where: str, quote: str, quantity: str, setup: str, deviations: tuple[str, ...], rule: Rule) -> Claim:
    return Claim(f"S4.{cid}", "S4", where, quote, quantity, setup, deviations, rule, "s4")


_Q_SELF_J = (
    "J of two {cca} flows, mean over the four RTTs (25/50/100/200 ms); one value per run (seed) = the mean over the RTTs of that seed's J"
)
_Q_SELF_SHARE = (
    "flow 1's share of the pair's throughput, two {cca} flows (flow 1 at 0 s, flow 2 at 30 s), mean over the four RTTs; one value "
    "per run (seed)"
)
_Q_CCID2_J = "J of CCID2 (flow 1) and {cca} (flow 2), mean over the four RTTs; one value per run (seed)"
_Q_CCID2_SHARE = "CCID2's share of the pair's throughput against {cca} (CCID2 flow 1), mean over the four RTTs; one value per run (seed)"


def _per_cca(
    cid: str, where: str, rows: dict[str, str], table: Mapping[str, Sequence[Any]], scale: str, quantity: str
) -> tuple[Claim, ...]:
    """One value claim per CCA of a table: quoting its row, ``quantity`` naming the CCA as ``{cca}``; published: the
    mean J over the RTTs (``scale`` "jfi") or flow 1's mean share of the pair's throughput ("share")."""
    return tuple(
        _c(
            f"{cid}-{c}",
            where,
            row,
            quantity.format(cca=LABEL[c]),
            _PAIR,
            (_JITTER, _KERNEL) + ((_CTCP,) if c == "ctcp" else ()),
            Rule("value", published=statistics.fmean(table[c]) if scale == "jfi" else _share1(table[c]), scale=scale),
        )
        for c, row in rows.items()
    )


_self_j = _per_cca("self-j", "Section IV.F, Table III", _TABLE_III_ROWS, TABLE_III, "jfi", _Q_SELF_J)
_self_share = _per_cca("self-share", "Section IV.F, Table IV", _TABLE_IV_ROWS, TABLE_IV, "share", _Q_SELF_SHARE)
_ccid2_j = _per_cca("ccid2-j", "Section V.A, Table V", _TABLE_V_ROWS, TABLE_V, "jfi", _Q_CCID2_J)
_ccid2_share = _per_cca("ccid2-share", "Section V.A, Table VI", _TABLE_VI_ROWS, TABLE_VI, "share", _Q_CCID2_SHARE)

_ORDER = {rtt: statistics.fmean(TABLE_IX[t][i] - TABLE_V[t][i] for t in ("bic", "cubic")) for i, rtt in enumerate(RTTS_MS) if rtt >= 50}

CLAIMS: tuple[Claim, ...] = (
    *_self_j,
    *_self_share,
    _c(
        "compound-best-utilisation",
        "Section IV.F, Table IV",
        "It is to be noted that, beyond 100ms (at higher BDP), Compound has the highest throughput values for both "
        "flows, and so has the best network utilisation overall.",
        "at 200 ms: total throughput of the Compound pair minus the highest total of the other four same-CCA pairs "
        "(Mbit/s); one value per run (seed)",
        _PAIR,
        (_JITTER, _KERNEL, _CTCP),
        ABOVE_ZERO,
    ),
    _c(
        "single-peak",
        "Section III.A",
        "all TCP variants and DCCP/CCID2 reached peaks of ~95Mb/s at the lower RTTs (within the normal 64KB window of TCP)",
        "peak 1 s throughput (Mbit/s) of one flow alone at 25 ms; one value per CCA and run",
        _SINGLE,
        (
            _KERNEL,
            "ccfair's receive window is Linux's auto-tuned one (S4's hosts had window scaling on, yet S4 calls 64 KB "
            "TCP's normal window); the throughput is payload bytes per second where iperf reports goodput",
        ),
        Rule("value", published=95.0, scale="ratio"),
    ),
    *(
        _c(
            f"single-{t}-vs-newreno",
            f"Section IV.{sec}",
            f"In Figure {fig}(a), compared to TCP (Figure 3(a)), {name} achieves higher throughput and more quickly at larger RTT values.",
            f"one flow alone at 200 ms: {LABEL[t]}'s mean throughput over 0-300 s minus NewReno's (Mbit/s); one value "
            "per run (seed), the same seed for both",
            _SINGLE,
            (_KERNEL,) + ((_CTCP,) if t == "ctcp" else ()),
            ABOVE_ZERO,
        )
        for t, sec, fig, name in (("bic", "B", 4, "BIC"), ("cubic", "C", 5, "CUBIC"), ("ctcp", "D", 6, "Compound"))
    ),
    _c(
        "ccid2-alone-high-bdp",
        "Section V.A (Figure 7(a))",
        "it can be seen that DCCP/CCID2 becomes increasingly poor at utilising the available capacity (Figure 7(a))",
        "one CCID2 flow alone: mean throughput over 0-300 s at 25 ms minus at 200 ms (Mbit/s); one value per run (seed)",
        _SINGLE,
        (_KERNEL,),
        ABOVE_ZERO,
    ),
    *_ccid2_j,
    *_ccid2_share,
    _c(
        "ccid2-newreno-good",
        "Section V.B",
        "As might be expected, there is good fairness between DCCP/CCID2 and NewReno, with  $J > 0.90$",
        "J of CCID2 (flow 1) and NewReno (flow 2) minus 0.90; one value per run (seed) and RTT",
        _PAIR,
        (_JITTER, _KERNEL),
        ABOVE_ZERO,
    ),
    _c(
        "ccid2-newreno-rtt",
        "Section V.B",
        "In Table VI, we can see that the throughput of DCCP/CCID2 (Flow 1) is better at lower RTTs, but starts to get "
        "slightly worse at higher RTTs (above 100ms).",
        "CCID2's share against NewReno (CCID2 flow 1): mean of 25 and 50 ms minus mean of 100 and 200 ms; one value per run (seed)",
        _PAIR,
        (_JITTER, _KERNEL),
        ABOVE_ZERO,
    ),
    _c(
        "newreno-slightly-higher",
        "Section VI",
        "DCCP/CCID2 has good fairness with TCP NewReno at all RTT values, though NewReno does achieve a slightly higher throughput.",
        "NewReno's minus CCID2's mean throughput (Mbit/s), CCID2 flow 1; one value per run (seed) and RTT",
        _PAIR,
        (_JITTER, _KERNEL),
        ABOVE_ZERO,
    ),
    _c(
        "highspeed-below-0.8",
        "Section V.C",
        "we see from Figure 8 and Table V that the JFI value is below 0.8 at all values of RTT above 25ms",
        "0.8 minus J of CCID2 (flow 1) against BIC, CUBIC and Compound at 50, 100 and 200 ms; one value per TCP, RTT and run (seed)",
        _PAIR,
        (_JITTER, _KERNEL, _CTCP),
        ABOVE_ZERO,
    ),
    _c(
        "bic-cubic-higher",
        "Section V.C",
        "In Table VI, we see that BIC and CUBIC always have a higher throughput than DCCP/CCID2, at all our RTT values.",
        "BIC's or CUBIC's minus CCID2's mean throughput (Mbit/s), CCID2 flow 1; one value per TCP, RTT and run (seed)",
        _PAIR,
        (_JITTER, _KERNEL),
        ABOVE_ZERO,
    ),
    _c(
        "unfair-dip-100",
        "Section VI",
        "becoming unfair above RTT=25ms, with greatest unfairness at 100ms, after which, fairness improves as the RTT increases.",
        "CCID2 (flow 1) against BIC, CUBIC and Compound: min(J at 50 ms, J at 200 ms) minus J at 100 ms; one value per TCP and run (seed)",
        _PAIR,
        (_JITTER, _KERNEL, _CTCP),
        ABOVE_ZERO,
    ),
    _c(
        "nru-dip-100",
        "Section V.C (Figures 10-12)",
        "We note that greatest unfairness in all three cases is at 100ms, and that fairness improves at 200ms.",
        "NRU spread U_n(TCP) - U_n(CCID2) (dB), CCID2 flow 1, against BIC, CUBIC and Compound: the spread at 100 ms "
        "minus the larger of the spreads at 50 and 200 ms; one value per TCP and run (seed)",
        _PAIR,
        (_JITTER, _KERNEL, _CTCP),
        ABOVE_ZERO,
    ),
    _c(
        "ccid2-recovers-200",
        "Section V.A",
        "as the RTT increases beyond ~100ms, the fairness improves a little as DCCP/CCID2 throughput improves.",
        "CCID2's mean throughput (Mbit/s) against BIC, CUBIC and Compound (CCID2 flow 1) at 200 ms minus at 100 ms; one "
        "value per TCP and run (seed)",
        _PAIR,
        (_JITTER, _KERNEL, _CTCP),
        ABOVE_ZERO,
    ),
    _c(
        "nru-tcp-above",
        "Section V.A",
        "As in all cases the TCP variant has higher throughput than DCCP/CCID2,  $U_{N+}$  is always for the TCP variant "
        "and  $U_{N-}$  is for the DCCP/CCID2 flow.",
        "U_n(TCP) - U_n(CCID2) (dB), CCID2 flow 1, weights from the same-CCA pairs (S4 eq. 10); one value per TCP, RTT and run (seed)",
        _PAIR,
        (_JITTER, _KERNEL, _CTCP),
        ABOVE_ZERO,
    ),
    _c(
        "bic-25-similar",
        "Section V.C",
        "We find that at RTT=25ms, the throughputs of both DCCP/CCID2 and BIC are similar",
        "U_n of CCID2 (flow 1) against BIC at 25 ms (dB; 0 = what CCID2 gets against another CCID2); S4's numbers "
        "(40 against 43 Mb/s) give 10 log10(40/43) = -0.31 dB; one value per run (seed)",
        _PAIR,
        (_JITTER, _KERNEL),
        Rule("value", published=10 * math.log10(40 / 43), scale="db"),
    ),
    _c(
        "bic-100-third",
        "Section V.C",
        "as the DCCP/CCID2 throughput is approximately a third of what it would be against another DCCP/CCID2 flow.",
        "at 100 ms: CCID2's mean throughput against BIC (CCID2 flow 1) divided by flow 1's mean throughput of the "
        "CCID2 pair; one value per run (seed)",
        _PAIR,
        (_JITTER, _KERNEL),
        Rule("value", published=1 / 3, scale="ratio"),
    ),
    *(
        _c(
            f"order-{rtt}",
            "Appendix A, Tables V and IX",
            "We note that the behaviour for BIC and CUBIC is quite different from that in Figure 8.",
            f"at {rtt} ms: J with the TCP as flow 1 minus J with CCID2 as flow 1, BIC and CUBIC pooled (Table IX minus "
            f"Table V: {_ORDER[rtt]:+.2f}); two independent groups of runs (10 each)",
            _PAIR,
            (_JITTER, _KERNEL),
            Rule("value", published=_ORDER[rtt], scale="jfi"),
        )
        for rtt in (50, 100, 200)
    ),
    _c(
        "tcp-first-dip-gone",
        "Appendix A",
        "the greatest unfairness is at 200ms and not 100ms: the “dip” at 100ms has disappeared for BIC and CUBIC, "
        "compared to when the DCCP/CCID2 flow was started first.",
        "TCP as flow 1, CCID2 flow 2, BIC and CUBIC: J at 100 ms minus J at 200 ms; one value per TCP and run (seed)",
        _PAIR,
        (_JITTER, _KERNEL),
        ABOVE_ZERO,
    ),
    _c(
        "tcp-first-distinction",
        "Appendix A",
        "We observe that there is more distinction between BIC, CUBIC and Compound.",
        "spread (population std) of the three mean J of BIC, CUBIC and Compound with the TCP first minus the same with "
        "CCID2 first; one value per RTT (groups of five runs)",
        _PAIR,
        (_JITTER, _KERNEL, _CTCP),
        ABOVE_ZERO,
    ),
    _c(
        "ccid2-first-worse-case",
        "Appendix A",
        "So, in our main text, we have effectively analysed a worse case compared to Figure 14.",
        "J with the TCP as flow 1 minus J with CCID2 as flow 1, all four TCPs and RTTs; two independent groups of runs (80 each)",
        _PAIR,
        (_JITTER, _KERNEL, _CTCP),
        ABOVE_ZERO,
    ),
    _c(
        "tcp-first-share",
        "Appendix A, Table X",
        _row("BIC", (str(x) for pair in TABLE_X["bic"] for x in pair)),
        "TCP as flow 1, CCID2 flow 2: the TCP's share of the pair's throughput at 100 and 200 ms, BIC and CUBIC "
        "(Table X: mean 0.75); one value per TCP, RTT and run (seed)",
        _PAIR,
        (_JITTER, _KERNEL),
        Rule(
            "value",
            published=statistics.fmean(a / (a + b) for t in ("bic", "cubic") for a, b in TABLE_X[t][2:]),
            scale="share",
        ),
    ),
    _c(
        "14-flow-j",
        "Section V.D, Table VIII",
        _row("JFI", (f"{j:.2f}" for j in TABLE_VIII.values())),
        "J (mean of the 1 s J(t) over 420-900 s) of the 14-flow run minus Table VIII's J at the same RTT; one value per "
        "RTT (25-200 ms in 25 ms steps)",
        _MANY,
        (_14, _JITTER),
        Rule("value", published=0.0, scale="jfi"),
    ),
    _c(
        "14-flow-j-falls",
        "Section V.D",
        "the JFI shows the system becoming increasingly unfair as the RTT increases,",
        "J of the 14-flow run at one RTT minus J at the next larger RTT; one value per pair of neighbouring RTTs",
        _MANY,
        (_14, _JITTER),
        ABOVE_ZERO,
    ),
    _c(
        "14-flow-nru",
        "Section V.D, Table VII",
        "SYSTEM NRU TUPLES FOR 14 FLOW TEST IN NS2 (SEE FIGURE 13(A))",
        "U_N (mean of the 14 flow NRUs, weights from 14 flows of each CCA at that RTT) minus Table VII's U_N at the "
        f"same RTT (dB); one value per RTT with calibration runs ({', '.join(map(str, RTTS_14_NRU))} ms)",
        _MANY,
        (_14, _JITTER, "NRU calibrated at two of S4's eight RTTs (100 and 200 ms), to fit the time budget (14 runs of 900 s per RTT)"),
        Rule("value", published=0.0, scale="db"),
    ),
    _c(
        "14-flow-nru-improves",
        "Section V.D",
        "the NRU shows that the mean system fairness improves after 100ms",
        "U_N of the 14-flow run at 200 ms minus U_N at 100 ms (dB); the interval over the 14 flows' NRU differences "
        "(U_n at 200 ms minus U_n at 100 ms, one value per flow)",
        _MANY,
        (_14, _JITTER, "NRU calibrated at 100 and 200 ms only (time budget)"),
        ABOVE_ZERO,
    ),
)

#: Findings not on the board: (verbatim quote, why).
LEFT_OUT: tuple[tuple[str, str], ...] = (
    (
        "In Figure 3(a), we note that TCP takes longer to achieve higher throughput as the RTT increases.",
        "a statement about the ramp-up of single NewReno flows in example plots with no measure attached; the single-"
        "flow claims S4.single-* cover the throughput side",
    ),
    (
        "In Figures 3(b), 4(b), 5(b), 6(b) and 7(b) we see examples of 2 flows and can see that for each respective "
        "protocol, there appears to be good fairness.",
        "the same finding as Table III (S4.self-j-*), stated from example figures",
    ),
    (
        "Also, we see in the NRU plot that there are some flows that do perform better at 125ms and beyond, which is "
        "not visible in the JFI plot.",
        "Table VII gives per RTT only the tuple, and its order is inconsistent: the text says the tuple is "
        "<U_N+, U_N, U_N->, yet the last element is positive (3.21 at 25 ms) where U_N- must be negative; which flows "
        "perform better cannot be read from the study",
    ),
    (
        "JFI depicts unfairness but masks the relative magnitude of reduction in performance, an aspect which is "
        "clearly visible in the NRU values (Table VII).",
        "a statement about the two metrics, not a measured finding",
    ),
    (
        "It is not clear from our experiments why the fairness decreases (as one might expect) but then increases, with increasing RTT.",
        "future work; the dip itself is S4.unfair-dip-100 and S4.nru-dip-100",
    ),
)
