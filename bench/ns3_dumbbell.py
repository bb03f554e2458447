"""The ns-3 dumbbell that the ns-3 cross-checks and the speed benchmark share.

    senders -access, 2 ms- router -bottleneck, RTT/2 - 4 ms- router -access, 2 ms- receivers

One sender/receiver pair per flow, each with its own TCP socket type (so a run can
mix CCAs), bulk senders of 1448-byte writes, packet sinks on port 5000 + i. The
bottleneck device holds 1 packet (the one being serialized); the root queue disc
(installed before the addresses, so ns-3 does not add its default FqCoDel) holds
the rest. TCP as close to Linux/ccfair as ns-3 3.44's attributes allow: MSS 1448,
initial cwnd 10, SACK (timestamps are on by default), delayed ACK every 2nd
segment, minimum RTO 200 ms (ns-3 attribute reference, TcpSocket/TcpSocketBase).

Runs inside a Python that has the PyPI ``ns3`` wheel (3.44.post0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Dumbbell:
    ns: Any  # the ns-3 bindings module
    sinks: list[Any]  # one PacketSink per flow
    device_queue: Any  # the bottleneck device's 1-packet queue
    qdisc: Any  # the bottleneck's root queue disc

    def received(self) -> list[int]:
        """Bytes each flow's sink has received so far."""
        return [s.GetTotalRx() for s in self.sinks]

    def drops(self) -> int:
        """Packets dropped at the bottleneck so far (device queue + queue disc)."""
        return int(self.device_queue.GetTotalDroppedPackets() + self.qdisc.GetStats().nTotalDroppedPackets)

    def run_until(self, t_s: float) -> None:
        self.ns.Simulator.Stop(self.ns.Seconds(t_s) - self.ns.Simulator.Now())
        self.ns.Simulator.Run()


def build(
    type_ids: list[str],
    *,
    rate_bps: int,
    rtt_ms: int,
    starts_s: list[float],
    qdisc: str = "ns3::FifoQueueDisc",
    qdisc_attrs: dict[str, str],
    access_bps: int = 1_000_000_000,
    sockbuf_bytes: int = 4 << 20,
) -> Dumbbell:
    """Build the dumbbell for one flow per entry of `type_ids` (ns-3 TcpSocketBase
    TypeIds, e.g. "ns3::TcpCubic"), starting at `starts_s`; the queue disc `qdisc`
    with string attributes `qdisc_attrs` (e.g. {"MaxSize": "42p"})."""
    from ns import ns  # type: ignore[import-not-found]

    # Several runs may share one process: start each from fresh address state.
    ns.Ipv4AddressGenerator.Reset()
    _tcp_defaults(ns, sockbuf_bytes)
    n = len(type_ids)
    senders, receivers, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(n)
    receivers.Create(n)
    routers.Create(2)
    stack = ns.InternetStackHelper()
    for c in (senders, receivers, routers):
        stack.Install(c)
    addr = ns.Ipv4AddressHelper()
    bdevs, qdiscs = _bottleneck(ns, addr, routers, rate_bps, rtt_ms, qdisc, qdisc_attrs)
    rx = _access_links(ns, addr, senders, receivers, routers, access_bps)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    sinks = [_bulk_flow(ns, senders.Get(i), receivers.Get(i), rx[i], type_ids[i], 5000 + i, starts_s[i]) for i in range(n)]
    device_queue = ns.DynamicCast[ns.PointToPointNetDevice](bdevs.Get(0)).GetQueue()
    return Dumbbell(ns, sinks, device_queue, qdiscs.Get(0))


def _tcp_defaults(ns: Any, sockbuf_bytes: int) -> None:
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(sockbuf_bytes))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(sockbuf_bytes))
    ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))


def _bottleneck(ns: Any, addr: Any, routers: Any, rate_bps: int, rtt_ms: int, qdisc: str, attrs: dict[str, str]) -> tuple[Any, Any]:
    link = ns.PointToPointHelper()
    link.SetDeviceAttribute("DataRate", ns.StringValue(f"{rate_bps}bps"))
    link.SetChannelAttribute("Delay", ns.StringValue(f"{rtt_ms // 2 - 4}ms"))
    link.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue("1p"))
    bdevs = link.Install(routers.Get(0), routers.Get(1))
    tch = ns.TrafficControlHelper()
    args: list[Any] = [qdisc]
    for key, value in attrs.items():
        args += [key, ns.StringValue(value)]
    tch.SetRootQueueDisc(*args)
    qdiscs = tch.Install(bdevs)
    addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(bdevs)
    return bdevs, qdiscs


def _access_links(ns: Any, addr: Any, senders: Any, receivers: Any, routers: Any, access_bps: int) -> list[Any]:
    access = ns.PointToPointHelper()
    access.SetDeviceAttribute("DataRate", ns.StringValue(f"{access_bps}bps"))
    access.SetChannelAttribute("Delay", ns.StringValue("2ms"))
    rx = []
    for i in range(senders.GetN()):
        d1 = access.Install(senders.Get(i), routers.Get(0))
        addr.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addr.Assign(d1)
        d2 = access.Install(routers.Get(1), receivers.Get(i))
        addr.SetBase(ns.Ipv4Address(f"10.2.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        rx.append(addr.Assign(d2))
    return rx


def _bulk_flow(ns: Any, sender: Any, receiver: Any, rx_iface: Any, type_id: str, port: int, start_s: float) -> Any:
    # Per-node CCA: the socket type of this sender's TCP stack.
    tcp = sender.GetObject[ns.TcpL4Protocol]()
    tcp.SetAttribute("SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(type_id)))
    sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    sapps = sink.Install(receiver)
    sapps.Start(ns.Seconds(0))
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(rx_iface.GetAddress(1), port).ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    bulk.SetAttribute("SendSize", ns.UintegerValue(1448))
    bapps = bulk.Install(sender)
    bapps.Start(ns.Seconds(start_s))
    return ns.DynamicCast[ns.PacketSink](sapps.Get(0))
