//! RED, Random Early Detection.
//!
//! On every arrival the average queue is updated, avg <- (1 - w_q) avg + w_q q
//! (after an idle period of length t: avg <- (1 - w_q)^m avg with m = t / s,
//! s = transmission time of a typical packet). Below min_th nothing happens;
//! between min_th and max_th the arrival is marked (ECN-capable, if `ecn`) or
//! dropped with probability p_a = p_b / (1 - count p_b), where
//! p_b = max_p (avg - min_th) / (max_th - min_th) and count = arrivals since
//! the last mark (uniformly spaced marks); above max_th every arrival is
//! marked/dropped, except in gentle mode, where p_b rises linearly from max_p
//! to 1 between max_th and 2 max_th. In byte mode avg and the thresholds are
//! in bytes and p_b is scaled by packet size / mean packet size.
//!
//! Sources: S. Floyd, V. Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1(4), 1993 (section 4 algorithm,
//! w_q = 0.002, max_p = 1/50, idle-time correction, byte mode); RFC 2309;
//! S. Floyd, "Recommendation on using the gentle_ variant of RED" (2000);
//! Linux include/net/red.h and net/sched/sch_red.c (hard limit checked after
//! the RED decision; over max_th an ECN-capable packet is marked, not
//! dropped, unless `harddrop`; tc-red defaults max = limit/4, min = max/3,
//! probability 0.02). Linux has no gentle mode; `gentle` defaults to off.
//!
//! Constants: none beyond the configuration (config.rs `RedConfig`).

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::fifo::Fifo;
use super::{mark_ce, DropReason, Qdisc};

/// Where RED is specified.
pub const SOURCE: &str = "RED: Floyd & Jacobson 1993; RFC 2309; Linux sch_red";

super::limited_queue_params! {
    /// RED's parameters (defaults = tc-red's).
    pub struct RedConfig {
        /// Lower threshold on the average queue, packets (bytes in byte mode); unset = max_th / 3 (tc-red).
        min_th: Option<f64> = None, Range::at_least(0.0);
        /// Upper threshold on the average queue, packets (bytes in byte mode); unset = limit / 4 (tc-red).
        max_th: Option<f64> = None, Range::above(0.0);
        /// Marking probability at max_th (tc-red 0.02 = Floyd's 1/50).
        max_p: f64 = 0.02, Range::open_closed(0.0, 1.0);
        /// EWMA weight of the average queue (Floyd & Jacobson: 0.002).
        w_q: f64 = 0.002, Range::open_closed(0.0, 1.0);
        /// Gentle RED (Floyd 2000): p ramps from max_p to 1 between max_th and 2 max_th (Linux has none: off).
        gentle: bool = false, Range::Any;
        /// Average and thresholds in bytes, probability scaled by size / mean_packet.
        byte_mode: bool = false, Range::Any;
        /// Typical packet size for byte mode and the idle-time correction (tc-red `avpkt`).
        mean_packet_bytes: u64 = 1500, Range::above(0.0);
        /// Mark ECN-capable packets instead of dropping them (tc-red `ecn`: off).
        ecn: bool = false, Range::Any;
    }
    check = check_red;
}

fn check_red(c: &RedConfig) -> Result<(), crate::params::ParamError> {
    let (min, max) = thresholds(c);
    if !(min >= 0.0 && min.is_finite()) {
        return Err(crate::params::ParamError::new("min_th", format!("must be >= 0, got {min}")));
    }
    if !(max > min) {
        return Err(crate::params::ParamError::new("min_th", format!("must be smaller than max_th ({max}), got {min}")));
    }
    Ok(())
}
use crate::engine::TimeNs;
use crate::packet::Packet;
use crate::rng::{stream, stream_rng};

/// (min_th, max_th) in the mode's unit (packets, or bytes in byte mode), with
/// the tc-red defaults: max_th = limit / 4, min_th = max_th / 3.
pub fn thresholds(c: &RedConfig) -> (f64, f64) {
    let avpkt = c.mean_packet_bytes.max(1) as f64;
    let limit = match (c.byte_mode, c.limit_packets, c.limit_bytes) {
        (false, Some(p), _) => p as f64,
        (false, None, Some(b)) => b as f64 / avpkt,
        (true, _, Some(b)) => b as f64,
        (true, Some(p), None) => p as f64 * avpkt,
        (_, None, None) => 1000.0 * if c.byte_mode { avpkt } else { 1.0 },
    };
    let max = c.max_th.unwrap_or(limit / 4.0);
    let min = c.min_th.unwrap_or(max / 3.0);
    (min, max)
}

#[derive(Debug, Clone, Default)]
pub struct RedStats {
    pub early_drops: u64,
    pub forced: u64,
    pub marks: u64,
    pub overflow_drops: u64,
}

