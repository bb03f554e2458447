"""Cross-check for issue 3 (run with the ns-3 venv of bench/ns3_crosscheck.py:
/tmp/ccfair-ns3-venv/bin/python bench/ns3_codel_manyflows.py 16).

16 (or N) CUBIC flows, 10 Mbit/s, 50 ms, 2 BDP, CoDel (target 5 ms, interval 100 ms) in ns-3 3.44:
mean queue length in packets over 20-60 s (sampled every 10 ms) and goodput."""

import sys

from ns import ns

N = int(sys.argv[1])
tid = sys.argv[2] if len(sys.argv) > 2 else "ns3::TcpCubic"
RATE = 10_000_000
RTT_MS = 50
LIMIT = 84
ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
ns.Config.SetDefault("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(4 << 20))
ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(4 << 20))
ns.Config.SetDefault("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
ns.Config.SetDefault("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TypeId.LookupByName(tid)))
snd, rcv, rt = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
snd.Create(N)
rcv.Create(N)
rt.Create(2)
st = ns.InternetStackHelper()
st.Install(snd)
st.Install(rcv)
st.Install(rt)
acc = ns.PointToPointHelper()
acc.SetDeviceAttribute("DataRate", ns.StringValue("1Gbps"))
acc.SetChannelAttribute("Delay", ns.StringValue("2ms"))
bn = ns.PointToPointHelper()
bn.SetDeviceAttribute("DataRate", ns.StringValue(f"{RATE}bps"))
bn.SetChannelAttribute("Delay", ns.StringValue(f"{RTT_MS // 2 - 4}ms"))
bn.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.StringValue("1p"))
addr = ns.Ipv4AddressHelper()
bd = bn.Install(rt.Get(0), rt.Get(1))
tch = ns.TrafficControlHelper()
tch.SetRootQueueDisc(
    "ns3::CoDelQueueDisc", "MaxSize", ns.StringValue(f"{LIMIT}p"), "Target", ns.StringValue("5ms"), "Interval", ns.StringValue("100ms")
)
qd = tch.Install(bd)
addr.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
addr.Assign(bd)
rx = []
for i in range(N):
    d1 = acc.Install(snd.Get(i), rt.Get(0))
    addr.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(d1)
    d2 = acc.Install(rt.Get(1), rcv.Get(i))
    addr.SetBase(ns.Ipv4Address(f"10.2.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
    rx.append(addr.Assign(d2))
ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
sinks = []
for i in range(N):
    sh = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 5000).ConvertTo())
    sa = sh.Install(rcv.Get(i))
    sa.Start(ns.Seconds(0))
    sinks.append(ns.DynamicCast[ns.PacketSink](sa.Get(0)))
    b = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(rx[i].GetAddress(1), 5000).ConvertTo())
    b.SetAttribute("MaxBytes", ns.UintegerValue(0))
    b.SetAttribute("SendSize", ns.UintegerValue(1448))
    ba = b.Install(snd.Get(i))
    ba.Start(ns.MilliSeconds(i * 1000 // N))
q = qd.Get(0)
ns.Simulator.Stop(ns.Seconds(20))
ns.Simulator.Run()
rx0 = sum(s.GetTotalRx() for s in sinks)
samples = []
for k in range(4000):
    ns.Simulator.Stop(ns.MilliSeconds(10))
    ns.Simulator.Run()
    samples.append(q.GetNPackets())
rx1 = sum(s.GetTotalRx() for s in sinks)
gp = (rx1 - rx0) * 8 / 40
mean_q = sum(samples) / len(samples)
pps = RATE / 8 / 1500
print(f"ns-3 {tid} N={N}: goodput {gp / 1e6:.2f} Mbit/s, mean queue {mean_q:.1f} pkt -> Little's-law sojourn {mean_q / pps * 1000:.1f} ms")
