"""HTTP flows, sender profiles and RTT equalization on the testbed.

The runs here send traffic only inside network namespaces they create: the local HTTP
service lives in a flow's sender namespace; the remote-URL path is exercised against a
server in a namespace this test creates behind the host namespace's routing (198.18.0.0/15,
RFC 2544 benchmarking space, routed by the host only over the test's own veth).
Tests needing root/netns skip with the reason where unavailable (see test_testbed.py).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ccfair import Spec
from ccfair.cli import main
from ccfair.errors import SpecError
from ccfair.testbed import httpagent, netns, runner
from test_testbed import _WHY_NOT, needs_netns

ROOT = Path(__file__).resolve().parent.parent
HTTPAGENT = ROOT / "python" / "ccfair" / "testbed" / "httpagent.py"
SERVER_NS = f"ccft-{os.getpid() % 100000}"
SERVER_HOST_IP, SERVER_IP = "198.18.7.1", "198.18.7.2"
SERVER_PORT = 8080
CLOSED_PORT = 8081


def left_by(ids: set[str]) -> list[str]:
    """Namespaces, links, host nftables tables, state files and processes of runs ``ids``."""
    found = [f"namespace {n}" for n in netns.list_namespaces() if netns.run_id_of(n) in ids]
    found += [f"link {n}" for n in netns.list_links() if netns.run_id_of(n) in ids]
    found += [f"nft table {t}" for t in netns.host_tables() if t[len(netns.HOST_TABLE_PREFIX) :] in ids]
    found += [f"state {i}" for i in ids if (netns.STATE_DIR / f"{i}.json").exists()]
    for pid in os.listdir("/proc"):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if any(f"{netns.STATE_DIR}/{i}/" in cmd for i in ids):
            found.append(f"process {pid}: {cmd}")
    return found


@pytest.fixture
def my_runs(monkeypatch):
    """Ids of the runs this test starts in-process (other runs on the machine are not ours)."""
    ids: set[str] = set()
    create = netns.Topology.create

    def recording(self: netns.Topology) -> None:
        ids.add(self.id)
        create(self)

    monkeypatch.setattr(netns.Topology, "create", recording)
    return ids


def http_spec(duration: str = "6s", **extra: object) -> Spec:
    return Spec.from_dict(
        {
            "name": "http",
            "duration": duration,
            "window": {"start": "3s"},
            "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
            "profiles": {"cdn": {"cca": "bbr", "initial_cwnd": 32, "initial_rwnd": 200}},
            "flows": [
                {"name": "lab", "cca": "cubic", "rtt": "40ms", "rwnd": 200},
                {"name": "cp", "kind": "http", "profile": "cdn", "rtt": "40ms", "start": "1s", **extra},
            ],
        }
    )


# ---------------------------------------------------------------- without namespaces


def test_url_link_addresses_are_distinct_per_run_and_flow_inside_shared_address_space():
    import ipaddress

    seen = set()
    for rid in ("0000", "1a2b", "ffff"):
        for i in range(netns.MAX_URL_FLOWS):
            host, gw = netns.url_link_ips(rid, i)
            net = ipaddress.IPv4Interface(f"{host}/30").network
            assert ipaddress.IPv4Address(gw) in net and net.subnet_of(ipaddress.IPv4Network("100.64.0.0/10"))
            assert net not in seen
            seen.add(net)


def test_remote_url_flow_refuses_sender_settings_naming_the_field():
    s = Spec.from_dict(
        {
            "duration": "5s",
            "bottleneck": {"rate": "10Mbit"},
            "flows": [{"kind": "http", "cca": "cubic", "rtt": "50ms", "url": "http://198.18.7.2/x", "init_cwnd": 32}],
        }
    )
    with pytest.raises(SpecError) as e:
        runner.check_http_flows(s)
    assert e.value.field == "flows.0.init_cwnd" and "remote URL" in str(e.value)


def test_url_host_that_does_not_resolve_is_a_spec_error_naming_the_url(monkeypatch):
    import socket

    def fail(*a: object, **k: object) -> None:
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fail)  # no DNS query leaves the machine
    s = Spec.from_dict(
        {
            "duration": "5s",
            "bottleneck": {"rate": "10Mbit"},
            "flows": [{"kind": "http", "cca": "cubic", "rtt": "50ms", "url": "https://cp.example/big"}],
        }
    )
    with pytest.raises(SpecError) as e:
        runner.check_http_flows(s)
    assert e.value.field == "flows.0.url" and "cannot resolve host 'cp.example'" in str(e.value)


# ---------------------------------------------------------------- real kernel TCP


@needs_netns
def test_http2_service_flow_bytes_agree_with_the_bottleneck_and_rtts_are_equalized(my_runs):
    """The client's bytes and the bottleneck's per-flow payload bytes agree within
    1 %; every flow's equalized path RTT is within 5 % of its target; nothing is left."""
    res = runner.run(http_spec())
    tb = res.summary["testbed"]["flows"]
    cp = tb[1]
    assert cp["kind"] == "http" and cp["http"]["version"] == "2"
    assert cp["http"]["client_socket_bytes"] > 1_000_000
    assert abs(cp["http"]["bytes_relative_difference"]) <= 0.01, cp
    for f in tb:
        assert abs(f["path_min_rtt_ms"] - f["target_rtt_ms"]) <= 0.05 * f["target_rtt_ms"], f
    # the server's own TCP_INFO (sampled in its process): segments sent, its min RTT
    row = res.flows.set_index("name").loc["cp"]
    assert row["sent_packets"] > 0 and row["min_rtt_ms"] >= 0.95 * 40.0
    assert {"share", "throughput_bps", "maxmin_share"} <= set(res.summary["flows"][1])
    assert my_runs and left_by(my_runs) == []


