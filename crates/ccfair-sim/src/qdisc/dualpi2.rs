//! DualPI2: the DualQ Coupled AQM (RFC 9332) as Linux sch_dualpi2 implements it.
//!
//! Algorithm:
//!   - Classification: ECT(1) and CE packets (the L4S identifier, RFC 9331) go
//!     to the L4S queue (L), everything else to the Classic queue (C). One
//!     shared packet limit; an arrival over it is dropped (overflow).
//!   - Base probability p' from a PI controller (qdisc/pi2.rs) on the larger of
//!     the two head-of-queue sojourn times, updated every `tupdate`
//!     (Linux `calculate_probability`).
//!   - C packets: drop (or CE-mark if ECT(0)) with p'^2; on overload (k p' > 1)
//!     ECN-capable C packets are dropped too.
//!   - L packets: CE-mark with the coupled probability k p' (k = 2); on
//!     overload, drop with p'^2 if `drop_overload` (Linux default) else mark.
//!     Plus the native L4S AQM: a step that marks every L packet whose sojourn
//!     exceeds `step_thresh` (Linux default 1 ms; only when the L queue held
//!     more than one packet at its enqueue, Linux `apply_step`), or, with
//!     `ramp_range` > 0, RFC 9332's ramp: probability rising linearly from 0 at
//!     `step_thresh` to 1 at `step_thresh + ramp_range` (RFC 9332 example:
//!     minTh 800 us, range 400 us). Linux applies the coupled and native
//!     markers as independent coin flips; so do we.
//!   - No PI2 drop or mark while the whole backlog is under 2 MTUs.
//!   - Scheduler: time-shifted FIFO (RFC 9332 section 2.5.1 / appendix A.1):
//!     serve L unless the C head has waited `tshift` longer than the L head,
//!     i.e. serve L iff ts_C + tshift >= ts_L. (Linux uses a WRR with 10 %
//!     C-protection instead; see docs/qdiscs.md.)
//!   - All AQM decisions at dequeue (Linux `drop_early = false`).
//!
//! Sources: RFC 9332 (DualQ Coupled AQM), appendix A (DualPI2 pseudocode);
//! Linux net/sched/sch_dualpi2.c (defaults: target 15 ms, tupdate 16 ms,
//! alpha 0.16 Hz, beta 3.2 Hz, step 1 ms, k = 2, drop_overload on).

use crate::ring::Ring;

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::pi2::{head_sojourn, is_l4s, PiController, MIN_BACKLOG_BYTES};
use super::pi2::{DEFAULT_ALPHA_HZ, DEFAULT_BETA_HZ, DEFAULT_COUPLING, DEFAULT_TARGET_NS, DEFAULT_TUPDATE_NS};
use super::{DropReason, Qdisc};

/// Where DualPI2 is specified.
pub const SOURCE: &str = "DualPI2: RFC 9332; Linux sch_dualpi2 (L4S queue with step marker, coupled PI2 classic queue)";
use crate::engine::TimeNs;
use crate::packet::Packet;

/// Linux sch_dualpi2 default L4S step threshold (1 ms of sojourn).
pub const DEFAULT_STEP_THRESH_NS: u64 = 1_000_000;
/// Time shift of the time-shifted FIFO scheduler (ccfair default, 40 ms).
pub const DEFAULT_TSHIFT_NS: u64 = 40_000_000;

crate::declare_params! {
    /// DualPI2's parameters (defaults = RFC 9332 / Linux sch_dualpi2).
    pub struct DualPi2Config {
        /// Limit of both queues together, packets (experiment files: bottleneck.buffer or qdisc.limit).
        limit_packets: u64 = 10_000, Range::at_least(1.0);
        /// Classic queue's target delay.
        target_ns: u64 = DEFAULT_TARGET_NS, Range::above(0.0);
        /// PI controller update interval.
        tupdate_ns: u64 = DEFAULT_TUPDATE_NS, Range::above(0.0);
        /// Gain on the delay's distance to target, Hz.
        alpha_hz: f64 = DEFAULT_ALPHA_HZ, Range::at_least(0.0);
        /// Gain on the delay's change, Hz.
        beta_hz: f64 = DEFAULT_BETA_HZ, Range::at_least(0.0);
        /// Coupling k between the queues.
        coupling: f64 = DEFAULT_COUPLING, Range::at_least(1.0);
        /// L4S step marking threshold on the L queue's sojourn time.
        step_thresh_ns: u64 = DEFAULT_STEP_THRESH_NS, Range::above(0.0);
        /// Ramp width below the step threshold (0 = a step).
        ramp_range_ns: u64 = 0, Range::Any;
        /// Time shift of the time-shifted FIFO scheduler.
        tshift_ns: u64 = DEFAULT_TSHIFT_NS, Range::Any;
        /// Drop (not only mark) on overload, p' capped at 1 (Linux drop_on_overload).
        drop_overload: bool = true, Range::Any;
    }
}

