"""Network namespaces, veth links and leftover clean-up for the testbed.

Topology of one run (``ID`` = 4 random hex digits, not derived from the seed)::

    ccf-ID-s0 (sender 0) --veth-- +
    ccf-ID-s1 (sender 1) --veth-- + ccf-ID-b (bottleneck: ccfair-bottleneck) --veth-- ccf-ID-r (receiver)
    ...                           +

All hosts share one IPv4 subnet (10.77.0.0/16, no router): the receiver is
10.77.0.1, sender ``i`` is 10.77.1.0 + i + 1. The bottleneck's ports have no
address and the kernel does not forward (ip_forward is 0 in a new
namespace); ccfair-bottleneck bridges them in user space. Neighbour entries
are static, so there is no ARP. IPv6 is disabled in every namespace.

Offloads: TSO/GSO/GRO, scatter-gather and TX checksum offload are switched
off on every veth through the legacy ethtool ioctls (SIOCETHTOOL,
linux/ethtool.h: ETHTOOL_STXCSUM/SSG/STSO/SGSO/SGRO), so every frame the
bottleneck sees is one MTU-sized packet with a valid checksum. No ethtool
binary is needed.

Remote-URL flows: flow ``i`` with a ``url`` turns its sender namespace into
a gateway: a veth pair ``ccf-ID-gI`` (gateway) / ``ccf-ID-uI`` (host namespace) on a /30
of 100.64.0.0/10 (RFC 6598 shared address space) derived from the run id and ``i``; the
gateway forwards and masquerades (nftables, in its own namespace) the receiver's
connection, and the host namespace forwards it to its uplink, masquerading it there too
(an nftables table ``ccf_ID`` in the host namespace). The receiver routes the URL's
address via the gateway, so the download crosses the bottleneck like a local flow. The
host table and ``net.ipv4.ip_forward`` (switched on only if it was off, its old value kept
in /run/ccfair/host-ip_forward.orig, switched back by the last run that needed it) are
recorded in the state file and removed by
:meth:`Topology.destroy` or, after a crash, by :func:`clean_stale`.

Robustness: before anything is created, a state file
``/run/ccfair/ID.json`` records the run's pid (with its start time, against
pid reuse), namespaces and helper processes. :func:`clean_stale` (run
before every testbed run, and by ``ccfair testbed clean``) removes whatever
a dead run (e.g. one killed with SIGKILL) left behind: its processes,
namespaces (after killing every process still inside), ``ccf-`` links and
its files under /run/ccfair; it never touches a run whose owner is alive,
re-reading that just before each removal. A run registers (its first state
file, its directory) and a clean-up reads liveness and removes files under
one lock (:func:`registry_lock`, flock(2) on the /run/ccfair directory,
released by the kernel when its holder dies, kill -9 included): without it a
clean-up could read a starting run's state file as missing and then delete
the file and directory the run wrote meanwhile.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import ipaddress
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
from pathlib import Path
from typing import Any, Iterator

PREFIX = "ccf-"
STATE_DIR = Path(os.environ.get("CCFAIR_STATE_DIR", "/run/ccfair"))
SUBNET_PREFIX_LEN = 16
RECEIVER_IP = "10.77.0.1"
_FIRST_SENDER = int(ipaddress.IPv4Address("10.77.1.0"))
MTU_BYTES = 1500

SIOCETHTOOL = 0x8946
ETHTOOL_STXCSUM = 0x17
ETHTOOL_SSG = 0x19
ETHTOOL_STSO = 0x1F
ETHTOOL_SGSO = 0x24
ETHTOOL_SGRO = 0x2C
ETHTOOL_GTSO = 0x1E
ETHTOOL_GGSO = 0x23
IFREQ_BYTES = 40


class NetnsError(RuntimeError):
    """An ip(8) command or a kernel call failed while building the testbed."""


def sender_ip(i: int) -> str:
    return str(ipaddress.IPv4Address(_FIRST_SENDER + i + 1))


def sender_mac(i: int) -> str:
    return f"02:cc:00:00:{(i >> 8) & 0xFF:02x}:{i & 0xFF:02x}"


RECEIVER_MAC = "02:cc:00:01:00:00"


def ip(*args: str, ns: str | None = None, check: bool = True) -> str:
    """Run ``ip [-n ns] args``; raise :class:`NetnsError` with its stderr on failure."""
    cmd = ["ip"] + (["-n", ns] if ns else []) + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise NetnsError(f"`{' '.join(cmd)}` failed: {p.stderr.strip()}")
    return p.stdout


def in_ns(ns: str, *cmd: str, check: bool = True) -> str:
    p = subprocess.run(["ip", "netns", "exec", ns, *cmd], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise NetnsError(f"`{' '.join(cmd)}` in {ns} failed: {p.stderr.strip()}")
    return p.stdout


def sysctls(ns: str, values: dict[str, str | int]) -> None:
    in_ns(ns, "sysctl", "-q", "-w", *[f"{k}={v}" for k, v in values.items()])


def offloads_off(ifname: str) -> None:
    """Switch off TX checksum, SG, TSO, GSO and GRO on ``ifname`` (current namespace)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for cmd in (ETHTOOL_SGRO, ETHTOOL_SGSO, ETHTOOL_STSO, ETHTOOL_SSG, ETHTOOL_STXCSUM):
            _ethtool(s, ifname, cmd, 0)
        for cmd in (ETHTOOL_GTSO, ETHTOOL_GGSO):
            if _ethtool(s, ifname, cmd, 0) != 0:
                raise NetnsError(f"{ifname}: offload {cmd:#x} is still on after switching it off")
    finally:
        s.close()


