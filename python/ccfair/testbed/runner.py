"""Run one experiment description on real Linux TCP (``ccfair run --backend testbed``).

Steps (see docs/testbed.md):

1. check root, each flow's CCA (the host's module, or ccfair's BPF port of the Linux
   module: :mod:`ccfair.testbed.bpfcc`, built on demand) and the bottleneck binary;
   clean leftovers of dead runs (:func:`ccfair.testbed.netns.clean_stale`);
2. build the namespaces (:class:`~ccfair.testbed.netns.Topology`), load the BPF
   ports the flows need under the run's own kernel names (unloaded with the run, and
   by the kernel if the run dies), per-flow route metrics (initcwnd, initrwnd, quickack) and sysctls (ECN);
3. RTT equalization as in S0: with the bottleneck adding no delay, probe each
   sender's base RTT (the kernel's RTT sample of a TCP handshake with a listener on the
   receiver, agent.py ``probe --kernel-rtt``) and pad the
   difference to the flow's configured RTT, half forward and half reverse;
4. start the receiver and one sender per flow, wait until each reports ready,
   then choose a common time zero ``t0`` (CLOCK_MONOTONIC, shared by all
   namespaces), start the bottleneck against it and hand ``t0`` to the agents;
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
import dataclasses
import ipaddress
import json
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ccfair import ccas, profiles, topology
from ccfair.errors import SimulationError, SpecError
from ccfair.spec import Spec
from ccfair.testbed import agent, bpfcc, httpagent, netns, tc

__all__ = ["TestbedError", "TestbedUnavailable", "run", "kernel_ccas", "find_bottleneck", "check_available", "plan_ccas"]

#: First TCP port of the receiver; flow i listens on BASE_PORT + i. Probes use PROBE_PORT.
BASE_PORT = 5201
PROBE_PORT = 5200
#: Time between every traffic agent being ready (agent.py ``--t0 stdin``) and the
#: experiment's time zero: the bottleneck (and a kernel qdisc sampler) starts within it.
SETUP_MARGIN_NS = 1_500_000_000
#: How long the receiver and each bulk sender may take to report ready.
AGENT_READY_TIMEOUT_S = 60.0
#: Probes per path for the base RTT (the minimum is used).
PROBES_PER_PATH = 10
AGENT = Path(__file__).with_name("agent.py")
HTTPAGENT = Path(__file__).with_name("httpagent.py")
#: TCP port of a local HTTP service (one server per sender namespace, so one port for all).
HTTP_PORT = 8080
#: Extra setup time when HTTP servers start (Hypercorn imports in ~0.5 s).
HTTP_SETUP_NS = 2_000_000_000
#: An HTTP client drains its connection this long at most after its flow stops (see httpagent.py).
HTTP_DRAIN_NS = 5_000_000_000
#: The bulk sender's MSS option (ccfair's default segment size); HTTP servers keep the kernel's.
DEFAULT_MSS_BYTES = 1448
#: Flow keys that set the sender's stack; a remote server's stack is not ccfair's to set.
SENDER_KEYS = ("init_cwnd", "pacing", "tso", "min_rto", "mss")
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
    return bpfcc.offered()


def check_cca_choices(spec: Spec) -> None:
    """The per-flow CCA choice without loading anything (``ccfair check --backend testbed``):
    a CCA neither the kernel nor a port has, or parameters its implementation cannot take,
    is a :class:`TestbedUnavailable` naming the flow's cca."""
    modules = bpfcc.host_modules()
    for group, _, f in spec.expand_flows():
        try:
            bpfcc.choose(str(f.cca), spec.testbed.cca_impl, dict(f.cca.params), f.cca.resolved(), modules)
        except ValueError as e:
            raise TestbedUnavailable(str(e), field=f"flows.{group}.cca") from None


def plan_ccas(spec: Spec) -> list[bpfcc.Choice]:
    """Per flow (expanded), how the testbed runs its CCA: the host's module or the BPF port
    (:func:`ccfair.testbed.bpfcc.choose`, ``testbed.cca_impl``). Raises
    :class:`TestbedUnavailable` naming the flow's cca and what is missing. A module the
    kernel does not offer yet is loaded with modprobe."""
    modules = bpfcc.host_modules()
    out = []
    for group, _, f in spec.expand_flows():
        field = f"flows.{group}.cca"
        try:
            choice = bpfcc.choose(str(f.cca), spec.testbed.cca_impl, dict(f.cca.params), f.cca.resolved(), modules)
        except ValueError as e:
            raise TestbedUnavailable(str(e), field=field) from None
        if choice.impl == "bpf":
            missing = bpfcc.unavailable()
            if missing:
                raise TestbedUnavailable(
                    f"{choice.cca!r} is not a module of this kernel, and its BPF port (Linux's {bpfcc.linux_source(choice.cca)}) "
                    f"cannot run here: missing {missing}",
                    field=field,
                )
        elif choice.cca not in kernel_ccas():
            if shutil.which("modprobe"):
                subprocess.run(["modprobe", f"tcp_{choice.cca}"], capture_output=True)
            if choice.cca not in kernel_ccas():
                raise TestbedUnavailable(
                    f"the kernel does not offer CCA {choice.cca!r} (modprobe tcp_{choice.cca} failed); "
                    f"it offers: {', '.join(kernel_ccas()) or 'none'}",
                    field=field,
                )
        out.append(choice)
    return out


def find_bottleneck() -> Path | None:
    """The ccfair-bottleneck binary: $CCFAIR_BOTTLENECK; else the newest of the copy in the
    installation's scripts directory (where scripts/example.sh and scripts/test.sh put it:
    .venv/bin, next to the ccfair command) and the repository's cargo target dir (an editable
    install, rebuilt with cargo: the newest wins, so a stale copy never shadows a rebuild);
    else PATH."""
    env = os.environ.get("CCFAIR_BOTTLENECK")
    if env:
        return Path(env) if Path(env).is_file() else None
    repo = Path(__file__).resolve().parents[3]
    target = Path(os.environ.get("CARGO_TARGET_DIR", repo / "target"))
    candidates = [Path(sysconfig.get_path("scripts")) / "ccfair-bottleneck"]
    candidates += [target / profile / "ccfair-bottleneck" for profile in ("release", "debug")]
    found = [p for p in candidates if p.is_file()]
    if found:
        return max(found, key=lambda p: p.stat().st_mtime)
    on_path = shutil.which("ccfair-bottleneck")
    return Path(on_path) if on_path else None