#[derive(Debug, Clone, Default)]
pub struct DualPi2Stats {
    pub l_enqueued: u64,
    pub c_enqueued: u64,
    pub step_marks: u64,
    pub coupled_marks: u64,
    pub classic_marks: u64,
    pub aqm_drops: u64,
    pub overflow_drops: u64,
}

pub struct DualPi2 {
    limit_packets: u64,
    coupling: f64,
    step_thresh_ns: u64,
    ramp_range_ns: u64,
    tshift_ns: u64,
    drop_overload: bool,
    pub pi: PiController,
    /// L4S queue: (packet, apply_step).
    lq: Ring<(Packet, bool)>,
    cq: Ring<Packet>,
    in_service: super::InService,
    bytes: u64,
    rng: Pcg64Mcg,
    pub stats: DualPi2Stats,
}

impl DualPi2 {
    pub fn from_config(c: &DualPi2Config, seed: u64) -> Self {
        let DualPi2Config {
            limit_packets,
            target_ns,
            tupdate_ns,
            alpha_hz,
            beta_hz,
            coupling,
            step_thresh_ns,
            ramp_range_ns,
            tshift_ns,
            drop_overload,
        } = c.clone();
        {
            {
                // Linux caps p' at 1/k unless overload is handled by dropping.
                let max_p = if drop_overload { 1.0 } else { 1.0 / coupling };
                DualPi2 {
                    limit_packets,
                    in_service: super::InService::default(),
                    coupling,
                    step_thresh_ns,
                    ramp_range_ns,
                    tshift_ns,
                    drop_overload,
                    pi: PiController::new(target_ns, tupdate_ns, alpha_hz, beta_hz, max_p),
                    lq: Ring::with_capacity(64),
                    cq: Ring::with_capacity(256),
                    bytes: 0,
                    rng: rand::SeedableRng::seed_from_u64(seed),
                    stats: DualPi2Stats::default(),
                }
            }
        }
    }

    fn roll(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.gen::<f64>() < p
    }

    fn catch_up(&mut self, now: TimeNs) {
        let lh = self.lq.front().map(|(p, _)| *p);
        let ch = self.cq.front().copied();
        self.pi.catch_up(now, |t| head_sojourn(lh.as_ref(), t).max(head_sojourn(ch.as_ref(), t)));
    }

    /// Time-shifted FIFO: true = serve the L4S queue.
    fn pick_l(&self) -> Option<bool> {
        match (self.lq.front(), self.cq.front()) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (Some((l, _)), Some(c)) => Some(c.enqueue_ns + self.tshift_ns >= l.enqueue_ns),
        }
    }

    /// PI2 part of Linux `must_drop`: true = drop; may CE-mark.
    fn must_drop(&mut self, p: &mut Packet, l4s: bool) -> bool {
        if self.bytes < MIN_BACKLOG_BYTES {
            return false;
        }
        let base = self.pi.p;
        let coupled = base * self.coupling;
        let overloaded = coupled > 1.0;
        if l4s {
            if overloaded {
                if self.drop_overload && self.roll(base) && self.roll(base) {
                    return true;
                }
                super::mark_ce(p);
                self.stats.coupled_marks += 1;
            } else if self.roll(coupled) {
                super::mark_ce(p);
                self.stats.coupled_marks += 1;
            }
            return false;
        }
        if self.roll(base) && self.roll(base) {
            if !overloaded && super::mark_ce(p) {
                self.stats.classic_marks += 1;
                return false;
            }
            return true;
        }
        false
    }

    /// Native L4S AQM: step (ramp_range 0) or linear ramp on the packet's sojourn.
    fn native_l4s_mark(&mut self, p: &mut Packet, sojourn_ns: u64) {
        let mark = if self.ramp_range_ns == 0 {
            sojourn_ns > self.step_thresh_ns
        } else if sojourn_ns <= self.step_thresh_ns {
            false
        } else {
            let f = (sojourn_ns - self.step_thresh_ns) as f64 / self.ramp_range_ns as f64;
            f >= 1.0 || self.roll(f)
        };
        if mark {
            super::mark_ce(p);
            self.stats.step_marks += 1;
        }
    }

    pub fn len_l(&self) -> usize {
        self.lq.len()
    }
}

