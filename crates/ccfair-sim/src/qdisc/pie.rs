//! PIE, "Proportional Integral controller Enhanced".
//!
//! Every `tupdate` the drop probability p is updated from the queueing delay:
//!     p += alpha * (qdelay - target) + beta * (qdelay - qdelay_old)
//! (alpha, beta in Hz, delays in s), with alpha and beta scaled down while p
//! is small (auto-tuning table, RFC 8033 section 4.2: /2 below 10 %, /8
//! below 1 %, /32, /128, /512, /2048 below 0.1 %, 0.01 %, 0.001 %,
//! 0.0001 %), steps of at most 2 % once p >= 10 %, +2 % while qdelay >
//! 250 ms, and p decays by 1/64 per update while the queue delay is 0.
//! Arrivals are dropped early with probability p (ECN-capable ones marked
//! while p <= 10 % if `ecn`), except during the burst allowance (150 ms after
//! the controller was last reset), when qdelay < target/2 and p < 20 %, or
//! with fewer than two MTUs queued. Derandomisation (RFC 8033 section 5.1,
//! always on in Linux) accumulates p over arrivals: no drop below 0.85, a
//! forced drop at 8.5.
//!
//! Queue delay: the timestamp method (RFC 8033 section 5.2 allows it; Linux's
//! default since `dq_rate_estimator` defaults to off): qdelay = sojourn time
//! of the last dequeued packet, 0 when the queue drained; the burst allowance
//! shrinks by the time between dequeues (Linux pie_process_dequeue).
//!
//! Sources: RFC 8033 (Pan et al. 2017) sections 4-5 and appendix A/B;
//! Linux include/net/pie.h and net/sched/pie.c / sch_pie.c (`pie_drop_early`,
//! `pie_calculate_probability`, `pie_process_dequeue`; limit 1000 packets,
//! target 15 ms, tupdate 15 ms, alpha 2/16, beta 20/16, ecn off).
//!
//! Constants: QDELAY_HIGH_NS = 250 ms, MAX_STEP = 0.02, DECAY = 1/64,
//! MARK_ECN_MAX_P = 0.1, ACCU_NO_DROP = 0.85, ACCU_FORCE_DROP = 8.5.
//! Differences (docs/fidelity.md): p is an f64 (Linux: u64 fixed point),
//! the first update happens `tupdate` after start (Linux: 0.5 s).

use crate::ring::Ring;

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::{mark_ce, DropReason, Qdisc};

/// Where PIE is specified.
pub const SOURCE: &str = "PIE: RFC 8033; Linux sch_pie";

super::limited_queue_params! {
    /// PIE's parameters (defaults = RFC 8033 / Linux sch_pie).
    pub struct PieConfig {
        /// Target queueing delay (RFC 8033 QDELAY_REF).
        target_ns: u64 = 15_000_000, Range::above(0.0);
        /// Probability update interval (RFC 8033 T_UPDATE).
        tupdate_ns: u64 = 15_000_000, Range::above(0.0);
        /// Gain on the delay's distance to target, Hz (RFC 8033 alpha; Linux tc 2/16).
        alpha: f64 = 0.125, Range::at_least(0.0);
        /// Gain on the delay's change, Hz (RFC 8033 beta; Linux tc 20/16).
        beta: f64 = 1.25, Range::at_least(0.0);
        /// Burst allowance (RFC 8033 MAX_BURST).
        burst_ns: u64 = 150_000_000, Range::Any;
        /// Mark ECN-capable packets while p <= 10 % (Linux sch_pie: off).
        ecn: bool = false, Range::Any;
        /// Scale the probability by packet size / mtu.
        byte_mode: bool = false, Range::Any;
        /// RFC 8033 sec. 5.1 derandomisation (Linux always does it).
        derandomize: bool = true, Range::Any;
        /// Packet size byte mode scales against.
        mtu_bytes: u64 = 1514, Range::above(0.0);
    }
}
use crate::engine::TimeNs;
use crate::packet::Packet;
use crate::rng::{stream, stream_rng};

pub const QDELAY_HIGH_NS: u64 = 250_000_000;
pub const MAX_STEP: f64 = 0.02;
pub const MARK_ECN_MAX_P: f64 = 0.1;
pub const ACCU_NO_DROP: f64 = 0.85;
pub const ACCU_FORCE_DROP: f64 = 8.5;

#[derive(Debug, Clone, Default)]
pub struct PieStats {
    pub early_drops: u64,
    pub overflow_drops: u64,
    pub marks: u64,
    pub updates: u64,
}

pub struct Pie {
    c: PieConfig,
    q: Ring<Packet>,
    bytes: u64,
    in_service: super::InService,
    // controller state (Linux struct pie_vars)
    pub prob: f64,
    pub qdelay_ns: u64,
    pub qdelay_old_ns: u64,
    pub burst_left_ns: u64,
    pub accu_prob: f64,
    dq_tstamp: Option<TimeNs>,
    next_update: TimeNs,
    rng: Pcg64Mcg,
    pub stats: PieStats,
}