def check_outages(spec: Spec) -> None:
    """The kernel bottleneck (tc tbf) cannot stop its link: ``bottleneck.outages`` needs the userspace
    one (ccfair-bottleneck holds its link over each outage, shaper.rs ``set_outages``); a SpecError naming it."""
    if spec.testbed.bottleneck == "kernel" and spec.bottleneck is not None and spec.bottleneck.outages:
        raise SpecError(
            "bottleneck.outages",
            f"{len(spec.bottleneck.outages)} outage(s) with testbed.bottleneck = 'kernel', whose tc tbf cannot stop its link; "
            "allowed with outages: testbed.bottleneck = 'userspace' (the default), or no outages",
        )


def check_available(spec: Spec | None = None) -> Path:
    """Raise :class:`TestbedUnavailable` naming what is missing; return the bottleneck binary."""
    if spec is not None:
        check_outages(spec)
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
            "the userspace bottleneck is not installed; run `bash scripts/example.sh` (or `cargo build --release "
            f"-p ccfair-bottleneck` and copy target/release/ccfair-bottleneck into {sysconfig.get_path('scripts')}), "
            "or set CCFAIR_BOTTLENECK to its path"
        )
    if spec is not None and spec.testbed.bottleneck == "kernel" and spec.links:
        raise SpecError(
            "testbed.bottleneck",
            f"'kernel' is one tc link; this file has [[links]] ({', '.join(lk.name for lk in spec.links)}); "
            "allowed with [[links]]: 'userspace' (ccfair-bottleneck runs every link)",
        )
    if spec is not None and spec.testbed.bottleneck == "kernel":
        # Fails with a SpecError naming bottleneck.qdisc before anything is created.
        config = spec.to_run_config()
        tc.probe(tc.commands("p0", config, spec.packet_wire_bytes), config["bottleneck"]["qdisc"]["kind"])
    if spec is not None:
        plan_ccas(spec)
    return binary


def check_http_flows(spec: Spec) -> dict[int, tuple[str, int]]:
    """Checks of HTTP flows before anything is created; returns flow index -> (address, port)
    of each remote URL. A URL's host is resolved here, in the host namespace, whose uplink
    the download will use; a host that does not resolve, an address inside the testbed's
    own networks, a sender-side setting on a remote flow (its server's stack is not ours)
    or a missing ``nft`` is a SpecError naming the field."""
    from urllib.parse import urlsplit

    remote: dict[int, tuple[str, int]] = {}
    raw_flows = spec.raw.get("flows", []) if isinstance(spec.raw, dict) else []
    for i, (_, _, fs) in enumerate(spec.expand_flows()):
        if fs.kind != "http":
            continue
        if fs.mss != DEFAULT_MSS_BYTES:
            raise SpecError(
                f"flows.{i}.mss", f"{fs.mss}: an HTTP flow's server keeps the kernel's MSS ({DEFAULT_MSS_BYTES} bytes here); remove mss"
            )
        if not fs.url:
            continue
        given = raw_flows[i] if i < len(raw_flows) and isinstance(raw_flows[i], dict) else {}
        prof = profiles.resolve_profile(fs.profile, spec.raw.get("profiles", {}) or {}, f"flows.{i}.profile") if fs.profile else {}
        from_profile = {profiles.FIELDS[k].flow_key for k in prof if k in profiles.FIELDS}
        for key in SENDER_KEYS:
            if key in given or key in from_profile:
                raise SpecError(
                    f"flows.{i}.{key}",
                    f"flow {fs.name or i} downloads a remote URL; its server's stack ({key}) is not ccfair's to set "
                    "(only the receiver's initial_rwnd and delayed_ack apply); remove it",
                )
        u = urlsplit(str(fs.url))
        port = u.port or (443 if u.scheme == "https" else 80)
        try:
            addr = str(socket.getaddrinfo(u.hostname, port, socket.AF_INET, socket.SOCK_STREAM)[0][4][0])
        except (socket.gaierror, UnicodeError) as e:
            raise SpecError(f"flows.{i}.url", f"{str(fs.url)!r}: cannot resolve host {u.hostname!r} ({e})") from None
        a = ipaddress.IPv4Address(addr)
        if a in ipaddress.IPv4Network("10.77.0.0/16") or a in ipaddress.IPv4Network("100.64.0.0/10") or a.is_loopback:
            raise SpecError(f"flows.{i}.url", f"{str(fs.url)!r}: address {addr} is inside the testbed's own networks or loopback")
        if shutil.which("nft") is None:
            raise TestbedUnavailable(
                "a remote-URL flow needs nftables' `nft` command for its NAT (apt-get install nftables)", field=f"flows.{i}.url"
            )
        remote[i] = (addr, port)
    return remote


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


#: The simulator's result keys (raw_result.py) the testbed does not measure: the run's and each
#: flow's. Readers take their absence as "not measured" (result.py). An HTTP flow adds its
#: size_bytes and fct_ns (from the client). tests/test_result_keys.py checks that the testbed's
#: raw result has every other key.
NOT_MEASURED: dict[str, frozenset[str]] = {
    "run": frozenset({"sojourn_l4s_bin", "sojourn_l4s_count", "cca_classes", "meter"}),
    "flow": frozenset(
        {
            "arrival_bytes",
            "drops_overflow",
            "drops_aqm",
            "ecn_marks",
            "size_bytes",
            "fct_ns",
            "random_losses",
            "ecn",
            "ecn_reductions",
            "loss_probes",
            "sojourn_sum_ns",
            "sojourn_pkts",
        }
    ),
}


@dataclasses.dataclass
class _Procs:
    """One run's flows by kind and the processes of its experiment, as its steps start them."""

    http: list[int]
    bulk: list[int]
    rcvbufs: list[int]
    n_bins: int
    jitters: list[int] = dataclasses.field(default_factory=list)
    stops: list[int] = dataclasses.field(default_factory=list)
    receiver: subprocess.Popen[str] | None = None
    #: per flow: its bulk sender or its HTTP client
    senders: dict[int, subprocess.Popen[str]] = dataclasses.field(default_factory=dict)
    #: the agents that wait for t0 on stdin
    waiting: list[tuple[str, subprocess.Popen[str]]] = dataclasses.field(default_factory=list)
    servers: dict[int, subprocess.Popen[str]] = dataclasses.field(default_factory=dict)
    bottleneck: subprocess.Popen[str] | None = None
    qstats: subprocess.Popen[str] | None = None
    #: the run's time zero, CLOCK_MONOTONIC ns
    t0: int = 0
    end: int = 0
    clients: dict[int, dict[str, Any]] = dataclasses.field(default_factory=dict)
    sender_stats: list[dict[str, Any]] = dataclasses.field(default_factory=list)


