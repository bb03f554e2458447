"""HTTP flows of the testbed: a local HTTP/1.1 + HTTP/2 service and a download client.

    python3 httpagent.py serve --ip IP --port P --cca NAME [--pacing] --t0 NS --end NS --sample NS
                               [--trace] [--certfile PEM --keyfile PEM] --out FILE
    python3 httpagent.py fetch --url URL --http 2|1.1 [--streams N] [--size B] [--rcvbuf B]
                               --t0 NS --start NS --stop NS --end NS --bin NS --nbins N --out FILE

Run as a script inside a network namespace, like agent.py (same clock: CLOCK_MONOTONIC
in ns, ``t0`` is the experiment's time zero; the same kill-with-parent rule).

* serve: Hypercorn (an ASGI server on the h11/h2 protocol libraries: HTTP/1.1, and HTTP/2
  with prior knowledge or upgrade) serving ``GET /bytes/N`` = N zero bytes. The
  listening socket is created here and handed to Hypercorn (``bind = fd://N``) so that the
  stack settings a profile asks for are set on it before ``listen`` and inherited by every
  accepted connection: ``TCP_CONGESTION`` (tcp(7); the child socket keeps the listener's
  congestion ops, net/ipv4/tcp_cong.c ``tcp_ca_openreq_child``) and, for pacing,
  ``SO_MAX_PACING_RATE`` = ~0UL-1 (net/core/sock.c sets ``SK_PACING_NEEDED``; the field is
  copied to the child by ``sk_clone_lock``), the same pacing agent.py's bulk sender uses.
  A thread samples ``TCP_INFO`` of the process's own connected TCP sockets (found through
  /proc/self/fd) every ``sample``, so an HTTP flow reports the sender's cwnd, srtt, min RTT,
  retransmissions and segments sent like a bulk flow.
* fetch: the client. HTTP/2 (the h2 library): one connection, ``--streams`` concurrent
  requests of the same resource, each re-requested when it completes, for as long as the
  flow runs - the way S0 prolonged CP downloads with nghttp2's h2load (S0 section IV: "we
  request the same resource multiple times (in parallel) over the same connection").
  Flow-control windows are 2^30-1 (h2load's defaults, ``-w 30 -W 30``) so that HTTP/2 never
  limits the transfer. HTTP/1.1 (h11): one keep-alive connection, one request after the
  other. With ``--size`` the client downloads that many body bytes once (a finite flow) and
  records the completion time. When the flow stops, HTTP/2 streams are cancelled
  (RST_STREAM CANCEL, RFC 9113 section 6.4) and the client reads on until the connection is
  quiet (``QUIET_NS``, at most ``--drain``), so the bytes in flight are counted, then closes.
  It counts the bytes it reads from the TCP socket per
  ``bin`` (the delivered-bytes bins of a bulk flow's receiver) and reports socket bytes,
  body bytes, responses and ``TCP_INFO`` of its own socket. Over https the socket bytes
  are the decrypted TLS stream (the bottleneck's count also has the TLS records' overhead
  and handshake, a few kB plus ~0.2 %).

Sources: RFC 9113 (HTTP/2: streams, SETTINGS_INITIAL_WINDOW_SIZE, WINDOW_UPDATE, prior
knowledge section 3.3), RFC 9112 (HTTP/1.1 persistent connections), Hypercorn
(hypercorn.readthedocs.io, binding to ``fd://``), h2 and h11 documentation.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import ssl
import struct
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING or __package__:  # imported by the runner (for the constants below)
    from . import agent
else:  # run as a script: agent.py is beside it on sys.path[0]
    import agent

#: Size of one response of a bulk (not size-limited) local HTTP/2 download: S0's smallest CP object (25 MB).
BULK_OBJECT_BYTES = 25_000_000
#: The same for HTTP/1.1, which cannot cancel a response without closing the connection:
#: small enough that the drain after the flow stops (below) reads the current one to its end.
BULK_OBJECT_H1_BYTES = 1_000_000
#: After the flow stops, the client keeps reading until the connection is quiet this long,
#: so that every byte the bottleneck forwarded is also counted by the client.
QUIET_NS = 500_000_000
#: HTTP/2 flow-control window the client grants (h2load's default -w 30 / -W 30: 2^30 - 1).
H2_WINDOW_BYTES = 2**30 - 1
BODY_CHUNK_BYTES = 1 << 16
RECV_CHUNK_BYTES = 1 << 18
PATH_PREFIX = "/bytes/"

# ---------------------------------------------------------------- server


def _app_factory() -> object:
    zeros = bytes(BODY_CHUNK_BYTES)

    async def app(
        scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]], send: Callable[[dict[str, Any]], Awaitable[None]]
    ) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path = scope["path"]
        try:
            n = int(path[len(PATH_PREFIX) :]) if path.startswith(PATH_PREFIX) else -1
        except ValueError:
            n = -1
        if n < 0:
            await send({"type": "http.response.start", "status": 404, "headers": [(b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = [(b"content-length", str(n).encode()), (b"content-type", b"application/octet-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        left = n
        while True:
            k = min(left, BODY_CHUNK_BYTES)
            left -= k
            await send({"type": "http.response.body", "body": zeros[:k], "more_body": left > 0})
            if left <= 0:
                return

    return app


def _connected_tcp(skip_fd: int) -> dict[tuple[str, int], socket.socket]:
    """This process's connected IPv4 TCP sockets, as duplicates keyed by the peer address."""
    out: dict[tuple[str, int], socket.socket] = {}
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd == skip_fd:
            continue
        try:
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                continue
            s = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            if s.family == socket.AF_INET and s.type == socket.SOCK_STREAM:
                out[s.getpeername()] = s
                continue
        except OSError:
            pass
        s.close()
    return out