@needs_netns
def test_iw32_profile_downloads_1mb_at_least_one_rtt_sooner_than_iw10():
    """A profile's initial_cwnd takes effect on real TCP (route initcwnd, RFC 6928
    IW10 vs S0's IW32 CDN): 1 MB over a 50 Mbit/s, 100 ms path in slow start needs 7 rounds
    from IW10 and 5 from IW32, so IW32 finishes >= 1 RTT sooner."""
    fct = {}
    for iw in (10, 32):
        s = Spec.from_dict(
            {
                "duration": "4s",
                "window": {"start": "0s"},
                "bottleneck": {"rate": "50Mbit", "buffer": "2bdp"},
                "profiles": {"p": {"initial_cwnd": iw, "initial_rwnd": 200, "cca": "cubic"}},
                "flows": [{"name": "dl", "kind": "http", "profile": "p", "rtt": "100ms", "size": "1MB"}],
            }
        )
        res = runner.run(s)
        assert res.summary["testbed"]["flows"][0]["http"]["body_bytes"] >= 1_000_000
        fct[iw] = float(res.flows["fct_s"].iloc[0])
    assert fct[10] - fct[32] >= 0.100, fct


@needs_netns
def test_profile_min_rto_and_tso_take_effect_in_the_kernel():
    """Min_rto: the sender's RTO (tcpi_rto) never goes below the route's rto_min (Linux
    tcp_set_rto / RFC 6298: RTO = srtt + max(4 rttvar, rto_min)); with the default 200 ms
    and a 40 ms path it stays below 600 ms. tso = 4: the sender veth's gso_max_segs reads
    back as 4; initial_rwnd = 200: the receiver's route and its tcp_rmem allow it; cca and
    pacing: the server's accepted socket has the profile's TCP_CONGESTION and
    SO_MAX_PACING_RATE (~0UL-1 = pacing on, net/core/sock.c)."""
    s = Spec.from_dict(
        {
            "duration": "4s",
            "window": {"start": "1s"},
            "bottleneck": {"rate": "10Mbit", "buffer": "1bdp"},
            "profiles": {"slow-rto": {"cca": "bbr", "min_rto": "600ms", "tso": 4}},
            "flows": [
                {"name": "a", "kind": "http", "profile": "slow-rto", "rtt": "40ms"},
                {"name": "b", "kind": "http", "cca": "cubic+pacing", "rtt": "40ms"},
            ],
        }
    )
    res = runner.run(s)
    a, b = res.summary["testbed"]["flows"]
    assert a["sender_rto_ms"] >= 600.0 and b["sender_rto_ms"] < 600.0, (a, b)
    assert a["applied"]["gso_max_segs"] == 4 and b["applied"]["gso_max_segs"] > 4
    # cca and pacing as the server's accepted connection has them (inherited from the listener)
    assert (a["applied"]["server_cca"], a["applied"]["server_pacing"]) == ("bbr", False)
    assert (b["applied"]["server_cca"], b["applied"]["server_pacing"]) == ("cubic", True)
    assert "rto_min lock 600ms" in a["applied"]["sender_route"] or "rto_min 600ms" in a["applied"]["sender_route"], a
    assert "initrwnd 200" in a["applied"]["receiver_route"]
    assert res.summary["testbed"]["receiver_tcp_rmem"][1] >= 2 * 200 * 1448


