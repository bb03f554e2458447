"""The experiment description: typed, validated, with human units.

An experiment file (TOML) is read into a raw dict, optional ``--set``
overrides are applied to that dict, and the result is validated into a
:class:`Spec`. Every unit is converted on the way in (times to ns, rates to
bit/s, sizes to bytes); :meth:`Spec.to_run_config` then produces the
fully-resolved JSON dict the simulator accepts (``RunConfig`` in
``crates/ccfair-sim/src/config.rs``).

Every problem is reported as a :class:`~ccfair.errors.SpecError` naming the
dotted field (``flows.1.cca``) and what is allowed. Unknown keys are errors,
never silently ignored.

The schema is documented in ``docs/experiment-file.md``.
"""

from __future__ import annotations

import copy
import difflib
import numbers
import typing
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    PrivateAttr,
    ValidationError,
    create_model,
    model_validator,
)

from ccfair import ccas, profiles, qdiscs, topology
from ccfair.core_resolve import to_json
from ccfair.errors import SpecError
from ccfair.spec_input import apply_overrides, check_tree, load_toml, parse_override
from ccfair.strict import U32, Bool, Float, Int
from ccfair.traffic import MAX_GROUP_FLOWS, CcaTable, Group, expand_group
from ccfair.units import (
    U64_MAX,
    Buffer,
    format_rate,
    format_size,
    format_time,
    parse_buffer,
    parse_rate,
    parse_size,
    parse_time,
    round_half_up,
)

__all__ = [
    "HEADER_BYTES",
    "L2_OVERHEAD_BYTES",
    "Spec",
    "Window",
    "Bottleneck",
    "Link",
    "Flow",
    "DropTail",
    "QDISCS",
    "apply_overrides",
    "load_toml",
    "parse_override",
]

#: Header bytes per data packet on the wire (IPv4 20 + TCP 20 + timestamps 12),
#: as in the simulator: the default MSS of 1448 gives 1500-byte packets.
HEADER_BYTES = 52
#: Layer-2 bytes the bottleneck link adds to each packet by default
#: (``bottleneck.l2_overhead``): the Ethernet header, so a 1500-byte IP packet
#: is a 1514-byte frame, as the testbed's veth frames and Linux's tbf charge
#: them (skb->len) without a size table.
L2_OVERHEAD_BYTES = 14

# Integer fields declare their range on the field: the engine's u32 fields are strict.U32,
# others ``Field(le=U64_MAX)`` or narrower; any integer anywhere in the input beyond 64 bits
# is refused first, at parse time (spec_input.py :func:`check_tree`).
#: Most flows one experiment may simulate (``count`` and the total over ``[[flows]]``).
MAX_FLOWS = MAX_GROUP_FLOWS
#: The ``noise = "host"`` model (docs/fidelity.md, "Host noise"): mean of the
#: exponential extra delay each data packet (sender host) and each ACK
#: (receiver host) gets, FIFO per flow, drawn from the run's seed. Calibrated
#: against the testbed (bench/realism_calibration.py fit --acceptance, seeds 1-10;
#: docs/fidelity.md, "Host noise and run-to-run spread"). And the sender stack's
#: time per skb, which spaces the TSvals of a flight's skbs: measured on the testbed
#: (net:net_dev_queue, medians 9 and 12 us; tcp/sender.rs ``stamp_skbs``).
HOST_NOISE: dict[str, int] = {"host_jitter_ns": 100_000, "ack_jitter_ns": 50_000, "skb_stack_ns": 10_000}


# --------------------------------------------------------------------------
# Field types with units. Stored as integers in simulator units; printed back
# in human units when dumped as JSON (so a dumped spec re-validates).
# --------------------------------------------------------------------------


def _positive(parse: typing.Callable[[object], int]) -> typing.Callable[[object], int]:
    def check(value: object) -> int:
        try:
            parsed = parse(value)
        except ValueError as e:
            if str(e).startswith("must be >= 0"):  # negative: say what is allowed here (0 is not)
                raise ValueError(f"must be > 0, got {value!r}") from None
            raise
        if parsed <= 0:
            raise ValueError(f"must be > 0, got {value!r}")
        return parsed

    return check


def _optional(parse: typing.Callable[[object], Any]) -> typing.Callable[[object], Any]:
    def check(value: object) -> Any:
        return None if value is None else parse(value)

    return check


#: GRO's NAPI poll window for ``gro = true``: 50 us, the interrupt throttling of S3's
#: Intel XL710 NICs (Linux i40e driver: I40E_ITR_20K, 20 000 interrupts/s).
GRO_WINDOW_NS = 50_000
#: TCP's initial window when a flow sets none (Linux TCP_INIT_CWND, RFC 6928), segments. A DCCP
#: flow without one gets the simulator's CCID 2 default (RFC 4341 section 5, FlowConfig::init_cwnd).
TCP_INIT_CWND_PKTS = 10


def parse_gro(value: object) -> int:
    """``false`` (off), ``true`` (a :data:`GRO_WINDOW_NS` poll window) or the window as a time."""
    if isinstance(value, bool):
        return GRO_WINDOW_NS if value else 0
    return parse_time(value)


def _opt_format(fmt: typing.Callable[[Any], str]) -> typing.Callable[[Any], str | None]:
    return lambda v: None if v is None else fmt(v)


_TimeOut = PlainSerializer(format_time, return_type=str, when_used="json")

#: A time >= 0 in ns ("50ms", "5s", ...).
Time = Annotated[int, PlainValidator(parse_time), _TimeOut]
#: A time > 0 in ns.
PositiveTime = Annotated[int, PlainValidator(_positive(parse_time)), _TimeOut]
#: An optional time in ns.
OptionalTime = Annotated[int | None, PlainValidator(_optional(parse_time)), PlainSerializer(_opt_format(format_time), when_used="json")]
#: An optional time > 0 in ns.
OptionalPositiveTime = Annotated[
    int | None,
    PlainValidator(_optional(_positive(parse_time))),
    PlainSerializer(_opt_format(format_time), when_used="json"),
]
#: A rate > 0 in bit/s ("10Mbit", ...).
Rate = Annotated[int, PlainValidator(parse_rate), PlainSerializer(format_rate, return_type=str, when_used="json")]
#: An optional rate > 0 in bit/s.
OptionalRate = Annotated[
    int | None, PlainValidator(_optional(_positive(parse_rate))), PlainSerializer(_opt_format(format_rate), when_used="json")
]
#: An optional size > 0 in bytes ("3MB", ...).
OptionalSize = Annotated[
    int | None, PlainValidator(_optional(_positive(parse_size))), PlainSerializer(_opt_format(format_size), when_used="json")
]
OptionalPositiveSize = OptionalSize
#: A buffer limit ("42pkt", "64KB", "0.5bdp").
BufferLimit = Annotated[Buffer, PlainValidator(parse_buffer), PlainSerializer(str, return_type=str, when_used="json")]


def parse_outage(value: object) -> tuple[int, int]:
    """One outage ``[start, duration]`` of a link, times in ns (``["10s", "3ms"]``; any time form,
    ``"123456ns"`` too). Their order and lengths are the simulator's to check (crates/ccfair-sim/src/outages.rs)."""
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple) or len(value) != 2:
        raise ValueError(f'expected [start, duration] (times, e.g. ["10s", "3ms"]), got {value!r}')
    return parse_time(value[0]), parse_time(value[1])


def _format_outage(value: tuple[int, int]) -> list[str]:
    return [format_time(value[0]), format_time(value[1])]