impl Pie {
    pub fn new(c: &PieConfig, seed: u64) -> Self {
        Pie {
            c: c.clone(),
            q: Ring::with_capacity(256),
            bytes: 0,
            in_service: super::InService::default(),
            prob: 0.0,
            qdelay_ns: 0,
            qdelay_old_ns: 0,
            burst_left_ns: c.burst_ns,
            accu_prob: 0.0,
            dq_tstamp: None,
            next_update: c.tupdate_ns,
            rng: stream_rng(seed, stream::QDISC),
            stats: PieStats::default(),
        }
    }

    /// Run the periodic updates due by `now` (lazy timer: between two
    /// events the inputs of the update - qdelay, backlog - do not change).
    fn advance(&mut self, now: TimeNs) {
        while self.next_update <= now {
            self.calculate_probability();
            self.next_update += self.c.tupdate_ns;
        }
    }

    /// One `tupdate` step (RFC 8033 section 4.2, Linux pie_calculate_probability).
    pub fn calculate_probability(&mut self) {
        self.stats.updates += 1;
        let qdelay = self.qdelay_ns;
        let mut update_prob = !(qdelay == 0 && self.bytes != 0);
        let (mut alpha, mut beta) = (self.c.alpha, self.c.beta);
        if self.prob < 0.1 {
            alpha /= 2.0;
            beta /= 2.0;
            let mut power = 100.0;
            while self.prob < 1.0 / power && power <= 1e6 {
                alpha /= 4.0;
                beta /= 4.0;
                power *= 10.0;
            }
        }
        let s = |ns: u64| ns as f64 * 1e-9;
        let mut delta = alpha * (s(qdelay) - s(self.c.target_ns)) + beta * (s(qdelay) - s(self.qdelay_old_ns));
        if delta > MAX_STEP && self.prob >= 0.1 {
            delta = MAX_STEP;
        }
        if qdelay > QDELAY_HIGH_NS {
            delta += MAX_STEP;
        }
        self.prob += delta;
        if self.prob > 1.0 {
            self.prob = 1.0;
            update_prob = false;
        }
        if self.prob < 0.0 {
            self.prob = 0.0;
        }
        if qdelay == 0 && self.qdelay_old_ns == 0 && update_prob {
            self.prob -= self.prob / 64.0;
        }
        // Restart the measurement cycle once the delay has been low for two
        // updates and p is back to zero.
        if qdelay < self.c.target_ns / 2 && self.qdelay_old_ns < self.c.target_ns / 2 && self.prob == 0.0 {
            self.burst_left_ns = self.c.burst_ns;
            self.dq_tstamp = None;
            self.accu_prob = 0.0;
        }
        self.qdelay_old_ns = qdelay;
    }

    /// RFC 8033 section 4.1 / 5.1, Linux pie_drop_early.
    pub fn drop_early(&mut self, packet_bytes: u32) -> bool {
        if self.burst_left_ns > 0 {
            return false;
        }
        if self.qdelay_ns < self.c.target_ns / 2 && self.prob < 0.2 {
            return false;
        }
        if self.bytes < 2 * self.c.mtu_bytes {
            return false;
        }
        let local = if self.c.byte_mode && (packet_bytes as u64) <= self.c.mtu_bytes {
            self.prob * packet_bytes as f64 / self.c.mtu_bytes as f64
        } else {
            self.prob
        };
        if !self.c.derandomize {
            return self.rng.gen::<f64>() < local;
        }
        if local == 0.0 {
            self.accu_prob = 0.0;
        } else {
            self.accu_prob += local;
        }
        if self.accu_prob < ACCU_NO_DROP {
            return false;
        }
        if self.accu_prob >= ACCU_FORCE_DROP {
            return true;
        }
        if self.rng.gen::<f64>() < local {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }
}

impl Qdisc for Pie {
    fn enqueue(&mut self, mut pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        self.advance(now);
        let s = self.in_service;
        let reason = if self.c.limit_packets.is_some_and(|l| self.q.len() as u64 + s.packets >= l)
            || self.c.limit_bytes.is_some_and(|l| self.bytes + s.bytes + pkt.wire_bytes as u64 > l)
        {
            self.stats.overflow_drops += 1;
            DropReason::Overflow
        } else if !self.drop_early(pkt.wire_bytes) {
            pkt.enqueue_ns = now;
            self.bytes += pkt.wire_bytes as u64;
            self.q.push_back(pkt);
            return Ok(());
        } else if self.c.ecn && self.prob <= MARK_ECN_MAX_P && mark_ce(&mut pkt) {
            self.stats.marks += 1;
            pkt.enqueue_ns = now;
            self.bytes += pkt.wire_bytes as u64;
            self.q.push_back(pkt);
            return Ok(());
        } else {
            self.stats.early_drops += 1;
            DropReason::Aqm
        };
        self.accu_prob = 0.0;
        Err((pkt, reason))
    }

