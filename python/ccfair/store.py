"""The result store of a sweep: one directory, Parquet tables, runs stored in batches.

Layout of a sweep directory ``DIR``::

    sweep.json            the expanded sweep: base experiment, [sweep] table, axes,
                          ordered run ids, versions (written before any run)
    experiment.toml       the sweep file as given (plus the --set overrides in sweep.json)
    batches/<batch_id>/   finished runs, several per directory (one worker task):
        run_ids.json          the run ids in this batch
        rows.jsonl            per run: its runs-table row, flows-table and links-table rows
        runs.jsonl            per run: summary, spec, run_config, the tables it has
        <table>.parquet       flows, throughput, link, queue, sojourn (and trace,
                              meter, pinned when a run has them) of every run of
                              the batch, with a leading run_id column
    runs/<run_id>/        (stores written before batching) one run: the files of
                          Result.to_parquet plus row.json; still read
    runs.parquet          the runs table, one row per finished run (compacted)
    flows.parquet         the flows table, one row per flow per finished run (compacted)
    links.parquet         the links table, one row per link per finished run (compacted;
                          a dumbbell's one link is "bottleneck")
    failed/<run_id>.json  runs that raised (retried on the next invocation)
    .lock                 the store lock: an advisory flock held by the sweep writing
                          here, holding that process's PID (see :func:`lock`)

A run is *finished* exactly when it is listed in a ``batches/*/run_ids.json``
(or has a ``runs/<run_id>/`` directory). A batch's files are written into
``batches/.tmp-<batch_id>-<pid>/`` and the directory is renamed into place
(atomic on POSIX), so a sweep killed at any instant loses at most the batches
in flight and never a committed run; leftover ``.tmp-*`` directories are
removed on the next start. The parent process is the only writer and stores
only runs not yet finished, so a run is stored at most once: there are no
duplicated rows. ``runs.parquet``/``flows.parquet``/``links.parquet`` are caches rebuilt from
the batches (at the end of a sweep, and in memory by :func:`load_sweep` when
they are missing or stale).

One writer at a time: :func:`lock` takes an exclusive advisory lock
(``flock(2)``) on ``DIR/.lock`` for the whole of a sweep's invocation. The
kernel drops it when the process exits, however it exits (kill -9
included), so a dead holder never blocks the next sweep. A second sweep into
a locked directory is refused naming the holder's PID, or waits for it.

Writing a few dozen runs per directory instead of nine files per run, and
building each batch's Parquet tables straight from the simulator's columns
(no DataFrame per run), is what keeps the store's share of a sweep small
(docs/benchmarks.md, "Sweeps").

Every table and row of a stored run is identical whichever executor ran it;
only ``summary`` records the simulator's (varying) wall time.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import math
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccfair.raw_result import LINK_FIELDS

if TYPE_CHECKING:
    import pandas as pd

    from ccfair.result import Result

__all__ = [
    "LOCK_FILE",
    "RUNS_DIR",
    "BATCHES_DIR",
    "encode_result",
    "encode_batch",
    "make_row",
    "write_batch",
    "write_run",
    "finished_runs",
    "read_rows",
    "parse_jsonl",
    "compact",
    "load_run",
    "load_sweep",
    "lock",
    "runs_frame",
]

RUNS_DIR = "runs"
BATCHES_DIR = "batches"
#: Per-run tables of a batch, one Parquet file each (a run may lack trace, meter, pinned).
BATCH_TABLES = ("flows", "throughput", "link", "queue", "sojourn", "trace", "meter", "pinned")
FAILED_DIR = "failed"
SWEEP_JSON = "sweep.json"
LOCK_FILE = ".lock"
#: Series tables that can be loaded across runs with :func:`load_sweep`.
SERIES_TABLES = ("throughput", "link", "queue", "sojourn", "trace")
#: Summary metrics in the runs table, in column order.
METRIC_COLUMNS = (
    "jfi",
    "fness",
    "maxmin_share_min",
    "maxmin_share_a",
    "maxmin_share_b",
    "utilization",
    "queue_delay_mean_ms",
    "queue_delay_p99_ms",
    "queue_packets_mean",
    "retransmissions",
    "data_packets",
    "events",
)
#: Columns of the flows table taken from Result.flows (run_id and position are added).
FLOW_COLUMNS = (
    "name",
    "cca",
    "pacing",
    "rtt_ms",
    "start_s",
    "throughput_bps",
    "share",
    "fair_share_bps",
    "maxmin_share",
    "bytes",
    "sent_packets",
    "retransmissions",
    "losses",
    "drops",
    "rto",
    "recoveries",
    "min_rtt_ms",
    "mean_rtt_ms",
    "cca_params",
)
#: Columns of the links table: run_id, the link's position in the run, then every per-link
#: value a run reports (``raw_result.LINK_FIELDS``, declared by the simulator's LinkStats).
LINK_TABLE_COLUMNS = ("run_id", "position", *LINK_FIELDS)
#: The tables rebuilt from the batches' rows (``<name>.parquet`` caches, :func:`load_sweep`).
ROW_TABLES = ("runs", "flows", "links")


def _json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, allow_nan=False) + "\n").encode()


def _nan_to_none(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _arrow_table(df: pd.DataFrame) -> Any:
    """A pyarrow Table with the frame's columns (built column by column: several times
    faster than ``Table.from_pandas`` for the small tables of one run; no pandas metadata,
    which these tables, with a plain RangeIndex and numpy/str columns, do not need)."""
    import pyarrow as pa

    return pa.Table.from_arrays([pa.array(df[c].to_numpy()) for c in df.columns], names=[str(c) for c in df.columns])


def encode_result(result: Result) -> dict[str, bytes]:
    """The files of :meth:`Result.to_parquet` as ``{file name: bytes}``.

    Same files, columns and types as ``Result.to_parquet`` (zstd Parquet, the
    same JSON), so ``ccfair.load`` reads a stored run back into a ``Result``.
    """
    import pyarrow.parquet as pq

    files: dict[str, bytes] = {}
    for name, df in result.tables().items():
        sink = io.BytesIO()
        pq.write_table(_arrow_table(df), sink, compression="zstd")
        files[f"{name}.parquet"] = sink.getvalue()
    files["summary.json"] = _json_bytes(result.summary)
    files["spec.json"] = _json_bytes(result.spec.model_dump(mode="json"))
    files["run_config.json"] = _json_bytes(result.config)
    return files


def make_row(run_id: str, meta: dict[str, Any], result: Result) -> dict[str, Any]:
    """The runs-table row, flows-table rows and links-table rows of one run (JSON-ready).

    ``fness`` is S0's fness(A, B) with A and B the flows the sweep calls A
    and B (entries 0 and 1 of the grid point's experiment), whichever
    started first; NaN unless the run has exactly two flows.
    """
    from ccfair import scalar_metrics as metrics

    s = result.summary
    # plain Python lists per column (no pandas for a run straight from the simulator)
    all_cols = result.flow_columns()
    cols = {c: list(all_cols[c]) for c in FLOW_COLUMNS}
    names, n = cols["name"], len(cols["name"])
    fness = mm_a = mm_b = math.nan
    a, b = meta.get("flow_a"), meta.get("flow_b")
    if a is not None and b is not None and n == 2:
        by_name = dict(zip(names, cols["bytes"]))
        fness = metrics.fness(int(by_name[a]), int(by_name[b]))
        mm = dict(zip(names, cols["maxmin_share"]))
        mm_a, mm_b = mm[a], mm[b]
    first = min(range(n), key=lambda i: (cols["start_s"][i], i)) if n else None
    row: dict[str, Any] = {"run_id": run_id}
    row.update(meta["params"])
    if "backend" in meta:  # sweeps with --backend testbed or both
        row["backend"] = meta["backend"]
    row.update(
        {
            "repetition": int(meta["repetition"]),
            "order": meta["order"],
            "seed": int(meta["seed"]),
            "ccas": meta.get("ccas", ""),
            "qdisc": json.dumps(_qdiscs(result.config), sort_keys=True),
            "first": None if first is None else str(names[first]),
            "jfi": s["jfi"],
            "fness": fness,
            "maxmin_share_min": s.get("maxmin_share_min"),
            "maxmin_share_a": mm_a,
            "maxmin_share_b": mm_b,
            "utilization": s["utilization"],
            "queue_delay_mean_ms": s["queue_delay_ms"]["mean"],
            "queue_delay_p99_ms": s["queue_delay_ms"]["p99"],
            "queue_packets_mean": s.get("queue_packets_mean"),
            "retransmissions": int(sum(cols["retransmissions"])),
            "data_packets": int(s.get("data_packets", 0)),
            "events": int(s.get("events", 0)),
        }
    )
    # a testbed run's host facts and quality verdict (ccfair.testbed.quality, executors._testbed_run)
    row.update(meta.get("facts") or {})
    flow_rows = []
    for pos in range(n):
        r: dict[str, Any] = {"run_id": run_id, "position": pos}
        r.update((c, cols[c][pos]) for c in FLOW_COLUMNS)
        flow_rows.append(r)
    return {
        "row": {k: _nan_to_none(v) for k, v in row.items()},
        "flows": [{k: _nan_to_none(v) for k, v in r.items()} for r in flow_rows],
        "links": link_rows(run_id, s),
    }


def link_rows(run_id: str, summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The links-table rows of one run: one per link of ``summary["links"]``, in the run's order."""
    return [
        {"run_id": run_id, "position": pos, **{k: _nan_to_none(lk[k]) for k in LINK_FIELDS}}
        for pos, lk in enumerate(summary.get("links") or [])
    ]


def _qdiscs(config: dict[str, Any]) -> Any:
    """The run's queue discipline (a dumbbell) or each link's by name (a topology)."""
    if config.get("links"):
        return {lk["name"]: lk["qdisc"] for lk in config["links"]}
    return config["bottleneck"]["qdisc"]


def _arrow_array(name: str, values: Any) -> Any:
    import pyarrow as pa

    from ccfair.result import NULLABLE_INT_NAMES

    return pa.array(values, type=pa.int64()) if name in NULLABLE_INT_NAMES else pa.array(values)


def _arrow_columns(run_id: str, columns: dict[str, Any]) -> Any:
    """One run's table as a pyarrow Table with a leading run_id column."""
    import pyarrow as pa

    n = len(next(iter(columns.values()))) if columns else 0
    arrays = [pa.repeat(pa.scalar(run_id, type=pa.string()), n)]
    arrays.extend(_arrow_array(name, values) for name, values in columns.items())
    return pa.Table.from_arrays(arrays, names=["run_id", *columns])


def _concat_column(parts: list[Any]) -> Any:
    """One column's per-run parts joined: numpy arrays of one dtype into one array, lists into one list;
    None when the parts do not join like that (then the table is built run by run)."""
    import numpy as np

    if all(isinstance(p, list) for p in parts):
        return [v for p in parts for v in p]
    if all(isinstance(p, np.ndarray) and p.dtype == parts[0].dtype for p in parts):
        return np.concatenate(parts)
    return None


def _joined_table(run_ids: list[str], tables: list[dict[str, Any]]) -> Any:
    """Several runs' parts of one table as one pyarrow Table with a leading run_id column.

    Each column is joined across the runs first and converted to Arrow once (not once per
    run and column); the values and types are those of concatenating the runs' own tables
    (:func:`_arrow_columns`), which is what a table whose runs do not have the same columns
    and dtypes falls back to.
    """
    import numpy as np
    import pyarrow as pa

    names = list(tables[0])
    rows = [len(next(iter(t.values()))) if t else 0 for t in tables]
    joined = None
    if names and all(list(t) == names for t in tables):
        joined = [_concat_column([t[c] for t in tables]) for c in names]
    if joined is None or any(j is None for j in joined):
        return pa.concat_tables([_arrow_columns(r, t) for r, t in zip(run_ids, tables)], promote_options="default")
    # run_id dictionary-coded: Parquet dictionary-encodes it anyway, and it is read back as strings
    # (_parquet_bytes writes no Arrow schema)
    run_col = pa.DictionaryArray.from_arrays(
        pa.array(np.repeat(np.arange(len(run_ids), dtype=np.int32), rows)), pa.array(run_ids, type=pa.string())
    )
    return pa.Table.from_arrays([run_col, *(_arrow_array(c, j) for c, j in zip(names, joined))], names=["run_id", *names])


#: The JSON text of spec.model_dump(mode="json") by id(spec), holding the spec so that the id
#: stays its own (a sweep worker reuses one validated Spec for every repetition of a grid point).
_SPEC_JSON: dict[int, tuple[Any, str]] = {}


def _spec_json(spec: Any) -> str:
    hit = _SPEC_JSON.get(id(spec))
    if hit is None or hit[0] is not spec:
        if len(_SPEC_JSON) >= 1024:
            _SPEC_JSON.clear()
        hit = _SPEC_JSON[id(spec)] = (spec, json.dumps(spec.model_dump(mode="json"), allow_nan=False))
    return hit[1]


def _json_object(items: list[tuple[str, str]]) -> str:
    """``json.dumps`` of a dict from its keys and its values' JSON texts (the same text: without
    ``indent`` a nested value is encoded exactly as on its own), so a cached value is not re-encoded."""
    return "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in items) + "}"


