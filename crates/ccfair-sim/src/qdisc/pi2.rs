//! PI2: a PI controller on queueing delay, "improved with a square".
//!
//! Algorithm (De Schepper, Bondarenko, Tsang, Briscoe, "PI2: A Linearized AQM
//! for both Classic and Scalable TCP", ACM CoNEXT 2016; RFC 9332 section 2.5.2
//! and appendix A; Linux net/sched/sch_dualpi2.c `calculate_probability`):
//!   - every `tupdate` the base probability p' is updated from the queue delay
//!     q (sojourn time of the head packet):
//!         p' += alpha * (q - target) + beta * (q - q_prev),   clamped to [0, 1]
//!     with alpha and beta in Hz (probability per second of delay error);
//!   - a Classic packet (Not-ECT or ECT(0)) is dropped, or CE-marked if it is
//!     ECN-capable, with probability p'^2 (two independent coin flips, as
//!     Linux's `dualpi2_squared_roll`); when k*p' > 1 (overload) ECN-capable
//!     Classic packets are dropped too (Linux `must_drop`);
//!   - a Scalable packet (ECT(1) or CE, the L4S identifier of RFC 9331) is
//!     CE-marked with probability min(k * p', 1), k = coupling factor;
//!   - no drop or mark while the backlog is under 2 MTUs (Linux, like RED's min_th);
//!   - the decision is taken at dequeue (Linux default `drop_early = false`).
//!
//! Defaults: those of Linux sch_dualpi2's PI2 (target 15 ms, tupdate 16 ms,
//! alpha 0.16 Hz, beta 3.2 Hz, k = 2); RFC 9332's example uses tupdate =
//! min(target, RTT_max / 3) = 15 ms, alpha 0.15 Hz, beta 3 Hz for RTT_max 100 ms.
//! Study S3 uses a 10 ms update and target = K x RTT (set `tupdate`, `target`).
//! The controller runs on the exact ns clock (Linux: jiffies); probabilities
//! are f64 (Linux: u32 fixed point). Randomness comes from the run's
//! qdisc stream (rng::stream::QDISC).

use crate::ring::Ring;

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::{DropReason, Qdisc};

/// Where PI2 is specified.
pub const SOURCE: &str = "PI2: De Schepper et al., CoNEXT 2016 (one queue; classic p'^2, ECT(1) k p')";
use crate::engine::TimeNs;
use crate::packet::{Ecn, Packet};

/// Linux sch_dualpi2 default target queue delay (15 ms).
pub const DEFAULT_TARGET_NS: u64 = 15_000_000;
/// Linux sch_dualpi2 default update interval (16 ms).
pub const DEFAULT_TUPDATE_NS: u64 = 16_000_000;
/// Integral gain, Hz (Linux: 41/256 Hz ~ 0.16 Hz).
pub const DEFAULT_ALPHA_HZ: f64 = 0.16;
/// Proportional gain, Hz (Linux: 819/256 Hz ~ 3.2 Hz).
pub const DEFAULT_BETA_HZ: f64 = 3.2;
/// Coupling factor k between Classic and Scalable signals (RFC 9332: 2).
pub const DEFAULT_COUPLING: f64 = 2.0;

crate::declare_params! {
    /// PI2's parameters (defaults: the paper's / Linux sch_dualpi2's classic-queue values).
    pub struct Pi2Config {
        /// Queue limit, packets (experiment files: bottleneck.buffer or qdisc.limit).
        limit_packets: u64 = 1000, Range::at_least(1.0);
        /// Target queueing delay.
        target_ns: u64 = DEFAULT_TARGET_NS, Range::above(0.0);
        /// Controller update interval.
        tupdate_ns: u64 = DEFAULT_TUPDATE_NS, Range::above(0.0);
        /// Gain on the delay's distance to target, Hz.
        alpha_hz: f64 = DEFAULT_ALPHA_HZ, Range::at_least(0.0);
        /// Gain on the delay's change, Hz.
        beta_hz: f64 = DEFAULT_BETA_HZ, Range::at_least(0.0);
        /// Coupling k: ECT(1) packets are marked with k p'.
        coupling: f64 = DEFAULT_COUPLING, Range::at_least(1.0);
    }
}
/// No AQM action while the backlog is below this many bytes (2 MTUs, Linux `must_drop`).
pub const MIN_BACKLOG_BYTES: u64 = 2 * 1500;

