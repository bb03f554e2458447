"""Run one experiment description on real Linux TCP (``ccfair run --backend testbed``).

Steps (see docs/testbed.md):

1. check root, the kernel's CCAs and the bottleneck binary; clean leftovers of
   dead runs (:func:`ccfair.testbed.netns.clean_stale`);
2. build the namespaces (:class:`~ccfair.testbed.netns.Topology`), per-flow
   route metrics (initcwnd, initrwnd, quickack) and sysctls (ECN);
3. RTT equalization as in S0: with the bottleneck adding no delay, probe each
   sender's base RTT (TCP connect to a closed port: SYN -> RST) and pad the
   difference to the flow's configured RTT, half forward and half reverse;
4. start the receiver, the bottleneck and one sender per flow against a
   common time zero ``t0`` (CLOCK_MONOTONIC, shared by all namespaces);
5. collect the receiver's delivered bytes per bin, the senders' TCP_INFO
   samples and the bottleneck's link/queue statistics into the same raw dict
   ``ccfair._core.simulate`` returns, and build a :class:`~ccfair.result.Result`.

With ``[testbed] bottleneck = "kernel"`` (:mod:`ccfair.testbed.tc`) the
queue and the rate are Linux's tbf + child qdisc on the bottleneck's
receiver-facing port (probed in a throw-away namespace before step 2,
configured after it), ccfair-bottleneck only adds the delays, and
:mod:`ccfair.testbed.qstats` samples the kernel qdisc's queue and sent bytes.

Everything is removed on success, on error, on Ctrl-C and SIGTERM.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ccfair import profiles
from ccfair.errors import SimulationError, SpecError
from ccfair.spec import Spec
from ccfair.testbed import netns, tc

__all__ = ["TestbedError", "TestbedUnavailable", "run", "kernel_ccas", "find_bottleneck", "check_available"]

#: First TCP port of the receiver; flow i listens on BASE_PORT + i. Probes use CLOSED_PORT.
BASE_PORT = 5201
CLOSED_PORT = 9
#: Time between starting the agents and the experiment's time zero.
SETUP_MARGIN_NS = 1_500_000_000
#: Probes per path for the base RTT (the minimum is used).
PROBES_PER_PATH = 10
#: Simulator CCA names whose Linux module has another name.
KERNEL_NAMES = {"reno": "reno", "cubic": "cubic", "bbr": "bbr"}
AGENT = Path(__file__).with_name("agent.py")
QSTATS = Path(__file__).with_name("qstats.py")
_NS_PER_S = 1_000_000_000


class TestbedError(SimulationError):
    """The testbed failed while running (a command, an agent or the bottleneck)."""


class TestbedUnavailable(SpecError):
    """The testbed cannot run here (no root, missing kernel CCA, bottleneck not built)."""

    def __init__(self, message: str, field: str = "backend") -> None:
        super().__init__(field, message)


def kernel_ccas() -> list[str]:
    """CCAs the running kernel offers (net.ipv4.tcp_available_congestion_control)."""
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


def find_bottleneck() -> Path | None:
    """The ccfair-bottleneck binary: $CCFAIR_BOTTLENECK, PATH, or the repository's cargo target dir."""
    env = os.environ.get("CCFAIR_BOTTLENECK")
    if env:
        return Path(env) if Path(env).is_file() else None
    found = shutil.which("ccfair-bottleneck")
    if found:
        return Path(found)
    repo = Path(__file__).resolve().parents[3]
    target = Path(os.environ.get("CARGO_TARGET_DIR", repo / "target"))
    for profile in ("release", "debug"):
        p = target / profile / "ccfair-bottleneck"
        if p.is_file():
            return p
    return None


