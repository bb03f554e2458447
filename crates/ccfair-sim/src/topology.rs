//! Topologies: links in series, each with its own queue, shaper, propagation
//! delay and random loss. A flow's data crosses the links of its `path` in
//! order; its ACKs cross the links of its `reverse_path`, queued behind
//! whatever else uses those links (a reverse-direction flow is just a flow
//! whose path is such a link), or, without one, return over an uncongested
//! line as in the dumbbell (sim.rs).
//!
//! ```text
//!  sender --(access a)--> [q1 | shaper 1] --d1--> [q2 | shaper 2] --d2--> ... --> receiver
//!  sender <--(ACK line)-- ... <--d_r1-- [rq1 | shaper] <--(host noise)-- receiver   (reverse path)
//!  sender <--------------- ACK line, rtt - rtt/2, uncongested --------------- receiver   (none)
//! ```
//! Delays (`rtt_ns` stays the flow's total base RTT): without a reverse path
//! a = rtt/2 - sum(path delays) and the ACK line is rtt - rtt/2, the
//! dumbbell's split; with one, the flow's own access delay is the slack
//! s = rtt - sum(path delays) - sum(reverse delays): s/2 before its first
//! link, s - s/2 after its last reverse link.
//!
//! Shapers:
//! - rate: the dumbbell's token bucket one data frame deep (token_bucket.rs,
//!   Linux's tbf): the head packet leaves when its tokens are there, at once
//!   on an idle link, one transmission time after the previous one on a busy
//!   link (exact, sub-ns remainder carried);
//! - trace: mahimahi's trace-driven link (Netravali et al., "Mahimahi:
//!   Accurate Record-and-Replay for HTTP", USENIX ATC 2015; its LinkQueue
//!   `use_a_delivery_opportunity`): each line of the trace is a delivery
//!   opportunity at that ms for up to 1500 bytes (`TRACE_OPPORTUNITY_BYTES`)
//!   of queued packets; a packet larger than what is left of an opportunity
//!   continues in the next ones and leaves when its last byte is sent;
//!   opportunities that find the queue empty are lost; the trace repeats
//!   with period = its last timestamp. A packet that arrives at an
//!   opportunity's time may use it.
//!
//! Deviation from mahimahi: its opportunity is 1504 bytes (MTU + 4); here
//! 1500, as the trace format states; the link charges each packet its IP
//! length plus the link's `l2_overhead_bytes`, as the rate shaper does.
//!
//! Loss: each packet (data or ACK) entering a link is lost with the link's
//! probability, before its queue, drawn from the link's own stream (run seed,
//! link index; rng.rs). A flow's own `loss` stays on its access path.
//!
//! As in the dumbbell, the packet being sent counts against the queue's
//! limits and in its samples, and every delay is a FIFO line (lines.rs) with
//! only its head in the event heap, which holds O(flows + links) entries;
//! each link's output line is one line shared by every flow crossing it.
//!
//! Measured: per link (`LinkStats`). The run's single-queue series
//! (`bottleneck_rate_bps`, `link_tx_bytes`, queue samples, sojourn
//! histograms, per-flow sojourn sums) describe the primary link: the
//! narrowest link a flow's data crosses (lowest rate, a trace at its mean;
//! the first declared among equals). A flow's drops and marks count every
//! link its data crosses; its `random_losses` count its data packets lost on
//! its access path and on links.

use crate::config::{LinkConfig, RunConfig, TRACE_OPPORTUNITY_BYTES};
use crate::endpoint::{FlowReceiver, FlowSender, SenderTimer};
use crate::engine::{EventQueue, TimeNs, TimerPop};
use crate::error::SimError;
use crate::lines::DelayLine;
use crate::packet::{Kind, Packet};
use crate::qdisc::{self, DropReason, InService, Qdisc};
use crate::result::{link_utilisation, mean_in_window, try_zeroed, LinkStats, RunResult};
use crate::rng::{derive_seed, stream, stream_rng};
use crate::sim::{build_endpoints, cca_classes, flow_results, name_flows, Endpoints, Monitor, RunEnd};
use crate::token_bucket::TokenBucket;
use rand::Rng;
use rand_pcg::Pcg64Mcg;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ev {
    /// The head of flow `f`'s access line reaches its first link.
    Access(u32),
    /// Link `k` releases its head packet (rate: its tokens are there) or has a delivery opportunity (trace).
    LinkDone(u32),
    /// The head of link `k`'s output line reaches the next hop.
    LinkOut(u32),
    /// The head of flow `f`'s receiver-side ACK line (host noise) reaches its first reverse link.
    AckOut(u32),
    /// The head of flow `f`'s ACK line reaches its sender.
    Reverse(u32),
    Rto(u32),
    Pace(u32),
    Reo(u32),
    Delack(u32),
    Gro(u32),
    Start(u32),
    /// Queue samples of every link.
    Sample,
}

/// A trace-driven link's position in its trace: the next delivery opportunity.
struct TraceCursor {
    /// Opportunities of one period, ns from the period's start, non-decreasing.
    opp_ns: Vec<u64>,
    /// The period: the last opportunity's time.
    period_ns: u64,
    cycle: u64,
    idx: usize,
}

impl TraceCursor {
    fn new(trace_ms: &[u64]) -> TraceCursor {
        let opp_ns: Vec<u64> = trace_ms.iter().map(|&ms| ms * 1_000_000).collect();
        let period_ns = *opp_ns.last().expect("validated: a trace has an opportunity");
        TraceCursor { opp_ns, period_ns, cycle: 0, idx: 0 }
    }

    /// Time of the opportunity the cursor points at.
    fn at(&self) -> TimeNs {
        self.cycle * self.period_ns + self.opp_ns[self.idx]
    }

    fn advance(&mut self) {
        self.idx += 1;
        if self.idx == self.opp_ns.len() {
            self.idx = 0;
            self.cycle += 1;
        }
    }

    /// Move to the first opportunity at or after `now` (never back).
    fn seek(&mut self, now: TimeNs) {
        // Cycle c's last opportunity is at (c + 1) x period: every cycle before
        // now / period - 1 is over.
        let first_open = (now / self.period_ns).saturating_sub(1);
        if self.cycle < first_open {
            (self.cycle, self.idx) = (first_open, 0);
        }
        while self.at() < now {
            let offset = now - self.cycle * self.period_ns;
            let i = self.idx + self.opp_ns[self.idx..].partition_point(|&o| o < offset);
            if i < self.opp_ns.len() {
                self.idx = i;
            } else {
                (self.cycle, self.idx) = (self.cycle + 1, 0);
            }
        }
    }

