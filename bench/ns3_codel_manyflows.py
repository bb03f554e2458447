"""Cross-check of the AQMs (run with the ns-3 venv of bench/ns3_crosscheck.py, its --venv or
$CCFAIR_NS3_VENV: VENV/bin/python bench/ns3_codel_manyflows.py 16).

16 (or N) CUBIC flows, 10 Mbit/s, 50 ms, 2 BDP, CoDel (target 5 ms, interval 100 ms) in ns-3 3.44
(the dumbbell of bench/ns3_dumbbell.py, flow i starting at i/N s):
mean queue length in packets over 20-60 s (sampled every 10 ms) and goodput."""

import sys

from ns3_dumbbell import build

N = int(sys.argv[1])
tid = sys.argv[2] if len(sys.argv) > 2 else "ns3::TcpCubic"
RATE = 10_000_000
RTT_MS = 50
LIMIT = 84
net = build(
    [tid] * N,
    rate_bps=RATE,
    rtt_ms=RTT_MS,
    starts_s=[i * 1000 // N / 1000 for i in range(N)],
    qdisc="ns3::CoDelQueueDisc",
    qdisc_attrs={"MaxSize": f"{LIMIT}p", "Target": "5ms", "Interval": "100ms"},
)
net.run_until(20)
rx0 = sum(net.received())
samples = []
for _ in range(4000):
    net.ns.Simulator.Stop(net.ns.MilliSeconds(10))
    net.ns.Simulator.Run()
    samples.append(net.qdisc.GetNPackets())
rx1 = sum(net.received())
gp = (rx1 - rx0) * 8 / 40
mean_q = sum(samples) / len(samples)
pps = RATE / 8 / 1500
print(f"ns-3 {tid} N={N}: goodput {gp / 1e6:.2f} Mbit/s, mean queue {mean_q:.1f} pkt -> Little's-law sojourn {mean_q / pps * 1000:.1f} ms")
