//! The dumbbell simulation: builds the topology from a [`RunConfig`], runs the
//! event loop and collects the [`RunResult`].
//!
//! ```text
//!  sender i --(access, one-way a_i)--> [qdisc | bottleneck rate R] --(d_b)--> receiver i
//!  sender i <-------------(reverse path: d_b + a_i, uncongested)------------ receiver i
//! ```
//! with a_i = rtt_i / 2 - d_b, so the base RTT of flow i is rtt_i. Access
//! links are infinitely fast.
//!
//! The bottleneck's transmitter is a token bucket one data frame deep, as
//! Linux's tbf and the testbed's bottleneck (token_bucket.rs): the head
//! packet leaves when its tokens are there, at once on an idle link, one
//! frame time after the previous one on a busy link. It charges each packet
//! its IP length plus the configured L2 overhead
//! (`bottleneck.l2_overhead_bytes`, 14 for Ethernet frames) for its tokens,
//! in the qdisc's byte accounting and in `link_tx_bytes`. The head packet
//! waiting for its tokens counts against the qdisc's limits and in the
//! queue samples, as tbf's head packet does in Linux (qdisc/mod.rs): a limit
//! of N packets holds N, the one on the link included.
//!
//! Fast path: every propagation delay is a FIFO delay line (lines.rs), so
//! only a line's head is in the event heap, which therefore holds O(flows)
//! entries whatever the window sizes. Each kind of line has its own event
//! (`Ev::Access`, `Ev::Delivered`, `Ev::Reverse`), so the dispatch knows where
//! the packet goes without a second lookup. With thousands of flows of one
//! delay and one host-noise mean (at least `SHARED_LINE_MIN_FLOWS`) the flows
//! share one line per direction (`SharedLines`, events `Ev::AccessShared`,
//! `Ev::ReverseShared`), with the per-flow lines' exact event order; their
//! next events are kept outside the heap, as the end of transmission is
//! (`next_event`).

use std::num::NonZeroU64;

use crate::cc;
use crate::config::{EcnMode, QdiscConfig, RunConfig, Transport, HEADER_BYTES};
use crate::dccp::receiver::DccpReceiver;
use crate::dccp::sender::{DccpSender, DccpSenderConfig};
use crate::endpoint::{FlowReceiver, FlowSender, SenderTimer};
use crate::engine::{key_parts, order_key, EventQueue, OrderKey, TimeNs, Timer, TimerPop, NO_EVENT};
use crate::error::SimError;
use crate::lines::{DelayLine, SharedLines, NO_FLOW, OWN_LINE, SHARED_LINE_MIN_FLOWS};
use crate::packet::{Ecn, Kind, Packet};
use crate::prefetch::prefetch_obj_at;
use crate::qdisc::droptail::DropTail;
use crate::qdisc::{self, DropReason, InService, Qdisc};
use crate::result::{link_utilisation, mean_in_window, try_zeroed, FlowResult, LinkStats, MeterResult, RunResult, TraceResult};
use crate::rng::{derive_seed, stream, stream_rng};
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::{Sender, SenderConfig};
use crate::token_bucket::TokenBucket;
use rand::Rng;
use rand_pcg::Pcg64Mcg;

/// From this many flows, the endpoint state of the flow whose event comes
/// next is prefetched (prefetch.rs). Below, the state stays in the near
/// caches and the prefetch instructions are pure cost (always on: S0 base
/// 1.020, 10 flows 1.033 CPU; docs/benchmarks.md).
const PREFETCH_MIN_FLOWS: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ev {
    /// The head of flow `f`'s access line reaches the bottleneck queue.
    Access(u32),
    /// The head of shared access line `l` (`SharedLines`) reaches the bottleneck queue.
    AccessShared(u32),
    /// The head of the bottleneck's output line reaches its receiver.
    Delivered,
    /// The head of flow `f`'s reverse path (ACKs) reaches the sender.
    Reverse(u32),
    /// The head of shared reverse line `l` (`SharedLines`) reaches its sender.
    ReverseShared(u32),
    /// The bottleneck's head packet has its tokens and leaves (kept out of
    /// the heap: `Simulation::tx_done_key`).
    TxDone,
    Rto(u32),
    Pace(u32),
    Reo(u32),
    Delack(u32),
    /// GRO: the NAPI poll window of flow `f`'s receiver ends (flush).
    Gro(u32),
    Start(u32),
}

#[cfg(feature = "event-counts")]
impl Ev {
    /// Count this event by its kind (event_counts.rs).
    fn count(self) {
        use crate::event_counts::{count, Counted};
        count(match self {
            Ev::Access(_) => Counted::Access,
            Ev::AccessShared(_) => Counted::AccessShared,
            Ev::Delivered => Counted::Delivered,
            Ev::Reverse(_) => Counted::Reverse,
            Ev::ReverseShared(_) => Counted::ReverseShared,
            Ev::TxDone => Counted::TxDone,
            Ev::Rto(_) => Counted::Rto,
            Ev::Pace(_) => Counted::Pace,
            Ev::Reo(_) => Counted::Reo,
            Ev::Delack(_) => Counted::Delack,
            Ev::Gro(_) => Counted::Gro,
            Ev::Start(_) => Counted::Start,
        })
    }
}

pub(crate) struct Monitor {
    pub(crate) bin_ns: u64,
    /// Per flow, per bin: payload bytes delivered in order.
    pub(crate) delivered: Vec<Vec<u64>>,
    /// Per flow, per bin: payload bytes of data packets arriving at the receiver.
    pub(crate) arrivals: Vec<Vec<u64>>,
    /// The current bin's link bytes (`add_link_tx`), sojourn sum and packets
    /// (`record_sojourn`): added to `link_tx`, `sojourn_sum` and
    /// `sojourn_pkts` when the bin ends, as the flows' `FlowTally::bin`.
    bin_link_tx: u64,
    bin_sojourn: [u64; 2],
    /// The current bin lies wholly in the window: its packets skip the
    /// window's two comparisons.
    bin_in_window: bool,
    /// Per flow: what every packet of the flow updates, together (`FlowTally`).
    tally: Vec<FlowTally>,
    /// The result bin last asked for (`bin`): its index and its start time.
    bin_idx: usize,
    bin_start_ns: TimeNs,
    pub(crate) link_tx: Vec<u64>,
    pub(crate) drops: Vec<u64>,
    pub(crate) drops_overflow: Vec<u64>,
    pub(crate) drops_aqm: Vec<u64>,
    pub(crate) ecn_marks: Vec<u64>,
    /// Sojourn histogram (window) of packets of scalable-ECN (L4S) flows only.
    pub(crate) sojourn_hist_l4s: Vec<u64>,
    /// Per flow: uses scalable ECN (its packets form the L4S class).
    pub(crate) flow_l4s: Vec<bool>,
    /// Some flow does (`flow_l4s` is read only then).
    any_l4s: bool,
    pub(crate) sojourn_hist: Vec<u64>,
    pub(crate) sojourn_bin_ns: u64,
    /// `sojourn_bin_ns`, for a division without the zero test.
    sojourn_div: NonZeroU64,
    pub(crate) sojourn_sum: Vec<u64>,
    pub(crate) sojourn_pkts: Vec<u64>,
    pub(crate) window: (u64, u64),
    /// Flow completion time (finite flows), ns from the flow's start.
    pub(crate) fct_ns: Vec<Option<u64>>,
    /// Data packets lost on the access path (random, non-congestion loss).
    pub(crate) random_losses: Vec<u64>,
    pub(crate) queue_time: Vec<u64>,
    pub(crate) queue_pkts: Vec<u32>,
    pub(crate) queue_bytes: Vec<u64>,
    pub(crate) trace: Option<TraceResult>,
}

/// A flow's counters that its packets update (`Monitor::tally`): 48 bytes,
/// one lookup for a delivery's counts; the rarer counters (drops, marks,
/// completion time) are in the monitor's per-flow vectors.
#[derive(Debug, Clone, Copy)]
struct FlowTally {
    /// Bytes delivered in order so far (capped at `size_bytes`).
    delivered_bytes: u64,
    /// The flow's size (`u64::MAX`: bulk).
    size_bytes: u64,
    /// Sojourn sum and packets of the flow's packets in the window.
    sojourn_sum_ns: u64,
    sojourn_pkts: u64,
    /// [delivered, arrived] payload bytes of the current bin (`bin_idx`);
    /// added to `delivered` and `arrivals` when the bin ends (`bin`) and
    /// at the end of the run (`flush_bin`).
    bin: [u64; 2],
}

impl Monitor {
    /// One trace sample (`trace = true`) of every flow that has started: cwnd, in flight,
    /// srtt, pacing rate and ssthresh at `now`.
    pub(crate) fn trace_flows(&mut self, now: TimeNs, senders: &[FlowSender], starts: &[u64]) {
        let Some(t) = self.trace.as_mut() else { return };
        for (i, s) in senders.iter().enumerate() {
            if now < starts[i] {
                continue;
            }
            t.flow.push(i as u32);
            t.time_ns.push(now);
            t.cwnd_pkts.push(s.cwnd_pkts());
            t.inflight_pkts.push(s.in_flight());
            t.srtt_ns.push(s.srtt_ns());
            t.pacing_rate_bps.push(s.pacing_rate_bps());
            t.ssthresh_pkts.push(s.ssthresh_pkts());
        }
    }
}

/// What a run gives its result beside its monitor's series and its flows' results
/// ([`Monitor::into_result`]; the dumbbell's and the topology's).
pub(crate) struct RunEnd {
    pub(crate) duration_ns: u64,
    pub(crate) sample_ns: u64,
    /// The rate of the link the single-queue series describe.
    pub(crate) rate_bps: u64,
    pub(crate) links: Vec<LinkStats>,
    /// That link's discipline's measurement log.
    pub(crate) meter: MeterResult,
    pub(crate) cca_classes: Vec<String>,
    pub(crate) events: u64,
    pub(crate) data_packets: u64,
    pub(crate) wall_ns: u64,
}

/// Cap on sojourn histogram bins (beyond: counted in the last bin).
const MAX_SOJOURN_BINS: usize = 1 << 20;

impl Monitor {
    /// The per-flow and per-bin series of a run of `cfg` (`flow_l4s`: which flows use scalable ECN).
    pub(crate) fn try_new(cfg: &RunConfig, flow_l4s: Vec<bool>) -> Result<Monitor, SimError> {
        let n = cfg.flows.len();
        let nbins = cfg.duration_ns.div_ceil(cfg.bin_ns) as usize;
        let window = (cfg.window_start_ns.unwrap_or(0), cfg.window_end_ns.unwrap_or(cfg.duration_ns));
        let tally = |f: &crate::config::FlowConfig| FlowTally {
            delivered_bytes: 0,
            size_bytes: f.size_bytes.unwrap_or(u64::MAX),
            sojourn_sum_ns: 0,
            sojourn_pkts: 0,
            bin: [0; 2],
        };
        Ok(Monitor {
            bin_ns: cfg.bin_ns,
            delivered: (0..n).map(|_| try_zeroed(nbins, "bin")).collect::<Result<_, _>>()?,
            arrivals: (0..n).map(|_| try_zeroed(nbins, "bin")).collect::<Result<_, _>>()?,
            bin_link_tx: 0,
            bin_sojourn: [0; 2],
            bin_in_window: window.0 == 0 && cfg.bin_ns.min(cfg.duration_ns) <= window.1,
            tally: cfg.flows.iter().map(tally).collect(),
            bin_idx: 0,
            bin_start_ns: 0,
            link_tx: try_zeroed(nbins, "bin")?,
            drops: vec![0; n],
            drops_overflow: vec![0; n],
            drops_aqm: vec![0; n],
            ecn_marks: vec![0; n],
            sojourn_hist_l4s: Vec::new(),
            any_l4s: flow_l4s.contains(&true),
            flow_l4s,
            sojourn_hist: Vec::new(),
            sojourn_bin_ns: cfg.sojourn_bin_ns,
            sojourn_div: NonZeroU64::new(cfg.sojourn_bin_ns)
                .ok_or_else(|| SimError::Invalid { field: "sojourn_bin".into(), msg: "must be > 0".into() })?,
            sojourn_sum: try_zeroed(nbins, "bin")?,
            sojourn_pkts: try_zeroed(nbins, "bin")?,
            window,
            fct_ns: vec![None; n],
            random_losses: vec![0; n],
            queue_time: Vec::new(),
            queue_pkts: Vec::new(),
            queue_bytes: Vec::new(),
            trace: if cfg.trace { Some(TraceResult::default()) } else { None },
        })
    }