class _Sampler(threading.Thread):
    """TCP_INFO of the server's connections on the grid ``t0 + k * sample`` until ``end``."""

    def __init__(self, a: argparse.Namespace, listen_fd: int) -> None:
        super().__init__(daemon=True)
        self.a = a
        self.listen_fd = listen_fd
        self.last: dict[tuple[str, int], dict[str, int]] = {}
        self.traces: dict[tuple[str, int], dict[str, list[int]]] = {}
        self.srtt: dict[tuple[str, int], list[int]] = {}
        self.first_seen_ns: int | None = None
        #: Per connection: (TCP_CONGESTION, SO_MAX_PACING_RATE) as the accepted socket has them.
        self.stack: dict[tuple[str, int], tuple[str, int]] = {}

    def run(self) -> None:
        a = self.a
        k = max(0, -(-(agent.now_ns() - a.t0) // a.sample))
        while True:
            t = a.t0 + k * a.sample
            if t >= a.end:
                break
            agent.sleep_until(t)
            for peer, s in _connected_tcp(self.listen_fd).items():
                try:
                    info = agent.tcp_info(s)
                    if peer not in self.stack:
                        cca = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0", 1)[0].decode()
                        rate = struct.unpack("Q", s.getsockopt(socket.SOL_SOCKET, agent.SO_MAX_PACING_RATE, 8))[0]
                        self.stack[peer] = (cca, rate)
                except OSError:
                    continue
                finally:
                    s.close()
                if self.first_seen_ns is None:
                    self.first_seen_ns = t - a.t0
                self.last[peer] = info
                acc = self.srtt.setdefault(peer, [0, 0])
                if info["rtt_us"]:
                    acc[0] += info["rtt_us"] * 1000
                    acc[1] += 1
                if a.trace:
                    if peer not in self.traces:
                        self.traces[peer] = agent.new_trace()
                    agent.trace_append(self.traces[peer], k * a.sample, info)
            k += 1
        self.write()

    def write(self) -> None:
        a = self.a
        infos = self.last
        main = max(infos, key=lambda p: infos[p]["bytes_acked"]) if infos else None
        ns = agent.netstat()
        srtt = self.srtt.get(main, [0, 0]) if main else [0, 0]
        empty = agent.new_trace()
        out = {
            "connections": len(infos),
            "start_ns": self.first_seen_ns,
            "sent_packets": sum(i["data_segs_out"] for i in infos.values()),
            "retransmissions": sum(i["total_retrans"] for i in infos.values()),
            "min_rtt_ns": min((i["min_rtt_us"] for i in infos.values() if i["min_rtt_us"]), default=0) * 1000,
            "mean_rtt_ns": srtt[0] / srtt[1] if srtt[1] else 0.0,
            "rto_count": ns.get("TCPTimeouts", 0),
            "recoveries": ns.get("TCPSackRecovery", 0) + ns.get("TCPRenoRecovery", 0),
            "bytes_acked": sum(i["bytes_acked"] for i in infos.values()),
            "rto_ns": infos[main]["rto_us"] * 1000 if main else None,
            # what the accepted connection inherited from the listener (the profile's cca, pacing)
            "cca": self.stack[main][0] if main in self.stack else None,
            "max_pacing_rate": self.stack[main][1] if main in self.stack else None,
            "trace": self.traces.get(main, empty) if main else empty,
        }
        agent.write_json(a.out, out)


def serve(a: argparse.Namespace) -> None:
    import asyncio

    from hypercorn.asyncio import serve as hypercorn_serve
    from hypercorn.config import Config

    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    agent.set_cca(ls, a.cca, a.pacing, "serve")
    ls.bind((a.ip, a.port))
    ls.listen(64)
    ls.set_inheritable(True)
    config = Config()
    config.bind = [f"fd://{ls.fileno()}"]
    config.keep_alive_timeout = 3600.0
    config.graceful_timeout = 0.5
    config.accesslog = None
    config.errorlog = "-"
    config.loglevel = "WARNING"
    config.h2_max_concurrent_streams = 256
    if a.certfile:  # TLS; Hypercorn offers ALPN h2 and http/1.1
        config.certfile, config.keyfile = a.certfile, a.keyfile
    sampler = _Sampler(a, ls.fileno())
    sampler.start()

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        print("ready", flush=True)
        # hypercorn types its app as its own framework union; ours is a plain ASGI 3 callable, which it accepts
        await hypercorn_serve(_app_factory(), config, shutdown_trigger=stop.wait)  # type: ignore[arg-type]

    asyncio.run(main())
    sampler.join(timeout=max(0.0, (a.end - agent.now_ns()) / 1e9) + 2.0)
    if not Path(a.out).exists():
        sampler.write()  # stopped before ``end``: what was sampled so far


# ---------------------------------------------------------------- client


class _Counter:
    """Bytes read from the socket per bin, and in total."""

    def __init__(self, a: argparse.Namespace) -> None:
        self.a = a
        self.bins = [0] * a.nbins
        self.socket_bytes = 0
        self.body_bytes = 0
        self.responses = 0
        self.last_body_ns: int | None = None

    def add(self, n: int) -> None:
        self.socket_bytes += n
        b = (agent.now_ns() - self.a.t0) // self.a.bin
        if 0 <= b < self.a.nbins:
            self.bins[b] += n


def _connect(a: argparse.Namespace, alpn: str) -> socket.socket:
    u = urlsplit(a.url)
    port = u.port or (443 if u.scheme == "https" else 80)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if a.rcvbuf > 0:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, a.rcvbuf)
    s.settimeout(10.0)
    s.connect((socket.gethostbyname(u.hostname or ""), port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if u.scheme == "https":
        ctx = ssl.create_default_context()  # the system's CAs (or $SSL_CERT_FILE), hostname checked
        ctx.set_alpn_protocols([alpn])
        s = ctx.wrap_socket(s, server_hostname=u.hostname)
        if s.selected_alpn_protocol() != alpn:
            raise ConnectionError(f"{a.url}: the server did not agree to {alpn} (ALPN answer: {s.selected_alpn_protocol()})")
    return s


def _target(a: argparse.Namespace) -> str:
    """Request target: the URL's path and query."""
    u = urlsplit(a.url)
    return (u.path or "/") + (f"?{u.query}" if u.query else "")


def _fetch_h2(a: argparse.Namespace, s: socket.socket, c: _Counter, stop_at: int) -> None:
    import h2.config
    import h2.connection
    import h2.errors
    import h2.events
    import h2.settings

    u = urlsplit(a.url)
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    conn.local_settings = h2.settings.Settings(client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: H2_WINDOW_BYTES})
    conn.initiate_connection()
    conn.increment_flow_control_window(H2_WINDOW_BYTES - 65535)
    headers = [(":method", "GET"), (":scheme", u.scheme), (":authority", u.netloc), (":path", _target(a)), ("user-agent", "ccfair-testbed")]
    open_streams: set[int] = set()
    requested = 0
    limit = a.size > 0

    def request() -> None:
        nonlocal requested
        sid = conn.get_next_available_stream_id()
        conn.send_headers(sid, headers, end_stream=True)
        open_streams.add(sid)
        requested += 1

    for _ in range(1 if limit and not a.url_mode else a.streams):
        request()
    s.sendall(conn.data_to_send())
    buf = bytearray(RECV_CHUNK_BYTES)
    while agent.now_ns() < stop_at and open_streams:
        s.settimeout(max(0.001, min(0.1, (stop_at - agent.now_ns()) / 1e9)))
        try:
            n = s.recv_into(buf)
        except (TimeoutError, ssl.SSLWantReadError):
            continue
        if n == 0:
            raise ConnectionError("the server closed the connection")
        c.add(n)
        for ev in conn.receive_data(bytes(buf[:n])):
            if isinstance(ev, h2.events.DataReceived):
                c.body_bytes += len(ev.data)
                c.last_body_ns = agent.now_ns()
                conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.ResponseReceived):
                got: dict[Any, Any] = dict(ev.headers)  # str names: the connection decodes them (header_encoding)
                status = got.get(":status")
                if status != "200":
                    raise ConnectionError(f"HTTP status {status} for {a.url}")
            elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)):
                open_streams.discard(ev.stream_id)
                if isinstance(ev, h2.events.StreamEnded):
                    c.responses += 1
                if not limit or (a.url_mode and c.body_bytes < a.size):
                    request()
            elif isinstance(ev, h2.events.ConnectionTerminated):
                raise ConnectionError(f"the server ended the HTTP/2 connection (error {ev.error_code})")
        if limit and c.body_bytes >= a.size:
            break
        out = conn.data_to_send()
        if out:
            s.sendall(out)
    for sid in open_streams:
        conn.reset_stream(sid, h2.errors.ErrorCodes.CANCEL)
    conn.close_connection()
    s.sendall(conn.data_to_send())


