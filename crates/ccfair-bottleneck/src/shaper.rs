//! The bottleneck's forwarding logic, free of sockets so it can be tested:
//! per-port delay lines, the token-bucket link in front of a ccfair queue
//! discipline, and the measurement monitor (same quantities as the
//! simulator's monitor in ccfair-sim/src/sim.rs).
//!
//! Forward direction (a sender port -> the receiver port):
//!   arrival --(fwd delay of that port)--> qdisc --(link at rate_bps)--> out
//! Reverse direction (receiver port -> a sender port): a pure delay line.
//!
//! Delay-only mode (`Shaper::delay_only`, the testbed's kernel bottleneck
//! path): the forward direction is a pure delay line too - no queue, no rate
//! limit; the frames go straight to the receiver port, whose egress qdisc
//! (tc tbf + child, configured by the runner) is the bottleneck.
//!
//! The link is a token bucket (tbf in Linux, net/sched/sch_tbf.c, and S0's
//! "token bucket with a one-frame burst"), the simulator's own
//! (`ccfair_sim::token_bucket::TokenBucket`, whose header gives the rule): the
//! head frame leaves when the bucket holds its `wire_bytes*8/rate_bps` of
//! tokens, at once on an idle link; a late wake-up of up to one burst is caught
//! up without losing capacity. Charged size = what `frame_info` says: main.rs gives
//! the IP length plus the run's L2 overhead (`l2_overhead_bytes`, default 14:
//! the Ethernet frame, 1514 for MSS 1448), as the simulator charges it.
//! The frame on the link counts against the qdisc's limits and in the queue
//! samples until its transmission ends, as tbf's head packet in Linux (see
//! ccfair-sim qdisc/mod.rs): a limit of N frames holds N, not N + 1.
//! Constants: times in ns, sizes in bytes, rates in bit/s.

use std::collections::VecDeque;

use ccfair_sim::config::{LinkConfig, QdiscConfig, TRACE_OPPORTUNITY_BYTES};
use ccfair_sim::outages::Outages;
use ccfair_sim::packet::{Ecn, Kind, Packet};
use ccfair_sim::qdisc::{self, InService, Qdisc};
use ccfair_sim::rng::{derive_seed, splitmix64, stream};
use ccfair_sim::token_bucket::TokenBucket;

/// Highest sojourn-histogram bin kept (larger sojourns land in the last bin), as the simulator.
const MAX_SOJOURN_BINS: usize = 1 << 20;
/// Lateness histogram: 1 us buckets up to 10 ms.
const LATE_BUCKETS_US: usize = 10_000;
/// Stalls recorded per run (`Stats::stalls`): 16 bytes each; a run stalling more stops recording.
const MAX_STALLS: usize = 100_000;

/// Monitor settings (all relative to the experiment's time zero `t0_ns`).
#[derive(Debug, Clone)]
pub struct MonitorConfig {
    pub t0_ns: u64,
    pub duration_ns: u64,
    pub bin_ns: u64,
    pub sample_ns: u64,
    pub sojourn_bin_ns: u64,
    pub window_start_ns: u64,
    pub window_end_ns: u64,
}

/// What the bottleneck measured; serialized into the stats file.
#[derive(Debug, Default, serde::Serialize)]
pub struct Stats {
    pub link_tx_bytes: Vec<u64>,
    pub queue_time_ns: Vec<u64>,
    pub queue_packets: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    pub sojourn_bin: Vec<u32>,
    pub sojourn_count: Vec<u64>,
    pub sojourn_sum_ns_per_bin: Vec<u64>,
    pub sojourn_pkts_per_bin: Vec<u64>,
    /// Packets of each sender port dropped by the queue discipline.
    pub drops: Vec<u64>,
    /// Packets forwarded through the link (forward) and the reverse delay lines.
    pub forwarded_fwd: u64,
    pub forwarded_rev: u64,
    /// Frames sent late: how far after their due time they actually left (timer precision).
    pub late_count: u64,
    pub late_p50_us: u64,
    pub late_p99_us: u64,
    pub late_max_ns: u64,
    pub late_mean_ns: f64,
    /// The primary link's service lost to late polls within the monitor window: per frame whose
    /// transmission ended with frames waiting behind it, how much later than its end the poll
    /// came, less the token bucket's depth (what the bucket makes up). On a backlogged link the
    /// utilization falls by this over the window; a stall with nothing queued costs nothing.
    pub stall_lost_ns: u64,
    /// The primary link's stalls over the whole run, each `[end, lost]`: the end of a
    /// transmission (ns after t0) after which a late poll, with frames waiting, lost `lost` ns of
    /// service beyond what the token bucket makes up (as `stall_lost_ns`); at most
    /// `MAX_STALLS`, in time order. What a comparison needs to replay the run's stalls.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stalls: Vec<[u64; 2]>,
    /// Filled in by main: socket-level counters.
    pub rx_socket_drops: Vec<u64>,
    pub tx_errors: u64,
    pub oversize_frames: u64,
    /// Per sender port: frames the receiver port accepted, and their TCP payload bytes
    /// (the flow's bytes as the bottleneck saw them; retransmissions included).
    pub flow_fwd_packets: Vec<u64>,
    pub flow_fwd_payload_bytes: Vec<u64>,
    /// Per sender port: data segments that arrived again (retransmissions seen on the wire).
    pub flow_retransmitted_segments: Vec<u64>,
    /// Per link (the dumbbell's one is "bottleneck"; empty, and absent from the file, in delay-only mode).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkStats>,
    /// Filled in by main: the order frames arriving together entered the queue (the config's
    /// `port_order`, echoed so the runner knows this binary applied it), and with "arrival" the
    /// frames read without a kernel receive stamp (they enter at their read time).
    pub port_order: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unstamped_frames: Option<u64>,
}

/// Outages `[start, duration]` (ns after t0) that a link at clock time `t0_ns` can run: none
/// refused (ccfair_sim outages.rs; the run's clock added to each start must fit in 64 bits).
pub fn check_outages(outages_ns: &[[u64; 2]], t0_ns: u64) -> Result<(), String> {
    Outages::from_pairs(outages_ns, t0_ns).map(|_| ()).map_err(|(i, msg)| format!("outages.{i}: {msg}"))
}

/// A link's outages on the bottleneck's clock (t0 added), checked by [`check_outages`].
fn link_outages(outages_ns: &[[u64; 2]], t0_ns: u64) -> Option<Outages> {
    Outages::from_pairs(outages_ns, t0_ns).expect("outages checked with the config (check_outages)")
}

/// A frame waiting in a delay line: due time and slab index.
type Line = VecDeque<(u64, usize)>;

/// Bytes one delivery opportunity of a trace-driven link may carry (mahimahi: one MTU).
const TRACE_MTU_BYTES: u32 = TRACE_OPPORTUNITY_BYTES as u32;

