"""The result of one run: pandas tables, a summary dict, and Parquet I/O.

:meth:`Result.from_raw` turns the simulator's columnar output (see
``crates/ccfair-sim/src/result.rs``) into tables; every windowed number in
the summary is computed here, in one place, from whole measurement bins
inside the analysis window ``[window.start, window.end)``.

On disk (``Result.to_parquet(dir)``)::

    flows.parquet       per-flow summary (window throughput, share, counters)
    throughput.parquet  per-flow delivered bytes per bin (long format)
    link.parquet        bottleneck bytes sent, utilization, mean sojourn per bin
    queue.parquet       queue backlog samples
    sojourn.parquet     per-packet sojourn-time histogram (analysis window)
    trace.parquet       cwnd / RTT / pacing samples (only when traced)
    summary.json        the summary (the same object `ccfair run --json` prints)
    spec.json           the validated experiment (human units)
    run_config.json     the exact configuration the simulator received

The Parquet files and spec/run_config JSON are byte-identical for the same
spec and seed; only ``summary.json`` carries the (varying) wall time.
"""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccfair import scalar_metrics as metrics

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ccfair.spec import Spec

__all__ = ["Result", "TABLES"]

#: Parquet tables every result has (trace is optional).
TABLES = ("flows", "throughput", "link", "queue", "sojourn")

_NS_PER_S = 1e9
_NS_PER_MS = 1e6


def _num(x: float | int | None) -> float | int | None:
    """JSON-safe number: NaN and infinities become None."""
    if x is None:
        return None
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _isum(values: Any, lo: int = 0, hi: int | None = None) -> int:
    """Exact sum of ``values[lo:hi]`` as a Python int: a list of ints (testbed, ``ccfair run``)
    or a numpy integer array (``simulate(arrays=True)``: summed in numpy, never per element)."""
    part = values[lo:hi]
    return int(part.sum()) if hasattr(part, "sum") else int(sum(part))


def _as_list(values: Any) -> list[Any]:
    """A short series as a list of Python numbers (numpy arrays via ``tolist``)."""
    return values.tolist() if hasattr(values, "tolist") else list(values)


def _fit(values: Any, n: int) -> np.ndarray:
    """An int64 array of exactly ``n`` entries: ``values`` cut or zero-padded."""
    import numpy as np

    a = np.asarray(values, dtype=np.int64)[:n]
    return np.pad(a, (0, n - len(a))) if len(a) < n else a


