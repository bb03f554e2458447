"""Human units for experiment files: rates, times, sizes and buffer limits.

Every parser returns an exact integer in the simulator's units (bit/s, ns,
bytes) and raises :class:`ValueError` with a message listing the accepted
forms. Numbers are read as decimals (``"1.5s"`` is exactly 1 500 000 000 ns)
and rounded half-up to the nearest integer unit. Unit names are
case-insensitive and may be separated from the number by spaces.

Conventions (stated once, used everywhere):

* Rates are in *bits* per second. ``"Mbps"`` means megabits per second as in
  networking papers (unlike ``tc``, where it means megabytes).
* Sizes are in bytes; ``KB``/``MB``/``GB`` are powers of 1000 and
  ``KiB``/``MiB``/``GiB`` powers of 1024.
* Times need a unit (a bare number is ambiguous), except ``0``.

The ``format_*`` functions are the inverse: they print an integer with the
largest unit that represents it exactly, so ``parse(format(x)) == x``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from typing import Literal

__all__ = [
    "RATE_FORMS",
    "TIME_FORMS",
    "SIZE_FORMS",
    "BUFFER_FORMS",
    "Buffer",
    "parse_rate",
    "parse_time",
    "parse_size",
    "parse_buffer",
    "format_rate",
    "format_time",
    "format_size",
    "round_half_up",
]

RATE_FORMS = "a rate like '10Mbit', '10Mbps', '1.5Gbit', '100kbit', '500bit' or a plain integer in bit/s"
TIME_FORMS = "a time like '50ms', '5s', '1.5s', '100us', '250ns' or '2min'"
SIZE_FORMS = "a size like '1500B', '64KB' (=64000), '64KiB' (=65536), '1MB' or a plain integer in bytes"
BUFFER_FORMS = "a buffer like '42pkt' (packets), '64KB' (bytes) or '0.5bdp' (multiple of the bandwidth-delay product)"

_RATE_UNITS: dict[str, int] = {}
for _prefix, _mult in (("", 1), ("k", 10**3), ("m", 10**6), ("g", 10**9), ("t", 10**12)):
    for _suffix in ("bit", "bps", "bit/s", "bits", "bits/s"):
        _RATE_UNITS[_prefix + _suffix] = _mult

_TIME_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "sec": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}

_SIZE_UNITS: dict[str, int] = {
    "b": 1,
    "byte": 1,
    "bytes": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
}

_PACKET_UNITS = ("pkt", "pkts", "p", "packet", "packets")

_NUMBER = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([^\s\d.+-][^\s]*)?\s*$")


def round_half_up(x: Decimal | Fraction) -> int:
    """Round to the nearest integer, halves away from zero for positives (0.5 -> 1)."""
    if isinstance(x, Fraction):
        return int((x + Fraction(1, 2)) // 1)
    return int(x.to_integral_value(rounding=ROUND_HALF_UP))


def _split(value: object, forms: str) -> tuple[Decimal, str]:
    """Split ``value`` into (number, unit as written). Bare numbers give unit ''.

    The number must be finite and at most about 1e30 (``MAX_EXPONENT``).
    """
    if isinstance(value, bool):
        raise ValueError(f"expected {forms}, got {value!r}")
    unit = ""
    if isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, float):
        number = Decimal(repr(value))
    elif isinstance(value, str):
        m = _NUMBER.match(value)
        if not m:
            raise ValueError(f"expected {forms}, got {value!r}")
        number, unit = Decimal(m.group(1)), m.group(2) or ""
    else:
        raise ValueError(f"expected {forms}, got {value!r}")
    if not number.is_finite():
        raise ValueError(f"expected a finite number, got {value!r}")
    if number.adjusted() > MAX_EXPONENT:
        raise ValueError(f"{value!r} is out of range (at most about 1e{MAX_EXPONENT} before the unit)")
    return number, unit


#: Largest decimal exponent a number with a unit may have; its value in base units must then fit in 64 bits too.
MAX_EXPONENT = 30
#: Largest value in base units (ns, bit/s, bytes): the engine's u64.
U64_MAX = 2**64 - 1


def _in_range(n: int, value: object, base: str) -> int:
    """``n`` if it fits the engine's 64-bit integers, else a ValueError naming the bound."""
    if n > U64_MAX:
        raise ValueError(f"{value!r} is out of range: at most {U64_MAX} {base} (2^64-1)")
    return n


def parse_rate(value: object) -> int:
    """Parse a rate into bit/s (> 0).

    Accepts ``"10Mbit"``, ``"10Mbps"``, ``"10 Mbit/s"``, ``"1.5Gbit"``,
    ``"100kbit"``, ``"500bit"`` or a plain number of bit/s.
    """
    number, written = _split(value, RATE_FORMS)
    unit = written.lower()
    if re.fullmatch(r"[kKMGT]?i?B(ps|/s)?|[kKMGT]?i?[bB]ytes?(ps|/s)?", written):
        raise ValueError(f"rates are in bits per second, e.g. '10Mbit' or '10Mbps'; got {value!r}")
    bps = round_half_up(number * _multiplier(unit, _RATE_UNITS, "rate", RATE_FORMS))
    if bps <= 0:
        raise ValueError(f"must be > 0, got {value!r}")
    return _in_range(bps, value, "bit/s")


def _multiplier(unit: str, units: dict[str, int], what: str, forms: str) -> int:
    """The base units in one ``unit`` (none written: 1); an unknown one names the accepted forms."""
    if unit == "":
        return 1
    if unit not in units:
        raise ValueError(f"unknown {what} unit {unit!r}; expected {forms}")
    return units[unit]