/// What one link measured (the stats file's `links`).
#[derive(Debug, Default, serde::Serialize)]
pub struct LinkStats {
    pub name: String,
    pub rate_bps: u64,
    /// Wire bytes that finished transmission, per bin.
    pub tx_bytes: Vec<u64>,
    /// Backlog samples (the frame in transmission included) on the run's sample grid.
    pub queue_packets: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    /// Frames the queue discipline dropped, frames it marked CE, frames lost at random.
    pub drops: u64,
    pub marks: u64,
    pub loss_drops: u64,
    /// Wire bytes the link delivered over the whole run.
    pub delivered_bytes: u64,
}

/// The transmitter of a link.
enum Tx {
    /// Token bucket (see the header).
    Rate(TokenBucket),
    /// mahimahi: at each opportunity up to one MTU of queued bytes leaves; unused opportunities are lost.
    Trace { opp_ms: Vec<u64>, period_ms: u64, t0_ns: u64, cycle: u64, idx: usize, budget: u32, idle: bool },
}

impl Tx {
    fn trace_now_ns(opp_ms: &[u64], period_ms: u64, t0_ns: u64, cycle: u64, idx: usize) -> u64 {
        t0_ns + (cycle * period_ms + opp_ms[idx]) * 1_000_000
    }

    /// When a frame of `wire_bytes` dequeued at `now` leaves the link (rate: when its tokens are there).
    fn end_of(&mut self, now: u64, wire_bytes: u32) -> u64 {
        match self {
            Tx::Rate(bucket) => bucket.release(now, wire_bytes),
            Tx::Trace { opp_ms, period_ms, t0_ns, cycle, idx, budget, idle } => {
                let at = |c: u64, i: usize| Tx::trace_now_ns(opp_ms, *period_ms, *t0_ns, c, i);
                let next = |c: &mut u64, i: &mut usize| {
                    *i += 1;
                    if *i == opp_ms.len() {
                        *i = 0;
                        *c += 1;
                    }
                };
                // After an idle spell the opportunities that passed with nothing queued are gone.
                if *idle {
                    while at(*cycle, *idx) < now {
                        next(cycle, idx);
                        *budget = TRACE_MTU_BYTES;
                    }
                    *idle = false;
                }
                // The frame's bytes use what is left of this opportunity and go on in the next
                // ones; it leaves at the opportunity that carries its last byte (mahimahi).
                let mut need = wire_bytes.max(1);
                loop {
                    if *budget == 0 {
                        next(cycle, idx);
                        *budget = TRACE_MTU_BYTES;
                    }
                    let take = need.min(*budget);
                    *budget -= take;
                    need -= take;
                    if need == 0 {
                        break;
                    }
                }
                at(*cycle, *idx)
            }
        }
    }

    /// The queue ran empty.
    fn went_idle(&mut self) {
        match self {
            Tx::Rate(bucket) => bucket.went_idle(),
            Tx::Trace { idle, .. } => *idle = true,
        }
    }
}

struct Link {
    tx: Tx,
    qdisc: Box<dyn Qdisc>,
    delay_ns: u64,
    l2_overhead_bytes: u32,
    loss: f64,
    loss_key: u64,
    loss_draws: u64,
    /// Frame on the link: (end of transmission, slab index, wire bytes).
    on_link: Option<(u64, usize, u32)>,
    /// Frames that left the transmitter, in propagation for `delay_ns`.
    line: Line,
    stats: LinkStats,
}

impl Link {
    /// `spec`'s link; a constant rate is a token bucket `burst_bytes` deep.
    fn new(spec: &LinkConfig, burst_bytes: u64, seed: u64, index: usize, t0_ns: u64, nbins: usize) -> Link {
        let rate_bps = spec.mean_rate_bps();
        let tx = match &spec.trace_ms {
            Some(t) => Tx::Trace {
                opp_ms: t.clone(),
                period_ms: *t.last().unwrap_or(&1),
                t0_ns,
                cycle: 0,
                idx: 0,
                budget: TRACE_MTU_BYTES,
                idle: true,
            },
            None => Tx::Rate(TokenBucket::new(rate_bps, burst_bytes).with_outages(link_outages(&spec.outages_ns, t0_ns))),
        };
        Link {
            tx,
            qdisc: qdisc::build(&spec.qdisc, derive_seed(seed, stream::QDISC + index as u64), rate_bps),
            delay_ns: spec.delay_ns,
            l2_overhead_bytes: spec.l2_overhead_bytes,
            loss: spec.loss,
            loss_key: derive_seed(seed, stream::LINK_LOSS + index as u64),
            loss_draws: 0,
            on_link: None,
            line: VecDeque::new(),
            stats: LinkStats { name: spec.name.clone(), rate_bps, tx_bytes: vec![0; nbins], ..Default::default() },
        }
    }

    /// A uniform draw in [0, 1) from the link's loss stream (SplitMix64 over a counter).
    fn lost(&mut self) -> bool {
        if self.loss <= 0.0 {
            return false;
        }
        self.loss_draws += 1;
        let u = (splitmix64(self.loss_key.wrapping_add(self.loss_draws)) >> 11) as f64 / (1u64 << 53) as f64;
        u < self.loss
    }
}

/// Where a frame is: its sender port, direction and the index of the link of its path it is on.
#[derive(Clone, Copy, Default)]
struct Route {
    port: u32,
    rev: bool,
    hop: u32,
}

pub struct Shaper {
    fwd_delay_ns: Vec<u64>,
    rev_delay_ns: Vec<u64>,
    fwd_lines: Vec<Line>,
    rev_lines: Vec<Line>,
    links: Vec<Link>,
    /// Per sender port: the links its data frames cross in order, and its ACKs (empty: the reverse delay line only).
    fwd_paths: Vec<Vec<usize>>,
    rev_paths: Vec<Vec<usize>>,
    /// Per slab index: where that frame is on its path.
    route: Vec<Route>,
    /// ACK frames that arrived for a reverse path, to enter its first link at the next poll.
    pending_rev: Vec<usize>,
    dropped: Vec<(Packet, ccfair_sim::qdisc::DropReason)>,
    mon: MonitorConfig,
    next_sample: u64,
    soj_hist: Vec<u64>,
    late_hist: Vec<u64>,
    late_sum_ns: u128,
    /// false = delay-only mode: forward frames bypass the qdisc and the link.
    link: bool,
    /// The link whose series fill the run's single-queue statistics (link_tx_bytes, queue
    /// samples, sojourn): the dumbbell's one; a topology's narrowest link crossed by data.
    primary: usize,
    pub stats: Stats,
    /// Due frames of different ports enter in the order of their due times (else port by port).
    pub merge_by_due: bool,
    /// With `record_slots`: every forward frame entering the primary link.
    pub slot_log: Option<Vec<SlotRecord>>,
    /// The primary link's last frame to end: (its end, the poll that saw it end).
    last_free: (u64, u64),
}