#: Parquet encodings of a batch table's columns besides the default (dictionary, then plain):
#: evenly spaced float times and bin edges compress best byte-stream-split, slowly varying
#: integer counts delta-coded (docs/benchmarks.md, "Sweep": -0.09 ms and -5 KB per
#: run against dictionary encoding, which stays for the others: strings and the throughput
#: series, whose few distinct values it suits). Lossless either way: the values read back are the same.
_COLUMN_ENCODINGS: dict[str, dict[str, str]] = {
    "throughput": {"time_s": "BYTE_STREAM_SPLIT"},
    "link": {"time_s": "BYTE_STREAM_SPLIT", "queue_delay_ms": "BYTE_STREAM_SPLIT", "sojourn_packets": "DELTA_BINARY_PACKED"},
    "queue": {"time_s": "BYTE_STREAM_SPLIT", "packets": "DELTA_BINARY_PACKED"},
    "sojourn": {"bin_start_ms": "BYTE_STREAM_SPLIT", "bin_end_ms": "BYTE_STREAM_SPLIT", "count": "DELTA_BINARY_PACKED"},
}


def _parquet_bytes(name: str, table: Any) -> bytes:
    """One batch table as Parquet bytes: zstd level 1 (the same size as the default level here, a
    third faster), no column statistics (a batch file is one row group: they could not skip
    anything), the encodings of :data:`_COLUMN_ENCODINGS` for columns the table has with the
    types they suit, and no stored Arrow schema: a reader gets every column's type from its
    Parquet type (string, int64, float64, bool: the same types), and the dictionary-coded run_id
    column (:func:`_joined_table`) back as strings."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    suits = {"BYTE_STREAM_SPLIT": pa.types.is_floating, "DELTA_BINARY_PACKED": pa.types.is_integer}
    encodings = {
        f.name: enc for f in table.schema if (enc := _COLUMN_ENCODINGS.get(name, {}).get(f.name)) is not None and suits[enc](f.type)
    }
    sink = io.BytesIO()
    pq.write_table(
        table,
        sink,
        compression="zstd",
        compression_level=1,
        write_statistics=False,
        use_dictionary=[c for c in table.column_names if c not in encodings] if encodings else True,
        column_encoding=encodings or None,
        store_schema=False,
    )
    return sink.getvalue()


def encode_batch(items: list[tuple[str, dict[str, Any], Result]]) -> dict[str, bytes]:
    """The files of one batch directory for ``(run_id, meta, result)`` items (see the module docstring).

    Tables are built from each result's columns (:meth:`Result.table_columns`),
    not from DataFrames, and written once per batch.
    """
    parts: dict[str, tuple[list[str], list[dict[str, Any]]]] = {name: ([], []) for name in BATCH_TABLES}
    rows, runs = [], []
    for run_id, meta, result in items:
        present = []
        for name, columns in result.table_columns().items():
            if columns is not None:
                parts[name][0].append(run_id)
                parts[name][1].append(columns)
                present.append(name)
        rows.append(json.dumps(make_row(run_id, meta, result), allow_nan=False))
        runs.append(
            _json_object(
                [
                    ("run_id", json.dumps(run_id)),
                    ("tables", json.dumps(present)),
                    ("summary", json.dumps(result.summary, allow_nan=False)),
                    ("spec", _spec_json(result.spec)),
                    ("run_config", json.dumps(result.config, allow_nan=False)),
                ]
            )
        )
    files: dict[str, bytes] = {}
    for name, (run_ids, tables) in parts.items():
        if tables:
            files[f"{name}.parquet"] = _parquet_bytes(name, _joined_table(run_ids, tables))
    files["rows.jsonl"] = ("\n".join(rows) + "\n").encode()
    files["runs.jsonl"] = ("\n".join(runs) + "\n").encode()
    files["run_ids.json"] = json.dumps([rid for rid, _, _ in items]).encode()
    return files


# --------------------------------------------------------------------------
# the store lock
# --------------------------------------------------------------------------


def _flock_owner(path: Path) -> int | None:
    """The pid holding a flock on ``path``, from the kernel's table (/proc/locks, Linux), or None."""
    try:
        st = path.stat()
        table = Path("/proc/locks").read_text()
    except OSError:
        return None
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        f = line.split()
        if len(f) >= 6 and f[1] == "FLOCK" and f[5] == inode and f[4].isdigit():
            return int(f[4])
    return None