def check_available(spec: Spec | None = None) -> Path:
    """Raise :class:`TestbedUnavailable` naming what is missing; return the bottleneck binary."""
    if os.geteuid() != 0:
        raise TestbedUnavailable(
            "the testbed needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create network namespaces; "
            "run it as root, e.g. `sudo ccfair run FILE --backend testbed`"
        )
    if shutil.which("ip") is None:
        raise TestbedUnavailable("the testbed needs iproute2's `ip` command (apt-get install iproute2)")
    binary = find_bottleneck()
    if binary is None:
        raise TestbedUnavailable(
            "the userspace bottleneck is not built; run `cargo build --release -p ccfair-bottleneck` "
            "in the repository or set CCFAIR_BOTTLENECK to its path"
        )
    if spec is not None and spec.testbed.bottleneck == "kernel":
        # Fails with a SpecError naming bottleneck.qdisc before anything is created.
        config = spec.to_run_config()
        tc.probe(tc.commands("p0", config, spec.packet_wire_bytes), config["bottleneck"]["qdisc"]["kind"])
    if spec is not None:
        offered = kernel_ccas()
        for i, (_, _, f) in enumerate(spec.expand_flows()):
            name = KERNEL_NAMES.get(f.cca, f.cca)
            if name not in offered and shutil.which("modprobe"):
                subprocess.run(["modprobe", f"tcp_{name}"], capture_output=True)
                offered = kernel_ccas()
            if name not in offered:
                group = spec.expand_flows()[i][0]
                raise TestbedUnavailable(
                    f"the kernel does not offer CCA {name!r}; it offers: {', '.join(offered) or 'none'}",
                    field=f"flows.{group}.cca",
                )
    return binary


