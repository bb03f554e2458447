"""Traffic for realistic studies (S2): groups of finite flows arriving as a
Poisson process, with object sizes from a distribution, optional per-flow
rate caps (application-limited flows) and non-congestion random loss.

A ``[[groups]]`` entry of the experiment file expands, for a given run seed,
into explicit flows named ``<group>.<i>`` (start = arrival time). The
expansion is deterministic: every draw comes from a numpy PCG64 generator
seeded by (run seed, group index), so the same seed gives the same flows.

Size distributions (``size``):

- ``"3MB"``: every flow has that size (fixed);
- ``{ dist = "uniform", min = "10KB", max = "100KB" }`` (S1);
- ``{ dist = "lognormal", median = "100KB", sigma = 1.5 }``: ln(size) ~ N(ln median, sigma^2);
- ``{ dist = "empirical", file = "sizes.csv" }``: a CSV with columns
  ``size_bytes,cdf`` (cdf non-decreasing, last value 1), sampled by inverse
  transform with linear interpolation between points.

Rate caps (``rate_cap``): ``"1Mbit"`` or ``{ dist = "uniform", min = "0.01Mbit", max = "1Mbit" }`` (S1's scenario 2).
"""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, PlainValidator, model_validator

from ccfair import ccas
from ccfair.errors import SpecError
from ccfair.spec_input import read_input_file
from ccfair.strict import U32, Bool, Float, Int
from ccfair.units import format_rate, format_size, format_time, parse_rate, parse_size, parse_time

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SizeDist", "RateDist", "Group", "expand_group"]

#: Safety bound on the flows one group may expand to.
MAX_GROUP_FLOWS = 200_000

_T = TypeVar("_T")

_Size = Annotated[int, PlainValidator(parse_size), PlainSerializer(format_size, return_type=str, when_used="json")]
_Rate = Annotated[int, PlainValidator(parse_rate), PlainSerializer(format_rate, return_type=str, when_used="json")]
_Time = Annotated[int, PlainValidator(parse_time), PlainSerializer(format_time, return_type=str, when_used="json")]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # validators built on first use (spec._Model)


class CcaTable(_Model):
    """A table with a ``cca`` (``[[flows]]``, ``[[groups]]``): the CCA is canonicalised (aliases,
    variants, ``+pacing``, parameters) before the fields are validated."""

    @model_validator(mode="before")
    @classmethod
    def _resolve_cca(cls, data: Any) -> Any:
        return ccas.canonical_table(data)


