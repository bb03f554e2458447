"""Analytic models (ccfair.models) against the numbers their sources print."""

from __future__ import annotations

import inspect
import math

import pytest
from ccfair import models

MBIT = 1_000_000


# --------------------------------------------------------------------------- Ware et al. IMC 2019


def test_ware_simple_model_gives_one_bbr_flow_half_of_a_bloated_link() -> None:
    # Ware et al. section 4.1 / blog: with q >> c l and one BBR flow the in-flight
    # cap 2 q (p - p^2) meets BBR's occupancy (1 - p) q at p = 1/2: "1 BBR flow can
    # get up to half of the link when competing with any number of Cubic flows".
    share = models.ware_bbr_share(1e6, 10 * MBIT, 0.040)
    assert share == pytest.approx(0.5, abs=1e-5)


def test_ware_eq9_solves_the_inflight_cap_balance_of_eq8() -> None:
    # eq. 8: 2 (1-p) c ((p q + 4 N)/c + l) = (1-p) q + (1-p) c l, solved by eq. 9.
    rate, rtt = 10 * MBIT, 0.040
    c = rate / (8 * 1500)
    for x in (2, 4, 8, 16, 64):
        for n in (1, 2, 4):
            q = x * c * rtt
            p = float(models.ware_loss_based_share(x, rate, rtt, n_bbr=n))
            assert p > 0
            lhs = 2 * (1 - p) * c * ((p * q + 4 * n) / c + rtt)
            rhs = (1 - p) * q + (1 - p) * c * rtt
            assert lhs == pytest.approx(rhs, rel=1e-12), (x, n)
            assert p == pytest.approx(0.5 - 1 / (2 * x) - 4 * n / q)


def test_ware_bbr_takes_the_whole_link_when_its_cap_exceeds_bdp_plus_queue() -> None:
    # eq. 9 with p <= 0: "BBR's share of the link would be 100 %". At 1 BDP
    # p = -4N/q < 0.
    assert float(models.ware_bbr_share(1, 10 * MBIT, 0.040)) == 1.0
    assert float(models.ware_bbr_share(0.5, 10 * MBIT, 0.040)) == 1.0


def test_ware_probe_rtt_time_grows_linearly_with_the_queue() -> None:
    # eq. 11: probe_time = (q/c + 0.2 + l) d / 10. 16 BDP at 40 ms: q/c = 0.64 s.
    assert float(models.ware_probe_time_s(16, 10 * MBIT, 0.040, 100)) == pytest.approx((0.64 + 0.2 + 0.04) * 10)
    # eq. 10: the fraction scales by (d - probe_time)/d.
    no_probe = float(models.ware_bbr_share(16, 10 * MBIT, 0.040))
    with_probe = float(models.ware_bbr_share(16, 10 * MBIT, 0.040, duration_s=100))
    assert with_probe == pytest.approx(no_probe * (100 - 8.8) / 100)


def test_ware_share_does_not_depend_on_the_number_of_loss_based_flows() -> None:
    # The paper's central claim: none of eq. 9-11's variables is the number of
    # loss-based flows. The model function has no such parameter.
    params = set(inspect.signature(models.ware_bbr_share).parameters)
    assert params == {"buffer_bdp", "rate_bps", "rtt_s", "duration_s", "n_bbr", "packet_bytes"}


def test_ware_share_rises_towards_half_as_the_buffer_grows() -> None:
    xs = [2, 4, 8, 16, 32]
    shares = [float(models.ware_bbr_share(x, 10 * MBIT, 0.040)) for x in xs]
    assert all(a > b for a, b in zip(shares, shares[1:], strict=False))
    assert shares[-1] > 0.5


# --------------------------------------------------------------------------- Mathis et al. 1997


def test_mathis_constants_are_the_papers_table() -> None:
    # Mathis et al. 1997, Table 1: 1.22 / 0.87 (periodic loss, without / with
    # delayed ACK, sqrt(3/2) and sqrt(3/4)); 1.31 / 0.93 with random loss.
    assert round(models.mathis_constant("periodic", False), 2) == 1.22
    assert round(models.mathis_constant("periodic", True), 2) == 0.87
    assert models.mathis_constant("random", False) == 1.31
    assert models.mathis_constant("random", True) == 0.93


