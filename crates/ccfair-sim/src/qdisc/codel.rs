//! CoDel, "Controlled Delay" active queue management.
//!
//! Each dequeued packet's sojourn time is compared with `target`. Once the
//! sojourn has stayed at or above target for a whole `interval` (and more than
//! one MTU is queued), CoDel enters the dropping state: it drops (or CE-marks)
//! the head packet and schedules the next drop at `drop_next + interval /
//! sqrt(count)`, `count` growing by one per drop (the control law). It leaves
//! the dropping state as soon as a packet's sojourn falls below target. On
//! re-entry soon after leaving (within 16 intervals) it resumes from the
//! previous drop rate (`count - lastcount`) instead of starting at 1.
//! All drops happen at dequeue; at enqueue only the hard limit applies.
//!
//! Sources: RFC 8289 (Nichols, Jacobson, McGregor, Iyengar 2018), sections
//! 3-5 and its pseudocode; Linux include/net/codel.h and codel_impl.h
//! (`codel_should_drop`, `codel_dequeue`: mtu check on the backlog after the
//! dequeue, count memory `delta = count - lastcount` if `now - drop_next <
//! 16 * interval`), net/sched/sch_codel.c (limit 1000 packets, ecn off).
//!
//! Constants: TARGET_NS = 5 ms, INTERVAL_NS = 100 ms (RFC 8289 section 4.3,
//! 4.4; defaults live in config.rs), REENTRY_INTERVALS = 16 (Linux).
//! As Linux, 1/sqrt(count) is not computed exactly: one Newton step per
//! change of count updates a Q0.16 estimate (`rec_inv_sqrt`), so the first
//! drops after entering or re-entering the dropping state are spaced
//! differently from RFC 8289's exact interval/sqrt(count) (docs/fidelity.md).
//!
//! The `CodelVars` state and `codel_dequeue` are shared with FQ-CoDel.

use crate::ring::Ring;

use super::{mark_ce, DropReason, Qdisc};
use crate::params::ParamError;

/// Where CoDel is specified (`ccfair list qdiscs`, docs/qdiscs.md).
pub const SOURCE: &str = "CoDel: RFC 8289; Linux sch_codel";

super::limited_queue_params! {
    /// CoDel's parameters (RFC 8289; defaults = RFC / Linux sch_codel).
    pub struct CodelConfig {
        /// Acceptable standing queue delay (RFC 8289 TARGET).
        target_ns: u64 = 5_000_000, Range::above(0.0);
        /// Window over which the delay must stay above target (RFC 8289 INTERVAL).
        interval_ns: u64 = 100_000_000, Range::above(0.0);
        /// No drop while the backlog is at most this (Linux: the device MTU).
        mtu_bytes: u64 = 1514, Range::above(0.0);
        /// Mark ECN-capable packets instead of dropping them (Linux sch_codel: off).
        ecn: bool = false, Range::Any;
    }
    check = check_target_below_interval;
}

/// CoDel (and FQ-CoDel): target < interval.
pub fn target_below_interval(target_ns: u64, interval_ns: u64) -> Result<(), ParamError> {
    if target_ns >= interval_ns {
        return Err(ParamError::new(
            "target",
            format!(
                "must be smaller than interval ({}), got {}",
                crate::params::format_value(interval_ns as f64, "ns"),
                crate::params::format_value(target_ns as f64, "ns")
            ),
        ));
    }
    Ok(())
}

fn check_target_below_interval(c: &CodelConfig) -> Result<(), ParamError> {
    target_below_interval(c.target_ns, c.interval_ns)
}
use crate::engine::TimeNs;
use crate::packet::Packet;

/// Re-entry within this many intervals of the last drop keeps the drop rate (Linux codel_impl.h).
pub const REENTRY_INTERVALS: u64 = 16;

/// Parameters of the control loop.
#[derive(Debug, Clone, Copy)]
pub struct CodelParams {
    pub target_ns: u64,
    pub interval_ns: u64,
    pub mtu_bytes: u64,
    pub ecn: bool,
}

