"""Sweeps: a grid of experiments described by a ``[sweep]`` table in the experiment file.

A sweep file is an ordinary experiment file (the *base* experiment) plus a
``[sweep]`` table. Every key of ``[sweep]`` other than the reserved ones
(``repetitions``, ``flip_order``, ``seeds``, ``pairs``) is a grid axis: a
dotted parameter path of the experiment (``"bottleneck.rate"``,
``"flows.1.cca"``, ``"flows.*.rtt"`` for every flow) and the list of values
it takes. ``pairs`` is a CCA axis that sets ``flows.0.cca``, ``flows.1.cca``,
... together. The grid is the Cartesian product of the axes; each grid point
is run ``repetitions`` times, and with ``flip_order = true`` also with the
first two flows exchanged (see :func:`flip_flows`).

Seeds are derived, never drawn: ``seed = blake2b([base seed, point, order,
repetition])`` where *point* is the grid point as a mapping from axis name to
value (sorted by name), so a run's seed does not depend on the order of the
axes in the file or on which other values the axes have; adding a value or
a repetition leaves every existing run (and its ``run_id``) unchanged. With
``seeds = "common"`` the seed depends on the repetition only (common random
numbers across grid points and orders).

Each run is identified by ``run_id`` = the first 16 hex digits of the
SHA-256 of its fully-resolved ``RunConfig`` JSON (sorted keys), so two runs
with the same id would give bit-identical results.

Everything here is validated before any run starts: unknown parameter
paths, empty axes, ``repetitions = 0`` and every grid point's experiment are
checked, and a problem is a :class:`~ccfair.errors.SpecError` naming it.

The format is documented in ``docs/sweeps.md``.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import itertools
import json
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ccfair import profiles
from ccfair.errors import SpecError
from ccfair.provenance import versions
from ccfair.spec import Spec, _default_names
from ccfair.spec_input import apply_overrides, expand_shorthand, load_toml

__all__ = [
    "Axis",
    "RunTask",
    "SweepPlan",
    "ORDERS",
    "RESERVED",
    "flip_flows",
    "derive_seed",
    "run_id_of",
    "plan_sweep",
    "load_sweep_file",
    "BACKENDS",
]

#: Keys of ``[sweep]`` that are settings, not grid axes.
RESERVED = ("repetitions", "flip_order", "seeds", "pairs")
#: Labels of the two start orders: "A first" is the file's order, "B first" the flipped one.
ORDERS = ("A first", "B first")
#: Seed derivation modes.
SEED_MODES = ("independent", "common")
#: Fields of a [[flows]] entry that stay with the position when the order is flipped.
TIMING_FIELDS = ("start", "start_jitter", "stop")
#: Name of the column of the ``pairs`` axis.
PAIR_AXIS = "pair"
#: Where a sweep's runs go (``ccfair sweep --backend``): the simulator, the testbed (real
#: kernels, docs/testbed.md), or both per grid point (``compare``-style).
BACKENDS = ("sim", "testbed", "both")


@dataclass(frozen=True)
class Axis:
    """One grid axis: ``paths`` set together to each entry of ``values``.

    A plain axis has one path and scalar values. ``pairs`` has the paths
    ``flows.0.cca``, ``flows.1.cca``, ... and each value is a list of CCAs.
    ``label(value)`` is what the runs table shows for a value.
    """

    name: str
    paths: tuple[str, ...]
    values: tuple[Any, ...]
    is_pairs: bool = False
    #: Show every value as text (set when the values mix types, so the column has one type).
    as_text: bool = False

    def assignments(self, value: Any) -> list[tuple[str, Any]]:
        """The ``(path, value)`` settings one value of this axis makes."""
        if self.is_pairs:
            return [(f"flows.{i}.cca", cca) for i, cca in enumerate(value)]
        return [(p, value) for p in self.paths]

    def label(self, value: Any) -> Any:
        """Display value for the runs table (a string for pairs and tables)."""
        if self.is_pairs:
            return " vs ".join(str(c) for c in value)
        if isinstance(value, (dict, list)):
            return json.dumps(value, sort_keys=True, separators=(",", ":"))
        if self.as_text and not isinstance(value, str):
            return json.dumps(value)
        return value


@dataclass
class RunTask:
    """One run of a sweep: everything a worker needs, and the row metadata."""

    index: int
    run_id: str
    params: dict[str, Any]
    repetition: int
    order: str
    seed: int
    experiment: dict[str, Any]
    config: dict[str, Any]
    #: Names of the flows called A and B (entries 0 and 1 before flipping), for fness(A, B).
    flow_a: str | None = None
    flow_b: str | None = None
    #: CCA labels of the [[flows]] entries in A, B, ... order (before flipping).
    ccas: list[str] = field(default_factory=list)
    #: Expected cost: the engine's projected number of events (crates/ccfair-sim/src/limits.rs);
    #: executors start the longest runs first (ccfair.executors.plan_batches).
    cost: float = 0.0
    #: ``config`` as canonical JSON (the text its run id hashes), handed to the engine as it is
    #: so that a worker does not encode the config again ("" = encode it there).
    config_json: str = ""
    #: ``"sim"`` or ``"testbed"``; ``show_backend``: the runs table has a ``backend`` column
    #: (sweeps with ``--backend testbed`` or ``both``; simulator sweeps keep their columns).
    backend: str = "sim"
    show_backend: bool = False

    def payload(self) -> dict[str, Any]:
        """A plain dict (picklable without ccfair classes) for executors."""
        meta: dict[str, Any] = {
            "params": self.params,
            "repetition": self.repetition,
            "order": self.order,
            "seed": self.seed,
            "flow_a": self.flow_a,
            "flow_b": self.flow_b,
            "ccas": ",".join(self.ccas),
        }
        if self.show_backend:
            meta["backend"] = self.backend
        return {
            "run_id": self.run_id,
            "cost": self.cost,
            "backend": self.backend,
            "experiment": self.experiment,
            "config": self.config,
            "config_json": self.config_json,
            "meta": meta,
        }


@dataclass
class SweepPlan:
    """An expanded, validated sweep."""

    name: str
    base: dict[str, Any]
    sweep: dict[str, Any]
    axes: list[Axis]
    repetitions: int
    flip_order: bool
    seeds: str
    base_seed: int
    tasks: list[RunTask]
    backend: str = "sim"

    @property
    def n_points(self) -> int:
        n = 1
        for a in self.axes:
            n *= len(a.values)
        return n

    def param_columns(self) -> list[str]:
        return [a.name for a in self.axes]

    def describe(self) -> dict[str, Any]:
        """JSON-ready description stored with the results (``sweep.json``)."""
        return {
            "name": self.name,
            "experiment": self.base,
            "sweep": self.sweep,
            "axes": [{"name": a.name, "paths": list(a.paths), "values": [a.label(v) for v in a.values]} for a in self.axes],
            "repetitions": self.repetitions,
            "flip_order": self.flip_order,
            "seeds": self.seeds,
            "base_seed": self.base_seed,
            "n_points": self.n_points,
            "n_runs": len(self.tasks),
            "backend": self.backend,
            "runs": [t.run_id for t in self.tasks],
        }


# --------------------------------------------------------------------------
# seeds and ids
# --------------------------------------------------------------------------


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def derive_seed(base_seed: int, point: dict[str, Any] | None, order: str | None, repetition: int) -> int:
    """A run's seed in 0..2^63-1 from the base seed, grid point, order and repetition.

    ``point`` and ``order`` are None in ``seeds = "common"`` mode. The point
    is hashed with sorted keys, so the seed is independent of axis order.
    """
    text = _canonical([int(base_seed), point, order, int(repetition)])
    digest = hashlib.blake2b(text.encode(), digest_size=8, person=b"ccfair-seed").digest()
    return int.from_bytes(digest, "big") & (2**63 - 1)


def run_id_of(config: dict[str, Any], canonical: str | None = None, backend: str = "sim") -> str:
    """16 hex digits of SHA-256 over the canonical JSON of a resolved ``RunConfig`` (``canonical``: that text, if at hand).

    A testbed run of the same configuration is another run (a real kernel's result is not a
    function of its configuration): its id hashes the text followed by ``"\nbackend=testbed"``.
    """
    text = canonical if canonical is not None else _canonical(config)
    if backend != "sim":
        text += f"\nbackend={backend}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------
# reading the [sweep] table
# --------------------------------------------------------------------------


def _flatten_axes(table: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """``{"bottleneck": {"rate": [..]}}`` and ``{"bottleneck.rate": [..]}`` both give ``("bottleneck.rate", [..])``."""
    out: list[tuple[str, Any]] = []
    for key, value in table.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            if not value:
                raise SpecError(f"sweep.{path}", "empty table: expected a list of values for this parameter")
            out.extend(_flatten_axes(value, path + "."))
        else:
            out.append((path, value))
    return out


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found.extend(_models_in(arg))
    return found


def _check_path(axis: str, path: str, base: dict[str, Any]) -> list[str]:
    """Check ``path`` names a parameter of the experiment; expand ``*``; return concrete paths.

    Walks the pydantic models (so a typo is caught even when the base file
    does not set the field) as deep as the schema is fixed; below a union
    (e.g. a queue discipline's own parameters) validation of each grid point
    catches unknown keys.
    """
    field_name = f"sweep.{axis}"
    parts = path.split(".")
    if any(not p.strip() for p in parts):
        raise SpecError(field_name, f"unknown parameter path {path!r}: empty component")
    parts = [p.strip() for p in parts]
    concrete: list[list[str]] = [[]]
    model: type[BaseModel] | None = Spec
    node: Any = base
    i = 0
    while i < len(parts):
        part = parts[i]
        here = ".".join(parts[:i]) or "the experiment"
        if model is None:
            concrete = [c + [part] for c in concrete]
            i += 1
            continue
        if part not in model.model_fields:
            valid = ", ".join(model.model_fields)
            raise SpecError(field_name, f"unknown parameter path {path!r}: {here} has no field {part!r}; valid: {valid}")
        if model is Spec and part == "seed":
            raise SpecError(field_name, "the seed is not a grid axis: set sweep.repetitions (seeds are derived from the file's seed)")
        ann = model.model_fields[part].annotation
        concrete = [c + [part] for c in concrete]
        node = node.get(part) if isinstance(node, dict) else None
        if typing.get_origin(ann) is list:
            models = _models_in(ann)
            if i + 1 == len(parts):
                break  # the whole list is the value (e.g. "flows" = [[...], [...]])
            idx = parts[i + 1]
            n = len(node) if isinstance(node, list) else 0
            if idx == "*":
                if n == 0:
                    raise SpecError(field_name, f"{path!r}: the experiment has no {part} entries for '*'")
                concrete = [c + [str(k)] for c in concrete for k in range(n)]
                node = node[0]
            elif idx.isdigit():
                if int(idx) >= n:
                    raise SpecError(field_name, f"unknown parameter path {path!r}: {part} has {n} entries (indices 0..{n - 1})")
                concrete = [c + [idx] for c in concrete]
                node = node[int(idx)]
            else:
                raise SpecError(field_name, f"unknown parameter path {path!r}: {part} is a list; use an index or '*'")
            model = models[0] if len(models) == 1 else None
            i += 2
            continue
        models = _models_in(ann)
        model = models[0] if len(models) == 1 else None
        i += 1
    return [".".join(c) for c in concrete]


def _expand_pairs(value: Any, n_entries: int) -> list[list[str]]:
    field_name = "sweep.pairs"
    if isinstance(value, dict):
        unknown = set(value) - {"of", "self"}
        if unknown:
            raise SpecError(field_name, f"unknown key {sorted(unknown)[0]!r}; valid keys: of, self")
        of = value.get("of")
        if not isinstance(of, list) or not all(isinstance(c, str) for c in of):
            raise SpecError(f"{field_name}.of", f"expected a list of CCA names, got {of!r}")
        if not of:
            raise SpecError(f"{field_name}.of", "empty list: the pairs axis needs at least one CCA")
        with_self = value.get("self", True)
        if not isinstance(with_self, bool):
            raise SpecError(f"{field_name}.self", f"expected true or false, got {with_self!r}")
        combos = itertools.combinations_with_replacement(of, 2) if with_self else itertools.combinations(of, 2)
        pairs = [list(p) for p in combos]
        if not pairs:
            raise SpecError(f"{field_name}.of", "needs at least two CCAs when self = false")
    elif isinstance(value, list):
        pairs = value
        if not pairs:
            raise SpecError(field_name, "empty list: the pairs axis needs at least one entry")
        for k, p in enumerate(pairs):
            if not isinstance(p, list) or not p or not all(isinstance(c, str) for c in p):
                raise SpecError(f"{field_name}.{k}", f'expected a list of CCA names like ["cubic", "bbr"], got {p!r}')
    else:
        raise SpecError(field_name, f'expected a list of CCA lists ([["cubic", "bbr"], ...]) or {{ of = [...] }}, got {value!r}')
    for k, p in enumerate(pairs):
        if len(p) > n_entries:
            raise SpecError(f"{field_name}.{k}", f"{p!r} has {len(p)} CCAs but the experiment has only {n_entries} [[flows]] entries")
    return pairs


def _set_path(raw: dict[str, Any], path: str, value: Any) -> None:
    node: Any = raw
    parts = path.split(".")
    for depth, part in enumerate(parts):
        last = depth == len(parts) - 1
        if isinstance(node, list):
            idx = int(part)
            if last:
                node[idx] = copy.deepcopy(value)
            else:
                node = node[idx]
        else:
            if last:
                node[part] = copy.deepcopy(value)
            else:
                expand_shorthand(node, part)
                if not isinstance(node.get(part), (dict, list)):
                    node[part] = {}
                node = node[part]


def flip_flows(raw: dict[str, Any]) -> dict[str, Any]:
    """The experiment with the first two ``[[flows]]`` entries exchanged, start times kept in place.

    Every setting of entries 0 and 1 (name, CCA, pacing, RTT, MSS, windows,
    count, ...) is swapped except the timing fields ``start``,
    ``start_jitter`` and ``stop``, which stay with the position: the flow
    that started first now starts second and vice versa. Names are filled
    in first (``A``, ``B``, ... by position), so "A" still names the same
    flow after the flip. This is S0's "B first" run for the pair (A, B).
    """
    out = copy.deepcopy(raw)
    flows = out["flows"]
    names = _default_names(len(flows))
    for i, f in enumerate(flows):
        f.setdefault("name", names[i])
    a, b = flows[0], flows[1]
    new_a = {k: v for k, v in b.items() if k not in TIMING_FIELDS}
    new_a.update({k: v for k, v in a.items() if k in TIMING_FIELDS})
    new_b = {k: v for k, v in a.items() if k not in TIMING_FIELDS}
    new_b.update({k: v for k, v in b.items() if k in TIMING_FIELDS})
    flows[0], flows[1] = new_a, new_b
    return out


def _overlaps(a: str, b: str) -> bool:
    """True when setting path ``a`` and path ``b`` touch the same value (equal, or one
    contains the other: ``flows`` contains ``flows.0.cca``)."""
    pa, pb = a.split("."), b.split(".")
    n = min(len(pa), len(pb))
    return pa[:n] == pb[:n]


def _claim(axis: str, paths: tuple[str, ...], seen: dict[str, str]) -> None:
    """Record that ``axis`` sets ``paths``; refuse (naming both axes) a path another axis sets too."""
    for p in paths:
        for q, other in seen.items():
            if _overlaps(p, q):
                shown = "pairs" if axis == PAIR_AXIS else axis
                raise SpecError(
                    f"sweep.{shown}",
                    f"sets {p}, which axis sweep.{other} already sets ({q}); one run cannot take both values: remove one of the two axes",
                )
    for p in paths:
        seen[p] = "pairs" if axis == PAIR_AXIS else axis


def _misspelt_setting(key: str) -> None:
    """A key that is neither a [sweep] setting nor the start of a parameter path, but
    close to a setting (``repetitons``), is a typo: refuse it instead of reading an axis."""
    if key in RESERVED or key.split(".")[0] in Spec.model_fields:
        return
    close = difflib.get_close_matches(key, RESERVED, n=1, cutoff=0.75)
    if close:
        raise SpecError(
            f"sweep.{key}",
            f"unknown setting; did you mean {close[0]!r}? ([sweep] settings: {', '.join(RESERVED)}; "
            "every other key is a grid axis and must be a parameter path such as 'bottleneck.rate')",
        )


def _axes_from(sweep: dict[str, Any], base: dict[str, Any]) -> list[Axis]:
    n_entries = len(base.get("flows") or [])
    axes: list[Axis] = []
    seen_paths: dict[str, str] = {}
    for key, value in sweep.items():
        _misspelt_setting(key)
        if key == "pairs":
            if n_entries < 1:
                raise SpecError("sweep.pairs", "the experiment has no [[flows]] entries")
            pairs = _expand_pairs(value, n_entries)
            axis = Axis(PAIR_AXIS, tuple(f"flows.{i}.cca" for i in range(max(len(p) for p in pairs))), tuple(pairs), True)
            _claim(PAIR_AXIS, axis.paths, seen_paths)
            axes.append(axis)
            continue
        if key in RESERVED:
            continue
        entries = [(key, value)] if not isinstance(value, dict) else _flatten_axes(value, key + ".")
        for path, values in entries:
            if not isinstance(values, list):
                raise SpecError(f"sweep.{path}", f"expected a list of values (e.g. [{values!r}]), got {values!r}")
            if not values:
                raise SpecError(f"sweep.{path}", "empty list of values: a grid axis needs at least one value")
            concrete = _check_path(path, path, base)
            _claim(path, tuple(concrete), seen_paths)
            axes.append(Axis(path, tuple(concrete), tuple(values), as_text=_mixed_types(values)))
    return axes


def _mixed_types(values: list[Any]) -> bool:
    """True when a column of these values would mix types (ints with floats is fine)."""
    kinds = set()
    for v in values:
        if isinstance(v, bool):
            kinds.add("bool")
        elif isinstance(v, (int, float)):
            kinds.add("number")
        elif isinstance(v, str):
            kinds.add("str")
        else:
            kinds.add("json")  # tables and lists become JSON text
    return len(kinds) > 1 and kinds != {"json", "str"}


def _settings(sweep: dict[str, Any]) -> tuple[int, bool, str]:
    reps = sweep.get("repetitions", 1)
    if isinstance(reps, bool) or not isinstance(reps, int):
        raise SpecError("sweep.repetitions", f"expected an integer >= 1, got {reps!r}")
    if reps < 1:
        raise SpecError("sweep.repetitions", f"must be >= 1 (the number of runs of each grid point), got {reps}")
    flip = sweep.get("flip_order", False)
    if not isinstance(flip, bool):
        raise SpecError("sweep.flip_order", f"expected true or false, got {flip!r}")
    seeds = sweep.get("seeds", "independent")
    if seeds not in SEED_MODES:
        raise SpecError("sweep.seeds", f"unknown mode {seeds!r}; allowed: {', '.join(SEED_MODES)}")
    return reps, flip, seeds


def _point_error(e: SpecError, point: dict[str, Any], order: str | None) -> SpecError:
    where = ", ".join(f"{k} = {json.dumps(v)}" for k, v in point.items()) or "the base experiment"
    if order == ORDERS[1]:
        where += ", flipped order"
    field = e.field
    return SpecError(f"sweep ({where})" + (f": {field}" if field else ""), e.message)


def _check_resources(config: dict[str, Any], spec: Spec, point: dict[str, Any], order: str) -> float:
    """A grid point over the resource limits (crates/ccfair-sim/src/limits.rs) is refused
    when the sweep is planned, not when its run comes up. Returns its projected events."""
    from ccfair.api import check_resources

    try:
        return check_resources(config, spec)
    except SpecError as e:
        raise _point_error(e, point, order) from None


#: Most runs one sweep may have: its grid is planned (every point validated, every run's
#: configuration kept) before the first run; split a larger study into several sweeps.
MAX_SWEEP_RUNS = 100_000


def check_size(axes: list[Axis], reps: int, flip: bool) -> None:
    """Refuse a sweep of more than :data:`MAX_SWEEP_RUNS` runs, computed from the axes' lengths
    before anything is planned, naming the setting that makes it too large."""
    total = math.prod(len(a.values) for a in axes) * reps * (2 if flip else 1)
    if total <= MAX_SWEEP_RUNS:
        return
    sizes = " x ".join([f"{len(a.values)} ({a.name})" for a in axes] + [f"{reps} repetition(s)"] + (["2 orders"] if flip else []))
    biggest = max(axes, key=lambda a: len(a.values), default=None)
    if reps * 2 > total or biggest is None:  # the repetitions are most of it
        field = "sweep.repetitions"
    elif len(biggest.values) > MAX_SWEEP_RUNS:
        field = f"sweep.{biggest.name}"
    else:
        field = "sweep"
    raise SpecError(field, f"{sizes} = {total:.3g} runs; at most {MAX_SWEEP_RUNS} per sweep (split it into several sweeps)")


@dataclass(frozen=True)
class _Point:
    """One validated grid point in one start order (repetitions only change the seed)."""

    point: dict[str, Any]
    order: str
    experiment: dict[str, Any]
    spec: Spec
    labels: list[str]
    flow_a: str | None
    flow_b: str | None


def plan_sweep(data: dict[str, Any], name: str | None = None, backend: str = "sim") -> SweepPlan:
    """Validate and expand a raw sweep file (a dict with a ``sweep`` table) into a :class:`SweepPlan`.

    Every grid point (and its flipped variant) is validated as an
    experiment for every backend it runs on (``backend``: one of :data:`BACKENDS`; ``both``
    gives each run a simulator and a testbed task, next to each other); nothing is run.
    Raises :class:`SpecError`.
    """
    if backend not in BACKENDS:
        raise SpecError("--backend", f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    backends = ("sim", "testbed") if backend == "both" else (backend,)
    base, sweep = _split_sweep_file(data, name)
    base_spec = Spec.from_dict(base)  # the base experiment must be valid on its own
    reps, flip, seeds = _settings(sweep)
    axes = _axes_from(sweep, base)
    if flip and len(base.get("flows") or []) < 2:
        raise SpecError("sweep.flip_order", "needs at least two [[flows]] entries to exchange")
    check_size(axes, reps, flip)
    points = _validated_points(base, axes, ORDERS if flip else ORDERS[:1], backends)
    return SweepPlan(
        name=base_spec.name,
        base=base,
        sweep=sweep,
        axes=axes,
        repetitions=reps,
        flip_order=flip,
        seeds=seeds,
        base_seed=base_spec.seed,
        tasks=_tasks(points, reps, seeds, base_spec.seed, backends, show_backend=backend != "sim"),
        backend=backend,
    )


def _split_sweep_file(data: dict[str, Any], name: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The base experiment (a copy; ``name`` as its default name) and the ``[sweep]`` table."""
    if not isinstance(data, dict):
        raise SpecError("", "a sweep file must be a table of keys")
    data = copy.deepcopy(data)
    sweep = data.pop("sweep", None)
    if sweep is None:
        raise SpecError("sweep", "the file has no [sweep] table; add one (see docs/sweeps.md) or use `ccfair run`")
    if not isinstance(sweep, dict):
        raise SpecError("sweep", f"expected a table, got {sweep!r}")
    if name is not None:
        data.setdefault("name", name)
    return data, sweep


def _validated_points(base: dict[str, Any], axes: list[Axis], orders: tuple[str, ...], backends: tuple[str, ...]) -> list[_Point]:
    """Every grid point in every start order, each validated once for every backend."""
    points: list[_Point] = []
    for combo in itertools.product(*(a.values for a in axes)):
        point = {a.name: a.label(v) for a, v in zip(axes, combo)}
        raw = copy.deepcopy(base)
        for a, v in zip(axes, combo):
            for path, value in a.assignments(v):
                _set_path(raw, path, value)
        try:
            spec = Spec.from_dict(raw)
        except SpecError as e:
            raise _point_error(e, point, None) from None
        labels = [f.label for f in spec.flows]
        expanded = spec.expand_flows()
        # A and B are the flows of entries 0 and 1 as the grid point defines them; the flip
        # exchanges their settings (names included), so the names identify them in both orders.
        flow_a, flow_b = (expanded[0][1], expanded[1][1]) if len(expanded) == 2 else (None, None)
        for order in orders:
            exp_raw = raw if order == ORDERS[0] else flip_flows(raw)
            try:
                ospec = spec if order == ORDERS[0] else Spec.from_dict(exp_raw)
                for b in backends:
                    profiles.check_backend(ospec, b)  # a setting a backend cannot apply: refused before any run
            except SpecError as e:
                raise _point_error(e, point, order) from None
            points.append(_Point(point, order, exp_raw, ospec, labels, flow_a, flow_b))
    return points


def _tasks(points: list[_Point], reps: int, seeds: str, base_seed: int, backends: tuple[str, ...], *, show_backend: bool) -> list[RunTask]:
    """The runs: every point per repetition and backend, seeds derived; two points giving one run are refused."""
    tasks: list[RunTask] = []
    seen: dict[str, RunTask] = {}
    costs: list[float] = []  # per point: repetitions differ only in the seed
    for rep in range(reps):
        for k, p in enumerate(points):
            if seeds == "common":
                seed = derive_seed(base_seed, None, None, rep)
            else:
                seed = derive_seed(base_seed, p.point, p.order, rep)
            config = p.spec.to_run_config(seed)
            if rep == 0:
                costs.append(_check_resources(config, p.spec, p.point, p.order))
            config_json = _canonical(config)
            for b in backends:
                rid = run_id_of(config, config_json, b)
                task = RunTask(
                    index=len(tasks),
                    run_id=rid,
                    params=dict(p.point),
                    repetition=rep,
                    order=p.order,
                    seed=seed,
                    experiment=p.experiment,
                    config=config,
                    flow_a=p.flow_a,
                    flow_b=p.flow_b,
                    ccas=p.labels,
                    cost=costs[k],
                    config_json=config_json,
                    backend=b,
                    show_backend=show_backend,
                )
                if rid in seen:
                    other = seen[rid]
                    raise SpecError(
                        "sweep",
                        f"grid points {other.params} ({other.order}, repetition {other.repetition}) and "
                        f"{p.point} ({p.order}, repetition {rep}) resolve to the same run; remove the duplicate value",
                    )
                seen[rid] = task
                tasks.append(task)
    return tasks


def load_sweep_file(path: str | Path, overrides: list[str] | None = None, backend: str = "sim") -> SweepPlan:
    """Read a sweep file, apply ``--set`` overrides (``sweep.repetitions=2`` works too), expand and validate."""
    raw = load_toml(path)
    raw.setdefault("name", Path(path).stem)
    raw = apply_overrides(raw, overrides or [])
    plan = plan_sweep(raw, backend=backend)
    _check_overrides(plan, overrides or [])
    return plan


def _check_overrides(plan: SweepPlan, overrides: list[str]) -> None:
    """Refuse a ``--set`` on a value a grid axis also sets: the axis would silently replace it."""
    from ccfair.spec_input import parse_override

    for item in overrides:
        path = ".".join(parse_override(item)[0])
        if path.split(".")[0] == "sweep":
            continue
        for axis in plan.axes:
            for p in axis.paths:
                if _overlaps(path, p):
                    shown = "pairs" if axis.is_pairs else axis.name
                    raise SpecError(
                        "--set",
                        f"{path} is also set by sweep.{shown} ({p}), which would replace it in every run; "
                        f"change the axis instead (--set 'sweep.{shown}=[...]')",
                    )


# --------------------------------------------------------------------------
# running a sweep into a store
# --------------------------------------------------------------------------


@dataclass
class SweepOutcome:
    """What one invocation of :func:`run_sweep` did."""

    total: int
    skipped: int
    stored: int
    failed: dict[str, str]
    wall_s: float
    directory: Path
    #: CPU time of the worker tasks, and the part of it spent in the simulator.
    worker_cpu_s: float = 0.0
    sim_cpu_s: float = 0.0


def _write_text_atomic(path: Path, text: str) -> None:
    import os

    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def prepare_store(
    plan: SweepPlan,
    directory: str | Path,
    source: str | None = None,
    overrides: list[str] | None = None,
    allow_other_build: bool = False,
) -> Path:
    """Create (or check and update) the sweep directory before any run.

    A directory that already holds runs of another sweep is refused (its
    stored run ids must all belong to this plan: re-running the same sweep,
    or one extended with more values or repetitions, is fine); so are
    simulator runs of another simulator build, unless ``allow_other_build``.
    """
    from ccfair import store

    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise SpecError("--out", f"{d} exists and is not a directory")
    d.mkdir(parents=True, exist_ok=True)
    _check_same_backend(plan, d)
    if not allow_other_build:
        _check_same_build(plan, d)
    planned = {t.run_id for t in plan.tasks}
    foreign = store.finished_runs(d) - planned
    if foreign:
        raise SpecError(
            "--out",
            f"{d} holds {len(foreign)} run(s) of a different sweep (e.g. {sorted(foreign)[0]}); "
            "use a new --out directory, or restore the sweep file that produced them",
        )
    meta = plan.describe()
    meta["overrides"] = list(overrides or [])
    meta["versions"] = versions()
    for path, text in ((d / store.SWEEP_JSON, json.dumps(meta, indent=1) + "\n"), (d / "experiment.toml", source)):
        if text is not None and (not path.exists() or path.read_text() != text):
            _write_text_atomic(path, text)
    (d / store.BATCHES_DIR).mkdir(exist_ok=True)
    store.clean_partial(d)
    return d


def _check_same_backend(plan: SweepPlan, d: Path) -> None:
    """A store holding runs of another ``--backend`` is refused naming both (resuming with
    the other backend would otherwise be refused as "a different sweep", which hides why)."""
    from ccfair import store

    meta = d / store.SWEEP_JSON
    if not meta.exists() or not store.finished_runs(d):
        return
    try:
        stored = json.loads(meta.read_text()).get("backend", "sim")
    except (OSError, ValueError):
        return
    if stored != plan.backend:
        raise SpecError(
            "--backend", f"{d} holds a sweep run with --backend {stored}, not {plan.backend}; resume it with --backend {stored}"
        )


def _check_same_build(plan: SweepPlan, d: Path) -> None:
    """Simulator runs stored by another build of the simulator (``sweep.json``'s ``versions``,
    provenance.py ``core_build``) are refused naming both builds: the model may differ, and a
    store mixing two models would report both as one (stores that record no build pass)."""
    from ccfair import store
    from ccfair.provenance import core_build

    meta = d / store.SWEEP_JSON
    if plan.backend == "testbed" or not meta.exists():
        return
    try:
        stored = json.loads(meta.read_text()).get("versions", {}).get("ccfair._core build")
    except (OSError, ValueError, AttributeError):
        return
    current = core_build()
    done = store.finished_runs(d)
    if stored and current and stored != current and done:
        raise SpecError(
            "--out",
            f"{d} holds {len(done)} run(s) of another simulator build ({stored}; this one is {current}): "
            "their results may differ from this build's; use a new --out directory, or --allow-other-build to add to them",
        )


def run_sweep(
    plan: SweepPlan,
    directory: str | Path,
    executor: str = "pool",
    jobs: int | None = None,
    scheduler: str | None = None,
    source: str | None = None,
    overrides: list[str] | None = None,
    progress: Any = None,
    wait: bool = False,
    testbed_fn: str | None = None,
    testbed_attempts: int | None = None,
    allow_other_build: bool = False,
) -> SweepOutcome:
    """Run every run of ``plan`` not yet stored in ``directory``; store each as it finishes.

    ``progress`` is a callable ``(n_done_now, outcome_dict)`` called after
    each stored batch of runs, or None. Returns counts; failed runs are listed (their
    errors are also written to ``failed/<run_id>.json``) and are retried by
    the next invocation.

    The whole invocation holds the store's lock (:func:`ccfair.store.lock`):
    a second sweep into ``directory`` is refused naming this one's PID
    before it writes anything (``wait=True``: it waits, then finds the runs
    stored and computes none of them again).
    """
    from ccfair import store

    if testbed_fn is None and not (executor == "dask" and scheduler) and any(t.backend == "testbed" for t in plan.tasks):
        from ccfair.testbed.runner import check_available

        check_available()  # root and the bottleneck binary on this host, before the store is touched
    with store.lock(directory, wait=wait):
        return _run_sweep_locked(
            plan, directory, executor, jobs, scheduler, source, overrides, progress, testbed_fn, testbed_attempts, allow_other_build
        )


def _import_in_background() -> Any:
    """A thread importing pandas and pyarrow (for store.compact at the end) now: the pool's fork
    server is importing at the same time, so this uses the other core, not the workers' time later."""
    import threading

    def imports() -> None:
        import pandas  # noqa: F401
        import pyarrow.parquet  # noqa: F401

    thread = threading.Thread(target=imports, name="ccfair-sweep-imports", daemon=True)
    thread.start()
    return thread


def _run_sweep_locked(
    plan: SweepPlan,
    directory: str | Path,
    executor: str,
    jobs: int | None,
    scheduler: str | None,
    source: str | None,
    overrides: list[str] | None,
    progress: Any,
    testbed_fn: str | None = None,
    testbed_attempts: int | None = None,
    allow_other_build: bool = False,
) -> SweepOutcome:
    import time

    from ccfair import store
    from ccfair.executors import run_tasks, warm_up

    t0 = time.perf_counter()
    warm_up(executor)  # the pool's fork server imports while the store is prepared
    d = prepare_store(plan, directory, source, overrides, allow_other_build)
    done = store.finished_runs(d)
    todo = [t for t in plan.tasks if t.run_id not in done]
    importer = _import_in_background() if todo else None  # what store.compact needs, while the workers start
    failed: dict[str, str] = {}
    parsed: dict[Path, dict[str, dict[str, Any]]] = {}
    stored = 0
    cpu = sim_cpu = 0.0
    outcomes = run_tasks([t.payload() for t in todo], executor, jobs, scheduler, testbed_fn=testbed_fn, testbed_attempts=testbed_attempts)
    try:
        for out in outcomes:
            for rid, error in out["errors"].items():
                failed[rid] = error
                store.write_failure(d, rid, error)
            if out["run_ids"]:
                batch = store.write_batch(d, out["run_ids"], out["files"])
                parsed[batch] = store.parse_jsonl(out["files"]["rows.jsonl"])  # for store.compact at the end
                stored += len(out["run_ids"])
            if progress is not None:
                progress(out["n"], out)
            cpu += out.get("cpu_s", 0.0)
            sim_cpu += out.get("sim_cpu_s", 0.0)
    finally:
        close = getattr(outcomes, "close", None)
        if close is not None:
            close()  # an interrupt: the executor stops its workers now, not when this frame is collected
    if importer is not None:
        importer.join()
    if stored or not (d / "runs.parquet").exists():
        store.compact(d, parsed)
    return SweepOutcome(
        total=len(plan.tasks),
        skipped=len(plan.tasks) - len(todo),
        stored=stored,
        failed=failed,
        wall_s=time.perf_counter() - t0,
        directory=d,
        worker_cpu_s=cpu,
        sim_cpu_s=sim_cpu,
    )
