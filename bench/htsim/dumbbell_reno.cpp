// A dumbbell of NewReno flows in htsim (Broadcom/csg-htsim, sim/tcp.cpp's
// TcpSrc / TcpSink), the scenario of bench/htsim_speed.py written for the
// speed comparison with ccfair; linked against htsim's libhtsim.a, which the
// bench builds from a checkout of https://github.com/Broadcom/csg-htsim.
//
//   dumbbell_reno FLOWS RATE_BPS RTT_US SECONDS BUFFER_BYTES
//
// Every flow: sender -> access pipe (RTT/2, shared by all flows: a pipe is a
// FIFO with one pending event, as ccfair's shared lines) -> drop-tail queue
// at RATE_BPS holding BUFFER_BYTES -> receiver; ACKs: receiver -> reverse pipe
// (RTT/2, shared) -> sender. 1500-byte packets, per-packet ACKs, htsim's
// retransmission-timer scanner every 10 ms, flow starts spread over the first
// millisecond (seeded). Timed: the event loop only (topology built before;
// htsim's own console output silenced).
// Prints one line: data packets (new data + bottleneck drops, each drop
// being retransmitted once), events' wall seconds, packets per wall second.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <vector>

#include "config.h"
#include "eventlist.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "tcp.h"

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: %s FLOWS RATE_BPS RTT_US SECONDS BUFFER_BYTES\n", argv[0]);
        return 2;
    }
    const int flows = std::atoi(argv[1]);
    const uint64_t rate_bps = std::strtoull(argv[2], nullptr, 10);
    const uint64_t rtt_us = std::strtoull(argv[3], nullptr, 10);
    const double seconds = std::atof(argv[4]);
    const uint64_t buffer_bytes = std::strtoull(argv[5], nullptr, 10);

    srand(1);
    Packet::set_packet_size(1500);
    EventList eventlist;
    eventlist.setEndtime(timeFromSec(seconds));

    Pipe forward(timeFromUs((uint32_t)(rtt_us / 2)), eventlist);
    Pipe back(timeFromUs((uint32_t)(rtt_us - rtt_us / 2)), eventlist);
    Queue bottleneck(rate_bps, buffer_bytes, eventlist, nullptr);
    TcpRtxTimerScanner scanner(timeFromMs(10), eventlist);

    std::vector<TcpSrc*> srcs;
    for (int i = 0; i < flows; i++) {
        auto* src = new TcpSrc(nullptr, nullptr, eventlist);
        auto* sink = new TcpSink();
        scanner.registerTcp(*src);
        auto* out = new route_t();
        out->push_back(&forward);
        out->push_back(&bottleneck);
        out->push_back(sink);
        auto* in = new route_t();
        in->push_back(&back);
        in->push_back(src);
        src->connect(*out, *in, *sink, (simtime_picosec)(drand() * timeFromMs(1)));
        srcs.push_back(src);
    }

    // htsim's TCP prints a line per retransmission timeout to std::cout:
    // silenced (a stream in a failed state formats nothing), so that the
    // event loop is timed without terminal or pipe output.
    std::cout.setstate(std::ios::failbit);
    auto t0 = std::chrono::steady_clock::now();
    while (eventlist.doNextEvent()) {
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    uint64_t packets = bottleneck.num_drops();
    for (auto* s : srcs) packets += s->_packets_sent / s->_mss;
    std::printf("data_packets %llu wall_s %.6f pkts_per_s %.0f\n", (unsigned long long)packets, wall, packets / wall);
    return 0;
}