    /// The run's result: `flows` ([`flow_results`]), this monitor's series and `end`.
    pub(crate) fn into_result(self, flows: Vec<FlowResult>, end: RunEnd) -> RunResult {
        let (sojourn_bin, sojourn_count) = sparse(&self.sojourn_hist);
        let (sojourn_l4s_bin, sojourn_l4s_count) = sparse(&self.sojourn_hist_l4s);
        RunResult {
            duration_ns: end.duration_ns,
            bin_ns: self.bin_ns,
            sample_ns: end.sample_ns,
            sojourn_bin_ns: self.sojourn_bin_ns,
            bottleneck_rate_bps: end.rate_bps,
            flows,
            link_tx_bytes: self.link_tx,
            queue_time_ns: self.queue_time,
            queue_packets: self.queue_pkts,
            queue_bytes: self.queue_bytes,
            sojourn_bin,
            sojourn_count,
            sojourn_l4s_bin,
            sojourn_l4s_count,
            sojourn_sum_ns_per_bin: self.sojourn_sum,
            sojourn_pkts_per_bin: self.sojourn_pkts,
            trace: self.trace.unwrap_or_default(),
            cca_classes: end.cca_classes,
            meter: end.meter,
            links: end.links,
            events: end.events,
            data_packets: end.data_packets,
            wall_ns: end.wall_ns,
        }
    }

    /// Packet `p` leaves the measured queue at `now` (result bin `b`, the
    /// one `bin` returned last): its sojourn time in the bin's sums and,
    /// within the window, in the histograms and its flow's sums.
    #[inline(always)]
    pub(crate) fn record_sojourn(&mut self, now: TimeNs, b: usize, p: &Packet) {
        debug_assert_eq!(b, self.bin_idx, "record_sojourn after bin(now)");
        let sojourn = now - p.enqueue_ns;
        self.bin_sojourn[0] += sojourn;
        self.bin_sojourn[1] += 1;
        if self.bin_in_window || (now >= self.window.0 && now < self.window.1) {
            let raw = (sojourn / self.sojourn_div) as usize;
            // The histogram never outgrows `MAX_SOJOURN_BINS`: within it, no clamp.
            let i = match self.sojourn_hist.get_mut(raw) {
                Some(c) => {
                    *c += 1;
                    raw
                }
                None => self.grow_sojourn_hist(raw),
            };
            let f = p.flow as usize;
            let t = flow_entry(&mut self.tally, f as u32);
            t.sojourn_sum_ns += sojourn;
            t.sojourn_pkts += 1;
            if self.any_l4s && self.flow_l4s[f] {
                let h = &mut self.sojourn_hist_l4s;
                if i >= h.len() {
                    h.resize(i + 1, 0);
                }
                h[i] += 1;
            }
        }
    }

    /// `record_sojourn`'s histogram count beyond its current length (index
    /// `raw`, clamped to the last of `MAX_SOJOURN_BINS`): the index counted.
    #[inline(never)]
    fn grow_sojourn_hist(&mut self, raw: usize) -> usize {
        let i = raw.min(MAX_SOJOURN_BINS - 1);
        if i >= self.sojourn_hist.len() {
            self.sojourn_hist.resize(i + 1, 0);
        }
        self.sojourn_hist[i] += 1;
        i
    }

    /// `bytes` leave the link in result bin `b` (the one `bin` returned last).
    #[inline(always)]
    pub(crate) fn add_link_tx(&mut self, b: usize, bytes: u64) {
        debug_assert_eq!(b, self.bin_idx, "add_link_tx after bin(now)");
        self.bin_link_tx += bytes;
    }

    pub(crate) fn count_drop(&mut self, flow: u32, why: DropReason) {
        let f = flow as usize;
        self.drops[f] += 1;
        match why {
            DropReason::Overflow => self.drops_overflow[f] += 1,
            DropReason::Aqm => self.drops_aqm[f] += 1,
        }
    }

    /// The result bin of time `t` (the division only when `t` left the
    /// bin last asked for, whose counts then go to the flows' series).
    #[inline(always)]
    pub(crate) fn bin(&mut self, t: TimeNs) -> usize {
        if t.wrapping_sub(self.bin_start_ns) >= self.bin_ns {
            self.next_bin(t);
        }
        self.bin_idx
    }

    #[inline(never)]
    fn next_bin(&mut self, t: TimeNs) {
        self.flush_bin();
        self.bin_idx = (t / self.bin_ns) as usize;
        self.bin_start_ns = self.bin_idx as u64 * self.bin_ns;
        let end = self.bin_start_ns.saturating_add(self.bin_ns);
        self.bin_in_window = self.window.0 <= self.bin_start_ns && end <= self.window.1;
    }

    /// Add the current bin's counts to the flows' series (beyond the last
    /// bin: dropped, as every count there) and clear them.
    pub(crate) fn flush_bin(&mut self) {
        let b = self.bin_idx;
        if let Some(x) = self.link_tx.get_mut(b) {
            *x += self.bin_link_tx;
        }
        if let (Some(x), Some(n)) = (self.sojourn_sum.get_mut(b), self.sojourn_pkts.get_mut(b)) {
            *x += self.bin_sojourn[0];
            *n += self.bin_sojourn[1];
        }
        (self.bin_link_tx, self.bin_sojourn) = (0, [0; 2]);
        for (f, c) in self.tally.iter_mut().map(|t| &mut t.bin).enumerate() {
            if *c != [0, 0] {
                if let Some(x) = self.delivered[f].get_mut(b) {
                    *x += c[0];
                }
                if let Some(x) = self.arrivals[f].get_mut(b) {
                    *x += c[1];
                }
                *c = [0, 0];
            }
        }
    }

    /// A data packet of flow `f` with `bytes` of payload reaches its
    /// receiver in bin `b` (the one `bin` returned last).
    #[inline(always)]
    pub(crate) fn add_arrival(&mut self, f: usize, b: usize, bytes: u64) {
        debug_assert_eq!(b, self.bin_idx, "add_arrival after bin(now)");
        self.tally[f].bin[1] += bytes;
    }

    /// Flow `f` delivered `bytes` more in order in bin `b` (the one `bin`
    /// returned last; capped at its size); true when that completes the
    /// flow (first time its size is reached).
    #[inline(always)]
    pub(crate) fn add_delivered(&mut self, f: usize, b: usize, bytes: u64) -> bool {
        debug_assert_eq!(b, self.bin_idx, "add_delivered after bin(now)");
        self.tally[f].add_delivered(bytes) && self.fct_ns[f].is_none()
    }
}

impl FlowTally {
    /// `Monitor::add_delivered` on the flow's tally: true when its size is reached.
    #[inline(always)]
    fn add_delivered(&mut self, bytes: u64) -> bool {
        let before = self.delivered_bytes;
        let after = (before + bytes).min(self.size_bytes);
        self.delivered_bytes = after;
        self.bin[0] += after - before;
        after == self.size_bytes
    }
}

/// What the event loop reads of a flow on every packet, in one 16-byte
/// entry (`Simulation::paths`) instead of four per-flow vectors (four
/// bounds checks and loads of a vector's base and length, and an enum
/// match for the MSS; docs/benchmarks.md).
#[derive(Debug, Clone, Copy)]
struct FlowPath {
    /// Its access line: shared line index or `OWN_LINE` (`SharedLines::of_flow`).
    access: u32,
    /// Its reverse line, the same way.
    reverse: u32,
    /// The receiver's MSS, bytes: payload per delivered segment.
    mss_bytes: u32,
    /// Index of its CCA among the run's distinct CCAs (`Packet::cca_class`).
    cca_class: u16,
}

/// Flow `f`'s entry of one of the run's per-flow vectors, without a bounds
/// check: on the per-packet paths (a delivery, an ACK, a sender's output)
/// the checks of `paths`, `receivers`, the tally, `senders` and the lines
/// took 24 instructions per data packet on B of docs/benchmarks.md, 17 on
/// C, with the registers they held. Every per-flow vector of the run has
/// one entry per flow (`Monitor::try_new`, `build_endpoints` and the lines
/// are built from `cfg.flows`; `Simulation::try_with_qdisc` asserts the
/// lengths), and every flow id the run handles is the index of one of its
/// flows: the endpoints stamp their packets with the index they were built
/// with (`build_endpoints`), and each `Ev` carries a packet's or an
/// endpoint's id. Checked in debug builds (the tests).
#[inline(always)]
fn flow_entry<T>(v: &mut [T], f: u32) -> &mut T {
    debug_assert!((f as usize) < v.len(), "flow {f} of a per-flow vector of {}", v.len());
    // SAFETY: `f` is a flow id of the run and `v` has an entry per flow (above).
    unsafe { v.get_unchecked_mut(f as usize) }
}

/// `flow_entry`, shared.
#[inline(always)]
fn flow_entry_ref<T>(v: &[T], f: u32) -> &T {
    debug_assert!((f as usize) < v.len(), "flow {f} of a per-flow vector of {}", v.len());
    // SAFETY: as `flow_entry`.
    unsafe { v.get_unchecked(f as usize) }
}

/// A run of the dumbbell, its bottleneck discipline of type `Q` (a boxed
/// one by default; `try_run`).
pub struct Simulation<Q: Qdisc = Box<dyn Qdisc>> {
    q: EventQueue<Ev>,
    /// Per flow: sender to bottleneck queue (unused for flows on a shared line).
    access: Vec<DelayLine>,
    /// Senders to the bottleneck queue on shared lines.
    access_shared: SharedLines,
    /// Bottleneck link to the receivers.
    bottleneck_out: DelayLine,
    /// `bottleneck_out.is_instant()`, asked once.
    bottleneck_out_instant: bool,
    /// Per flow: receiver to sender (ACKs; unused for flows on a shared line).
    reverse: Vec<DelayLine>,
    /// Receivers to senders on shared lines.
    reverse_shared: SharedLines,
    qdisc: Q,
    /// `qdisc.drops_others_on_enqueue()`, asked once.
    qdisc_drops_others: bool,
    rate_bps: u64,
    l2_overhead_bytes: u32,
    /// The link's transmitter (one data frame deep).
    bucket: TokenBucket,
    /// The head packet, waiting for its tokens.
    tx_current: Option<Packet>,
    /// (time, sequence number) of the `TxDone` releasing `tx_current`, as
    /// an `OrderKey` (`NO_EVENT`: none): the most frequent event is kept out
    /// of the heap (one sift fewer per packet) and run when it is the
    /// earliest in (time, seq) order (`next_event`).
    tx_done_key: OrderKey,
    senders: Vec<FlowSender>,
    receivers: Vec<FlowReceiver>,
    mon: Monitor,
    out: Vec<Packet>,
    dropped: Vec<(Packet, DropReason)>,
    duration_ns: u64,
    sample_ns: u64,
    /// (time, sequence number) of the next queue sample as an `OrderKey`
    /// (`NO_EVENT`: none): an event kept out of the queue (one push and pop
    /// fewer per sample), run just before the first queued event that
    /// follows it in (time, seq) order.
    next_sample_key: OrderKey,
    /// `next_sample_key`'s time (`u64::MAX`: none): an event before it
    /// needs no 128-bit comparison (`samples_before`).
    next_sample_ns: TimeNs,
    starts: Vec<u64>,
    data_packets: u64,
    sizes: Vec<Option<u64>>,
    /// Per-flow loss probability and its random stream (None if lossless).
    loss: Vec<Option<(f64, Pcg64Mcg)>>,
    /// Some flow has a random loss (`loss` is read only then).
    any_loss: bool,
    /// Per flow: what the loop reads of the flow on every packet, together
    /// (`FlowPath`).
    paths: Vec<FlowPath>,
    cca_classes: Vec<String>,
    /// Many flows ([`PREFETCH_MIN_FLOWS`]): prefetch a flow's endpoint state
    /// one event before it is used.
    prefetch_flow_state: bool,
    /// Some flow is on a shared line (`next_event` then asks them).
    any_shared: bool,
}