/// Per-queue state (RFC 8289 section 5, Linux `struct codel_vars`).
#[derive(Debug, Clone, Default)]
pub struct CodelVars {
    /// Drops (or marks) since entering the dropping state.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// When the sojourn will have been above target for an interval (None = below target).
    pub first_above_time: Option<TimeNs>,
    /// Time of the next drop in the dropping state.
    pub drop_next: TimeNs,
    /// Sojourn time of the last dequeued packet.
    pub ldelay_ns: u64,
    /// 1/sqrt(count) in Q0.16 fixed point, kept up to date by one Newton step
    /// per change of `count` (Linux `rec_inv_sqrt`). 0 = not yet set (= 1.0).
    pub rec_inv_sqrt: u16,
}

/// Counters (Linux `struct codel_stats`).
#[derive(Debug, Clone, Default)]
pub struct CodelStats {
    pub drops: u64,
    pub marks: u64,
}

/// The queue CoDel controls: its head and its backlog after a dequeue.
pub trait CodelQueue {
    fn pop_head(&mut self) -> Option<Packet>;
    /// Backlog (bytes) compared with the MTU in `should_drop`.
    fn backlog_bytes(&self) -> u64;
}

/// 1.0 in `rec_inv_sqrt`'s Q0.16 format (Linux `~0U >> REC_INV_SQRT_SHIFT`).
pub const REC_INV_SQRT_ONE: u16 = u16::MAX;

/// One Newton-Raphson step of y <- y (3 - count y^2) / 2 towards 1/sqrt(count),
/// in Linux's fixed point (include/net/codel_impl.h `codel_Newton_step`:
/// y as Q0.32, the product scaled down by 4 before the final multiply).
pub fn newton_step(v: &mut CodelVars) {
    let invsqrt = (v.rec_inv_sqrt as u64) << 16; // Q0.32
    let invsqrt2 = (invsqrt * invsqrt) >> 32; // y^2, Q0.32
    let mut val = (3u64 << 32).wrapping_sub(v.count as u64 * invsqrt2);
    val >>= 2; // avoid overflow in the next multiply
    val = (val * invsqrt) >> (32 - 2 + 1);
    v.rec_inv_sqrt = (val >> 16) as u16;
}

/// `t + interval * rec_inv_sqrt` (RFC 8289 section 5.4's `t + interval /
/// sqrt(count)`, computed as Linux `codel_control_law` does with the Newton
/// estimate of 1/sqrt(count) and `reciprocal_scale`).
pub fn control_law(t: TimeNs, interval_ns: u64, rec_inv_sqrt: u16) -> TimeNs {
    t + ((interval_ns * ((rec_inv_sqrt as u64) << 16)) >> 32)
}

fn should_drop<Q: CodelQueue>(q: &Q, p: Option<&Packet>, par: &CodelParams, v: &mut CodelVars, now: TimeNs) -> bool {
    let Some(p) = p else {
        v.first_above_time = None;
        return false;
    };
    v.ldelay_ns = now.saturating_sub(p.enqueue_ns);
    if v.ldelay_ns < par.target_ns || q.backlog_bytes() <= par.mtu_bytes {
        // Went (or stayed) below target: stay below for at least an interval.
        v.first_above_time = None;
        return false;
    }
    match v.first_above_time {
        None => {
            v.first_above_time = Some(now + par.interval_ns);
            false
        }
        Some(t) => now > t,
    }
}