/// The PI controller shared by PI2 and DualPI2.
#[derive(Debug, Clone)]
pub struct PiController {
    pub target_ns: u64,
    pub tupdate_ns: u64,
    pub alpha_hz: f64,
    pub beta_hz: f64,
    /// Upper bound of p' (1, or 1/k when overload is not handled by dropping).
    pub max_p: f64,
    /// Base probability p'.
    pub p: f64,
    prev_qdelay_ns: u64,
    next_update_ns: u64,
}

impl PiController {
    pub fn new(target_ns: u64, tupdate_ns: u64, alpha_hz: f64, beta_hz: f64, max_p: f64) -> Self {
        PiController { target_ns, tupdate_ns, alpha_hz, beta_hz, max_p, p: 0.0, prev_qdelay_ns: 0, next_update_ns: tupdate_ns }
    }

    /// One controller step with queue delay `qdelay_ns` (RFC 9332 A.2 `dualpi2_update`).
    pub fn update(&mut self, qdelay_ns: u64) {
        let q = qdelay_ns as f64 * 1e-9;
        let target = self.target_ns as f64 * 1e-9;
        let prev = self.prev_qdelay_ns as f64 * 1e-9;
        self.p += self.alpha_hz * (q - target) + self.beta_hz * (q - prev);
        self.p = self.p.clamp(0.0, self.max_p);
        self.prev_qdelay_ns = qdelay_ns;
    }

    /// Run every update due at or before `now`. Between events the queue does
    /// not change, so `qdelay_at(t)` (head sojourn at time t) is exact for each
    /// missed update time.
    pub fn catch_up(&mut self, now: TimeNs, qdelay_at: impl Fn(TimeNs) -> u64) {
        while self.next_update_ns <= now {
            let t = self.next_update_ns;
            self.update(qdelay_at(t));
            self.next_update_ns += self.tupdate_ns;
        }
    }
}

/// Head-of-queue sojourn at time `t`.
pub fn head_sojourn(head: Option<&Packet>, t: TimeNs) -> u64 {
    head.map_or(0, |h| t.saturating_sub(h.enqueue_ns))
}

/// ECT(1) or CE: the L4S identifier (RFC 9331, Linux `ecn_mask = ECT_1`).
pub fn is_l4s(p: &Packet) -> bool {
    matches!(p.ecn, Ecn::Ect1 | Ecn::Ce)
}

#[derive(Debug, Clone, Default)]
pub struct Pi2Stats {
    pub marks: u64,
    pub aqm_drops: u64,
    pub overflow_drops: u64,
}

pub struct Pi2 {
    limit_packets: u64,
    coupling: f64,
    pub pi: PiController,
    q: Ring<Packet>,
    bytes: u64,
    in_service: super::InService,
    rng: Pcg64Mcg,
    pub stats: Pi2Stats,
}

impl Pi2 {
    pub fn new(limit_packets: u64, target_ns: u64, tupdate_ns: u64, alpha_hz: f64, beta_hz: f64, coupling: f64, seed: u64) -> Self {
        Pi2 {
            limit_packets,
            in_service: super::InService::default(),
            coupling,
            pi: PiController::new(target_ns, tupdate_ns, alpha_hz, beta_hz, 1.0),
            q: Ring::with_capacity(256),
            bytes: 0,
            rng: rand::SeedableRng::seed_from_u64(seed),
            stats: Pi2Stats::default(),
        }
    }

    pub fn from_config(c: &Pi2Config, seed: u64) -> Self {
        Pi2::new(c.limit_packets, c.target_ns, c.tupdate_ns, c.alpha_hz, c.beta_hz, c.coupling, seed)
    }

    fn roll(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.gen::<f64>() < p
    }