impl Qdisc for DualPi2 {
    fn enqueue(&mut self, mut pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        self.catch_up(now);
        if (self.lq.len() + self.cq.len()) as u64 + self.in_service.packets >= self.limit_packets {
            self.stats.overflow_drops += 1;
            return Err((pkt, DropReason::Overflow));
        }
        pkt.enqueue_ns = now;
        self.bytes += pkt.wire_bytes as u64;
        if is_l4s(&pkt) {
            // Linux: only apply the step if an L queue is building up.
            let apply_step = self.lq.len() > 1;
            self.lq.push_back((pkt, apply_step));
            self.stats.l_enqueued += 1;
        } else {
            self.cq.push_back(pkt);
            self.stats.c_enqueued += 1;
        }
        Ok(())
    }

    fn dequeue(&mut self, now: TimeNs, dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        self.catch_up(now);
        while let Some(from_l) = self.pick_l() {
            let (mut p, apply_step) =
                if from_l { self.lq.pop_front().expect("picked L") } else { (self.cq.pop_front().expect("picked C"), false) };
            self.bytes -= p.wire_bytes as u64;
            if self.must_drop(&mut p, from_l) {
                self.stats.aqm_drops += 1;
                dropped.push((p, DropReason::Aqm));
                continue;
            }
            if from_l && apply_step {
                let sojourn = now.saturating_sub(p.enqueue_ns);
                self.native_l4s_mark(&mut p, sojourn);
            }
            return Some(p);
        }
        None
    }

