"""Fidelity point sets and their stored kernel runs.

A set file ``<data>/points/<set>.toml``::

    description = "what the set covers"
    base = "../../../examples/s0-cubic-vs-bbr.toml"   # experiment file, relative to this file
    set = ["bottleneck.rate=10Mbit"]                  # overrides for every point (optional)
    runs = 3                                          # kernel runs per point (optional, default 3)
    map = true                                        # part of the reference map (optional, default true)

    [[points]]
    id = "cubic/bbr 10M 50ms 8bdp"
    set = ["flows.0.cca=cubic", "flows.1.cca=bbr", "bottleneck.buffer=8bdp"]

The reference map is every set with ``map = true`` (the default): what ``ccfair fidelity``
and ``ccfair fidelity collect`` take when no ``--set`` is given. A set collected again with a
better testbed, or one that varies the testbed itself, says ``map = false`` and why in its
header; it stays selectable by name.

A point is the base experiment with the set's and then the point's overrides
applied (``ccfair run BASE --set ...`` does the same). Flow "A" is every flow of
the first ``[[flows]]`` entry, flow "B" every flow of the second (``count``
expanded); B's share is the sum of their shares.

Kernel runs ``<data>/kernel/<set>.jsonl``: one JSON object per line and run,
appended when the run finishes (``append_run``: one ``write`` then ``fsync``).
A line belongs to a point while its ``spec_sha`` matches the point's spec now
(``spec_sha``): the experiment and, for a run that records the BPF ports it ran
(``bpf_ports``: CCA -> digest of the port's source, testbed/bpfcc.py ``source_digest``),
those ports' current sources; runs of an edited point or port are kept in the file but
not used. Runs stored before ports were recorded carry no ``bpf_ports`` and match on
their experiment alone.

Which runs give a point's kernel figure (``select_runs``), the same rule for every
point: its runs that pass the quality gate (``gate_failures``: the testbed campaigns'
limits of :mod:`ccfair.testbed.quality` on bottleneck lateness and host load, the
bottleneck's longest stall at most ``stall_limit_s``, the service its stalls lost at most
``stall_lost_limit_s`` where the run records it, and every flow started at most
``FLOW_START_LATE_MAX_S`` after its start time, as recorded) when there are at least
the set's ``runs`` of them; otherwise all its runs. A run without a recorded fact fails
that part of the gate.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccfair.errors import SpecError

#: Default data directory (relative to the working directory: the repository's root).
DEFAULT_DATA = Path("data/fidelity")

#: Keys a set file may have, and a point.
SET_KEYS = {"description", "base", "set", "runs", "map", "points"}
POINT_KEYS = {"id", "set"}


@dataclass(frozen=True)
class Point:
    """One point of a set: the base experiment and the overrides that make it."""

    set_name: str
    id: str
    base: Path
    overrides: tuple[str, ...]

    def raw(self) -> dict[str, Any]:
        """The point's experiment as a raw dict (base file + overrides), not yet validated."""
        from ccfair.spec_input import apply_overrides, load_toml

        raw = load_toml(self.base)
        raw.setdefault("name", self.id)
        raw.pop("sweep", None)
        raw = apply_overrides(raw, list(self.overrides))
        raw["name"] = self.id
        return raw

    def spec(self) -> Any:
        """The validated :class:`ccfair.spec.Spec` of the point."""
        from ccfair.spec import Spec

        try:
            return Spec.from_dict(self.raw())
        except SpecError as e:
            raise SpecError(f"{self.set_name}: point {self.id!r}: {e.field}", e.message) from None

    def command(self, seed: int) -> list[str]:
        """The ``ccfair run`` command line that runs this point on the testbed with ``seed``."""
        args = ["ccfair", "run", _display_path(self.base), "--backend", "testbed", "--seed", str(seed)]
        for o in self.overrides:
            args += ["--set", o]
        return args + ["--set", f"name={json.dumps(self.id)}", "--json"]


@dataclass(frozen=True)
class PointSet:
    name: str
    path: Path
    description: str
    runs: int
    points: tuple[Point, ...]
    in_map: bool = True

    @property
    def kernel_path(self) -> Path:
        return self.path.parent.parent / "kernel" / f"{self.name}.jsonl"


