"""S1's findings: "Ensuring Transport Fairness with Smart Networks" (L. He, ETH
semester thesis, 2020): RRMQS, a flow meter and a feedback loop in ns-3.

Every quantitative or directional finding of S1's evaluation (section 4.2),
appendix (Tables A.1, A.2), abstract, outlook and summary about fairness, as
one :class:`~ccfair.claims.model.Claim` each; measured by
``ccfair.presets.s1.measure``. The findings left out are in :data:`LEFT_OUT`
with the reason.

S1's quantities (section 3.1, 4.2.1): per CCA j, V_j (V'_j) = the average
per-flow rate of its flows in the main queue (in its measuring queue of the
RRMQS), I_j = V_j / V'_j, and J(V, V') = (sum_j I_j)^2 / (m sum_j I_j^2)
over the m = 12 CCAs. J_measure takes V, V' from the flow meter (per-flow
packet rate per 0.5 s window, averaged over the reports); J_real from the
offline per-flow throughput (size / FCT); accuracy = min(J_measure, J_real) /
max(J_measure, J_real). "J with feedback" is J_real with S1's feedback rule
on (Table 4.5's "J without feedback" row is Table 4.3's J_real).
"""

from __future__ import annotations

import re
from decimal import Decimal

from ccfair.claims.model import Claim, Rule
from ccfair.claims.rules import ABOVE_ZERO, BELOW_ZERO

__all__ = ["CLAIMS", "LEFT_OUT", "QUEUES", "TABLES"]

#: S1's queue settings, in the tables' column order.
QUEUES = ("small", "medium", "large")

# The tables' rows as printed in the study text (verbatim, LaTeX residue included).
_T43 = {
    "j_measure": "$J_{measure}$ 0.927 0.896 0.776",
    "j_real": "J_{real} 0.922 0.859 0.721",
    "accuracy": "Accuracy 99.5% 95.9% 92.9%",
}
_T44 = {
    "j_measure": "$J_{measure}$ 0.953 0.944 0.779",
    "j_real": "J_{real} 0.948 0.857 0.719",
    "accuracy": "Accuracy 99.5% 90.8% 92.3%",
}
_T45 = r"$J_{ m without\ feedback}$ $J_{ m with\ feedback}$ $0.922 \\ 0.996$ $0.859 \\ 0.993$ $0.721 \\ 0.992$"
_T46 = r"$J_{\rm without\ feedback}$ $0.948 \\ 0.975$ 0.857 0.878 0.719 0.881"


def _numbers(row: str) -> list[float]:
    """The numbers of a printed row, in order; a percent as a fraction."""
    return [float(Decimal(n) / 100) if pct else float(n) for n, pct in re.findall(r"(\d+\.\d+)(%?)", row)]


def _per_queue(xs: list[float]) -> tuple[float, float, float]:
    """One number per queue setting (QUEUES' order)."""
    small, medium, large = xs
    return small, medium, large


def _without_with(row: str) -> dict[str, tuple[float, float, float]]:
    """Tables 4.5 and 4.6: per queue, J without then with feedback."""
    n = _numbers(row)
    return {"j_without": _per_queue(n[0::2]), "j_with": _per_queue(n[1::2])}


#: S1's published tables (small / medium / large queue), fractions, read from the rows above.
TABLES: dict[str, dict[str, tuple[float, float, float]]] = {
    "4.3": {key: _per_queue(_numbers(row)) for key, row in _T43.items()},
    "4.4": {key: _per_queue(_numbers(row)) for key, row in _T44.items()},
    "4.5": _without_with(_T45),
    "4.6": _without_with(_T46),
}

_SETUP = (
    "S1 4.1: 12 senders, one CCA each (BIC, NewReno, HighSpeed, H-TCP, Hybla, Illinois, LEDBAT, Scalable, Vegas, "
    "Veno, Westwood, YeAH), U(100, 200) flows per sender of U(10 000, 100 000) bytes; access links 1 Gbit/s 20 ms, "
    "bottleneck 100 Mbit/s 10 ms (base RTT 100 ms: both access links and the bottleneck, both directions); RRMQS "
    "at g_1 with main / per-measuring-queue sizes 1200/2, 12000/20, 120000/200 packets, C_f = 2, p = 1/51, meter "
    "window 0.5 s; senders with ns-3's TCP defaults (536-byte segments, initial window 1)"
)
_SETUP_UNBOUNDED = _SETUP + "; all flows unbounded; 40 s"
_SETUP_BOUNDED = _SETUP + "; half of the flows capped at U(0.01, 1) Mbit/s; 120 s"

