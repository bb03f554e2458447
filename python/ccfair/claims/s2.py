"""S2's findings: Verizon Media (A. Shah), "BBR evaluation at a large CDN"
(APNIC blog, 1 Nov 2019): BBR(v1) vs CUBIC in production A/B tests at PoPs,
and a KVM/netem lab with client, PoP-to-PoP and intra-PoP traffic classes.

Every quantitative or directional finding of the blog about throughput and
flow completion time (FCT), as one :class:`~ccfair.claims.model.Claim`
each, measured by ``ccfair.presets.s2.measure`` in ccfair's version of the
blog's lab; the findings left out are in :data:`LEFT_OUT` with the reason.

The blog's quantities: throughput of objects larger than 3 MB ("we use only
object sizes greater than 3MB for throughput evaluations"), FCT ("time
taken") for smaller ones; test (BBR) against control (CUBIC). In ccfair's
lab both arms see the same flow arrivals (same seed), so each seed gives one
paired value: a ratio BBR/CUBIC (or its logarithm for direction claims).
"""

from __future__ import annotations

from ccfair.claims.model import Claim, Rule
from ccfair.claims.rules import ABOVE_ZERO, BELOW_ZERO

__all__ = ["CLAIMS", "LEFT_OUT"]

_LAB = (
    "The blog's lab as ccfair runs it: a 50 Mbit/s drop-tail bottleneck (buffer 208 packets, 1 BDP at 50 ms) shared "
    "by three classes with Poisson arrivals for 600 s (+120 s to drain): client (base RTT 50 ms, random loss 0.001, "
    "0.01 and 0.1 %), PoP-to-PoP (15 ms, 0.0001, 0.001 and 0.01 %), intra-PoP (1 ms, no loss); per class and loss "
    "level 3 MB objects (0.1/s), lognormal sizes (median 300 KB, sigma 1.5; 0.25/s) and < 0.5 KB transfers "
    "(0.5/s); every sender on CUBIC (control) or on BBR(v1) (test), same arrivals per seed"
)
_LAB_DEV: tuple[str, ...] = (
    "One shared bottleneck for the three classes: the blog runs them 'in parallel' (Figure 7, not in the text) "
    "without saying whether they share a link; intra-PoP is capped by the same 50 Mbit/s instead of 'the VMs max "
    "out available capacity'.",
    "Buffer: the blog gives none; ccfair uses 1 BDP at the client RTT (208 packets).",
    "Loss levels in percent, as netem takes them (iproute2 tc's parse_percent divides the number by 100 with or "
    "without the '%' sign): 0.001-0.1 % for clients, 0.0001-0.01 % for PoP-to-PoP.",
    "Arrival rates and the size mix are ccfair's (the blog: 'various object sizes', 'exponential arrival of flows'); "
    "offered load about 60 % of the bottleneck.",
    "Runs: the blog 'ran the simulation hundreds of times'; ccfair runs independent seeds, each a paired A/B.",
    "Background traffic is the other classes' flows on the same CCA (the blog's 'simulated background traffic, "
    "both Cubic and BBR' is not specified further).",
)
_PROD_DEV = (
    "A production finding (PoPs in Los Angeles and Rio de Janeiro, real client paths) checked in ccfair's version of "
    "the blog's lab, which the blog built to 'capture behaviour we saw in production'.",
)
_WIRELINE_DEV = (
    "The wireline provider's loss rate is not given; ccfair takes the client class at the middle loss level "
    "(0.01 %), below the high-retransmit level that stands for the wireless / high-retransmit case.",
)


def _c(
    cid: str, where: str, quote: str, quantity: str, rule: Rule, production: bool = False, extra: tuple[str, ...] = (), setup: str = _LAB
) -> Claim:
    dev = (_PROD_DEV if production else ()) + (_LAB_DEV if setup == _LAB else ()) + extra
    return Claim(cid, "S2", where, quote, quantity, setup, dev, rule, "s2")


_RTT_SETUP = (
    "BBR vs BBR: three long-running BBR(v1) flows with base RTTs 50, 15 and 1 ms (the lab's classes) on a 50 Mbit/s "
    "drop-tail bottleneck, buffer 208 packets, no random loss, 60 s, starts jittered within 1 s; shares over 10-60 s"
)
_BUF_SETUP = (
    "CUBIC vs BBR: one CUBIC and one BBR(v1) flow, base RTT 50 ms, 50 Mbit/s drop-tail bottleneck with a {} buffer, "
    "no random loss, 60 s, starts jittered within 1 s; shares over 10-60 s"
)
_BUF_DEV = (
    "Buffer sizes are not given ('large buffers, where middleboxes might build up a queue', 'small buffers, such as "
    "wireless clients'); ccfair takes 0.5 BDP as small and 8 BDP (400 ms) as large.",
    "Two flows on one bottleneck stand for the production mix the explanation refers to.",
)