def _fetch_h11(a: argparse.Namespace, s: socket.socket, c: _Counter, stop_at: int) -> None:
    import h11

    u = urlsplit(a.url)
    conn = h11.Connection(h11.CLIENT)
    limit = a.size > 0

    def request() -> None:
        req = h11.Request(method="GET", target=_target(a), headers=[("Host", u.netloc), ("User-Agent", "ccfair-testbed")])
        s.sendall(conn.send(req) + conn.send(h11.EndOfMessage()))

    request()
    buf = bytearray(RECV_CHUNK_BYTES)
    while agent.now_ns() < stop_at:
        s.settimeout(max(0.001, min(0.1, (stop_at - agent.now_ns()) / 1e9)))
        try:
            n = s.recv_into(buf)
        except (TimeoutError, ssl.SSLWantReadError):
            continue
        c.add(n)
        conn.receive_data(bytes(buf[:n]))
        while True:
            ev = conn.next_event()
            if ev is h11.NEED_DATA:
                break
            if isinstance(ev, h11.Response) and ev.status_code != 200:
                raise ConnectionError(f"HTTP status {ev.status_code} for {a.url}")
            if isinstance(ev, h11.Data):
                c.body_bytes += len(ev.data)
                c.last_body_ns = agent.now_ns()
            elif isinstance(ev, h11.EndOfMessage):
                c.responses += 1
                if limit and c.body_bytes >= a.size:
                    return
                conn.start_next_cycle()
                request()
            elif isinstance(ev, h11.ConnectionClosed):
                raise ConnectionError("the server closed the connection")
        if n == 0:
            raise ConnectionError("the server closed the connection")