impl Simulation {
    pub fn new(cfg: &RunConfig) -> Simulation {
        Self::try_new(cfg).expect("allocating the run's per-bin series")
    }

    /// As [`Simulation::new`], with the per-bin series allocated fallibly: an
    /// allocation failure is [`SimError::Resource`], not an abort (limits.rs).
    pub fn try_new(cfg: &RunConfig) -> Result<Simulation, SimError> {
        Self::try_new_with(cfg, SHARED_LINE_MIN_FLOWS)
    }

    /// As [`Simulation::try_new`], with flows sharing a delay line from
    /// `min_shared` flows of the same delay on (`usize::MAX`: every flow has
    /// its own lines, the reference `SharedLines` are tested against).
    fn try_new_with(cfg: &RunConfig, min_shared: usize) -> Result<Simulation, SimError> {
        let b = cfg.bottleneck.as_ref().expect("a dumbbell run has a bottleneck");
        let qd = qdisc::build(&b.qdisc, cfg.seed, b.rate_bps);
        Simulation::try_with_qdisc(cfg, &cfg.algorithms()?, min_shared, qd)
    }
}

impl<Q: Qdisc> Simulation<Q> {
    /// The simulation of `cfg` with the bottleneck discipline `qd` (built
    /// from `cfg.bottleneck.qdisc`; see `try_run` for why its type is a
    /// parameter).
    fn try_with_qdisc(cfg: &RunConfig, algorithms: &[cc::Algorithm], min_shared: usize, mut qd: Q) -> Result<Simulation<Q>, SimError> {
        let n = cfg.flows.len();
        let bn = cfg.bottleneck.as_ref().expect("a dumbbell run has a bottleneck");
        let d_b = bn.delay_ns;
        let bottleneck_out = DelayLine::new(d_b);
        let per_flow = |f: &dyn Fn(&crate::config::FlowConfig) -> u64| cfg.flows.iter().map(f).collect::<Vec<u64>>();
        let (access_ns, reverse_ns) = (per_flow(&|f| f.rtt_ns / 2 - d_b), per_flow(&|f| f.rtt_ns - f.rtt_ns / 2));
        let (host_jitter, ack_jitter) = (per_flow(&|f| f.host_jitter_ns), per_flow(&|f| f.ack_jitter_ns));
        let access: Vec<DelayLine> =
            (0..n).map(|i| DelayLine::with_jitter(access_ns[i], host_jitter[i], cfg.seed, stream::HOST_SEND + i as u64)).collect();
        let reverse: Vec<DelayLine> = (0..n)
            .map(|i| {
                let f = &cfg.flows[i];
                DelayLine::with_jitter(reverse_ns[i], ack_jitter[i], cfg.seed, stream::HOST_ACK + i as u64).with_tail(
                    f.ack_tail_ppm,
                    f.ack_tail_ns,
                    cfg.seed,
                    stream::HOST_TAIL_ACK + i as u64,
                )
            })
            .collect();
        let access_shared = SharedLines::new(&access_ns, &host_jitter, cfg.seed, stream::HOST_SEND, min_shared);
        let ack_tails: Vec<(u32, u64)> = cfg.flows.iter().map(|f| (f.ack_tail_ppm, f.ack_tail_ns)).collect();
        let reverse_shared =
            SharedLines::with_tails(&reverse_ns, &ack_jitter, &ack_tails, (cfg.seed, stream::HOST_ACK), stream::HOST_TAIL_ACK, min_shared);
        let (access_shared_any, reverse_shared_any) = (access_shared.any(), reverse_shared.any());
        let Endpoints { senders, receivers, starts, flow_l4s } = build_endpoints(cfg, algorithms);
        let mon = Monitor::try_new(cfg, flow_l4s)?;
        let mut q = EventQueue::new();
        for (i, &s) in starts.iter().enumerate() {
            if s < cfg.duration_ns {
                q.schedule(s, Ev::Start(i as u32));
            }
        }
        // The queue samples run in event order but outside the queue (`run`).
        let first_sample = (0, q.take_seq());
        let (cca_class, cca_classes) = cca_classes(cfg);
        qd.set_classes(cca_classes.len());
        let paths = (0..n)
            .map(|i| FlowPath {
                access: access_shared.of_flow[i],
                reverse: reverse_shared.of_flow[i],
                mss_bytes: receivers[i].mss_bytes(),
                cca_class: cca_class[i],
            })
            .collect::<Vec<FlowPath>>();
        // `flow_entry`'s invariant: one entry per flow in every per-flow vector.
        let per_flow = [paths.len(), access.len(), reverse.len(), senders.len(), receivers.len(), mon.tally.len()];
        assert!(per_flow.iter().all(|&len| len == n), "a per-flow vector without one entry per flow: {per_flow:?} for {n} flows");
        Ok(Simulation {
            q,
            access,
            access_shared,
            bottleneck_out_instant: bottleneck_out.is_instant(),
            bottleneck_out,
            reverse,
            reverse_shared,
            qdisc_drops_others: qd.drops_others_on_enqueue(),
            qdisc: qd,
            rate_bps: bn.rate_bps,
            l2_overhead_bytes: bn.l2_overhead_bytes,
            bucket: TokenBucket::new(bn.rate_bps, (cfg.largest_packet_bytes() + bn.l2_overhead_bytes) as u64).with_outages(bn.outages()?),
            tx_current: None,
            tx_done_key: NO_EVENT,
            senders,
            receivers,
            mon,
            out: Vec::with_capacity(64),
            dropped: Vec::new(),
            duration_ns: cfg.duration_ns,
            sample_ns: cfg.sample_ns,
            next_sample_key: order_key(first_sample.0, first_sample.1),
            next_sample_ns: first_sample.0,
            starts,
            data_packets: 0,
            sizes: cfg.flows.iter().map(|f| f.size_bytes).collect(),
            loss: cfg
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| (f.loss > 0.0).then(|| (f.loss, stream_rng(cfg.seed, stream::LINK_LOSS + i as u64))))
                .collect(),
            any_loss: cfg.flows.iter().any(|f| f.loss > 0.0),
            paths,
            cca_classes,
            prefetch_flow_state: cfg.flows.len() >= PREFETCH_MIN_FLOWS,
            any_shared: access_shared_any || reverse_shared_any,
        })
    }

    /// The popped event `ev` of flow `f`'s timer `t`; what it sends, if it fires.
    #[inline]
    fn sender_timer(&mut self, f: u32, now: TimeNs, ev: Ev, t: SenderTimer) {
        if self.senders[f as usize].on_timer_pop(t, now, &mut self.q, ev, &mut self.out) {
            self.flush_sender_out(f, now);
        }
    }

    /// Move the packets a sender produced onto its access link.
    /// (The loops below walk `out` by reference, with the simulation's
    /// parts borrowed apart, and clear it after: a `drain` iterator cost
    /// more per packet, and indexing loaded and checked `out`'s length
    /// again after each push; docs/benchmarks.md. Out of line: inlined in
    /// its callers, B -0.8 and C -4.2 instructions per data packet, but
    /// 16 % more conditional branches mispredicted on the S0 base case.)
    fn flush_sender_out(&mut self, flow: u32, now: TimeNs) {
        let path = *flow_entry(&mut self.paths, flow);
        if path.access == OWN_LINE {
            if self.out.get(2).is_some_and(|p| p.skb_next()) {
                self.flush_skbs_own_line(flow, path.cca_class, now);
            } else {
                let Simulation { out, q, data_packets, access, .. } = self;
                let line = flow_entry(access, flow);
                for p in out.iter_mut() {
                    // Marked in `out` and pushed from there: no copy on the way.
                    if p.kind == Kind::Data {
                        *data_packets += 1;
                    }
                    p.set_cca_class(path.cca_class);
                    line.push_ref(q, now, p, Ev::Access(flow));
                }
            }
            self.out.clear();
        } else {
            self.flush_sender_out_shared(path, now);
        }
        self.sync_sender_timers(flow);
    }

    /// `flush_sender_out`'s loop onto the flow's own line when its first
    /// skb has three segments or more: an skb's first segment through `push_ref`, the segments
    /// that follow it in one `DelayLine::push_skb_rest` (no draw, no
    /// schedule, no call each). (Out of line and only then: in
    /// `flush_sender_out` its registers, and for shorter skbs its set-up,
    /// cost more than it saves.)
    #[inline(never)]
    fn flush_skbs_own_line(&mut self, flow: u32, cca_class: u16, now: TimeNs) {
        let line = &mut self.access[flow as usize];
        let mut i = 0;
        while i < self.out.len() {
            let p = &mut self.out[i];
            if p.kind == Kind::Data {
                self.data_packets += 1;
            }
            p.set_cca_class(cca_class);
            line.push_ref(&mut self.q, now, &self.out[i], Ev::Access(flow));
            i += 1;
            let (pushed, data) = line.push_skb_rest(now, &mut self.out[i..], cca_class);
            self.data_packets += data;
            i += pushed;
        }
    }

    /// `flush_sender_out` after an ACK: one that sends nothing and moves no
    /// timer (most on B and C) needs no call, tested here inline.
    #[inline(always)]
    fn flush_after_ack(&mut self, flow: u32, now: TimeNs) {
        if self.out.is_empty() && !self.sender_timers_need_sync(flow) {
            return;
        }
        self.flush_sender_out(flow, now);
    }

    /// Whether `sync_sender_timers` would schedule an entry.
    #[inline(always)]
    fn sender_timers_need_sync(&self, flow: u32) -> bool {
        match flow_entry_ref(&self.senders, flow) {
            FlowSender::Tcp(s) => s.rto_timer.needs_sync() || s.pace_timer.needs_sync() || s.reo_timer.needs_sync(),
            FlowSender::Dccp(_) => true,
        }
    }

    /// As `flush_sender_out`'s loop, onto the flow's shared line (inline
    /// there: out of line, C ran 9.7 more instructions per data packet,
    /// docs/benchmarks.md).
    #[inline(always)]
    fn flush_sender_out_shared(&mut self, path: FlowPath, now: TimeNs) {
        // The parts apart: the loop's bound and packets stay in registers
        // across the pushes (indexed, `out` was loaded and checked again).
        let Simulation { out, access_shared, q, data_packets, .. } = self;
        for p in out.iter_mut() {
            if p.kind == Kind::Data {
                *data_packets += 1;
            }
            p.set_cca_class(path.cca_class);
            access_shared.push(q, now, path.access, p);
        }
        out.clear();
    }

    #[inline(always)]
    fn flush_receiver_out(&mut self, flow: u32, now: TimeNs) {
        let reverse = self.paths[flow as usize].reverse;
        self.flush_receiver_out_to(flow, reverse, now);
    }

    /// `flush_receiver_out` onto the flow's reverse line `shared` (its
    /// `FlowPath::reverse`, read by the caller).
    #[inline(always)]
    fn flush_receiver_out_to(&mut self, flow: u32, shared: u32, now: TimeNs) {
        let r = &mut self.receivers[flow as usize];
        flush_receiver_out_of(
            ReverseOut { q: &mut self.q, out: &mut self.out, reverse: &mut self.reverse, shared: &mut self.reverse_shared },
            r,
            (flow, shared),
            now,
        );
    }

    /// Put the sender's armed timers into the queue. (A TCP sender's
    /// timers by name, the others' through `timers`: one test of the
    /// variant, where `timers` picks each timer's address by variant.)
    fn sync_sender_timers(&mut self, flow: u32) {
        let q = &mut self.q;
        let sync = |q: &mut EventQueue<Ev>, rto: &mut Timer, pace: &mut Timer, reo: &mut Timer| {
            rto.sync(q, Ev::Rto(flow));
            pace.sync(q, Ev::Pace(flow));
            reo.sync(q, Ev::Reo(flow));
        };
        match flow_entry(&mut self.senders, flow) {
            FlowSender::Tcp(s) => sync(q, &mut s.rto_timer, &mut s.pace_timer, &mut s.reo_timer),
            other => {
                let (rto, pace, reo) = other.timers();
                sync(q, rto, pace, reo)
            }
        }
    }

    fn bottleneck_arrive(&mut self, now: TimeNs, mut p: Packet) {
        // `enqueue_ns` holds `now` already: the access line's arrival time.
        debug_assert_eq!(p.enqueue_ns, now);
        p.wire_bytes += self.l2_overhead_bytes;
        #[cfg(feature = "slot-log")]
        let (flow, before) = (p.flow, self.qdisc.len_packets() as u32 + self.tx_current.is_some() as u32);
        #[cfg(feature = "slot-log")]
        let mut admitted = true;
        if let Err((d, why)) = self.qdisc.enqueue(p, now) {
            #[cfg(feature = "slot-log")]
            {
                admitted = d.flow != flow || d.seq != p.seq;
            }
            self.mon.count_drop(d.flow, why);
        }
        #[cfg(feature = "slot-log")]
        if p.kind == Kind::Data {
            crate::slot_log::arrive(now, flow, before, admitted);
        }
        if self.qdisc_drops_others {
            self.qdisc.take_enqueue_drops(&mut self.dropped);
            for (d, why) in self.dropped.drain(..) {
                self.mon.count_drop(d.flow, why);
            }
        }
        if self.tx_current.is_none() {
            let b = self.mon.bin(now);
            self.start_tx(now, b);
        }
    }

    /// The link is free at `now` (in result bin `b`): the next packet waits
    /// for its tokens (`TxDone` when they are there, `now` on an idle link),
    /// or the link goes idle.
    #[inline(always)]
    fn start_tx(&mut self, now: TimeNs, b: usize) {
        // Dequeued into its place (the link is free: `tx_current` is None or
        // the packet `tx_done` just took): no copy of the packet on the way.
        self.qdisc.dequeue_into(now, &mut self.dropped, &mut self.tx_current);
        if !self.dropped.is_empty() {
            self.count_dropped();
        }
        if let Some(p) = &self.tx_current {
            let (flow, wire_bytes) = (p.flow, p.wire_bytes);
            if p.ecn == Ecn::Ce && p.kind == Kind::Data {
                // Senders never send CE, so a CE packet leaving the queue was marked here.
                self.mon.ecn_marks[flow as usize] += 1;
            }
            self.mon.record_sojourn(now, b, p);
            let leaves = self.bucket.release(now, wire_bytes);
            self.qdisc.set_in_service(InService::of(Some(wire_bytes)));
            if self.prefetch_flow_state {
                // Its receiver runs when this transmission ends.
                self.prefetch_receiver(flow);
            }
            self.tx_done_key = order_key(leaves, self.q.take_seq());
        } else {
            // Idle. (A packet that follows another at once replaces it in
            // service without this call in between: only an enqueue reads
            // the packet in service, and none comes between `tx_done` and here.)
            self.qdisc.set_in_service(InService::default());
            self.bucket.went_idle();
        }
    }

    /// Count the drops a discipline made at dequeue (AQMs; drop-tail makes
    /// none: the test inline, the loop out of line).
    #[inline(never)]
    fn count_dropped(&mut self) {
        for (d, why) in self.dropped.drain(..) {
            self.mon.count_drop(d.flow, why);
        }
    }

    /// Prefetch the receiver of flow `flow` (out of line: the few-flow hot
    /// path keeps only the test).
    #[inline(never)]
    fn prefetch_receiver(&self, flow: u32) {
        // A hint: no bounds check (`prefetch_obj_at` never reads).
        prefetch_obj_at(self.receivers.as_ptr().wrapping_add(flow as usize));
    }

    /// Prefetch for the next ACKs on shared reverse line `l`: the sender of
    /// the one after next, and the CCA of the next one. The CCA's address is
    /// in its sender, which the previous call prefetched: asked for in the
    /// same call, it would make this one wait for the sender's line.
    /// (Inline in the shared reverse line's arm, which only runs with
    /// shared lines: C -2.5 instructions per data packet, B unchanged.)
    #[inline(always)]
    fn prefetch_next_sender(&self, l: u32) {
        let (next, after_next) = self.reverse_shared.next_flows(l);
        if after_next != NO_FLOW {
            // The whole enum, variant unseen (matching would load the tag, a
            // demand miss); a hint, without a bounds check.
            prefetch_obj_at(self.senders.as_ptr().wrapping_add(after_next as usize));
        }
        if next != NO_FLOW {
            flow_entry_ref(&self.senders, next).prefetch_ack_state();
        }
    }

    fn tx_done(&mut self, now: TimeNs) {
        // Left in place: `start_tx` below overwrites it.
        let Some(p) = self.tx_current else { no_packet_in_service() };
        #[cfg(feature = "slot-log")]
        crate::slot_log::freed(now);
        debug_assert_eq!(self.tx_done_key, NO_EVENT, "taken by next_event");
        // The result bin of `now`, computed once for the statistics of the
        // packet that ends here, the one that starts and the delivery.
        let b = self.mon.bin(now);
        self.mon.add_link_tx(b, p.wire_bytes as u64);
        // (The line's fixed part, `DelayLine::is_instant`, asked once per run.)
        if self.bottleneck_out_instant && self.bottleneck_out.is_empty() && !self.q.pending_at(now) && !self.shared_pending_at(now) {
            // Zero-delay bottleneck line: the packet reaches its receiver now.
            // Through the queue it would be a `Delivered` event scheduled
            // before the next `TxDone`, so with nothing else pending at `now`
            // (the `TxDone` being handled was the only one: `tx_done_key` is
            // empty here) it would be the very next event popped: handle it
            // here instead (same order of all other events, same `events`
            // count).
            self.start_tx(now, b);
            self.q.count_handled_inline();
            #[cfg(feature = "event-counts")]
            crate::event_counts::count(crate::event_counts::Counted::DeliveredInline);
            self.deliver(now, b, p);
            return;
        }
        self.bottleneck_out.push(&mut self.q, now, p, Ev::Delivered);
        self.start_tx(now, b);
    }

    /// Count `segs` newly delivered segments of flow `f` at `now`, in result
    /// bin `b` (bytes capped at a finite flow's size; the flow completes when
    /// all its bytes arrived).
    #[inline(always)]
    fn account_delivery(&mut self, f: u32, segs: u64, now: TimeNs, b: usize) {
        let mss = self.paths[f as usize].mss_bytes as u64;
        self.account_delivered_bytes(f, segs * mss, now, b);
    }

    /// `account_delivery` of `bytes` (segments times the flow's MSS).
    #[inline(always)]
    fn account_delivered_bytes(&mut self, f: u32, bytes: u64, now: TimeNs, b: usize) {
        let i = f as usize;
        if self.mon.add_delivered(i, b, bytes) {
            self.mon.fct_ns[i] = Some(now - self.starts[i]);
            self.qdisc.flow_finished(f, now);
        }
    }

    fn sample(&mut self, now: TimeNs) {
        self.mon.queue_time.push(now);
        let on_link = InService::of(self.tx_current.as_ref().map(|p| p.wire_bytes));
        self.mon.queue_pkts.push(self.qdisc.len_packets() as u32 + on_link.packets as u32);
        self.mon.queue_bytes.push(self.qdisc.len_bytes() + on_link.bytes);
        self.mon.trace_flows(now, &self.senders, &self.starts);
        let next = now + self.sample_ns;
        self.next_sample_key = if next < self.duration_ns { order_key(next, self.q.take_seq()) } else { NO_EVENT };
        self.next_sample_ns = key_parts(self.next_sample_key).0;
    }

    /// Take every queue sample due before the event (`time`, `seq`).
    /// (Inlined test of the time alone, out-of-line loop in (time, seq) order:
    /// most events have no sample before them.)
    #[inline(always)]
    fn samples_before(&mut self, time: TimeNs, seq: u64) {
        if time >= self.next_sample_ns {
            self.take_samples_before(time, seq);
        }
    }

    #[inline(never)]
    fn take_samples_before(&mut self, time: TimeNs, seq: u64) {
        while self.next_sample_key <= order_key(time, seq) {
            self.q.count_handled_inline();
            self.sample(key_parts(self.next_sample_key).0);
        }
    }

    /// Packet `p` from the bottleneck's output line reaches its receiver now
    /// (in result bin `b`). (Inline, as `start_tx`, `account_delivery` and
    /// `flush_receiver_out`: out of line, each call of these once-per-packet
    /// steps saved and restored six registers; docs/benchmarks.md.)
    #[inline(always)]
    fn deliver(&mut self, now: TimeNs, b: usize, p: Packet) {
        let (f, i) = (p.flow, p.flow as usize);
        // Read once for the three uses below (a bounds check and the
        // vector's loads each time otherwise); so are the flow's receiver
        // and tally, each held for all its uses (`Monitor::add_arrival`,
        // `account_delivered_bytes`, `flush_receiver_out_to` by their parts).
        let path = *flow_entry(&mut self.paths, f);
        let mss = path.mss_bytes as u64;
        let r = flow_entry(&mut self.receivers, f);
        let t = flow_entry(&mut self.mon.tally, f);
        debug_assert_eq!(b, self.mon.bin_idx, "deliver after bin(now)");
        if p.kind == Kind::Data {
            t.bin[1] += mss;
        }
        let n = r.on_packet(now, &p, &mut self.out);
        if n > 0 && t.add_delivered(n * mss) && self.mon.fct_ns[i].is_none() {
            self.mon.fct_ns[i] = Some(now - self.starts[i]);
            self.qdisc.flow_finished(f, now);
        }
        let parts = ReverseOut { q: &mut self.q, out: &mut self.out, reverse: &mut self.reverse, shared: &mut self.reverse_shared };
        flush_receiver_out_of(parts, r, (f, path.reverse), now);
    }

    /// Packet `p` from an access line reaches the bottleneck (unless lost on the way).
    #[inline(always)]
    fn access_arrive(&mut self, now: TimeNs, p: Packet) {
        let f = p.flow as usize;
        if self.any_loss {
            if let Some((prob, rng)) = self.loss[f].as_mut() {
                if p.kind == Kind::Data && rng.gen::<f64>() < *prob {
                    self.mon.random_losses[f] += 1;
                    return;
                }
            }
        }
        self.bottleneck_arrive(now, p)
    }

    fn dispatch(&mut self, now: TimeNs, ev: Ev) {
        #[cfg(feature = "event-counts")]
        ev.count();
        match ev {
            Ev::Access(f) => {
                let p = flow_entry(&mut self.access, f).pop(&mut self.q, now, ev);
                self.access_arrive(now, p)
            }
            Ev::AccessShared(l) => {
                let p = self.access_shared.pop(&mut self.q, now, l);
                self.access_arrive(now, p)
            }
            Ev::Delivered => {
                let p = self.bottleneck_out.pop(&mut self.q, now, ev);
                let b = self.mon.bin(now);
                self.deliver(now, b, p);
            }
            Ev::Reverse(f) => {
                let p = flow_entry(&mut self.reverse, f).pop(&mut self.q, now, ev);
                flow_entry(&mut self.senders, f).on_ack(now, &p, &mut self.out);
                self.flush_after_ack(f, now);
            }
            Ev::ReverseShared(l) => {
                let p = self.reverse_shared.pop(&mut self.q, now, l);
                self.prefetch_next_sender(l);
                let f = p.flow;
                flow_entry(&mut self.senders, f).on_ack(now, &p, &mut self.out);
                self.flush_after_ack(f, now);
            }

            Ev::TxDone => self.tx_done(now),
            Ev::Rto(f) => self.sender_timer(f, now, ev, SenderTimer::Rto),
            Ev::Pace(f) => self.sender_timer(f, now, ev, SenderTimer::Pace),
            Ev::Reo(f) => self.sender_timer(f, now, ev, SenderTimer::Reo),
            Ev::Delack(f) => {
                let r = &mut self.receivers[f as usize];
                if r.delack_timer().on_pop(now, &mut self.q, Ev::Delack(f)) == TimerPop::Fire {
                    r.on_delack_timer(now, &mut self.out);
                    self.flush_receiver_out(f, now);
                }
            }
            Ev::Gro(f) => {
                let r = &mut self.receivers[f as usize];
                if r.gro_timer().is_some_and(|t| t.on_pop(now, &mut self.q, Ev::Gro(f)) == TimerPop::Fire) {
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
        }
    }

    /// The next event before the end of the run, in (time, seq) order: the
    /// heap's earliest, the pending `TxDone` (`tx_done_key`) or the next
    /// event of a shared line (`SharedLines::next_key`), whichever comes first; the
    /// clock advances to it.
    fn next_event(&mut self) -> Option<(TimeNs, u64, Ev)> {
        if self.any_shared {
            return self.next_event_shared();
        }
        let heap = self.q.peek_order_key();
        if self.tx_done_key < heap {
            let (t, s) = key_parts(self.tx_done_key);
            if t >= self.duration_ns {
                return None;
            }
            self.tx_done_key = NO_EVENT;
            self.q.advance_outside(t);
            return Some((t, s, Ev::TxDone));
        }
        // `NO_EVENT` (an empty heap) has the largest time.
        if key_parts(heap).0 >= self.duration_ns {
            return None;
        }
        // SAFETY: `heap` came from `peek_order_key` just above and is not
        // `NO_EVENT` (whose time, u64::MAX, returned None).
        Some(unsafe { self.q.pop_peeked(heap) })
    }

    /// `next_event` with shared lines: the earliest of four candidates,
    /// each (time, seq) as one 128-bit number (`u128::MAX`: none).
    #[inline(always)]
    fn next_event_shared(&mut self) -> Option<(TimeNs, u64, Ev)> {
        let (mut best, mut ev) = (self.q.peek_order_key(), None);
        let tx = self.tx_done_key;
        if tx < best {
            (best, ev) = (tx, Some(Ev::TxDone));
        }
        let (ak, al) = self.access_shared.next_key();
        if ak < best {
            (best, ev) = (ak, Some(Ev::AccessShared(al)));
        }
        let (rk, rl) = self.reverse_shared.next_key();
        if rk < best {
            (best, ev) = (rk, Some(Ev::ReverseShared(rl)));
        }
        if best == u128::MAX {
            return None;
        }
        let (t, s) = ((best >> 64) as TimeNs, best as u64);
        if t >= self.duration_ns {
            return None;
        }
        match ev {
            // SAFETY: `best` is the heap's key from `peek_order_key` at the
            // top, and not `NO_EVENT` (returned None above).
            None => Some(unsafe { self.q.pop_peeked(best) }),
            Some(e) => {
                if e == Ev::TxDone {
                    self.tx_done_key = NO_EVENT;
                }
                self.q.advance_outside(t);
                Some((t, s, e))
            }
        }
    }

    /// Whether a shared line's next event is at `t` (the current time).
    fn shared_pending_at(&self, t: TimeNs) -> bool {
        // `NO_EVENT`'s time, u64::MAX, is no event's.
        let at_t = |k: OrderKey| key_parts(k).0 == t;
        self.any_shared && (at_t(self.access_shared.next_key().0) || at_t(self.reverse_shared.next_key().0))
    }

    /// The event loop, kept out of line: inlined into `try_run` (LLVM's
    /// choice once set-up moved to `build_endpoints`), the S0 base case
    /// measured 1.040-1.058 x main's CPU time (docs/benchmarks.md, "Topologies").
    #[inline(never)]
    pub fn run(mut self) -> RunResult {
        let wall = std::time::Instant::now();
        while let Some((now, seq, ev)) = self.next_event() {
            self.samples_before(now, seq);
            self.dispatch(now, ev);
        }
        self.samples_before(self.duration_ns, 0);
        let wall_ns = wall.elapsed().as_nanos() as u64;
        self.finish(wall_ns)
    }

    fn finish(mut self, wall_ns: u64) -> RunResult {
        let meter = self.qdisc.take_meter(self.duration_ns).unwrap_or_default();
        let flows = flow_results(&self.senders, &mut self.mon, &self.starts, &self.sizes);
        let links = vec![self.bottleneck_stats(&flows)];
        let (events, data_packets) = (self.q.popped(), self.data_packets);
        let (duration_ns, sample_ns, rate_bps, cca_classes) = (self.duration_ns, self.sample_ns, self.rate_bps, self.cca_classes);
        self.mon.into_result(flows, RunEnd { duration_ns, sample_ns, rate_bps, links, meter, cca_classes, events, data_packets, wall_ns })
    }

    /// The bottleneck as the result's one link, "bottleneck", from the run's counters.
    fn bottleneck_stats(&self, flows: &[FlowResult]) -> LinkStats {
        let m = &self.mon;
        LinkStats {
            name: "bottleneck".into(),
            rate_bps: self.rate_bps,
            utilisation: link_utilisation(&m.link_tx, m.bin_ns, self.duration_ns, m.window, self.rate_bps),
            mean_queue_packets: mean_in_window(&m.queue_time, m.queue_pkts.iter().map(|&x| x as f64), m.window),
            mean_queue_bytes: mean_in_window(&m.queue_time, m.queue_bytes.iter().map(|&x| x as f64), m.window),
            drops: flows.iter().map(|f| f.drops).sum(),
            marks: flows.iter().map(|f| f.ecn_marks).sum(),
            loss_drops: 0,
            delivered_bytes: m.link_tx.iter().sum(),
        }
    }
}

/// What a receiver's packets and timers go into (`flush_receiver_out_of`):
/// the simulation's fields, borrowed apart from the receiver.
struct ReverseOut<'a> {
    q: &'a mut EventQueue<Ev>,
    out: &'a mut Vec<Packet>,
    reverse: &'a mut [DelayLine],
    shared: &'a mut SharedLines,
}