CLAIMS: tuple[Claim, ...] = (
    _c(
        "S2.client-gain",
        "A large wireless provider (Figure 2); 'BBR flows do not perform well in all scenarios'",
        "For this wireless provider, as soon as we enabled BBR, on average, we saw a 6-8% throughput improvement.",
        "per seed, mean throughput (size x 8 / FCT) of the client class's completed 3 MB objects with BBR over the same "
        "with CUBIC, minus 1, in % (published 6-8 %: 7 +- tolerance); mean over seeds",
        Rule("value", published=7.0, scale="percent"),
        production=True,
        extra=("The provider's loss rate is not given; the lab's client class spans the blog's lab loss range (0.001-0.1 %).",),
    ),
    _c(
        "S2.client-p5",
        "A large wireless provider, Figure 2 (right)",
        "A Cumulative Distribution Function (CDF) of the 5th percentile throughput. BBR flows show a significant improvement.",
        "per seed, ln(5th percentile of the client 3 MB objects' throughput with BBR / the same with CUBIC); mean over seeds",
        ABOVE_ZERO,
        production=True,
    ),
    _c(
        "S2.client-fct",
        "A large wireless provider",
        "We saw lower TCP flow completion times overall as well.",
        "per seed, ln(mean FCT of all completed client flows with CUBIC / the same with BBR); mean over seeds",
        ABOVE_ZERO,
        production=True,
    ),
    _c(
        "S2.wireline-tput",
        "A large wireline provider",
        "Here as well, we saw both throughput (for large objects) and flow completion time (shown in Figure 3) improvements using BBR.",
        "per seed, ln(mean throughput of the client 3 MB objects at 0.01 % loss with BBR / with CUBIC); mean over seeds",
        ABOVE_ZERO,
        production=True,
        extra=_WIRELINE_DEV,
    ),
    _c(
        "S2.wireline-fct",
        "A large wireline provider, Figure 3",
        "BBR (test) flows show less jitter and took less time to finish data transfer.",
        "per seed, ln(mean FCT of all completed client flows at 0.01 % loss with CUBIC / with BBR); mean over seeds",
        ABOVE_ZERO,
        production=True,
        extra=_WIRELINE_DEV,
    ),
    _c(
        "S2.wireline-jitter",
        "A large wireline provider, Figure 3",
        "BBR (test) flows show less jitter and took less time to finish data transfer.",
        "per seed, ln(standard deviation of the FCT of the client 3 MB objects at 0.01 % loss with CUBIC / with BBR): "
        "jitter as the spread of the time to complete objects of one size; mean over seeds",
        ABOVE_ZERO,
        production=True,
        extra=(*_WIRELINE_DEV, "'Jitter' is not defined in the blog; ccfair takes the FCT spread of equal-size (3 MB) objects."),
    ),
    _c(
        "S2.wireline-large-benefit",
        "A large wireline provider, Figure 3",
        "The benefits are more impactful for larger objects.",
        "per seed, ln(mean FCT CUBIC / BBR) of client objects >= 1 MB minus the same for client objects < 100 KB, at "
        "0.01 % loss; mean over seeds",
        ABOVE_ZERO,
        production=True,
        extra=(*_WIRELINE_DEV, "Size classes: Figure 3 is not in the text; ccfair compares >= 1 MB with < 100 KB."),
    ),
    _c(
        "S2.gain-grows-with-loss",
        "A large wireless provider",
        "This finding is in agreement with other reports from SpotifyDropbox, and YouTube, where a clear gain in "
        "throughput is seen in wireless networks where packet loss is common, but that is not necessarily an "
        "indicator of congestion.",
        "per seed, ln(BBR/CUBIC mean client 3 MB throughput) at 0.1 % loss minus the same at 0.001 % loss; mean over seeds",
        ABOVE_ZERO,
        production=True,
    ),
    _c(
        "S2.low-rtt-regression",
        "PoP-to-PoP and intra-PoP traffic; 'BBR flows do not perform well in all scenarios'",
        "For the PoP-to-PoP and intra-PoP traffic throughput, we saw a large regression in performance.",
        "per seed, ln(mean throughput of the PoP-to-PoP and intra-PoP 3 MB objects with BBR / with CUBIC); mean over seeds",
        BELOW_ZERO,
        production=True,
    ),
    _c(
        "S2.low-rtt-halved",
        "PoP-to-PoP and intra-PoP traffic, Figure 4",
        "Throughput decreased by about half with BBR.",
        "per seed, mean throughput of the PoP-to-PoP and intra-PoP 3 MB objects with BBR / with CUBIC (published 0.5); mean over seeds",
        Rule("value", published=0.5, scale="ratio"),
        production=True,
    ),
    _c(
        "S2.intra-suffers",
        "PoP-to-PoP and intra-PoP traffic",
        "it appeared that in the presence of both high and low RTT flows, the TCP flows which have very low RTTs suffered from using BBR.",
        "per seed, ln(mean throughput of the intra-PoP (1 ms) 3 MB objects with BBR / with CUBIC), sharing the "
        "bottleneck with the 15 and 50 ms classes; mean over seeds",
        BELOW_ZERO,
        production=True,
    ),
    _c(
        "S2.tiny-similar",
        "PoP-to-PoP and intra-PoP traffic",
        "We further evaluated cases where less than 0.5KB of data was transferred and found that in most cases, BBR "
        "performed similarly to Cubic.",
        "per seed, median FCT of the PoP-to-PoP and intra-PoP transfers < 0.5 KB with BBR / with CUBIC (similar: 1.0; the "
        "median because the blog speaks of 'most cases'); mean over seeds",
        Rule("value", published=1.0, scale="ratio"),
        production=True,
        extra=(
            "The blog's < 0.5 KB transfers come from server logs; ccfair adds a group of 100-500 B transfers per "
            "class and loss level (0.5/s).",
        ),
    ),
    _c(
        "S2.retransmits-high",
        "Full PoP test, Figure 5",
        "Even for ASes with higher RTTs, BBR performs well only for cases that have a high number of retransmits",
        "per seed, ln(mean client 3 MB throughput with BBR / with CUBIC) at the highest client loss (0.1 %); mean over seeds",
        ABOVE_ZERO,
        production=True,
        extra=("The ASes' retransmit rates are not given; the highest lab loss level (0.1 %) stands for a high-retransmit AS.",),
    ),
    _c(
        "S2.retransmits-low",
        "Full PoP test, Figure 5",
        "in other words, for ASes with less loss Cubic has no reason to back-off and performs better than BBR.",
        "per seed, ln(mean client 3 MB throughput with BBR / with CUBIC) at the lowest client loss (0.001 %); mean over "
        "seeds (CUBIC better: below zero)",
        BELOW_ZERO,
        production=True,
        extra=("The ASes' loss rates are not given; the lowest lab loss level (0.001 %) stands for an AS 'with less loss'.",),
    ),
    _c(
        "S2.large-objects",
        "Full PoP test, Figure 6 (ASN1, high retransmits)",
        "Here we see that BBR only started showing noticeable benefits for larger objects, in the order of MBs.",
        "per seed, ln(mean FCT CUBIC / BBR) of client objects >= 1 MB minus the same for client objects < 100 KB, at "
        "0.1 % loss (ASN1 shows high retransmits); mean over seeds",
        ABOVE_ZERO,
        production=True,
    ),
    _c(
        "S2.lab-client-fct",
        "Reproducing results in a lab setting, Figure 8 (left)",
        "Object size: 3MB. BBR performed better than Cubic for simulated client flows.",
        "per seed, ln(mean FCT of the client 3 MB objects with CUBIC / with BBR); mean over seeds",
        ABOVE_ZERO,
    ),
    _c(
        "S2.lab-pop-fct",
        "Reproducing results in a lab setting, Figure 8 (right)",
        "BBR flows fail to catch up to Cubic in a low-loss high-bandwidth setup.",
        "per seed, ln(mean FCT of the PoP-to-PoP 3 MB objects with BBR / with CUBIC); mean over seeds",
        ABOVE_ZERO,
    ),
    _c(
        "S2.lab-small-marginal",
        "Reproducing results in a lab setting",
        "Client traffic (low bandwidth) saw improvement, that is, time taken by BBR flows was less. However, "
        "improvement for small files is marginal.",
        "per seed, mean FCT of client objects < 100 KB (the lognormal mix) with CUBIC / with BBR (marginal: 1.0); mean over seeds",
        Rule("value", published=1.0, scale="ratio"),
        extra=("'Small files' is not defined; ccfair takes objects under 100 KB.",),
    ),
    _c(
        "S2.bbr-rtt-bias",
        "Why does this happen? BBR vs. BBR",
        "This leads to reallocation of bandwidth to the flows in descending order of RTT and flows with higher RTTs "
        "fill up buffers faster than flows with small RTTs.",
        "per seed, the smaller of share(50 ms) - share(15 ms) and share(15 ms) - share(1 ms): above zero when the "
        "shares are in descending order of RTT; mean over seeds",
        ABOVE_ZERO,
        setup=_RTT_SETUP,
        extra=("Three long flows stand for the production mix of high- and low-RTT flows; flow sizes and counts are not given.",),
    ),
    _c(
        "S2.large-buffer-cubic",
        "Why does this happen? Cubic vs. BBR",
        "In other words, PoP-to-PoP style traffic, and therefore Cubic achieves higher throughput.",
        "per seed, CUBIC's share of the pair's throughput minus 0.5, large buffer; mean over seeds",
        ABOVE_ZERO,
        setup=_BUF_SETUP.format("large (8 BDP)"),
        extra=_BUF_DEV,
    ),
    _c(
        "S2.small-buffer-bbr",
        "Why does this happen? Cubic vs. BBR; 'Where do we go from here?'",
        "In the case of small buffers, such as wireless clients, the buffer fills rapidly and results in a loss – "
        "thus Cubic flows back off, and BBR flows perform better.",
        "per seed, BBR's share of the pair's throughput minus 0.5, small buffer; mean over seeds",
        ABOVE_ZERO,
        setup=_BUF_SETUP.format("small (0.5 BDP)"),
        extra=_BUF_DEV,
    ),
)