def shared_bases(flows: list[dict[str, Any]], remote: set[int], bases: list[int]) -> list[int]:
    """The base RTT each flow's path is padded from: the least one probed among the local flows
    whose paths are built alike (the same forward and reverse links; every dumbbell flow: its own
    veth pair into the one bottleneck), a remote flow its own. Their true base RTTs are equal, and
    a probe's minimum over its handshakes is that base plus whatever the host made them wait, which
    a loaded host makes larger for one flow than another (probed together); padding each from its
    own left the paths of one run short of the target by that wait and unequal between flows
    (docs/testbed.md "Stored runs and the probe", docs/fidelity.md "Two probes")."""
    least: dict[tuple[Any, ...], int] = {}
    keys: list[tuple[Any, ...] | None] = []
    for i, f in enumerate(flows):
        key = None if i in remote else (tuple(f.get("path") or ()), tuple(f.get("reverse_path") or ()))
        keys.append(key)
        if key is not None:
            least[key] = min(least.get(key, bases[i]), bases[i])
    return [bases[i] if key is None else least[key] for i, key in enumerate(keys)]


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
        #: The spec's flows (kind, http, url, tso, min_rto live there, not in the RunConfig).
        self.fspecs = [f for _, _, f in spec.expand_flows()]
        #: Flow index -> (address, port) of its remote URL, resolved before the run.
        self.remote: dict[int, tuple[str, int]] = {}
        #: Stack settings as read back from the kernel (reported in testbed.applied).
        self.applied: dict[str, Any] = {}
        #: Per flow: module or BPF port (plan_ccas), and the kernel name its sockets use.
        self.ccas: list[bpfcc.Choice] = []
        self.kernel_cca: list[str] = [f["cca"] for f in self.flows]
        self.bpf = bpfcc.Loaded()
        self.bpf_objects: dict[str, Path] = {}

    # ------------------------------------------------------------ processes

    def spawn(self, label: str, ns: str, argv: list[str], stdout_pipe: bool = False, stdin_pipe: bool = False) -> subprocess.Popen[str]:
        err = open(self.topo.dir / f"{label}.stderr", "w")
        p = subprocess.Popen(
            ["ip", "netns", "exec", ns, *argv],
            stdin=subprocess.PIPE if stdin_pipe else None,
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

    def release(self, label: str, p: subprocess.Popen[str], t0: int) -> None:
        """Hand ``t0`` to an agent started with ``--t0 stdin`` (agent.py)."""
        assert p.stdin is not None
        try:
            p.stdin.write(f"{t0}\n")
            p.stdin.close()
        except OSError:
            raise TestbedError(f"{label} exited before the experiment started: {self.stderr_of(label) or 'no output'}") from None

    def agent(self, mode: str, *args: str) -> list[str]:
        return [sys.executable, str(AGENT), mode, *args]

    def link_config(self, rev: list[int]) -> dict[str, Any]:
        """The bottleneck's links: the dumbbell's one (rate, qdisc) or a topology's (``links``, each
        port's forward and reverse paths as link indices, the primary link), with the reverse delays."""
        c = self.config
        if not c.get("links"):
            b = c["bottleneck"]
            return {
                "rate_bps": b["rate_bps"],
                "qdisc": b["qdisc"],
                "burst_bytes": self.spec.packet_wire_bytes + b["l2_overhead_bytes"],  # one frame
                "l2_overhead_bytes": b["l2_overhead_bytes"],
                **({"outages_ns": b["outages_ns"]} if b.get("outages_ns") else {}),  # after t0, held by shaper.rs
                "rev_delay_ns": rev,
            }
        index = {lk["name"]: k for k, lk in enumerate(c["links"])}
        delay = [int(lk["delay_ns"]) for lk in c["links"]]
        fwd_paths = [[index[n] for n in f["path"]] for f in self.flows]
        rev_paths = [[index[n] for n in f.get("reverse_path", [])] for f in self.flows]
        # ACKs without a reverse path return over a line as long as their data's links (as the simulator)
        back = [r + (sum(delay[k] for k in fp) if not rp else 0) for r, fp, rp in zip(rev, fwd_paths, rev_paths)]
        return {
            "links": c["links"],
            "packet_bytes": self.spec.packet_wire_bytes,  # each link's token bucket: one frame
            "fwd_paths": fwd_paths,
            "rev_paths": rev_paths,
            "primary_link": topology.primary_link(c),
            "rev_delay_ns": back,
        }

    def start_bottleneck(self, label: str, fwd: list[int], rev: list[int], t0: int, duration: int) -> subprocess.Popen[str]:
        c = self.config
        cfg = {
            "sender_ifaces": self.topo.if_btl,
            "receiver_iface": self.topo.if_btl_rcv,
            "seed": c["seed"],
            "fwd_delay_ns": fwd,
            **self.link_config(rev),
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
            "port_order": self.spec.testbed.bottleneck_order,
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

    def probe_base_rtts(self, fwd: list[int] | None = None, rev: list[int] | None = None, label: str = "probe") -> list[int]:
        """Each flow's path RTT by TCP handshakes through the bottleneck, with no added delay
        (the base RTTs) or with the equalizing delays ``fwd``/``rev`` (the check, before t0)."""
        n = len(self.flows)
        btl = self.start_bottleneck(f"{label}-bottleneck", fwd or [0] * n, rev or [0] * n, _now(), _NS_PER_S)
        listener = None
        if len(self.remote) < n:
            listener = self.spawn(
                f"{label}-listen",
                self.topo.ns_rcv,
                self.agent("listen", "--ip", netns.RECEIVER_IP, "--port", str(PROBE_PORT)),
                stdout_pipe=True,
            )
            self.wait_ready(f"{label}-listen", listener)
        probes = []  # each timed by its kernel: the handshake's RTT sample, the points a data RTT sample uses
        for i in range(n):
            if i in self.remote:  # the receiver's TCP handshake with the remote server, through the gateway
                addr, port = self.remote[i]
                ns, args = self.topo.ns_rcv, ["--dst", addr, "--port", str(port), "--open", "--kernel-rtt"]
            else:  # the sender's handshake with the receiver's probe listener
                ns, args = self.topo.ns_snd[i], ["--dst", netns.RECEIVER_IP, "--port", str(PROBE_PORT), "--open", "--kernel-rtt"]
            probes.append(self.spawn(f"{label}{i}", ns, self.agent("probe", *args, "--count", str(PROBES_PER_PATH)), stdout_pipe=True))
        bases = []
        for i, p in enumerate(probes):
            out, _ = p.communicate(timeout=60)
            if p.returncode != 0 or not out.strip():
                if i in self.remote:
                    raise SpecError(
                        f"flows.{i}.url",
                        f"{self.fspecs[i].url!r} is unreachable: no TCP handshake with {self.remote[i][0]} port {self.remote[i][1]} through the bottleneck",
                    )
                raise TestbedError(f"RTT probe of flow {self.flows[i]['name']} failed: {self.stderr_of(f'{label}{i}')}")
            bases.append(int(out.split()[0]))
        if listener is not None:
            self.stop(f"{label}-listen", listener)
        self.stop(f"{label}-bottleneck", btl)
        return bases

    def execute(self) -> dict[str, Any]:
        wall0 = time.perf_counter_ns()
        bases, fwd, rev, path_rtts = self.set_up_network()
        procs = self.start_agents()
        self.start_experiment(procs, fwd, rev)
        self.wait_for_end(procs)
        raw = self.collect(procs, bases, fwd, rev, time.perf_counter_ns() - wall0)
        self.report(raw, procs, path_rtts)
        return raw

    def set_up_network(self) -> tuple[list[int], list[int], list[int], list[int]]:
        """Namespaces, ports, the kernel bottleneck's qdiscs, each flow's stack; then the base RTTs
        as probed, the per-port delays that equalize them (forward, reverse) and the RTTs they give."""
        topo = self.topo
        topo.create()
        self.load_ports()
        if self.kernel:
            try:
                tc.configure(topo.ns_btl, self.tc_cmds)
            except RuntimeError as e:
                raise TestbedError(str(e)) from None
        self.receive_buffer()
        topo.timestamp_offsets(self.spec.testbed.timestamp_offsets == "random")
        self.applied["receiver_tcp_timestamps"] = int(netns.in_ns(topo.ns_rcv, "sysctl", "-n", "net.ipv4.tcp_timestamps"))
        for i, f in enumerate(self.flows):
            self.apply_stack(i, f)
            # the kernel offers RFC 3168 ECN (tcp_ecn = 1); an ECN-based CCA (dctcp) asks for it
            # anyway (TCP_CONG_NEEDS_ECN), the receiver's default tcp_ecn = 2 accepts it
            if f.get("ecn") in ("classic", "scalable") or (f.get("ecn") is None and ccas.needs_ecn(f["cca"])):
                netns.sysctls(topo.ns_snd[i], {"net.ipv4.tcp_ecn": 1})
        self.applied["flows"] = [self.readback(i) for i in range(len(self.flows))]
        bases = self.probe_base_rtts()
        fwd, rev = self.equalize(shared_bases(self.flows, set(self.remote), bases))
        return bases, fwd, rev, self.probe_base_rtts(fwd, rev, label="check")

    def start_agents(self) -> _Procs:
        """The receiver and the bulk senders, started and ready, waiting for t0 on stdin."""
        c = self.config
        duration = c["duration_ns"]
        procs = _Procs(
            http=[i for i, fs in enumerate(self.fspecs) if fs.kind == "http"],
            bulk=[i for i, fs in enumerate(self.fspecs) if fs.kind != "http"],
            rcvbufs=[self.rcvbuf(f) for f in self.flows],
            n_bins=-(-duration // c["bin_ns"]),
        )
        rng = random.Random(f"ccfair-testbed/{c['seed']}")
        procs.jitters = [rng.randrange(f["start_jitter_ns"]) if f["start_jitter_ns"] > 0 else 0 for f in self.flows]
        procs.stops = [f["stop_ns"] if f.get("stop_ns") is not None else duration for f in self.flows]
        if procs.bulk:
            procs.receiver = self.spawn_receiver(procs)
            procs.waiting.append(("receiver", procs.receiver))
        for i in procs.bulk:
            procs.senders[i] = self.spawn_sender(i, procs)
            procs.waiting.append((f"sender{i}", procs.senders[i]))
        # t0 is chosen only when every agent is ready, so a slowly starting agent on a loaded
        # host delays the experiment instead of starting its flow late.
        for label, p in procs.waiting:
            self.wait_ready(label, p, timeout_s=AGENT_READY_TIMEOUT_S)
        return procs

    def spawn_receiver(self, procs: _Procs) -> subprocess.Popen[str]:
        c, bulk = self.config, procs.bulk
        return self.spawn(
            "receiver",
            self.topo.ns_rcv,
            self.agent(
                "recv",
                "--ip", netns.RECEIVER_IP,
                "--ports", ",".join(str(BASE_PORT + i) for i in bulk),
                "--rcvbuf", ",".join(str(procs.rcvbufs[i]) for i in bulk),
                "--ccas", ",".join(self.receiver_cca(i) for i in bulk),
                "--t0", "stdin",
                "--bin", str(c["bin_ns"]),
                "--nbins", str(procs.n_bins),
                "--end", str(c["duration_ns"]),
                "--out", str(self.topo.dir / "receiver.json"),
            ),
            stdout_pipe=True,
            stdin_pipe=True,
        )  # fmt: skip

    def spawn_sender(self, i: int, procs: _Procs) -> subprocess.Popen[str]:
        c, f = self.config, self.flows[i]
        args = [
            "--dst", netns.RECEIVER_IP,
            "--port", str(BASE_PORT + i),
            "--cca", self.kernel_cca[i],
            "--t0", "stdin",
            "--start", str(f["start_ns"] + procs.jitters[i]),
            "--stop", str(procs.stops[i]),
            "--end", str(c["duration_ns"]),
            "--sample", str(c["sample_ns"]),
            "--out", str(self.topo.dir / f"sender{i}.json"),
        ]  # fmt: skip
        if f["pacing"]:
            args.append("--pacing")
        if f["mss_bytes"] != 1448:
            args += ["--mss", str(f["mss_bytes"] + 12)]  # TCP_MAXSEG counts the timestamp option
        if c.get("trace"):
            args.append("--trace")
        return self.spawn(f"sender{i}", self.topo.ns_snd[i], self.agent("send", *args), stdout_pipe=True, stdin_pipe=True)

    def start_experiment(self, procs: _Procs, fwd: list[int], rev: list[int]) -> None:
        """Choose t0; start the HTTP servers, the bottleneck and the qdisc sampler; release the
        waiting agents; start the HTTP clients."""
        c, topo = self.config, self.topo
        duration = c["duration_ns"]
        t0 = _now() + SETUP_MARGIN_NS + (HTTP_SETUP_NS if procs.http else 0)
        procs.t0 = t0
        procs.end = t0 + duration
        procs.servers = {i: self.start_server(i, t0, procs.end) for i in procs.http if i not in self.remote}
        procs.bottleneck = self.start_bottleneck("bottleneck", fwd, rev, t0, duration)
        if self.kernel:
            procs.qstats = self.spawn(
                "qstats",
                topo.ns_btl,
                [
                    sys.executable, str(QSTATS), "--dev", topo.if_btl_rcv, "--handle", hex(tc.ROOT_HANDLE_ID), "--t0", str(t0),
                    "--duration", str(duration), "--sample", str(c["sample_ns"]), "--bin", str(c["bin_ns"]),
                    "--out", str(topo.dir / "qstats.json"),
                ],
                stdout_pipe=True,
                stdin_pipe=True,
            )  # fmt: skip
            self.wait_ready("qstats", procs.qstats)
        for label, p in procs.waiting:
            self.release(label, p, t0)
        for i in procs.http:
            start = self.flows[i]["start_ns"] + procs.jitters[i]
            procs.senders[i] = self.start_client(i, t0, start, procs.stops[i], procs.end, procs.n_bins, procs.rcvbufs[i])

    def wait_for_end(self, procs: _Procs) -> None:
        """Every sender and client, then the receiver finish; the servers and the bottleneck are
        stopped; the qdisc sampler finishes (its samples kept)."""
        deadline_s = (procs.end - _now() + HTTP_DRAIN_NS) / 1e9 + 15
        for i, p in procs.senders.items():
            what, label = ("HTTP client", f"client{i}") if i in procs.http else ("sender", f"sender{i}")
            self.wait_done(p, label, f"{what} of flow {self.flows[i]['name']}", max(1.0, deadline_s))
        if procs.receiver is not None:
            self.wait_done(procs.receiver, "receiver", "the receiver", 15)
        for i, p in procs.servers.items():
            self.stop(f"server{i}", p)
        assert procs.bottleneck is not None  # started by start_experiment
        self.stop("bottleneck", procs.bottleneck)
        if procs.qstats is not None:
            assert procs.qstats.stdin is not None
            procs.qstats.stdin.close()  # its final counters, now that nothing reaches the qdisc
            self.wait_done(procs.qstats, "qstats", "the qdisc sampler", 15)
            self.kernel_info["qstats"] = json.loads((self.topo.dir / "qstats.json").read_text())

    def wait_done(self, p: subprocess.Popen[str], label: str, what: str, timeout_s: float) -> None:
        """Wait for ``p`` (``what`` in errors) to exit 0."""
        try:
            p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise TestbedError(f"{what} did not finish") from None
        if p.returncode != 0:
            raise TestbedError(f"{what} failed: {self.stderr_of(label)}")

    def collect(self, procs: _Procs, bases: list[int], fwd: list[int], rev: list[int], wall_ns: int) -> dict[str, Any]:
        """The raw result from the files the bottleneck and the agents wrote."""
        d = self.topo.dir
        stats = json.loads((d / "bottleneck.json").read_text())
        order = self.spec.testbed.bottleneck_order
        if stats.get("port_order", "port") != order:
            raise TestbedError(
                f"testbed.bottleneck_order: {order!r} was not applied by {self.binary} "
                "(built before the option; rebuild it: pip install -e . or cargo build --release -p ccfair-bottleneck)"
            )
        recv = json.loads((d / "receiver.json").read_text()) if procs.receiver is not None else {"delivered_bytes": []}
        delivered = dict(zip(procs.bulk, recv["delivered_bytes"]))
        snd = []
        for i in range(len(self.flows)):
            if i in procs.http:
                procs.clients[i] = json.loads((d / f"client{i}.json").read_text())
                delivered[i] = procs.clients[i]["delivered_bytes"]
                snd.append(self.http_sender_stats(i, procs.clients[i], stats))
            else:
                snd.append(json.loads((d / f"sender{i}.json").read_text()))
        recv = {"delivered_bytes": [delivered[i] for i in range(len(self.flows))]}
        raw = self.raw(stats, recv, snd, bases, fwd, rev, wall_ns)
        raw["testbed"]["flows"] = self.flow_report(bases, fwd, rev, snd, procs.clients, stats)
        procs.sender_stats = snd
        return raw

    def report(self, raw: dict[str, Any], procs: _Procs, path_rtts: list[int]) -> None:
        """What the run applied and measured besides the result: per flow its path's RTT and its
        stack settings, the receiver's settings, the CCAs; the HTTP flows' sizes and FCTs."""
        tb = raw["testbed"]
        for entry, measured, applied in zip(tb["flows"], path_rtts, self.applied["flows"]):
            entry["path_min_rtt_ms"] = measured / 1e6
            entry["applied"] = applied
        tb["receiver_tcp_rmem"] = self.applied["receiver_tcp_rmem"]
        tb["receiver_tcp_timestamps"] = self.applied["receiver_tcp_timestamps"]
        # the hosts' TCP timestamp clock at time zero: tcp_clock_ns is ktime_get_ns (include/net/tcp.h),
        # CLOCK_MONOTONIC; TSvals without offset are it in ms (the simulator's tcp_timestamp_epoch_ns)
        tb["ts_epoch_ns"] = procs.t0
        tb["ccas"] = self.cca_report()
        for i in procs.servers:  # the connection's own socket options, read in the server process
            s = procs.sender_stats[i]
            self.applied["flows"][i].update(server_cca=s.get("cca"), server_pacing=s.get("max_pacing_rate") == agent.PACING_UNCAPPED)
        for i, cl in procs.clients.items():
            raw["flows"][i]["size_bytes"] = self.flows[i].get("size_bytes")
            raw["flows"][i]["fct_ns"] = cl["fct_ns"]

    # ------------------------------------------------------------ CCAs

    def load_ports(self) -> None:
        """Load the BPF ports the flows need, one per (CCA, parameters), under this run's kernel
        names (recorded in the state file first); the flows' sockets use those names."""
        names: dict[tuple[str, str], str] = {}
        for i, ch in enumerate(self.ccas):
            if ch.impl != "bpf":
                continue
            key = (ch.cca, json.dumps(ch.params, sort_keys=True))
            if key not in names:
                index = sum(1 for c, _ in names if c == ch.cca)
                names[key] = bpfcc.kernel_name(ch.cca, self.topo.id, index)
                self.topo.record_bpf(names[key])
                try:
                    self.bpf.load(ch.cca, self.bpf_objects[ch.cca], names[key], ch.params)
                except bpfcc.BpfError as e:
                    raise TestbedError(f"flows.{i}.cca: {e}") from None
            self.kernel_cca[i] = names[key]

    def receiver_cca(self, i: int) -> str:
        """The CCA of flow ``i``'s receiving socket: the flow's own for an ECN-based CCA (DCTCP's
        receiver echoes CE per packet: tcp_dctcp.h ``dctcp_ece_ack_update``), else "" (the
        receiver namespace's default)."""
        return self.kernel_cca[i] if ccas.needs_ecn(self.flows[i]["cca"]) else ""

    def cca_report(self) -> list[dict[str, Any]]:
        """Per flow: how its CCA ran (testbed.ccas in the summary)."""
        out = []
        for f, ch, name in zip(self.flows, self.ccas, self.kernel_cca):
            entry: dict[str, Any] = {"flow": f["name"], "cca": ch.cca, "impl": ch.impl, "kernel_name": name}
            if ch.impl == "bpf":
                entry["source"] = f"ccfair/testbed/bpf/{ch.cca}{bpfcc.SUFFIX}"
                entry["module_params"] = ch.params
            out.append(entry)
        return out

    # ------------------------------------------------------------ profiles, RTT, HTTP

    def apply_stack(self, i: int, f: dict[str, Any]) -> None:
        """The flow's profile fields on real TCP (docs/testbed.md, "Profiles"): route metrics
        initcwnd/rto_min at the sender and initrwnd/quickack at the receiver, the TSO/GSO
        burst cap; the CCA and pacing are set per socket by the agents."""
        fs, topo = self.fspecs[i], self.topo
        rto_ms = -(-fs.min_rto // 1_000_000) if fs.min_rto is not None else None  # the kernel keeps rto_min in ms
        if i in self.remote:
            topo.url_gateway(i, self.remote[i][0], f["rwnd_init_pkts"], quickack=not f["delayed_ack"])
            return
        topo.route_options(i, f["init_cwnd_pkts"], f["rwnd_init_pkts"], quickack=not f["delayed_ack"], rto_min_ms=rto_ms)
        if fs.tso is not None and fs.tso is not True:
            topo.gso_max_segs(i, 1 if fs.tso is False else int(fs.tso))

    def receive_buffer(self) -> None:
        """Make the initial receive window (route ``initrwnd``, S0: 200 segments) real: Linux
        advertises at most the receive buffer's window share, tcp_win_from_space() of
        ``tcp_rmem[1]`` (half of it: TCP_DEFAULT_SCALING_RATIO, include/net/tcp.h, and
        tcp_adv_win_scale = 1 before Linux 6.7), 64 KB = 45 segments with the default
        131072. The receiver namespace's ``tcp_rmem[1]`` is raised to 2 x rwnd x mss when
        that is larger; autotuning up to ``tcp_rmem[2]`` stays on."""
        ns = self.topo.ns_rcv
        low, default, high = (int(x) for x in netns.in_ns(ns, "sysctl", "-n", "net.ipv4.tcp_rmem").split())
        need = max(2 * f["rwnd_init_pkts"] * f["mss_bytes"] for f in self.flows)
        if need > default:
            default, high = need, max(high, need)
            netns.sysctls(ns, {"net.ipv4.tcp_rmem": f"{low} {default} {high}"})
        self.applied["receiver_tcp_rmem"] = [low, default, high]

    def readback(self, i: int) -> dict[str, Any]:
        """What the kernel holds for flow ``i`` after apply_stack: its routes and gso_max_segs."""
        topo = self.topo
        if i in self.remote:
            return {"receiver_route": netns.ip("route", "show", f"{self.remote[i][0]}/32", ns=topo.ns_rcv).strip()}
        link = json.loads(netns.ip("-d", "-j", "link", "show", "dev", topo.if_snd[i], ns=topo.ns_snd[i]))[0]
        return {
            "sender_route": netns.ip("route", "show", f"{netns.RECEIVER_IP}/32", ns=topo.ns_snd[i]).strip(),
            "receiver_route": netns.ip("route", "show", f"{netns.sender_ip(i)}/32", ns=topo.ns_rcv).strip(),
            "gso_max_segs": link.get("gso_max_segs"),
        }

    def equalize(self, bases: list[int]) -> tuple[list[int], list[int]]:
        """S0's RTT equalization: pad each path's base RTT up to its flow's RTT, half per direction.
        A path already slower than its target cannot be sped up: SpecError naming the flow's rtt."""
        fwd, rev = [], []
        for i, (f, base) in enumerate(zip(self.flows, bases)):
            if base > f["rtt_ns"]:
                raise SpecError(
                    f"flows.{i}.rtt",
                    f"{f['rtt_ns'] / 1e6:g} ms is below the measured base RTT of flow {f['name']}'s path "
                    f"({base / 1e6:.3f} ms, TCP handshake through the bottleneck without added delay); "
                    f"the testbed can only add delay: set rtt >= {base / 1e6:.3f} ms",
                )
            pad = f["rtt_ns"] - base
            fwd.append(pad // 2)
            rev.append(pad - pad // 2)
        return fwd, rev

    def rcvbuf(self, f: dict[str, Any]) -> int:
        return 2 * f["rwnd_max_pkts"] * f["mss_bytes"] if f.get("rwnd_max_pkts") else 0

    def start_server(self, i: int, t0: int, end: int) -> subprocess.Popen[str]:
        """Flow ``i``'s local HTTP service in its sender namespace; a server that does not come
        up is a SpecError naming the flow's kind (nothing is left: the caller cleans up)."""
        f, c = self.flows[i], self.config
        argv = [
            sys.executable, str(HTTPAGENT), "serve", "--ip", netns.sender_ip(i), "--port", str(HTTP_PORT),
            "--cca", self.kernel_cca[i], "--t0", str(t0), "--end", str(end),
            "--sample", str(c["sample_ns"]), "--out", str(self.topo.dir / f"server{i}.json"),
        ]  # fmt: skip
        if f["pacing"]:
            argv.append("--pacing")
        if c.get("trace"):
            argv.append("--trace")
        p = self.spawn(f"server{i}", self.topo.ns_snd[i], argv, stdout_pipe=True)
        try:
            self.wait_ready(f"server{i}", p, timeout_s=20.0)
        except TestbedError as e:
            raise SpecError(f"flows.{i}.kind", f"the HTTP server of flow {f['name']} failed to start ({e})") from None
        return p

    def start_client(self, i: int, t0: int, start: int, stop: int, end: int, n_bins: int, rcvbuf: int) -> subprocess.Popen[str]:
        fs, f = self.fspecs[i], self.flows[i]
        size = f.get("size_bytes") or 0
        if i in self.remote:
            url, extra = str(fs.url), ["--url-mode"]
        else:
            obj = size or (httpagent.BULK_OBJECT_BYTES if fs.http == "2" else httpagent.BULK_OBJECT_H1_BYTES)
            url, extra = f"http://{netns.sender_ip(i)}:{HTTP_PORT}{httpagent.PATH_PREFIX}{obj}", []
        argv = [
            sys.executable, str(HTTPAGENT), "fetch", "--url", url, "--http", str(fs.http), "--size", str(size),
            "--rcvbuf", str(rcvbuf), "--t0", str(t0), "--start", str(start), "--stop", str(stop), "--end", str(end),
            "--bin", str(self.config["bin_ns"]), "--nbins", str(n_bins), "--drain", str(HTTP_DRAIN_NS),
            "--out", str(self.topo.dir / f"client{i}.json"), *extra,
        ]  # fmt: skip
        return self.spawn(f"client{i}", self.topo.ns_rcv, argv)

    def http_sender_stats(self, i: int, client: dict[str, Any], stats: dict[str, Any]) -> dict[str, Any]:
        """Sender-side counters of an HTTP flow: the local server's TCP_INFO; for a remote URL
        (whose server is not ours) what the bottleneck saw and the client's TCP_INFO."""
        if i not in self.remote:
            s = json.loads((self.topo.dir / f"server{i}.json").read_text())
            s["start_ns"] = client["start_ns"]
            return dict(s)
        empty: dict[str, list[int]] = {
            k: [] for k in ("time_ns", "cwnd_pkts", "inflight_pkts", "srtt_ns", "pacing_rate_bps", "ssthresh_pkts")
        }
        return {
            "start_ns": client["start_ns"],
            "sent_packets": stats["flow_fwd_packets"][i],
            "retransmissions": stats["flow_retransmitted_segments"][i],
            "min_rtt_ns": client["client_min_rtt_ns"],
            "mean_rtt_ns": float(client["client_rtt_ns"]),
            "rto_count": 0,
            "recoveries": 0,
            "trace": empty,
        }

    def flow_report(
        self,
        bases: list[int],
        fwd: list[int],
        rev: list[int],
        snd: list[dict[str, Any]],
        clients: dict[int, dict[str, Any]],
        stats: dict[str, Any],
    ) -> list[dict[str, Any]]:
        """Per flow: kind, target and measured RTTs, and for HTTP flows the byte cross-check."""
        out = []
        for i, f in enumerate(self.flows):
            fs = self.fspecs[i]
            entry: dict[str, Any] = {
                "name": f["name"],
                "kind": fs.kind,
                "target_rtt_ms": f["rtt_ns"] / 1e6,
                "base_rtt_ms": bases[i] / 1e6,
                "added_delay_ms": (fwd[i] + rev[i]) / 1e6,
                # TCP_INFO over the run: includes queueing behind other flows (a flow starting
                # on a standing queue never sees the path's minimum); path_min_rtt_ms is the
                # equalized path's RTT, measured by handshakes before t0.
                "min_rtt_ms": snd[i]["min_rtt_ns"] / 1e6,
                # the sender's RTO at its last TCP_INFO sample (route rto_min takes effect here)
                "sender_rto_ms": snd[i]["rto_ns"] / 1e6 if snd[i].get("rto_ns") is not None else None,
                "bottleneck_payload_bytes": stats["flow_fwd_payload_bytes"][i],
                "bottleneck_packets": stats["flow_fwd_packets"][i],
                "bottleneck_retransmitted_segments": stats["flow_retransmitted_segments"][i],
            }
            if fs.kind == "http":
                cl = clients[i]
                btl = stats["flow_fwd_payload_bytes"][i]
                entry["min_rtt_source"] = "client TCP_INFO (remote server)" if i in self.remote else "server TCP_INFO"
                entry["http"] = {
                    "version": fs.http,
                    "url": str(fs.url) if fs.url else None,
                    "client_socket_bytes": cl["socket_bytes"],
                    "body_bytes": cl["body_bytes"],
                    "responses": cl["responses"],
                    "client_min_rtt_ms": cl["client_min_rtt_ns"] / 1e6,
                    "bytes_relative_difference": (btl - cl["socket_bytes"]) / cl["socket_bytes"] if cl["socket_bytes"] else None,
                }
                if i in self.remote:
                    entry["not_measured"] = ["rto_count", "recoveries", "trace"]
            out.append(entry)
        return out

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
        """The simulator's raw result shape (raw_result.py) from testbed measurements: every key but
        those in NOT_MEASURED, plus ``testbed``."""
        c = self.config
        link = self.link_series(stats)
        flows, trace = self.flows_and_trace(stats, recv, snd)
        per_link = stats["links"] if c.get("links") else [self.dumbbell_link(stats, link)]
        return {
            "duration_ns": c["duration_ns"],
            "bin_ns": c["bin_ns"],
            "sample_ns": c["sample_ns"],
            "sojourn_bin_ns": c["sojourn_bin_ns"],
            "bottleneck_rate_bps": self.primary_rate_bps(),
            "flows": flows,
            **link,
            "trace": trace,
            "links": self.link_stats(per_link, stats["queue_time_ns"] if not self.kernel else link["queue_time_ns"]),
            "events": 0,
            "data_packets": stats["forwarded_fwd"],
            "wall_ns": wall_ns,
            "testbed": self.testbed_facts(stats, bases, fwd, rev),
        }

    def link_series(self, stats: dict[str, Any]) -> dict[str, Any]:
        """The run's single-queue series: the userspace bottleneck's, or the kernel qdisc's counters."""
        link: dict[str, Any] = {
            k: stats[k]
            for k in (
                "link_tx_bytes",
                "queue_time_ns",
                "queue_packets",
                "queue_bytes",
                "sojourn_bin",
                "sojourn_count",
                "sojourn_sum_ns_per_bin",
                "sojourn_pkts_per_bin",
            )
        }
        if self.kernel:
            # The kernel qdisc's counters (qstats.py); Linux exposes no per-packet
            # sojourn times, so the sojourn histogram and per-bin sums stay empty.
            q = self.kernel_info["qstats"]
            link = {k: q[k] for k in ("link_tx_bytes", "queue_time_ns", "queue_packets", "queue_bytes")}
            link.update(sojourn_bin=[], sojourn_count=[], sojourn_sum_ns_per_bin=[], sojourn_pkts_per_bin=[])
        return link

    def flows_and_trace(
        self, stats: dict[str, Any], recv: dict[str, Any], snd: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
        """Each flow's raw entry from the receiver's and its sender's measurements, and the senders' traces."""
        flows = []
        trace: dict[str, list[int]] = {
            k: [] for k in ("flow", "time_ns", "cwnd_pkts", "inflight_pkts", "srtt_ns", "pacing_rate_bps", "ssthresh_pkts")
        }
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
        return flows, trace

    def testbed_facts(self, stats: dict[str, Any], bases: list[int], fwd: list[int], rev: list[int]) -> dict[str, Any]:
        """The raw result's ``testbed`` entry: the host, the delays set and the bottleneck's own counters."""
        return {
            "run_id": self.topo.id,
            "kernel": os.uname().release,
            "load_avg_1min": os.getloadavg()[0],
            "base_rtt_ms": [b / 1e6 for b in bases],
            "added_delay_ms": {"forward": [x / 1e6 for x in fwd], "reverse": [x / 1e6 for x in rev]},
            "bottleneck": {
                k: stats[k]
                for k in (
                    "late_count",
                    "late_p50_us",
                    "late_p99_us",
                    "late_max_ns",
                    "late_mean_ns",
                    "rx_socket_drops",
                    "tx_errors",
                    "oversize_frames",
                    "forwarded_rev",
                )
            }
            | {"port_order": stats.get("port_order", "port")}  # as applied (collect checks it)
            | ({"unstamped_frames": stats["unstamped_frames"]} if "unstamped_frames" in stats else {})
            # service the link lost to the bottleneck's stalls within the window (shaper.rs)
            | ({"stall_lost_ns": stats["stall_lost_ns"]} if "stall_lost_ns" in stats else {})
            # each stall over the whole run, [end of the transmission before it (ns after t0), service lost (ns)]
            | ({"stalls": stats.get("stalls", [])} if "stall_lost_ns" in stats else {}),
            "bottleneck_path": "kernel" if self.kernel else "userspace",
            **({"kernel_bottleneck": self.kernel_summary()} if self.kernel else {}),
        }

    def primary_rate_bps(self) -> int:
        """The rate of the link whose series are the run's single-queue statistics."""
        c = self.config
        if not c.get("links"):
            return int(c["bottleneck"]["rate_bps"])
        return topology.link_rate_bps(c["links"][topology.primary_link(c)])

    def dumbbell_link(self, stats: dict[str, Any], link: dict[str, Any]) -> dict[str, Any]:
        """The dumbbell's one link ("bottleneck") from the run's single-queue series (the userspace
        bottleneck's or the kernel qdisc's) and the drops per flow; marks as the bottleneck counted them."""
        own = (stats.get("links") or [{}])[0]
        return {
            "name": "bottleneck",
            "rate_bps": self.primary_rate_bps(),
            "tx_bytes": link["link_tx_bytes"],
            "queue_packets": link["queue_packets"],
            "queue_bytes": link["queue_bytes"],
            "drops": int(sum(stats["drops"])),
            "marks": int(own.get("marks", 0)),
            "loss_drops": 0,
            "delivered_bytes": int(sum(link["link_tx_bytes"])),
        }

    def link_stats(self, links: list[dict[str, Any]], times: list[int]) -> list[dict[str, Any]]:
        """``links`` as the simulator reports them (result.rs ``LinkStats``): utilisation over the
        analysis window's whole bins (every bin it touches if none lies within it), mean queue over
        the samples in the window."""
        c = self.config
        bin_ns, duration = c["bin_ns"], c["duration_ns"]
        ws, we = c["window_start_ns"], c["window_end_ns"]
        out = []
        for lk in links:
            nbins = len(lk["tx_bytes"])
            spans = [(b * bin_ns, min((b + 1) * bin_ns, duration)) for b in range(nbins)]
            bins = [b for b, (a, e) in enumerate(spans) if a >= ws and e <= we] or [
                b for b, (a, e) in enumerate(spans) if a < we and e > ws
            ]
            ns = sum(spans[b][1] - spans[b][0] for b in bins)
            sent = sum(lk["tx_bytes"][b] for b in bins)
            inside = [i for i, t in enumerate(times[: len(lk["queue_packets"])]) if ws <= t < we]
            out.append(
                {
                    "name": lk["name"],
                    "rate_bps": lk["rate_bps"],
                    "utilisation": sent * 8 * 1e9 / (lk["rate_bps"] * ns) if ns and lk["rate_bps"] else 0.0,
                    "mean_queue_packets": sum(lk["queue_packets"][i] for i in inside) / len(inside) if inside else 0.0,
                    "mean_queue_bytes": sum(lk["queue_bytes"][i] for i in inside) / len(inside) if inside else 0.0,
                    **{k: lk[k] for k in ("drops", "marks", "loss_drops", "delivered_bytes")},
                }
            )
        return out

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
        self.bpf.close()
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
    r.ccas = plan_ccas(spec)
    ports = sorted({ch.cca for ch in r.ccas if ch.impl == "bpf"})
    if ports:
        try:
            r.bpf_objects = bpfcc.build(ports, say=lambda line: print(f"note: {line}", file=sys.stderr))
        except bpfcc.BpfError as e:
            first = [ch.cca for ch in r.ccas].index(ports[0])
            raise TestbedUnavailable(str(e), field=f"flows.{spec.expand_flows()[first][0]}.cca") from None
    r.remote = check_http_flows(spec)
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
    for entry, m, tf in zip(result.summary["flows"], min_rtts, raw["testbed"]["flows"]):
        entry["min_rtt_ms"] = m
        entry["target_rtt_ms"] = tf["target_rtt_ms"]
        entry["path_min_rtt_ms"] = tf["path_min_rtt_ms"]
        entry["kind"] = tf["kind"]
    if r.kernel:  # no per-packet sojourn from the kernel: not measured, not zero
        result.link["sojourn_packets"] = float("nan")
    return result