def test_mathis_throughput_is_mss_over_rtt_times_c_over_sqrt_p() -> None:
    # p = 1 %, RTT 100 ms, MSS 1460: 1460 B / 0.1 s x 1.22 / 0.1 = 178 kB/s = 1.43 Mbit/s.
    bw = float(models.mathis_throughput_bps(0.01, 0.1, mss_bytes=1460))
    assert bw == pytest.approx(1460 * 8 / 0.1 * math.sqrt(1.5) / 0.1)
    assert bw / 1e6 == pytest.approx(1.43, abs=0.005)
    # Quadrupling the loss rate halves the throughput.
    assert float(models.mathis_throughput_bps(0.04, 0.1)) == pytest.approx(float(models.mathis_throughput_bps(0.01, 0.1)) / 2)


# --------------------------------------------------------------------------- RFC 9438


def test_cubic_coefficient_is_rfc_9438s_1_054() -> None:
    # RFC 9438 5.1: with beta = 0.7 and C = 0.4, (C 3.7 / 1.2)^(1/4) = 1.054.
    w = float(models.cubic_window(1.0, 1.0, reno_friendly=False))
    assert round(w, 3) == 1.054


@pytest.mark.parametrize(
    ("p", "reno", "cubic_c004", "cubic_c04"),
    [
        (1e-2, 12, 12, 12),
        (1e-3, 38, 38, 38),
        (1e-4, 120, 120, 187),
        (1e-5, 379, 593, 1054),
        (1e-6, 1200, 3332, 5926),
        (1e-7, 3795, 18740, 33325),
        (1e-8, 12000, 105383, 187400),
    ],
)
def test_cubic_average_window_matches_rfc_9438_table_at_rtt_100ms(p: float, reno: int, cubic_c004: int, cubic_c04: int) -> None:
    # RFC 9438 section 5.1 (as RFC 8312): average windows (segments) of Reno and
    # CUBIC with C = 0.04 and C = 0.4 at RTT = 0.1 s; CUBIC never below Reno.
    assert models.RENO_TABLE_CONSTANT / math.sqrt(p) == pytest.approx(reno, abs=0.6)
    assert float(models.cubic_window(p, 0.1, c=0.04)) == pytest.approx(cubic_c004, rel=1e-3, abs=0.6)
    assert float(models.cubic_window(p, 0.1, c=0.4)) == pytest.approx(cubic_c04, rel=1e-3, abs=0.6)


def test_cubic_throughput_is_window_times_mss_over_rtt() -> None:
    w = float(models.cubic_window(1e-4, 0.05))
    assert float(models.cubic_throughput_bps(1e-4, 0.05, mss_bytes=1448)) == pytest.approx(w * 1448 * 8 / 0.05)


# --------------------------------------------------------------------------- the simulator beside the models


def _one_flow(cca: str, loss: float) -> float:
    import ccfair
    from ccfair import Spec

    d = {
        "name": "loss",
        "duration": "60s",
        "window": {"start": "10s", "end": "60s"},
        "seed": 1,
        "bottleneck": {"rate": "100Mbit", "buffer": "1bdp", "qdisc": "droptail"},
        "flows": [{"name": "A", "cca": cca, "rtt": "50ms", "loss": loss, "rwnd": 100000}],
    }
    return float(ccfair.run(Spec.from_dict(d)).flows["throughput_bps"].iloc[0])


@pytest.mark.parametrize("loss", [1e-3, 1e-2])
def test_simulated_reno_follows_mathis_under_random_loss(loss: float) -> None:
    # Mathis et al.: BW = MSS/RTT x 1.31/sqrt(p) with random loss (ccfair's Reno,
    # like Linux, counts acked segments, so delayed ACKs do not change C).
    # Measured (examples/loss-sweep-reno-cubic.toml, mean of 2 seeds): 0.92 and 0.86 of the model.
    ratio = _one_flow("reno", loss) / float(models.mathis_throughput_bps(loss, 0.05, 1448, loss="random"))
    assert 0.75 < ratio < 1.25, ratio


@pytest.mark.parametrize("loss", [1e-3, 1e-2])
def test_simulated_cubic_follows_its_response_function(loss: float) -> None:
    # RFC 9438 5.1 average window (Reno-friendly floor 1.2/sqrt(p)). Measured likewise: 0.97, 0.87.
    ratio = _one_flow("cubic", loss) / float(models.cubic_throughput_bps(loss, 0.05, 1448))
    assert 0.75 < ratio < 1.25, ratio