/// Flow `flow`'s packets in `out` (its receiver `r`'s) onto its reverse
/// line (`shared`: its `FlowPath::reverse`, a shared line or `OWN_LINE`),
/// then `r`'s timers into the queue, in this order (both take sequence
/// numbers). With the receiver passed in, a caller that holds it already
/// (`Simulation::deliver`) indexes it once.
#[inline(always)]
fn flush_receiver_out_of(o: ReverseOut<'_>, r: &mut FlowReceiver, (flow, shared): (u32, u32), now: TimeNs) {
    // By iterator: indexed, `out`'s length was loaded and checked again after each push.
    if shared == OWN_LINE {
        let line = flow_entry(o.reverse, flow);
        for p in o.out.iter() {
            line.push_ref(o.q, now, p, Ev::Reverse(flow));
        }
    } else {
        for p in o.out.iter() {
            o.shared.push(o.q, now, shared, p);
        }
    }
    o.out.clear();
    let (delack, gro) = r.timers();
    delack.sync(o.q, Ev::Delack(flow));
    if let Some(t) = gro {
        t.sync(o.q, Ev::Gro(flow));
    }
}

/// The panic of a `TxDone` without a packet in service (a simulator bug),
/// out of line.
#[cold]
#[inline(never)]
fn no_packet_in_service() -> ! {
    panic!("TxDone without a packet")
}