@pytest.fixture
def tls_cert(tmp_path):
    """A self-signed certificate for the test server's address (openssl(1))."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=ccfair-test",
         "-addext", f"subjectAltName=IP:{SERVER_IP}", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def _server_ns(tls: tuple[Path, Path] | None):
    """An HTTP(S) server in a namespace of this test behind the host namespace's routing."""
    if _WHY_NOT:
        pytest.skip(_WHY_NOT)
    if shutil.which("nft") is None:
        pytest.skip("the remote-URL path needs nftables' nft (scripts/test.sh installs it with apt-get as root)")
    cmds = [
        ["ip", "netns", "add", SERVER_NS],
        ["ip", "link", "add", f"{SERVER_NS}h", "type", "veth", "peer", "name", f"{SERVER_NS}s"],
        ["ip", "link", "set", f"{SERVER_NS}s", "netns", SERVER_NS],
        ["ip", "addr", "add", f"{SERVER_HOST_IP}/30", "dev", f"{SERVER_NS}h"],
        ["ip", "link", "set", f"{SERVER_NS}h", "up"],
        ["ip", "-n", SERVER_NS, "addr", "add", f"{SERVER_IP}/30", "dev", f"{SERVER_NS}s"],
        ["ip", "-n", SERVER_NS, "link", "set", f"{SERVER_NS}s", "up"],
        ["ip", "-n", SERVER_NS, "link", "set", "lo", "up"],
        ["ip", "-n", SERVER_NS, "route", "add", "default", "via", SERVER_HOST_IP],
    ]
    server = None
    try:
        for c in cmds:
            subprocess.run(c, check=True, capture_output=True)
        now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        tls_args = ["--certfile", str(tls[0]), "--keyfile", str(tls[1])] if tls else []
        server = subprocess.Popen(
            ["ip", "netns", "exec", SERVER_NS, sys.executable, str(HTTPAGENT), "serve", "--ip", SERVER_IP, "--port", str(SERVER_PORT),
             "--cca", "cubic", "--t0", str(now), "--end", str(now + 600 * 10**9), "--sample", str(10**9), "--out", os.devnull, *tls_args],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        scheme = "https" if tls else "http"
        yield f"{scheme}://{SERVER_IP}:{SERVER_PORT}{httpagent.PATH_PREFIX}{httpagent.BULK_OBJECT_BYTES}"
    finally:
        if server is not None:
            server.kill()
            server.wait()
        subprocess.run(["ip", "link", "del", f"{SERVER_NS}h"], capture_output=True)
        subprocess.run(["ip", "netns", "del", SERVER_NS], capture_output=True)


@pytest.fixture
def remote_server():
    yield from _server_ns(None)


@pytest.fixture
def remote_https_server(tls_cert, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(tls_cert[0]))  # the client (a child of the run) trusts it
    yield from _server_ns(tls_cert)


@needs_netns
def test_remote_https_url_negotiates_h2_and_counts_the_tls_stream(my_runs, remote_https_server):
    """Https: TLS with ALPN h2 through the same gateway path; the client counts decrypted
    bytes, the bottleneck TLS records, so they differ by the record overhead only (< 1 %)."""
    raw = http_spec(duration="5s").raw
    s = Spec.from_dict({**raw, "flows": [{"name": "cp", "kind": "http", "cca": "cubic", "rtt": "40ms", "url": remote_https_server}]})
    res = runner.run(s)
    cp = res.summary["testbed"]["flows"][0]
    assert cp["http"]["url"].startswith("https://") and cp["http"]["client_socket_bytes"] > 1_000_000
    assert 0 < cp["http"]["bytes_relative_difference"] <= 0.01, cp
    assert my_runs and left_by(my_runs) == []


@needs_netns
def test_remote_url_through_host_routing_then_nothing_left(my_runs, remote_server):
    """The remote-URL path (gateway NAT, host forwarding + NAT) against a server
    reached through the host's routing; bytes agree, the path RTT is equalized, and the host
    namespace is as before (no nftables table, ip_forward restored)."""
    forward_before = netns.IP_FORWARD.read_text()
    s = http_spec(url=remote_server)
    s = Spec.from_dict(
        {
            **s.raw,
            "flows": [
                s.raw["flows"][0],
                {"name": "cp", "kind": "http", "cca": "cubic", "rtt": "40ms", "start": "1s", "url": remote_server},
            ],
        }
    )
    res = runner.run(s)
    cp = res.summary["testbed"]["flows"][1]
    assert cp["http"]["url"] == remote_server and cp["http"]["client_socket_bytes"] > 500_000
    assert abs(cp["http"]["bytes_relative_difference"]) <= 0.01, cp
    assert abs(cp["path_min_rtt_ms"] - 40.0) <= 2.0, cp
    assert my_runs and left_by(my_runs) == []
    if not netns.live_runs():  # another run of a URL flow could hold forwarding on
        assert netns.IP_FORWARD.read_text() == forward_before
        assert not netns.FORWARD_MARK.exists()


@needs_netns
def test_unreachable_url_exit_2_naming_the_url_and_nothing_left(my_runs, remote_server, capsys, tmp_path):
    closed = f"http://{SERVER_IP}:{CLOSED_PORT}/"
    f = tmp_path / "x.toml"
    f.write_text(
        f'duration = "3s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\nkind = "http"\ncca = "cubic"\nrtt = "40ms"\nurl = "{closed}"\n'
    )
    assert main(["run", str(f), "--backend", "testbed"]) == 2
    err = capsys.readouterr().err
    assert "flows.0.url" in err and "unreachable" in err and "Traceback" not in err
    assert my_runs and left_by(my_runs) == []


@needs_netns
def test_rtt_target_below_the_paths_base_rtt_exit_2_and_nothing_left(my_runs, capsys, tmp_path):
    f = tmp_path / "x.toml"
    f.write_text('duration = "3s"\n[bottleneck]\nrate = "10Mbit"\n[[flows]]\ncca = "cubic"\nrtt = "5us"\n')
    assert main(["run", str(f), "--backend", "testbed"]) == 2
    err = capsys.readouterr().err
    assert "flows.0.rtt" in err and "base RTT" in err
    assert my_runs and left_by(my_runs) == []


@needs_netns
def test_http_server_that_fails_to_start_is_a_spec_error_and_nothing_left(my_runs, monkeypatch, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("import sys\nsys.exit('serve: cannot start')\n")
    monkeypatch.setattr(runner, "HTTPAGENT", broken)
    with pytest.raises(SpecError) as e:
        runner.run(http_spec(duration="4s"))
    assert e.value.field == "flows.1.kind" and "failed to start" in str(e.value)
    assert my_runs and left_by(my_runs) == []


@needs_netns
def test_sigkill_during_a_url_run_leaves_what_the_next_run_removes(remote_server, tmp_path):
    """Kill -9 of a run with a local HTTP service and a remote-URL flow: its namespaces,
    links, host nftables table, servers and clients stay until the next run's clean-up
    (netns.clean_stale, the first thing a run does), which removes all of them."""
    f = tmp_path / "long.toml"
    f.write_text(
        'duration = "30s"\n[bottleneck]\nrate = "10Mbit"\n'
        '[[flows]]\nkind = "http"\ncca = "bbr"\nrtt = "40ms"\n'
        f'[[flows]]\nkind = "http"\ncca = "cubic"\nrtt = "40ms"\nurl = "{remote_server}"\n'
    )
    forward_before = netns.IP_FORWARD.read_text()
    p = subprocess.Popen([sys.executable, "-m", "ccfair", "run", str(f), "--backend", "testbed"], cwd=ROOT)
    try:
        _kill_mid_run_then_clean(p, forward_before)
    finally:
        if p.poll() is None:  # the test failed before its kill: do not leave the run going
            p.kill()
            p.wait()


def _kill_mid_run_then_clean(p: subprocess.Popen[bytes], forward_before: str) -> None:
    rid = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None and rid is None:
        for st in netns.STATE_DIR.glob("*.json") if netns.STATE_DIR.is_dir() else []:
            try:
                d = json.loads(st.read_text())
            except (OSError, ValueError):  # other runs' state files come and go
                continue
            labels = [x.name for x in (netns.STATE_DIR / d["id"]).glob("client*.stderr")]
            if d["owner"][0] == p.pid and len(labels) == 2:
                rid = d["id"]
        time.sleep(0.1)
    assert rid, "the run did not reach its HTTP clients"
    time.sleep(1.0)
    # While the run is alive (nobody else's clean-up may touch it): its host NAT table exists
    # and is recorded in its state file.
    table = f"{netns.HOST_TABLE_PREFIX}{rid}"
    assert table in netns.host_tables()
    assert table in json.loads((netns.STATE_DIR / f"{rid}.json").read_text())["host_tables"]
    p.send_signal(signal.SIGKILL)
    p.wait()
    time.sleep(0.5)  # agents die with their parent (PR_SET_PDEATHSIG)
    # What kill -9 left is removed by the next run's clean-up (or already was, by another
    # run starting meanwhile on the same host: every run cleans dead runs first).
    netns.clean_stale()
    assert left_by({rid}) == []
    if not netns.live_runs():
        assert netns.IP_FORWARD.read_text() == forward_before
        assert not netns.FORWARD_MARK.exists()