def _now() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """Turn SIGTERM/SIGHUP into KeyboardInterrupt for the duration, so `finally` cleans up."""

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    old = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            old[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread
            pass
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


class _Run:
    def __init__(self, spec: Spec, config: dict[str, Any], binary: Path, realtime: bool) -> None:
        self.spec = spec
        self.config = config
        self.binary = binary
        self.realtime = realtime
        self.flows = config["flows"]
        self.topo = netns.Topology(len(self.flows))
        self.procs: list[tuple[str, subprocess.Popen[str]]] = []
        self.kernel = spec.testbed.bottleneck == "kernel"
        #: tc commands of the kernel bottleneck (empty for the userspace one); `probe` fills `kernel_info`.
        self.tc_cmds = tc.commands(self.topo.if_btl_rcv, config, spec.packet_wire_bytes) if self.kernel else []
        self.kernel_info: dict[str, Any] = {}

    # ------------------------------------------------------------ processes

    def spawn(self, label: str, ns: str, argv: list[str], stdout_pipe: bool = False) -> subprocess.Popen[str]:
        err = open(self.topo.dir / f"{label}.stderr", "w")
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, *argv],
            stdout=subprocess.PIPE if stdout_pipe else subprocess.DEVNULL,
            stderr=err,
            text=True,
        )
        err.close()
        self.procs.append((label, p))
        self.topo.record_process(p.pid)
        return p

    def stderr_of(self, label: str) -> str:
        try:
            text = (self.topo.dir / f"{label}.stderr").read_text().strip()
        except OSError:
            return ""
        return text.splitlines()[-1] if text else ""

    def wait_ready(self, label: str, p: subprocess.Popen[str], timeout_s: float = 10.0) -> None:
        assert p.stdout is not None
        r, _, _ = select.select([p.stdout], [], [], timeout_s)
        line = p.stdout.readline().strip() if r else ""
        if line != "ready":
            raise TestbedError(f"{label} did not start: {self.stderr_of(label) or 'no output'}")

    def agent(self, mode: str, *args: str) -> list[str]:
        return [sys.executable, str(AGENT), mode, *args]

    def start_bottleneck(self, label: str, fwd: list[int], rev: list[int], t0: int, duration: int) -> subprocess.Popen[str]:
        c = self.config
        cfg = {
            "sender_ifaces": self.topo.if_btl,
            "receiver_iface": self.topo.if_btl_rcv,
            "rate_bps": c["bottleneck"]["rate_bps"],
            "qdisc": c["bottleneck"]["qdisc"],
            "seed": c["seed"],
            "fwd_delay_ns": fwd,
            "rev_delay_ns": rev,
            "burst_bytes": self.spec.packet_wire_bytes,
            "t0_ns": t0,
            "duration_ns": duration,
            "bin_ns": c["bin_ns"],
            "sample_ns": c["sample_ns"],
            "sojourn_bin_ns": c["sojourn_bin_ns"],
            "window_start_ns": c["window_start_ns"],
            "window_end_ns": c["window_end_ns"],
            "stats_path": str(self.topo.dir / f"{label}.json"),
            "realtime": self.realtime,
            "kernel_qdisc": self.kernel,
        }
        path = self.topo.dir / f"{label}.config.json"
        path.write_text(json.dumps(cfg))
        p = self.spawn(label, self.topo.ns_btl, [str(self.binary), str(path)], stdout_pipe=True)
        self.wait_ready(label, p)
        return p

    def stop(self, label: str, p: subprocess.Popen[str], timeout_s: float = 10.0) -> None:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            p.kill()
            raise TestbedError(f"{label} did not stop on SIGTERM") from None
        if p.returncode != 0:
            raise TestbedError(f"{label} failed (exit {p.returncode}): {self.stderr_of(label)}")

    # ------------------------------------------------------------ the run

    def probe_base_rtts(self) -> list[int]:
        n = len(self.flows)
        btl = self.start_bottleneck("probe-bottleneck", [0] * n, [0] * n, _now(), _NS_PER_S)
        probes = [
            self.spawn(
                f"probe{i}",
                self.topo.ns_snd[i],
                self.agent("probe", "--dst", netns.RECEIVER_IP, "--port", str(CLOSED_PORT), "--count", str(PROBES_PER_PATH)),
                stdout_pipe=True,
            )
            for i in range(n)
        ]
        bases = []
        for i, p in enumerate(probes):
            out, _ = p.communicate(timeout=30)
            if p.returncode != 0 or not out.strip():
                raise TestbedError(f"RTT probe of flow {self.flows[i]['name']} failed: {self.stderr_of(f'probe{i}')}")
            bases.append(int(out.split()[0]))
        self.stop("probe-bottleneck", btl)
        return bases

    def execute(self) -> dict[str, Any]:
        c = self.config
        topo = self.topo
        duration = c["duration_ns"]
        bin_ns = c["bin_ns"]
        n_bins = -(-duration // bin_ns)
        wall0 = time.perf_counter_ns()
        topo.create()
        if self.kernel:
            try:
                tc.configure(topo.ns_btl, self.tc_cmds)
            except RuntimeError as e:
                raise TestbedError(str(e)) from None
        for i, f in enumerate(self.flows):
            topo.route_options(i, f["init_cwnd_pkts"], f["rwnd_init_pkts"], quickack=not f["delayed_ack"])
            if f.get("ecn") in ("classic", "scalable"):  # the kernel offers RFC 3168 ECN (tcp_ecn = 1)
                netns.sysctls(topo.ns_snd[i], {"net.ipv4.tcp_ecn": 1})
        bases = self.probe_base_rtts()
        fwd, rev = [], []
        for f, base in zip(self.flows, bases):
            pad = max(0, f["rtt_ns"] - base)
            fwd.append(pad // 2)
            rev.append(pad - pad // 2)

        t0 = _now() + SETUP_MARGIN_NS
        end = t0 + duration
        rcvbufs = [
            str(2 * f["rwnd_max_pkts"] * f["mss_bytes"]) if f.get("rwnd_max_pkts") else "0" for f in self.flows
        ]
        receiver = self.spawn(
            "receiver",
            topo.ns_rcv,
            self.agent(
                "recv", "--ip", netns.RECEIVER_IP, "--ports", ",".join(str(BASE_PORT + i) for i in range(len(self.flows))),
                "--rcvbuf", ",".join(rcvbufs), "--t0", str(t0), "--bin", str(bin_ns), "--nbins", str(n_bins),
                "--end", str(end), "--out", str(topo.dir / "receiver.json"),
            ),
            stdout_pipe=True,
        )
        self.wait_ready("receiver", receiver)
        btl = self.start_bottleneck("bottleneck", fwd, rev, t0, duration)
        qstats = None
        if self.kernel:
            qstats = self.spawn(
                "qstats",
                topo.ns_btl,
                [
                    sys.executable, str(QSTATS), "--dev", topo.if_btl_rcv, "--handle", hex(tc.ROOT_HANDLE_ID), "--t0", str(t0),
                    "--duration", str(duration), "--sample", str(c["sample_ns"]), "--bin", str(bin_ns),
                    "--out", str(topo.dir / "qstats.json"),
                ],
                stdout_pipe=True,
            )  # fmt: skip
            self.wait_ready("qstats", qstats)
        rng = random.Random(f"ccfair-testbed/{c['seed']}")
        senders = []
        for i, f in enumerate(self.flows):
            jitter = rng.randrange(f["start_jitter_ns"]) if f["start_jitter_ns"] > 0 else 0
            stop = f["stop_ns"] if f.get("stop_ns") is not None else duration
            args = [
                "--dst", netns.RECEIVER_IP, "--port", str(BASE_PORT + i), "--cca", KERNEL_NAMES.get(f["cca"], f["cca"]),
                "--t0", str(t0), "--start", str(f["start_ns"] + jitter), "--stop", str(stop), "--end", str(end),
                "--sample", str(c["sample_ns"]), "--out", str(topo.dir / f"sender{i}.json"),
            ]
            if f["pacing"]:
                args.append("--pacing")
            if f["mss_bytes"] != 1448:
                args += ["--mss", str(f["mss_bytes"] + 12)]  # TCP_MAXSEG counts the timestamp option
            if c.get("trace"):
                args.append("--trace")
            senders.append(self.spawn(f"sender{i}", topo.ns_snd[i], self.agent("send", *args)))

        deadline_s = (end - _now()) / 1e9 + 15
        for i, p in enumerate(senders):
            try:
                p.wait(timeout=max(1.0, deadline_s))
            except subprocess.TimeoutExpired:
                raise TestbedError(f"sender of flow {self.flows[i]['name']} did not finish") from None
            if p.returncode != 0:
                raise TestbedError(f"sender of flow {self.flows[i]['name']} failed: {self.stderr_of(f'sender{i}')}")
        try:
            receiver.wait(timeout=15)
        except subprocess.TimeoutExpired:
            raise TestbedError("the receiver did not finish") from None
        if receiver.returncode != 0:
            raise TestbedError(f"the receiver failed: {self.stderr_of('receiver')}")
        self.stop("bottleneck", btl)
        if qstats is not None:
            try:
                qstats.wait(timeout=15)
            except subprocess.TimeoutExpired:
                raise TestbedError("the qdisc sampler did not finish") from None
            if qstats.returncode != 0:
                raise TestbedError(f"the qdisc sampler failed: {self.stderr_of('qstats')}")
            self.kernel_info["qstats"] = json.loads((topo.dir / "qstats.json").read_text())

        stats = json.loads((topo.dir / "bottleneck.json").read_text())
        recv = json.loads((topo.dir / "receiver.json").read_text())
        snd = [json.loads((topo.dir / f"sender{i}.json").read_text()) for i in range(len(self.flows))]
        return self.raw(stats, recv, snd, bases, fwd, rev, time.perf_counter_ns() - wall0)

    def raw(
        self,
        stats: dict[str, Any],
        recv: dict[str, Any],
        snd: list[dict[str, Any]],
        bases: list[int],
        fwd: list[int],
        rev: list[int],
        wall_ns: int,
    ) -> dict[str, Any]:
        """The simulator's raw result shape (crates/ccfair-py/src/lib.rs), from testbed measurements."""
        c = self.config
        link: dict[str, Any] = {
            k: stats[k]
            for k in ("link_tx_bytes", "queue_time_ns", "queue_packets", "queue_bytes", "sojourn_bin", "sojourn_count", "sojourn_sum_ns_per_bin", "sojourn_pkts_per_bin")
        }
        if self.kernel:
            # The kernel qdisc's counters (qstats.py); Linux exposes no per-packet
            # sojourn times, so the sojourn histogram and per-bin sums stay empty.
            q = self.kernel_info["qstats"]
            link = {k: q[k] for k in ("link_tx_bytes", "queue_time_ns", "queue_packets", "queue_bytes")}
            link.update(sojourn_bin=[], sojourn_count=[], sojourn_sum_ns_per_bin=[], sojourn_pkts_per_bin=[])
        flows = []
        trace: dict[str, list[int]] = {k: [] for k in ("flow", "time_ns", "cwnd_pkts", "inflight_pkts", "srtt_ns", "pacing_rate_bps", "ssthresh_pkts")}
        for i, (f, s) in enumerate(zip(self.flows, snd)):
            flows.append(
                {
                    "name": f["name"],
                    "cca": f["cca"],
                    "rtt_ns": f["rtt_ns"],
                    "start_ns": int(s["start_ns"]),
                    "delivered_bytes": recv["delivered_bytes"][i],
                    "sent_packets": s["sent_packets"],
                    "retransmissions": s["retransmissions"],
                    # Linux exposes no cumulative "marked lost" count; every marked-lost
                    # segment is retransmitted, so retransmissions stand in for it.
                    "losses_detected": s["retransmissions"],
                    "drops": stats["drops"][i],
                    "rto_count": s["rto_count"],
                    "min_rtt_ns": s["min_rtt_ns"],
                    "mean_rtt_ns": float(s["mean_rtt_ns"]),
                    "recoveries": s["recoveries"],
                }
            )
            t = s["trace"]
            trace["flow"] += [i] * len(t["time_ns"])
            for k in t:
                trace[k] += t[k]
        return {
            "duration_ns": c["duration_ns"],
            "bin_ns": c["bin_ns"],
            "sample_ns": c["sample_ns"],
            "sojourn_bin_ns": c["sojourn_bin_ns"],
            "bottleneck_rate_bps": c["bottleneck"]["rate_bps"],
            "flows": flows,
            **link,
            "trace": trace,
            "events": 0,
            "data_packets": stats["forwarded_fwd"],
            "wall_ns": wall_ns,
            "testbed": {
                "run_id": self.topo.id,
                "kernel": os.uname().release,
                "load_avg_1min": os.getloadavg()[0],
                "base_rtt_ms": [b / 1e6 for b in bases],
                "added_delay_ms": {"forward": [x / 1e6 for x in fwd], "reverse": [x / 1e6 for x in rev]},
                "bottleneck": {
                    k: stats[k]
                    for k in ("late_count", "late_p50_us", "late_p99_us", "late_max_ns", "late_mean_ns", "rx_socket_drops", "tx_errors", "oversize_frames", "forwarded_rev")
                },
                "bottleneck_path": "kernel" if self.kernel else "userspace",
                **({"kernel_bottleneck": self.kernel_summary()} if self.kernel else {}),
            },
        }

    def kernel_summary(self) -> dict[str, Any]:
        """What the kernel path did: the tc commands, netem availability, the root qdisc's counters over the run."""
        q = self.kernel_info["qstats"]
        start, end = q["start"], q["end"]
        return {
            "tc": [" ".join(["tc", *cmd]) for cmd in self.tc_cmds],
            "delay": "userspace (ccfair-bottleneck, delay-only mode)",
            "netem_available": self.kernel_info.get("netem", False),
            "qdisc_drops": end["drops"] - start["drops"],
            "qdisc_sent_packets": end["packets"] - start["packets"],
            "qdisc_overlimits": end["overlimits"] - start["overlimits"],
            "qdisc_requeues": end["requeues"] - start["requeues"],
            "sample_late_max_ns": q["sample_late_max_ns"],
        }

    def cleanup(self) -> None:
        for _, p in self.procs:
            if p.poll() is None:
                p.kill()
        for _, p in self.procs:
            with contextlib.suppress(Exception):
                p.wait(timeout=5)
            if p.stdout is not None:
                p.stdout.close()
        self.topo.destroy()


def run(spec: Spec, seed: int | None = None, *, realtime: bool = True) -> Any:
    """Run ``spec`` on the testbed and return a :class:`~ccfair.result.Result`.

    Raises:
        TestbedUnavailable: not root, a CCA missing from the kernel, or the bottleneck not built.
        SpecError: the kernel bottleneck was asked for and the kernel lacks its qdisc
            (field ``bottleneck.qdisc``) or tc/tbf (``testbed.bottleneck``).
        TestbedError: something failed during the run (the message names it).
    """
    from ccfair.result import Result

    profiles.check_backend(spec, "testbed")  # a flow setting the testbed cannot apply: SpecError naming it
    binary = check_available(spec)  # probes the kernel qdiscs of the kernel bottleneck
    config = spec.to_run_config(seed)
    r = _Run(spec, config, binary, realtime)
    if r.kernel:  # the probe's result (cached by check_available's call): is there netem?
        r.kernel_info.update(tc.probe(r.tc_cmds, config["bottleneck"]["qdisc"]["kind"]))
    netns.clean_stale()
    atexit.register(r.cleanup)  # e.g. sys.exit from a signal handler elsewhere
    with _signals_raise():
        try:
            raw = r.execute()
        except netns.NetnsError as e:
            raise TestbedError(str(e)) from None
        finally:
            r.cleanup()
            atexit.unregister(r.cleanup)
    result = Result.from_raw(spec, config, raw)
    result.summary["backend"] = "testbed"
    result.summary["testbed"] = raw["testbed"]
    min_rtts = [f["min_rtt_ns"] / 1e6 for f in raw["flows"]]
    for entry, m in zip(result.summary["flows"], min_rtts):
        entry["min_rtt_ms"] = m
    if r.kernel:  # no per-packet sojourn from the kernel: not measured, not zero
        result.link["sojourn_packets"] = float("nan")
    return result
