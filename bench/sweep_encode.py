"""Benchmark: a sweep worker's cost per run besides the simulation, by batch size, and of storing a batch.

    python3 bench/sweep_encode.py [--file examples/s0-lab-grid.toml]

In this process (one warm worker, CPU time):

- ``execute_batch`` on 64 runs of the grid (the second repetition, after the first
  has warmed the spec cache and the imports) in batches of 1, 4, 32 and 64 runs:
  CPU time of the task minus the simulator's, per run. The difference between
  batch sizes is the fixed cost of a task;
- ``store.encode_batch`` alone on 32 results: best of 5, per run;
- ``Result.from_raw`` + ``store.encode_batch`` on 128 runs of the grid (every second run
  of the first repetition: all rates, buffers, qdiscs and pairs) in batches of 64, the
  worker's whole per-run path besides the simulation and the spec: best of 5, per run.

``--stages``: instead, the per-run path stage by stage (from_raw, table_columns, rows and
runs JSON, then per table: joining the runs' columns and Parquet encoding), best of 7,
and each Parquet column's encoding time and size with dictionary encoding and with the
alternatives that suit its type (what store._COLUMN_ENCODINGS was chosen from).

Run it with ``PYTHONPATH=OLD/python`` to measure another checkout's Python with
the same simulator extension. Figures go into docs/benchmarks.md by hand.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ccfair import store
from ccfair.api import simulate
from ccfair.executors import _spec, execute_batch
from ccfair.result import Result
from ccfair.sweep import load_sweep_file

ROOT = Path(__file__).resolve().parent.parent


def _raw(config: dict, spec: object) -> dict:
    try:
        return simulate(config, spec, arrays=True)  # type: ignore[arg-type, call-arg]
    except TypeError:  # an older checkout: lists only
        return simulate(config, spec)  # type: ignore[arg-type]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", default=str(ROOT / "examples" / "s0-lab-grid.toml"))
    ap.add_argument("--stages", action="store_true", help="the per-run path stage by stage, and per Parquet column")
    args = ap.parse_args()
    if args.stages:
        _stages(Path(args.file))
        return
    plan = load_sweep_file(Path(args.file), ["sweep.repetitions=2"])
    payloads = [t.payload() for t in plan.tasks]
    half = len(payloads) // 2
    execute_batch(payloads[:half])  # warm: every experiment validated, every import done
    runs = payloads[half : half + 64]
    for size in (1, 4, 32, 64):
        over = 0.0
        for i in range(0, len(runs), size):
            t0 = time.thread_time()
            out = execute_batch(runs[i : i + size])
            over += time.thread_time() - t0 - out["sim_cpu_s"]
        print(f"execute_batch, batches of {size:2d}: {over / len(runs) * 1e3:.2f} ms per run besides the simulation")
    items = []
    for p in runs[:32]:
        spec = _spec(p["experiment"])
        items.append((p["run_id"], p["meta"], Result.from_raw(spec, p["config"], _raw(p["config"], spec))))
    best = float("inf")
    for _ in range(5):
        t0 = time.thread_time()
        store.encode_batch(items)
        best = min(best, time.thread_time() - t0)
    print(f"encode_batch of 32 runs: {best / len(items) * 1e3:.2f} ms per run (best of 5)")
    _worker_path(payloads[:half:2][:128])


def _worker_path(runs: list[dict]) -> None:
    raws = []
    for p in runs:
        spec = _spec(p["experiment"])
        raws.append((p, spec, _raw(p["config"], spec)))
    best_raw = best_enc = float("inf")
    for _ in range(6):  # the first round warms up
        t0 = time.thread_time()
        done = [(p["run_id"], p["meta"], Result.from_raw(spec, p["config"], raw)) for p, spec, raw in raws]
        t1 = time.thread_time()
        for i in range(0, len(done), 64):
            store.encode_batch(done[i : i + 64])
        t2 = time.thread_time()
        best_raw, best_enc = min(best_raw, t1 - t0), min(best_enc, t2 - t1)
    n = len(raws) / 1e3
    print(
        f"from_raw + encode_batch, {len(raws)} runs in batches of 64: {best_raw / n:.3f} + {best_enc / n:.3f} = "
        f"{(best_raw + best_enc) / n:.3f} ms per run (best of 5)"
    )


def _stages(path: Path) -> None:
    import io
    import json
    from collections import defaultdict

    import pyarrow as pa
    import pyarrow.parquet as pq

    plan = load_sweep_file(path, ["sweep.repetitions=1"])
    runs = [t.payload() for t in plan.tasks][::2][:128]
    raws = []
    for p in runs:
        spec = _spec(p["experiment"])
        raws.append((p, spec, _raw(p["config"], spec)))
    tt = time.thread_time
    tables: dict[str, object] = {}

    def rnd() -> dict[str, float]:
        t: dict[str, float] = defaultdict(float)
        c = tt()
        done = [(p["run_id"], p["meta"], Result.from_raw(spec, p["config"], raw)) for p, spec, raw in raws]
        t["from_raw"] = tt() - c
        for i in range(0, len(done), 64):
            items = done[i : i + 64]
            c = tt()
            cols = [r.table_columns() for _, _, r in items]
            t["table_columns"] += tt() - c
            c = tt()
            for rid, meta, r in items:
                json.dumps(store.make_row(rid, meta, r), allow_nan=False)
                json.dumps(r.summary, allow_nan=False), json.dumps(r.config, allow_nan=False)
            t["rows and runs JSON"] += tt() - c
            parts: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
            for (rid, _, _), c_ in zip(items, cols):
                for name, columns in c_.items():
                    if columns is not None:
                        parts[name][0].append(rid)
                        parts[name][1].append(columns)
            for name, (ids, cs) in parts.items():
                c = tt()
                tables[name] = store._joined_table(ids, cs)
                t[f"join {name}"] += tt() - c
                c = tt()
                store._parquet_bytes(name, tables[name])
                t[f"parquet {name}"] += tt() - c
        return t

    rnd()
    rounds = [rnd() for _ in range(7)]
    total = 0.0
    for k in rounds[0]:
        v = min(r[k] for r in rounds) / len(raws) * 1e3
        total += v
        print(f"{k:20s} {v:.3f} ms/run")
    print(f"{'sum':20s} {total:.3f} ms/run (best of 7 each, {len(raws)} runs in batches of 64)")
    print("per Parquet column of the last batch (ms/run, KB/run), zstd 1:")
    n = 64
    for name, table in tables.items():
        for f in table.schema:  # type: ignore[attr-defined]
            col = table.select([f.name])  # type: ignore[attr-defined]
            encs = ["dictionary", "PLAIN"]
            if pa.types.is_floating(f.type):
                encs.append("BYTE_STREAM_SPLIT")
            elif pa.types.is_integer(f.type):
                encs.append("DELTA_BINARY_PACKED")
            out = []
            for e in encs:
                kw = {} if e == "dictionary" else {"use_dictionary": False, "column_encoding": {f.name: e}}
                best, size = float("inf"), 0
                for _ in range(5):
                    sink = io.BytesIO()
                    c = tt()
                    pq.write_table(col, sink, compression="zstd", compression_level=1, write_statistics=False, **kw)
                    best, size = min(best, tt() - c), len(sink.getvalue())
                out.append(f"{e} {best / n * 1e3:.3f}/{size / n / 1024:.2f}")
            print(f"  {name}.{f.name}: " + "  ".join(out))


if __name__ == "__main__":
    main()
