"""Human units: every documented form, the round trip, and the error messages."""

from decimal import Decimal

import pytest
from ccfair.units import Buffer, format_rate, format_size, format_time, parse_buffer, parse_rate, parse_size, parse_time


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("10Mbit", 10_000_000),
        ("10Mbps", 10_000_000),
        ("10 Mbit/s", 10_000_000),
        ("10mbit", 10_000_000),
        ("1.5Gbit", 1_500_000_000),
        ("100kbit", 100_000),
        ("500bit", 500),
        ("500bps", 500),
        (10_000_000, 10_000_000),
        ("2500000", 2_500_000),
    ],
)
def test_rates(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize("text", ["0Mbit", "-10Mbit", 0, -5])
def test_rate_must_be_positive(text):
    with pytest.raises(ValueError, match="must be > 0"):
        parse_rate(text)


@pytest.mark.parametrize("text", ["10MB", "10MB/s", "10MBps", "1KiB"])
def test_rate_in_bytes_is_rejected_with_a_hint(text):
    with pytest.raises(ValueError, match="bits per second"):
        parse_rate(text)


@pytest.mark.parametrize("text", ["fast", "10 furlongs", "", True, [1]])
def test_rate_errors_list_the_forms(text):
    with pytest.raises(ValueError, match="10Mbit"):
        parse_rate(text)


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("50ms", 50_000_000),
        ("5s", 5_000_000_000),
        ("1.5s", 1_500_000_000),
        ("0.1s", 100_000_000),
        ("100us", 100_000),
        ("100µs", 100_000),
        ("250ns", 250),
        ("2min", 120_000_000_000),
        ("1h", 3_600_000_000_000),
        ("0", 0),
        (0, 0),
    ],
)
def test_times(text, ns):
    assert parse_time(text) == ns


@pytest.mark.parametrize(
    ("parse", "text", "why"),
    [
        (parse_time, 50, "needs a unit"),
        (parse_time, "50", "needs a unit"),
        (parse_time, "-5ms", ">= 0"),
        (parse_time, "5 fortnights", "'50ms'"),
        (parse_buffer, 42, "needs a unit"),
        (parse_buffer, "1.5pkt", "whole number"),
    ],
)
def test_bare_numbers_negative_times_unknown_units_and_fractional_packets_are_refused(parse, text, why):
    with pytest.raises(ValueError, match=why):
        parse(text)


@pytest.mark.parametrize(
    ("text", "n"),
    [("64KB", 64_000), ("64kB", 64_000), ("64KiB", 65_536), ("1MB", 1_000_000), ("1MiB", 1_048_576), ("1500B", 1500), (1500, 1500)],
)
def test_sizes(text, n):
    assert parse_size(text) == n


@pytest.mark.parametrize(
    ("text", "buf"),
    [
        ("42pkt", Buffer("packets", 42)),
        ("42p", Buffer("packets", 42)),
        ("42 packets", Buffer("packets", 42)),
        ("64KB", Buffer("bytes", 64_000)),
        ("64KiB", Buffer("bytes", 65_536)),
        ("0.5bdp", Buffer("bdp", Decimal("0.5"))),
        ("2BDP", Buffer("bdp", Decimal("2"))),
    ],
)
def test_buffers(text, buf):
    assert parse_buffer(text) == buf


@pytest.mark.parametrize("text", ["0pkt", "0bdp", "0KB", "-1pkt"])
def test_buffer_of_zero_is_rejected(text):
    with pytest.raises(ValueError, match="must be > 0"):
        parse_buffer(text)


def test_bdp_to_packets_matches_hand_computation():
    # 0.5 x 10 Mbit/s x 50 ms = 31 250 bytes = 20.83 packets of 1500 B -> 21
    assert parse_buffer("0.5bdp").limit_packets(10_000_000, 50_000_000, 1500) == 21
    # 1 x 100 Mbit/s x 50 ms = 625 000 bytes = 416.67 -> 417
    assert parse_buffer("1bdp").limit_packets(100_000_000, 50_000_000, 1500) == 417
    # exactly half a packet rounds up; never below one packet
    assert parse_buffer("1bdp").limit_packets(12_000, 1_500_000_000, 1500) == 2  # 1.5 -> 2
    assert parse_buffer("0.001bdp").limit_packets(1_000_000, 1_000_000, 1500) == 1


@pytest.mark.parametrize("ns", [0, 1, 250, 100_000, 50_000_000, 1_500_000_000, 45_000_000_000])
def test_time_round_trip(ns):
    assert parse_time(format_time(ns)) == ns


@pytest.mark.parametrize("bps", [1, 500, 100_000, 10_000_000, 1_500_000_000, 123_456_789])
def test_rate_round_trip(bps):
    assert parse_rate(format_rate(bps)) == bps


@pytest.mark.parametrize("n", [0, 1500, 64_000, 65_536, 1_000_000, 1_048_577])
def test_size_round_trip(n):
    assert parse_size(format_size(n)) == n


@pytest.mark.parametrize("text", ["42pkt", "64KB", "0.5bdp", "8bdp", "1500B"])
def test_buffer_round_trip(text):
    assert str(parse_buffer(text)) == text