#: A link's outage ``[start, duration]`` in ns, printed back as times.
Outage = Annotated[tuple[int, int], PlainValidator(parse_outage), PlainSerializer(_format_outage, when_used="json")]
#: What ``outages`` means, on ``[bottleneck]`` and on a rate link of ``[[links]]``.
OUTAGES_DOC = (
    'Outages of the link: a list of [start, duration] (times after the run\'s start, e.g. [["10s", "3ms"]]), in time '
    "order, not overlapping, each duration > 0. The link sends nothing over each: its frames wait in the queue (the outage "
    "drops none), its token bucket's clock stops, so a backlogged link loses exactly the outage's length of service. "
    "Default: none. Both backends (the testbed's userspace bottleneck; the kernel bottleneck refuses them)."
)


class _Model(BaseModel):
    """Base of every spec model: unknown keys are rejected.

    ``defer_build``: a model's validator is built when it is first used, not at import;
    validating a :class:`Spec` builds one validator for it and every model it nests (the S0
    example builds 3, ``Spec`` and the defaults ``Testbed()`` and ``Limits()``, instead of 30
    at import; start-up, docs/benchmarks.md "Start-up")."""

    model_config = ConfigDict(extra="forbid", validate_default=False, defer_build=True)


# --------------------------------------------------------------------------
# Queue disciplines. Every kind and its parameters come from the simulator's
# registry (crates/ccfair-sim/src/qdisc/*.rs, read through ccfair.qdiscs): one
# model per kind is generated from it, its parameters written as in the
# declaration without the unit suffix (``target = "5ms"`` for ``target_ns``),
# converted by the declared unit and validated by the simulator when the file
# is read. The bases below add only what needs the experiment: ``limit`` (a
# buffer: packets, bytes or a BDP multiple), RED's thresholds as buffers,
# STEP's threshold as a buffer or a delay at the link rate, S3's
# ``step = {k, rtt}``, and checks against the rest of the experiment.
# --------------------------------------------------------------------------

#: Sizes in bytes ("1514B", "64KiB"), printed back in human units.
Size = Annotated[int, PlainValidator(parse_size), PlainSerializer(format_size, return_type=str, when_used="json")]
OptionalBufferLimit = Annotated[Buffer | None, PlainValidator(_optional(parse_buffer)), PlainSerializer(_opt_format(str), when_used="json")]


def _ms(ns: int) -> str:
    return format_time(int(ns))


