"""TCP-LP per ACK on both backends for one fidelity point and seed (docs/linux-ports.md "TCP-LP").

    python bench/lp_bpf/trace.py --point "lp/cubic 10M 50ms 1bdp" --seed 3 --out DIR      # root: testbed, then simulator
    python bench/lp_bpf/trace.py --point "lp/cubic 10M 50ms 1bdp" --record DIR/kernel_run.json --out DIR  # simulator only
    python bench/lp_bpf/trace.py --summary DIR                                            # both traces' summaries
    python bench/lp_bpf/trace.py --export FILE.jsonl.gz DIR ...     # keep traced kernel runs (per-ACK fields of LP)
    python bench/lp_bpf/trace.py --point "lp/cubic 10M 50ms 1bdp" --stats FILE.jsonl.gz [--seeds 10]  # escapes, both backends
    python bench/lp_bpf/trace.py --point "lp/cubic 10M 50ms 1bdp" --record DIR/kernel_run.json --sim-seeds 20 --out D2
        # the simulator on seeds 1..20 with that run's flow starts, clocks drawn from the seed: per seed
        # B's share, remote_hz's first sample, its crossings above 1000 before B starts and escaped time;
        # LP_WHATIF_FIRST_RHZ=1000 in the environment replaces the first remote_hz sample (lp-trace builds only)

The testbed side builds ccfair's LP port with -DLP_TRACE into a private BPF cache
(CCFAIR_BPF_CACHE under DIR: the port's source and the shared cache are untouched, so stored
fidelity runs keep their port digest), runs the point once (ccfair.fidelity.collect.run_one: the
record as `ccfair fidelity collect` stores it, DIR/kernel_run.json) while reading
/sys/kernel/tracing/trace_pipe (DIR/kernel_trace.txt). The simulator side runs the same seed
with the kernel run's measured flow starts and timestamp clock (as `ccfair fidelity` does) in
`ccfair-bench json`, built with the feature lp-trace (cc/lp.rs prints the port's fields per
ACK to stderr; DIR/sim_trace.txt). Per ACK on both sides: now, cwnd, flag, TSval, TSecr,
remote_hz, sowd, owd_min, owd_max, inference, rtt_us.

The summary, per side: LP's share, ACKs (with an RTT sample), indications (halvings, cwnd set
to 1), time escaped (remote_hz above TCP_TS_HZ = 1000, the owd scale LP_RESOL / remote_hz 0)
and its episodes, remote_hz samples (1000 x dTSval / dTSecr of consecutive ACKs whose two
clocks moved) escaped and not, and the (dTSval, dTSecr) pairs behind them.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIELDS = ("now", "cwnd", "flag", "tsval", "tsecr", "rhz", "sowd", "owd_min", "owd_max", "inference", "rtt_us")
#: The fields --export keeps.
KEPT = ("now", "cwnd", "flag", "tsval", "tsecr", "rhz", "rtt_us")
TS_HZ = 1000
LP_WITHIN_THR = 1 << 3
LP_WITHIN_INF = 1 << 4


def read_pipe(out: Path, stop: threading.Event) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common import read_trace_pipe

    read_trace_pipe(out, stop, "bpf_trace_printk: lp")


def kernel_acks(path: Path) -> dict[int, list[dict]]:
    """Per local port, the port's per-ACK records (lines lp .. lp4 of one pkts_acked call)."""
    flows: dict[int, list[dict]] = collections.defaultdict(list)
    cur: dict = {}
    for line in path.open():
        f = line.split()
        i = f.index("bpf_trace_printk:")
        tag, v = f[i + 1], [int(x) for x in f[i + 2 : i + 5]]
        if tag == "lp":
            cur = dict(zip(("now", "cwnd", "flag"), v))
        elif tag == "lp2":
            cur.update(zip(("tsval", "tsecr", "rhz"), v))
        elif tag == "lp3":
            cur.update(zip(("sowd", "owd_min", "owd_max"), v))
        elif tag == "lp4" and "sowd" in cur and "now" in cur:
            cur.update(port=v[0], inference=v[1], rtt_us=v[2] if v[2] < 2**31 else v[2] - 2**32)
            flows[v[0]].append(cur)
            cur = {}
    return flows