def _ethtool(s: socket.socket, ifname: str, cmd: int, value: int) -> int:
    ev = ctypes.create_string_buffer(struct.pack("II", cmd, value), 8)
    ifr = struct.pack("16sP", ifname.encode(), ctypes.addressof(ev))
    ifr += bytes(IFREQ_BYTES - len(ifr))
    try:
        fcntl.ioctl(s.fileno(), SIOCETHTOOL, ifr)
    except OSError as e:
        raise NetnsError(f"ethtool ioctl {cmd:#x} on {ifname}: {e}") from None
    return struct.unpack("II", ev.raw)[1]


# ------------------------------------------------------------------ state


def _proc_start(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks (field 22 of /proc/PID/stat), None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def _alive(pid: int, start: int | None) -> bool:
    return start is not None and _proc_start(pid) == start


def _running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (a killed process is gone once it is a
    zombie waiting for its reaper: it holds no namespace, socket or memory any more)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _kill_and_wait(pids: list[int], timeout_s: float = 2.0) -> list[int]:
    """SIGKILL ``pids`` and wait (up to ``timeout_s``) until none is running; returns those killed."""
    killed = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout_s
    while any(_running(p) for p in killed) and time.monotonic() < deadline:
        time.sleep(0.01)
    return killed


def proc_id(pid: int) -> list[int]:
    """``[pid, start time]``: identifies a process even after its pid is reused."""
    return [pid, _proc_start(pid) or 0]


def list_namespaces() -> list[str]:
    out = ip("netns", "list", check=False)
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def list_links() -> list[str]:
    out = ip("-o", "link", "show", check=False)
    names = []
    for line in out.splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2:
            names.append(parts[1].strip().split("@")[0])
    return names


def kill_namespace(ns: str) -> None:
    """Kill every process inside ``ns``, then delete it."""
    pids = ip("netns", "pids", ns, check=False).split()
    _kill_and_wait([int(p) for p in pids if p.isdigit()])
    for _ in range(50):
        if ip("netns", "pids", ns, check=False).split():
            time.sleep(0.02)
        else:
            break
    ip("netns", "del", ns, check=False)


def nft(*args: str, ns: str | None = None, check: bool = True) -> str:
    """Run ``nft args`` (in ``ns`` if given); raise :class:`NetnsError` on failure."""
    cmd = (["ip", "netns", "exec", ns] if ns else []) + ["nft", *args]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise NetnsError(f"`{' '.join(cmd)}` failed: {p.stderr.strip()}")
    return p.stdout


IP_FORWARD = Path("/proc/sys/net/ipv4/ip_forward")
#: Host-namespace nftables table of run ``ID``: ``ccf_ID`` (nft names take no '-').
HOST_TABLE_PREFIX = "ccf_"
_URL_NET = int(ipaddress.IPv4Address("100.64.0.0"))
#: Flows per run that may have a URL (4 bits of the /30 numbering).
MAX_URL_FLOWS = 16


def url_link_ips(run_id: str, i: int) -> tuple[str, str]:
    """(host side, gateway side) addresses of flow ``i``'s /30 in 100.64.0.0/10."""
    base = _URL_NET + (int(run_id, 16) << 6) + (i << 2)
    return str(ipaddress.IPv4Address(base + 1)), str(ipaddress.IPv4Address(base + 2))


#: The host's ``ip_forward`` before the first URL run switched it on. A file of its own (not
#: a run's state file, which a run's clean-up may delete), removed when the value is restored.
FORWARD_MARK = STATE_DIR / "host-ip_forward.orig"


def _hold_host_forwarding() -> bool:
    """Switch the host's ``ip_forward`` on, remembering the old value once; True if it was off."""
    if IP_FORWARD.read_text().strip() == "1":
        return False
    if not FORWARD_MARK.exists():
        FORWARD_MARK.write_text("0")
    return True


def _release_host_forwarding(st: dict[str, Any], live: Any) -> bool:
    """Put the host's ``ip_forward`` back (FORWARD_MARK) when no live run other than
    ``st`` needs forwarding; True if it was restored."""
    if not FORWARD_MARK.exists():
        return False
    others = [o for o in _states() if o.get("id") != st.get("id") and o.get("id") in live and o.get("host_forwarding")]
    if others:
        return False
    try:
        IP_FORWARD.write_text(FORWARD_MARK.read_text().strip() or "0")
        FORWARD_MARK.unlink(missing_ok=True)
    except OSError:
        return False
    return True


def _states() -> list[dict[str, Any]]:
    out = []
    if STATE_DIR.is_dir():
        for f in STATE_DIR.glob("*.json"):
            try:
                out.append(json.loads(f.read_text()))
            except (OSError, ValueError):
                continue
    return out


def clean_host_state(st: dict[str, Any], live: Any) -> list[str]:
    """Undo what dead run ``st`` (its state file) changed in the host namespace: its
    nftables tables, and ``ip_forward`` if it switched it on and no live run needs it."""
    removed = []
    for table in st.get("host_tables", []):
        if table in host_tables():
            nft("delete", "table", "ip", table, check=False)
            removed.append(f"nftables table ip {table}")
    if _release_host_forwarding(st, live):
        removed.append("net.ipv4.ip_forward = 1 (set by that run)")
    return removed


def leftover_bpf() -> list[str]:
    """BPF congestion controls a dead run registered that are still registered. Normally none:
    a run holds the only descriptor of each one's link, which the kernel closes when the run
    dies (ccfair.testbed.bpfcc); one left would mean a process inherited it."""
    from ccfair.testbed import bpfcc

    return bpfcc.registered_of_dead_runs(LIVE_NOW)


def clean_orphan_host_tables(live: Any) -> list[str]:
    """Delete ``ccf_ID`` host tables of runs that are not live (also without a state file),
    and restore ``ip_forward`` when no live run needs it (also if a dead run's state file
    was removed by a clean-up that did not know about it)."""
    removed = []
    for table in host_tables():
        if table[len(HOST_TABLE_PREFIX) :] not in live:
            nft("delete", "table", "ip", table, check=False)
            removed.append(f"nftables table ip {table}")
    if _release_host_forwarding({}, live):
        removed.append("net.ipv4.ip_forward back to its value before the URL runs")
    return removed


def host_tables() -> list[str]:
    """nftables tables (family ip) of the host namespace that ccfair runs created."""
    if shutil.which("nft") is None:
        return []
    out = nft("list", "tables", "ip", check=False)
    names = [line.split()[-1] for line in out.splitlines() if line.startswith("table ip ")]
    return [n for n in names if n.startswith(HOST_TABLE_PREFIX)]


def run_id_of(name: str) -> str | None:
    """``ccf-1a2b-s0`` -> ``1a2b``."""
    if not name.startswith(PREFIX):
        return None
    rest = name[len(PREFIX) :]
    return rest.split("-", 1)[0] or None


def _state(rid: str) -> dict[str, Any] | None:
    """The state file of run ``rid``, or None (missing or unreadable)."""
    try:
        st = json.loads((STATE_DIR / f"{rid}.json").read_text())
    except (OSError, ValueError):
        return None
    return st if isinstance(st, dict) else None


def is_live(rid: str) -> bool:
    """True when run ``rid``'s owner is alive (read now: a run records its state file before
    it creates anything, so whatever of a live run exists has a state file naming a live owner)."""
    st = _state(rid)
    return st is not None and _alive(*st["owner"])


def live_owners() -> dict[str, int]:
    """Run ids whose owning process is alive, with the owner's pid."""
    live: dict[str, int] = {}
    if STATE_DIR.is_dir():
        for f in STATE_DIR.glob("*.json"):
            st = _state(f.stem)
            if st is not None and _alive(*st["owner"]):
                live[st["id"]] = st["owner"][0]
    return live


def live_runs() -> set[str]:
    """Run ids whose owning process is alive."""
    return set(live_owners())


class _LiveNow:
    """``rid in LIVE_NOW``: is run ``rid`` live at this moment (:func:`is_live`, read on every
    test, not a snapshot: a run started after a snapshot would look dead)."""

    def __contains__(self, rid: object) -> bool:
        return isinstance(rid, str) and is_live(rid)


LIVE_NOW = _LiveNow()


def _run_files(rid: str) -> list[Path]:
    """The files of run ``rid`` under STATE_DIR: state file, its .tmp, the run directory."""
    return [STATE_DIR / f"{rid}.json", STATE_DIR / f"{rid}.tmp", STATE_DIR / rid]


def _remove_run_files(rid: str) -> bool:
    removed = False
    for p in _run_files(rid):
        if p.is_dir():
            for q in p.iterdir():
                q.unlink(missing_ok=True)
            p.rmdir()
            removed = True
        elif p.exists():
            p.unlink(missing_ok=True)
            removed = True
    return removed


def is_run_id(rid: str | None) -> bool:
    """A run id as :class:`Topology` makes them: 4 lowercase hex digits (``ccf-probe123``,
    a test's probe namespace, is not one)."""
    return rid is not None and len(rid) == 4 and all(c in "0123456789abcdef" for c in rid)


def _dead_run_ids() -> set[str]:
    """Ids of runs with something left under STATE_DIR (state file, .tmp or directory)."""
    ids: set[str] = set()
    if STATE_DIR.is_dir():
        for p in STATE_DIR.iterdir():
            rid = p.name.split(".", 1)[0]
            if is_run_id(rid):
                ids.add(rid)
    return ids


@contextlib.contextmanager
def registry_lock() -> Iterator[None]:
    """Hold the registry lock (module docstring): flock(2), exclusive and blocking, on the state
    directory itself (no file of its own to leave behind); the kernel drops it when the
    descriptor is closed or the holder dies."""
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    fd = os.open(STATE_DIR, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def clean_stale() -> list[str]:
    """Remove what dead runs left behind; returns a description of what was removed.
    Holds :func:`registry_lock` throughout, so no run registers meanwhile.

    Only ccfair's own things: processes recorded in a dead run's state file
    (bottleneck, agents, servers other modules start through
    :meth:`Topology.record_process`), its host nftables table (``ccf_ID``) and
    the ``ip_forward`` it switched on (unless a live run needs it),
    ``ccf-ID-*`` namespaces (after killing every process inside) and
    ``ccf-ID-*`` links in this namespace, and the run's files under
    STATE_DIR. Liveness is re-read from the state file just before each
    removal, so a run that starts meanwhile is never touched.
    """
    with registry_lock():
        return _clean_stale_locked()


def _clean_stale_locked() -> list[str]:
    removed: list[str] = []
    for rid in sorted(_dead_run_ids()):
        st = _state(rid)
        if st is not None and _alive(*st["owner"]):
            continue
        st = st or {}
        victims = [pid for pid, start in st.get("processes", []) if _alive(pid, start) and _running(pid)]
        if victims and not is_live(rid):
            removed += [f"process {pid}" for pid in _kill_and_wait(victims)]
        if not is_live(rid):
            removed += clean_host_state(st, LIVE_NOW)
    for ns in list_namespaces():
        owner = run_id_of(ns)
        if owner is not None and is_run_id(owner) and not is_live(owner):
            kill_namespace(ns)
            removed.append(f"namespace {ns}")
    for link in list_links():
        owner = run_id_of(link)
        if owner is not None and is_run_id(owner) and not is_live(owner):
            ip("link", "del", link, check=False)
            removed.append(f"link {link}")
    removed += clean_orphan_host_tables(LIVE_NOW)
    if _release_host_forwarding({}, LIVE_NOW):  # its run's state file already gone
        removed.append("net.ipv4.ip_forward restored (no live run needs it)")
    for rid in sorted(_dead_run_ids()):
        if not is_live(rid) and _remove_run_files(rid):
            removed.append(f"run files {STATE_DIR / rid}*")
    return removed


class Topology:
    """Builds and removes one run's namespaces and links; records them in the state file."""

    def __init__(self, n_senders: int) -> None:
        self.n = n_senders
        self.id = os.urandom(2).hex()
        while any(run_id_of(x) == self.id for x in list_namespaces()) or any(p.exists() for p in _run_files(self.id)):
            self.id = os.urandom(2).hex()
        base = f"{PREFIX}{self.id}"
        self.ns_btl = f"{base}-b"
        self.ns_rcv = f"{base}-r"
        self.ns_snd = [f"{base}-s{i}" for i in range(n_senders)]
        # Interface names (<= 15 chars): sender side sI / bottleneck side bI; receiver r / br.
        self.if_snd = [f"{base}-s{i}" for i in range(n_senders)]
        self.if_btl = [f"{base}-b{i}" for i in range(n_senders)]
        self.if_rcv = f"{base}-r"
        self.if_btl_rcv = f"{base}-br"
        self.dir = STATE_DIR / self.id
        self.state_file = STATE_DIR / f"{self.id}.json"
        self.processes: list[list[int]] = []
        #: Host-namespace state of remote-URL flows (see the module docstring).
        self.host_table = f"{HOST_TABLE_PREFIX}{self.id}"
        self.host_tables: list[str] = []
        self.host_forwarding = False
        self.ip_forward_set = False
        #: Kernel names of the BPF congestion controls this run registered (ccfair.testbed.bpfcc).
        self.bpf_ccas: list[str] = []
        #: True once :meth:`register` wrote this run's state file.
        self.registered = False

    # ------------------------------------------------------------ state file

    def save_state(self) -> None:
        st: dict[str, Any] = {
            "id": self.id,
            "owner": proc_id(os.getpid()),
            "namespaces": [self.ns_btl, self.ns_rcv, *self.ns_snd],
            "processes": self.processes,
            "host_tables": self.host_tables,
            "host_forwarding": self.host_forwarding,
            "ip_forward_set": self.ip_forward_set,
            "bpf_ccas": self.bpf_ccas,
        }
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(st))
        os.replace(tmp, self.state_file)

    def record_bpf(self, name: str) -> None:
        """Record a BPF congestion control before it is registered (its link dies with this
        process, so nothing of it outlives the run; the name tells `ccfair testbed clean` whose it is)."""
        self.bpf_ccas.append(name)
        self.save_state()

    def record_process(self, pid: int) -> None:
        self.processes.append(proc_id(pid))
        self.save_state()

    # ------------------------------------------------------------ build / remove

    def register(self) -> None:
        """The state file, then the run directory, under :func:`registry_lock`. Raises NetnsError
        if another run took this id meanwhile (chosen in ``__init__`` without the lock)."""
        with registry_lock():
            if any(p.exists() for p in _run_files(self.id)) or any(run_id_of(x) == self.id for x in list_namespaces()):
                raise NetnsError(f"run id {self.id} was taken by a run that started at the same time; run again")
            self.save_state()  # first, so a crash from here on is cleaned by the next run
            self.registered = True
            self.dir.mkdir(exist_ok=True)

    def create(self) -> None:
        self.register()
        for ns in (self.ns_btl, self.ns_rcv, *self.ns_snd):
            ip("netns", "add", ns)
            sysctls(ns, {"net.ipv6.conf.all.disable_ipv6": 1, "net.ipv6.conf.default.disable_ipv6": 1})
            ip("link", "set", "lo", "up", ns=ns)
        pairs = [(self.if_snd[i], self.ns_snd[i], sender_mac(i), self.if_btl[i]) for i in range(self.n)]
        pairs.append((self.if_rcv, self.ns_rcv, RECEIVER_MAC, self.if_btl_rcv))
        for host_if, host_ns, mac, btl_if in pairs:
            ip("link", "add", host_if, "mtu", str(MTU_BYTES), "address", mac, "type", "veth", "peer", "name", btl_if, "mtu", str(MTU_BYTES))
            offloads_off(host_if)
            offloads_off(btl_if)
            ip("link", "set", host_if, "netns", host_ns)
            ip("link", "set", btl_if, "netns", self.ns_btl)
            ip("link", "set", btl_if, "up", ns=self.ns_btl)
        sysctls(self.ns_btl, {"net.ipv4.ip_forward": 0})
        ip("addr", "add", f"{RECEIVER_IP}/{SUBNET_PREFIX_LEN}", "dev", self.if_rcv, ns=self.ns_rcv)
        ip("link", "set", self.if_rcv, "up", ns=self.ns_rcv)
        for i in range(self.n):
            ns, dev = self.ns_snd[i], self.if_snd[i]
            ip("addr", "add", f"{sender_ip(i)}/{SUBNET_PREFIX_LEN}", "dev", dev, ns=ns)
            ip("link", "set", dev, "up", ns=ns)
            ip("neigh", "replace", RECEIVER_IP, "lladdr", RECEIVER_MAC, "dev", dev, "nud", "permanent", ns=ns)
            ip("neigh", "replace", sender_ip(i), "lladdr", sender_mac(i), "dev", self.if_rcv, "nud", "permanent", ns=self.ns_rcv)

    def route_options(self, i: int, init_cwnd: int, init_rwnd: int, quickack: bool, rto_min_ms: int | None = None) -> None:
        """Per-flow route metrics as S0 sets them: initcwnd (and rto_min) at the sender,
        initrwnd (and quickack, i.e. no delayed ACKs) at the receiver (ip-route(8))."""
        rto = ["rto_min", f"{rto_min_ms}ms"] if rto_min_ms is not None else []
        ip("route", "replace", f"{RECEIVER_IP}/32", "dev", self.if_snd[i], "initcwnd", str(init_cwnd), *rto, ns=self.ns_snd[i])
        extra = ["quickack", "1"] if quickack else []
        ip("route", "replace", f"{sender_ip(i)}/32", "dev", self.if_rcv, "initrwnd", str(init_rwnd), *extra, ns=self.ns_rcv)

    def timestamp_offsets(self, random_offsets: bool) -> None:
        """TCP timestamps in every end host's namespace: with a random TSval offset per
        connection (net.ipv4.tcp_timestamps = 1, Linux's default since 4.10) or without
        (= 2); Documentation/networking/ip-sysctl.rst, "tcp_timestamps"."""
        for ns in (*self.ns_snd, self.ns_rcv):
            sysctls(ns, {"net.ipv4.tcp_timestamps": 1 if random_offsets else 2})

    def gso_max_segs(self, i: int, segs: int) -> None:
        """At most ``segs`` segments per TSO/GSO burst of flow ``i``'s sender: the device's
        ``gso_max_segs`` (ip-link(8)), which caps the segments TCP puts in one skb
        (net/core/sock.c sk_setup_caps -> sk_gso_max_segs; tcp_output.c tcp_tso_autosize).
        TCP builds GSO skbs whatever the device offers; with device GSO off they are split
        into MTU frames just before the veth, back to back: one burst."""
        ip("link", "set", "dev", self.if_snd[i], "gso_max_segs", str(segs), ns=self.ns_snd[i])

    def url_gateway(self, i: int, remote_ip: str, init_rwnd: int, quickack: bool) -> None:
        """Make flow ``i``'s sender namespace the receiver's gateway to ``remote_ip`` through
        the host namespace (module docstring), with the receiver's route metrics initrwnd
        and quickack on the route to it. Needs the ``nft`` command (nftables)."""
        if i >= MAX_URL_FLOWS:
            raise NetnsError(f"at most {MAX_URL_FLOWS} flows of a run can download a URL")
        ns, gw_if, host_if = self.ns_snd[i], f"{PREFIX}{self.id}-g{i}", f"{PREFIX}{self.id}-u{i}"
        host_ip, gw_ip = url_link_ips(self.id, i)
        # Recorded before the first change, so a crash from here on is cleaned up.
        self.host_forwarding = True
        if self.host_table not in self.host_tables:
            self.host_tables.append(self.host_table)
        self.save_state()
        ip("link", "add", host_if, "mtu", str(MTU_BYTES), "type", "veth", "peer", "name", gw_if, "mtu", str(MTU_BYTES))
        offloads_off(host_if)
        offloads_off(gw_if)
        ip("link", "set", gw_if, "netns", ns)
        ip("addr", "add", f"{host_ip}/30", "dev", host_if)
        ip("link", "set", host_if, "up")
        ip("addr", "add", f"{gw_ip}/30", "dev", gw_if, ns=ns)
        ip("link", "set", gw_if, "up", ns=ns)
        ip("route", "replace", "default", "via", host_ip, "dev", gw_if, ns=ns)
        sysctls(ns, {"net.ipv4.ip_forward": 1})
        nft("add table ip ccfair", ns=ns)
        nft("add chain ip ccfair post { type nat hook postrouting priority 100 ; }", ns=ns)
        nft(f'add rule ip ccfair post oifname "{gw_if}" masquerade', ns=ns)
        extra = ["quickack", "1"] if quickack else []
        ip(
            "route",
            "replace",
            f"{remote_ip}/32",
            "via",
            sender_ip(i),
            "dev",
            self.if_rcv,
            "initrwnd",
            str(init_rwnd),
            *extra,
            ns=self.ns_rcv,
        )
        nft(f"add table ip {self.host_table}")
        nft(f"add chain ip {self.host_table} post {{ type nat hook postrouting priority 100 ; }}")
        nft(f'add rule ip {self.host_table} post ip saddr {gw_ip} oifname != "{host_if}" masquerade')
        self.ip_forward_set = _hold_host_forwarding()
        self.save_state()
        if self.ip_forward_set:
            IP_FORWARD.write_text("1")

    def destroy(self) -> None:
        """Kill recorded processes, delete namespaces (and with them the links), the state;
        nothing if this run never registered (what carries its id is another run's)."""
        if not self.registered:
            return
        for pid, start in self.processes:
            if _alive(pid, start):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for ns in (self.ns_btl, self.ns_rcv, *self.ns_snd):
            if ns in list_namespaces():
                kill_namespace(ns)
        for link in list_links():
            if run_id_of(link) == self.id:
                ip("link", "del", link, check=False)
        for table in self.host_tables:
            if table in host_tables():
                nft("delete", "table", "ip", table, check=False)
        _release_host_forwarding(
            {"id": self.id, "ip_forward_set": self.ip_forward_set, "host_forwarding": self.host_forwarding}, live_runs()
        )
        if self.dir.is_dir():
            for p in self.dir.iterdir():
                p.unlink(missing_ok=True)
            self.dir.rmdir()
        self.state_file.unlink(missing_ok=True)