    /// Opportunities at exactly `now` (the cursor is at `now`), consumed.
    fn take_at(&mut self, now: TimeNs) -> u64 {
        let mut n = 0;
        while self.at() == now {
            n += 1;
            self.advance();
        }
        n
    }
}

enum Shaper {
    /// Constant rate: a token bucket one data frame deep.
    Rate(TokenBucket),
    /// Trace-driven; `left`: bytes of the packet in transit still to send.
    Trace { cursor: TraceCursor, left: u64 },
}

/// Counters of one link over the whole run (a packet entering the link is
/// lost, dropped by the queue, delivered, or still queued / on the link at the end).
#[derive(Default)]
struct LinkCounters {
    arrived: u64,
    loss_drops: u64,
    drops: u64,
    marks: u64,
    delivered_packets: u64,
    delivered_bytes: u64,
}

struct Link {
    name: String,
    qdisc: Box<dyn Qdisc>,
    /// `qdisc.drops_others_on_enqueue()`, asked once.
    drops_others: bool,
    shaper: Shaper,
    /// The link's rate (a trace: its mean), for the statistics.
    rate_bps: u64,
    l2_overhead_bytes: u32,
    loss: Option<(f64, Pcg64Mcg)>,
    /// From the link's output to the next hop (its propagation delay).
    out: DelayLine,
    /// The packet being sent (rate) or in transit (trace).
    current: Option<Packet>,
    /// A `LinkDone` event is pending.
    busy: bool,
    n: LinkCounters,
    /// Wire bytes finished per result bin.
    tx_bins: Vec<u64>,
    /// Queue samples (times: the monitor's `queue_time`).
    queue_packets: Vec<u32>,
    queue_bytes: Vec<u64>,
}

impl Link {
    fn new(cfg: &RunConfig, k: usize, nbins: usize, classes: usize) -> Result<Link, SimError> {
        let l: &LinkConfig = &cfg.links[k];
        let rate_bps = l.mean_rate_bps();
        // Link 0's discipline draws from the run seed as the dumbbell's
        // bottleneck does (a one-link topology is the dumbbell, bit for bit);
        // every other link from its own stream.
        let seed = if k == 0 { cfg.seed } else { derive_seed(cfg.seed, stream::TOPO_LINK_QDISC + k as u64) };
        let mut qdisc = qdisc::build(&l.qdisc, seed, rate_bps);
        qdisc.set_classes(classes);
        let shaper = match (&l.rate_bps, &l.trace_ms) {
            (Some(r), _) => {
                Shaper::Rate(TokenBucket::new(*r, (cfg.largest_packet_bytes() + l.l2_overhead_bytes) as u64).with_outages(l.outages(k)?))
            }
            (None, Some(t)) => Shaper::Trace { cursor: TraceCursor::new(t), left: 0 },
            (None, None) => unreachable!("validated: a link has a rate or a trace"),
        };
        Ok(Link {
            name: l.name.clone(),
            drops_others: qdisc.drops_others_on_enqueue(),
            qdisc,
            shaper,
            rate_bps,
            l2_overhead_bytes: l.l2_overhead_bytes,
            loss: (l.loss > 0.0).then(|| (l.loss, stream_rng(cfg.seed, stream::TOPO_LINK_LOSS + k as u64))),
            out: DelayLine::new(l.delay_ns),
            current: None,
            busy: false,
            n: LinkCounters::default(),
            tx_bins: try_zeroed(nbins, "bin")?,
            queue_packets: Vec::new(),
            queue_bytes: Vec::new(),
        })
    }

    /// Packets queued or on the link now.
    fn backlog(&self) -> InService {
        let on = InService::of(self.current.as_ref().map(|p| p.wire_bytes));
        InService { packets: self.qdisc.len_packets() as u64 + on.packets, bytes: self.qdisc.len_bytes() + on.bytes }
    }
}

/// A flow's links: data path and reverse path, as link indices.
struct Route {
    fwd: Vec<u32>,
    rev: Vec<u32>,
}

/// A run over a topology of links (see the module header).
pub struct TopoSim {
    q: EventQueue<Ev>,
    links: Vec<Link>,
    routes: Vec<Route>,
    /// Per flow: sender to its first link.
    access: Vec<DelayLine>,
    /// Per flow: ACKs from the receiver's host to the first reverse link (host noise only).
    ack_out: Vec<DelayLine>,
    /// Per flow: ACKs to the sender (the whole way without a reverse path).
    reverse: Vec<DelayLine>,
    senders: Vec<FlowSender>,
    receivers: Vec<FlowReceiver>,
    mon: Monitor,
    /// The link the run's single-queue series describe.
    primary: usize,
    out: Vec<Packet>,
    dropped: Vec<(Packet, DropReason)>,
    duration_ns: u64,
    sample_ns: u64,
    starts: Vec<u64>,
    sizes: Vec<Option<u64>>,
    data_packets: u64,
    /// Per-flow access-path loss probability and its random stream (as the dumbbell's).
    loss: Vec<Option<(f64, Pcg64Mcg)>>,
    cca_class: Vec<u16>,
    cca_classes: Vec<String>,
}

/// Data and SYNs go forward (sender to receiver); ACKs and SYN-ACKs back.
fn forward(p: &Packet) -> bool {
    matches!(p.kind, Kind::Data | Kind::Syn)
}