/// The per-flow results from the senders' statistics and the monitor's
/// counters (the per-bin series are moved out of `mon`).
pub(crate) fn flow_results(senders: &[FlowSender], mon: &mut Monitor, starts: &[u64], sizes: &[Option<u64>]) -> Vec<FlowResult> {
    let mut flows = Vec::with_capacity(senders.len());
    mon.flush_bin();
    let mut arrivals = std::mem::take(&mut mon.arrivals).into_iter();
    for (i, (s, delivered)) in senders.iter().zip(std::mem::take(&mut mon.delivered)).enumerate() {
        let st = s.stats();
        flows.push(FlowResult {
            name: String::new(),
            cca: s.cca_name().to_string(),
            rtt_ns: 0,
            start_ns: starts[i],
            delivered_bytes: delivered,
            arrival_bytes: arrivals.next().unwrap_or_default(),
            sent_packets: st.sent_packets,
            retransmissions: st.retransmissions,
            losses_detected: st.losses_detected,
            drops: mon.drops[i],
            drops_overflow: mon.drops_overflow[i],
            drops_aqm: mon.drops_aqm[i],
            ecn_marks: mon.ecn_marks[i],
            rto_count: st.rto_count,
            loss_probes: st.loss_probes,
            min_rtt_ns: st.min_rtt_ns,
            mean_rtt_ns: if st.rtt_samples > 0 { st.rtt_sum_ns as f64 / st.rtt_samples as f64 } else { 0.0 },
            recoveries: st.recoveries,
            size_bytes: sizes[i],
            fct_ns: mon.fct_ns[i],
            random_losses: mon.random_losses[i],
            ecn: match s.ecn() {
                EcnMode::Off => "off",
                EcnMode::Classic => "classic",
                EcnMode::Scalable => "scalable",
            }
            .to_string(),
            ecn_reductions: st.ecn_reductions,
            sojourn_sum_ns: mon.tally[i].sojourn_sum_ns,
            sojourn_pkts: mon.tally[i].sojourn_pkts,
        });
    }
    flows
}

/// A histogram as (bin index, count) of its non-empty bins.
pub(crate) fn sparse(hist: &[u64]) -> (Vec<u32>, Vec<u64>) {
    hist.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| (i as u32, c)).unzip()
}

/// Every flow's sender and receiver, and its start time (start jitter drawn).
pub(crate) struct Endpoints {
    pub(crate) senders: Vec<FlowSender>,
    pub(crate) receivers: Vec<FlowReceiver>,
    pub(crate) starts: Vec<u64>,
    /// Per flow: uses scalable ECN (its packets form the L4S class).
    pub(crate) flow_l4s: Vec<bool>,
}