class _Qdisc(_Model):
    """A queue discipline: ``kind``, ``limit`` (default: ``bottleneck.buffer``) and the parameters its
    declaration has (qdisc/*.rs)."""

    kind: str
    limit: OptionalBufferLimit = Field(
        None, description="Queue limit ('100pkt', '64KB', '1bdp'); unit: packets, bytes or BDP; default: bottleneck.buffer"
    )

    #: Fields of the model that are experiment-level forms, not parameters passed through.
    _OWN: typing.ClassVar[tuple[str, ...]] = ()

    def given(self) -> dict[str, Any]:
        """The parameters written, as simulator fields in simulator units (experiment-level forms excluded)."""
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if name in ("kind", "limit") or name in self._OWN or value is None:
                continue
            try:
                field, v = qdiscs.to_field(self.kind, name, value)
            except ValueError as e:
                raise SpecError(f"bottleneck.qdisc.{name}", str(e)) from None
            out[field] = v
        return out

    def _limits(self, spec: Spec) -> dict[str, Any]:
        """``limit`` (default ``bottleneck.buffer``) as the declared limit fields; packets only if it has no byte limit."""
        lp, lb = spec.buffer_limits() if self.limit is None else spec.resolve_buffer(self.limit)
        if "limit_bytes" not in {p["field"] for p in qdiscs.params_of(self.kind)}:
            # a byte buffer becomes whole full-size packets (Linux: PI2/DualPI2 limits are packets)
            return {"limit_packets": lp if lp is not None else max(1, int(lb or 0) // spec.packet_wire_bytes)}
        return {"limit_packets": lp, "limit_bytes": lb}

    def _resolve(self, spec: Spec, params: dict[str, Any]) -> dict[str, Any]:
        """Fields from the experiment-level forms, given every other parameter (``params``)."""
        return {}

    def _check(self, spec: Spec, params: dict[str, Any]) -> None:
        """Checks against the rest of the experiment (the simulator checks the parameters themselves)."""

    def _resolved(self, spec: Spec, fields: dict[str, Any]) -> dict[str, Any]:
        try:
            return qdiscs.resolve(self.kind, fields)
        except SpecError as e:
            if e.field == "limit" and self.limit is None:
                raise SpecError("bottleneck.buffer", e.message) from None  # the limit came from the buffer
            raise SpecError(".".join(p for p in ("bottleneck.qdisc", e.field) if p), e.message) from None

    def run_config(self, spec: Spec) -> dict[str, Any]:
        """``bottleneck.qdisc`` of the RunConfig: every parameter the discipline runs with, validated."""
        fields = {**self._limits(spec), **self.given()}
        declared = {p["field"]: p["default"] for p in qdiscs.params_of(self.kind)}
        fields.update(self._resolve(spec, {**declared, **fields}))
        params = self._resolved(spec, fields)
        self._check(spec, params)
        return {"kind": self.kind, **params}


class _TargetAqm(_Qdisc):
    """An AQM with a delay target: the target must be below the buffer's drain time."""

    def _check(self, spec: Spec, params: dict[str, Any]) -> None:
        drain_ns = spec.drain_time_ns(self.limit)
        target = params["target_ns"]
        assert spec.bottleneck is not None  # a dumbbell's, or a link's view (_LinkView)
        if target >= drain_ns:
            raise SpecError(
                "bottleneck.qdisc.target",
                f"{_ms(target)} is not below the buffer's drain time ({_ms(drain_ns)} at {format_rate(spec.bottleneck.rate)}); "
                "the AQM could never act before the buffer overflows - raise the buffer or lower the target",
            )


class _Red(_Qdisc):
    """RED's thresholds as buffers ("5pkt", "30KB", "0.1bdp"), converted by byte mode."""

    _OWN = ("min_th", "max_th")
    min_th: OptionalBufferLimit = Field(
        None, description="Lower threshold ('5pkt', '30KB'); unit: packets, bytes or BDP; default: max_th / 3"
    )
    max_th: OptionalBufferLimit = Field(
        None, description="Upper threshold ('15pkt', '90KB'); unit: packets, bytes or BDP; default: limit / 4"
    )

    def _resolve(self, spec: Spec, params: dict[str, Any]) -> dict[str, Any]:
        def conv(b: Buffer | None) -> float | None:
            if b is None:
                return None
            pkts, nbytes = spec.resolve_buffer(b)
            if nbytes is not None:
                return float(nbytes) if params["byte_mode"] else float(nbytes / spec.packet_wire_bytes)
            assert pkts is not None  # resolve_buffer gives one of the two
            return float(pkts * spec.packet_wire_bytes) if params["byte_mode"] else float(pkts)

        return {"min_th": conv(self.min_th), "max_th": conv(self.max_th)}


class StepK(_Model):
    """S3's threshold: ``k`` x ``rtt`` x bottleneck rate."""

    k: Float = Field(gt=0)
    rtt: PositiveTime


def _parse_threshold(value: object) -> str:
    text = str(value).strip()
    try:
        parse_buffer(text)
        return text
    except ValueError:
        pass
    try:
        if parse_time(text) <= 0:
            raise ValueError
        return text
    except ValueError:
        raise ValueError(
            f"expected a queue length ('30pkt', '45KB', '0.2bdp') or a delay at the link rate ('10ms'), got {value!r}"
        ) from None


class _Step(_Qdisc):
    """STEP's threshold: a queue length or a delay at the link rate, or S3's ``step = {k, rtt}``."""

    _OWN = ("threshold", "step")
    threshold: Annotated[str | None, PlainValidator(_optional(_parse_threshold))] = Field(
        None,
        description="Marking threshold: a queue length ('30pkt', '45KB', '0.2bdp') or a delay at the link rate ('10ms'); "
        "unit: packets, bytes, BDP or time; default: required (or step)",
    )
    step: StepK | None = Field(
        None, description="S3's threshold { k, rtt }: k x rtt x the link rate; unit: k ratio, rtt time; default: unset"
    )

    def _resolve(self, spec: Spec, params: dict[str, Any]) -> dict[str, Any]:
        if (self.threshold is None) == (self.step is None):
            raise SpecError("bottleneck.qdisc.threshold", "give exactly one of threshold ('30pkt', '10ms') or step = {k, rtt}")
        pkts: int | None
        nbytes: int | None
        assert spec.bottleneck is not None  # a dumbbell's, or a link's view (_LinkView)
        if self.step is not None:
            step_bytes = round_half_up(Fraction(Decimal(str(self.step.k))) * spec.bottleneck.rate * self.step.rtt / (8 * 10**9))
            pkts, nbytes = None, max(1, step_bytes)
        else:
            assert self.threshold is not None
            try:
                pkts, nbytes = spec.resolve_buffer(parse_buffer(self.threshold))
            except ValueError:
                ns = parse_time(self.threshold)
                pkts, nbytes = None, max(1, round_half_up(Fraction(spec.bottleneck.rate * ns, 8 * 10**9)))
        return {"threshold_packets": pkts, "threshold_bytes": nbytes}

    def _check(self, spec: Spec, params: dict[str, Any]) -> None:
        lp, lb = params["limit_packets"], params["limit_bytes"]
        cap_bytes = lb if lb is not None else (lp or 0) * spec.packet_wire_bytes
        pkts, nbytes = params["threshold_packets"], params["threshold_bytes"]
        th_bytes = nbytes if nbytes is not None else (pkts or 0) * spec.packet_wire_bytes
        if th_bytes >= cap_bytes:
            raise SpecError("bottleneck.qdisc.threshold", f"must be below the queue limit ({cap_bytes} bytes), got {th_bytes} bytes")


class _Csaqm(_Qdisc):
    """CSAQM's delay target as a time or S3's ``step = {k, rtt}`` (K x RTT); weights per flow."""

    _OWN = ("target", "step")
    target: OptionalPositiveTime = Field(None, description="Delay target ('10ms'), or from step; unit: time")
    step: StepK | None = Field(None, description="S3's target { k, rtt }: k x rtt; unit: k ratio, rtt time; default: unset")

    def _resolve(self, spec: Spec, params: dict[str, Any]) -> dict[str, Any]:
        if self.target is not None and self.step is not None:
            raise SpecError("bottleneck.qdisc.target", "give target ('10ms') or step = {k, rtt}, not both")
        if self.step is not None:
            return {"target_ns": max(1, round_half_up(Fraction(Decimal(str(self.step.k))) * self.step.rtt))}
        return {} if self.target is None else {"target_ns": self.target}

    def _check(self, spec: Spec, params: dict[str, Any]) -> None:
        if not spec.groups and len(params["weights"]) > len(spec.flows):
            raise SpecError("bottleneck.qdisc.weights", f"{len(params['weights'])} weights for {len(spec.flows)} flows")


#: The experiment-level base of a kind; every other kind is a plain :class:`_Qdisc`.
_BASES: dict[str, type[_Qdisc]] = {
    "codel": _TargetAqm,
    "fq_codel": _TargetAqm,
    "pie": _TargetAqm,
    "red": _Red,
    "step": _Step,
    "csaqm": _Csaqm,
}


def _model_for(kind: str) -> type[_Qdisc]:
    """The model of ``kind``: its base plus one field per declared parameter (written as in the file)."""
    base = _BASES.get(kind, _Qdisc)
    fields: dict[str, Any] = {"kind": (Literal[kind], kind)}
    for p in qdiscs.params_of(kind):
        if p["field"] in ("limit_packets", "limit_bytes") or p["name"] in base.model_fields or p["name"] in fields:
            continue
        fields[p["name"]] = (Any, Field(None, description=p["doc"]))
    name = "".join(w.capitalize() for w in kind.split("_"))
    model = create_model(name, __base__=base, __doc__=qdiscs.entry(kind)["source"], **fields)
    return typing.cast(type[_Qdisc], model)


#: Queue disciplines by kind, generated from the simulator's registry.
QDISCS: dict[str, type[_Qdisc]] = {kind: _model_for(kind) for kind in qdiscs.kinds()}
DropTail = QDISCS["droptail"]


def _qdisc_shorthand(value: object) -> object:
    """Accept ``qdisc = "droptail"`` as shorthand for ``{kind = "droptail"}``; resolve aliases.

    A table without ``kind`` means the default, drop-tail.
    """
    if isinstance(value, BaseModel):
        return value
    if isinstance(value, str):
        value = {"kind": value}
    if not isinstance(value, dict):
        raise ValueError(f"expected a queue discipline name ({', '.join(QDISCS)}) or a table with 'kind'")
    kind = str(value.get("kind", "droptail")).strip().lower()
    kind = qdiscs.aliases().get(kind, kind)
    if kind not in QDISCS:
        raise SpecError("kind", f"unknown queue discipline {value['kind']!r}; allowed: {', '.join(QDISCS)}")
    return {**value, "kind": kind}


if typing.TYPE_CHECKING:  # the union of the generated models, to a type checker their base
    Qdisc = _Qdisc
else:
    Qdisc = Annotated[
        typing.Union[tuple(QDISCS.values())],  # noqa: UP007
        Field(discriminator="kind") if len(QDISCS) > 1 else Field(),
        BeforeValidator(_qdisc_shorthand),
    ]

#: ECN modes of a flow (RFC 3168 classic, RFC 9331 scalable / L4S) and accepted spellings.
ECN_MODES = ("off", "classic", "scalable")
ECN_ALIASES: dict[str, str] = {"rfc3168": "classic", "ect0": "classic", "l4s": "scalable", "ect1": "scalable", "none": "off"}


def _ecn_mode(value: object) -> object:
    """``true`` -> classic, ``false`` -> off, aliases resolved; None = the CCA's default."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "classic" if value else "off"
    if isinstance(value, str):
        v = value.strip().lower()
        v = ECN_ALIASES.get(v, v)
        if v in ECN_MODES:
            return v
    raise ValueError(f"expected one of {', '.join(ECN_MODES)} (or true = classic, false = off, 'l4s' = scalable), got {value!r}")


EcnMode = Annotated[Literal["off", "classic", "scalable"] | None, BeforeValidator(_ecn_mode)]


# --------------------------------------------------------------------------
# The experiment models.
# --------------------------------------------------------------------------


class Window(_Model):
    """Analysis window ``[start, end)``; ``end`` defaults to the end of the run."""

    start: Time = 0
    end: OptionalTime = None


class Bottleneck(_Model):
    """The shared bottleneck link and its queue."""

    rate: Rate
    delay: Time = 0
    buffer: BufferLimit = Buffer("bdp", Decimal(1))
    bdp_rtt: OptionalPositiveTime = None
    qdisc: Qdisc = Field(default_factory=DropTail)
    l2_overhead: Int = Field(
        L2_OVERHEAD_BYTES,
        ge=0,
        le=1000,
        description="Bytes of layer-2 framing the link adds to every packet's IP length: they count in its "
        "serialization time, in byte limits and backlog, and in the link's sent bytes (14: Ethernet header, "
        "as the testbed's frames; 38 adds preamble, FCS and inter-frame gap; 0: IP packets only). Both backends.",
    )
    outages: list[Outage] = Field(default_factory=list, description=OUTAGES_DOC)


#: A link name: letters, digits, '_' and '-'.
LINK_NAME_CHARS = "[A-Za-z0-9_-]+"


class Link(_Model):
    """One link of a topology (``[[links]]``, docs/topology.md): a queue in front of a
    transmitter at a constant ``rate`` or following a mahimahi ``trace``, then ``delay``."""

    name: str = Field(pattern=f"^{LINK_NAME_CHARS}$")
    rate: OptionalRate = None
    trace: str | None = Field(None, description="mahimahi trace file (relative to the experiment file); exclusive with rate")
    delay: Time = 0
    buffer: BufferLimit = Buffer("bdp", Decimal(1))
    qdisc: Qdisc = Field(default_factory=DropTail)
    loss: Float = Field(0.0, ge=0.0, lt=1.0, description="random loss probability per packet entering the link")
    l2_overhead: Int = Field(L2_OVERHEAD_BYTES, ge=0, le=1000, description="as bottleneck.l2_overhead")
    outages: list[Outage] = Field(default_factory=list, description="as bottleneck.outages (a rate link only)")

    _trace_ms: list[int] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _rate_or_trace(self) -> Link:
        if (self.rate is None) == (self.trace is None):
            got = "both" if self.rate is not None else "neither"
            raise SpecError("rate", f"give exactly one of rate ('10Mbit') or trace (a mahimahi file), got {got}")
        if self.trace is not None:
            self._trace_ms = topology.read_trace(self.trace, "trace")
        return self

    @property
    def trace_ms(self) -> list[int] | None:
        """The trace's delivery opportunities (ms), read when the spec was validated."""
        return self._trace_ms

    @property
    def mean_rate_bps(self) -> int:
        """The link's rate: ``rate``, or the trace's mean rate (one MTU per opportunity over its period)."""
        if self.rate is not None:
            return self.rate
        assert self._trace_ms is not None
        return topology.trace_mean_rate_bps(self._trace_ms)


#: Bottleneck implementations of the testbed backend (docs/testbed.md).
TESTBED_BOTTLENECKS = ("userspace", "kernel")


class Testbed(_Model):
    """Options of the testbed backend only (``--backend testbed``); the simulator ignores them."""

    #: "userspace": ccfair-bottleneck does delay, queue and rate; "kernel": Linux's tc tbf + child
    #: qdisc on the receiver-facing port do queue and rate, ccfair-bottleneck only the delay.
    bottleneck: Literal["userspace", "kernel"] = "userspace"
    #: How a flow's CCA runs (ccfair.testbed.bpfcc): "auto": the host kernel's module when it
    #: has one, else ccfair's BPF port of the Linux module; "bpf": the BPF port wherever there
    #: is one (e.g. the BPF twins of cubic and reno, to check the ports against the built-in modules).
    cca_impl: Literal["auto", "bpf"] = "auto"
    #: TCP timestamp clocks of the end hosts, on both backends: "random" = Linux's default
    #: (net.ipv4.tcp_timestamps = 1, a random TSval offset per connection and end), "none" =
    #: tcp_timestamps = 2 (timestamps without the offset, from the host's boot). TCP-LP's
    #: one-way delay estimate (tcp_lp.c) needs "none" to work (docs/linux-ports.md, "lp").
    timestamp_offsets: Literal["random", "none"] = "random"
    #: The order in which ccfair-bottleneck admits frames of different sender ports that one
    #: pass of its loop finds due (ccfair-bottleneck main.rs): "port": port by port, the first
    #: flow's port first (the stored fidelity runs); "rotate": the first port moves on by one
    #: each pass; "arrival": in the order of the kernel's receive timestamps (SO_TIMESTAMPNS), as
    #: a router admits them. Testbed only (the simulator admits in arrival order).
    bottleneck_order: Literal["port", "rotate", "arrival"] = "port"


class Limits(_Model):
    """Resource limits of one run (``[limits]``; crates/ccfair-sim/src/limits.rs projects
    memory, events and wall time from the configuration and refuses a run over a limit).
    Unset fields keep the engine's defaults (4 GiB, 10^12 events, 4 h)."""

    memory: OptionalPositiveSize = None
    events: Int | None = Field(default=None, ge=1, le=U64_MAX)
    wall: OptionalPositiveTime = None

    def to_config(self) -> dict[str, int]:
        """The engine's ``Limits`` JSON: only the fields that are set."""
        out = {"memory_bytes": self.memory, "events": self.events, "wall_ns": self.wall}
        return {k: v for k, v in out.items() if v is not None}


class Flow(CcaTable):
    """One bulk flow, or ``count`` identical flows (named ``name.0`` .. ``name.N-1``)."""

    name: str | None = None
    cca: ccas.CcaField
    pacing: Bool = False
    rtt: PositiveTime
    start: Time = 0
    stop: OptionalTime = None
    start_jitter: Time = 0
    mss: U32 = 1448
    rwnd: U32 = 200  # the engine's u32 (its other bounds: config.rs)
    rwnd_max: U32 | None = Field(None, ge=1)
    #: Initial congestion window, segments; None = the transport's default (TCP: 10, Linux / RFC 6928;
    #: DCCP CCID 2: RFC 4341's window, 3 packets at the default MSS; the simulator's FlowConfig::init_cwnd).
    init_cwnd: U32 | None = None
    delayed_ack: Bool = True
    ecn: EcnMode = None
    count: Int = Field(1, ge=1, le=MAX_FLOWS)
    size: OptionalSize = None
    rate_cap: OptionalRate = None
    loss: Float = 0.0
    # mss (64..9000), rwnd, init_cwnd (>= 1) and loss ([0, 1)) are checked once, by the
    # simulator's RunConfig::validate when the file is read (Spec._check_with_simulator).
    #: "tcp" or "dccp"; None = from the CCA (cca = "ccid2" is DCCP's CCID 2, every other CCA is TCP).
    transport: Literal["tcp", "dccp"] | None = None
    # Sender profiles and application flows (python/ccfair/profiles.py).
    #: The profile whose fields are this flow's defaults (already applied by Spec; kept as a label).
    profile: str | None = None
    #: Minimum RTO (Linux route rto_min); None = the backend's default (Linux: 200 ms).
    min_rto: OptionalPositiveTime = None
    #: TSO/GSO bursts: true = Linux autosizing, false = off, N = at most N segments; None = backend default.
    tso: Annotated[bool | int | None, PlainValidator(_optional(profiles.parse_tso))] = None
    #: GRO receive coalescing at the receiver: its NAPI poll window in ns (0 = off, the default;
    #: ``true`` = GRO_WINDOW_NS). Simulator only (the testbed's veths have GRO off).
    gro: Annotated[int, PlainValidator(parse_gro), _TimeOut] = 0
    #: Linux's SACK compression at the receiver (``__tcp_ack_snd_check``, tcp_comp_sack_*); None =
    #: the backend's default: off on the simulator (docs/linux-ports.md), on in the testbed's kernel.
    sack_compression: bool | None = None
    #: "bulk" (ccfair's sender) or "http" (a download from an HTTP server; testbed).
    kind: Literal["bulk", "http"] = "bulk"
    #: HTTP version of an http flow: "1.1" or "2" (default "2", as S0's h2load).
    http: Annotated[str | None, PlainValidator(_optional(profiles.parse_http_version))] = None
    #: A remote URL to download (kind = "http"; testbed only).
    url: Annotated[str | None, PlainValidator(_optional(profiles.parse_url))] = None
    #: Forward (data) path: link names of ``[[links]]`` in order (docs/topology.md); None = the
    #: dumbbell's one bottleneck, or the only link.
    path: list[str] | None = None
    #: Links the flow's ACKs cross, queued behind their other traffic; None = an uncongested return line.
    reverse_path: list[str] | None = None

    @model_validator(mode="after")
    def _check(self) -> Flow:
        if self.stop is not None and self.stop <= self.start:
            raise SpecError("stop", f"must be after start ({format_time(self.start)})")
        if self.rwnd_max is not None and self.rwnd_max < self.rwnd:
            raise SpecError("rwnd_max", f"must be >= rwnd ({self.rwnd})")
        # transport / CCID 2 combinations: checked once, by RunConfig::validate (config.rs check_transport)
        self._check_app()
        return self

    def _check_app(self) -> None:
        """``http``/``url`` belong to HTTP flows; TCP-only profile fields are refused for DCCP."""
        if self.kind == "http" and self.http is None:
            self.http = "2"
        if self.kind != "http":
            for key in ("http", "url"):
                if getattr(self, key) is not None:
                    raise SpecError(key, f"only for kind = 'http' (this flow is kind = {self.kind!r})")
        if ccas.transport(self.cca) == "dccp" and self.kind == "http":
            raise SpecError("kind", "an HTTP flow runs over TCP; cca 'ccid2' is DCCP")
        if ccas.transport(self.cca) == "dccp" and self.min_rto is not None:
            raise SpecError("min_rto", "not supported with transport 'dccp' (CCID 2 keeps its own RTO)")

    @property
    def label(self) -> str:
        """The CCA as a person would write it: ``"cubic+pacing"`` when paced (BBR always paces)."""
        return self.cca.tag() + (ccas.PACING_SUFFIX if self.pacing and not ccas.needs_pacing(self.cca) else "")


def _default_names(n: int) -> list[str]:
    """'A', 'B', ... for up to 26 flows, else 'flow0', 'flow1', ..."""
    if n <= 26:
        return [chr(ord("A") + i) for i in range(n)]
    return [f"flow{i}" for i in range(n)]


class Spec(_Model):
    """A complete experiment: one bottleneck, its flows, duration and measurement settings.

    Build one with :meth:`from_toml` or :meth:`from_dict` (both raise
    :class:`~ccfair.errors.SpecError`); derive variants with :meth:`with_overrides`.
    """

    name: str = "experiment"
    duration: PositiveTime
    window: Window = Field(default_factory=Window)
    seed: Int = Field(1, ge=0, le=2**64 - 1)
    bin: PositiveTime = 100_000_000
    sample: PositiveTime = 10_000_000
    sojourn_bin: PositiveTime = 100_000
    trace: Bool = False
    #: Host/path noise (docs/fidelity.md, "Host noise"): "host" = per-skb host
    #: delays calibrated against the testbed (HOST_NOISE), "none" = idealized hosts.
    noise: Literal["host", "none"] = "host"
    #: The dumbbell's one shared link; a file has either this or ``links``.
    bottleneck: Bottleneck | None = None
    #: A topology (docs/topology.md): links that flows cross in the order of their ``path``.
    links: list[Link] = Field(default_factory=list)
    flows: list[Flow] = Field(default_factory=list)
    groups: list[Group] = Field(default_factory=list)
    testbed: Testbed = Field(default_factory=Testbed)
    limits: Limits = Field(default_factory=Limits)
    #: Named sender profiles ``[profiles.NAME]`` (python/ccfair/profiles.py); applied to flows before validation.
    profiles: dict[str, dict[str, Any]] = Field(default_factory=dict)

    _raw: dict[str, Any] | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _apply_profiles(cls, data: Any) -> Any:
        return profiles.apply_profiles(data)

    @model_validator(mode="after")
    def _check(self) -> Spec:
        if not self.flows and not self.groups:
            raise SpecError("flows", "missing: at least one flow is required (add a [[flows]] or [[groups]] table)")
        self._check_names()
        self._check_window()
        if self.links or self.bottleneck is None:
            self._check_topology()
            self._check_with_simulator()
            return self
        self._check_no_paths()
        delay = self.bottleneck.delay
        for i, f in enumerate(self.flows):
            if f.rtt < 2 * delay:
                raise SpecError(
                    f"flows.{i}.rtt",
                    f"must be at least twice bottleneck.delay ({format_time(2 * delay)}); "
                    "rtt is the flow's whole base RTT including the bottleneck",
                )
            if f.start >= self.duration:
                raise SpecError(f"flows.{i}.start", f"must be before the end of the run (duration = {format_time(self.duration)})")
        if self.bottleneck.bdp_rtt is not None and self.bottleneck.bdp_rtt < 2 * delay:
            raise SpecError("bottleneck.bdp_rtt", f"must be at least twice bottleneck.delay ({format_time(2 * delay)})")
        buf = self.bottleneck.buffer
        if buf.kind == "bytes" and buf.value < self.packet_wire_bytes:
            raise SpecError(
                "bottleneck.buffer",
                f"{buf} cannot hold one {self.packet_wire_bytes}-byte packet; use at least {self.packet_wire_bytes}B, '1pkt' or a BDP multiple",
            )
        q = self.bottleneck.qdisc
        limit = getattr(q, "limit", None)
        if limit is not None and limit.kind == "bytes" and limit.value < self.packet_wire_bytes:
            raise SpecError("bottleneck.qdisc.limit", f"{limit} cannot hold one {self.packet_wire_bytes}-byte packet")
        self._check_with_simulator()
        return self

    def _check_no_paths(self) -> None:
        for i, f in enumerate(self.flows):
            for key in ("path", "reverse_path"):
                if getattr(f, key) is not None:
                    raise SpecError(
                        f"flows.{i}.{key}",
                        f"{getattr(f, key)!r} needs [[links]]; this file has [bottleneck], whose one link every flow crosses",
                    )

    def _check_topology(self) -> None:
        """``[[links]]`` instead of ``[bottleneck]``: names, every flow's paths and its RTT against their delays."""
        if self.bottleneck is not None:
            raise SpecError("links", "a file has either [bottleneck] (one link every flow crosses) or [[links]] (a topology), not both")
        if not self.links:
            raise SpecError("bottleneck", "required field is missing: give [bottleneck] or [[links]]")
        names: dict[str, int] = {}
        for j, link in enumerate(self.links):
            if link.name in names:
                raise SpecError(f"links.{j}.name", f"duplicate link name {link.name!r} (also links.{names[link.name]})")
            names[link.name] = j
        allowed = list(names)
        if self.groups and len(self.links) > 1:
            raise SpecError("groups", f"[[groups]] need a single link; this file has {len(self.links)} ({', '.join(allowed)})")
        for i, f in enumerate(self.flows):
            if f.url is not None and f.reverse_path is not None:
                raise SpecError(
                    f"flows.{i}.reverse_path",
                    f"a remote download (url = {f.url!r}) has no path in the topology: its data and ACKs cross "
                    "the remote network; allowed only on flows without url",
                )
            if f.path is None:
                if len(self.links) > 1:
                    raise SpecError(f"flows.{i}.path", f"required with several [[links]]: a list of link names ({', '.join(allowed)})")
            else:
                f.path = topology.check_path(f"flows.{i}.path", f.path, allowed)
            if f.reverse_path is not None:
                f.reverse_path = topology.check_path(f"flows.{i}.reverse_path", f.reverse_path, allowed)
            elif f.url is not None and f.path is not None:
                raise SpecError(
                    f"flows.{i}.path", f"a remote download (url = {f.url!r}) has no path in the topology; allowed only on flows without url"
                )
            fwd, back = self.path_delays_ns(f)
            if f.rtt < fwd + back:
                raise SpecError(
                    f"flows.{i}.rtt",
                    f"{format_time(f.rtt)} is below the delays of its links ({format_time(fwd)} on path + {format_time(back)} "
                    f"{'on reverse_path' if f.reverse_path else 'for the ACKs on the same links'}); rtt is the whole base RTT: "
                    f"allowed >= {format_time(fwd + back)}",
                )
            if f.start >= self.duration:
                raise SpecError(f"flows.{i}.start", f"must be before the end of the run (duration = {format_time(self.duration)})")
        for j, link in enumerate(self.links):
            for key, buf in (("buffer", link.buffer), ("qdisc.limit", link.qdisc.limit)):
                if buf is not None and buf.kind == "bytes" and buf.value < self.packet_wire_bytes:
                    raise SpecError(f"links.{j}.{key}", f"{buf} cannot hold one {self.packet_wire_bytes}-byte packet")

    def link_index(self) -> dict[str, int]:
        """Link name -> index in ``links``."""
        return {link.name: j for j, link in enumerate(self.links)}

    def flow_path(self, f: Flow) -> list[str]:
        """A flow's forward path: its own, or the only link (a dumbbell has no names: [])."""
        if f.path is not None:
            return f.path
        return [self.links[0].name] if self.links else []

    def path_delays_ns(self, f: Flow) -> tuple[int, int]:
        """(sum of the delays on the flow's path, on its ACKs' path): without reverse_path its ACKs
        count the path's delays again, as a line of the same length back."""
        delay = {link.name: link.delay for link in self.links}
        fwd = sum(delay[n] for n in self.flow_path(f))
        back = sum(delay[n] for n in f.reverse_path) if f.reverse_path else fwd
        return fwd, back

    def _check_with_simulator(self) -> None:
        """The simulator's own validation of the resolved configuration, when the file is read.

        The parameters of the queue discipline and of each CCA are checked by
        their declarations (qdisc/*.rs, cc/*.rs) on the way; this adds every
        other check of ``RunConfig::validate`` (config.rs), so nothing the
        simulator would refuse passes here. Errors name the experiment's field.
        """
        config = self.to_run_config()
        try:
            from ccfair import _core
        except ImportError:
            return
        if not hasattr(_core, "validate"):
            return
        try:
            encoded = to_json(config)
        except SpecError as e:
            raise SpecError(self._field_of(e.field), e.message) from None
        try:
            _core.validate(encoded)
        except _core.SimValueError as e:
            field, msg = e.args
            raise SpecError(self._field_of(str(field)), str(msg)) from None

    def _field_of(self, field: str) -> str:
        """The experiment's field for a RunConfig field: ``flows.N`` of the expanded flows -> its entry."""
        parts = field.split(".")
        if len(parts) >= 2 and parts[0] == "flows" and parts[1].isdigit():
            n = int(parts[1])
            expanded = self.expand_flows()
            entry = f"flows.{expanded[n][0]}" if n < len(expanded) else "groups"
            return ".".join([entry, *parts[2:]])
        return field

    def _check_names(self) -> None:
        total = sum(f.count for f in self.flows)
        if total > MAX_FLOWS:
            raise SpecError("flows", f"{total} flows in [[flows]] (counts summed); at most {MAX_FLOWS}")
        defaults = _default_names(len(self.flows))
        seen: dict[str, int] = {}
        for i, f in enumerate(self.flows):
            if f.name is None:
                f.name = defaults[i]
            if not f.name:
                raise SpecError(f"flows.{i}.name", "must not be empty")
            names = [f.name] if f.count == 1 else [f"{f.name}.{j}" for j in range(f.count)]
            for n in names:
                if n in seen:
                    raise SpecError(f"flows.{i}.name", f"duplicate flow name {n!r} (also used by flows.{seen[n]})")
                seen[n] = i

    def _check_window(self) -> None:
        w = self.window
        end_field = "window.end"
        if w.end is None:
            w.end = self.duration
            end_field = "duration"  # the window's end defaults to the duration
        if w.end > self.duration:
            raise SpecError("window.end", f"must be within the run (<= duration = {format_time(self.duration)})")
        if w.start >= w.end:
            raise SpecError("window.start", f"must be before window.end ({format_time(w.end)})")
        for field, value in (("window.start", w.start), (end_field, w.end)):
            if value % self.bin:
                raise SpecError(
                    field,
                    f"{format_time(value)} is not a multiple of bin ({format_time(self.bin)}); "
                    "the analysis window must cover whole measurement bins",
                )

    # ---------------------------------------------------------------- loading

    def __eq__(self, other: object) -> bool:
        """Two specs are equal when they describe the same experiment (raw input ignored)."""
        if not isinstance(other, Spec):
            return NotImplemented
        return self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]  # a mutable model is unhashable; BaseModel declares __hash__ a method

    @classmethod
    def from_dict(cls, data: Any) -> Spec:
        """Validate a raw dict (as read from TOML). Raises :class:`SpecError`."""
        if not isinstance(data, dict):
            raise SpecError("", f"an experiment must be a table of keys, got {type(data).__name__}")
        check_tree(data)
        raw = copy.deepcopy(data)
        try:
            spec = cls.model_validate(raw)
        except ValidationError as e:
            raise spec_error_from(e) from None
        spec._raw = copy.deepcopy(data)
        return spec

    @classmethod
    def from_toml(cls, path: str | Path) -> Spec:
        """Read and validate an experiment file. ``name`` defaults to the file's stem; a ``[sweep]`` table is ignored."""
        raw = load_toml(path)
        raw.setdefault("name", Path(path).stem)
        raw.pop("sweep", None)  # a sweep file's [sweep] grid is for ccfair.sweep; this is its base experiment
        return cls.from_dict(raw)

    @property
    def raw(self) -> dict[str, Any]:
        """The unvalidated dict this spec was built from (a copy); overrides apply to it."""
        if self._raw is not None:
            return copy.deepcopy(self._raw)
        return self.model_dump(mode="json")

    def with_overrides(self, overrides: list[str]) -> Spec:
        """A new spec with ``PATH=VALUE`` overrides applied to the raw dict, then validated.

        Example: ``spec.with_overrides(["bottleneck.buffer=8bdp", "flows.1.cca=reno"])``.
        """
        return Spec.from_dict(apply_overrides(self.raw, overrides))

    # ------------------------------------------------------------- resolving

    @property
    def packet_wire_bytes(self) -> int:
        """Wire size of the largest data packet: max MSS + headers (1500 by default)."""
        return max([f.mss for f in self.flows] + [g.mss for g in self.groups]) + HEADER_BYTES

    @property
    def bdp_rtt_ns(self) -> int:
        """RTT used for BDP buffers: ``bottleneck.bdp_rtt`` or the flows' minimum base RTT."""
        assert self.bottleneck is not None
        if self.bottleneck.bdp_rtt is not None:
            return self.bottleneck.bdp_rtt
        return min([f.rtt for f in self.flows] + [g.rtt for g in self.groups])

    @property
    def window_end_ns(self) -> int:
        """End of the analysis window in ns (resolved; never None after validation)."""
        return self.window.end if self.window.end is not None else self.duration

    def warnings(self) -> list[tuple[str, str]]:
        """Legal but probably unintended settings, as ``(field, message)``.

        - A marking AQM whose marks no flow can read: a discipline that needs
          ECN flows (``qdiscs.needs_ecn_flows``: STEP) marks ECN-capable packets
          and drops the others, so with no ECN-capable flow it is a hard drop threshold.
        """
        out: list[tuple[str, str]] = []
        if self.bottleneck is None:
            for view in self.link_views():
                out += [(f"links.{view.index}.{f.split('.', 1)[1]}", m) for f, m in view.warnings()]
            return out
        q = self.bottleneck.qdisc
        if qdiscs.needs_ecn_flows(q.kind) and q.run_config(self)["ecn"]:
            capable = [f.ecn in ("classic", "scalable") or (f.ecn is None and ccas.needs_ecn(f.cca)) for f in self.flows]
            capable += [ccas.needs_ecn(g.cca) for g in self.groups]
            if not any(capable):
                out.append(
                    (
                        "bottleneck.qdisc",
                        f'{q.kind.upper()} marks ECN-capable packets, but no flow is ECN-capable (set ecn = "classic" or '
                        '"scalable" on a flow, or use an ECN-based CCA such as dctcp): every packet above the '
                        "threshold is dropped instead",
                    )
                )
        return out

    def expand_flows(self) -> list[tuple[int, str, Flow]]:
        """Every simulated flow as ``(index in self.flows, name, flow)``; ``count`` expanded."""
        out: list[tuple[int, str, Flow]] = []
        for i, f in enumerate(self.flows):
            assert f.name is not None
            if f.count == 1:
                out.append((i, f.name, f))
            else:
                out.extend((i, f"{f.name}.{j}", f) for j in range(f.count))
        return out

    def buffer_limits(self) -> tuple[int | None, int | None]:
        """The drop-tail limit as ``(limit_packets, limit_bytes)``; exactly one is set.

        A BDP multiple becomes packets: ``max(1, round(mult * rate/8 * bdp_rtt / packet))``
        with the packet's wire size (:attr:`packet_wire_bytes`).
        """
        b = self.bottleneck
        assert b is not None
        if b.buffer.kind == "packets":
            return int(b.buffer.value), None
        if b.buffer.kind == "bytes":
            return None, int(b.buffer.value)
        return b.buffer.limit_packets(b.rate, self.bdp_rtt_ns, self.packet_wire_bytes), None

    def resolve_buffer(self, buf: Buffer) -> tuple[int | None, int | None]:
        """A buffer-like value as ``(packets, bytes)``, exactly one set (BDP multiples -> packets)."""
        if buf.kind == "packets":
            return int(buf.value), None
        if buf.kind == "bytes":
            return None, int(buf.value)
        b = self.bottleneck
        assert b is not None
        return buf.limit_packets(b.rate, self.bdp_rtt_ns, self.packet_wire_bytes), None

    def drain_time_ns(self, limit: Buffer | None = None) -> int:
        """Time the bottleneck needs to send a full queue of ``limit`` (default ``bottleneck.buffer``)."""
        assert self.bottleneck is not None
        pkts, nbytes = self.resolve_buffer(limit or self.bottleneck.buffer)
        total = nbytes if nbytes is not None else (pkts or 0) * self.packet_wire_bytes
        return total * 8 * 10**9 // self.bottleneck.rate

    def link_views(self) -> list[_LinkView]:
        """Each ``[[links]]`` entry as the geometry its queue discipline resolves against."""
        return [_LinkView(self, j) for j in range(len(self.links))]

    def links_run_config(self) -> list[dict[str, Any]]:
        """``links`` of the RunConfig: each link's rate or trace, delay, resolved qdisc, overhead and loss."""
        out = []
        for view in self.link_views():
            link = view.link
            out.append(
                {
                    "name": link.name,
                    **({"rate_bps": link.rate} if link.rate is not None else {"trace_ms": link.trace_ms}),
                    "delay_ns": link.delay,
                    "qdisc": view.qdisc_run_config(),
                    "l2_overhead_bytes": link.l2_overhead,
                    "loss": link.loss,
                    **_outages_ns(link.outages),
                }
            )
        return out

    def to_run_config(self, seed: int | None = None) -> dict[str, Any]:
        """The fully-resolved ``RunConfig`` dict for the simulator (ns, bit/s, bytes, packets).

        ``seed`` replaces the spec's seed when given.
        """
        if seed is None:
            seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**64:
            raise SpecError("seed", f"must be an integer in 0..2^64-1, got {seed!r}")
        seed = int(seed)
        config: dict[str, Any] = {
            "duration_ns": self.duration,
            "seed": seed,
            "bin_ns": self.bin,
            "sample_ns": self.sample,
            "sojourn_bin_ns": self.sojourn_bin,
            "window_start_ns": self.window.start,
            "window_end_ns": self.window_end_ns,
            "trace": self.trace,
            # the hosts' TCP timestamp clocks, only when not Linux's default: run ids
            # (sweep.run_id_of) of runs with offsets stay as they were
            **({"tcp_timestamp_offsets": False} if self.testbed.timestamp_offsets == "none" else {}),
            # idealized hosts' tick clocks tick at time 0; real ones at a phase from the seed
            **({"host_clock_phase": False} if self.noise == "none" else {}),
            **self._links_or_bottleneck(),
            "flows": [
                {
                    "name": name,
                    "cca": str(f.cca),
                    **({"cca_params": f.cca.params} if f.cca.params else {}),
                    "pacing": f.pacing,
                    "rtt_ns": f.rtt,
                    "start_ns": f.start,
                    "start_jitter_ns": f.start_jitter,
                    "stop_ns": f.stop,
                    "mss_bytes": f.mss,
                    "rwnd_init_pkts": f.rwnd,
                    "rwnd_max_pkts": f.rwnd_max,
                    # TCP's default stays explicit (10) so that run ids (sweep.run_id_of) of TCP flows stay as they were
                    "init_cwnd_pkts": _init_cwnd_pkts(f),
                    "delayed_ack": f.delayed_ack,
                    "size_bytes": f.size,
                    "rate_cap_bps": f.rate_cap,
                    "loss": f.loss,
                    "ecn": f.ecn,
                    "transport": _transport(f),
                    # only when set: run ids (sweep.run_id_of) of runs without it stay as they were
                    **({"min_rto_ns": f.min_rto} if f.min_rto is not None else {}),
                    **({"tso_max_segs": 1 if f.tso is False else f.tso} if f.tso is not None and f.tso is not True else {}),
                    **({"gro_ns": f.gro} if f.gro else {}),
                    **({"sack_compression": True} if f.sack_compression else {}),
                    **self._paths_of(f),
                }
                for _, name, f in self.expand_flows()
            ]
            + [fc for gi, g in enumerate(self.groups) for fc in expand_group(g, gi, seed, self.duration)],
        }
        noise = self.noise_fields()
        group_path = {"path": [self.links[0].name]} if self.links else {}
        for fc in config["flows"][len(self.expand_flows()) :]:
            fc.update(group_path)
        for fc in config["flows"]:
            fc.update(noise)
        return config

    def _links_or_bottleneck(self) -> dict[str, Any]:
        """``bottleneck`` (a dumbbell, exactly as before topologies existed) or ``links``."""
        if self.links:
            return {"links": self.links_run_config()}
        b = self.bottleneck
        assert b is not None
        return {
            "bottleneck": {
                "rate_bps": b.rate,
                "delay_ns": b.delay,
                "qdisc": b.qdisc.run_config(self),
                "l2_overhead_bytes": b.l2_overhead,
                **_outages_ns(b.outages),
            }
        }

    def _paths_of(self, f: Flow) -> dict[str, Any]:
        """A flow's ``path`` and ``reverse_path`` RunConfig keys (only in a topology; none for a dumbbell)."""
        if not self.links:
            return {}
        return {"path": self.flow_path(f), **({"reverse_path": f.reverse_path} if f.reverse_path else {})}

    def noise_fields(self) -> dict[str, int]:
        """The per-flow RunConfig keys of the ``noise`` setting."""
        return dict(HOST_NOISE) if self.noise == "host" else {}

    def flow_groups(self, config: dict[str, Any]) -> list[str]:
        """The entry each simulated flow of ``config`` came from: the
        ``[[flows]]`` or ``[[groups]]`` name (used for per-class statistics)."""
        names = [f.name or "" for _, _, f in self.expand_flows()]
        extra = len(config["flows"]) - len(names)
        return names + [fc["name"].rsplit(".", 1)[0] for fc in config["flows"][len(names) :]][:extra]


class _LinkView:
    """One link of a topology seen as a dumbbell's bottleneck, so that its queue discipline resolves
    exactly as ``[bottleneck]``'s does (buffers and thresholds as BDP multiples, checks against the
    drain time): BDP = the link's rate (a trace's mean rate) x the largest base RTT of the flows whose
    path crosses it. Errors name ``links.N.`` instead of ``bottleneck.``."""

    def __init__(self, spec: Spec, index: int) -> None:
        self.spec = spec
        self.index = index
        self.link = spec.links[index]
        self.bottleneck = Bottleneck.model_construct(
            rate=self.link.mean_rate_bps,
            delay=self.link.delay,
            buffer=self.link.buffer,
            bdp_rtt=None,
            qdisc=self.link.qdisc,
            l2_overhead=self.link.l2_overhead,
        )
        self.flows = spec.flows
        self.groups = spec.groups
        self.packet_wire_bytes = spec.packet_wire_bytes

    @property
    def bdp_rtt_ns(self) -> int:
        crossing = [f.rtt for f in self.spec.flows if self.link.name in self.spec.flow_path(f)]
        crossing += [g.rtt for g in self.spec.groups]  # groups cross the only link
        return max(crossing) if crossing else min([f.rtt for f in self.spec.flows] + [g.rtt for g in self.spec.groups])

    buffer_limits = Spec.buffer_limits
    resolve_buffer = Spec.resolve_buffer
    drain_time_ns = Spec.drain_time_ns

    def _renamed(self, e: SpecError) -> SpecError:
        field = e.field
        if field == "bottleneck" or field.startswith("bottleneck."):
            field = f"links.{self.index}" + field[len("bottleneck") :]
        return SpecError(field, e.message.replace("bottleneck.", f"links.{self.index}."))

    def qdisc_run_config(self) -> dict[str, Any]:
        try:
            return self.link.qdisc.run_config(self)  # type: ignore[arg-type]  # the link view stands in for a Spec (duck-typed)
        except SpecError as e:
            raise self._renamed(e) from None

    def warnings(self) -> list[tuple[str, str]]:
        try:
            return Spec.warnings(self)  # type: ignore[arg-type]  # the link view stands in for a Spec (duck-typed)
        except SpecError as e:
            raise self._renamed(e) from None


# --------------------------------------------------------------------------
# Pydantic errors -> one-line SpecError
# --------------------------------------------------------------------------


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation (unwrapping Optional, list, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin is None:
        return None
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _walk(loc: tuple[Any, ...]) -> tuple[list[str], type[BaseModel] | None]:
    """Display path for a pydantic ``loc``, and the model that owns its last element."""
    model: type[BaseModel] | None = Spec
    owner: type[BaseModel] | None = Spec
    shown: list[str] = []
    for el in loc:
        if isinstance(el, int):
            shown.append(str(el))
        elif model is not None and el in model.model_fields:
            shown.append(el)
            owner = model
            model = _model_in(model.model_fields[el].annotation)
        elif el in QDISCS:
            model = QDISCS[el]  # the discriminated union's tag: descend into that model
        elif "[" in el:
            continue  # a union tag pydantic inserts into loc, not a user key
        else:
            shown.append(el)
            owner, model = model, None
    return shown, owner


def _near_miss(exc: ValidationError, loc: tuple[Any, ...]) -> str:
    """For a missing key: an unknown key next to it spelt like it (``rat`` for ``rate``), as a hint."""
    parent, name = loc[:-1], str(loc[-1])
    unknown = [str(e["loc"][-1]) for e in exc.errors() if e["type"] == "extra_forbidden" and tuple(e["loc"][:-1]) == parent]
    close = difflib.get_close_matches(name, unknown, n=1, cutoff=0.6)
    return f"; found unknown key {close[0]!r}: did you mean {name!r}?" if close else ""


#: What a strict scalar field (strict.py) expects, by pydantic's error type.
_EXPECTED = {
    "bool_type": "a boolean (true or false)",
    "int_type": "an integer",
    "float_type": "a number",
    "finite_number": "a finite number",
    "string_type": "a string",
}


def spec_error_from(exc: ValidationError) -> SpecError:
    """Turn the first pydantic error into a one-line :class:`SpecError`."""
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    shown, owner = _walk(loc)
    etype = err["type"]
    ctx = err.get("ctx") or {}
    cause = ctx.get("error")
    if isinstance(cause, SpecError):
        shown = shown + [p for p in cause.field.split(".") if p]
        return SpecError(".".join(shown), cause.message)
    field = ".".join(shown)
    got = err.get("input")
    if etype == "extra_forbidden":
        key = str(loc[-1])
        valid = list(owner.model_fields) if owner else []
        hint = difflib.get_close_matches(key, valid, n=1)
        dym = f"did you mean {hint[0]!r}? " if hint else ""
        return SpecError(field, f"unknown key; {dym}valid keys: {', '.join(valid)}")
    if etype == "missing":
        return SpecError(field, "required field is missing" + _near_miss(exc, loc))
    if etype in ("model_type", "model_attributes_type", "dict_type"):
        return SpecError(field, f"expected a table, got {got!r}")
    if etype == "list_type":
        return SpecError(field, f"expected a list of tables (e.g. [[{shown[-1] if shown else 'flows'}]]), got {got!r}")
    if isinstance(cause, ValueError):
        return SpecError(field, str(cause))
    if etype in _EXPECTED:
        return SpecError(field, f"expected {_EXPECTED[etype]}, got {got!r}")
    msg = err["msg"]
    msg = msg[0].lower() + msg[1:] if msg else msg
    return SpecError(field, f"{msg}, got {got!r}")


def _outages_ns(outages: list[tuple[int, int]]) -> dict[str, Any]:
    """A link's ``outages_ns`` RunConfig key, only when it has outages (run ids, sweep.run_id_of, of runs
    without them stay as they were)."""
    return {"outages_ns": [[start, duration] for start, duration in outages]} if outages else {}


def _transport(f: Flow) -> str:
    """A flow's transport: its own, else the CCA's (the registry's: "dccp" for ccid2, "tcp" for every other)."""
    return f.transport or ccas.transport(f.cca)


def _init_cwnd_pkts(f: Flow) -> int | None:
    """The RunConfig's init_cwnd_pkts: the flow's own; else TCP's default, kept explicit so that TCP
    run ids (sweep.run_id_of) stay as they were; else None, the simulator's DCCP default."""
    if f.init_cwnd is not None or _transport(f) == "dccp":
        return f.init_cwnd
    return TCP_INIT_CWND_PKTS