class SizeDist(_Model):
    """An object-size distribution (see the module docstring)."""

    dist: Literal["fixed", "uniform", "lognormal", "empirical"]
    value: _Size | None = None
    min: _Size | None = None
    max: _Size | None = None
    median: _Size | None = None
    sigma: Float | None = Field(None, gt=0)
    file: str | None = None

    @model_validator(mode="after")
    def _check(self) -> SizeDist:
        need = {"fixed": ["value"], "uniform": ["min", "max"], "lognormal": ["median", "sigma"], "empirical": ["file"]}[self.dist]
        for k in need:
            if getattr(self, k) is None:
                raise SpecError(k, f"required for dist = {self.dist!r} (needs {', '.join(need)})")
        if self.dist == "uniform" and not (0 < _given(self.min) <= _given(self.max)):
            raise SpecError("min", "uniform sizes need 0 < min <= max")
        if self.dist == "fixed" and not self.value:
            raise SpecError("value", "must be > 0 bytes")
        if self.dist == "empirical":
            _read_cdf(_given(self.file))  # a missing, unreadable or malformed file is an input error now
        return self

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` sizes in bytes (>= 1)."""
        import numpy as np  # here, not at the top: validating a spec needs no numpy

        if self.dist == "fixed":
            out = np.full(n, self.value, dtype=np.float64)
        elif self.dist == "uniform":
            out = rng.uniform(_given(self.min), _given(self.max), n)
        elif self.dist == "lognormal":
            out = rng.lognormal(np.log(_given(self.median)), _given(self.sigma), n)
        else:
            sizes, cdf = _read_cdf(_given(self.file))
            out = np.interp(rng.uniform(0.0, 1.0, n), cdf, sizes)
        return np.maximum(1, np.rint(out)).astype(np.int64)


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def _given(value: _T | None) -> _T:
    """A field its model's validator has required (``SizeDist._check``), as its type."""
    assert value is not None
    return value


def _read_cdf(file: str) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np  # here, not at the top: validating a spec needs no numpy

    data = read_input_file(file, "file", "an empirical CDF (CSV)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError("file", f"{file}: not UTF-8 text (byte {e.start}); expected CSV columns size_bytes,cdf") from None
    try:
        rows = [(float(r["size_bytes"]), float(r["cdf"])) for r in csv.DictReader(io.StringIO(text, newline=""))]
    except (KeyError, ValueError, TypeError, csv.Error) as e:
        raise SpecError("file", f"{file}: expected CSV columns size_bytes,cdf with numbers ({e})") from None
    if not rows:
        raise SpecError("file", f"{file}: no rows")
    sizes, cdf = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
    if not (np.all(np.isfinite(sizes)) and np.all(np.isfinite(cdf))):
        raise SpecError("file", f"{file}: size_bytes and cdf must be finite numbers")
    if np.any(np.diff(cdf) < 0) or np.any(np.diff(sizes) < 0) or abs(cdf[-1] - 1.0) > 1e-9 or cdf[0] < 0:
        raise SpecError("file", f"{file}: size_bytes and cdf must be non-decreasing, cdf in [0, 1] ending at 1")
    return sizes, cdf


def _size_in(value: Any) -> Any:
    return {"dist": "fixed", "value": value} if isinstance(value, (str, int)) else value


def _rate_in(value: Any) -> Any:
    if value is None:
        return None
    return {"dist": "fixed", "value": value} if isinstance(value, (str, int)) else value


class RateDist(_Model):
    """A per-flow application rate cap: fixed or uniform."""

    dist: Literal["fixed", "uniform"]
    value: _Rate | None = None
    min: _Rate | None = None
    max: _Rate | None = None

    @model_validator(mode="after")
    def _check(self) -> RateDist:
        if self.dist == "fixed" and self.value is None:
            raise SpecError("value", "required for dist = 'fixed'")
        if self.dist == "uniform" and (self.min is None or self.max is None or not 0 < self.min <= self.max):
            raise SpecError("min", "uniform rate caps need 0 < min <= max")
        return self

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        import numpy as np  # here, not at the top: validating a spec needs no numpy

        if self.dist == "fixed":
            return np.full(n, self.value, dtype=np.int64)
        return np.maximum(1, np.rint(rng.uniform(_given(self.min), _given(self.max), n))).astype(np.int64)


class Group(CcaTable):
    """A class of finite flows arriving as a Poisson process (``[[groups]]``)."""

    name: str
    cca: ccas.CcaField
    pacing: Bool = False
    rtt: _Time
    arrival_rate: Float = Field(gt=0, description="flows per second (Poisson)")
    start: _Time = 0
    stop: _Time | None = None
    size: Annotated[SizeDist, BeforeValidator(_size_in)]
    rate_cap: Annotated[RateDist | None, BeforeValidator(_rate_in)] = None
    loss: Float = Field(0.0, ge=0.0, lt=1.0)
    mss: Int = Field(1448, ge=64, le=9000)
    init_cwnd: U32 = Field(10, ge=1)
    rwnd: U32 = Field(200, ge=1)
    delayed_ack: Bool = True

    @model_validator(mode="after")
    def _check(self) -> Group:
        if self.stop is not None and self.stop <= self.start:
            raise SpecError("stop", "must be after start")
        if self.rtt <= 0:
            raise SpecError("rtt", "must be > 0")
        return self


def expand_group(group: Group, index: int, seed: int, duration_ns: int) -> list[dict[str, Any]]:
    """The flows of ``group`` for one run, as simulator ``FlowConfig`` dicts.

    Arrivals: exponential inter-arrival times with mean 1/arrival_rate from
    ``start`` until ``stop`` (default: the end of the run).
    """
    import numpy as np  # here, not at the top: validating a spec needs no numpy

    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed & (2**64 - 1), index, 0x67726F7570])))
    stop = duration_ns if group.stop is None else min(group.stop, duration_ns)
    t, starts = float(group.start), []
    mean_gap_ns = 1e9 / group.arrival_rate
    while True:
        t += rng.exponential(mean_gap_ns)
        if t >= stop:
            break
        starts.append(int(t))
        if len(starts) > MAX_GROUP_FLOWS:
            raise SpecError(
                "arrival_rate", f"group {group.name!r} would start more than {MAX_GROUP_FLOWS} flows; lower the rate or the window"
            )
    n = len(starts)
    sizes = group.size.sample(rng, n)
    caps = group.rate_cap.sample(rng, n) if group.rate_cap is not None else [None] * n
    return [
        {
            "name": f"{group.name}.{i}",
            "cca": str(group.cca),
            **({"cca_params": group.cca.params} if group.cca.params else {}),
            "pacing": group.pacing,
            "rtt_ns": group.rtt,
            "start_ns": starts[i],
            "size_bytes": int(sizes[i]),
            "rate_cap_bps": _int_or_none(caps[i]),
            "loss": group.loss,
            "mss_bytes": group.mss,
            "init_cwnd_pkts": group.init_cwnd,
            "rwnd_init_pkts": group.rwnd,
            "delayed_ack": group.delayed_ack,
        }
        for i in range(n)
    ]