def _drain(a: argparse.Namespace, s: socket.socket, c: _Counter) -> None:
    """Read (and count) what is still in flight until the connection is quiet or closed."""
    deadline = agent.now_ns() + a.drain
    buf = bytearray(RECV_CHUNK_BYTES)
    while agent.now_ns() < deadline:
        s.settimeout(QUIET_NS / 1e9)
        try:
            n = s.recv_into(buf)
        except (TimeoutError, ssl.SSLWantReadError):
            return
        except OSError:
            return
        if n == 0:
            return
        c.add(n)


def fetch(a: argparse.Namespace) -> None:
    agent.sleep_until(a.t0 + a.start)
    c = _Counter(a)
    start = agent.now_ns()
    stop_at = a.t0 + a.stop
    s = _connect(a, "h2" if a.http == "2" else "http/1.1")
    try:
        (_fetch_h2 if a.http == "2" else _fetch_h11)(a, s, c, stop_at)
        _drain(a, s, c)
        info = agent.tcp_info(s if not isinstance(s, ssl.SSLSocket) else socket.socket(fileno=os.dup(s.fileno())))
    finally:
        s.close()
    done = a.size > 0 and c.body_bytes >= a.size
    out = {
        "start_ns": start - a.t0,
        "delivered_bytes": c.bins,
        "socket_bytes": c.socket_bytes,
        "body_bytes": c.body_bytes,
        "responses": c.responses,
        "fct_ns": (c.last_body_ns - start) if done and c.last_body_ns else None,
        "client_min_rtt_ns": info["min_rtt_us"] * 1000,
        "client_rtt_ns": info["rtt_us"] * 1000,
    }
    agent.sleep_until(a.end)
    agent.write_json(a.out, out)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="httpagent.py")
    sub = p.add_subparsers(dest="mode", required=True)
    sv = sub.add_parser("serve")
    sv.add_argument("--ip", required=True)
    sv.add_argument("--port", type=int, required=True)
    sv.add_argument("--cca", required=True)
    sv.add_argument("--pacing", action="store_true")
    for name in ("--t0", "--end", "--sample"):
        sv.add_argument(name, type=int, required=True)
    sv.add_argument("--trace", action="store_true")
    sv.add_argument("--certfile", default="")
    sv.add_argument("--keyfile", default="")
    sv.add_argument("--out", required=True)
    fe = sub.add_parser("fetch")
    fe.add_argument("--url", required=True)
    fe.add_argument("--url-mode", action="store_true", help="a remote URL (size = body bytes to fetch, by repeating it)")
    fe.add_argument("--http", choices=("1.1", "2"), default="2")
    fe.add_argument("--streams", type=int, default=4)
    fe.add_argument("--size", type=int, default=0)
    fe.add_argument("--rcvbuf", type=int, default=0)
    fe.add_argument("--drain", type=int, default=5_000_000_000)
    for name in ("--t0", "--start", "--stop", "--end", "--bin", "--nbins"):
        fe.add_argument(name, type=int, required=True)
    fe.add_argument("--out", required=True)
    a = p.parse_args(argv)
    agent.die_with_parent()
    {"serve": serve, "fetch": fetch}[a.mode](a)


if __name__ == "__main__":
    main()