_DEVIATIONS: tuple[str, ...] = (
    "Flow start times: S1 says 'Each flow will start at a random time' and gives no interval; ccfair draws them "
    "uniformly in [0, 5 s) (about 1.6 x the bottleneck's capacity offered during those 5 s).",
    "Runs: S1 reports one experiment per setting; ccfair runs independent seeds (flows drawn from each seed) and "
    "judges the mean over seeds with its bootstrap interval.",
    "TCP: ccfair's Linux-like TCP (RACK, PRR, SACK) with ns-3's default segment size and initial window; ns-3's "
    "TcpSocketBase recovery and its initial ssthresh are not modelled; the 12 CCAs follow the Linux modules "
    "(docs/fidelity.md).",
    "Access links are infinitely fast: the simulator has no access-link serialisation (4.3 us per 536-byte "
    "segment at 1 Gbit/s, next to 100 ms of base RTT).",
    "Measuring-queue slots are released when a pinned flow completes; S1 does not say how slots are freed.",
)
_DEV_BOUNDED = ("Bounded scenario: S1 says 'some flows have bounded rate'; ccfair caps half of them (each flow with probability 0.5).",)
_DEV_FEEDBACK = (
    "Feedback drops apply to the main queue only (S1 does not say whether they reach the measuring queues); "
    "a CCA's index is taken from the window just ended, as S1's 'in the last time window'.",
)


def _claim(
    cid: str, where: str, quote: str, quantity: str, rule: Rule, bounded: bool = False, feedback: bool = False, extra: tuple[str, ...] = ()
) -> Claim:
    dev = _DEVIATIONS + (_DEV_BOUNDED if bounded else ()) + (_DEV_FEEDBACK if feedback else ()) + extra
    setup = (_SETUP_BOUNDED if bounded else _SETUP_UNBOUNDED) + ("; S1's feedback rule on" if feedback else "; feedback off")
    return Claim(cid, "S1", where, quote, quantity, setup, dev, rule, "s1")


_QUANTITY = {
    "j_measure": "J_measure = J(V, V') with V_j (V'_j) the CCA's per-flow packet rate in the main queue (its measuring "
    "queue): enqueued packets / 0.5 s / distinct flows (Bloom count) per window, averaged over the windows with a flow "
    "of the CCA in that part; mean over seeds",
    "j_real": "J_real = J(V, V') with V_j (V'_j) the mean throughput (size x 8 / FCT) of the CCA's completed flows "
    "never pinned (pinned to its measuring queue); mean over seeds",
    "accuracy": "accuracy = min(J_measure, J_real) / max(J_measure, J_real) of one run (a fraction); mean over seeds",
}
_LABEL = {"j_measure": "j-measure", "j_real": "j-real", "accuracy": "accuracy"}


def _queue_claims(
    cid: str,
    where: str,
    quote: str,
    quantity: str,
    published: tuple[float, float, float],
    tail: str = "",
    *,
    bounded: bool,
    feedback: bool = False,
    extra: tuple[str, ...] = (),
) -> list[Claim]:
    """One value claim per queue setting (Jain-index tolerance), the queue and its published number named."""
    return [
        _claim(
            f"{cid}-{q}",
            f"{where}, {q} queue",
            quote,
            f"{quantity}; {q} queue (published {pub}){tail}",
            Rule("value", published=pub, scale="jfi"),
            bounded=bounded,
            feedback=feedback,
            extra=extra,
        )
        for q, pub in zip(QUEUES, published)
    ]


_ACCURACY_DEV = ("Accuracy is a ratio of two Jain indices in [0, 1]; it is judged with the Jain-index tolerance.",)
_T46_DEV = (
    "The study text prints Table 4.6's 'with feedback' row a second time as '0.975 0.070 0.001' "
    "(an extraction error); the values are those of the first row's pairs (0.975, 0.878, 0.881).",
)


