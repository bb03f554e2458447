"""The testbed backend: real Linux TCP in network namespaces (docs/testbed.md).

Tests marked by ``needs_netns`` create namespaces and run kernel TCP for a few
seconds; they need root (CI runs as root) and skip only when the kernel lacks
network namespaces or veth. The ccfair-bottleneck binary must be built
(scripts/test.sh does it); a missing binary is a failure, not a skip.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from ccfair import Spec
from ccfair.cli import main
from ccfair.errors import SpecError
from ccfair.testbed import agent, netns, runner, tc

ROOT = Path(__file__).resolve().parent.parent


def _netns_support() -> str | None:
    """None if namespaces and veth work here, else why not."""
    if os.geteuid() != 0:
        return "needs root to create network namespaces (CI runs as root)"
    name = f"{netns.PREFIX}probe{os.getpid() % 10000}"
    p = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if p.returncode != 0:
        return f"the kernel has no network namespaces: {p.stderr.strip()}"
    try:
        p = subprocess.run(["ip", "-n", name, "link", "add", "v0", "type", "veth", "peer", "name", "v1"], capture_output=True, text=True)
        if p.returncode != 0:
            return f"the kernel has no veth: {p.stderr.strip()}"
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return None


_WHY_NOT = _netns_support()
needs_netns = pytest.mark.skipif(_WHY_NOT is not None, reason=_WHY_NOT or "")


def spec(duration: str = "8s", window_start: str = "2s", trace: bool = False, **flow: object) -> Spec:
    return Spec.from_dict(
        {
            "name": "testbed",
            "duration": duration,
            "trace": trace,
            "window": {"start": window_start},
            "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
            "flows": [{"cca": "cubic", "rtt": "50ms", **flow}],
        }
    )


def leftovers() -> list[str]:
    """Everything of ours a run could leave: namespaces, links, state files, processes.

    Runs that are alive (their owner's pid lives: another user's, or another test
    session's, on a shared machine) are not leftovers and are skipped."""
    live = netns.live_runs()

    def dead(name: str) -> bool:
        return netns.run_id_of(name) not in live

    found = [f"namespace {n}" for n in netns.list_namespaces() if n.startswith(netns.PREFIX) and dead(n)]
    found += [f"link {n}" for n in netns.list_links() if n.startswith(netns.PREFIX) and dead(n)]
    if netns.STATE_DIR.is_dir():
        forwarding = any((netns._state(r) or {}).get("host_forwarding") for r in live)
        found += [
            f"state {p.name}"
            for p in netns.STATE_DIR.iterdir()
            if p.name.split(".")[0] not in live and not (p == netns.FORWARD_MARK and forwarding)
        ]
    live_pids = {pid for rid in live for pid, _ in (netns._state(rid) or {}).get("processes", [])}
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid() or int(pid) in live_pids:
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        ours = (Path(argv[0]).name == "ccfair-bottleneck" and argv[0].startswith(str(ROOT))) or any(
            a.startswith(str(ROOT)) and a.endswith(("testbed/agent.py", "testbed/qstats.py", "testbed/httpagent.py")) for a in argv
        )  # by program of this checkout, not by substring (a `cargo test -p ccfair-bottleneck`, or another checkout's server, is not ours)
        if ours:
            found.append(f"process {pid}: {' '.join(argv)}")
    return found


# ---------------------------------------------------------------- without namespaces


def test_without_root_one_line_error_exit_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    f = tmp_path / "x.toml"
    f.write_text('duration = "5s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\ncca = "cubic"\nrtt = "50ms"\n')
    code = main(["run", str(f), "--backend", "testbed"])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("error: backend: the testbed needs root")


def test_unknown_backend_names_the_allowed_ones(capsys, tmp_path):
    f = tmp_path / "x.toml"
    f.write_text('duration = "5s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\ncca = "cubic"\nrtt = "50ms"\n')
    assert main(["run", str(f), "--backend", "ns3"]) == 2
    assert "allowed: sim, testbed" in capsys.readouterr().err


def test_cca_missing_from_the_kernel_names_the_flow(monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("the CCA check runs after the root check")
    monkeypatch.setattr(runner, "kernel_ccas", lambda: ["reno", "cubic"])
    s = Spec.from_dict(
        {
            "duration": "5s",
            "bottleneck": {"rate": "10Mbit"},
            "flows": [{"cca": "cubic", "rtt": "50ms"}, {"cca": "bbr", "rtt": "50ms"}],
        }
    )
    with pytest.raises(runner.TestbedUnavailable) as e:
        runner.check_available(s)
    assert e.value.field == "flows.1.cca"
    assert "offers: reno, cubic" in e.value.message


def test_tcp_info_offsets_match_linux_struct_tcp_info():
    """Send 200 kB over loopback; linux/tcp.h's fields must read back consistently."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    payload = 200_000
    got = []

    def sink() -> None:
        c, _ = ls.accept()
        n = 0
        while n < payload:
            b = c.recv(65536)
            if not b:
                break
            n += len(b)
        got.append(n)
        c.close()

    t = threading.Thread(target=sink)
    t.start()
    s = socket.create_connection(ls.getsockname())
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"reno")
    s.sendall(bytes(payload))
    t.join(5)
    time.sleep(0.05)
    info = agent.tcp_info(s)
    s.close()
    ls.close()
    assert got == [payload]
    # tcpi_bytes_acked (RFC 4898 ThruOctetsAcked); Linux counts the SYN's sequence number too.
    assert info["bytes_acked"] == payload + 1
    assert info["data_segs_out"] >= 1 and info["total_retrans"] == 0
    assert info["snd_cwnd"] >= 10  # initial window 10 (RFC 6928), grows in slow start
    assert 0 < info["min_rtt_us"] <= info["rtt_us"] + 1_000
    assert info["inflight"] == 0  # everything acknowledged
    assert info["rto_us"] >= 200_000  # tcpi_rto >= TCP_RTO_MIN (200 ms, include/net/tcp.h)


def test_agents_wait_for_t0_on_stdin_and_time_the_flow_from_it(tmp_path):
    """``--t0 stdin``: the agents report ready, then take t0 from stdin; the sender connects at
    t0 + start (not at a time fixed before it was ready) and --end is relative to t0."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    bin_ns, nbins, end_ns, start_ns = 100_000_000, 8, 800_000_000, 200_000_000
    common = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
    recv = subprocess.Popen(
        [sys.executable, str(runner.AGENT), "recv", "--ip", "127.0.0.1", "--ports", str(port), "--t0", "stdin",
         "--bin", str(bin_ns), "--nbins", str(nbins), "--end", str(end_ns), "--out", str(tmp_path / "r.json")],
        **common,
    )  # fmt: skip
    send = subprocess.Popen(
        [sys.executable, str(runner.AGENT), "send", "--dst", "127.0.0.1", "--port", str(port), "--cca", "reno",
         "--t0", "stdin", "--start", str(start_ns), "--stop", str(end_ns), "--end", str(end_ns),
         "--sample", str(bin_ns), "--out", str(tmp_path / "s.json")],
        **common,
    )  # fmt: skip
    for p in (recv, send):
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    time.sleep(0.5)  # the agents idle until t0 arrives, however long that takes
    t0 = agent.now_ns() + 100_000_000
    for p in (recv, send):
        assert p.stdin is not None
        p.stdin.write(f"{t0}\n")
        p.stdin.close()
    assert send.wait(10) == 0 and recv.wait(10) == 0
    out = json.loads((tmp_path / "s.json").read_text())
    assert start_ns <= out["start_ns"] < start_ns + 100_000_000
    delivered = json.loads((tmp_path / "r.json").read_text())["delivered_bytes"][0]
    assert sum(delivered[:2]) == 0 and sum(delivered) > 0  # nothing before t0 + start


def test_the_probe_takes_the_kernels_rtt_of_a_handshake_not_the_time_around_connect():
    """``probe --open --kernel-rtt`` against ``listen``: the kernel's RTT sample of the handshake
    (tcpi_rtt), which leaves out the system call and the process's wake-up that the time around
    ``connect()`` includes; the listener exits 0 on SIGTERM (the runner stops it so)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    listen = subprocess.Popen(
        [sys.executable, str(runner.AGENT), "listen", "--ip", "127.0.0.1", "--port", str(port)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert listen.stdout is not None and listen.stdout.readline().strip() == "ready"

        def probe(*extra: str) -> int:
            argv = [sys.executable, str(runner.AGENT), "probe", "--dst", "127.0.0.1", "--port", str(port), "--count", "20", "--open"]
            return int(subprocess.run([*argv, *extra], capture_output=True, text=True, check=True).stdout)

        kernel, wall = probe("--kernel-rtt"), probe()
        assert kernel % 1000 == 0 and 0 < kernel < wall  # tcpi_rtt is in us
    finally:
        listen.send_signal(signal.SIGTERM)
        assert listen.wait(5) == 0


# ---------------------------------------------------------------- real kernel TCP


@needs_netns
def test_single_cubic_flow_fills_the_link_at_the_configured_rtt(tmp_path):
    """Acceptance (short form): >= 90 % utilization, min RTT within 2 ms of 50 ms;
    same tables as the simulator; nothing left behind."""
    res = runner.run(spec(trace=True))
    s = res.summary
    assert s["backend"] == "testbed"
    assert s["utilization"] >= 0.9, s
    assert abs(s["flows"][0]["min_rtt_ms"] - 50.0) <= 2.0, s
    assert s["testbed"]["bottleneck"]["oversize_frames"] == 0  # offloads are off: MTU frames only
    assert s["testbed"]["receiver_tcp_timestamps"] == 1  # Linux's default: random TSval offsets
    # Same shape as a simulator result: every table, same columns, Parquet round trip.
    tables = res.tables()
    assert set(tables) == {"flows", "throughput", "link", "queue", "sojourn", "trace"}
    assert len(res.queue) == 8 * 100  # one sample per 10 ms
    assert res.trace is not None and res.trace["cwnd_pkts"].max() > 10
    out = res.to_parquet(tmp_path / "r")
    back = type(res).load(out)
    assert back.summary["utilization"] == s["utilization"]
    assert leftovers() == []


@needs_netns
def test_sigkill_leaves_state_the_next_run_cleans(tmp_path):
    """Kill a running `ccfair run --backend testbed` with SIGKILL; its namespaces stay
    (named namespaces are bind mounts); the next run removes them and itself leaves nothing."""
    f = tmp_path / "long.toml"
    f.write_text(
        'duration = "30s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\ncca = "cubic"\nrtt = "50ms"\n[[flows]]\ncca = "bbr"\nrtt = "50ms"\n'
    )
    before = set(netns.list_namespaces())
    p = subprocess.Popen([sys.executable, "-m", "ccfair", "run", str(f), "--backend", "testbed"], cwd=ROOT)
    deadline = time.monotonic() + 30
    mine: set[str] = set()
    while time.monotonic() < deadline and p.poll() is None:
        # The run is under way once its senders' state is recorded (bottleneck + agents started).
        states = list(netns.STATE_DIR.glob("*.json")) if netns.STATE_DIR.is_dir() else []
        for st in states:
            d = json.loads(st.read_text())
            if d["owner"][0] == p.pid and len(d["processes"]) >= 6:
                mine = set(d["namespaces"])
        if mine:
            break
        time.sleep(0.1)
    assert mine, "the run did not start"
    time.sleep(1.0)
    p.send_signal(signal.SIGKILL)
    p.wait()
    stale = set(netns.list_namespaces()) - before
    assert mine <= stale  # SIGKILL leaves the namespaces behind
    # The next run cleans up first, runs, and leaves nothing.
    short = tmp_path / "short.toml"
    short.write_text('duration = "3s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\ncca = "reno"\nrtt = "20ms"\n')
    q = subprocess.run([sys.executable, "-m", "ccfair", "compare", str(short), "--json"], cwd=ROOT, capture_output=True, text=True)
    assert q.returncode == 0, q.stderr
    both = json.loads(q.stdout)
    assert both["sim"]["utilization"] > 0.5 and both["testbed"]["utilization"] > 0.5
    assert leftovers() == []


# ---------------------------------------------------------------- the kernel (tc) bottleneck


def kernel_spec(**bottleneck: object) -> Spec:
    return Spec.from_dict(
        {
            "name": "testbed-kernel",
            "duration": "8s",
            "window": {"start": "2s"},
            "bottleneck": {"rate": "10Mbit", "buffer": "1bdp", **bottleneck},
            "flows": [{"cca": "cubic", "rtt": "50ms"}],
            "testbed": {"bottleneck": "kernel"},
        }
    )


def test_testbed_bottleneck_option_defaults_to_userspace_and_rejects_other_values(capsys, tmp_path):
    assert spec().testbed.bottleneck == "userspace"
    assert kernel_spec().testbed.bottleneck == "kernel"
    f = tmp_path / "x.toml"
    f.write_text('duration = "5s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\ncca = "cubic"\nrtt = "50ms"\n[testbed]\nbottleneck = "tc"\n')
    assert main(["run", str(f), "--backend", "testbed"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "testbed.bottleneck" in err and "'userspace' or 'kernel'" in err


def test_bottleneck_order_defaults_to_port_and_rejects_other_values(capsys, tmp_path):
    assert spec().testbed.bottleneck_order == "port"  # as every stored fidelity run
    f = tmp_path / "x.toml"
    f.write_text(
        'duration = "5s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\ncca = "cubic"\nrtt = "50ms"\n[testbed]\nbottleneck_order = "fifo"\n'
    )
    assert main(["run", str(f), "--backend", "testbed"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "testbed.bottleneck_order" in err and "'port', 'rotate' or 'arrival'" in err, err


@needs_netns
def test_arrival_order_admits_by_kernel_receive_stamps_and_the_bottleneck_reports_it():
    """With testbed.bottleneck_order = "arrival" the bottleneck enables SO_TIMESTAMPNS on its
    sender ports (socket(7): the kernel stamps every packet it receives) and says it applied the
    order: every frame stamped, the link full as with the default order; nothing left behind."""
    s = Spec.from_dict(
        {
            "name": "testbed-arrival",
            "duration": "5s",
            "window": {"start": "1s"},
            "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
            "flows": [{"cca": "cubic", "rtt": "50ms"}],
            "testbed": {"bottleneck_order": "arrival"},
        }
    )
    res = runner.run(s)
    b = res.summary["testbed"]["bottleneck"]
    assert b["port_order"] == "arrival" and b["unstamped_frames"] == 0, b
    assert res.summary["utilization"] >= 0.9, res.summary
    assert leftovers() == []


def test_tc_commands_map_the_buffer_and_qdisc_to_tbf_and_its_child():
    s = kernel_spec()
    root, child = tc.commands("ccf-x-br", s.to_run_config(), s.packet_wire_bytes)
    # tbf at the rate with a one-frame burst; the frame (skb length, 1514 B) is charged as it is
    # (bottleneck.l2_overhead = 14, the default: no size table).
    assert root == "qdisc add dev ccf-x-br root handle 1: tbf rate 10000000bit burst 1514 limit 63588".split()
    assert child[-3:] == ["pfifo", "limit", "42"]  # 1 BDP = 42 packets -> pfifo
    s = kernel_spec(buffer="64000B")
    assert tc.commands("d", s.to_run_config(), 1500)[1][-3:] == ["bfifo", "limit", "64000"]
    s = kernel_spec(buffer="2bdp", qdisc={"kind": "fq_codel", "target": "5ms", "interval": "100ms"})
    args = tc.commands("d", s.to_run_config(), 1500)[1][8:]
    assert args[:3] == ["fq_codel", "limit", "83"]
    # l2_overhead = 0: IP lengths (the size table subtracts the Ethernet header); 38: the whole wire frame.
    for l2, stab, burst in [(0, "-14", "1500"), (38, "24", "1538")]:
        root = tc.commands("d", kernel_spec(l2_overhead=l2).to_run_config(), 1500)[0]
        assert root[root.index("overhead") + 1] == stab and root[root.index("burst") + 1] == burst
    assert args[args.index("target") + 1] == "5000us" and args[args.index("interval") + 1] == "100000us"
    assert "ecn" in args  # FQ-CoDel's default, as Linux's
    s = kernel_spec(qdisc="fq_drr")
    with pytest.raises(SpecError) as e:
        tc.commands("d", s.to_run_config(), 1500)
    assert e.value.field == "bottleneck.qdisc"
    assert "'fq_drr' has no kernel (tc) mapping" in e.value.message and "userspace" in e.value.message


def _kernel_has(kind: str) -> bool:
    s = kernel_spec(qdisc=kind)
    try:
        tc.probe(tc.commands("d", s.to_run_config(), 1500), kind)
    except SpecError:
        return False
    return True


@needs_netns
def test_kernel_bottleneck_single_cubic_flow(tmp_path):
    """Tbf + pfifo on the bottleneck's receiver-facing port: CUBIC keeps the kernel's queue
    backlogged, min RTT within 2 ms of 50 ms, the kernel's queue sampled, its drops charged to the
    flow; nothing left behind.

    How much of its rate a one-frame tbf sends while backlogged is the host's: each late qdisc
    watchdog loses the tokens beyond one frame (tc-tbf(8): "For 10mbit/s ... you need at least
    10kbyte buffer if you want to reach your configured rate"). So the rate is bounded from above
    only; from below the test asserts what CUBIC controls: after a loss its window is 0.7 x (BDP +
    buffer) > BDP (RFC 9438, beta_cubic = 0.7), so with a 1 BDP buffer the queue stays backlogged."""
    if not _kernel_has("droptail"):
        pytest.skip("the kernel has no tbf or pfifo qdisc")
    res = runner.run(kernel_spec())
    s = res.summary
    t = s["testbed"]
    assert t["bottleneck_path"] == "kernel"
    assert t["kernel_bottleneck"]["tc"][1].endswith("pfifo limit 42")
    # A token bucket sends at most its rate plus one burst over the window (6 s at 10 Mbit/s).
    assert 0 < s["utilization"] <= 1.0 + 1514 * 8 / (10e6 * 6.0), s
    assert abs(s["flows"][0]["min_rtt_ms"] - 50.0) <= 2.0, s
    # Queue length over time comes from the kernel qdisc: one sample per 10 ms, within the limit.
    assert len(res.queue) == 800
    window = res.queue[(res.queue["time_s"] >= 2.0) & (res.queue["time_s"] < 8.0)]
    assert len(window) == 600 and (window["packets"] > 0).all(), window["packets"].min()
    assert 0 < res.queue["packets"].max() <= 42
    assert res.queue["bytes"].max() <= 42 * 1514  # frames (l2_overhead 14: no size table)
    # Every packet the kernel qdisc dropped was refused to the bottleneck's send (ENOBUFS) and charged to the flow.
    assert int(res.flows["drops"].sum()) == t["kernel_bottleneck"]["qdisc_drops"]
    assert t["bottleneck"]["tx_errors"] == 0
    # No per-packet sojourn from the kernel: the histogram is empty and the per-bin count is NaN, not 0.
    assert len(res.sojourn) == 0
    assert res.link["sojourn_packets"].isna().all()
    assert leftovers() == []


@needs_netns
def test_kernel_bottleneck_missing_qdisc_fails_before_any_namespace(monkeypatch, capsys, tmp_path):
    """CoDel is not in this kernel: exit 2, one line naming bottleneck.qdisc, the missing qdisc
    and the alternative; no namespace was ever created."""
    if _kernel_has("codel"):
        pytest.skip("this kernel has the codel qdisc")
    created = []
    monkeypatch.setattr(netns.Topology, "create", lambda self: created.append(self.id))
    f = tmp_path / "codel.toml"
    f.write_text(
        'duration = "5s"\n[bottleneck]\nrate = "10Mbit"\nqdisc = "codel"\n'
        '[[flows]]\ncca = "cubic"\nrtt = "50ms"\n[testbed]\nbottleneck = "kernel"\n'
    )
    before = netns.list_namespaces()
    assert main(["run", str(f), "--backend", "testbed"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: bottleneck.qdisc: 'codel'")
    assert "has no 'codel' qdisc" in err and 'testbed.bottleneck = "userspace"' in err
    assert created == []
    live = netns.live_runs()  # other sessions' runs may start meanwhile on a shared machine
    assert [n for n in netns.list_namespaces() if n not in before and netns.run_id_of(n) not in live] == []
    assert leftovers() == []