def sim_acks(path: Path) -> dict[str, list[dict]]:
    """Per LP instance, cc/lp.rs's per-ACK records (feature lp-trace)."""
    flows: dict[str, list[dict]] = collections.defaultdict(list)
    for line in path.open():
        f = line.split()
        if len(f) != 14 or f[0] != "lp":
            continue
        r = dict(zip(FIELDS, (int(x) for x in f[3:])))
        r["now_ns"] = int(f[2])
        flows[f[1]].append(r)
    return flows


def run_sim(point, rec: dict, out: Path) -> None:  # type: ignore[no-untyped-def]
    from common import kernel_run_config, run_traced_bench

    run_traced_bench("lp-trace", kernel_run_config(point, rec), out)


def sim_share_b(point, out: Path) -> float:  # type: ignore[no-untyped-def]
    from ccfair.fidelity.points import group_shares
    from ccfair.result import Result

    spec = point.spec()
    config = json.loads((out / "sim_config.json").read_text())
    raw = json.loads((out / "sim_result.json").read_text())
    return group_shares(spec, Result.from_raw(spec, config, raw).summary)[1]


def episodes(acks: list[dict]) -> list[tuple[int, int]]:
    """(start, end) ms of each stretch with remote_hz above TCP_TS_HZ."""
    eps, start = [], None
    for r in acks:
        if r["rhz"] > TS_HZ and start is None:
            start = r["now"]
        elif r["rhz"] <= TS_HZ and start is not None:
            eps.append((start, r["now"]))
            start = None
    if start is not None:
        eps.append((start, acks[-1]["now"]))
    return eps