def _table_claims() -> list[Claim]:
    out: list[Claim] = []
    for table, rows, bounded in (("4.3", _T43, False), ("4.4", _T44, True)):
        for key, quote in rows.items():
            extra = _ACCURACY_DEV if key == "accuracy" else ()
            cid, where = f"S1.t{table.replace('.', '')}-{_LABEL[key]}", f"4.2.1, Table 4.{table[-1]}"
            out += _queue_claims(cid, where, quote, _QUANTITY[key], TABLES[table][key], bounded=bounded, extra=extra)
    for table, quote, bounded in (("4.5", _T45, False), ("4.6", _T46, True)):
        out += _queue_claims(
            f"S1.t{table.replace('.', '')}-j-feedback",
            f"4.2.2, Table {table}",
            quote,
            "J with feedback = J_real (as in Table 4.3) with S1's feedback rule on",
            TABLES[table]["j_with"],
            "; mean over seeds",
            bounded=bounded,
            feedback=True,
            extra=_T46_DEV if table == "4.6" else (),
        )
    return out


CLAIMS: tuple[Claim, ...] = (
    *_table_claims(),
    _claim(
        "S1.accuracy-above-90",
        "4.2.1 (Table 4.3); abstract; summary",
        "My result shows that my method is able to measure unfairness, and the accuracy is higher than 90%.",
        "per seed, the lowest accuracy over the three queue settings minus 0.90 (unbounded flows, feedback off); mean over seeds",
        ABOVE_ZERO,
    ),
    *(
        _claim(
            f"S1.meter-sign-{q}",
            f"4.2.1, Table 4.3, {q} queue",
            _T43["j_measure"] + " " + _T43["j_real"],
            f"J_measure - J_real of one run, {q} queue (published {TABLES['4.3']['j_measure'][i] - TABLES['4.3']['j_real'][i]:+.3f}: "
            "the meter sees less unfairness than the offline truth); mean over seeds",
            ABOVE_ZERO,
        )
        for i, q in enumerate(QUEUES)
    ),
    _claim(
        "S1.j-falls",
        "4.2.1, Table 4.3",
        _T43["j_real"],
        "J_real(small queue) - J_real(large queue) of one seed (published 0.922 - 0.721 = +0.201: the larger the "
        "queues, the less fair); mean over seeds",
        ABOVE_ZERO,
    ),
    _claim(
        "S1.bounded-accuracy-lower",
        "4.2.1, Table 4.4",
        "My result shows that when some flows have bounded rates, the accuracy of my measurement is lower than all "
        "flows have unbounded rates.",
        "mean over the three queues of the accuracy with unbounded flows (one value per seed) minus the same with "
        "rate-bounded flows (published 0.961 - 0.942 = +0.019); difference of the two groups' means",
        ABOVE_ZERO,
        bounded=True,
    ),
    _claim(
        "S1.feedback-above-99",
        "4.2.2, Table 4.5",
        "My result shows that the feedback loop can ensure fairness with J > 0.99.",
        "per seed, the lowest J with feedback over the three queues minus 0.99 (unbounded flows); mean over seeds",
        ABOVE_ZERO,
        feedback=True,
    ),
    _claim(
        "S1.feedback-improves",
        "abstract; 4.2.2, Table 4.5",
        "my method is able to improve fairness in a large congestion control algorithm sets",
        "per seed, mean over the three queues of J_real with S1's feedback minus J_real without (same flows; "
        "published +0.160); mean over seeds",
        ABOVE_ZERO,
        feedback=True,
    ),
    _claim(
        "S1.bounded-feedback-improves",
        "4.2.2, Table 4.6",
        "My results show that after using the feedback loop, fairness is improved.",
        "per seed, mean over the three queues of J_real with S1's feedback minus J_real without, rate-bounded flows "
        "(same flows; published +0.070); mean over seeds",
        ABOVE_ZERO,
        bounded=True,
        feedback=True,
    ),
    _claim(
        "S1.bounded-feedback-lower",
        "4.2.2, Table 4.6; outlook",
        "However, the performance is much lower than when all flows have unbounded rates.",
        "mean over the three queues of J with feedback, unbounded flows (one value per seed) minus the same with "
        "rate-bounded flows (published 0.994 - 0.911 = +0.082); difference of the two groups' means",
        ABOVE_ZERO,
        bounded=True,
        feedback=True,
    ),
    _claim(
        "S1.index-agreement",
        "Appendix A.1, Table A.1",
        "To show the accuracy of the measurement, I provide each TCP variant's fairness index I = V/V'.",
        "per seed, Pearson correlation of ln I_measure with ln I_real over the 12 CCAs x 3 queues (unbounded, "
        "feedback off; Table A.1 gives +0.97); mean over seeds",
        ABOVE_ZERO,
    ),
    _claim(
        "S1.index-agreement-bounded-lower",
        "Appendix A.1, Tables A.1 and A.2; 4.2.1",
        "The reason is that I pick some flows as samples in RRMQS, but the number of samples may not be enough to "
        "avoid high bias, because flows have different rates.",
        "the correlation of S1.index-agreement with unbounded flows (one value per seed) minus the same with "
        "rate-bounded flows (Tables A.1 and A.2 give +0.97 and +0.73: +0.24); difference of the two groups' means",
        ABOVE_ZERO,
        bounded=True,
    ),
    _claim(
        "S1.index-bic-above-fair",
        "Appendix A.1, Table A.1 (i_1 = TCP Bic)",
        "I_{real} large queue 2.66 0.81 1.09 1.12 1.08 0.56 0.29 1.70 0.43 0.79 0.56 0.86",
        "per seed, mean over the three queues of ln I_real(BIC) (Table A.1: I_real 1.30 / 2.09 / 2.66, mean ln +0.66); mean over seeds",
        ABOVE_ZERO,
    ),
    _claim(
        "S1.vegas-harmed-large-buffer",
        "1.1.1 (NewReno vs Vegas); Table A.1, large queue (i_9 = TCP Vegas, I_real 0.43)",
        "For example, if the buffer is large in the bottleneck link, NewReno will harm Vegas in the competition "
        "between them, and unfairness happens.",
        "ln I_real(Vegas) of one run, large queue (Table A.1: ln 0.43 = -0.84); mean over seeds",
        BELOW_ZERO,
    ),
    _claim(
        "S1.rrmqs-fair",
        "3.2",
        "The part of flows which using the main queue may suffer unfairness, but flows using RRMQS is an exactly fair result.",
        "per seed, mean over the three queues of Jain's index over the 12 CCAs of V'_j (mean throughput of the CCA's "
        "completed pinned flows); 1.0 is exactly fair; mean over seeds",
        Rule("value", published=1.0, scale="jfi"),
    ),
)