    super::fifo::counted_backlog!(|q| q.lq.len() + q.cq.len());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, Kind};

    fn cfg(limit: u64, alpha: f64, beta: f64, ramp_ns: u64) -> DualPi2Config {
        DualPi2Config {
            limit_packets: limit,
            target_ns: 15_000_000,
            tupdate_ns: 16_000_000,
            alpha_hz: alpha,
            beta_hz: beta,
            coupling: 2.0,
            step_thresh_ns: 1_000_000,
            ramp_range_ns: ramp_ns,
            tshift_ns: 40_000_000,
            drop_overload: true,
        }
    }

    fn pkt(flow: u32, ecn: Ecn) -> Packet {
        let mut p = Packet::new(flow, Kind::Data, 1500);
        p.ecn = ecn;
        p
    }

    #[test]
    fn ect1_and_ce_are_classified_l4s_others_classic() {
        let mut q = DualPi2::from_config(&cfg(100, 0.16, 3.2, 0), 1);
        for e in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
            q.enqueue(pkt(0, e), 0).unwrap();
        }
        assert_eq!((q.stats.l_enqueued, q.stats.c_enqueued), (2, 2));
        assert_eq!(q.len_l(), 2);
    }

    #[test]
    fn step_marks_every_l4s_packet_above_the_threshold_and_none_below() {
        // p' stays 0 (no gains), so only the native step marks.
        let mut q = DualPi2::from_config(&cfg(1000, 0.0, 0.0, 0), 1);
        let mut dropped = vec![];
        for i in 0..20u64 {
            q.enqueue(pkt(0, Ecn::Ect1), i * 100_000).unwrap();
        }
        // Dequeue at 2.5 ms: sojourns are 2.5 ms - i*0.1 ms; > 1 ms for i < 15.
        let mut marked = vec![];
        for _ in 0..20 {
            let p = q.dequeue(2_500_000, &mut dropped).unwrap();
            marked.push(p.ecn == Ecn::Ce);
        }
        // The first two found an L queue of <= 1 packet: no step (Linux apply_step).
        let expect: Vec<bool> = (0..20u64).map(|i| i >= 2 && 2_500_000 - i * 100_000 > 1_000_000).collect();
        assert_eq!(marked, expect);
        assert!(dropped.is_empty());
    }

    #[test]
    fn ramp_marks_linearly_between_min_and_max_threshold() {
        let mut q = DualPi2::from_config(&cfg(1000, 0.0, 0.0, 400_000), 9);
        let n = 40_000;
        let mut marks = 0;
        for _ in 0..n {
            let mut p = pkt(0, Ecn::Ect1);
            q.native_l4s_mark(&mut p, 1_100_000); // 1/4 up the ramp
            marks += (p.ecn == Ecn::Ce) as u32;
        }
        let f = marks as f64 / n as f64;
        assert!((f - 0.25).abs() < 0.01, "{f}");
        let mut p = pkt(0, Ecn::Ect1);
        q.native_l4s_mark(&mut p, 1_400_001);
        assert_eq!(p.ecn, Ecn::Ce);
    }

    #[test]
    fn time_shifted_fifo_serves_l_unless_classic_waited_tshift_longer() {
        let mut q = DualPi2::from_config(&cfg(1000, 0.0, 0.0, 0), 1);
        let mut dropped = vec![];
        q.enqueue(pkt(1, Ecn::NotEct), 0).unwrap(); // C at 0
        q.enqueue(pkt(2, Ecn::Ect1), 30_000_000).unwrap(); // L at 30 ms
        q.enqueue(pkt(3, Ecn::Ect1), 50_000_000).unwrap(); // L at 50 ms
                                                           // C head shifted by 40 ms (= 40 ms) >= L head 30 ms: serve L first.
        assert_eq!(q.dequeue(50_000_000, &mut dropped).unwrap().flow, 2);
        // Now L head is at 50 ms > 0 + 40 ms: the classic packet goes.
        assert_eq!(q.dequeue(50_000_000, &mut dropped).unwrap().flow, 1);
        assert_eq!(q.dequeue(50_000_000, &mut dropped).unwrap().flow, 3);
    }

    #[test]
    fn coupling_marks_l4s_at_k_times_the_classic_base_probability() {
        let mut q = DualPi2::from_config(&cfg(1_000_000, 0.0, 0.0, 0), 5);
        q.pi.p = 0.2;
        let mut dropped = vec![];
        // A classic backlog keeps the 2-MTU floor away; all timestamps are 0, so
        // the TS-FIFO (ts_C + tshift >= ts_L) always serves L first.
        for _ in 0..4 {
            q.enqueue(pkt(0, Ecn::NotEct), 0).unwrap();
        }
        let n = 100_000;
        let mut marks = 0;
        for _ in 0..n {
            q.enqueue(pkt(1, Ecn::Ect1), 0).unwrap();
            let p = q.dequeue(0, &mut dropped).unwrap();
            assert_eq!(p.flow, 1);
            marks += (p.ecn == Ecn::Ce) as u32;
        }
        let f = marks as f64 / n as f64;
        assert!((f - 0.4).abs() < 0.005, "coupled mark fraction {f}, expected k p' = 0.4");
        assert!(dropped.is_empty());
    }

    #[test]
    fn conservation_in_equals_out_plus_dropped_plus_queued() {
        let mut q = DualPi2::from_config(&cfg(40, 0.5, 5.0, 0), 3);
        let (mut inp, mut out, mut drop) = (0u64, 0u64, 0u64);
        let mut x: u64 = 7;
        let mut dropped = vec![];
        let mut now = 0;
        for _ in 0..100_000 {
            x = crate::rng::splitmix64(x);
            now += x % 300_000;
            if x % 5 < 3 {
                inp += 1;
                let e = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1][(x >> 8) as usize % 3];
                if q.enqueue(pkt(0, e), now).is_err() {
                    drop += 1;
                }
            } else {
                dropped.clear();
                if q.dequeue(now, &mut dropped).is_some() {
                    out += 1;
                }
                drop += dropped.len() as u64;
            }
        }
        let s = &q.stats;
        assert!(s.aqm_drops > 0 && s.overflow_drops > 0 && s.step_marks > 0, "{s:?}");
        assert_eq!(inp, out + drop + q.len_packets() as u64);
    }
}