    fn catch_up(&mut self, now: TimeNs) {
        let head = self.q.front().copied();
        self.pi.catch_up(now, |t| head_sojourn(head.as_ref(), t));
    }

    /// The AQM decision for a dequeued packet: `true` = drop; may CE-mark `p`.
    fn must_drop(&mut self, p: &mut Packet) -> bool {
        if self.bytes < MIN_BACKLOG_BYTES {
            return false;
        }
        let base = self.pi.p;
        let scalable = base * self.coupling;
        if is_l4s(p) {
            if self.roll(scalable.min(1.0)) {
                super::mark_ce(p);
                self.stats.marks += 1;
            }
            return false;
        }
        if self.roll(base) && self.roll(base) {
            if scalable <= 1.0 && super::mark_ce(p) {
                self.stats.marks += 1;
                return false;
            }
            return true;
        }
        false
    }
}

impl Qdisc for Pi2 {
    fn enqueue(&mut self, mut pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        self.catch_up(now);
        if self.q.len() as u64 + self.in_service.packets >= self.limit_packets {
            self.stats.overflow_drops += 1;
            return Err((pkt, DropReason::Overflow));
        }
        pkt.enqueue_ns = now;
        self.bytes += pkt.wire_bytes as u64;
        self.q.push_back(pkt);
        Ok(())
    }

    fn dequeue(&mut self, now: TimeNs, dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        self.catch_up(now);
        while let Some(mut p) = self.q.pop_front() {
            self.bytes -= p.wire_bytes as u64;
            if self.must_drop(&mut p) {
                self.stats.aqm_drops += 1;
                dropped.push((p, DropReason::Aqm));
                continue;
            }
            return Some(p);
        }
        None
    }

    super::fifo::counted_backlog!(|q| q.q.len());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn pkt(ecn: Ecn) -> Packet {
        let mut p = Packet::new(0, Kind::Data, 1500);
        p.ecn = ecn;
        p
    }

    #[test]
    fn controller_step_matches_rfc9332_update() {
        // p' += alpha (q - target) + beta (q - q_prev): 0.16 * 0.010 + 3.2 * 0.025 = 0.0816.
        let mut c = PiController::new(15_000_000, 16_000_000, 0.16, 3.2, 1.0);
        c.update(25_000_000);
        assert!((c.p - 0.0816).abs() < 1e-12, "{}", c.p);
        // Same delay again: only the integral term: + 0.16 * 0.010.
        c.update(25_000_000);
        assert!((c.p - 0.0832).abs() < 1e-12, "{}", c.p);
        // Empty queue: p falls, clamped at 0.
        for _ in 0..100 {
            c.update(0);
        }
        assert_eq!(c.p, 0.0);
    }

    #[test]
    fn catch_up_runs_one_update_per_interval() {
        let mut c = PiController::new(15_000_000, 16_000_000, 0.16, 0.0, 1.0);
        // A head enqueued at 0 and still there: delay at t = 16, 32, 48 ms.
        c.catch_up(50_000_000, |t| t);
        let expect = 0.16 * ((0.016 - 0.015) + (0.032 - 0.015) + (0.048 - 0.015));
        assert!((c.p - expect).abs() < 1e-12);
    }

    /// Drive `n` packets of one codepoint through a PI2 whose base probability is
    /// fixed at `p` (gains 0), with a standing backlog so the 2-MTU floor never applies.
    fn signal_fractions(p: f64, ecn: Ecn, n: usize) -> (f64, f64) {
        let mut q = Pi2::new(1_000_000, 15_000_000, 1_000_000_000_000, 0.0, 0.0, 2.0, 42);
        q.pi.p = p;
        let mut dropped = vec![];
        // A standing backlog of the same codepoint (FIFO: what leaves is always test traffic).
        for _ in 0..4 {
            q.enqueue(pkt(ecn), 0).unwrap();
        }
        let (mut marks, mut drops) = (0u64, 0u64);
        for _ in 0..n {
            q.enqueue(pkt(ecn), 0).unwrap();
            // Dequeue exactly one forwarded or dropped packet of the test codepoint.
            dropped.clear();
            let out = q.dequeue(0, &mut dropped);
            drops += dropped.len() as u64;
            if let Some(o) = out {
                if o.ecn == Ecn::Ce {
                    marks += 1;
                }
            }
            while q.len_packets() < 4 {
                q.enqueue(pkt(ecn), 0).unwrap();
            }
        }
        (marks as f64 / n as f64, drops as f64 / n as f64)
    }