#: Findings of S1 not on the board: (quote, reason).
LEFT_OUT: tuple[tuple[str, str], ...] = (
    (
        "Usually in the network, the number of flows for different TCP variants is large (>> 1), thus for a small "
        "C_f (e.g. $C_f < 10$), the number of flows in each queue will nearly always be C_f .",
        "A design assumption about the sampler's occupancy, not a finding about fairness, throughput, FCT, delay, "
        "utilisation or marking; it depends on the flow start interval S1 does not give.",
    ),
    (
        "The reason is that the performance of the feedback loop relies on the accuracy of my fairness measurement.",
        "An explanation (cause), not a measured quantity; its two ends are on the board as "
        "S1.bounded-accuracy-lower and S1.bounded-feedback-lower.",
    ),
    (
        "But a recent study shows significant unfairness when BBR competes with traditional TCP.[7]",
        "Another study's finding cited in the related work (BBR is not among S1's 12 CCAs); S0 covers it.",
    ),
    (
        "It is indeed fair when there is only one BBR flow and one TCP flow, but as soon as there are multiple "
        "BBR/TCP flows, it is not fair anymore.",
        "Another study's finding cited in the related work, not S1's result.",
    ),
    (
        "It improves the performance of different CCAs but didn't solve unfairness between protocols.",
        "About another system (Cocoa, S1's reference [1]), not S1's result.",
    ),
    (
        "My evaluation result shows that the fairness measurement algorithm has an accuracy higher than 90%, and "
        "the queue management algorithm is able to improve fairness under a complex network environment.",
        "The summary repeats 4.2's findings, which are on the board as S1.accuracy-above-90, "
        "S1.feedback-improves and S1.bounded-feedback-improves.",
    ),
    (
        'On the one hand, my "in-network" method can improve fairness and achieve better performance than the current "on-host" method.',
        "The outlook restates Tables 4.5 and 4.6 (on the board as S1.feedback-improves and "
        "S1.bounded-feedback-improves); 'better performance' is not defined beyond J.",
    ),
    (
        "Imeasure large queue 1.27 1.24 1.08 0.87 1.47 1.18 0.93 3.11 0.46 0.88 0.88 0.86",
        "Table A.2's individual per-CCA indices (rate-bounded flows): the board checks the table through "
        "S1.index-agreement-bounded-lower; S1 states no finding about a single CCA there.",
    ),
)