    fn dequeue(&mut self, now: TimeNs, _dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        self.advance(now);
        let p = self.q.pop_front()?;
        self.bytes -= p.wire_bytes as u64;
        self.qdelay_ns = if self.bytes == 0 { 0 } else { now.saturating_sub(p.enqueue_ns) };
        let dtime = self.dq_tstamp.map_or(0, |t| now - t);
        self.dq_tstamp = Some(now);
        self.burst_left_ns = self.burst_left_ns.saturating_sub(dtime);
        Some(p)
    }

    super::fifo::counted_backlog!(|q| q.q.len());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn pie(json: &str) -> Pie {
        Pie::new(&serde_json::from_str(json).unwrap(), 3)
    }

    #[test]
    fn probability_update_follows_the_auto_tuning_table() {
        // RFC 8033 section 4.2: delta = (alpha (qdelay - target) + beta (qdelay -
        // qdelay_old)) / s, s from the table by the current p.
        let table = [(0.5, 1.0), (0.05, 2.0), (0.005, 8.0), (0.0005, 32.0), (0.00005, 128.0), (0.000005, 512.0), (0.0000005, 2048.0)];
        for (p0, scale) in table {
            let mut q = pie("{}");
            q.bytes = 100_000; // backlog present, irrelevant otherwise
            q.prob = p0;
            q.qdelay_ns = 20_000_000;
            q.qdelay_old_ns = 18_000_000;
            q.calculate_probability();
            let want = (0.125 * (0.020 - 0.015) + 1.25 * (0.020 - 0.018)) / scale;
            assert!((q.prob - p0 - want).abs() < 1e-12, "p0 {p0}: delta {} want {want}", q.prob - p0);
            assert_eq!(q.qdelay_old_ns, 20_000_000);
        }
    }

    #[test]
    fn steps_capped_at_two_percent_above_ten_percent_and_boosted_over_250ms() {
        let mut q = pie("{}");
        q.bytes = 100_000;
        q.prob = 0.3;
        q.qdelay_ns = 200_000_000;
        q.qdelay_old_ns = 0;
        q.calculate_probability();
        assert!((q.prob - 0.32).abs() < 1e-12, "{}", q.prob);
        q.qdelay_ns = 300_000_000; // > 250 ms: +2 % on top of the capped step
        q.calculate_probability();
        assert!((q.prob - 0.36).abs() < 1e-12, "{}", q.prob);
        // Empty queue for two updates: 1/64 decay after the (negative) step.
        let mut q = pie("{}");
        q.prob = 0.5;
        q.qdelay_ns = 0;
        q.qdelay_old_ns = 0;
        q.calculate_probability();
        let after_step = 0.5 - 0.125 * 0.015;
        assert!((q.prob - (after_step - after_step / 64.0)).abs() < 1e-12, "{}", q.prob);
    }

    #[test]
    fn derandomised_drops_need_accumulated_probability() {
        let mut q = pie(r#"{"burst_ns":0}"#);
        q.bytes = 10 * 1500;
        q.qdelay_ns = 20_000_000;
        q.prob = 0.1;
        // accu 0.1 .. 0.8: no drop possible
        for _ in 0..8 {
            assert!(!q.drop_early(1500));
        }
        // from 0.85 on a drop happens with probability p; at 8.5 it is forced
        q.prob = 1.0;
        q.accu_prob = 7.9;
        assert!(q.drop_early(1500), "forced at 8.5");
        q.accu_prob = 0.5;
        assert!(q.drop_early(1500), "p = 1 after 0.85");
        assert_eq!(q.accu_prob, 0.0, "a random drop resets the accumulator");
    }

    #[test]
    fn burst_allowance_then_early_drops_keep_the_delay_near_target() {
        // Open loop: 12 Mbit/s of arrivals into a 10 Mbit/s queue. No early drop
        // during the first 150 ms; afterwards PIE drops ~1/6 of the arrivals and
        // holds the queueing delay around 15 ms.
        let mut q = pie(r#"{"limit_packets":100000}"#);
        let mut dropped = vec![];
        let (mut now, mut next_arr, mut next_dep) = (0u64, 0u64, 0u64);
        let mut first_drop = None;
        let mut delays = vec![];
        let mut arrivals = 0u64;
        while now < 20_000_000_000 {
            if next_arr <= next_dep {
                now = next_arr;
                arrivals += 1;
                if q.enqueue(Packet::new(0, Kind::Data, 1500), now).is_err() && first_drop.is_none() {
                    first_drop = Some(now);
                }
                next_arr += 1_000_000; // 1500 B / 1 ms = 12 Mbit/s
            } else {
                now = next_dep;
                if let Some(p) = q.dequeue(now, &mut dropped) {
                    if now > 5_000_000_000 {
                        delays.push(now - p.enqueue_ns);
                    }
                }
                next_dep += 1_200_000; // 10 Mbit/s
            }
        }
        assert!(first_drop.unwrap() >= 150_000_000);
        let mean = delays.iter().sum::<u64>() as f64 / delays.len() as f64 / 1e6;
        assert!((7.5..30.0).contains(&mean), "mean delay {mean} ms");
        let drop_frac = q.stats.early_drops as f64 / arrivals as f64;
        assert!((0.12..0.22).contains(&drop_frac), "{drop_frac}");
    }
}