#: Findings of S2 not on the board: (quote, reason).
LEFT_OUT: tuple[tuple[str, str], ...] = (
    (
        "Here we see an overall improvement of about 6-8% with BBR.",
        "Figure 2's caption; the same finding as S2.client-gain.",
    ),
    (
        "However, we did see a 6-8% improvement in Pop-to-Client traffic throughput.",
        "The conclusion repeats S2.client-gain.",
    ),
    (
        "In some extreme cases, the throughput was reduced by half.",
        "The conclusion repeats S2.low-rtt-halved.",
    ),
    (
        "Specifically, traffic within a data centre/PoP and traffic among data centres (PoP-to-PoP) suffered when using BBR.",
        "The conclusion repeats S2.low-rtt-regression (both classes) and S2.intra-suffers.",
    ),
    (
        "We do, however, see similar jitter for large file sizes for both Cubic and BBR.",
        "Neither 'jitter' nor 'large file sizes' is defined and Figure 3 is not in the text; the lab's size mix has "
        "about 1 % of objects above 10 MB (a handful per seed), too few for a spread.",
    ),
    (
        "As seen in Figure 5, one AS, overall, saw the benefit of BBR while another did not.",
        "The two ASes are the two halves of the next sentence, on the board as S2.retransmits-high and S2.retransmits-low.",
    ),
    (
        "We did see one anomalous instance using BBR, but could not attribute it to any particular congestion control "
        "protocol related issue.",
        "A single unexplained outlier, not a finding.",
    ),
    (
        "In this scenario, no flow backs off when there is a loss.",
        "A statement of BBR(v1)'s design (it does not reduce its rate on loss), not a measured finding; its consequence "
        "for RTT fairness is S2.bbr-rtt-bias.",
    ),
    (
        "In a large scale, full PoP test, we noticed that BBR would help most in cases for ASes where retransmits are "
        "high and suggest it is worth using BBR for large files.",
        "The summary repeats S2.retransmits-high and S2.large-objects.",
    ),
    (
        "Moreover, these paths have shallow buffers and wireless loss, an ideal situation for BBR to perform better "
        "than other Cubic flows.",
        "Repeats S2.small-buffer-bbr (shallow buffers) and S2.retransmits-high (loss).",
    ),
    (
        "It is always of course my hope more folk fiddling with e2e cc’s will also put things like fq_codel and "
        "sch_cake in the loop to see what happens.",
        "A reader's comment, not the study's finding; `ccfair preset s2` prints the fq_codel arm beside drop-tail.",
    ),
)