pub struct Red {
    c: RedConfig,
    min_th: f64,
    max_th: f64,
    /// Transmission time of a mean-sized packet at the link rate (idle correction).
    s_ns: f64,
    fifo: Fifo,
    pub avg: f64,
    /// Unmarked arrivals since the last mark/drop (0 below min_th).
    pub count: i64,
    idle_since: Option<TimeNs>,
    rng: Pcg64Mcg,
    pub stats: RedStats,
}

enum Verdict {
    Pass,
    Mark,
}

impl Red {
    pub fn new(c: &RedConfig, seed: u64, rate_bps: u64) -> Self {
        let (min_th, max_th) = thresholds(c);
        Red {
            c: c.clone(),
            min_th,
            max_th,
            s_ns: c.mean_packet_bytes as f64 * 8e9 / rate_bps.max(1) as f64,
            fifo: Fifo::new(c.limit_packets, c.limit_bytes),
            avg: 0.0,
            count: 0,
            idle_since: Some(0),
            rng: stream_rng(seed, stream::QDISC),
            stats: RedStats::default(),
        }
    }

    fn current(&self) -> f64 {
        if self.c.byte_mode {
            self.fifo.bytes() as f64
        } else {
            self.fifo.len() as f64
        }
    }

    /// Update avg for an arrival at `now` and decide (Floyd & Jacobson section 4).
    fn decide(&mut self, size: u32, now: TimeNs) -> Verdict {
        if let Some(t) = self.idle_since.take() {
            let m = (now.saturating_sub(t)) as f64 / self.s_ns;
            self.avg *= (1.0 - self.c.w_q).powf(m);
        }
        self.avg = (1.0 - self.c.w_q) * self.avg + self.c.w_q * self.current();
        let (min, max) = (self.min_th, self.max_th);
        let avg = self.avg;
        if avg < min {
            self.count = 0;
            return Verdict::Pass;
        }
        let pb = if avg < max {
            self.c.max_p * (avg - min) / (max - min)
        } else if self.c.gentle && avg < 2.0 * max {
            self.c.max_p + (1.0 - self.c.max_p) * (avg - max) / max
        } else {
            self.count = 0;
            self.stats.forced += 1;
            return Verdict::Mark;
        };
        let pb = if self.c.byte_mode { (pb * size as f64 / self.c.mean_packet_bytes as f64).min(1.0) } else { pb };
        // count = unmarked arrivals since the last mark: gaps between marks are
        // then uniform on 1 .. 1/p_b (Floyd & Jacobson section 7; Linux red.h).
        let denom = 1.0 - self.count as f64 * pb;
        let pa = if denom <= 0.0 { 1.0 } else { pb / denom };
        if self.rng.gen::<f64>() < pa {
            self.count = 0;
            return Verdict::Mark;
        }
        self.count += 1;
        Verdict::Pass
    }

    /// Mark probability p_b at a given average (for tests and docs).
    pub fn pb_at(&self, avg: f64) -> f64 {
        let (min, max) = (self.min_th, self.max_th);
        if avg < min {
            0.0
        } else if avg < max {
            self.c.max_p * (avg - min) / (max - min)
        } else if self.c.gentle && avg < 2.0 * max {
            self.c.max_p + (1.0 - self.c.max_p) * (avg - max) / max
        } else {
            1.0
        }
    }
}

impl Qdisc for Red {
    fn enqueue(&mut self, mut pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        if let Verdict::Mark = self.decide(pkt.wire_bytes, now) {
            if self.c.ecn && mark_ce(&mut pkt) {
                self.stats.marks += 1;
            } else {
                self.stats.early_drops += 1;
                if self.fifo.is_empty() {
                    self.idle_since = Some(now); // a dropped arrival does not end the idle period
                }
                return Err((pkt, DropReason::Aqm));
            }
        }
        if self.fifo.would_overflow(pkt.wire_bytes) {
            self.stats.overflow_drops += 1;
            return Err((pkt, DropReason::Overflow));
        }
        self.fifo.enqueue_at(pkt, now)
    }

    fn dequeue(&mut self, now: TimeNs, _dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        let p = self.fifo.pop()?;
        if self.fifo.is_empty() {
            self.idle_since = Some(now);
        }
        Some(p)
    }