/// A forward frame entering the primary link (bench/fidelity_slots.py): when it was due there and
/// when the poll admitted or dropped it, its port, the queue before it (packets, the one on the
/// link included), and the last transmission to end before it (nominal end, poll time). A frame
/// leaving a reverse delay line towards its sender port (an ACK) has `queue_before` u32::MAX.
#[derive(Debug, Clone, Copy)]
pub struct SlotRecord {
    pub due_ns: u64,
    pub now_ns: u64,
    pub port: u32,
    pub queue_before: u32,
    pub admitted: bool,
    pub last_free_ns: u64,
    pub last_free_poll_ns: u64,
}

/// Where a frame must go now.
#[derive(Debug, PartialEq, Eq)]
pub enum Out {
    /// To the receiver port.
    Receiver(usize),
    /// To sender port `port`.
    Sender { port: usize, slab: usize },
}

impl Shaper {
    /// The dumbbell: one link at `rate_bps` that every port's data frames cross, after the port's
    /// forward delay; ACKs through the port's reverse delay line. `frame_info` gives charged bytes.
    pub fn new(
        rate_bps: u64,
        burst_bytes: u64,
        qdisc_cfg: &QdiscConfig,
        seed: u64,
        fwd_delay_ns: Vec<u64>,
        rev_delay_ns: Vec<u64>,
        mon: MonitorConfig,
    ) -> Shaper {
        let n = fwd_delay_ns.len();
        let link = LinkConfig {
            name: "bottleneck".into(),
            rate_bps: Some(rate_bps),
            trace_ms: None,
            delay_ns: 0,
            qdisc: qdisc_cfg.clone(),
            l2_overhead_bytes: 0,
            loss: 0.0,
            outages_ns: Vec::new(),
        };
        let mut s = Shaper::topology(&[(link, burst_bytes)], vec![vec![0]; n], vec![vec![]; n], seed, fwd_delay_ns, rev_delay_ns, mon);
        // the dumbbell's queue discipline draws from the run seed itself, as it always has
        s.links[0].qdisc = qdisc::build(qdisc_cfg, seed, rate_bps);
        s
    }

    /// A topology: `links` (each with its token bucket's depth, bytes), and per sender port the
    /// links its data (`fwd_paths`) and its ACKs (`rev_paths`, empty = the reverse delay line
    /// alone) cross in order. A port's forward delay comes before its first link, its reverse
    /// delay after its ACKs' last link.
    pub fn topology(
        links: &[(LinkConfig, u64)],
        fwd_paths: Vec<Vec<usize>>,
        rev_paths: Vec<Vec<usize>>,
        seed: u64,
        fwd_delay_ns: Vec<u64>,
        rev_delay_ns: Vec<u64>,
        mon: MonitorConfig,
    ) -> Shaper {
        let n = fwd_delay_ns.len();
        let nbins = mon.duration_ns.div_ceil(mon.bin_ns) as usize;
        let stats = Stats {
            link_tx_bytes: vec![0; nbins],
            sojourn_sum_ns_per_bin: vec![0; nbins],
            sojourn_pkts_per_bin: vec![0; nbins],
            drops: vec![0; n],
            ..Default::default()
        };
        Shaper {
            fwd_delay_ns,
            rev_delay_ns,
            fwd_lines: vec![VecDeque::new(); n],
            rev_lines: vec![VecDeque::new(); n],
            links: links.iter().enumerate().map(|(k, (l, burst))| Link::new(l, *burst, seed, k, mon.t0_ns, nbins)).collect(),
            fwd_paths,
            rev_paths,
            route: Vec::new(),
            pending_rev: Vec::new(),
            dropped: Vec::new(),
            next_sample: mon.t0_ns,
            mon,
            soj_hist: Vec::new(),
            late_hist: vec![0; LATE_BUCKETS_US + 1],
            late_sum_ns: 0,
            link: true,
            primary: 0,
            stats,
            merge_by_due: false,
            slot_log: None,
            last_free: (0, 0),
        }
    }

    /// The dumbbell link's outages: `[start, duration]` pairs, ns after t0 (ccfair_sim outages.rs,
    /// checked by [`check_outages`]): the link sends nothing over each, its frames wait.
    pub fn set_outages(&mut self, outages_ns: &[[u64; 2]]) {
        if let Tx::Rate(bucket) = &mut self.links[0].tx {
            *bucket = bucket.clone().with_outages(link_outages(outages_ns, self.mon.t0_ns));
        }
    }

    /// The link whose series fill the single-queue statistics.
    pub fn set_primary(&mut self, k: usize) {
        self.primary = k.min(self.links.len().saturating_sub(1));
    }

    /// Delay-only mode: forward frames leave when their delay has elapsed, with
    /// no queue and no rate limit (the kernel's qdisc is the bottleneck). Their
    /// lateness against the delay line's due time is recorded.
    pub fn delay_only(fwd_delay_ns: Vec<u64>, rev_delay_ns: Vec<u64>, mon: MonitorConfig) -> Shaper {
        let mut s = Shaper::new(1, 1, &QdiscConfig::droptail(Some(1), None), 0, fwd_delay_ns, rev_delay_ns, mon);
        s.link = false;
        s
    }

    fn set_route(&mut self, slab: usize, r: Route) {
        if self.route.len() <= slab {
            self.route.resize(slab + 1, Route::default());
        }
        self.route[slab] = r;
    }

    /// A data frame arrived on sender port `port`.
    pub fn arrive_fwd(&mut self, now: u64, port: usize, slab: usize) {
        self.set_route(slab, Route { port: port as u32, rev: false, hop: 0 });
        self.fwd_lines[port].push_back((now + self.fwd_delay_ns[port], slab));
    }

    /// A frame from the receiver for sender port `port`: through its ACKs' links, if any, then the reverse line.
    pub fn arrive_rev(&mut self, now: u64, port: usize, slab: usize) {
        self.set_route(slab, Route { port: port as u32, rev: true, hop: 0 });
        if self.rev_paths[port].is_empty() {
            self.rev_lines[port].push_back((now + self.rev_delay_ns[port], slab));
        } else {
            self.pending_rev.push(slab);
        }
    }

    fn bin(&self, now: u64) -> Option<usize> {
        let t = now.checked_sub(self.mon.t0_ns)?;
        let b = (t / self.mon.bin_ns) as usize;
        (b < self.stats.link_tx_bytes.len()).then_some(b)
    }

    fn note_late(&mut self, due: u64, now: u64) {
        let late = now.saturating_sub(due);
        self.stats.late_count += 1;
        self.late_sum_ns += late as u128;
        self.stats.late_max_ns = self.stats.late_max_ns.max(late);
        self.late_hist[((late / 1000) as usize).min(LATE_BUCKETS_US)] += 1;
    }