impl TopoSim {
    pub fn try_new(cfg: &RunConfig, algorithms: &[crate::cc::Algorithm]) -> Result<TopoSim, SimError> {
        let n = cfg.flows.len();
        let nbins = cfg.duration_ns.div_ceil(cfg.bin_ns) as usize;
        let (cca_class, cca_classes) = cca_classes(cfg);
        let links = (0..cfg.links.len()).map(|k| Link::new(cfg, k, nbins, cca_classes.len())).collect::<Result<Vec<_>, _>>()?;
        let index = |names: &[String]| -> Vec<u32> {
            names.iter().map(|x| cfg.link_index(x).expect("validated: paths name known links") as u32).collect()
        };
        let routes: Vec<Route> = cfg.flows.iter().map(|f| Route { fwd: index(&f.path), rev: index(&f.reverse_path) }).collect();
        let mut access = Vec::with_capacity(n);
        let mut ack_out = Vec::with_capacity(n);
        let mut reverse = Vec::with_capacity(n);
        for (i, f) in cfg.flows.iter().enumerate() {
            let (fwd_ns, rev_ns) = cfg.path_delays_ns(f);
            let (a_ns, back_ns) = if f.reverse_path.is_empty() {
                (f.rtt_ns / 2 - fwd_ns, f.rtt_ns - f.rtt_ns / 2)
            } else {
                let slack = f.rtt_ns - fwd_ns - rev_ns;
                (slack / 2, slack - slack / 2)
            };
            access.push(DelayLine::with_jitter(a_ns, f.host_jitter_ns, cfg.seed, stream::HOST_SEND + i as u64));
            let ack_line = |d: u64| {
                DelayLine::with_jitter(d, f.ack_jitter_ns, cfg.seed, stream::HOST_ACK + i as u64).with_tail(
                    f.ack_tail_ppm,
                    f.ack_tail_ns,
                    cfg.seed,
                    stream::HOST_TAIL_ACK + i as u64,
                )
            };
            if f.reverse_path.is_empty() {
                ack_out.push(DelayLine::new(0));
                reverse.push(ack_line(back_ns));
            } else {
                ack_out.push(ack_line(0));
                reverse.push(DelayLine::new(back_ns));
            }
        }
        let Endpoints { senders, receivers, starts, flow_l4s } = build_endpoints(cfg, algorithms);
        let mon = Monitor::try_new(cfg, flow_l4s)?;
        let mut q = EventQueue::new();
        for (i, &s) in starts.iter().enumerate() {
            if s < cfg.duration_ns {
                q.schedule(s, Ev::Start(i as u32));
            }
        }
        q.schedule(0, Ev::Sample);
        Ok(TopoSim {
            q,
            primary: primary_link(cfg, &routes),
            links,
            routes,
            access,
            ack_out,
            reverse,
            senders,
            receivers,
            mon,
            out: Vec::with_capacity(64),
            dropped: Vec::new(),
            duration_ns: cfg.duration_ns,
            sample_ns: cfg.sample_ns,
            starts,
            sizes: cfg.flows.iter().map(|f| f.size_bytes).collect(),
            data_packets: 0,
            loss: cfg
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| (f.loss > 0.0).then(|| (f.loss, stream_rng(cfg.seed, stream::LINK_LOSS + i as u64))))
                .collect(),
            cca_class,
            cca_classes,
        })
    }

    /// Move the packets a sender produced onto its access line.
    /// The popped event `ev` of flow `f`'s timer `t`; what it sends, if it fires.
    fn sender_timer(&mut self, f: u32, now: TimeNs, ev: Ev, t: SenderTimer) {
        if self.senders[f as usize].on_timer_pop(t, now, &mut self.q, ev, &mut self.out) {
            self.flush_sender_out(f, now);
        }
    }

    fn flush_sender_out(&mut self, flow: u32, now: TimeNs) {
        let line = &mut self.access[flow as usize];
        for mut p in self.out.drain(..) {
            if p.kind == Kind::Data {
                self.data_packets += 1;
            }
            p.set_cca_class(self.cca_class[flow as usize]);
            line.push(&mut self.q, now, p, Ev::Access(flow));
        }
        let (rto, pace, reo) = self.senders[flow as usize].timers();
        rto.sync(&mut self.q, Ev::Rto(flow));
        pace.sync(&mut self.q, Ev::Pace(flow));
        reo.sync(&mut self.q, Ev::Reo(flow));
    }

    /// Move the packets a receiver produced towards its sender.
    fn flush_receiver_out(&mut self, flow: u32, now: TimeNs) {
        let f = flow as usize;
        let (line, ev) = if self.routes[f].rev.is_empty() {
            (&mut self.reverse[f], Ev::Reverse(flow))
        } else {
            (&mut self.ack_out[f], Ev::AckOut(flow))
        };
        for p in self.out.drain(..) {
            line.push(&mut self.q, now, p, ev);
        }
        let r = &mut self.receivers[f];
        r.delack_timer().sync(&mut self.q, Ev::Delack(flow));
        if let Some(t) = r.gro_timer() {
            t.sync(&mut self.q, Ev::Gro(flow));
        }
    }

    /// Packet `p` reaches link `k` at `now`: random loss, then its queue.
    fn link_arrive(&mut self, k: usize, now: TimeNs, mut p: Packet) {
        let l = &mut self.links[k];
        l.n.arrived += 1;
        if let Some((prob, rng)) = l.loss.as_mut() {
            if rng.gen::<f64>() < *prob {
                l.n.loss_drops += 1;
                if p.kind == Kind::Data {
                    self.mon.random_losses[p.flow as usize] += 1;
                }
                return;
            }
        }
        p.enqueue_ns = now;
        p.wire_bytes += l.l2_overhead_bytes;
        p.note_ce_on_entry();
        if let Err((d, why)) = l.qdisc.enqueue(p, now) {
            self.count_drop(k, &d, why);
        }
        if self.links[k].drops_others {
            self.links[k].qdisc.take_enqueue_drops(&mut self.dropped);
            self.count_dropped(k);
        }
        if !self.links[k].busy {
            self.wake(k, now);
        }
    }

    fn count_drop(&mut self, k: usize, d: &Packet, why: DropReason) {
        self.links[k].n.drops += 1;
        if forward(d) {
            self.mon.count_drop(d.flow, why);
        }
    }

    /// Count the drops the discipline handed back in `self.dropped`.
    fn count_dropped(&mut self, k: usize) {
        let mut dropped = std::mem::take(&mut self.dropped);
        for (d, why) in dropped.drain(..) {
            self.count_drop(k, &d, why);
        }
        self.dropped = dropped;
    }

    /// Idle link `k` has a packet at `now`: a rate link starts sending it, a
    /// trace link waits for its next opportunity.
    fn wake(&mut self, k: usize, now: TimeNs) {
        if let Shaper::Trace { cursor, .. } = &mut self.links[k].shaper {
            cursor.seek(now);
            let at = cursor.at();
            self.q.schedule(at, Ev::LinkDone(k as u32));
            self.links[k].busy = true;
        } else {
            self.start_next(k, now);
        }
    }

    /// Take link `k`'s next packet from its queue onto the link (a rate link
    /// schedules the end of its transmission). False: the queue is empty.
    fn start_next(&mut self, k: usize, now: TimeNs) -> bool {
        let p = self.links[k].qdisc.dequeue(now, &mut self.dropped);
        self.count_dropped(k);
        let Some(p) = p else {
            let l = &mut self.links[k];
            l.qdisc.set_in_service(InService::default());
            l.busy = false;
            if let Shaper::Rate(bucket) = &mut l.shaper {
                bucket.went_idle();
            }
            return false;
        };
        if p.marked_here() && p.kind == Kind::Data {
            self.links[k].n.marks += 1;
            self.mon.ecn_marks[p.flow as usize] += 1;
        }
        if k == self.primary && forward(&p) {
            let b = self.mon.bin(now);
            self.mon.record_sojourn(now, b, &p);
        }
        let l = &mut self.links[k];
        l.qdisc.set_in_service(InService::of(Some(p.wire_bytes)));
        l.current = Some(p);
        match &mut l.shaper {
            Shaper::Rate(bucket) => {
                self.q.schedule(bucket.release(now, p.wire_bytes), Ev::LinkDone(k as u32));
                l.busy = true;
            }
            Shaper::Trace { left, .. } => *left = p.wire_bytes as u64,
        }
        true
    }

    /// Link `k`'s packet on the link has left it entirely: onto the output line.
    fn finish_packet(&mut self, k: usize, now: TimeNs) {
        let l = &mut self.links[k];
        let mut p = l.current.take().expect("a packet on the link");
        let b = self.mon.bin(now);
        l.n.delivered_packets += 1;
        l.n.delivered_bytes += p.wire_bytes as u64;
        if let Some(x) = l.tx_bins.get_mut(b) {
            *x += p.wire_bytes as u64;
        }
        if k == self.primary {
            if let Some(x) = self.mon.link_tx.get_mut(b) {
                *x += p.wire_bytes as u64;
            }
        }
        p.wire_bytes -= l.l2_overhead_bytes;
        l.out.push(&mut self.q, now, p, Ev::LinkOut(k as u32));
    }

    /// `LinkDone` of link `k`: its head packet leaves (rate), or a delivery opportunity (trace).
    fn link_done(&mut self, k: usize, now: TimeNs) {
        if matches!(self.links[k].shaper, Shaper::Rate(_)) {
            self.finish_packet(k, now);
            self.start_next(k, now);
            return;
        }
        let Shaper::Trace { cursor, .. } = &mut self.links[k].shaper else { unreachable!() };
        let mut budget = cursor.take_at(now) * TRACE_OPPORTUNITY_BYTES;
        while budget > 0 {
            if self.links[k].current.is_none() && !self.start_next(k, now) {
                break;
            }
            let Shaper::Trace { left, .. } = &mut self.links[k].shaper else { unreachable!() };
            let sent = budget.min(*left);
            budget -= sent;
            *left -= sent;
            if *left == 0 {
                self.finish_packet(k, now);
            }
        }
        let l = &mut self.links[k];
        if l.current.is_some() || l.qdisc.len_packets() > 0 {
            let Shaper::Trace { cursor, .. } = &l.shaper else { unreachable!() };
            self.q.schedule(cursor.at(), Ev::LinkDone(k as u32));
            l.busy = true;
        } else {
            l.qdisc.set_in_service(InService::default());
            l.busy = false;
        }
    }

    /// Packet `p` leaves link `k`'s output line: on to the next link of its
    /// path, its receiver, or (an ACK after its last reverse link) its sender's ACK line.
    fn link_out(&mut self, k: usize, now: TimeNs) {
        let p = self.links[k].out.pop(&mut self.q, now, Ev::LinkOut(k as u32));
        let f = p.flow as usize;
        let fwd = forward(&p);
        let path = if fwd { &self.routes[f].fwd } else { &self.routes[f].rev };
        let pos = path.iter().position(|&x| x as usize == k).expect("a packet crosses the links of its path");
        if let Some(&next) = path.get(pos + 1) {
            self.link_arrive(next as usize, now, p);
        } else if fwd {
            self.deliver(now, p);
        } else {
            self.reverse[f].push(&mut self.q, now, p, Ev::Reverse(p.flow));
        }
    }

    /// Packet `p` reaches its receiver now.
    fn deliver(&mut self, now: TimeNs, p: Packet) {
        let f = p.flow;
        let b = self.mon.bin(now);
        if p.kind == Kind::Data {
            let mss = self.receivers[f as usize].mss_bytes() as u64;
            self.mon.add_arrival(f as usize, b, mss);
        }
        let n = self.receivers[f as usize].on_packet(now, &p, &mut self.out);
        if n > 0 {
            self.account_delivery(f, n, now, b);
        }
        self.flush_receiver_out(f, now);
    }

    /// As the dumbbell's: `segs` newly delivered segments of flow `f`.
    fn account_delivery(&mut self, f: u32, segs: u64, now: TimeNs, b: usize) {
        let i = f as usize;
        let mss = self.receivers[i].mss_bytes() as u64;
        if self.mon.add_delivered(i, b, segs * mss) {
            self.mon.fct_ns[i] = Some(now - self.starts[i]);
            for &k in &self.routes[i].fwd {
                self.links[k as usize].qdisc.flow_finished(f, now);
            }
        }
    }

    fn sample(&mut self, now: TimeNs) {
        self.mon.queue_time.push(now);
        for (k, l) in self.links.iter_mut().enumerate() {
            let s = l.backlog();
            l.queue_packets.push(s.packets as u32);
            l.queue_bytes.push(s.bytes);
            if k == self.primary {
                self.mon.queue_pkts.push(s.packets as u32);
                self.mon.queue_bytes.push(s.bytes);
            }
        }
        self.mon.trace_flows(now, &self.senders, &self.starts);
        let next = now + self.sample_ns;
        if next < self.duration_ns {
            self.q.schedule(next, Ev::Sample);
        }
    }

    fn dispatch(&mut self, now: TimeNs, ev: Ev) {
        match ev {
            Ev::Access(f) => {
                let p = self.access[f as usize].pop(&mut self.q, now, ev);
                if let Some((prob, rng)) = self.loss[f as usize].as_mut() {
                    if p.kind == Kind::Data && rng.gen::<f64>() < *prob {
                        self.mon.random_losses[f as usize] += 1;
                        return;
                    }
                }
                let first = self.routes[f as usize].fwd[0] as usize;
                self.link_arrive(first, now, p);
            }
            Ev::LinkDone(k) => self.link_done(k as usize, now),
            Ev::LinkOut(k) => self.link_out(k as usize, now),
            Ev::AckOut(f) => {
                let p = self.ack_out[f as usize].pop(&mut self.q, now, ev);
                let first = self.routes[f as usize].rev[0] as usize;
                self.link_arrive(first, now, p);
            }
            Ev::Reverse(f) => {
                let p = self.reverse[f as usize].pop(&mut self.q, now, ev);
                self.senders[f as usize].on_ack(now, &p, &mut self.out);
                self.flush_sender_out(f, now);
            }
            Ev::Rto(f) => self.sender_timer(f, now, ev, SenderTimer::Rto),
            Ev::Pace(f) => self.sender_timer(f, now, ev, SenderTimer::Pace),
            Ev::Reo(f) => self.sender_timer(f, now, ev, SenderTimer::Reo),
            Ev::Delack(f) => {
                let r = &mut self.receivers[f as usize];
                if r.delack_timer().on_pop(now, &mut self.q, ev) == TimerPop::Fire {
                    r.on_delack_timer(now, &mut self.out);
                    self.flush_receiver_out(f, now);
                }
            }
            Ev::Gro(f) => {
                let r = &mut self.receivers[f as usize];
                if r.gro_timer().is_some_and(|t| t.on_pop(now, &mut self.q, ev) == TimerPop::Fire) {
                    let n = r.on_gro_timer(now, &mut self.out);
                    if n > 0 {
                        let b = self.mon.bin(now);
                        self.account_delivery(f, n, now, b);
                    }
                    self.flush_receiver_out(f, now);
                }
            }
            Ev::Start(f) => {
                self.senders[f as usize].start(now, &mut self.out);
                self.flush_sender_out(f, now);
            }
            Ev::Sample => self.sample(now),
        }
    }

    /// Run to the end (events before `duration_ns`).
    fn run_events(&mut self) {
        while self.q.peek_key().is_some_and(|(t, _)| t < self.duration_ns) {
            let (now, _, ev) = self.q.pop_keyed().expect("peeked");
            self.dispatch(now, ev);
        }
    }

    pub fn run(mut self) -> RunResult {
        let wall = std::time::Instant::now();
        self.run_events();
        let wall_ns = wall.elapsed().as_nanos() as u64;
        self.finish(wall_ns)
    }

    fn link_stats(&self, l: &Link) -> LinkStats {
        let (m, w) = (&self.mon, self.mon.window);
        LinkStats {
            name: l.name.clone(),
            rate_bps: l.rate_bps,
            utilisation: link_utilisation(&l.tx_bins, m.bin_ns, self.duration_ns, w, l.rate_bps),
            mean_queue_packets: mean_in_window(&m.queue_time, l.queue_packets.iter().map(|&x| x as f64), w),
            mean_queue_bytes: mean_in_window(&m.queue_time, l.queue_bytes.iter().map(|&x| x as f64), w),
            drops: l.n.drops,
            marks: l.n.marks,
            loss_drops: l.n.loss_drops,
            delivered_bytes: l.n.delivered_bytes,
        }
    }

    fn finish(mut self, wall_ns: u64) -> RunResult {
        let links: Vec<LinkStats> = self.links.iter().map(|l| self.link_stats(l)).collect();
        let meter = self.links[self.primary].qdisc.take_meter(self.duration_ns).unwrap_or_default();
        let flows = flow_results(&self.senders, &mut self.mon, &self.starts, &self.sizes);
        let (events, data_packets, rate_bps) = (self.q.popped(), self.data_packets, self.links[self.primary].rate_bps);
        let (duration_ns, sample_ns, cca_classes) = (self.duration_ns, self.sample_ns, self.cca_classes);
        self.mon.into_result(flows, RunEnd { duration_ns, sample_ns, rate_bps, links, meter, cca_classes, events, data_packets, wall_ns })
    }
}