def describe(label: str, acks: list[dict], t0: int) -> None:
    """One flow's trace: indications, escapes, remote_hz samples and their (dTSval, dTSecr) pairs."""
    n = len(acks)
    ind = [r for r in acks if not r["flag"] & LP_WITHIN_THR]
    to_one = sum(1 for r in ind if r["flag"] & LP_WITHIN_INF)
    eps = episodes(acks)
    esc = sum(e - s for s, e in eps) / 1000
    print(
        f"{label}: {n} ACKs ({sum(r['rtt_us'] > 0 for r in acks)} with an RTT sample), {len(ind)} indications "
        f"({to_one} to cwnd 1), escaped {esc:.1f} s in {len(eps)} episodes"
        + (
            "; longest "
            + ", ".join(f"{(s - t0) / 1000:.1f}-{(e - t0) / 1000:.1f} s" for s, e in sorted(eps, key=lambda x: x[0] - x[1])[:4])
            if eps
            else ""
        )
    )
    # The samples the estimator took: consecutive ACKs (the reference is every ACK's) whose two clocks moved.
    samples = {True: [], False: []}
    pairs = {True: collections.Counter(), False: collections.Counter()}
    same = 0
    for prev, r in zip(acks, acks[1:]):
        dv, de = (r["tsval"] - prev["tsval"]) % 2**32, (r["tsecr"] - prev["tsecr"]) % 2**32
        if r["rtt_us"] <= 0:
            continue
        if dv == 0 or de == 0:
            same += 1
            continue
        escaped = prev["rhz"] > TS_HZ
        samples[escaped].append(TS_HZ * dv // de)
        pairs[escaped][(dv, de)] += 1
    for escaped in (False, True):
        s = samples[escaped]
        if not s:
            continue
        m = sum(s) / len(s)
        big = sum(x > 2 * TS_HZ for x in s) / len(s)
        print(
            f"  {'escaped' if escaped else 'not escaped'}: {len(s)} samples, mean {m:.0f}, above 2000 {big:.1%}; "
            f"pairs (dTSval, dTSecr ms): " + ", ".join(f"{k}: {v}" for k, v in pairs[escaped].most_common(8))
        )
    print(f"  pairs with a clock unchanged (no sample): {same}")
    cw = collections.Counter(r["cwnd"] for r in acks)
    print("  cwnd (value: ACKs): " + ", ".join(f"{k}: {v}" for k, v in cw.most_common(8)))


def sim_seeds(point, rec: dict, seeds: int, out: Path) -> None:  # type: ignore[no-untyped-def]
    """The simulator alone on seeds 1..``seeds`` with ``rec``'s flow starts and a drawn clock."""
    shares = []
    for seed in range(1, seeds + 1):
        d = out / f"s{seed}"
        d.mkdir(parents=True, exist_ok=True)
        run_sim(point, dict(rec, seed=seed, ts_epoch_ns=None), d)
        acks = next(iter(sim_acks(d / "sim_trace.txt").values()))
        t0 = acks[0]["now"] - acks[0]["now_ns"] // 1_000_000
        b_ms = rec["flow_start_s"][1] * 1000
        first = next(r["rhz"] for r in acks if r["rhz"])
        early = sum(1 for p, r in zip(acks, acks[1:]) if r["rhz"] > TS_HZ >= p["rhz"] and r["now"] - t0 < b_ms)
        esc = sum(min(e, t0 + 45_000) - max(s, t0 + b_ms) for s, e in episodes(acks) if e > t0 + b_ms) / 1000
        shares.append(sim_share_b(point, d))
        print(f"seed {seed}: B share {shares[-1]:.3f}, first remote_hz {first}, crossings before B {early}, escaped after B {esc:.1f} s")
    print(f"mean B share {sum(shares) / len(shares):.3f} over {len(shares)} seeds")


def run_stats(acks: list[dict], t0: int, b_ms: float) -> dict:
    """One LP flow's escapes: remote_hz's first sample and the TSecrs its initial window's ACKs echo,
    crossings above TCP_TS_HZ before B starts, onsets after (from a stretch not escaped for 1 s)
    with the (dTSval, dTSecr) pair that caused each, and time escaped / not escaped after B."""
    first = next((r["rhz"] for r in acks if r["rhz"]), 0)
    iw = sorted({r["tsecr"] - t0 for r in acks if 0 < r["tsecr"] - t0 < 200})
    before = sum(1 for p, r in zip(acks, acks[1:]) if r["rhz"] > TS_HZ >= p["rhz"] and r["now"] - t0 < b_ms)
    onsets, esc, not_esc, calm_since = [], 0.0, 0.0, None
    for p, r in zip(acks, acks[1:]):
        t = r["now"] - t0
        if t < b_ms:
            continue
        dt = (r["now"] - p["now"]) / 1000
        if p["rhz"] > TS_HZ:
            esc += dt
            calm_since = None
        else:
            not_esc += dt
            calm_since = p["now"] if calm_since is None else calm_since
        if r["rhz"] > TS_HZ >= p["rhz"] and calm_since is not None and r["now"] - calm_since >= 1000:
            onsets.append((round(t / 1000, 1), (r["tsval"] - p["tsval"]) % 2**32, (r["tsecr"] - p["tsecr"]) % 2**32))
    # Escapes that end after B's start: remote_hz back at 1000 or below for at least 1 s.
    last = acks[-1]["now"]
    downs = [r["now"] for p, r in zip(acks, acks[1:]) if p["rhz"] > TS_HZ >= r["rhz"] and r["now"] - t0 > b_ms]
    ends = sum(1 for t in downs if t + 1000 <= last and not any(t < r["now"] <= t + 1000 and r["rhz"] > TS_HZ for r in acks))
    return {
        "first_rhz": first,
        "iw_tsecr_ms": iw[:3],
        "crossings_before_b": before,
        "onsets": onsets,
        "ends": ends,
        "escaped_s": round(esc, 1),
        "not_escaped_s": round(not_esc, 1),
    }


def export(path: Path, dirs: list[Path]) -> None:
    """The kernel runs of trace directories, their LP flow's per-ACK fields, one JSON line each (gzip)."""
    import gzip

    with gzip.open(path, "wt") as f:
        for d in dirs:
            rec = json.loads((d / "kernel_run.json").read_text())
            acks = max(kernel_acks(d / "kernel_trace.txt").values(), key=len)
            # The fields the statistics read; the clocks as differences (ms; the first one absolute).
            cols = {k: [r[k] for r in acks] for k in KEPT}
            for k in ("now", "tsval", "tsecr"):
                cols[k] = cols[k][:1] + [(b - a) % 2**32 for a, b in zip(cols[k], cols[k][1:])]
            f.write(
                json.dumps(
                    {k: rec[k] for k in ("set", "point", "seed", "started_utc", "kernel", "flow_start_s", "ts_epoch_ns", "summary")}
                    | {"lp_acks": cols}
                )
                + "\n"
            )


def stats(point, path: Path, seeds: int = 1) -> None:  # type: ignore[no-untyped-def]
    """Escape statistics of stored kernel traces (``export``) and of the simulator on their flow
    starts and clocks (the lp-trace build): the run's seed, and with ``seeds`` > 1 also seed + 1000 j."""
    import gzip
    import tempfile

    from ccfair.fidelity.points import group_shares

    spec = point.spec()
    tot = {"kernel": collections.Counter(), "simulator": collections.Counter()}
    for line in gzip.open(path, "rt"):
        rec = json.loads(line)
        b_ms = rec["flow_start_s"][1] * 1000
        cols = rec["lp_acks"]
        for k in ("now", "tsval", "tsecr"):
            cols[k] = list(itertools.accumulate(cols[k], lambda a, b: (a + b) % 2**32))
        k_acks = [dict(zip(KEPT, v)) for v in zip(*(cols[k] for k in KEPT))]
        sides = [("kernel", k_acks, rec["ts_epoch_ns"] // 1_000_000, group_shares(spec, rec["summary"])[1])]
        for j in range(seeds):
            with tempfile.TemporaryDirectory() as tmp:
                run_sim(point, dict(rec, seed=rec["seed"] + 1000 * j), Path(tmp))
                s_acks = next(iter(sim_acks(Path(tmp) / "sim_trace.txt").values()))
                sides.append(("simulator", s_acks, s_acks[0]["now"] - s_acks[0]["now_ns"] // 1_000_000, sim_share_b(point, Path(tmp))))
        for side, acks, t0, share in sides:
            st = run_stats(acks, t0, b_ms)
            print(f"seed {rec['seed']} {side}: B share {share:.3f}, " + ", ".join(f"{k} {v}" for k, v in st.items()))
            c = tot[side]
            c["runs"] += 1
            c["share_b_milli"] += round(1000 * share)
            c["first_rhz_1000"] += st["first_rhz"] >= TS_HZ
            c["escaped_before_b"] += st["crossings_before_b"] > 0
            c["onsets"] += len(st["onsets"])
            c["ends"] += st["ends"]
            c["escaped_ds"] += round(10 * st["escaped_s"])
            c["not_escaped_ds"] += round(10 * st["not_escaped_s"])
    for side, c in tot.items():
        print(
            f"{side}: {c['runs']} runs, B share {c['share_b_milli'] / 1000 / c['runs']:.3f}; first remote_hz sample 1000 in "
            f"{c['first_rhz_1000']}, escaped before B in {c['escaped_before_b']}; after B escaped {c['escaped_ds'] / 10:.0f} s, "
            f"not {c['not_escaped_ds'] / 10:.0f} s, onsets {c['onsets']} ({c['onsets'] / max(c['not_escaped_ds'] / 10, 1e-9):.3f} per s not escaped), "
            f"ends {c['ends']} ({c['ends'] / max(c['escaped_ds'] / 10, 1e-9):.3f} per s escaped)"
        )


def summary(out: Path, point=None) -> None:  # type: ignore[no-untyped-def]
    rec = json.loads((out / "kernel_run.json").read_text()) if (out / "kernel_run.json").exists() else None
    if rec is not None:
        from ccfair.fidelity.points import group_shares

        spec = point.spec() if point is not None else None
        kb = group_shares(spec, rec["summary"])[1] if spec is not None else float("nan")
        print(f"seed {rec['seed']}, flow starts {rec['flow_start_s']}, ts_epoch_ns {rec.get('ts_epoch_ns')}; kernel B share {kb:.3f}")
    if (out / "kernel_trace.txt").exists():
        k = kernel_acks(out / "kernel_trace.txt")
        epoch = rec.get("ts_epoch_ns") if rec else None
        t0 = epoch // 1_000_000 if epoch else min(a[0]["now"] for a in k.values())
        for port, acks in sorted(k.items(), key=lambda kv: kv[1][0]["now"]):
            describe(f"kernel LP port {port}", acks, t0)
    if (out / "sim_trace.txt").exists():
        if point is not None and (out / "sim_result.json").exists():
            print(f"simulator B share {sim_share_b(point, out):.3f}")
        s = sim_acks(out / "sim_trace.txt")
        t0 = min(a[0]["now"] - a[0]["now_ns"] // 1_000_000 for a in s.values())
        for i, (_, acks) in enumerate(sorted(s.items(), key=lambda kv: kv[1][0]["now_ns"])):
            describe(f"simulator LP {i}", acks, t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from common import add_point_args, build_traced_port

    add_point_args(ap, "kernel-ccas-loss", "lp-trace")
    ap.add_argument("--record", help="a kernel run's record (JSON): the simulator side only")
    ap.add_argument("--summary", help="a directory of traces")
    ap.add_argument("--sim-seeds", type=int, help="with --record: the simulator alone on seeds 1..N")
    ap.add_argument("--export", nargs="+", metavar=("FILE", "DIR"), help="store the kernel runs of trace directories in FILE (jsonl.gz)")
    ap.add_argument("--stats", help="escape statistics of FILE (--export) on both backends")
    ap.add_argument("--seeds", type=int, default=1, help="with --stats: simulator seeds per kernel run")
    args = ap.parse_args()
    from ccfair.fidelity.points import load_set

    ps = load_set(args.set_name, Path(args.data))
    point = next((p for p in ps.points if p.id == args.point), None) if args.point else None
    if args.summary:
        summary(Path(args.summary), point)
        return
    if args.export:
        export(Path(args.export[0]), [Path(d) for d in args.export[1:]])
        return
    if args.stats:
        stats(point, Path(args.stats), args.seeds)
        return
    if point is None:
        ap.error("--point (an id of the set) or --summary is required")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.record and args.sim_seeds:
        sim_seeds(point, json.loads(Path(args.record).read_text()), args.sim_seeds, out)
        return
    if args.record:
        rec = json.loads(Path(args.record).read_text())
        (out / "kernel_run.json").write_text(json.dumps(rec))
    else:
        from ccfair.fidelity.collect import run_one

        build_traced_port("lp", (out / "bpf-cache").resolve(), ("-DLP_TRACE",))
        stop = threading.Event()
        reader = threading.Thread(target=read_pipe, args=(out / "kernel_trace.txt", stop), daemon=True)
        reader.start()
        rec = run_one(point, args.seed)
        stop.set()
        (out / "kernel_run.json").write_text(json.dumps(rec))
    run_sim(point, rec, out)
    summary(out, point)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