/// The endpoints of `cfg`'s flows (each from its own random streams), each TCP
/// flow's congestion control built from its validated `algorithms` entry.
pub(crate) fn build_endpoints(cfg: &RunConfig, algorithms: &[cc::Algorithm]) -> Endpoints {
    let n = cfg.flows.len();
    let mut senders = Vec::with_capacity(n);
    let mut receivers = Vec::with_capacity(n);
    let mut starts = Vec::with_capacity(n);
    let mut flow_l4s = Vec::with_capacity(n);
    let epoch_ns = cc::host_clock_epoch_ns(cfg.seed, cfg.tcp_timestamp_epoch_ns, cfg.host_clock_phase);
    for (i, f) in cfg.flows.iter().enumerate() {
        if f.transport() == Transport::Dccp {
            let ch = crate::dccp::channel();
            let dcfg = DccpSenderConfig {
                flow: i as u32,
                mss_bytes: f.mss_bytes,
                wire_bytes: f.mss_bytes + HEADER_BYTES,
                init_cwnd_pkts: f.init_cwnd_pkts.unwrap_or_else(|| crate::dccp::ccid2::initial_window_pkts(f.mss_bytes)),
                stop_ns: f.stop_ns,
                size_bytes: f.size_bytes,
            };
            senders.push(FlowSender::Dccp(DccpSender::new(dcfg, ch.clone())));
            receivers.push(FlowReceiver::Dccp(DccpReceiver::new(i as u32, f.mss_bytes, ch)));
            flow_l4s.push(false);
        } else {
            let cca_seed = derive_seed(cfg.seed, stream::FLOW_CCA + i as u64);
            let cca = algorithms[i].build(cca_seed).expect("a TCP flow's algorithm is a TCP congestion control");
            let ecn = resolve_ecn(f.ecn, cca.as_ref());
            let cwr_ack_now = cca.acks_cwr_at_once();
            let echo_newest = cca.echoes_newest_tsval();
            flow_l4s.push(ecn == EcnMode::Scalable);
            let mut sender = Sender::new(
                SenderConfig {
                    flow: i as u32,
                    mss_bytes: f.mss_bytes,
                    wire_bytes: f.mss_bytes + HEADER_BYTES,
                    init_cwnd_pkts: f.init_cwnd_pkts.unwrap_or(crate::config::TCP_INIT_CWND_PKTS),
                    pacing: f.pacing,
                    stop_ns: f.stop_ns,
                    size_bytes: f.size_bytes,
                    rate_cap_bps: f.rate_cap_bps,
                    ecn,
                    rto_min_ns: f.min_rto_ns.unwrap_or(crate::tcp::rtt::RTO_MIN_NS),
                    gso_max_segs: f.tso_max_segs.unwrap_or(crate::tcp::sender::GSO_MAX_SEGS),
                    skb_stack_ns: f.skb_stack_ns,
                },
                cca,
            );
            sender.tp.draw_ts_clocks(cfg.seed, i as u32, cfg.tcp_timestamp_offsets, epoch_ns);
            receivers.push(FlowReceiver::Tcp(
                Receiver::new(
                    i as u32,
                    f.mss_bytes,
                    f.delayed_ack,
                    f.rwnd_init_pkts,
                    f.rwnd_max_pkts,
                    f.init_cwnd_pkts.unwrap_or(crate::config::TCP_INIT_CWND_PKTS),
                )
                .with_sack_channel(sender.sack_channel())
                .with_ecn(ecn)
                .with_cwr_ack_now(cwr_ack_now)
                .with_newest_tsval_echo(echo_newest)
                .with_gro(f.gro_ns, HEADER_BYTES)
                .with_sack_compression(f.sack_compression)
                .with_clock_phase(sender.tp.clock_phase_ns),
            ));
            senders.push(FlowSender::Tcp(sender));
        }
        let jitter =
            if f.start_jitter_ns > 0 { stream_rng(cfg.seed, stream::FLOW_START + i as u64).gen_range(0..f.start_jitter_ns) } else { 0 };
        starts.push(f.start_ns + jitter);
    }
    Endpoints { senders, receivers, starts, flow_l4s }
}

/// Per flow: the index of its CCA among the run's distinct CCAs, in order of first appearance.
pub(crate) fn cca_classes(cfg: &RunConfig) -> (Vec<u16>, Vec<String>) {
    let mut cca_classes: Vec<String> = Vec::new();
    let cca_class: Vec<u16> = cfg
        .flows
        .iter()
        .map(|f| match cca_classes.iter().position(|c| *c == f.cca) {
            Some(k) => k as u16,
            None => {
                cca_classes.push(f.cca.clone());
                (cca_classes.len() - 1) as u16
            }
        })
        .collect();
    (cca_class, cca_classes)
}

/// A flow's ECN mode: as configured, else scalable for CCAs that need ECN
/// (DCTCP, Prague; Linux TCP_CONG_NEEDS_ECN), else off.
pub fn resolve_ecn(cfg: Option<EcnMode>, cca: &dyn cc::CongestionControl) -> EcnMode {
    cfg.unwrap_or(if cca.needs_ecn() { EcnMode::Scalable } else { EcnMode::Off })
}

/// Run one dumbbell configuration (a `bottleneck`, no `links`) to completion.
pub fn run(cfg: &RunConfig) -> RunResult {
    crate::try_run(cfg).expect("valid algorithms; allocating the run's per-bin series")
}

/// As [`run`], with an allocation failure of the run's series returned as
/// [`SimError::Resource`] instead of aborting the process (the binding uses this).
///
/// Drop-tail, the default and the discipline of most runs, runs as its own
/// type: its enqueue and dequeue (a few instructions each) are inlined into
/// the event loop instead of called through the box three times per packet
/// (docs/benchmarks.md). Every other discipline runs boxed. Same
/// code, same results.
pub fn try_run(cfg: &RunConfig, algorithms: &[cc::Algorithm]) -> Result<RunResult, SimError> {
    let bn = cfg.bottleneck.as_ref().expect("a dumbbell run has a bottleneck");
    let mut r = match bn.qdisc {
        QdiscConfig::Droptail(ref c) => {
            let qd = DropTail::from_config(c);
            Simulation::try_with_qdisc(cfg, algorithms, SHARED_LINE_MIN_FLOWS, qd)?.run()
        }
        _ => {
            let qd = qdisc::build(&bn.qdisc, cfg.seed, bn.rate_bps);
            Simulation::try_with_qdisc(cfg, algorithms, SHARED_LINE_MIN_FLOWS, qd)?.run()
        }
    };
    name_flows(&mut r, cfg);
    Ok(r)
}