    /// Frame `slab` enters link `k` at `now`: random loss, then the queue discipline.
    fn enter(&mut self, k: usize, now: u64, slab: usize, frame_info: &dyn Fn(usize) -> (u32, Ecn), freed: &mut Vec<usize>) {
        let r = self.route[slab];
        let link = &mut self.links[k];
        if link.lost() {
            link.stats.loss_drops += 1;
            freed.push(slab);
            return;
        }
        let (bytes, ecn) = frame_info(slab);
        let mut p = Packet::new(r.port, Kind::Data, bytes + link.l2_overhead_bytes);
        p.seq = slab as u64;
        p.ecn = ecn;
        p.enqueue_ns = now;
        if let Err((d, _)) = link.qdisc.enqueue(p, now) {
            link.stats.drops += 1;
            if !self.route[d.seq as usize].rev {
                self.stats.drops[d.flow as usize] += 1;
            }
            freed.push(d.seq as usize);
        }
    }

    /// Frame `slab` has crossed the link at hop `route.hop` of its path: on to the next link, or out.
    fn advance(&mut self, now: u64, slab: usize, frame_info: &dyn Fn(usize) -> (u32, Ecn), out: &mut Vec<Out>, freed: &mut Vec<usize>) {
        let mut r = self.route[slab];
        r.hop += 1;
        self.route[slab] = r;
        let path = if r.rev { &self.rev_paths[r.port as usize] } else { &self.fwd_paths[r.port as usize] };
        match path.get(r.hop as usize).copied() {
            Some(k) => self.enter(k, now, slab, frame_info, freed),
            None if r.rev => self.rev_lines[r.port as usize].push_back((now + self.rev_delay_ns[r.port as usize], slab)),
            None => {
                self.stats.forwarded_fwd += 1;
                out.push(Out::Receiver(slab));
            }
        }
    }

    /// Run everything due at `now`. `frame_info(slab)` gives a frame's bytes (the link adds its
    /// L2 overhead) and ECN codepoint; `out` receives frames to transmit; `mark_ce(slab)` sets CE.
    pub fn poll(
        &mut self,
        now: u64,
        frame_info: &dyn Fn(usize) -> (u32, Ecn),
        mark_ce: &mut dyn FnMut(usize),
        out: &mut Vec<Out>,
        freed: &mut Vec<usize>,
    ) {
        // Queue samples on the nominal grid.
        let end = self.mon.t0_ns + self.mon.duration_ns;
        while self.next_sample <= now && self.next_sample < end {
            self.stats.queue_time_ns.push(self.next_sample - self.mon.t0_ns);
            for (k, link) in self.links.iter_mut().enumerate() {
                let on_link = InService::of(link.on_link.map(|(_, _, wire)| wire));
                let pkts = link.qdisc.len_packets() as u32 + on_link.packets as u32;
                let bytes = link.qdisc.len_bytes() + on_link.bytes;
                if k == self.primary {
                    self.stats.queue_packets.push(pkts);
                    self.stats.queue_bytes.push(bytes);
                }
                link.stats.queue_packets.push(pkts);
                link.stats.queue_bytes.push(bytes);
            }
            self.next_sample += self.mon.sample_ns;
        }
        // ACKs that arrived since the last poll enter their first link.
        for slab in std::mem::take(&mut self.pending_rev) {
            let port = self.route[slab].port as usize;
            let k = self.rev_paths[port][0];
            self.enter(k, now, slab, frame_info, freed);
        }
        // The links first: a frame whose transmission ended by now has left and frees
        // its place before this poll's arrivals are admitted.
        for k in 0..self.links.len() {
            self.run_link(k, now, frame_info, mark_ce, freed);
        }
        // Forward delay lines -> the first link of the port's path: port by port, or every due
        // frame in the order of its due time (`merge_by_due`).
        if self.merge_by_due {
            while let Some((port, due, slab)) = self.pop_earliest_due(now) {
                self.forward(port, due, slab, now, frame_info, out, freed);
            }
        } else {
            for port in 0..self.fwd_lines.len() {
                while let Some((due, slab)) = pop_due(&mut self.fwd_lines[port], now) {
                    self.forward(port, due, slab, now, frame_info, out, freed);
                }
            }
        }
        // Propagation on each link -> the next link; until nothing moves (zero-delay links in series).
        loop {
            let mut moved = false;
            for k in 0..self.links.len() {
                self.run_link(k, now, frame_info, mark_ce, freed);
                while let Some((_, slab)) = pop_due(&mut self.links[k].line, now) {
                    moved = true;
                    self.advance(now, slab, frame_info, out, freed);
                }
            }
            if !moved {
                break;
            }
        }
        // Reverse delay lines.
        for port in 0..self.rev_lines.len() {
            while let Some((due, slab)) = pop_due(&mut self.rev_lines[port], now) {
                if let Some(log) = self.slot_log.as_mut() {
                    let (last_free_ns, last_free_poll_ns) = self.last_free;
                    log.push(SlotRecord {
                        due_ns: due,
                        now_ns: now,
                        port: port as u32,
                        queue_before: u32::MAX,
                        admitted: true,
                        last_free_ns,
                        last_free_poll_ns,
                    });
                }
                self.stats.forwarded_rev += 1;
                out.push(Out::Sender { port, slab });
            }
        }
    }

    /// The due frame (port, due time, slab) with the earliest due time of all ports, taken off its line.
    fn pop_earliest_due(&mut self, now: u64) -> Option<(usize, u64, usize)> {
        let fronts = self.fwd_lines.iter().enumerate().filter_map(|(p, l)| l.front().map(|&(due, _)| (due, p)));
        let (due, port) = fronts.filter(|&(due, _)| due <= now).min()?;
        let (_, slab) = self.fwd_lines[port].pop_front()?;
        Some((port, due, slab))
    }

    /// Frame `slab` of sender port `port`, due at `due`, leaves its forward delay line at `now`:
    /// into the first link of its path (recorded with `slot_log`), or out.
    #[allow(clippy::too_many_arguments)]
    fn forward(
        &mut self,
        port: usize,
        due: u64,
        slab: usize,
        now: u64,
        frame_info: &dyn Fn(usize) -> (u32, Ecn),
        out: &mut Vec<Out>,
        freed: &mut Vec<usize>,
    ) {
        if !self.link {
            self.note_late(due, now);
            self.stats.forwarded_fwd += 1;
            out.push(Out::Receiver(slab));
            return;
        }
        match self.fwd_paths[port].first() {
            Some(&k) if k == self.primary && self.slot_log.is_some() => {
                let link = &self.links[k];
                let before = link.qdisc.len_packets() as u32 + link.on_link.is_some() as u32;
                let n_freed = freed.len();
                self.enter(k, now, slab, frame_info, freed);
                let (last_free_ns, last_free_poll_ns) = self.last_free;
                let admitted = !freed[n_freed..].contains(&slab);
                let rec = SlotRecord {
                    due_ns: due,
                    now_ns: now,
                    port: port as u32,
                    queue_before: before,
                    admitted,
                    last_free_ns,
                    last_free_poll_ns,
                };
                self.slot_log.as_mut().unwrap().push(rec);
            }
            Some(&k) => self.enter(k, now, slab, frame_info, freed),
            None => {
                self.stats.forwarded_fwd += 1;
                out.push(Out::Receiver(slab));
            }
        }
    }