/// The narrowest link some flow's data crosses (lowest rate, a trace at its
/// mean; the first declared among equals); link 0 if none is crossed.
fn primary_link(cfg: &RunConfig, routes: &[Route]) -> usize {
    let crossed = |k: usize| routes.iter().any(|r| r.fwd.contains(&(k as u32)));
    (0..cfg.links.len()).filter(|&k| crossed(k)).min_by_key(|&k| (cfg.links[k].mean_rate_bps(), k)).unwrap_or(0)
}

/// Run a topology (`cfg.links` non-empty) to completion.
pub fn try_run(cfg: &RunConfig, algorithms: &[crate::cc::Algorithm]) -> Result<RunResult, SimError> {
    let mut r = TopoSim::try_new(cfg, algorithms)?.run();
    name_flows(&mut r, cfg);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{FlowConfig, QdiscConfig};
    use crate::try_run;

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    fn droptail(limit_packets: u64) -> QdiscConfig {
        QdiscConfig::droptail(Some(limit_packets), None)
    }

    fn link(name: &str, rate_bps: u64, delay_ns: u64, limit_packets: u64) -> LinkConfig {
        LinkConfig {
            name: name.into(),
            rate_bps: Some(rate_bps),
            trace_ms: None,
            delay_ns,
            qdisc: droptail(limit_packets),
            l2_overhead_bytes: 0,
            loss: 0.0,
            outages_ns: Vec::new(),
        }
    }

    fn trace_link(name: &str, trace_ms: Vec<u64>, limit_packets: u64) -> LinkConfig {
        LinkConfig { rate_bps: None, trace_ms: Some(trace_ms), ..link(name, 1, 0, limit_packets) }
    }

    fn flow(cca: &str, rtt_ns: u64, path: &[&str], reverse: &[&str]) -> FlowConfig {
        let mut f = FlowConfig::bulk(cca, cca, rtt_ns);
        f.path = path.iter().map(|s| s.to_string()).collect();
        f.reverse_path = reverse.iter().map(|s| s.to_string()).collect();
        f
    }

    fn topo(links: Vec<LinkConfig>, flows: Vec<FlowConfig>, duration_ns: u64) -> RunConfig {
        let mut c = RunConfig::dumbbell(1, droptail(1), flows, duration_ns);
        c.bottleneck = None;
        c.links = links;
        c.validate().expect("a valid topology");
        c
    }

    /// Run `c`; the simulation is kept for its link counters.
    fn run_keep(c: &RunConfig) -> TopoSim {
        let mut s = TopoSim::try_new(c, &c.algorithms().unwrap()).unwrap();
        s.run_events();
        s
    }

    /// Goodput of flow `f` over the result bins from `from_s` to the end, bit/s.
    fn goodput_bps(r: &RunResult, f: usize, from_s: u64) -> f64 {
        let from = (from_s * S / r.bin_ns) as usize;
        let bins = &r.flows[f].delivered_bytes[from..];
        bins.iter().sum::<u64>() as f64 * 8.0 / (bins.len() as f64 * r.bin_ns as f64 / 1e9)
    }

    fn invalid_field(c: &RunConfig) -> String {
        match c.validate() {
            Err(SimError::Invalid { field, .. }) => field,
            other => panic!("expected an invalid field, got {other:?}"),
        }
    }

    #[test]
    fn every_packet_entering_a_link_is_lost_dropped_delivered_or_still_queued() {
        // Three links (rate, trace, rate with CoDel), random loss on two, a
        // congested reverse link: per link, in = lost + dropped + delivered + backlog.
        let mut l1 = link("l1", 20_000_000, 2 * MS, 30);
        l1.loss = 0.01;
        let mut l2 = trace_link("l2", (1..=12).collect(), 6);
        l2.loss = 0.005;
        let mut l3 = link("l3", 8_000_000, 3 * MS, 40);
        l3.qdisc = serde_json::from_str(r#"{"kind":"codel","limit_packets":40}"#).unwrap();
        let r1 = link("r1", 2_000_000, 4 * MS, 25);
        let flows = vec![
            flow("cubic", 60 * MS, &["l1", "l2", "l3"], &["r1"]),
            flow("bbr", 40 * MS, &["l1", "l3"], &[]),
            flow("reno", 30 * MS, &["r1"], &[]),
        ];
        let s = run_keep(&topo(vec![l1, l2, l3, r1], flows, 10 * S));
        for l in &s.links {
            let n = &l.n;
            assert!(n.delivered_packets > 300, "{}: {} packets", l.name, n.delivered_packets);
            assert_eq!(n.arrived, n.loss_drops + n.drops + n.delivered_packets + l.backlog().packets, "link {}", l.name);
        }
        let drops: Vec<u64> = s.links.iter().map(|l| l.n.drops).collect();
        assert!(drops.iter().all(|&d| d > 0), "every link drops: {drops:?}");
        assert!(s.links[0].n.loss_drops > 0 && s.links[1].n.loss_drops > 0);
    }

    #[test]
    fn a_two_link_path_has_the_rtt_of_its_delays_its_idle_links_adding_no_transmission_time() {
        // 60 ms RTT over l1 (5 ms) and l2 (10 ms): the smallest RTT sample is
        // exactly 60 ms; the handshake finds every link idle and a one-frame
        // token bucket (Linux's tbf) lets a packet through an idle link at once.
        let f = flow("cubic", 60 * MS, &["l1", "l2"], &[]);
        let c = topo(vec![link("l1", 10_000_000, 5 * MS, 100), link("l2", 20_000_000, 10 * MS, 100)], vec![f], 2 * S);
        assert_eq!(try_run(&c).unwrap().flows[0].min_rtt_ns, 60 * MS);
        // With a reverse path the SYN-ACK crosses idle r1 too.
        let mut c2 = c.clone();
        c2.links.push(link("r1", 5_000_000, 7 * MS, 100));
        c2.flows[0].reverse_path = vec!["r1".into()];
        assert_eq!(try_run(&c2).unwrap().flows[0].min_rtt_ns, 60 * MS);
    }

    #[test]
    fn a_rate_link_releases_a_frame_on_an_idle_link_at_once_and_back_to_back_frames_a_frame_time_apart() {
        // 1500-byte frames at 10 Mbit/s (1.2 ms each), the bucket one frame deep:
        // three arriving together leave at 0, 1.2, 2.4 ms; one arriving after
        // the link has been idle for a frame time leaves at once.
        let c = topo(vec![link("l", 10_000_000, 0, 100)], vec![flow("reno", 10 * MS, &["l"], &[])], S);
        let d = link_departures(&c, &[(MS, 1500), (MS, 1500), (MS, 1500), (10 * MS, 1500)]);
        assert_eq!(d, vec![(MS, 1500), (MS + 1_200_000, 1500), (MS + 2_400_000, 1500), (10 * MS, 1500)]);
    }

    /// Feed `sizes` (IP bytes, flow 0's data) into link 0 of `c` at `at_ns`
    /// each, run only the link, and return each packet's (time, bytes) as it
    /// leaves the link.
    fn link_departures(c: &RunConfig, arrivals: &[(TimeNs, u32)]) -> Vec<(TimeNs, u32)> {
        let mut s = TopoSim::try_new(c, &c.algorithms().unwrap()).unwrap();
        s.q = EventQueue::new();
        let mut out = vec![];
        let mut next = 0;
        loop {
            let t_ev = s.q.peek_key().map(|(t, _)| t);
            if next < arrivals.len() && t_ev.is_none_or(|t| arrivals[next].0 <= t) {
                let (t, b) = arrivals[next];
                s.link_arrive(0, t, Packet::new(0, Kind::Data, b));
                next += 1;
                continue;
            }
            let Some((now, _, ev)) = s.q.pop_keyed() else { break };
            match ev {
                Ev::LinkDone(0) => s.link_done(0, now),
                Ev::LinkOut(0) => {
                    let p = s.links[0].out.pop(&mut s.q, now, ev);
                    out.push((now, p.wire_bytes));
                }
                _ => unreachable!("only the link runs"),
            }
        }
        out
    }

    #[test]
    fn a_trace_link_sends_1500_bytes_per_opportunity_and_repeats_its_trace() {
        // Opportunities at 1, 1, 3, 4 ms, repeating every 4 ms: 5, 5, 7, 8, 9, 9, ...
        let c = topo(vec![trace_link("t", vec![1, 1, 3, 4], 1000)], vec![flow("reno", 10 * MS, &["t"], &[])], S);
        let full = link_departures(&c, &[(0, 1500); 10]);
        let times: Vec<u64> = full.iter().map(|&(t, _)| t / MS).collect();
        assert_eq!(times, vec![1, 1, 3, 4, 5, 5, 7, 8, 9, 9]);
        // 1000-byte packets share opportunities (mahimahi): 3 leave at 1 ms
        // (3000 bytes), the 4th takes 500 bytes at 1 ms and 500 at 3 ms, ...
        let small = link_departures(&c, &[(0, 1000); 12]);
        let times: Vec<u64> = small.iter().map(|&(t, _)| t / MS).collect();
        assert_eq!(times, vec![1, 1, 1, 3, 4, 4, 5, 5, 5, 7, 8, 8]);
        let bytes =
            |d: &[(TimeNs, u32)], until_ms: u64| d.iter().filter(|&&(t, _)| t <= until_ms * MS).map(|&(_, b)| b as u64).sum::<u64>();
        // Byte for byte: by 8 ms, 7 opportunities x 1500 = 10500 bytes were offered.
        assert_eq!(bytes(&small, 8), 12 * 1000);
        assert_eq!(bytes(&full, 8), 8 * 1500);
        // An opportunity that finds the queue empty is lost: a packet arriving
        // at 4.5 ms waits for 5 ms; one arriving exactly at an opportunity uses it.
        let late = link_departures(&c, &[(MS / 2, 1500), (4 * MS + MS / 2, 1500), (7 * MS, 1500)]);
        assert_eq!(late, vec![(MS, 1500), (5 * MS, 1500), (7 * MS, 1500)]);
    }

    #[test]
    fn a_saturated_trace_link_delivers_exactly_its_opportunities_bytes() {
        // A bulk flow keeps the trace link's queue busy from 1 s on: every
        // opportunity from then on carries 1500 bytes (l2 overhead 0).
        let trace: Vec<u64> = vec![2, 3, 3, 7, 8, 11, 15, 15, 15, 20]; // 10 per 20 ms = 6 Mbit/s
        let c = topo(vec![trace_link("t", trace, 200)], vec![flow("cubic", 40 * MS, &["t"], &[])], 6 * S);
        let r = try_run(&c).unwrap();
        assert_eq!(r.links[0].rate_bps, 6_000_000);
        // 100 ms bins from 2 s to 6 s: 50 opportunities each (5 periods), 75 000 bytes.
        let tx = &r.link_tx_bytes[20..60];
        assert!(tx.iter().all(|&b| b == 75_000), "per-bin bytes {tx:?}");
    }

    #[test]
    fn a_flow_alone_on_a_parking_lot_path_gets_the_narrowest_links_rate() {
        // 100, 10 and 50 Mbit/s: the 10 Mbit/s link is the bottleneck.
        let links = vec![link("l1", 100_000_000, 5 * MS, 400), link("l2", 10_000_000, 5 * MS, 100), link("l3", 50_000_000, 5 * MS, 400)];
        let r = try_run(&topo(links, vec![flow("cubic", 60 * MS, &["l1", "l2", "l3"], &[])], 20 * S)).unwrap();
        let payload_bps = 10e6 * 1448.0 / 1500.0;
        let g = goodput_bps(&r, 0, 5);
        assert!(g > 0.95 * payload_bps && g <= payload_bps * 1.001, "goodput {g}");
        let util: Vec<f64> = r.links.iter().map(|l| l.utilisation).collect();
        assert!(util[1] > 0.95 && (util[0] - util[1] / 10.0).abs() < 0.01 && (util[2] - util[1] / 5.0).abs() < 0.01, "{util:?}");
        assert_eq!(r.bottleneck_rate_bps, 10_000_000, "the single-queue series describe the narrowest link");
    }

    #[test]
    fn acks_behind_reverse_traffic_see_its_queueing_delay() {
        // Flow A: data over f, ACKs over r. Flow B sends over r and fills its
        // 100-packet buffer (up to 120 ms at 10 Mbit/s). A's RTT grows by r's
        // queueing delay; without B it stays at its base RTT.
        let links = || vec![link("f", 10_000_000, 5 * MS, 100), link("r", 10_000_000, 5 * MS, 100)];
        let mut a = flow("cubic", 40 * MS, &["f"], &["r"]);
        a.rate_cap_bps = Some(2_000_000);
        let b = flow("cubic", 40 * MS, &["r"], &[]);
        let alone = try_run(&topo(links(), vec![a.clone()], 20 * S)).unwrap();
        let with_b = try_run(&topo(links(), vec![a, b], 20 * S)).unwrap();
        let rtt_alone_ms = alone.flows[0].mean_rtt_ns / 1e6;
        assert!(alone.links[1].mean_queue_packets < 1.0, "A's ACKs alone queue on r: {}", alone.links[1].mean_queue_packets);
        let queue_ms = with_b.links[1].mean_queue_bytes * 8.0 / 10e6 * 1e3;
        let extra_ms = with_b.flows[0].mean_rtt_ns / 1e6 - rtt_alone_ms;
        assert!(queue_ms > 40.0, "B's queue on r: {queue_ms} ms");
        assert!((extra_ms - queue_ms).abs() < 0.25 * queue_ms, "A's RTT grew {extra_ms} ms, r's mean queue {queue_ms} ms");
    }

    #[test]
    fn a_links_random_loss_drops_its_probability_of_the_packets_entering_it() {
        let mut l = link("l", 10_000_000, 5 * MS, 100);
        l.loss = 0.02;
        let mut r = link("r", 10_000_000, 5 * MS, 100);
        r.loss = 0.05;
        let s = run_keep(&topo(vec![l, r], vec![flow("cubic", 40 * MS, &["l"], &["r"])], 30 * S));
        for (k, p) in [(0, 0.02), (1, 0.05)] {
            let n = &s.links[k].n;
            let frac = n.loss_drops as f64 / n.arrived as f64;
            let sd = (p * (1.0 - p) / n.arrived as f64).sqrt();
            assert!((frac - p).abs() < 4.0 * sd, "link {k}: {frac} of {} packets, sd {sd}", n.arrived);
        }
        assert_eq!(s.mon.random_losses[0], s.links[0].n.loss_drops, "every packet entering l is data of the flow");
    }

    #[test]
    fn same_seed_same_bits_and_seeds_differ() {
        let mk = |seed| {
            let mut l = link("l", 10_000_000, 5 * MS, 50);
            l.loss = 0.01;
            let mut f = flow("cubic", 40 * MS, &["l", "t"], &["r"]);
            f.host_jitter_ns = 100_000;
            f.ack_jitter_ns = 100_000;
            f.start_jitter_ns = 10 * MS;
            let links = vec![l, trace_link("t", vec![1, 2, 2, 4], 30), link("r", 5_000_000, 0, 50)];
            RunConfig { seed, ..topo(links, vec![f, flow("bbr", 30 * MS, &["r"], &[])], 5 * S) }
        };
        let json = |seed| {
            let mut r = try_run(&mk(seed)).unwrap();
            r.wall_ns = 0;
            serde_json::to_string(&r).unwrap()
        };
        assert_eq!(json(3), json(3));
        assert_ne!(json(3), json(4));
    }

    /// `d` (a dumbbell) as a one-link topology: the bottleneck is link "bottleneck".
    fn as_one_link(d: &RunConfig) -> RunConfig {
        let b = d.bottleneck.clone().unwrap();
        let mut t = d.clone();
        t.bottleneck = None;
        t.links = vec![LinkConfig {
            name: "bottleneck".into(),
            rate_bps: Some(b.rate_bps),
            trace_ms: None,
            delay_ns: b.delay_ns,
            qdisc: b.qdisc,
            l2_overhead_bytes: b.l2_overhead_bytes,
            loss: 0.0,
            outages_ns: b.outages_ns,
        }];
        for f in &mut t.flows {
            f.path = vec!["bottleneck".into()];
        }
        t
    }

    #[test]
    fn a_one_link_topology_is_the_dumbbell_bit_for_bit() {
        // Same seed, same events in the same order: every result field but
        // the wall time is equal, for drop-tail with host noise, start jitter
        // and access loss, and for a randomized AQM (PIE) with ECN.
        let mut flows =
            vec![FlowConfig::bulk("a", "cubic", 50 * MS), FlowConfig::bulk("b", "bbr", 30 * MS), FlowConfig::bulk("c", "dctcp", 40 * MS)];
        flows[1].start_ns = 2 * S;
        flows[1].host_jitter_ns = 200_000;
        flows[1].ack_jitter_ns = 100_000;
        flows[0].loss = 0.001;
        flows[2].start_jitter_ns = 500 * MS;
        let mut d = RunConfig { seed: 7, ..RunConfig::dumbbell(10_000_000, droptail(42), flows, 20 * S) };
        d.bottleneck.as_mut().unwrap().delay_ns = 3 * MS;
        d.bottleneck.as_mut().unwrap().l2_overhead_bytes = 14;
        d.window_start_ns = Some(5 * S);
        let mut pie = d.clone();
        pie.bottleneck.as_mut().unwrap().qdisc = serde_json::from_str(r#"{"kind":"pie","limit_packets":100,"ecn":true}"#).unwrap();
        // The link's outages too (outages.rs): the same token bucket on both.
        let mut out = d.clone();
        out.bottleneck.as_mut().unwrap().outages_ns = vec![[3 * S, 40 * MS], [3 * S + 40 * MS, MS], [9 * S + 123_457, 250 * MS]];
        for c in [d, pie, out] {
            let json = |r: Result<RunResult, SimError>| {
                let mut r = r.unwrap();
                r.wall_ns = 0;
                serde_json::to_value(&r).unwrap()
            };
            let dumb = json(crate::sim::try_run(&c, &c.algorithms().unwrap()));
            assert!(dumb["flows"][0]["drops"].as_u64().unwrap() > 0, "the bottleneck is congested");
            assert_eq!(json(crate::try_run(&as_one_link(&c))), dumb);
            assert_eq!(dumb["links"][0]["name"], "bottleneck");
        }
    }

    #[test]
    fn the_resource_projection_counts_every_links_packets_and_names_the_fastest_link() {
        let links = vec![link("slow", 1_000_000_000, 5 * MS, 100), link("fast", 200_000_000_000, 5 * MS, 100)];
        let mut c = topo(links, vec![flow("cubic", 40 * MS, &["slow", "fast"], &[])], S);
        let one = crate::limits::project(&c).events;
        c.duration_ns = 100_000 * S; // 201 Gbit/s of links for 10^5 s: > 10^12 events
        assert!(crate::limits::project(&c).events > 100_000.0 * one * 0.99);
        match crate::limits::check(&c, &crate::limits::Limits::default()) {
            Err(SimError::Invalid { field, .. }) => assert_eq!(field, "links.1.rate"),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn bad_topologies_are_refused_naming_the_field() {
        let base = || {
            topo(
                vec![link("a", 10_000_000, 5 * MS, 10), link("b", 10_000_000, 5 * MS, 10)],
                vec![flow("cubic", 40 * MS, &["a", "b"], &[])],
                S,
            )
        };
        let mut c = base();
        c.flows[0].path = vec!["a".into(), "x".into()];
        assert_eq!(invalid_field(&c), "flows.0.path.1");
        let mut c = base();
        c.flows[0].path = vec!["a".into(), "b".into(), "a".into()];
        assert_eq!(invalid_field(&c), "flows.0.path.2");
        let mut c = base();
        c.flows[0].reverse_path = vec!["y".into()];
        assert_eq!(invalid_field(&c), "flows.0.reverse_path.0");
        let mut c = base();
        c.flows[0].path.clear();
        assert_eq!(invalid_field(&c), "flows.0.path");
        let mut c = base();
        c.links[1].trace_ms = Some(vec![1, 2]);
        assert_eq!(invalid_field(&c), "links.1.rate");
        let mut c = base();
        c.links[1].rate_bps = None;
        assert_eq!(invalid_field(&c), "links.1.rate");
        let mut c = base();
        c.links[1] = trace_link("b", vec![], 10);
        assert_eq!(invalid_field(&c), "links.1.trace");
        let mut c = base();
        c.links[1] = trace_link("b", vec![3, 2], 10);
        assert_eq!(invalid_field(&c), "links.1.trace");
        let mut c = base();
        c.links[0].loss = 1.0;
        assert_eq!(invalid_field(&c), "links.0.loss");
        let mut c = base();
        c.links[1].outages_ns = vec![[5 * MS, MS], [5 * MS, MS]];
        assert_eq!(invalid_field(&c), "links.1.outages.1");
        let mut c = base();
        c.links[1] = LinkConfig { outages_ns: vec![[5 * MS, MS]], ..trace_link("b", vec![1, 2], 10) };
        assert_eq!(invalid_field(&c), "links.1.outages");
        let mut c = base();
        c.links[1].name = "a".into();
        assert_eq!(invalid_field(&c), "links.1.name");
        let mut c = base();
        c.flows[0].rtt_ns = 19 * MS; // two 5 ms links, both ways: 20 ms
        assert_eq!(invalid_field(&c), "flows.0.rtt");
        let mut c = base();
        c.bottleneck = RunConfig::dumbbell(1, droptail(1), vec![], 1).bottleneck;
        assert_eq!(invalid_field(&c), "links");
        let mut c = base();
        c.links.clear();
        assert_eq!(invalid_field(&c), "bottleneck");
        let mut c = RunConfig::dumbbell(1_000_000, droptail(10), vec![flow("cubic", 40 * MS, &["a"], &[])], S);
        assert_eq!(invalid_field(&c), "flows.0.path");
        c.flows[0].path.clear();
        assert!(c.validate().is_ok());
    }
}