/// Names and RTTs of the flows in `r`, from `cfg`.
pub(crate) fn name_flows(r: &mut RunResult, cfg: &RunConfig) {
    for (f, c) in r.flows.iter_mut().zip(&cfg.flows) {
        f.name = c.name.clone();
        f.rtt_ns = c.rtt_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{FlowConfig, QdiscConfig};

    fn flow(cca: &str) -> FlowConfig {
        FlowConfig::bulk("f", cca, 50_000_000)
    }

    fn cfg(flows: Vec<FlowConfig>, duration_s: u64, seed: u64) -> RunConfig {
        RunConfig { seed, ..RunConfig::dumbbell(10_000_000, QdiscConfig::droptail(Some(42), None), flows, duration_s * 1_000_000_000) }
    }

    /// A 10 Mbit/s bottleneck with `qdisc` and `l2` bytes of L2 overhead, fed by hand.
    fn bottleneck(qdisc: QdiscConfig, l2: u32) -> Simulation {
        let mut c = cfg(vec![flow("reno")], 1, 1);
        c.bottleneck.as_mut().unwrap().qdisc = qdisc;
        c.bottleneck.as_mut().unwrap().l2_overhead_bytes = l2;
        Simulation::new(&c)
    }

    /// A `bytes`-byte IP packet of flow 0 reaching the bottleneck at `t` (its
    /// access line's arrival time, in `enqueue_ns`).
    fn data_ip(t: TimeNs, bytes: u32) -> Packet {
        let mut p = Packet::new(0, Kind::Data, bytes);
        p.enqueue_ns = t;
        p
    }

    /// Time of the next end of transmission.
    fn next_tx_done(s: &mut Simulation) -> TimeNs {
        let k = std::mem::replace(&mut s.tx_done_key, NO_EVENT);
        assert_ne!(k, NO_EVENT, "no transmission scheduled");
        key_parts(k).0
    }

    #[test]
    fn a_packet_limit_of_n_holds_n_packets_the_one_on_the_link_included() {
        // Linux tbf + pfifo limit 4: the head waiting for its tokens stays in the
        // child's qlen, so 4 packets are held in all (not 4 waiting + 1).
        let mut s = bottleneck(QdiscConfig::droptail(Some(4), None), 14);
        for _ in 0..10 {
            s.bottleneck_arrive(0, data_ip(0, 1500));
        }
        assert_eq!(s.mon.drops[0], 6);
        assert_eq!(s.qdisc.len_packets() + s.tx_current.iter().count(), 4);
        // The head leaves: one place frees up, and only one.
        let t = next_tx_done(&mut s);
        s.tx_done(t);
        s.bottleneck_arrive(t, data_ip(t, 1500));
        s.bottleneck_arrive(t, data_ip(t, 1500));
        assert_eq!(s.mon.drops[0], 7);
        s.sample(t);
        assert_eq!(s.mon.queue_pkts.last(), Some(&4), "the queue sample counts the packet on the link, as tbf's qlen");
    }

    #[test]
    fn a_1500_byte_packet_with_14_bytes_of_l2_overhead_takes_1514_bytes_of_link_time() {
        // 1514 B x 8 / 10 Mbit/s = 1.2112 ms; without overhead 1500 B: 1.2 ms.
        // Two packets back to back: the second leaves one frame time after the first.
        for (l2, want_ns) in [(14, 1_211_200), (0, 1_200_000)] {
            let mut s = bottleneck(QdiscConfig::droptail(Some(4), None), l2);
            s.bottleneck_arrive(0, data_ip(0, 1500));
            s.bottleneck_arrive(0, data_ip(0, 1500));
            let t0 = next_tx_done(&mut s);
            s.tx_done(t0);
            let t1 = next_tx_done(&mut s);
            assert_eq!(t1 - t0, want_ns);
            s.tx_done(t1);
            s.mon.flush_bin();
            assert_eq!(s.mon.link_tx[0], 2 * (1500 + l2 as u64), "the link counts frame bytes");
        }
    }

    #[test]
    fn a_packet_that_finds_the_bottleneck_idle_leaves_without_a_frame_time() {
        // Linux's tbf and the testbed's bottleneck (a one-frame token bucket):
        // a frame on an idle link has its tokens and leaves at once; the next
        // one, behind it, a frame time later (token_bucket.rs).
        let mut s = bottleneck(QdiscConfig::droptail(Some(4), None), 14);
        let t = 7_000_000;
        s.bottleneck_arrive(t, data_ip(t, 1500));
        s.bottleneck_arrive(t, data_ip(t, 1500));
        let first = next_tx_done(&mut s);
        assert_eq!(first, t);
        s.tx_done(first);
        assert_eq!(next_tx_done(&mut s), t + 1_211_200);
    }

    #[test]
    fn a_saturated_bottleneck_sends_at_its_rate_and_data_reaches_the_receiver_at_the_base_rtt() {
        // Conservation over a busy period: a bulk flow keeps the queue busy and
        // the link sends its rate, no more (plus one frame of the bucket) and no
        // less. The first data packet crosses the idle link: its RTT is the
        // configured one (the flow's min_rtt), not RTT + a frame time.
        let mut c = cfg(vec![flow("cubic")], 10, 1);
        c.flows[0].rtt_ns = 20_000_000;
        c.flows[0].host_jitter_ns = 0;
        c.flows[0].ack_jitter_ns = 0;
        let r = run(&c);
        let bin_bytes = 10_000_000 / 8 / 10 + 1514;
        let busy: Vec<u64> = r.link_tx_bytes[20..].to_vec();
        assert!(busy.iter().all(|&b| b <= bin_bytes), "a bin above the rate");
        let total: u64 = busy.iter().sum();
        let at_rate = busy.len() as u64 * 10_000_000 / 8 / 10;
        assert!(total * 1000 >= at_rate * 995, "{total} B sent of {at_rate}");
        assert_eq!(r.flows[0].min_rtt_ns, 20_000_000);
    }

    #[test]
    fn a_byte_limit_counts_frames_the_one_on_the_link_included() {
        // bfifo limit 4500 B: three 1500-byte IP packets fit, but only two 1514-byte frames.
        for (l2, held) in [(0, 3), (14, 2)] {
            let mut s = bottleneck(QdiscConfig::droptail(None, Some(4500)), l2);
            for _ in 0..5 {
                s.bottleneck_arrive(0, data_ip(0, 1500));
            }
            assert_eq!(s.mon.drops[0], 5 - held);
            assert_eq!(s.qdisc.len_bytes() + s.tx_current.as_ref().map_or(0, |p| p.wire_bytes as u64), held * (1500 + l2 as u64));
        }
    }

    #[test]
    fn wire_arrival_bins_never_exceed_the_bottleneck_rate_but_in_order_delivery_does() {
        // S0's base case (CUBIC, BBR 5 s later, 0.5 BDP = 21 packets): losses
        // leave holes whose repair releases a burst of in-order data.
        let mut c = cfg(vec![flow("cubic"), flow("bbr")], 45, 1);
        c.flows[1].start_ns = 5_000_000_000;
        c.bottleneck.as_mut().unwrap().qdisc = QdiscConfig::droptail(Some(21), None);
        let r = run(&c);
        // Payload of one bin at 10 Mbit/s: 100 ms x 10 Mbit/s x 1448/1500, plus one packet.
        let bin_cap = 10_000_000 / 8 / 10 * 1448 / 1500 + 1448;
        let bins = r.flows[0].arrival_bytes.len();
        let sum = |v: fn(&FlowResult) -> &Vec<u64>, b: usize| r.flows.iter().map(|f| v(f)[b]).sum::<u64>();
        let max_arrival = (0..bins).map(|b| sum(|f| &f.arrival_bytes, b)).max().unwrap();
        let max_delivered = (0..bins).map(|b| sum(|f| &f.delivered_bytes, b)).max().unwrap();
        assert!(max_arrival <= bin_cap, "arrivals {max_arrival} B in a bin > {bin_cap}");
        assert!(max_delivered > bin_cap, "in-order delivery releases bursts above the link rate ({max_delivered} B)");
        // Every delivered byte arrived first (arrivals add retransmitted duplicates).
        for f in &r.flows {
            assert!(f.arrival_bytes.iter().sum::<u64>() >= f.delivered_bytes.iter().sum::<u64>());
        }
    }

    #[test]
    fn finite_flow_delivers_exactly_its_size_and_completes_in_slow_start_rounds() {
        let mut f = flow("cubic");
        f.size_bytes = Some(100_000);
        let r = run(&cfg(vec![f], 5, 1));
        let fl = &r.flows[0];
        assert_eq!(fl.delivered_bytes.iter().sum::<u64>(), 100_000);
        // 70 segments with IW 10 and slow start: handshake + 3 rounds (10, 20, 40)
        // = 4 RTTs, plus serialization of the last round and delayed-ACK effects.
        let fct = fl.fct_ns.expect("completed");
        assert!(fct > 200_000_000 && fct < 350_000_000, "fct = {fct} ns");
    }

    #[test]
    fn gro_delivers_every_segment_within_one_poll_window_per_batch() {
        // A finite flow with GRO (50 us NAPI window): every byte is delivered
        // (the flush timer hands up held segments) and the completion time
        // moves by less than a millisecond (at most one window per batch).
        let mut f = flow("cubic");
        f.size_bytes = Some(1_000_000);
        let plain = run(&cfg(vec![f.clone()], 5, 1));
        f.gro_ns = 50_000;
        let gro = run(&cfg(vec![f], 5, 1));
        assert_eq!(gro.flows[0].delivered_bytes.iter().sum::<u64>(), 1_000_000);
        let (a, b) = (plain.flows[0].fct_ns.unwrap() as i64, gro.flows[0].fct_ns.unwrap() as i64);
        assert!((a - b).abs() < 1_000_000, "fct {a} ns without GRO, {b} ns with");
    }

    #[test]
    fn rate_cap_limits_goodput_to_the_application_rate() {
        let mut f = flow("cubic");
        f.rate_cap_bps = Some(2_000_000);
        let r = run(&cfg(vec![f], 20, 1));
        let bytes: u64 = r.flows[0].delivered_bytes[100..200].iter().sum();
        let bps = bytes as f64 * 8.0 / 10.0;
        assert!((bps - 2e6).abs() < 0.03 * 2e6, "goodput {bps} bit/s");
        assert_eq!(r.flows[0].drops, 0, "an app-limited flow below the link rate builds no queue");
    }

    #[test]
    fn random_loss_drops_the_configured_fraction_of_data_packets() {
        let mut f = flow("cubic");
        f.loss = 0.01;
        let r = run(&cfg(vec![f], 30, 3));
        let fl = &r.flows[0];
        let p = fl.random_losses as f64 / fl.sent_packets as f64;
        // Binomial: n ~ 10^4 packets, sd ~ 0.001; allow 4 sd.
        assert!((p - 0.01).abs() < 0.004, "loss fraction {p} of {}", fl.sent_packets);
        assert!(fl.retransmissions >= fl.random_losses, "every lost packet is retransmitted");
    }

    /// Pops of access lines (`SharedLines` or one per flow) driven by `Ev::Start(f)` events (flow `f`
    /// sends `burst(f, k)` packets at its k-th start), logged as (time, seq,
    /// flow, packet number), and the count of events; with `share` false every flow has its own line;
    /// `jitters[f]`: flow `f`'s host-noise mean (0: none).
    /// A start schedules the flow's next one `gap(f, k)` ns later (0: the same
    /// nanosecond; `None`: none) and may take a sequence number as another
    /// event would.
    fn line_trace(
        delays: &[u64],
        jitters: &[u64],
        share: bool,
        starts: &[(TimeNs, u32)],
        burst: impl Fn(u32, u64) -> u64,
        gap: impl Fn(u32, u64) -> Option<u64>,
    ) -> (Vec<(TimeNs, u64, u32, u64)>, u64) {
        line_trace_skbs(delays, jitters, share, starts, burst, gap, |_, _| false)
    }

    /// `line_trace` where flow `f`'s `k`-th burst is one skb if `skb(f, k)`:
    /// its packets after the first are marked `Packet::skb_next`.
    fn line_trace_skbs(
        delays: &[u64],
        jitters: &[u64],
        share: bool,
        starts: &[(TimeNs, u32)],
        burst: impl Fn(u32, u64) -> u64,
        gap: impl Fn(u32, u64) -> Option<u64>,
        skb: impl Fn(u32, u64) -> bool,
    ) -> (Vec<(TimeNs, u64, u32, u64)>, u64) {
        let seed = 7;
        let mut own: Vec<DelayLine> =
            (0..delays.len()).map(|f| DelayLine::with_jitter(delays[f], jitters[f], seed, stream::HOST_SEND + f as u64)).collect();
        let mut shared = SharedLines::new(delays, jitters, seed, stream::HOST_SEND, if share { 2 } else { usize::MAX });
        let mut q = EventQueue::new();
        for &(t, f) in starts {
            q.schedule(t, Ev::Start(f));
        }
        let mut sent = vec![0u64; delays.len()];
        let mut started = vec![0u64; delays.len()];
        let mut log = vec![];
        loop {
            // The shared line's next event runs outside the queue, as in `next_event`.
            let heap = q.peek_key();
            let (now, seq, ev) = match shared.next().filter(|&(t, s, _)| heap.is_none_or(|h| (t, s) < h)) {
                Some((t, s, l)) => {
                    q.advance_outside(t);
                    (t, s, Ev::AccessShared(l))
                }
                None => match q.pop_keyed() {
                    Some(e) => e,
                    None => break,
                },
            };
            match ev {
                Ev::Start(f) => {
                    let k = started[f as usize];
                    started[f as usize] += 1;
                    for i in 0..burst(f, k) {
                        let mut p = Packet::new(f, Kind::Data, 100);
                        p.set_skb_next(i > 0 && skb(f, k));
                        p.seq = sent[f as usize];
                        sent[f as usize] += 1;
                        match shared.of_flow[f as usize] {
                            OWN_LINE => own[f as usize].push(&mut q, now, p, Ev::Access(f)),
                            l => shared.push(&mut q, now, l, &p),
                        }
                    }
                    if (f as u64 + k) % 2 == 0 {
                        q.take_seq();
                    }
                    if let Some(g) = gap(f, k) {
                        q.schedule(now + g, Ev::Start(f));
                    }
                }
                Ev::Access(_) | Ev::AccessShared(_) => {
                    let p = match ev {
                        Ev::Access(f) => own[f as usize].pop(&mut q, now, ev),
                        Ev::AccessShared(l) => shared.pop(&mut q, now, l),
                        _ => unreachable!(),
                    };
                    assert_eq!(p.enqueue_ns, now, "a packet leaves at its arrival time");
                    log.push((now, seq, p.flow, p.seq));
                }
                _ => unreachable!(),
            }
        }
        (log, q.popped())
    }

    #[test]
    fn a_shared_line_lets_flows_take_turns_in_a_tie_as_their_own_lines_would() {
        // Flows 0 and 1 share a 10 ns line, one packet per send. At t=0 flow 1
        // sends before flow 0; at t=1 flow 0 sends before flow 1. At t=10 flow
        // 1's packet leaves first (its head event was scheduled first), then
        // flow 0's; each takes a new sequence number for its next head, flow 1
        // first, so at t=11 flow 1's packet leaves before flow 0's although it
        // entered the shared FIFO after it.
        let starts = [(0, 1), (0, 0), (1, 0), (1, 1)];
        let trace = |share| line_trace(&[10, 10], &[0, 0], share, &starts, |_, _| 1, |_, _| None).0;
        let own = trace(false);
        let order: Vec<(TimeNs, u32)> = own.iter().map(|&(t, _, f, _)| (t, f)).collect();
        assert_eq!(order, vec![(10, 1), (10, 0), (11, 1), (11, 0)]);
        assert_eq!(trace(true), own);
    }

    #[test]
    fn a_tie_block_reaching_the_front_while_it_fills_is_keyed_by_its_earliest_flow() {
        // One 10 ns line for flows 0 and 1. At t=10 flow 0 sends (its packet
        // from t=0 is still in the line), then flow 1 sends (its head event
        // scheduled now), then flow 0's first packet leaves (its next head
        // event scheduled after flow 1's). The t=20 block reaches the front
        // while packets can still join it; flow 1's packet, second in the
        // FIFO, leaves first, with flow 1's sequence number.
        let starts = [(0, 0), (10, 0), (10, 1)];
        let trace = |share| line_trace(&[10, 10], &[0, 0], share, &starts, |_, _| 1, |_, _| None).0;
        let own = trace(false);
        let order: Vec<(TimeNs, u32)> = own.iter().map(|&(t, _, f, _)| (t, f)).collect();
        assert_eq!(order, vec![(10, 0), (20, 1), (20, 0)]);
        assert_eq!(trace(true), own);
    }

    #[test]
    fn drop_tail_as_its_own_type_gives_the_bits_of_the_boxed_discipline() {
        // `try_run` runs drop-tail unboxed; the boxed discipline (the path of
        // every other one) is the reference: same result, field for field.
        let mut c = cfg(vec![flow("cubic"), flow("bbr")], 10, 3);
        c.flows[1].start_ns = 1_000_000_000;
        c.bottleneck.as_mut().unwrap().qdisc = QdiscConfig::droptail(Some(21), Some(40_000));
        let json = |mut r: RunResult| {
            r.wall_ns = 0;
            serde_json::to_string(&r).unwrap()
        };
        let boxed = Simulation::try_new(&c).unwrap().run();
        assert!(boxed.flows.iter().all(|f| f.retransmissions > 0), "both flows lose packets at the bottleneck");
        let own = Simulation::try_with_qdisc(&c, &c.algorithms().unwrap(), SHARED_LINE_MIN_FLOWS, DropTail::new(Some(21), Some(40_000)))
            .unwrap()
            .run();
        assert_eq!(json(own), json(boxed));
    }

    #[test]
    fn shared_lines_pop_in_the_event_order_of_one_line_per_flow_under_ties() {
        // Eight flows: six on 5 ns lines (shared), one alone on a 3 ns line,
        // one on a zero-delay line (never shared). Starts in the same
        // nanosecond in varied orders, bursts of 1-3 packets, gaps of 0-3 ns:
        // many tie blocks of several flows. Every pop (time, seq, flow,
        // packet) must be the same as with one line per flow.
        let delays = [5, 5, 3, 5, 5, 0, 5, 5];
        let starts: Vec<(TimeNs, u32)> = [3, 0, 7, 1, 6, 2, 5, 4].iter().map(|&f| (0, f)).collect();
        let burst = |f: u32, k: u64| 1 + (f as u64 + k) % 3;
        let gap = |f: u32, k: u64| (k < 400).then(|| crate::rng::splitmix64(f as u64 * 1000 + k) % 4);
        let (shared, _) = line_trace(&delays, &[0; 8], true, &starts, burst, gap);
        let (own, _) = line_trace(&delays, &[0; 8], false, &starts, burst, gap);
        assert!(own.len() > 3000, "{} pops", own.len());
        let ties = own.windows(2).filter(|w| w[0].0 == w[1].0 && w[0].2 != w[1].2).count();
        assert!(ties > 500, "only {ties} same-nanosecond pops of different flows");
        assert_eq!(shared, own);
    }

    #[test]
    fn shared_lines_with_host_noise_pop_in_the_order_and_at_the_times_of_one_line_per_flow() {
        // Twelve flows: eight on 40 ns lines with noise of mean 3 ns (shared:
        // packets of different flows overtake each other, ties of one flow's
        // packets held back by its previous one), two on 6 ns lines with mean
        // 20 ns (shared: the noise often exceeds the delay, so a push can
        // arrive before the line's head, which schedules the line again), one
        // with noise alone on its delay, one without noise. Starts in the same
        // nanosecond, bursts of 1-3 packets, gaps of 0-5 ns. Every pop (time,
        // seq, flow, packet) and the event count must be those of one line per flow.
        let delays = [40, 40, 6, 40, 40, 40, 6, 40, 40, 40, 9, 40];
        let jitters = [3, 3, 20, 3, 3, 3, 20, 3, 3, 3, 20, 0];
        let starts: Vec<(TimeNs, u32)> = [3, 0, 7, 1, 6, 2, 5, 4, 11, 8, 10, 9].iter().map(|&f| (0, f)).collect();
        let burst = |f: u32, k: u64| 1 + (f as u64 + k) % 3;
        let gap = |f: u32, k: u64| (k < 400).then(|| crate::rng::splitmix64(f as u64 * 1000 + k) % 6);
        let (shared, shared_events) = line_trace(&delays, &jitters, true, &starts, burst, gap);
        let (own, own_events) = line_trace(&delays, &jitters, false, &starts, burst, gap);
        assert!(own.len() > 8000, "{} pops", own.len());
        let overtaken = own.windows(2).filter(|w| w[0].2 != w[1].2).count();
        assert!(overtaken > 3000, "only {overtaken} consecutive pops of different flows");
        assert_eq!(shared.len(), own.len());
        for (i, (a, b)) in shared.iter().zip(&own).enumerate() {
            assert_eq!(a, b, "pop {i}");
        }
        assert_eq!(shared_events, own_events, "the same events counted");
    }

    #[test]
    fn shared_lines_with_host_noise_keep_an_skbs_frames_together_as_one_line_per_flow() {
        // As above in us instead of ns (the noise's means 3 and 20 us against
        // the 3 us frame gap), with every other burst one skb whose later
        // frames follow its first SKB_FRAME_GAP_NS apart (lines.rs): an skb
        // holds back its flow's packets pushed later, other flows' packets
        // overtake it, starts 0-5 us apart tie with its frames. Every pop
        // and the event count must be those of one line per flow.
        let us = 1_000;
        let delays = [40, 40, 6, 40, 40, 40, 6, 40, 40, 40, 9, 40].map(|d| d * us);
        let jitters = [3, 3, 20, 3, 3, 3, 20, 3, 3, 3, 20, 0].map(|j| j * us);
        let starts: Vec<(TimeNs, u32)> = [3, 0, 7, 1, 6, 2, 5, 4, 11, 8, 10, 9].iter().map(|&f| (0, f)).collect();
        let burst = |f: u32, k: u64| 1 + (f as u64 + k) % 3;
        let gap = |f: u32, k: u64| (k < 400).then(|| crate::rng::splitmix64(f as u64 * 1000 + k) % 6 * us);
        let skb = |f: u32, k: u64| (f as u64 + k) % 2 == 0;
        let (shared, shared_events) = line_trace_skbs(&delays, &jitters, true, &starts, burst, gap, skb);
        let (own, own_events) = line_trace_skbs(&delays, &jitters, false, &starts, burst, gap, skb);
        assert!(own.len() > 8000, "{} pops", own.len());
        let mut last = [None; 12];
        let mut gaps = 0;
        for &(t, _, f, _) in &own {
            gaps += last[f as usize].is_some_and(|l| t - l == crate::lines::SKB_FRAME_GAP_NS) as u32;
            last[f as usize] = Some(t);
        }
        assert!(gaps > 1000, "only {gaps} pops one frame gap after their flow's previous one");
        let overtaken = own.windows(2).filter(|w| w[0].2 != w[1].2).count();
        assert!(overtaken > 3000, "only {overtaken} consecutive pops of different flows");
        assert_eq!(shared.len(), own.len());
        for (i, (a, b)) in shared.iter().zip(&own).enumerate() {
            assert_eq!(a, b, "pop {i}");
        }
        assert_eq!(shared_events, own_events, "the same events counted");
    }

    /// `c`'s result with and without shared delay lines, as JSON without `wall_ns`.
    fn results_shared_and_own(c: &RunConfig) -> (serde_json::Value, serde_json::Value) {
        let json = |share| {
            let mut r = Simulation::try_new_with(c, if share { 2 } else { usize::MAX }).unwrap().run();
            r.wall_ns = 0;
            serde_json::to_value(&r).unwrap()
        };
        (json(true), json(false))
    }

    /// 12 flows, CUBIC, Reno and BBR in turn, with identical start times (ties at every start
    /// and in every slow-start round); the last one finite (2 MB).
    fn twelve_flows() -> Vec<FlowConfig> {
        let mut flows: Vec<FlowConfig> = (0..12).map(|i| flow(["cubic", "reno", "bbr"][i % 3])).collect();
        flows[11].size_bytes = Some(2_000_000);
        flows
    }

    /// `flows` through an 8-packet drop-tail bottleneck (it drops) give the same result with
    /// and without shared delay lines.
    fn assert_shared_lines_change_nothing(flows: Vec<FlowConfig>) {
        let (shared, own) = results_shared_and_own(&cfg(flows, 8, 3));
        assert!(shared["events"].as_u64().unwrap() > 20_000);
        assert!(shared["flows"][0]["drops"].as_u64().unwrap() > 0, "the bottleneck drops");
        assert_eq!(shared, own);
    }

    #[test]
    fn shared_lines_give_the_same_run_result_as_one_line_per_flow() {
        // Two RTTs and a host-noise flow (own line).
        let mut flows = twelve_flows();
        for f in &mut flows[8..10] {
            f.rtt_ns = 80_000_000;
        }
        flows[10].host_jitter_ns = 100_000;
        flows[10].ack_jitter_ns = 100_000;
        assert_shared_lines_change_nothing(flows);
    }

    #[test]
    fn shared_lines_with_host_noise_give_the_same_run_result_as_one_line_per_flow() {
        // The default model's noise on all 12 flows (100 us per data packet,
        // 50 us per ACK), two RTTs.
        let mut flows = twelve_flows();
        for (i, f) in flows.iter_mut().enumerate() {
            f.host_jitter_ns = 100_000;
            f.ack_jitter_ns = 50_000;
            if i >= 8 {
                f.rtt_ns = 80_000_000;
            }
        }
        assert_shared_lines_change_nothing(flows);
    }

    #[test]
    fn shared_lines_with_a_host_noise_tail_give_the_same_run_result_as_one_line_per_flow() {
        // The noise above with a heavy tail on the ACKs (lines.rs `TailLaw`), taken
        // often here (5 %, 2 ms) so that the run meets it; one flow without it (a line of its own
        // key).
        let mut flows = twelve_flows();
        for (i, f) in flows.iter_mut().enumerate() {
            f.host_jitter_ns = 100_000;
            f.ack_jitter_ns = 50_000;
            (f.ack_tail_ppm, f.ack_tail_ns) = if i == 3 { (0, 0) } else { (50_000, 2_000_000) };
        }
        assert_shared_lines_change_nothing(flows);
    }

    /// `c`'s result (JSON without `wall_ns`) with its algorithms as given.
    fn result_with(c: &RunConfig, algorithms: &[cc::Algorithm]) -> serde_json::Value {
        let mut r = try_run(c, algorithms).unwrap();
        r.wall_ns = 0;
        serde_json::to_value(&r).unwrap()
    }

    #[test]
    fn skipping_the_hooks_an_algorithm_does_not_declare_changes_no_result() {
        // Every registered TCP algorithm, three flows and a Reno one through a
        // dropping drop-tail queue and through a marking RED queue (ECN), with
        // host noise and TSO; once as built, once calling every optional hook
        // (cc/mod.rs `Hooks`): the results are the same bits.
        let red_ecn: QdiscConfig = serde_json::from_value(serde_json::json!({"kind": "red", "limit_packets": 30, "ecn": true})).unwrap();
        let mut tried = 0;
        for name in cc::names() {
            let Some((entry, _)) = cc::lookup(name) else { continue };
            if (entry.prepare)(&serde_json::Map::new()).unwrap().build(0).is_none() {
                continue; // not TCP (DCCP's CCID 2)
            }
            for qdisc in [QdiscConfig::droptail(Some(20), None), red_ecn.clone()] {
                let mut flows: Vec<FlowConfig> = (0..3).map(|_| flow(name)).collect();
                flows.push(flow("reno"));
                for f in &mut flows {
                    f.host_jitter_ns = 50_000;
                    f.ack_jitter_ns = 20_000;
                }
                let mut c = cfg(flows, 3, 7);
                c.bottleneck.as_mut().unwrap().qdisc = qdisc;
                let declared = c.algorithms().unwrap();
                let every: Vec<cc::Algorithm> = c.algorithms().unwrap().into_iter().map(cc::Algorithm::calling_every_hook).collect();
                let (a, b) = (result_with(&c, &declared), result_with(&c, &every));
                assert!(a["flows"][0]["delivered_bytes"].as_array().is_some_and(|d| !d.is_empty()), "{name}");
                assert_eq!(a, b, "{name}");
                tried += 1;
            }
        }
        assert!(tried >= 2 * 20, "{tried} runs");
    }

    #[test]
    fn same_seed_same_result_and_seeds_differ() {
        let mk = |seed| {
            let mut a = flow("cubic");
            a.start_jitter_ns = 100_000_000;
            let mut b = flow("bbr");
            b.start_ns = 2_000_000_000;
            b.start_jitter_ns = 100_000_000;
            cfg(vec![a, b], 10, seed)
        };
        let key =
            |r: &RunResult| (r.flows.iter().map(|f| f.delivered_bytes.clone()).collect::<Vec<_>>(), r.events, r.queue_packets.clone());
        assert_eq!(key(&run(&mk(5))), key(&run(&mk(5))));
        assert_ne!(key(&run(&mk(5))), key(&run(&mk(6))));
    }

    #[test]
    fn with_exact_delays_and_starts_cubic_pairs_differ_between_seeds_by_the_hosts_clock_phase() {
        // No host noise, no start jitter: the seed acts only through the hosts' clock phase
        // (cc/mod.rs `host_clock_epoch_ns`), where CUBIC's jiffies tick. Same seed, same bits.
        let mk = |seed| {
            let mut b = flow("cubic");
            b.start_ns = 2_000_000_000;
            cfg(vec![flow("cubic"), b], 10, seed)
        };
        let key = |r: &RunResult| r.flows.iter().map(|f| f.delivered_bytes.clone()).collect::<Vec<_>>();
        let runs: Vec<_> = (1..=4).map(|seed| key(&run(&mk(seed)))).collect();
        assert_eq!(runs[0], key(&run(&mk(1))));
        assert!(runs[1..].iter().any(|r| *r != runs[0]), "the phase changes nothing");
        let phases: Vec<u64> = (1..=4).map(|s| cc::host_clock_epoch_ns(s, None, true) % cc::HOST_CLOCK_PHASE_SPAN_NS).collect();
        assert!(phases.windows(2).all(|w| w[0] != w[1]), "{phases:?}");
        // Idealized hosts (`noise = "none"`): the clocks tick at time 0, one result per pair.
        let ideal = |seed| key(&run(&RunConfig { host_clock_phase: false, ..mk(seed) }));
        assert!((2..=4).all(|seed| ideal(seed) == ideal(1)));
    }
}