def parse_time(value: object) -> int:
    """Parse a time or duration into nanoseconds (>= 0).

    Accepts ``"50ms"``, ``"5s"``, ``"1.5s"``, ``"100us"``, ``"250ns"``,
    ``"2min"``, ``"1h"``; a bare ``0`` is also allowed.
    """
    number, unit = _split(value, TIME_FORMS)
    unit = unit.lower()
    if unit == "":
        if number == 0:
            return 0
        raise ValueError(f"a time needs a unit; expected {TIME_FORMS}, got {value!r}")
    if unit not in _TIME_UNITS:
        raise ValueError(f"unknown time unit {unit!r}; expected {TIME_FORMS}")
    if number < 0:
        raise ValueError(f"must be >= 0, got {value!r}")
    return _in_range(round_half_up(number * _TIME_UNITS[unit]), value, "ns (about 584 years)")


def parse_size(value: object) -> int:
    """Parse a size into bytes (>= 0).

    Accepts ``"1500B"``, ``"64KB"`` (64 000), ``"64KiB"`` (65 536), ``"1MB"``,
    ``"1MiB"`` or a plain number of bytes.
    """
    number, unit = _split(value, SIZE_FORMS)
    unit = unit.lower()
    mult = _multiplier(unit, _SIZE_UNITS, "size", SIZE_FORMS)
    if number < 0:
        raise ValueError(f"must be >= 0, got {value!r}")
    return _in_range(round_half_up(number * mult), value, "bytes")


BufferKind = Literal["packets", "bytes", "bdp"]


@dataclass(frozen=True)
class Buffer:
    """A bottleneck buffer limit: a packet count, a byte count, or a BDP multiple.

    ``value`` is an ``int`` for packets and bytes and a :class:`~decimal.Decimal`
    for BDP multiples (kept exact so ``0.1bdp`` stays 1/10).
    """

    kind: BufferKind
    value: int | Decimal

    def __str__(self) -> str:
        if self.kind == "packets":
            return f"{self.value}pkt"
        if self.kind == "bytes":
            return format_size(int(self.value))
        return f"{_plain_decimal(Decimal(self.value))}bdp"

    def limit_packets(self, rate_bps: int, rtt_ns: int, packet_bytes: int) -> int:
        """Packets for a BDP multiple: ``max(1, round(mult * rate/8 * rtt / packet_bytes))``.

        Only meaningful for ``kind == "bdp"``; computed with exact fractions
        and rounded half-up (0.5 BDP at 10 Mbit/s, 50 ms, 1500 B -> 20.83 -> 21).
        """
        if self.kind != "bdp":
            raise ValueError("limit_packets() is only defined for BDP buffers")
        exact = Fraction(Decimal(self.value)) * rate_bps * rtt_ns / (8 * 10**9 * packet_bytes)
        return min(U64_MAX, max(1, round_half_up(exact)))  # beyond 2^64-1: refused by the resource limits


def parse_buffer(value: object) -> Buffer:
    """Parse a buffer limit (> 0): ``"42pkt"``/``"42p"``, a size (``"64KB"``) or ``"0.5bdp"``.

    A bare number is rejected because it would be ambiguous (packets or bytes?).
    """
    if isinstance(value, Buffer):
        return value
    number, unit = _split(value, BUFFER_FORMS)
    unit = unit.lower()
    if unit == "":
        raise ValueError(f"a buffer needs a unit; expected {BUFFER_FORMS}, got {value!r}")
    if number <= 0:
        raise ValueError(f"must be > 0 (a buffer of zero cannot hold a packet); got {value!r}")
    if unit == "bdp":
        return Buffer("bdp", number.normalize())
    if unit in _PACKET_UNITS:
        if number != number.to_integral_value():
            raise ValueError(f"a packet count must be a whole number, got {value!r}")
        return Buffer("packets", _in_range(int(number), value, "packets"))
    if unit in _SIZE_UNITS:
        return Buffer("bytes", _in_range(round_half_up(number * _SIZE_UNITS[unit]), value, "bytes"))
    raise ValueError(f"unknown buffer unit {unit!r}; expected {BUFFER_FORMS}")


def _plain_decimal(d: Decimal) -> str:
    """Print a decimal without exponent or trailing zeros (``Decimal('8E+1')`` -> ``'80'``)."""
    return format(d.normalize(), "f")


def _format_exact(value: int, units: list[tuple[str, int]]) -> str:
    """Print ``value`` with the largest unit in ``units`` that divides it exactly."""
    if value == 0:
        return f"0{units[0][0]}"
    for name, size in units:
        if value % size == 0:
            return f"{value // size}{name}"
    return f"{value}{units[-1][0]}"  # pragma: no cover - the last unit has size 1


def format_rate(bps: int) -> str:
    """Print bit/s as ``'10Mbit'``, ``'1500kbit'``, ``'7bit'`` (exact)."""
    return _format_exact(bps, [("Gbit", 10**9), ("Mbit", 10**6), ("kbit", 10**3), ("bit", 1)])


def format_time(ns: int) -> str:
    """Print nanoseconds as ``'45s'``, ``'50ms'``, ``'100us'``, ``'250ns'`` (exact)."""
    return _format_exact(ns, [("s", 10**9), ("ms", 10**6), ("us", 10**3), ("ns", 1)])


def format_size(n: int) -> str:
    """Print bytes as ``'64KB'``, ``'64KiB'``, ``'1500B'`` (exact; decimal units first)."""
    if n == 0:
        return "0B"
    for name, size in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n % size == 0:
            return f"{n // size}{name}"
    return f"{n}B"