def lock_holder(directory: str | Path) -> str:
    """Who holds the store's lock: ``"PID 1234"`` from the kernel's lock table (the holder
    may not have written its PID into the file yet), else what ``DIR/.lock`` says, or ``""``."""
    path = Path(directory) / LOCK_FILE
    pid = _flock_owner(path)
    if pid is not None:
        return f"PID {pid}"
    try:
        return path.read_text().strip()
    except OSError:
        return ""


@contextlib.contextmanager
def lock(directory: str | Path, wait: bool = False) -> Iterator[None]:
    """Hold the store's exclusive lock while the ``with`` body runs.

    ``flock(LOCK_EX)`` on ``DIR/.lock`` (created if missing; the directory
    too), then the holder's PID is written into it. Already held by another
    process: with ``wait`` block until it is released, else raise
    :class:`~ccfair.errors.SpecError` naming the holder's PID. Released when
    the body ends, and by the kernel when the process dies.
    """
    from ccfair.errors import SpecError

    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise SpecError("--out", f"{d} exists and is not a directory")
    d.mkdir(parents=True, exist_ok=True)
    fd = os.open(d / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            holder = lock_holder(d) or "another process"
            raise SpecError(
                "--out",
                f"{d} is in use by another sweep ({holder}); wait for it to finish, or pass --wait to queue behind it",
            ) from None
        me = f"PID {os.getpid()} on {os.uname().nodename}\n".encode()
        if os.pread(fd, 4096, 0) != me:  # (an unchanged file keeps its mtime)
            os.ftruncate(fd, 0)
            os.pwrite(fd, me, 0)
        yield
    finally:
        os.close(fd)  # releases the flock


# --------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------


def write_run(directory: str | Path, run_id: str, files: dict[str, bytes]) -> bool:
    """Store one run atomically (temp directory, then rename). False if it was already stored."""
    runs = Path(directory) / RUNS_DIR
    final = runs / run_id
    if final.exists():
        return False
    tmp = runs / f".tmp-{run_id}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    try:
        os.rename(tmp, final)
    except OSError:
        if final.exists():  # another writer got there first: same run, same bytes
            shutil.rmtree(tmp, ignore_errors=True)
            return False
        raise
    failed = Path(directory) / FAILED_DIR / f"{run_id}.json"
    if failed.exists():
        failed.unlink()
    return True


def write_batch(directory: str | Path, run_ids: list[str], files: dict[str, bytes]) -> Path:
    """Store one batch of finished runs atomically (temp directory, then rename); returns its directory.

    The caller stores only runs that are not finished yet (see :func:`finished_runs`).
    """
    batches = Path(directory) / BATCHES_DIR
    batches.mkdir(parents=True, exist_ok=True)
    batch_id = f"{run_ids[0]}+{len(run_ids)}"
    final = batches / batch_id
    tmp = batches / f".tmp-{batch_id}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    os.rename(tmp, final)  # the commit point: all runs of the batch, or none
    failed = Path(directory) / FAILED_DIR
    if failed.is_dir():
        for rid in run_ids:
            (failed / f"{rid}.json").unlink(missing_ok=True)
    return final


def write_failure(directory: str | Path, run_id: str, error: str) -> None:
    d = Path(directory) / FAILED_DIR
    d.mkdir(parents=True, exist_ok=True)
    tmp = d / f".tmp-{run_id}"
    tmp.write_bytes(_json_bytes({"run_id": run_id, "error": error}))
    os.replace(tmp, d / f"{run_id}.json")


def clean_partial(directory: str | Path) -> int:
    """Remove ``.tmp-*`` leftovers of a killed writer; returns how many."""
    n = 0
    for sub in (RUNS_DIR, BATCHES_DIR):
        base = Path(directory) / sub
        if base.is_dir():
            for p in base.glob(".tmp-*"):
                shutil.rmtree(p, ignore_errors=True)
                n += 1
    return n


def finished_runs(directory: str | Path) -> set[str]:
    """Run ids stored in ``directory`` (finished runs)."""
    return set(_locations(Path(directory)))


def _batch_dirs(directory: Path) -> list[Path]:
    base = directory / BATCHES_DIR
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if not p.name.startswith(".") and p.is_dir())


