"""Analytic models of the field, to draw beside measurements.

- :func:`ware_bbr_share`: Ware, Mukerjee, Seshan, Sherry, "Modeling BBR's
  Interactions with Loss-Based Congestion Control", IMC 2019. Under
  competition BBR(v1) is window-limited by its in-flight cap
  ``2 x bw_est x rtt_est``. With N BBR flows taking the fraction (1 - p) of a
  link of c packets/s, base RTT l and a drop-tail queue of q = X c l packets
  that the loss-based flows keep full:

      bw_est  = (1 - p) c                                   (their eq. 2)
      rtt_est = (p q + 4 N) / c + l                         (eq. 7: in PROBE_RTT
                the loss-based flows' queue p q plus BBR's 4 packets per flow)
      cap     = 2 bw_est rtt_est = (1 - p)(q + c l)         (eq. 8 set equal to
                BBR's share of queue and pipe)
      =>  p   = 1/2 - 1/(2 X) - 4 N / q                     (eq. 9; p <= 0: BBR takes all)

  and PROBE_RTT (every 10 s, waiting for the queue to drain, 200 ms and a
  round) costs BBR ``probe_time = (q/c + 0.2 + l) d / 10`` of a run of d
  seconds after convergence (eq. 11), so BBR's aggregate fraction is
  ``(1 - p)(d - probe_time) / d`` (eq. 10). The number of loss-based flows
  does not appear: one BBR flow takes the same fraction against 1 or 4 CUBIC
  flows, which is the paper's central claim. The equations are quoted as
  Ware's blog post (2024) and a public reproduction of the paper state them;
  the derivation of eq. 9 from eq. 8 is redone in the tests.
- :func:`mathis_throughput_bps`: Mathis, Semke, Mahdavi, Ott, "The
  Macroscopic Behavior of the TCP Congestion Avoidance Algorithm", CCR 1997:
  ``BW = (MSS / RTT) C / sqrt(p)``, C = sqrt(3/2) = 1.22 for periodic loss with
  an ACK per segment, sqrt(3/4) = 0.87 with delayed ACKs (b = 2); the paper's
  simulations with random loss give 1.31 and 0.93.
- :func:`cubic_window` / :func:`cubic_throughput_bps`: CUBIC's response
  function, RFC 9438 section 5.1: average window
  ``(C (3 + beta) / (4 (1 - beta)))^(1/4) RTT^(3/4) / p^(3/4)`` segments (C = 0.4,
  beta = 0.7: 1.054 RTT^(3/4) / p^(3/4)), and at least the Reno-friendly
  window, which the RFC's table writes as 1.2 / sqrt(p).

Units: rates in bit/s, times in seconds, windows and queues in packets
(segments), loss as a probability. Functions are plain floats in, floats out
(NumPy arrays work too).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

#: A number, or numpy array of them: the models work element-wise on either.
FloatOrArray = float | np.ndarray

__all__ = [
    "CUBIC_BETA",
    "CUBIC_C",
    "MATHIS_C",
    "RENO_TABLE_CONSTANT",
    "WARE_PROBE_RTT_INTERVAL_S",
    "cubic_throughput_bps",
    "cubic_window",
    "mathis_constant",
    "mathis_throughput_bps",
    "ware_bbr_share",
    "ware_loss_based_share",
    "ware_probe_time_s",
]

#: Mathis et al. 1997, Table 1: C for (loss pattern, delayed ACKs).
MATHIS_C: dict[tuple[str, bool], float] = {
    ("periodic", False): math.sqrt(3 / 2),  # 1.22
    ("periodic", True): math.sqrt(3 / 4),  # 0.87 (ACK every 2nd segment, b = 2)
    ("random", False): 1.31,  # simulation, random loss
    ("random", True): 0.93,
}
#: RFC 9438's CUBIC constant C (segments / s^3) and multiplicative decrease beta.
CUBIC_C = 0.4
CUBIC_BETA = 0.7
#: The Reno average window the RFC 9438 table uses: 1.2 / sqrt(p) segments.
RENO_TABLE_CONSTANT = 1.2
#: BBRv1 enters PROBE_RTT every 10 s (Ware et al. eq. 11).
WARE_PROBE_RTT_INTERVAL_S = 10.0
#: PROBE_RTT dwell (200 ms) and BBR's in-flight in PROBE_RTT (4 packets per flow).
WARE_PROBE_RTT_DWELL_S = 0.2
WARE_PROBE_RTT_PACKETS = 4


def _packets_per_s(rate_bps: float, packet_bytes: int) -> float:
    return rate_bps / (8.0 * packet_bytes)


def ware_loss_based_share(buffer_bdp: FloatOrArray, rate_bps: float, rtt_s: float, n_bbr: int = 1, packet_bytes: int = 1500):
    """p of Ware et al. eq. 9: the loss-based flows' fraction of the link, clipped at 0.

    ``buffer_bdp`` is X (queue = X x BDP). ``p = 1/2 - 1/(2X) - 4N/q`` with
    q = X c l packets. p <= 0 means BBR's in-flight cap exceeds BDP + queue,
    so the BBR flows take the whole link.
    """
    x = np.asarray(buffer_bdp, dtype=float)
    q = x * _packets_per_s(rate_bps, packet_bytes) * rtt_s
    p = 0.5 - 1.0 / (2.0 * x) - WARE_PROBE_RTT_PACKETS * n_bbr / q
    return np.maximum(p, 0.0)


def ware_probe_time_s(buffer_bdp: FloatOrArray, rate_bps: float, rtt_s: float, duration_s: float, packet_bytes: int = 1500):
    """Ware et al. eq. 11: time BBR spends in PROBE_RTT over ``duration_s``: (q/c + 0.2 + l) d / 10."""
    x = np.asarray(buffer_bdp, dtype=float)
    drain_s = x * rtt_s  # q / c with q = X c l
    return (drain_s + WARE_PROBE_RTT_DWELL_S + rtt_s) * duration_s / WARE_PROBE_RTT_INTERVAL_S


def ware_bbr_share(
    buffer_bdp: FloatOrArray,
    rate_bps: float,
    rtt_s: float,
    duration_s: float | None = None,
    n_bbr: int = 1,
    packet_bytes: int = 1500,
):
    """BBR flows' aggregate fraction of the link against any number of loss-based flows (Ware et al. eq. 9-10).

    ``(1 - p)(d - probe_time) / d``; with ``duration_s=None`` the PROBE_RTT
    cost is left out (``1 - p``, the in-flight-cap fraction of eq. 9).
    Deliberately has no parameter for the number of loss-based flows.
    """
    p = ware_loss_based_share(buffer_bdp, rate_bps, rtt_s, n_bbr, packet_bytes)
    frac = 1.0 - p
    if duration_s is not None:
        probe = ware_probe_time_s(buffer_bdp, rate_bps, rtt_s, duration_s, packet_bytes)
        frac = frac * np.maximum(duration_s - probe, 0.0) / duration_s
    return frac


def mathis_constant(loss: Literal["periodic", "random"] = "periodic", delayed_ack: bool = False) -> float:
    """C of the Mathis formula (Table 1 of the paper)."""
    return MATHIS_C[(loss, bool(delayed_ack))]


def mathis_throughput_bps(
    loss_rate: FloatOrArray,
    rtt_s: float,
    mss_bytes: int = 1448,
    loss: Literal["periodic", "random"] = "periodic",
    delayed_ack: bool = False,
):
    """Reno/NewReno throughput with loss probability p: (MSS/RTT) x C / sqrt(p), bit/s."""
    p = np.asarray(loss_rate, dtype=float)
    return 8.0 * mss_bytes / rtt_s * mathis_constant(loss, delayed_ack) / np.sqrt(p)


def cubic_window(
    loss_rate: FloatOrArray,
    rtt_s: float,
    c: float = CUBIC_C,
    beta: float = CUBIC_BETA,
    reno_friendly: bool = True,
):
    """CUBIC's average congestion window in segments (RFC 9438 section 5.1).

    ``(c (3 + beta) / (4 (1 - beta)))^(1/4) x (RTT / p)^(3/4)``; with
    ``reno_friendly`` at least the Reno window 1.2 / sqrt(p) (CUBIC's
    Reno-friendly region), as in the RFC's table.
    """
    p = np.asarray(loss_rate, dtype=float)
    w = (c * (3.0 + beta) / (4.0 * (1.0 - beta))) ** 0.25 * (rtt_s / p) ** 0.75
    if reno_friendly:
        w = np.maximum(w, RENO_TABLE_CONSTANT / np.sqrt(p))
    return w


def cubic_throughput_bps(loss_rate: FloatOrArray, rtt_s: float, mss_bytes: int = 1448, **kw):
    """CUBIC's throughput from its response function: window x MSS / RTT, bit/s."""
    return cubic_window(loss_rate, rtt_s, **kw) * 8.0 * mss_bytes / rtt_s