/// One CoDel dequeue (RFC 8289 section 5.5, Linux `codel_dequeue`). Drops go
/// to `dropped` with reason `Aqm`.
pub fn codel_dequeue<Q: CodelQueue>(
    q: &mut Q,
    par: &CodelParams,
    v: &mut CodelVars,
    st: &mut CodelStats,
    now: TimeNs,
    dropped: &mut Vec<(Packet, DropReason)>,
) -> Option<Packet> {
    let mut p = q.pop_head();
    if p.is_none() {
        v.dropping = false;
        return None;
    }
    let mut drop = should_drop(q, p.as_ref(), par, v, now);
    if v.dropping {
        if !drop {
            v.dropping = false; // sojourn below target: leave the dropping state
        } else if now >= v.drop_next {
            // Possibly several drops if the next drop time has passed.
            while v.dropping && now >= v.drop_next {
                v.count += 1;
                newton_step(v);
                let mut pkt = p.take().expect("dropping with a packet");
                if par.ecn && mark_ce(&mut pkt) {
                    st.marks += 1;
                    v.drop_next = control_law(v.drop_next, par.interval_ns, v.rec_inv_sqrt);
                    return Some(pkt);
                }
                st.drops += 1;
                dropped.push((pkt, DropReason::Aqm));
                p = q.pop_head();
                if !should_drop(q, p.as_ref(), par, v, now) {
                    v.dropping = false;
                } else {
                    v.drop_next = control_law(v.drop_next, par.interval_ns, v.rec_inv_sqrt);
                }
            }
        }
    } else if drop {
        let mut pkt = p.take().expect("drop decision on a packet");
        if par.ecn && mark_ce(&mut pkt) {
            st.marks += 1;
            p = Some(pkt);
        } else {
            st.drops += 1;
            dropped.push((pkt, DropReason::Aqm));
            p = q.pop_head();
            drop = should_drop(q, p.as_ref(), par, v, now);
            let _ = drop; // Linux re-evaluates (updating first_above_time) but enters dropping regardless
        }
        v.dropping = true;
        let delta = v.count.wrapping_sub(v.lastcount);
        if delta > 1 && now.saturating_sub(v.drop_next) < REENTRY_INTERVALS * par.interval_ns {
            // Linux keeps the previous 1/sqrt estimate and takes one Newton
            // step towards 1/sqrt(delta) ("next Newton steps will correct it
            // quadratically"), so the first drops after re-entry come faster
            // than interval/sqrt(delta).
            v.count = delta;
            newton_step(v);
        } else {
            v.count = 1;
            v.rec_inv_sqrt = REC_INV_SQRT_ONE;
        }
        v.lastcount = v.count;
        v.drop_next = control_law(now, par.interval_ns, v.rec_inv_sqrt);
    }
    p
}

/// Single-queue CoDel (Linux sch_codel).
pub struct Codel {
    par: CodelParams,
    limit_packets: Option<u64>,
    limit_bytes: Option<u64>,
    in_service: super::InService,
    fifo: Fifo,
    vars: CodelVars,
    pub stats: CodelStats,
}

struct Fifo {
    q: Ring<Packet>,
    bytes: u64,
}

impl CodelQueue for Fifo {
    fn pop_head(&mut self) -> Option<Packet> {
        let p = self.q.pop_front()?;
        self.bytes -= p.wire_bytes as u64;
        Some(p)
    }
    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }
}

impl Codel {
    pub fn new(c: &CodelConfig) -> Self {
        Codel {
            par: CodelParams { target_ns: c.target_ns, interval_ns: c.interval_ns, mtu_bytes: c.mtu_bytes, ecn: c.ecn },
            limit_packets: c.limit_packets,
            limit_bytes: c.limit_bytes,
            in_service: super::InService::default(),
            fifo: Fifo { q: Ring::with_capacity(256), bytes: 0 },
            vars: CodelVars::default(),
            stats: CodelStats::default(),
        }
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, mut pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        let s = self.in_service;
        if self.limit_packets.is_some_and(|l| self.fifo.q.len() as u64 + s.packets >= l)
            || self.limit_bytes.is_some_and(|l| self.fifo.bytes + s.bytes + pkt.wire_bytes as u64 > l)
        {
            return Err((pkt, DropReason::Overflow));
        }
        pkt.enqueue_ns = now;
        self.fifo.bytes += pkt.wire_bytes as u64;
        self.fifo.q.push_back(pkt);
        Ok(())
    }

    fn dequeue(&mut self, now: TimeNs, dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        codel_dequeue(&mut self.fifo, &self.par, &mut self.vars, &mut self.stats, now, dropped)
    }

    super::fifo::counted_backlog!(|q| q.fifo.q.len(), q.fifo.bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, Kind};