def _locations(directory: Path) -> dict[str, Path]:
    """Finished run id -> where it is stored: its batch directory, or its own run directory."""
    out: dict[str, Path] = {}
    runs = directory / RUNS_DIR
    if runs.is_dir():
        out.update((p.name, p) for p in runs.iterdir() if not p.name.startswith(".") and p.is_dir())
    for b in _batch_dirs(directory):
        out.update((rid, b) for rid in json.loads((b / "run_ids.json").read_text()))
    return out


def _jsonl(path: Path) -> dict[str, dict[str, Any]]:
    """A batch's rows.jsonl / runs.jsonl by run id."""
    return parse_jsonl(path.read_text())


def parse_jsonl(text: str | bytes) -> dict[str, dict[str, Any]]:
    """The records of a batch's rows.jsonl / runs.jsonl text by run id."""
    if isinstance(text, bytes):
        text = text.decode()
    out = {}
    for line in text.splitlines():
        if line:
            d = json.loads(line)
            out[d["run_id"] if "run_id" in d else d["row"]["run_id"]] = d
    return out


def read_rows(
    directory: str | Path, run_ids: list[str], parsed: dict[Path, dict[str, dict[str, Any]]] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Runs-table rows and flows-table rows of the given finished runs, in that order.

    ``parsed``: batch directory -> its rows.jsonl already parsed (:func:`parse_jsonl` of the bytes
    the caller stored there), so that file is not read again."""
    tables = read_tables(directory, run_ids, parsed)
    return tables["runs"], tables["flows"]


def read_tables(
    directory: str | Path, run_ids: list[str], parsed: dict[Path, dict[str, dict[str, Any]]] | None = None
) -> dict[str, list[dict[str, Any]]]:
    """The rows of every table of :data:`ROW_TABLES` of the given finished runs, in that order
    (``parsed`` as in :func:`read_rows`). A run stored before the links table existed has no links rows."""
    d = Path(directory)
    where = _locations(d)
    batch_rows: dict[Path, dict[str, dict[str, Any]]] = dict(parsed or {})
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in ROW_TABLES}
    for rid in run_ids:
        loc = where[rid]
        if loc.parent.name == RUNS_DIR:
            data = json.loads((loc / "row.json").read_text())
        else:
            if loc not in batch_rows:
                batch_rows[loc] = _jsonl(loc / "rows.jsonl")
            data = batch_rows[loc][rid]
        out["runs"].append(data["row"])
        out["flows"].extend(data["flows"])
        out["links"].extend(data.get("links", []))
    return out


def _ordered_ids(directory: Path) -> list[str]:
    """Finished run ids in plan order (sweep.json), then any others sorted."""
    done = finished_runs(directory)
    order: list[str] = []
    meta = directory / SWEEP_JSON
    if meta.exists():
        order = [r for r in json.loads(meta.read_text()).get("runs", []) if r in done]
    rest = sorted(done - set(order))
    return order + rest


def runs_frame(rows: list[dict[str, Any]], param_columns: list[str] | None = None) -> pd.DataFrame:
    """A runs DataFrame from row dicts, with None as NaN in float columns."""
    import pandas as pd

    df = pd.DataFrame.from_records(rows)
    for c in METRIC_COLUMNS:
        if c in df.columns and c not in ("retransmissions", "data_packets", "events"):
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
    return df.reset_index(drop=True)


def _frames(directory: Path, parsed: dict[Path, dict[str, dict[str, Any]]] | None = None) -> dict[str, pd.DataFrame]:
    """Every table of :data:`ROW_TABLES` rebuilt from the stored rows (the links table with its
    declared columns even when no run has links)."""
    import pandas as pd

    rows = read_tables(directory, _ordered_ids(directory), parsed)
    return {
        "runs": runs_frame(rows["runs"]),
        "flows": pd.DataFrame.from_records(rows["flows"]),
        "links": pd.DataFrame.from_records(rows["links"], columns=list(LINK_TABLE_COLUMNS)),
    }


def _write_parquet_atomic(df: pd.DataFrame, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}")
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp, compression="zstd")
    os.replace(tmp, path)


def compact(directory: str | Path, parsed: dict[Path, dict[str, dict[str, Any]]] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rebuild ``runs.parquet``, ``flows.parquet`` and ``links.parquet`` from the stored runs
    (each atomically); returns the runs and flows tables.

    ``parsed`` as in :func:`read_rows`: the rows of batches the caller has just written (a sweep
    parses each batch's rows while the workers compute, so the end of a sweep reads only older batches)."""
    d = Path(directory)
    frames = _frames(d, parsed)
    for name in ROW_TABLES:
        _write_parquet_atomic(frames[name], d / f"{name}.parquet")
    return frames["runs"], frames["flows"]


# --------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------


def load_sweep(directory: str | Path, table: str = "runs", run_ids: list[str] | None = None) -> pd.DataFrame:
    """Load a sweep directory's results into one pandas DataFrame.

    Args:
        directory: the ``--out`` directory of ``ccfair sweep``.
        table: ``"runs"`` (one row per run: run_id, the swept parameters,
            repetition, order, seed, summary metrics), ``"flows"`` (one row
            per flow per run), ``"links"`` (one row per link per run:
            :data:`LINK_TABLE_COLUMNS`), or a per-run series table (``"throughput"``,
            ``"link"``, ``"queue"``, ``"sojourn"``, ``"trace"``) concatenated
            over runs with a leading ``run_id`` column.
        run_ids: restrict a series table to these runs (default: all).

    The runs, flows and links tables come from ``runs.parquet``/``flows.parquet``/
    ``links.parquet`` when those are up to date, else they are rebuilt from the run
    directories (nothing is written).
    """
    import pandas as pd

    d = Path(directory)
    if not (d / RUNS_DIR).is_dir() and not (d / BATCHES_DIR).is_dir() and not (d / SWEEP_JSON).exists():
        raise FileNotFoundError(f"{d}: not a sweep directory (no {SWEEP_JSON}, {BATCHES_DIR}/ or {RUNS_DIR}/)")
    if table in ROW_TABLES:
        cached = d / f"{table}.parquet"
        done = finished_runs(d)
        if cached.exists():
            df = pd.read_parquet(cached)
            if set(df["run_id"]) == done if len(df) else not done:
                return df
        return _frames(d)[table]
    if table not in SERIES_TABLES:
        raise ValueError(f"unknown table {table!r}; allowed: {', '.join(ROW_TABLES)}, {', '.join(SERIES_TABLES)}")
    ids = run_ids if run_ids is not None else _ordered_ids(d)
    where = _locations(d)
    by_batch: dict[Path, dict[str, pd.DataFrame]] = {}
    parts = []
    for rid in ids:
        loc = where.get(rid)
        if loc is not None and loc.parent.name == BATCHES_DIR:
            if loc not in by_batch:
                by_batch[loc] = _batch_table(loc, table)
            df = by_batch[loc].get(rid)
        else:
            path = d / RUNS_DIR / rid / f"{table}.parquet"
            df = None
            if path.exists():
                df = pd.read_parquet(path)
                df.insert(0, "run_id", rid)
            elif loc is None:
                raise FileNotFoundError(f"{path}: run {rid} is not stored")
        if df is None:
            if table == "trace":
                continue
            raise FileNotFoundError(f"{d}: run {rid} has no {table} table")
        parts.append(df)
    if not parts:
        return pd.DataFrame({"run_id": pd.Series([], dtype=object)})
    return pd.concat(parts, ignore_index=True)


def _batch_table(batch: Path, table: str) -> dict[str, pd.DataFrame]:
    """One table of a batch split by run id (runs lacking the table are absent)."""
    import pandas as pd

    path = batch / f"{table}.parquet"
    if not path.exists():
        return {}
    df = pd.read_parquet(path)
    return {str(rid): sub.reset_index(drop=True) for rid, sub in df.groupby("run_id", sort=False)}


def load_run(directory: str | Path, run_id: str) -> Result:
    """One stored run of a sweep as a :class:`~ccfair.result.Result`."""
    import pyarrow.parquet as pq

    from ccfair.result import Result, with_nullable_ints
    from ccfair.spec import Spec

    d = Path(directory)
    loc = _locations(d).get(run_id)
    if loc is None:
        raise FileNotFoundError(f"{d}: run {run_id} is not stored")
    if loc.parent.name == RUNS_DIR:
        return Result.load(loc)
    run = _jsonl(loc / "runs.jsonl")[run_id]
    tables: dict[str, Any] = {}
    for name in BATCH_TABLES:
        if name in run["tables"]:
            t = pq.read_table(loc / f"{name}.parquet", filters=[("run_id", "==", run_id)])
            tables[name] = with_nullable_ints(name, t.drop_columns(["run_id"]).to_pandas())
        else:
            tables[name] = None
    spec = Spec.from_dict(run["spec"])
    return Result(spec, run["run_config"], summary=run["summary"], **tables)