def window_bins(window_start_ns: int, window_end_ns: int, bin_ns: int, n_bins: int) -> tuple[int, int]:
    """Indices ``[first, last)`` of the bins lying wholly inside the window.

    Spec validation makes window edges multiples of the bin width, so these
    bins cover the window exactly; for other edges partial bins are left out.
    """
    first = -(-window_start_ns // bin_ns)  # ceil
    last = min(window_end_ns // bin_ns, n_bins)
    return first, max(first, last)


#: Every table attribute of a Result, built from the simulator output on first access.
_TABLE_ATTRS = ("flows", "throughput", "link", "queue", "sojourn", "trace", "meter", "pinned")
_UNSET = object()


class Result:
    """One run's tables (pandas DataFrames) and summary.

    The summary is computed when the result is built, in plain Python (no
    pandas: ``ccfair run --json`` and sweep workers never need it); the tables
    are built from the simulator's output on first access.

    Attributes:
        spec: the validated experiment.
        config: the ``RunConfig`` dict the simulator received (seed included).
        flows: per-flow summary over the analysis window: name, cca, pacing,
            rtt_ms, start_s, throughput_bps, share, bytes, then whole-run
            counters sent_packets, retransmissions, losses, drops (= drops_overflow
            + drops_aqm: buffer full vs AQM decision), ecn_marks, rto,
            recoveries and min_rtt_ms, mean_rtt_ms.
        throughput: long table (flow, time_s, bytes, throughput_bps, arrival_bytes,
            arrival_throughput_bps): ``bytes`` is in-order delivery to the application
            (released in bursts when a hole is filled), ``arrival_bytes`` the payload
            arriving at the receiver per bin (a capture's view; NaN on the testbed), one row
            per flow and bin; time_s is the bin start.
        link: per bin: time_s, tx_bytes (wire bytes the bottleneck sent),
            utilization, sojourn_packets, queue_delay_ms (mean sojourn of the
            packets that left the queue in the bin; NaN if none).
        queue: backlog samples: time_s, packets, bytes.
        sojourn: sojourn-time histogram of packets leaving the queue inside
            the window: bin_start_ms, bin_end_ms, count.
        trace: per-flow samples (flow, time_s, cwnd_pkts, inflight_pkts,
            srtt_ms, pacing_rate_bps, ssthresh_pkts) or None if not traced.
        summary: JSON-ready dict; keys documented in docs/experiment-file.md.
        meter: RRMQS flow meter, one row per (window, CCA): window, time_s, cca, main_pkts,
            rrmqs_pkts, main_flows, rrmqs_flows, main_rate, rrmqs_rate (per-flow pkt/s:
            V and V'), index (I = V/V' of the selected meter), action (next window), weight,
            main_done, rrmqs_done, main_flow_rate, rrmqs_flow_rate (flow meter). None for other qdiscs.
        pinned: RRMQS: flows pinned to a measuring queue: flow, cca, pinned_s, released_s (NaN = never).
    """

    def __init__(
        self,
        spec: Spec,
        config: dict[str, Any],
        flows: pd.DataFrame | None = None,
        throughput: pd.DataFrame | None = None,
        link: pd.DataFrame | None = None,
        queue: pd.DataFrame | None = None,
        sojourn: pd.DataFrame | None = None,
        trace: pd.DataFrame | None = None,
        summary: dict[str, Any] | None = None,
        meter: pd.DataFrame | None = None,
        pinned: pd.DataFrame | None = None,
        *,
        raw: Mapping[str, Any] | None = None,
        flow_columns: dict[str, list[Any]] | None = None,
    ) -> None:
        self.spec = spec
        self.config = config
        self.summary: dict[str, Any] = summary if summary is not None else {}
        self._raw = raw
        self._flow_columns = flow_columns
        given = {
            "flows": flows, "throughput": throughput, "link": link, "queue": queue,
            "sojourn": sojourn, "trace": trace, "meter": meter, "pinned": pinned,
        }  # fmt: skip
        # Built lazily from ``raw`` when given; otherwise the tables passed in (None = absent).
        self._tables: dict[str, Any] = {k: (_UNSET if raw is not None else v) for k, v in given.items()}

    def _table(self, name: str) -> Any:
        value = self._tables[name]
        if value is _UNSET:
            assert self._raw is not None
            self._tables.update(build_tables(self.spec, self.config, self._raw, self.flow_columns()))
            value = self._tables[name]
        return value

    flows = property(lambda self: self._table("flows"), lambda self, v: self._tables.__setitem__("flows", v))
    throughput = property(lambda self: self._table("throughput"), lambda self, v: self._tables.__setitem__("throughput", v))
    link = property(lambda self: self._table("link"), lambda self, v: self._tables.__setitem__("link", v))
    queue = property(lambda self: self._table("queue"), lambda self, v: self._tables.__setitem__("queue", v))
    sojourn = property(lambda self: self._table("sojourn"), lambda self, v: self._tables.__setitem__("sojourn", v))
    trace = property(lambda self: self._table("trace"), lambda self, v: self._tables.__setitem__("trace", v))
    meter = property(lambda self: self._table("meter"), lambda self, v: self._tables.__setitem__("meter", v))
    pinned = property(lambda self: self._table("pinned"), lambda self, v: self._tables.__setitem__("pinned", v))

    def flow_columns(self) -> dict[str, list[Any]]:
        """The per-flow table as plain lists by column (the columns of :attr:`flows`), without pandas when possible."""
        if self._flow_columns is None:
            self._flow_columns = {c: self.flows[c].tolist() for c in self.flows.columns}
        return self._flow_columns

    def table_columns(self) -> dict[str, dict[str, Any] | None]:
        """Every table as ``{column: array or list}`` (None = absent): from the simulator output
        without building DataFrames when this result came from :meth:`from_raw`."""
        if self._raw is not None:
            return table_columns(self.spec, self.config, self._raw, self.flow_columns())
        tables = {name: self._table(name) for name in _TABLE_ATTRS}
        return {k: None if df is None else {c: _column_values(k, c, df[c]) for c in df.columns} for k, df in tables.items()}

    # ------------------------------------------------------------ building

    @classmethod
    def from_raw(cls, spec: Spec, config: dict[str, Any], raw: Mapping[str, Any]) -> Result:
        """Build the summary (tables on first access) from ``ccfair._core.simulate`` output."""
        cols = flow_columns(spec, config, raw)
        res = cls(spec, config, raw=raw, flow_columns=cols)
        res.summary = summarize(spec, config, raw, cols, res)
        return res

    # ------------------------------------------------------------ storage

    def tables(self) -> dict[str, pd.DataFrame]:
        """The result's tables by file name (trace only when present)."""
        out = {name: getattr(self, name) for name in TABLES}
        if self.trace is not None:
            out["trace"] = self.trace
        for name in ("meter", "pinned"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        return out

    def to_parquet(self, directory: str | Path) -> Path:
        """Write every table as Parquet plus summary/spec/run_config JSON into ``directory``.

        Deterministic: the same spec and seed give byte-identical files
        (except ``summary.json``, which records the wall time, and ``versions.json``:
        ccfair's version and git commit, Python's and the libraries', ccfair.provenance.versions).
        """
        import pyarrow as pa  # imported here: only needed when writing
        import pyarrow.parquet as pq

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        for name, df in self.tables().items():
            table = pa.Table.from_pandas(df, preserve_index=False)
            pq.write_table(table, out / f"{name}.parquet", compression="zstd")
        _write_json(out / "summary.json", self.summary)
        _write_json(out / "spec.json", self.spec.model_dump(mode="json"))
        _write_json(out / "run_config.json", self.config)
        from ccfair.provenance import versions

        _write_json(out / "versions.json", versions())
        return out

    @classmethod
    def load(cls, directory: str | Path) -> Result:
        """Read a result written by :meth:`to_parquet`."""
        import pandas as pd

        from ccfair.spec import Spec

        d = Path(directory)
        if not d.is_dir():
            raise FileNotFoundError(f"{d}: not a result directory")
        tables = {name: with_nullable_ints(name, pd.read_parquet(d / f"{name}.parquet")) for name in TABLES}
        trace_path = d / "trace.parquet"
        trace = pd.read_parquet(trace_path) if trace_path.exists() else None
        for name in ("meter", "pinned"):
            if (d / f"{name}.parquet").exists():
                tables[name] = pd.read_parquet(d / f"{name}.parquet")
        summary = json.loads((d / "summary.json").read_text())
        spec = Spec.from_dict(json.loads((d / "spec.json").read_text()))
        config = json.loads((d / "run_config.json").read_text())
        return cls(spec=spec, config=config, trace=trace, summary=summary, **tables)

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"<Result {s.get('name')!r} seed={s.get('seed')} flows={len(s.get('flows', []))} "
            f"jfi={s.get('jfi')} utilization={s.get('utilization')}>"
        )


# ---------------------------------------------------------------- from the simulator output


def flow_columns(spec: Spec, config: dict[str, Any], raw: Mapping[str, Any]) -> dict[str, list[Any]]:
    """The per-flow table (analysis-window throughput and share, whole-run counters) as lists by column."""
    bin_ns = int(raw["bin_ns"])
    b0, b1 = window_bins(int(config["window_start_ns"]), int(config["window_end_ns"]), bin_ns, len(raw["link_tx_bytes"]))
    window_s = (b1 - b0) * bin_ns / _NS_PER_S
    fl = raw["flows"]
    window_bytes = [_isum(f["delivered_bytes"], b0, b1) for f in fl]
    throughput_bps = [b * 8 / window_s if window_s > 0 else math.nan for b in window_bytes]
    fair_bps = fair_shares_bps(raw, config, (b0 * bin_ns, b1 * bin_ns), bin_ns)
    return {
        "name": [f["name"] for f in fl],
        "cca": [f["cca"] for f in fl],
        "pacing": [bool(f.get("pacing", False)) for f in config["flows"]],
        "rtt_ms": [f["rtt_ns"] / _NS_PER_MS for f in fl],
        "start_s": [f["start_ns"] / _NS_PER_S for f in fl],
        "throughput_bps": throughput_bps,
        "share": metrics.share(window_bytes),
        "bytes": window_bytes,
        "fair_share_bps": fair_bps,
        "maxmin_share": [metrics.max_min_share(t, f) for t, f in zip(throughput_bps, fair_bps)],
        "sent_packets": [int(f["sent_packets"]) for f in fl],
        "retransmissions": [int(f["retransmissions"]) for f in fl],
        "losses": [int(f["losses_detected"]) for f in fl],
        "drops": [int(f["drops"]) for f in fl],
        "drops_overflow": [int(f.get("drops_overflow", 0)) for f in fl],
        "drops_aqm": [int(f.get("drops_aqm", 0)) for f in fl],
        "ecn_marks": [int(f.get("ecn_marks", 0)) for f in fl],
        "rto": [int(f["rto_count"]) for f in fl],
        "recoveries": [int(f["recoveries"]) for f in fl],
        "min_rtt_ms": [f["min_rtt_ns"] / _NS_PER_MS for f in fl],
        "mean_rtt_ms": [float(f["mean_rtt_ns"]) / _NS_PER_MS for f in fl],
        "group": spec.flow_groups(config),
        "size_bytes": [f.get("size_bytes") for f in fl],
        "fct_s": [math.nan if f.get("fct_ns") is None else f["fct_ns"] / _NS_PER_S for f in fl],
        "random_losses": [int(f.get("random_losses", 0)) for f in fl],
        "ecn": [str(f.get("ecn", "off")) for f in fl],
        "ecn_reductions": [int(f.get("ecn_reductions", 0)) for f in fl],
        "queue_delay_ms": [
            int(f["sojourn_sum_ns"]) / int(f["sojourn_pkts"]) / _NS_PER_MS if f.get("sojourn_pkts") else math.nan for f in fl
        ],
        "cca_params": cca_params_column(config),
    }


def summarize(spec: Spec, config: dict[str, Any], raw: Mapping[str, Any], cols: dict[str, list[Any]], result: Result) -> dict[str, Any]:
    """The run's summary over the analysis window, in plain Python (pandas only for finite flows' FCTs)."""
    bin_ns = int(raw["bin_ns"])
    rate_bps = int(raw.get("bottleneck_rate_bps") or 0)  # a topology's links are in "links"
    link_tx = raw["link_tx_bytes"]
    ws, we = int(config["window_start_ns"]), int(config["window_end_ns"])
    b0, b1 = window_bins(ws, we, bin_ns, len(link_tx))
    window_s = (b1 - b0) * bin_ns / _NS_PER_S
    names, window_bytes = cols["name"], cols["bytes"]
    maxmin = [float(x) for x in cols["maxmin_share"] if not math.isnan(x)]
    kinds = [f.kind for _, _, f in spec.expand_flows()]
    kinds += ["bulk"] * (len(names) - len(kinds))  # [[groups]] flows

    w_pkts = _isum(raw["sojourn_pkts_per_bin"], b0, b1)
    mean_delay_ms = _isum(raw["sojourn_sum_ns_per_bin"], b0, b1) / w_pkts / _NS_PER_MS if w_pkts else math.nan
    soj_bin_ms = int(raw["sojourn_bin_ns"]) / _NS_PER_MS
    p99_ms = metrics.histogram_percentile(raw["sojourn_bin"], raw["sojourn_count"], soj_bin_ms, 99)  # lists or arrays
    util = metrics.utilization(_isum(link_tx, b0, b1), rate_bps, window_s) if window_s > 0 and rate_bps > 0 else math.nan
    summary: dict[str, Any] = {
        "name": spec.name,
        "seed": int(config["seed"]),
        "duration_s": int(raw["duration_ns"]) / _NS_PER_S,
        "window_s": {"start": b0 * bin_ns / _NS_PER_S, "end": b1 * bin_ns / _NS_PER_S},
        "flows": _flow_summaries(cols, kinds),
        "jfi": _num(metrics.jain(window_bytes)) if names else None,
        "fness": _num(metrics.fness(window_bytes[0], window_bytes[1])) if len(names) == 2 else None,
        "maxmin_share_min": _num(min(maxmin)) if maxmin else None,
        "utilization": _num(util),
        "queue_delay_ms": {"mean": _num(mean_delay_ms), "p99": _num(p99_ms)},
        "queue_delay_l4s_ms": _l4s_delay(raw, soj_bin_ms),
        "queue_packets_mean": _num(_queue_packets_mean(raw, ws, we)),
        "data_packets": int(raw.get("data_packets", 0)),
        "events": int(raw.get("events", 0)),
        "sim_wall_s": int(raw.get("wall_ns", 0)) / _NS_PER_S,
        "backend": "sim",  # the testbed backend replaces it (testbed/runner.py)
    }
    if raw.get("links"):
        summary["links"] = link_summaries(raw)
    if any(x is not None for x in cols["size_bytes"]):
        caps = [int(c.get("rate_cap_bps") or 0) for c in config["flows"]]
        bottleneck = config.get("bottleneck") or {}
        fct = fct_summary(result.flows, rate_bps, caps, int(bottleneck.get("l2_overhead_bytes", 0)))
        if fct:
            summary["fct"] = fct
    return summary


def _flow_summaries(cols: dict[str, list[Any]], kinds: Sequence[str]) -> list[dict[str, Any]]:
    """Each flow's entry of the summary, from the flows table's columns."""
    return [
        {
            "name": cols["name"][i],
            "cca": cols["cca"][i],
            "pacing": cols["pacing"][i],
            "rtt_ms": float(cols["rtt_ms"][i]),
            "throughput_bps": _num(float(cols["throughput_bps"][i])),
            "share": _num(float(cols["share"][i])),
            "fair_share_bps": _num(float(cols["fair_share_bps"][i])),
            "maxmin_share": _num(float(cols["maxmin_share"][i])),
            "bytes": cols["bytes"][i],
            "retransmissions": int(cols["retransmissions"][i]),
            "ecn": str(cols["ecn"][i]),
            "ecn_marks": int(cols["ecn_marks"][i]),
            # the keys the testbed reports per flow (its values replace these there)
            "kind": kinds[i],
            "target_rtt_ms": float(cols["rtt_ms"][i]),
            "path_min_rtt_ms": float(cols["rtt_ms"][i]),  # the simulated path's propagation RTT, exactly
            "min_rtt_ms": float(cols["min_rtt_ms"][i]),
        }
        for i in range(len(cols["name"]))
    ]


def _l4s_delay(raw: Mapping[str, Any], soj_bin_ms: float) -> dict[str, Any] | None:
    """The scalable-ECN packets' queueing delay (mean, p99 ms); None when there are none."""
    l4s = dict(zip(map(int, _as_list(raw.get("sojourn_l4s_bin", []))), map(int, _as_list(raw.get("sojourn_l4s_count", [])))))
    hist_bins = _as_list(raw["sojourn_bin"]) if l4s else []
    l4s_counts = [l4s.get(int(b), 0) for b in hist_bins] if l4s else []  # (no scalable-ECN packets: none counted)
    l4s_pkts = sum(l4s_counts)
    if not l4s_pkts:
        return None
    l4s_sum = sum(int(f["sojourn_sum_ns"]) for f in raw["flows"] if f.get("ecn") == "scalable")
    return {
        "mean": _num(l4s_sum / l4s_pkts / _NS_PER_MS),
        "p99": _num(metrics.histogram_percentile(hist_bins, l4s_counts, soj_bin_ms, 99)),
    }


def _queue_packets_mean(raw: Mapping[str, Any], ws: int, we: int) -> float:
    """The mean of the queue samples (packets) taken in the window [ws, we) ns."""
    q_t = raw["queue_time_ns"]  # sample times, increasing
    if hasattr(q_t, "searchsorted"):
        q0, q1 = (int(i) for i in q_t.searchsorted([ws, we], side="left"))
    else:
        q0, q1 = bisect.bisect_left(q_t, ws), bisect.bisect_left(q_t, we)
    return _isum(raw["queue_packets"], q0, q1) / (q1 - q0) if q1 > q0 else math.nan


# Integer columns that may be absent per row (an open-ended flow has no size); a run holds them as
# pandas' nullable Int64, and the store writes and reads them back as such.
NULLABLE_INT_COLUMNS: dict[str, tuple[str, ...]] = {"flows": ("size_bytes",)}
NULLABLE_INT_NAMES = frozenset(c for cols in NULLABLE_INT_COLUMNS.values() for c in cols)


def _column_values(table: str, column: str, series: Any) -> Any:
    """A table column as the store writes it: a numpy array, or for a nullable integer column
    a list of ints and None (its numpy form would be floats with NaN)."""
    if column in NULLABLE_INT_COLUMNS.get(table, ()):
        return [None if missing else int(v) for v, missing in zip(series.tolist(), series.isna().tolist())]
    return series.to_numpy()


def with_nullable_ints(name: str, df: Any) -> Any:
    """``df`` (table ``name``) with its NULLABLE_INT_COLUMNS as pandas' Int64."""
    cols = [c for c in NULLABLE_INT_COLUMNS.get(name, ()) if c in df.columns]
    return df.astype({c: "Int64" for c in cols}) if cols else df


def build_tables(spec: Spec, config: dict[str, Any], raw: Mapping[str, Any], cols: dict[str, list[Any]]) -> dict[str, Any]:
    """The pandas tables of one run (flows, throughput, link, queue, sojourn, trace, meter, pinned; None = absent)."""
    import pandas as pd

    out: dict[str, Any] = {}
    for name, columns in table_columns(spec, config, raw, cols).items():
        if columns is not None:
            ints = {c: pd.array(columns[c], dtype="Int64") for c in NULLABLE_INT_COLUMNS.get(name, ())}
            columns = dict(columns, **ints)
        out[name] = None if columns is None else pd.DataFrame(columns)
    return out


def table_columns(spec: Spec, config: dict[str, Any], raw: Mapping[str, Any], cols: dict[str, list[Any]]) -> dict[str, Any]:
    """Every table of one run as ``{column: numpy array or list}`` (None = absent), in column order.

    The one definition of the tables' columns: :func:`build_tables` wraps each in
    a DataFrame, the sweep store (store.encode_batch) writes them to Parquet
    directly, without a DataFrame per run. ``flows.size_bytes`` is a list with
    None for bulk flows (a nullable integer column).
    """
    import numpy as np

    flows: dict[str, Any] = dict(cols)
    flows["bytes"] = np.asarray(cols["bytes"], dtype=np.int64)
    names = cols["name"]
    queue = {
        "time_s": np.asarray(raw["queue_time_ns"], dtype=np.int64) / _NS_PER_S,
        "packets": np.asarray(raw["queue_packets"], dtype=np.int64),
        "bytes": np.asarray(raw["queue_bytes"], dtype=np.int64),
    }
    trace = _trace_columns(raw, names) if config.get("trace") else None
    meter, pinned = meter_columns(raw, names, config)
    return {
        "flows": flows, "throughput": _throughput_columns(raw, names), "link": _link_columns(raw), "queue": queue,
        "sojourn": _sojourn_columns(raw), "trace": trace, "meter": meter, "pinned": pinned,
    }  # fmt: skip


def _throughput_columns(raw: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    """The throughput table: each flow's bins, delivered and wire-arrival bytes."""
    import numpy as np

    bin_ns = int(raw["bin_ns"])
    bin_s = bin_ns / _NS_PER_S
    delivered = [np.asarray(f["delivered_bytes"], dtype=np.int64) for f in raw["flows"]]
    per_flow_bins = [len(d) for d in delivered]
    all_bytes = np.concatenate(delivered) if delivered else np.zeros(0, dtype=np.int64)
    # Wire-arrival series (simulator: payload of every data packet as it reaches
    # the receiver, as a capture counts it); NaN where the backend has none.
    arrivals = [
        np.asarray(f["arrival_bytes"], dtype=np.float64) if "arrival_bytes" in f else np.full(n, np.nan)
        for f, n in zip(raw["flows"], per_flow_bins)
    ]
    all_arrivals = np.concatenate(arrivals) if arrivals else np.zeros(0)
    return {
        "flow": np.repeat(np.asarray(names, dtype=object), per_flow_bins),
        "time_s": np.concatenate([np.arange(n, dtype=np.int64) * bin_ns / _NS_PER_S for n in per_flow_bins]) if delivered else np.zeros(0),
        "bytes": all_bytes,
        "throughput_bps": all_bytes * 8 / bin_s,
        "arrival_bytes": all_arrivals,
        "arrival_throughput_bps": all_arrivals * 8 / bin_s,
    }


def _link_columns(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The link table: the bottleneck's bytes sent, utilization and mean queueing delay per bin."""
    import numpy as np

    bin_ns = int(raw["bin_ns"])
    bin_s = bin_ns / _NS_PER_S
    rate_bps = int(raw["bottleneck_rate_bps"])
    link_tx = np.asarray(raw["link_tx_bytes"], dtype=np.int64)
    n_bins = len(link_tx)
    soj_sum = _fit(raw["sojourn_sum_ns_per_bin"], n_bins)
    soj_pkts = _fit(raw["sojourn_pkts_per_bin"], n_bins)
    per_bin_delay = np.full(n_bins, np.nan)
    has = soj_pkts > 0
    per_bin_delay[has] = soj_sum[has] / soj_pkts[has] / _NS_PER_MS
    return {
        "time_s": np.arange(n_bins, dtype=np.int64) * bin_ns / _NS_PER_S,
        "tx_bytes": link_tx,
        "utilization": link_tx * 8 / (rate_bps * bin_s),
        "sojourn_packets": soj_pkts,
        "queue_delay_ms": per_bin_delay,
    }


def _sojourn_columns(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The sojourn histogram by bin, with the scalable-ECN packets' counts."""
    import numpy as np

    soj_bin_ns = int(raw["sojourn_bin_ns"])
    order = np.argsort(np.asarray(raw["sojourn_bin"], dtype=np.int64), kind="stable")
    hist_bins = np.asarray(raw["sojourn_bin"], dtype=np.int64)[order]
    hist_counts = np.asarray(raw["sojourn_count"], dtype=np.int64)[order]
    l4s = dict(zip((int(b) for b in raw.get("sojourn_l4s_bin", [])), (int(c) for c in raw.get("sojourn_l4s_count", []))))
    return {
        "bin_start_ms": hist_bins * soj_bin_ns / _NS_PER_MS,
        "bin_end_ms": (hist_bins + 1) * soj_bin_ns / _NS_PER_MS,
        "count": hist_counts,
        "count_l4s": np.asarray([l4s.get(int(b), 0) for b in hist_bins] if l4s else np.zeros(len(hist_bins)), dtype=np.int64),
    }


def _trace_columns(raw: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    """The per-flow trace (``trace = true``): cwnd, inflight, srtt, pacing rate, ssthresh."""
    import numpy as np

    t = raw["trace"]
    idx = np.asarray(t["flow"], dtype=np.int64)
    return {
        "flow": np.asarray(names, dtype=object)[idx] if len(idx) else np.zeros(0, dtype=object),
        "time_s": np.asarray(t["time_ns"], dtype=np.int64) / _NS_PER_S,
        "cwnd_pkts": np.asarray(t["cwnd_pkts"], dtype=np.int64),
        "inflight_pkts": np.asarray(t["inflight_pkts"], dtype=np.int64),
        "srtt_ms": np.asarray(t["srtt_ns"], dtype=np.int64) / _NS_PER_MS,
        "pacing_rate_bps": np.asarray(t["pacing_rate_bps"], dtype=np.int64),
        "ssthresh_pkts": np.asarray(t["ssthresh_pkts"], dtype=np.int64),
    }


def fair_shares_bps(raw: Mapping[str, Any], config: dict[str, Any], window_ns: tuple[int, int], step_ns: int) -> list[float]:
    """Each flow's max-min fair share of the bottleneck over the window, payload bit/s.

    Water-filling per measurement bin (:func:`ccfair.metrics.max_min_fair_rates`)
    in wire bytes (payload + HEADER_BYTES + the L2 overhead per segment, what the link carries): a
    flow is active from its actual start (jitter included) until it stops or
    completes (finite flows); a rate-capped flow wants at most its cap.
    """
    from ccfair.spec import HEADER_BYTES

    if config.get("links"):
        return topology_fair_shares_bps(raw, config, window_ns, step_ns)
    flows, cfg = raw["flows"], config["flows"]
    l2 = int(config["bottleneck"].get("l2_overhead_bytes", 0))
    end_run = int(raw["duration_ns"])
    active: list[tuple[int, int]] = []
    caps: list[float | None] = []
    wire = []
    for f, c in zip(flows, cfg):
        start = int(f["start_ns"])
        end = int(c.get("stop_ns") or end_run)
        if f.get("fct_ns") is not None:
            end = min(end, start + int(f["fct_ns"]))
        mss = int(c.get("mss_bytes", 1448))
        w = (mss + HEADER_BYTES + l2) / mss
        wire.append(w)
        active.append((start, end))
        caps.append(None if not c.get("rate_cap_bps") else float(c["rate_cap_bps"]) * w)
    capacity_bps = float(raw["bottleneck_rate_bps"])
    rates: Sequence[float] | np.ndarray
    if _all_want_the_link(active, caps, window_ns, capacity_bps):
        rates = [capacity_bps / len(active)] * len(active)  # water-filling of equal unbounded demands
    else:
        rates = metrics.max_min_fair_rates(capacity_bps, window_ns, active, caps, step_ns)
    return [float(r) / w for r, w in zip(rates, wire)]


def _active_ns(raw: Mapping[str, Any], config: dict[str, Any]) -> list[tuple[int, int]]:
    """Each flow's (start, end) in ns: its actual start until it stops or completes."""
    end_run = int(raw["duration_ns"])
    out = []
    for f, c in zip(raw["flows"], config["flows"]):
        start = int(f["start_ns"])
        end = int(c.get("stop_ns") or end_run)
        if f.get("fct_ns") is not None:
            end = min(end, start + int(f["fct_ns"]))
        out.append((start, end))
    return out


def link_rates_bps(config: dict[str, Any]) -> list[int]:
    """Each ``links`` entry's rate: its rate_bps, or a trace's mean rate."""
    from ccfair.topology import trace_mean_rate_bps

    return [int(lk["rate_bps"]) if lk.get("rate_bps") is not None else trace_mean_rate_bps(lk["trace_ms"]) for lk in config["links"]]


def topology_fair_shares_bps(raw: Mapping[str, Any], config: dict[str, Any], window_ns: tuple[int, int], step_ns: int) -> list[float]:
    """Each flow's max-min fair share over the topology (``links``), payload bit/s: progressive filling
    over the links of the flows' forward paths (:func:`ccfair.metrics.max_min_fair_rates_topology`), a
    flow's payload rate costing its wire rate on each link (payload + HEADER_BYTES + that link's L2
    overhead per segment), in every measurement bin with the flows active in it and their caps."""
    from ccfair.spec import HEADER_BYTES

    links = config["links"]
    index = {lk["name"]: k for k, lk in enumerate(links)}
    paths, cost, caps = [], [], []
    for c in config["flows"]:
        path = [index[name] for name in c["path"]]
        mss = int(c.get("mss_bytes", 1448))
        paths.append(path)
        cost.append([(mss + HEADER_BYTES + int(links[k].get("l2_overhead_bytes", 0))) / mss for k in path])
        caps.append(float(c["rate_cap_bps"]) if c.get("rate_cap_bps") else None)
    capacities = [float(r) for r in link_rates_bps(config)]
    return metrics.max_min_fair_rates_topology(capacities, paths, cost, window_ns, _active_ns(raw, config), caps, step_ns)


def link_summaries(raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``links`` of the summary: per link of the run (a dumbbell's one, "bottleneck"), its rate,
    utilisation, mean queue, drops, marks, random-loss drops and delivered bytes, as the backend
    measured them (the keys and types of ``raw_result.LINK_FIELDS``)."""
    from ccfair.raw_result import LINK_FIELDS

    convert: dict[type, Any] = {str: str, int: int, float: lambda x: _num(float(x))}
    return [{k: convert[t](lk[k]) for k, t in LINK_FIELDS.items()} for lk in raw.get("links") or []]


def _all_want_the_link(active: list[tuple[int, int]], caps: list[float | None], window_ns: tuple[int, int], capacity_bps: float) -> bool:
    """True if every flow is active over the whole window with no cap below the link rate.

    Then every step's demands are equal and unbounded, so max-min gives each flow
    capacity / n (the common bulk case, computed without numpy)."""
    ws, we = window_ns
    return bool(active) and all(a <= ws and e >= we for a, e in active) and all(c is None or c >= capacity_bps for c in caps)


def cca_params_column(config: dict[str, Any]) -> list[str]:
    """Per flow, every parameter its CCA ran with (defaults, variant, given), as sorted JSON."""
    from ccfair import ccas

    return [ccas.resolved_params_json(f["cca"], json.dumps(f.get("cca_params", {}), sort_keys=True)) for f in config["flows"]]


def fct_summary(flows: pd.DataFrame, rate_bps: int, rate_caps_bps: list[int], l2_overhead_bytes: int = 0) -> dict[str, Any]:
    """Per-group flow-completion statistics of the finite flows (S2).

    For each group: flows, completed, FCT mean/p50/p95/p99 in seconds over the
    completed flows, and the FCT slowdown = FCT / ideal FCT, with the usual
    ideal (e.g. pFabric, Alizadeh et al. 2013) of one base RTT plus the
    transfer time: the flow's wire bytes at the bottleneck rate or its payload
    at its rate cap, whichever is longer. A rate-capped flow can come in just
    under 1, because its application starts producing data at the SYN. Empty when no flow is finite.
    """
    import numpy as np
    import pandas as pd

    out: dict[str, Any] = {}
    finite = flows["size_bytes"].notna().to_numpy()
    if not finite.any():
        return out
    mss_wire = 1448 + 52 + l2_overhead_bytes  # a full segment's frame at the bottleneck
    f = flows.loc[finite, ["group", "fct_s", "size_bytes", "rtt_ms"]]
    sizes = f["size_bytes"].to_numpy(dtype=float)
    caps = np.asarray(rate_caps_bps, dtype=float)[finite]
    caps[caps == 0] = math.inf
    wire = np.ceil(sizes / 1448) * mss_wire
    # The link carries wire bytes; a rate cap limits application (payload) bytes.
    transfer = np.maximum(wire * 8 / rate_bps, sizes * 8 / caps)
    ideal = f["rtt_ms"].to_numpy(dtype=float) / 1e3 + transfer
    d = pd.DataFrame({"group": f["group"].astype(str).to_numpy(), "fct": f["fct_s"].to_numpy(dtype=float)})
    d["slow"] = d["fct"] / ideal
    g = d.groupby("group", sort=True)
    n, done = g.size(), g["fct"].count()
    fct_mean, slow_mean = g["fct"].mean(), g["slow"].mean()
    fct_q = g["fct"].quantile([0.5, 0.95, 0.99]).unstack()
    slow_q = g["slow"].quantile([0.5, 0.99]).unstack()

    def num(x: Any) -> float | None:
        return None if pd.isna(x) else _num(float(x))

    rows = zip(
        n.index, n.tolist(), done.tolist(), fct_mean.tolist(), fct_q[0.5].tolist(), fct_q[0.95].tolist(),
        fct_q[0.99].tolist(), slow_mean.tolist(), slow_q[0.5].tolist(), slow_q[0.99].tolist(),
    )  # fmt: skip
    for group, cnt, ok, fm, f50, f95, f99, sm, s50, s99 in rows:
        out[str(group)] = {
            "flows": int(cnt),
            "completed": int(ok),
            "fct_s": {"mean": num(fm), "p50": num(f50), "p95": num(f95), "p99": num(f99)},
            "slowdown": {"mean": num(sm), "p50": num(s50), "p99": num(s99)},
        }
    return out


def meter_columns(raw: Mapping[str, Any], names: list[str], config: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The flow-meter log and the pinned flows by column (None unless the qdisc keeps a meter, ``qdiscs.has_meter``: RRMQS)."""
    from ccfair import qdiscs

    if not qdiscs.has_meter((config.get("bottleneck") or {}).get("qdisc", {}).get("kind")) or "meter" not in raw:
        return None, None
    import numpy as np

    m = raw["meter"]
    classes = np.asarray(raw.get("cca_classes", []), dtype=object)
    cls_idx = np.asarray(m["class"], dtype=np.int64)
    meter = {
        "window": np.asarray(m["window"], dtype=np.int64),
        "time_s": np.asarray(m["start_ns"], dtype=np.int64) / _NS_PER_S,
        "cca": classes[cls_idx] if len(cls_idx) else np.zeros(0, dtype=object),
        "main_pkts": np.asarray(m["main_pkts"], dtype=np.int64),
        "rrmqs_pkts": np.asarray(m["rrmqs_pkts"], dtype=np.int64),
        "main_flows": np.asarray(m["main_flows"], dtype=np.int64),
        "rrmqs_flows": np.asarray(m["rrmqs_flows"], dtype=np.int64),
        "main_rate": np.asarray(m["main_rate"], dtype=np.float64),
        "rrmqs_rate": np.asarray(m["rrmqs_rate"], dtype=np.float64),
        "index": np.asarray(m["index"], dtype=np.float64),
        "action": np.asarray(m["action"], dtype=object),
        "weight": np.asarray(m["weight"], dtype=np.float64),
        "main_done": np.asarray(m.get("main_done", []), dtype=np.int64),
        "rrmqs_done": np.asarray(m.get("rrmqs_done", []), dtype=np.int64),
        "main_flow_rate": np.asarray(m.get("main_flow_rate", []), dtype=np.float64),
        "rrmqs_flow_rate": np.asarray(m.get("rrmqs_flow_rate", []), dtype=np.float64),
    }
    pf = np.asarray(m["pinned_flow"], dtype=np.int64)
    rel = np.asarray(m["released_ns"], dtype=np.uint64)
    pinned = {
        "flow": np.asarray(names, dtype=object)[pf] if len(pf) else np.zeros(0, dtype=object),
        "cca": classes[np.asarray(m["pinned_class"], dtype=np.int64)] if len(pf) else np.zeros(0, dtype=object),
        "pinned_s": np.asarray(m["pinned_ns"], dtype=np.int64) / _NS_PER_S,
        "released_s": np.where(rel == np.iinfo(np.uint64).max, np.nan, rel.astype(np.float64) / _NS_PER_S),
    }
    return meter, pinned


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, allow_nan=False) + "\n")