    #[test]
    fn classic_drop_probability_is_the_square_of_the_base_probability() {
        // Not-ECT classic traffic is dropped with p'^2 (PI2 paper, RFC 9332 2.4).
        let n = 200_000;
        let (_, d) = signal_fractions(0.3, Ecn::NotEct, n);
        // Every dequeue attempt consumes packets until one survives: the fraction
        // of dropped packets among all packets is p^2 = 0.09, so drops per
        // forwarded packet is 0.09 / 0.91.
        let per_forwarded = 0.09 / 0.91;
        assert!((d - per_forwarded).abs() < 0.004, "drops/forwarded {d} vs {per_forwarded}");
        // And with ECT(0) the same probability marks instead of dropping.
        let mut q = Pi2::new(1_000_000, 15_000_000, 1_000_000_000_000, 0.0, 0.0, 2.0, 7);
        q.pi.p = 0.3;
        let mut dropped = vec![];
        for _ in 0..n {
            q.enqueue(pkt(Ecn::Ect0), 0).unwrap();
        }
        let mut marked = 0;
        let mut seen = 0;
        while q.len_packets() > 3 {
            let o = q.dequeue(0, &mut dropped).unwrap();
            seen += 1;
            marked += (o.ecn == Ecn::Ce) as u64;
        }
        assert!(dropped.is_empty(), "ECN-capable classic packets are marked, not dropped");
        let f = marked as f64 / seen as f64;
        assert!((f - 0.09).abs() < 0.004, "classic mark fraction {f}");
    }

    #[test]
    fn scalable_marking_is_k_times_base_probability() {
        let (m, d) = signal_fractions(0.1, Ecn::Ect1, 200_000);
        assert_eq!(d, 0.0, "ECT(1) is never dropped below overload");
        assert!((m - 0.2).abs() < 0.004, "scalable mark fraction {m}, expected k*p' = 0.2");
        // k * p' saturates at 1.
        let (m, _) = signal_fractions(0.7, Ecn::Ect1, 20_000);
        assert_eq!(m, 1.0);
    }

    #[test]
    fn no_signal_below_two_mtus_of_backlog() {
        let mut q = Pi2::new(100, 15_000_000, 1_000_000_000_000, 0.0, 0.0, 2.0, 1);
        q.pi.p = 1.0;
        let mut dropped = vec![];
        q.enqueue(pkt(Ecn::NotEct), 0).unwrap();
        q.enqueue(pkt(Ecn::NotEct), 0).unwrap();
        assert!(q.dequeue(0, &mut dropped).is_some());
        assert!(q.dequeue(0, &mut dropped).is_some());
        assert!(dropped.is_empty());
    }

    #[test]
    fn conservation_in_equals_out_plus_dropped_plus_queued() {
        let mut q = Pi2::new(50, 1_000_000, 1_000_000, 0.5, 5.0, 2.0, 3);
        let (mut inp, mut out, mut drop) = (0u64, 0u64, 0u64);
        let mut x: u64 = 99;
        let mut dropped = vec![];
        let mut now = 0;
        for _ in 0..100_000 {
            x = crate::rng::splitmix64(x);
            now += x % 200_000;
            if x % 5 < 3 {
                inp += 1;
                let e = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1][(x >> 8) as usize % 3];
                if q.enqueue(pkt(e), now).is_err() {
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
        assert!(q.stats.aqm_drops > 0 && q.stats.marks > 0, "the AQM acted: {:?}", q.stats);
        assert_eq!(inp, out + drop + q.len_packets() as u64);
    }
}