def _display_path(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def set_names(data: Path = DEFAULT_DATA) -> list[str]:
    """Names of the sets in ``data/points`` (sorted)."""
    d = data / "points"
    if not d.is_dir():
        raise SpecError("--data", f"{data}: no points/ directory (expected {d}/<set>.toml)")
    return sorted(p.stem for p in d.glob("*.toml"))


def map_set_names(data: Path = DEFAULT_DATA) -> list[str]:
    """Names of the sets of the reference map (``map = true``, the default; sorted)."""
    return [n for n in set_names(data) if load_set(n, data).in_map]


def load_set(name: str, data: Path = DEFAULT_DATA) -> PointSet:
    """Read and check ``data/points/<name>.toml``; raises :class:`SpecError` naming the key."""
    names = set_names(data)
    if name not in names:
        raise SpecError("--set", f"no set {name!r} in {data / 'points'}; sets: {', '.join(names) or '(none)'}")
    path = data / "points" / f"{name}.toml"
    from ccfair.spec_input import load_toml

    doc = load_toml(path)
    where = str(path)
    unknown = set(doc) - SET_KEYS
    if unknown:
        raise SpecError(f"{where}: {sorted(unknown)[0]}", f"unknown key; allowed: {', '.join(sorted(SET_KEYS))}")
    if not isinstance(doc.get("base"), str):
        raise SpecError(f"{where}: base", "required: the base experiment file, relative to the set file")
    base = (path.parent / doc["base"]).resolve()
    if not base.is_file():
        raise SpecError(f"{where}: base", f"{doc['base']!r} is not a file ({base})")
    common = _overrides(doc.get("set", []), f"{where}: set")
    runs = doc.get("runs", 3)
    if isinstance(runs, bool) or not isinstance(runs, int) or not 1 <= runs <= 100:
        raise SpecError(f"{where}: runs", f"must be an integer in 1..100, got {runs!r}")
    in_map = doc.get("map", True)
    if not isinstance(in_map, bool):
        raise SpecError(f"{where}: map", f"must be true or false, got {in_map!r}")
    raw_points = doc.get("points")
    if not isinstance(raw_points, list) or not raw_points:
        raise SpecError(f"{where}: points", "required: at least one [[points]] table")
    points: list[Point] = []
    seen: set[str] = set()
    for i, p in enumerate(raw_points):
        pw = f"{where}: points.{i}"
        if not isinstance(p, dict):
            raise SpecError(pw, "must be a table with id and set")
        extra = set(p) - POINT_KEYS
        if extra:
            raise SpecError(f"{pw}.{sorted(extra)[0]}", f"unknown key; allowed: {', '.join(sorted(POINT_KEYS))}")
        pid = p.get("id")
        if not isinstance(pid, str) or not pid.strip():
            raise SpecError(f"{pw}.id", "required: a non-empty string")
        if pid in seen:
            raise SpecError(f"{pw}.id", f"{pid!r} is declared twice")
        seen.add(pid)
        points.append(Point(name, pid, base, common + _overrides(p.get("set", []), f"{pw}.set")))
    return PointSet(name, path, str(doc.get("description", "")), runs, tuple(points), in_map)


def _overrides(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and "=" in v for v in value):
        raise SpecError(where, f"must be a list of 'PATH=VALUE' strings, got {value!r}")
    return tuple(value)


def spec_sha(raw: dict[str, Any], ports: dict[str, str | None] | None = None) -> str:
    """A short hash of a point's raw experiment and, when given (non-empty), the digests of the BPF
    ports its run used (CCA -> ``bpfcc.source_digest``): stored with every run, so an edited point
    or port is not mixed up."""
    doc: Any = {"spec": raw, "bpf_ports": ports} if ports else raw
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def ports_used(summary: dict[str, Any]) -> dict[str, str | None]:
    """CCA -> digest of the BPF port's current source, for every CCA a testbed run's summary
    says ran as ccfair's BPF port (``testbed.ccas[].impl``)."""
    from ccfair.testbed import bpfcc

    ccas = (summary.get("testbed") or {}).get("ccas") or []
    return {c["cca"]: bpfcc.source_digest(c["cca"]) for c in ccas if c.get("impl") == "bpf"}


def current_sha(raw: dict[str, Any], rec: dict[str, Any]) -> str:
    """What a stored run's ``spec_sha`` must be to count for the point ``raw`` now: with the
    current sources of the ports it recorded (``bpf_ports``), or of the experiment alone for a
    run stored before ports were recorded."""
    if "bpf_ports" not in rec:
        return spec_sha(raw)
    from ccfair.testbed import bpfcc

    return spec_sha(raw, {c: bpfcc.source_digest(c) for c in rec["bpf_ports"]})


# ----------------------------------------------------------------- the run store


def read_runs(path: Path) -> list[dict[str, Any]]:
    """Every complete line of a kernel-run file (a line cut by a kill is ignored)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a partial line (the writer was killed mid-write); repair_tail removes it
    return out


def repair_tail(path: Path) -> None:
    """Cut an unfinished last line (no newline) so the next append starts a line of its own."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        keep = data.rfind(b"\n") + 1
        with path.open("r+b") as fh:
            fh.truncate(keep)
            fh.flush()
            os.fsync(fh.fileno())


def append_run(path: Path, record: dict[str, Any]) -> None:
    """Append one run as one line: a single ``write`` then ``fsync`` (a kill -9 keeps every finished line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(record, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)


def runs_by_point(ps: PointSet) -> tuple[dict[str, list[dict[str, Any]]], int]:
    """The stored runs of each point whose spec is the point's current one, and how many lines are stale."""
    raws = {p.id: p.raw() for p in ps.points}
    out: dict[str, list[dict[str, Any]]] = {p.id: [] for p in ps.points}
    stale = 0
    for r in read_runs(ps.kernel_path):
        point = r.get("point")
        if isinstance(point, str) and point in raws and current_sha(raws[point], r) == r.get("spec_sha"):
            out[r["point"]].append(r)
        else:
            stale += 1
    for runs in out.values():
        runs.sort(key=lambda r: r["seed"])
    return out, stale


#: Latest start of a flow after its experiment start time, for a run to pass the gate, s.
FLOW_START_LATE_MAX_S = 0.5

#: The comparison's utilisation criterion: at every point the simulator's utilisation
#: within this (a fraction of the link) of the kernel's.
UTILISATION_TOLERANCE = 0.01
#: The comparison's mean-queue criterion: the simulator's mean queue within this fraction of the kernel's.
QUEUE_TOLERANCE_REL = 0.10
#: Tolerance over the largest error of the reference a run that counts may carry: the
#: metrologists' rule of ten (a reference ten times finer than the tolerance it checks).
REFERENCE_ACCURACY_RATIO = 10


def frame_time_s(spec: Any) -> float:
    """One data frame (IP packet + L2 overhead) at the bottleneck rate, s: the depth of the
    bottleneck's token bucket (ccfair-bottleneck ``burst_bytes``, one frame, as S0's tbf)."""
    return (spec.packet_wire_bytes + spec.bottleneck.l2_overhead) * 8 / spec.bottleneck.rate


def stall_limit_s(spec: Any) -> float:
    """The longest bottleneck stall a run of experiment ``spec`` may have to count, s.

    Mechanism: while the bottleneck process does not run (a stall of ``s``: the lateness of the
    frame whose transmission it ends late, ``bottleneck_late_max_ns`` the longest), its link sends
    nothing; its token bucket, one frame deep (:func:`frame_time_s`, ``T_f``), makes up at most
    one frame time afterwards. On a backlogged link the stall costs ``s - T_f`` of service, and
    the run's utilisation over its window ``W`` falls by ``(s - T_f) / W`` at least (more when the
    frames held back overflow the queue afterwards, or when the run stalls more than once).
    For the kernel's utilisation to carry at most a tenth of the comparison's tolerance
    (:data:`UTILISATION_TOLERANCE` / :data:`REFERENCE_ACCURACY_RATIO` = 0.001):
    ``s <= 0.001 W + T_f``; at S0's timing (W = 35 s) and 10 Mbit/s, 35 ms + 1.21 ms.
    The stored facts give only the longest stall, so this is a necessary condition (a run over
    it certainly carries more), not a sufficient one.
    """
    return stall_lost_limit_s(spec) + frame_time_s(spec)


def stall_lost_limit_s(spec: Any) -> float:
    """The link service a run of experiment ``spec`` may lose to the bottleneck's stalls in its
    window to count, s: 0.001 W, the budget :func:`stall_limit_s` gives one stall, for all of them.

    Runs that record it (``summary.testbed.bottleneck.stall_lost_ns``: per transmission that ended
    with frames waiting, the poll's lateness beyond the token bucket's depth) are held to the
    gate's criterion itself rather than to the longest stall only.
    """
    window_s = (spec.window_end_ns - spec.window.start) / 1e9
    return UTILISATION_TOLERANCE / REFERENCE_ACCURACY_RATIO * window_s


def gate_failures(spec: Any, rec: dict[str, Any]) -> list[str]:
    """What a stored kernel run of the point with experiment ``spec`` exceeds of the quality
    gate (empty: it passes). Load is per CPU of the host (``host.cpus``, else this host's)."""
    from ccfair.testbed import quality

    h = rec.get("host") or {}
    load = (h.get("load_after") or [None])[0]
    cpus = h.get("cpus") or os.cpu_count() or 1
    facts = {
        "late_p99_us": h.get("bottleneck_late_p99_us"),
        "frame_time_us": frame_time_s(spec) * 1e6,
        "load_per_cpu": None if load is None else load / cpus,
    }
    out = quality.over_limits(facts)
    late_max_ns = h.get("bottleneck_late_max_ns")
    limit_s = stall_limit_s(spec)
    if late_max_ns is not None and late_max_ns / 1e9 > limit_s:
        out.append(f"bottleneck stalled {late_max_ns / 1e6:.1f} ms > {limit_s * 1e3:.1f} ms")
    lost_ns = (((rec.get("summary") or {}).get("testbed") or {}).get("bottleneck") or {}).get("stall_lost_ns")
    if lost_ns is not None and lost_ns / 1e9 > stall_lost_limit_s(spec):
        out.append(f"bottleneck stalls lost {lost_ns / 1e6:.1f} ms > {stall_lost_limit_s(spec) * 1e3:.1f} ms")
    if facts["late_p99_us"] is None or late_max_ns is None or load is None:
        out.append("no host facts")
    starts = rec.get("flow_start_s")
    if starts is None:
        out.append("flow starts not recorded")
    else:
        due = [start_ns / 1e9 for _, start_ns in _flow_starts(spec)]
        late = max((a - d for a, d in zip(starts, due)), default=0.0)
        if late > FLOW_START_LATE_MAX_S:
            out.append(f"a flow started {late:.2f} s late > {FLOW_START_LATE_MAX_S} s")
    return out


def _flow_starts(spec: Any) -> list[tuple[int, int]]:
    """(group, start ns) of every flow, ``count`` expanded, in flow order."""
    return [(g, f.start) for g, _, f in spec.expand_flows()]


def select_runs(point: Point, runs: list[dict[str, Any]], wanted: int) -> list[dict[str, Any]]:
    """The runs that give ``point``'s kernel figure: those passing the gate when at least
    ``wanted`` do, else all (module docstring)."""
    spec = point.spec()
    gated = [r for r in runs if not gate_failures(spec, r)]
    return gated if len(gated) >= wanted else runs


# ----------------------------------------------------------------- what a summary gives


def group_shares(spec: Any, summary: dict[str, Any]) -> tuple[float, float]:
    """(share of flow group A, share of flow group B): the flows of the first and second [[flows]] entry."""
    groups = [i for i, _, _ in spec.expand_flows()]
    flows = summary["flows"]
    if len(flows) != len(groups):
        raise ValueError(f"summary has {len(flows)} flows, the spec {len(groups)}")
    a = sum(float(f["share"]) for g, f in zip(groups, flows) if g == 0)
    b = sum(float(f["share"]) for g, f in zip(groups, flows) if g == 1)
    return a, b