    /// Link `k` at `now`: frames whose transmission has ended leave (into the link's
    /// propagation line), and the next packets of the qdisc start (each counts against its
    /// limits until it has left).
    fn run_link(
        &mut self,
        k: usize,
        now: u64,
        frame_info: &dyn Fn(usize) -> (u32, Ecn),
        mark_ce: &mut dyn FnMut(usize),
        freed: &mut Vec<usize>,
    ) {
        loop {
            if let Some((end_ns, slab, wire)) = self.links[k].on_link {
                if end_ns > now {
                    break;
                }
                self.links[k].on_link = None;
                self.links[k].qdisc.set_in_service(InService::default());
                self.note_late(end_ns, now);
                if k == self.primary {
                    self.last_free = (end_ns, now);
                    self.note_lost_service(end_ns, now);
                }
                if let Some(b) = self.bin(end_ns) {
                    self.links[k].stats.tx_bytes[b] += wire as u64;
                    if k == self.primary {
                        self.stats.link_tx_bytes[b] += wire as u64;
                    }
                }
                let link = &mut self.links[k];
                link.stats.delivered_bytes += wire as u64;
                link.line.push_back((end_ns + link.delay_ns, slab));
            }
            let link = &mut self.links[k];
            let p = link.qdisc.dequeue(now, &mut self.dropped);
            for (d, _) in self.dropped.drain(..) {
                link.stats.drops += 1;
                if !self.route[d.seq as usize].rev {
                    self.stats.drops[d.flow as usize] += 1;
                }
                freed.push(d.seq as usize);
            }
            let Some(p) = p else {
                link.tx.went_idle();
                break;
            };
            let (_, ecn_before) = frame_info(p.seq as usize);
            if p.ecn == Ecn::Ce && ecn_before != Ecn::Ce {
                link.stats.marks += 1;
                mark_ce(p.seq as usize);
            }
            let sojourn = now - p.enqueue_ns;
            // The virtual clock's end is the frame's place in the link's rate; a frame smaller than
            // the burst that finds its tokens ends there before it reached the link (by up to the
            // burst less its own transmission time). tbf sends it at once, never earlier: it leaves
            // at the later of the two (the link's delay line then starts from there).
            let end_ns = link.tx.end_of(now, p.wire_bytes).max(p.enqueue_ns);
            link.on_link = Some((end_ns, p.seq as usize, p.wire_bytes));
            link.qdisc.set_in_service(InService::of(Some(p.wire_bytes)));
            if k == self.primary {
                self.note_sojourn(now, sojourn);
            }
        }
    }

    /// A transmission of the primary link that ended at `end_ns` seen by the poll at `now`: with
    /// frames waiting, the link's service lost beyond what its token bucket makes up
    /// (`TokenBucket::release`: a frame that finds the bucket full leaves at once, so a late
    /// poll's first frame recovers up to the depth and the rest of the lateness is lost).
    fn note_lost_service(&mut self, end_ns: u64, now: u64) {
        let link = &self.links[self.primary];
        let Tx::Rate(bucket) = &link.tx else { return };
        if end_ns < self.mon.t0_ns || link.qdisc.len_packets() == 0 {
            return;
        }
        let lost = (now - end_ns).saturating_sub(bucket.depth_ns());
        let rel = end_ns - self.mon.t0_ns;
        if rel >= self.mon.window_start_ns && rel < self.mon.window_end_ns {
            self.stats.stall_lost_ns += lost;
        }
        if lost > 0 && self.stats.stalls.len() < MAX_STALLS {
            self.stats.stalls.push([rel, lost]);
        }
    }

    /// The primary link's sojourn statistics (the dumbbell's bottleneck).
    fn note_sojourn(&mut self, now: u64, sojourn: u64) {
        if let Some(b) = self.bin(now) {
            self.stats.sojourn_sum_ns_per_bin[b] += sojourn;
            self.stats.sojourn_pkts_per_bin[b] += 1;
        }
        let rel = now.saturating_sub(self.mon.t0_ns);
        if now >= self.mon.t0_ns && rel >= self.mon.window_start_ns && rel < self.mon.window_end_ns {
            let i = ((sojourn / self.mon.sojourn_bin_ns) as usize).min(MAX_SOJOURN_BINS - 1);
            if i >= self.soj_hist.len() {
                self.soj_hist.resize(i + 1, 0);
            }
            self.soj_hist[i] += 1;
        }
    }

    /// The earliest time anything is due (None = nothing pending but the next sample).
    pub fn next_deadline(&self) -> u64 {
        let mut t = u64::MAX;
        let end = self.mon.t0_ns + self.mon.duration_ns;
        if self.next_sample < end {
            t = self.next_sample;
        }
        if !self.pending_rev.is_empty() {
            return 0;
        }
        let links = self.links.iter().map(|l| &l.line);
        for l in self.fwd_lines.iter().chain(self.rev_lines.iter()).chain(links) {
            if let Some(&(due, _)) = l.front() {
                t = t.min(due);
            }
        }
        for link in &self.links {
            if let Some((end_ns, _, _)) = link.on_link {
                t = t.min(end_ns);
            }
        }
        t
    }

    /// Close the statistics (sojourn histogram, lateness percentiles, per-link statistics).
    pub fn finish(&mut self) {
        for (i, &c) in self.soj_hist.iter().enumerate() {
            if c > 0 {
                self.stats.sojourn_bin.push(i as u32);
                self.stats.sojourn_count.push(c);
            }
        }
        if self.link {
            self.stats.links = self.links.iter_mut().map(|l| std::mem::take(&mut l.stats)).collect();
        }
        let n = self.stats.late_count;
        if n > 0 {
            self.stats.late_mean_ns = self.late_sum_ns as f64 / n as f64;
            let pct = |q: f64| {
                let target = (q * n as f64).ceil() as u64;
                let mut acc = 0;
                for (i, &c) in self.late_hist.iter().enumerate() {
                    acc += c;
                    if acc >= target {
                        return i as u64;
                    }
                }
                LATE_BUCKETS_US as u64
            };
            self.stats.late_p50_us = pct(0.5);
            self.stats.late_p99_us = pct(0.99);
        }
    }
}