    super::fifo::fifo_backlog!(fifo);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, Kind};

    fn red(json: &str) -> Red {
        Red::new(&serde_json::from_str(json).unwrap(), 5, 10_000_000)
    }

    #[test]
    fn defaults_follow_tc_red_and_the_probability_ramp() {
        let r = red(r#"{"limit_packets":120}"#);
        assert_eq!((r.min_th, r.max_th), (10.0, 30.0));
        assert_eq!(r.pb_at(5.0), 0.0);
        assert!((r.pb_at(20.0) - 0.01).abs() < 1e-12);
        assert_eq!(r.pb_at(30.0), 1.0, "non-gentle: everything above max_th");
        let g = red(r#"{"limit_packets":120,"gentle":true}"#);
        assert!((g.pb_at(45.0) - (0.02 + 0.98 * 0.5)).abs() < 1e-12);
        assert_eq!(g.pb_at(60.0), 1.0);
    }

    #[test]
    fn ewma_average_and_idle_decay() {
        let mut r = red(r#"{"limit_packets":1000,"w_q":0.5}"#);
        r.idle_since = None;
        for _ in 0..4 {
            r.enqueue(Packet::new(0, Kind::Data, 1500), 0).unwrap();
        }
        // avg: 0, 0.5, 1.25, 2.125 (q before each arrival: 0, 1, 2, 3)
        assert!((r.avg - 2.125).abs() < 1e-12, "{}", r.avg);
        let mut d = vec![];
        while r.dequeue(1_000_000, &mut d).is_some() {}
        // Idle 12 ms at 10 Mbit/s = 10 packet times: avg <- avg * 0.5^10, then one EWMA step with q = 0.
        r.enqueue(Packet::new(0, Kind::Data, 1500), 13_000_000).unwrap();
        assert!((r.avg - 2.125 * 0.5f64.powi(10) * 0.5).abs() < 1e-9, "{}", r.avg);
    }

    #[test]
    fn marks_are_uniformly_spaced_at_the_rfc_rate() {
        // Hold avg at the middle of [min, max] (w_q = 1 makes avg = q): p_b = max_p / 2
        // = 0.05. Floyd & Jacobson section 7: the inter-mark count is uniform on
        // {1 .. 1/p_b}, mean (1/p_b + 1) / 2 = 10.5, never above 20.
        let mut r = red(r#"{"limit_packets":1000,"min_th":10,"max_th":30,"max_p":0.1,"w_q":1.0,"ecn":true}"#);
        r.idle_since = None;
        for _ in 0..20 {
            let mut p = Packet::new(0, Kind::Data, 1500);
            p.ecn = Ecn::Ect0;
            r.enqueue(p, 0).unwrap();
        }
        let mut d = vec![];
        let mut gaps = vec![];
        let mut since = 0u64;
        for _ in 0..200_000 {
            let mut p = Packet::new(0, Kind::Data, 1500);
            p.ecn = Ecn::Ect0;
            r.enqueue(p, 0).unwrap(); // q = 20 -> avg = 20 -> p_b = 0.05
            since += 1;
            if r.fifo.back().unwrap().ecn == Ecn::Ce {
                gaps.push(since);
                since = 0;
            }
            r.dequeue(0, &mut d);
        }
        let mean = gaps.iter().sum::<u64>() as f64 / gaps.len() as f64;
        assert!((mean - 10.5).abs() < 0.2, "mean gap {mean}");
        assert!(gaps.iter().all(|&g| g <= 20), "max gap {}", gaps.iter().max().unwrap());
        assert_eq!(r.stats.early_drops, 0);
    }

    #[test]
    fn not_ect_packets_are_dropped_and_the_hard_limit_is_overflow() {
        let mut r = red(r#"{"limit_packets":5,"min_th":1,"max_th":2,"w_q":1.0,"ecn":true}"#);
        r.idle_since = None;
        let mut reasons = vec![];
        for i in 0..10 {
            let mut p = Packet::new(0, Kind::Data, 1500);
            if i % 2 == 0 {
                p.ecn = Ecn::Ect1;
            }
            if let Err((_, why)) = r.enqueue(p, 0) {
                reasons.push(why);
            }
        }
        // q >= 2 from the third arrival on: ECT packets marked, Not-ECT dropped;
        // once 5 are queued the ECT ones overflow.
        assert!(reasons.contains(&DropReason::Aqm));
        assert!(reasons.contains(&DropReason::Overflow));
        assert_eq!(r.len_packets(), 5);
        assert!(r.fifo.iter().skip(2).all(|p| p.ecn == Ecn::Ce));
    }

    #[test]
    fn average_decays_while_arrivals_are_dropped_into_an_empty_queue() {
        // Floyd & Jacobson: the idle period lasts while the queue is empty, so
        // dropped arrivals do not stop the (1 - w_q)^m decay; RED recovers.
        let mut r = red(r#"{"limit_packets":80,"min_th":5,"max_th":15}"#);
        r.idle_since = None;
        r.avg = 60.0;
        let mut now = 0;
        let mut admitted = false;
        for _ in 0..50 {
            now += 200_000_000; // one arrival every 200 ms (a flow in RTO backoff)
            if r.enqueue(Packet::new(0, Kind::Data, 1500), now).is_ok() {
                admitted = true;
                break;
            }
        }
        assert!(admitted, "avg {}", r.avg);
    }
}