    fn cfg(ecn: bool) -> CodelConfig {
        serde_json::from_str(&format!(r#"{{"limit_packets":100000,"ecn":{ecn}}}"#)).unwrap()
    }

    /// A standing queue: 1500-byte packets arrive and leave at the same rate
    /// (one per 0.1 ms) with 1000 packets (100 ms) always queued, so every
    /// sojourn is far above target. Returns the times of CoDel's drops.
    fn standing_queue_drop_times(ecn: bool, until_ns: u64) -> (Vec<u64>, Codel) {
        let mut q = Codel::new(&cfg(ecn));
        let step = 100_000;
        let mut now = 0;
        let mut e = Ecn::NotEct;
        if ecn {
            e = Ecn::Ect0;
        }
        for _ in 0..1000 {
            let mut p = Packet::new(0, Kind::Data, 1500);
            p.ecn = e;
            q.enqueue(p, now).unwrap();
        }
        let mut drops = vec![];
        let mut dropped = vec![];
        while now < until_ns {
            now += step;
            let mut p = Packet::new(0, Kind::Data, 1500);
            p.ecn = e;
            q.enqueue(p, now).unwrap();
            let out = q.dequeue(now, &mut dropped).unwrap();
            if out.ecn == Ecn::Ce {
                drops.push(now);
            }
            for _ in dropped.drain(..) {
                drops.push(now);
                // keep the backlog standing: replace the dropped packet
                q.enqueue(Packet::new(0, Kind::Data, 1500), now).unwrap();
            }
        }
        (drops, q)
    }

    #[test]
    fn first_drop_after_one_interval_above_target_then_interval_over_sqrt_count() {
        // RFC 8289 section 5.4: the n-th gap between drops is interval/sqrt(n).
        // Linux (and this file) estimates 1/sqrt(n) with one Newton step per
        // drop from the previous estimate: y1 = 1, y2 = 1 (3 - 2) / 2 = 0.5,
        // y3 = 0.5 (3 - 3/4) / 2 = 0.5625, then converging quadratically.
        let (drops, q) = standing_queue_drop_times(false, 3_000_000_000);
        // The initial backlog was enqueued at 0: the packet dequeued at 5 ms is the
        // first with sojourn >= target, so first_above_time = 105 ms and the first
        // drop happens at the first dequeue strictly after it.
        assert_eq!(drops[0], 105_100_000);
        assert!(drops.len() > 20, "{}", drops.len());
        let step = 100_000.0 + 1.0; // dequeues every 0.1 ms: a drop lands up to one step late
        let gap = |n: usize| (drops[n] - drops[n - 1]) as f64;
        assert!((gap(1) - 100e6 * 65535.0 / 65536.0).abs() <= step, "{}", gap(1));
        assert!((gap(2) - 50e6).abs() <= step, "{}", gap(2));
        assert!((gap(3) - 56.25e6).abs() <= step, "{}", gap(3));
        for n in 10..drops.len() {
            let want = 100e6 / (n as f64).sqrt();
            assert!((gap(n) - want).abs() <= 0.01 * want + step, "drop {n}: gap {} want {want}", gap(n));
        }
        assert_eq!(q.stats.drops as usize, drops.len());
        assert_eq!(q.vars.count as usize, drops.len());
    }

    #[test]
    fn newton_step_matches_linux_fixed_point() {
        // From 1.0 the Q0.16 estimates for count 2, 3, 4 are 0.5, 0.5625,
        // 0.4878 (hand-computed y (3 - n y^2) / 2), and after 100 steps the
        // estimate is within 0.1 % of 1/sqrt(100).
        let mut v = CodelVars { count: 1, rec_inv_sqrt: REC_INV_SQRT_ONE, ..Default::default() };
        let mut ys = vec![];
        for c in 2..=100 {
            v.count = c;
            newton_step(&mut v);
            ys.push(v.rec_inv_sqrt as f64 / 65536.0);
        }
        assert!((ys[0] - 0.5).abs() < 1e-4, "{}", ys[0]);
        assert!((ys[1] - 0.5625).abs() < 1e-4, "{}", ys[1]);
        assert!((ys[2] - 0.4878).abs() < 1e-3, "{}", ys[2]);
        assert!((ys[98] - 0.1).abs() < 1e-4, "{}", ys[98]);
    }

    #[test]
    fn ecn_capable_packets_are_marked_on_the_same_schedule() {
        let (drops, _) = standing_queue_drop_times(false, 2_000_000_000);
        let (marks, q) = standing_queue_drop_times(true, 2_000_000_000);
        assert_eq!(drops, marks);
        assert_eq!(q.stats.drops, 0);
        assert_eq!(q.stats.marks as usize, marks.len());
    }

    #[test]
    fn no_drop_below_target_or_with_at_most_one_mtu_queued() {
        // Sojourn below target: never drop.
        let mut q = Codel::new(&cfg(false));
        let mut dropped = vec![];
        let mut now = 0;
        for _ in 0..100_000 {
            q.enqueue(Packet::new(0, Kind::Data, 1500), now).unwrap();
            q.enqueue(Packet::new(0, Kind::Data, 1500), now).unwrap();
            now += 4_000_000; // 4 ms < 5 ms target
            q.dequeue(now, &mut dropped).unwrap();
            q.dequeue(now, &mut dropped).unwrap();
        }
        assert!(dropped.is_empty());
        // One packet at a time with huge sojourn: backlog after dequeue is 0 <= mtu.
        for _ in 0..1000 {
            q.enqueue(Packet::new(0, Kind::Data, 1500), now).unwrap();
            now += 1_000_000_000;
            q.dequeue(now, &mut dropped).unwrap();
        }
        assert!(dropped.is_empty());
    }

    #[test]
    fn reentry_soon_after_leaving_resumes_the_drop_rate() {
        // Linux codel_dequeue: delta = count - lastcount; if > 1 and the last
        // drop_next is within 16 intervals, count restarts at delta.
        let par = CodelParams { target_ns: 5_000_000, interval_ns: 100_000_000, mtu_bytes: 1514, ecn: false };
        // rec_inv_sqrt = 1/sqrt(10) in Q0.16, as after the tenth drop.
        let mut v = CodelVars { count: 10, lastcount: 2, drop_next: 1_000_000_000, rec_inv_sqrt: 20724, ..Default::default() };
        v.first_above_time = Some(1_000_000_000);
        let mut st = CodelStats::default();
        let mut f = Fifo { q: Ring::new(), bytes: 0 };
        for _ in 0..5 {
            let p = Packet::new(0, Kind::Data, 1500);
            f.bytes += 1500;
            f.q.push_back(p);
        }
        let mut dropped = vec![];
        let now = 1_500_000_000;
        codel_dequeue(&mut f, &par, &mut v, &mut st, now, &mut dropped);
        assert_eq!(dropped.len(), 1);
        assert!(v.dropping);
        assert_eq!(v.count, 8);
        // One Newton step from 1/sqrt(10) towards 1/sqrt(8): 0.3162 (3 - 0.8) / 2
        // = 0.3479, so the next drop comes after 34.8 ms, sooner than
        // interval/sqrt(8) = 35.4 ms (Linux: "not very precise").
        let y = v.rec_inv_sqrt as f64 / 65536.0;
        assert!((y - 0.3479).abs() < 2e-4, "{y}");
        assert_eq!(v.drop_next, control_law(now, par.interval_ns, v.rec_inv_sqrt));
        assert!((v.drop_next - now) < 35_000_000 && (v.drop_next - now) > 34_700_000, "{}", v.drop_next - now);
        // Long after: restart at 1.
        let mut v2 = CodelVars { count: 10, lastcount: 2, drop_next: 0, first_above_time: Some(0), ..Default::default() };
        codel_dequeue(&mut f, &par, &mut v2, &mut st, 17 * 100_000_000, &mut dropped);
        assert_eq!(v2.count, 1);
    }

    #[test]
    fn hard_limit_drops_at_enqueue_as_overflow() {
        let c: CodelConfig = serde_json::from_str(r#"{"limit_packets":3}"#).unwrap();
        let mut q = Codel::new(&c);
        for _ in 0..3 {
            q.enqueue(Packet::new(0, Kind::Data, 1500), 0).unwrap();
        }
        assert_eq!(q.enqueue(Packet::new(0, Kind::Data, 1500), 0).unwrap_err().1, DropReason::Overflow);
    }
}