/// The head of a delay line (due time, slab) if it is due by `now`.
fn pop_due(line: &mut Line, now: u64) -> Option<(u64, usize)> {
    match line.front() {
        Some(&(due, _)) if due <= now => line.pop_front(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mon(duration_ns: u64) -> MonitorConfig {
        MonitorConfig {
            t0_ns: 0,
            duration_ns,
            bin_ns: 100_000_000,
            sample_ns: 10_000_000,
            sojourn_bin_ns: 100_000,
            window_start_ns: 0,
            window_end_ns: duration_ns,
        }
    }

    /// A 10 Mbit/s, one-port shaper (drop-tail `limit`, burst `burst_bytes`) with
    /// `packets` forward arrivals (slabs 0..packets) at time 0, monitored for 1 s.
    fn loaded(burst_bytes: u64, limit: u64, packets: usize) -> Shaper {
        let mut s = Shaper::new(10_000_000, burst_bytes, &droptail(limit), 1, vec![0], vec![0], mon(1_000_000_000));
        for slab in 0..packets {
            s.arrive_fwd(0, 0, slab);
        }
        s
    }

    fn droptail(limit: u64) -> QdiscConfig {
        QdiscConfig::droptail(Some(limit), None)
    }

    /// Delay-only mode (kernel bottleneck path): 900 frames arriving at once all
    /// leave after exactly the forward delay - no rate limit, no queue, no drops.
    #[test]
    fn delay_only_mode_forwards_everything_after_the_delay() {
        let mut s = Shaper::delay_only(vec![7_000_000], vec![3_000_000], mon(1_000_000_000));
        for slab in 0..900 {
            s.arrive_fwd(1_000, 0, slab);
        }
        s.arrive_rev(2_000, 0, 900);
        let (mut out, mut freed) = (vec![], vec![]);
        s.poll(7_000_999, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
        assert_eq!(out, vec![Out::Sender { port: 0, slab: 900 }]); // reverse: due at 3.002 ms
        out.clear();
        s.poll(7_001_000, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
        assert_eq!(out, (0..900).map(Out::Receiver).collect::<Vec<_>>());
        assert!(freed.is_empty());
        assert_eq!(s.stats.drops, vec![0]);
        assert_eq!(s.stats.forwarded_fwd, 900);
        assert_eq!(s.stats.link_tx_bytes.iter().sum::<u64>(), 0);
    }

    /// Drive the shaper with a saturating arrival process, waking up exactly at every deadline.
    #[test]
    fn saturated_link_sends_exactly_the_configured_rate() {
        // 10 Mbit/s, 1500-byte packets: 1.2 ms each; 1 s carries 833.33 packets, and the
        // bucket, full at the start, one more: they leave at 0, 1.2, ..., 999.6 ms.
        let mut s = loaded(1500, 1000, 900);
        let (mut out, mut freed) = (vec![], vec![]);
        let mut now = 0;
        while now < 1_000_000_000 {
            s.poll(now, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
            now = s.next_deadline();
        }
        let sent: u64 = s.stats.link_tx_bytes.iter().sum();
        assert_eq!(sent / 1500, 834);
        assert_eq!(out.len(), 834);
        assert!(freed.is_empty());
    }

    #[test]
    fn a_limit_of_n_frames_holds_n_the_one_on_the_link_included() {
        // tbf + pfifo limit 4 in Linux: the frame paying for its tokens is still in the
        // child's qlen. 10 frames at once: 4 admitted, 6 dropped; the first leaves at once
        // (the bucket holds its tokens), the second waits 1.2112 ms for its own.
        let mut s = loaded(1514, 4, 10);
        let (mut out, mut freed) = (vec![], vec![]);
        s.poll(0, &|_| (1514, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
        assert_eq!(s.stats.drops, vec![6]);
        assert_eq!(out, vec![Out::Receiver(0)]);
        assert_eq!(s.next_deadline(), 1_211_200);
        // It leaves; 2 remain (one waiting for its tokens): of 3 arrivals 2 fit, and only 2.
        for slab in 10..13 {
            s.arrive_fwd(1_211_200, 0, slab);
        }
        s.poll(1_211_200, &|_| (1514, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
        assert_eq!(out, vec![Out::Receiver(0), Out::Receiver(1)]);
        assert_eq!(s.stats.drops, vec![7]);
        // The next queue sample (10 ms grid) counts the frame on the link, as tbf's qlen does.
        let mut t = s.next_deadline();
        while t < 10_000_000 {
            let sent = out.len();
            s.poll(t, &|_| (1514, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
            if out.len() > sent {
                s.arrive_fwd(t + 1, 0, 100 + out.len()); // refill the place that frame freed
            }
            t = s.next_deadline();
        }
        s.poll(10_000_000, &|_| (1514, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
        assert_eq!(s.stats.queue_packets[1], 4);
    }

    #[test]
    fn late_wakeups_within_one_burst_lose_no_capacity() {
        // Wake up only every 5 ms (4 packet times): the one-packet burst cannot
        // catch up fully, so the link runs below rate; with a burst of 5
        // packets it catches up and sends the full rate (833 in 1 s, plus the 5
        // of the bucket, full at the start).
        let run = |burst_bytes: u64| {
            let mut s = loaded(burst_bytes, 2000, 1000);
            let (mut out, mut freed) = (vec![], vec![]);
            let mut now = 0;
            while now <= 1_000_000_000 {
                s.poll(now, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
                now += 5_000_000;
            }
            out.len()
        };
        assert_eq!(run(7500), 833 + 5);
        assert!(run(1500) < 800);
    }

    #[test]
    fn a_stall_on_a_backlogged_link_loses_its_length_beyond_one_frame_time_and_is_counted_and_recorded() {
        // 10 Mbit/s, 1500-byte frames, bucket one frame deep: departures every 1.2 ms. The polls
        // skip 10 ms after the one at 100 ms (a queue sample): the transmission ending at 100.8 ms
        // is seen at 110 ms, 9.2 ms late; the next frame leaves at once (the bucket makes up one
        // frame time), so 8.0 ms are lost: ends at 0..100.8 ms (85) and 110 + k 1.2 ms before
        // 1 s (742), 827 frames where 834 leave without the stall.
        let run = |stall_ns: u64| {
            let mut s = loaded(1500, 2000, 1000);
            let (mut out, mut freed) = (vec![], vec![]);
            let (mut now, mut stalled) = (0, false);
            while now < 1_000_000_000 {
                s.poll(now, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
                now = s.next_deadline();
                if now >= 100_000_000 && !stalled {
                    stalled = true;
                    now += stall_ns;
                }
            }
            (s.stats.link_tx_bytes.iter().sum::<u64>() / 1500, s.stats.stall_lost_ns, s.stats.stalls)
        };
        assert_eq!(run(0), (834, 0, vec![]));
        // The stall is recorded with the end of the transmission before it and what it lost.
        assert_eq!(run(10_000_000), (827, 8_000_000, vec![[100_800_000, 8_000_000]]));
        // Lateness within the bucket's depth is made up: nothing lost, nothing recorded.
        assert_eq!(run(1_000_000), (834, 0, vec![]));
    }

    #[test]
    fn a_recorded_stall_given_back_as_an_outage_loses_the_service_it_lost_and_is_no_stall() {
        // The stall of the test above, recorded as [100.8 ms, 8 ms] after t0, given to the link as
        // an outage on a run whose t0 is 5 s into the clock: the link stops for 8 ms where its
        // service clock stood at 100.8 ms, and sends the same 827 frames (ends at 0..99.6 ms,
        // 84, and 108.8 + k 1.2 ms before 1 s, 743), polled on time: no stall recorded.
        let t0 = 5_000_000_000;
        let mut s = Shaper::new(10_000_000, 1500, &droptail(2000), 1, vec![0], vec![0], MonitorConfig { t0_ns: t0, ..mon(1_000_000_000) });
        s.set_outages(&[[100_800_000, 8_000_000]]);
        for slab in 0..1000 {
            s.arrive_fwd(t0, 0, slab);
        }
        let (mut out, mut freed) = (vec![], vec![]);
        let mut now = t0;
        while now < t0 + 1_000_000_000 {
            s.poll(now, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
            now = s.next_deadline();
        }
        assert_eq!(s.stats.link_tx_bytes.iter().sum::<u64>() / 1500, 827);
        assert_eq!((s.stats.stall_lost_ns, s.stats.stalls.len()), (0, 0));
        assert!(freed.is_empty(), "the outage held the frames, it dropped none");
    }

    #[test]
    fn outages_are_refused_out_of_order_or_beyond_the_clock() {
        assert!(check_outages(&[[10, 5], [12, 1]], 0).unwrap_err().starts_with("outages.1: "));
        assert!(check_outages(&[[u64::MAX - 10, 5]], 100).is_err());
        assert_eq!(check_outages(&[[10, 5], [15, 1]], 1_000), Ok(()));
    }

    #[test]
    fn a_stall_with_nothing_queued_loses_no_service() {
        // Two frames: the first leaves at once, the second ends at 1.2 ms with nothing behind it;
        // the poll that sees it end comes at 50 ms.
        let mut s = loaded(1500, 10, 2);
        let (mut out, mut freed) = (vec![], vec![]);
        s.poll(0, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
        s.poll(50_000_000, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
        assert_eq!(s.stats.late_max_ns, 50_000_000 - 1_200_000);
        assert_eq!(s.stats.stall_lost_ns, 0);
    }

    #[test]
    fn delay_lines_hold_frames_for_their_port_delay_and_overflow_drops_count_per_port() {
        let mut s = Shaper::new(1_000_000_000, 1500, &droptail(1), 1, vec![3_000_000, 0], vec![7_000_000, 0], mon(1_000_000_000));
        s.arrive_fwd(0, 0, 1);
        s.arrive_fwd(0, 1, 2);
        s.arrive_fwd(0, 1, 3); // port 1 floods the one-packet buffer
        s.arrive_rev(0, 0, 4);
        let (mut out, mut freed) = (vec![], vec![]);
        s.poll(0, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
        assert_eq!(s.stats.drops, vec![0, 1]);
        assert_eq!(freed, vec![3]);
        assert_eq!(out, vec![Out::Receiver(2)]); // the idle link's bucket holds its tokens
        assert_eq!(s.next_deadline(), 3_000_000);
        s.poll(3_000_000, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
        s.poll(3_012_000, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
        assert_eq!(out[1], Out::Receiver(1));
        s.poll(7_000_000, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
        assert_eq!(out[2], Out::Sender { port: 0, slab: 4 });
    }

    /// A link of `rate_bps` and `delay_ns` with a drop-tail `limit`, its token bucket one 1500-byte frame deep.
    fn link(name: &str, rate_bps: u64, delay_ns: u64, limit: u64) -> (LinkConfig, u64) {
        let l = LinkConfig {
            name: name.into(),
            rate_bps: Some(rate_bps),
            trace_ms: None,
            delay_ns,
            qdisc: droptail(limit),
            l2_overhead_bytes: 0,
            loss: 0.0,
            outages_ns: Vec::new(),
        };
        (l, 1500)
    }

    /// Poll at every deadline from `from_ns` until `until_ns`; the frames that left, with the time they left.
    /// Two ports' frames found due by one late poll, one place in the queue: port by port, port 0's
    /// frame takes it although port 1's arrived first; merged by due time, port 1's.
    #[test]
    fn with_one_place_left_the_frame_due_first_takes_it_when_merged_by_due_time() {
        for (merge, admitted, dropped) in [(false, 1, 2), (true, 2, 1)] {
            let mut s = Shaper::new(1_000_000_000, 1500, &droptail(1), 1, vec![1_000, 1_000], vec![0, 0], mon(1_000_000_000));
            s.merge_by_due = merge;
            s.arrive_fwd(20, 0, 1); // port 0's frame arrives second
            s.arrive_fwd(10, 1, 2);
            let (mut out, mut freed) = (vec![], vec![]);
            s.poll(1_050, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
            assert_eq!(out, vec![Out::Receiver(admitted)], "merge {merge}");
            assert_eq!(freed, vec![dropped], "merge {merge}");
        }
    }

    fn drive_from(s: &mut Shaper, from_ns: u64, until_ns: u64) -> Vec<(u64, Out)> {
        let (mut out, mut freed, mut got) = (vec![], vec![], vec![]);
        let mut now = from_ns;
        while now < until_ns {
            s.poll(now, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
            got.extend(out.drain(..).map(|o| (now, o)));
            now = s.next_deadline();
        }
        got
    }

    fn drive(s: &mut Shaper, until_ns: u64) -> Vec<(u64, Out)> {
        drive_from(s, 0, until_ns)
    }

    #[test]
    fn a_frame_crosses_the_links_of_its_path_in_series_each_with_its_transmission_and_delay() {
        // 1500 B: 1.2 ms at 10 Mbit/s, 0.6 ms at 20 Mbit/s (each link's token bucket holds one
        // frame, so an idle link sends a lone frame at once, as tbf); delays 5 ms and 2 ms; access 1 ms.
        let links = [link("a", 10_000_000, 5_000_000, 100), link("b", 20_000_000, 2_000_000, 100)];
        let mut s = Shaper::topology(&links, vec![vec![0, 1]], vec![vec![]], 1, vec![1_000_000], vec![0], mon(1_000_000_000));
        s.arrive_fwd(10_000_000, 0, 7);
        s.arrive_fwd(10_000_000, 0, 8);
        let got = drive_from(&mut s, 10_000_000, 100_000_000);
        // the first: 10 + 1 + 5 + 2 ms; the second waits for a's 1.2 ms transmission, b's bucket refilled meanwhile
        assert_eq!(got, vec![(18_000_000, Out::Receiver(7)), (19_200_000, Out::Receiver(8))]);
        s.finish();
        assert_eq!(s.stats.links.iter().map(|l| l.delivered_bytes).collect::<Vec<_>>(), vec![3000, 3000]);
    }

    #[test]
    fn a_frame_smaller_than_the_burst_leaves_each_link_no_earlier_than_it_reached_it() {
        // A 74-byte SYN through three idle 10 Mbit/s links of 10 ms (each bucket full, one
        // 1500-byte frame): each sends it at once (tbf), so it arrives after exactly 1 + 30 ms,
        // not (1500 - 74) B of transmission time (1.14 ms) earlier per link.
        let links =
            [link("a", 10_000_000, 10_000_000, 100), link("b", 10_000_000, 10_000_000, 100), link("c", 10_000_000, 10_000_000, 100)];
        let mut s = Shaper::topology(&links, vec![vec![0, 1, 2]], vec![vec![]], 1, vec![1_000_000], vec![0], mon(1_000_000_000));
        s.arrive_fwd(50_000_000, 0, 3);
        let (mut out, mut freed, mut got) = (vec![], vec![], vec![]);
        let mut now = 50_000_000;
        while now < 200_000_000 {
            s.poll(now, &|_| (74, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
            got.extend(out.drain(..).map(|o| (now, o)));
            now = s.next_deadline();
        }
        assert_eq!(got, vec![(81_000_000, Out::Receiver(3))]);
        s.finish();
        assert_eq!(s.stats.late_max_ns, 0);
    }

    #[test]
    fn in_a_parking_lot_each_link_carries_its_rate_and_the_long_flow_is_queued_on_both() {
        // Links a, b at 10 Mbit/s; port 0 (long) crosses both, port 1 only a, port 2 only b;
        // every port offers 2000 frames at time 0 (more than 1 s of the links' capacity).
        let links = [link("a", 10_000_000, 0, 5000), link("b", 10_000_000, 0, 5000)];
        let paths = vec![vec![0, 1], vec![0], vec![1]];
        let mut s = Shaper::topology(&links, paths, vec![vec![]; 3], 1, vec![0; 3], vec![0; 3], mon(1_000_000_000));
        for port in 0..3 {
            for k in 0..2000 {
                s.arrive_fwd(0, port, port * 10_000 + k);
            }
        }
        drive(&mut s, 1_000_000_000);
        s.finish();
        // 1 s at 10 Mbit/s is 833.3 frames of 1500 B on each link, plus the frame of the
        // bucket, full at the start: the transmitters never idle.
        for l in &s.stats.links {
            assert_eq!(l.tx_bytes.iter().sum::<u64>() / 1500, 834, "link {}", l.name);
        }
    }

    #[test]
    fn acks_on_a_reverse_path_queue_behind_the_data_that_shares_the_link() {
        // Port 0's data fills link r (1 Mbit/s: 12 ms per frame); port 1's ACK crosses r too.
        let links = [link("f", 1_000_000_000, 0, 100), link("r", 1_000_000, 0, 100)];
        let mut s =
            Shaper::topology(&links, vec![vec![1], vec![0]], vec![vec![], vec![1]], 1, vec![0, 0], vec![0, 3_000_000], mon(1_000_000_000));
        for k in 0..3 {
            s.arrive_fwd(0, 0, k);
        }
        let (mut out, mut freed) = (vec![], vec![]);
        s.poll(0, &|_| (1500, Ecn::NotEct), &mut |_| {}, &mut out, &mut freed);
        s.arrive_rev(1, 1, 50);
        let got = drive_from(&mut s, 1, 200_000_000);
        // three data frames go first (at 0, the bucket full, then 12 ms apart), then the ACK
        // (12 ms: frame_info says 1500 B), then 3 ms back.
        let ack = got.iter().find(|(_, o)| *o == Out::Sender { port: 1, slab: 50 }).expect("the ACK leaves");
        assert_eq!(ack.0, 3 * 12_000_000 + 3_000_000);
    }

    #[test]
    fn a_trace_link_sends_one_mtu_per_delivery_opportunity_and_loses_those_it_cannot_use() {
        // Opportunities at 1, 1 and 3 ms, repeating every 3 ms: 3 MTUs per 3 ms (12 Mbit/s).
        let mut l = link("cell", 1, 0, 10_000);
        l.0.rate_bps = None;
        l.0.trace_ms = Some(vec![1, 1, 3]);
        let mut s = Shaper::topology(&[l], vec![vec![0]], vec![vec![]], 1, vec![0], vec![0], mon(1_000_000_000));
        for k in 0..299 {
            s.arrive_fwd(0, 0, k);
        }
        let got = drive(&mut s, 300_000_000);
        // the first departures: two at 1 ms, one at 3 ms, two at 4 ms
        let times: Vec<u64> = got.iter().take(5).map(|(t, _)| *t).collect();
        assert_eq!(times, vec![1_000_000, 1_000_000, 3_000_000, 4_000_000, 4_000_000]);
        assert_eq!(got.len(), 299); // 99 periods of 3, and the two at 298 ms (the one at 300 ms is not before the end)
                                    // an idle link loses its opportunities: a frame arriving at 400.5 ms leaves at 402 ms
        s.arrive_fwd(400_500_000, 0, 5000);
        let got = drive_from(&mut s, 400_500_000, 500_000_000);
        let last = got.iter().find(|(_, o)| *o == Out::Receiver(5000)).unwrap();
        assert_eq!(last.0, 402_000_000);
    }

    #[test]
    fn random_loss_drops_about_its_probability_of_the_frames_and_depends_only_on_the_seed() {
        let run = |seed: u64| {
            let mut l = link("lossy", 1_000_000_000, 0, 100_000);
            l.0.loss = 0.25;
            let mut s = Shaper::topology(&[l], vec![vec![0]], vec![vec![]], seed, vec![0], vec![0], mon(1_000_000_000));
            for k in 0..10_000 {
                s.arrive_fwd(0, 0, k);
            }
            drive(&mut s, 1_000_000_000);
            s.finish();
            s.stats.links[0].loss_drops
        };
        let lost = run(3);
        // binomial(10 000, 0.25): mean 2500, sd 43.3; within 4 sd
        assert!((2500 - 173..=2500 + 173).contains(&lost), "{lost}");
        assert_eq!(run(3), lost);
        assert_ne!(run(4), lost);
    }
}
