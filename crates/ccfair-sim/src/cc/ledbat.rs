//! LEDBAT: Low Extra Delay Background Transport (a "scavenger" CCA).
//!
//! Algorithm (RFC 6817 section 2.4, as ns-3's `TcpLedbat` implements it):
//!   - every ACK yields a one-way delay sample (the ACK's TSval minus the
//!     TSecr it echoes: the receiver's clock when it acknowledged minus the
//!     sender's clock when it sent the segment);
//!   - current_delay = min of the last `CURRENT_FILTER` samples (noise filter);
//!     base_delay = min of `BASE_HISTORY` per-minute minima;
//!   - queuing_delay = current_delay - base_delay;
//!     off_target = (TARGET - queuing_delay) / TARGET;
//!   - congestion avoidance: cwnd += GAIN x off_target x bytes_newly_acked x MSS / cwnd
//!     (cwnd in bytes): grows like Reno at zero queueing delay, holds at the
//!     target, shrinks above it; cwnd <= flightsize + ALLOWED_INCREASE x MSS;
//!     cwnd >= MIN_CWND x MSS;
//!   - loss: cwnd = max(cwnd / 2, MIN_CWND) (at most once per RTT: the
//!     sender's recovery episode);
//!   - slow start (ns-3 `DoSs` = on, the default): NewReno slow start while
//!     cwnd <= ssthresh; initial ssthresh is infinite, so LEDBAT slow-starts
//!     until the first loss; afterwards ssthresh is kept just below cwnd.
//!
//! Sources: RFC 6817 (Shalunov et al., 2012); ns-3 src/internet/model/tcp-ledbat.cc
//! (target 100 ms, gain 1, base history 10, noise filter 4, min cwnd 2 segments).
//! RFC 6817 sets TARGET <= 100 ms; 25 ms, the value of the early LEDBAT
//! drafts, is available as [`TARGET_25MS_NS`] through [`Ledbat::with_target`].
//! Written from those descriptions, not copied.
//!
//! One-way delay: the simulator's hosts share one clock, so TSval - TSecr is
//! the exact forward one-way delay of the segment that triggered the ACK plus
//! the receiver's delayed-ACK wait (as in ns-3, which also takes TSval - TSecr):
//! its receiver echoes the newest segment's TSval (`echoes_newest_tsval`), as
//! RFC 6817's receiver reports each packet's delay; Linux's would echo the first
//! segment since its previous ACK (tcp/receiver.rs).
//! If an ACK carries no timestamps the RTT sample is used instead (a
//! round-trip measurement also sees reverse-path queueing; see docs/fidelity.md).
//! Clock skew and clock offset (RFC 6817 section 4.1) do not exist here.
//!
//! Simplifications: cwnd is kept in whole packets plus a byte remainder (ns-3
//! keeps bytes); the base-delay "minute" is 60 s of simulated time.

use super::{AckSample, CongestionControl, TcpCc};

/// Default target queueing delay, ns (ns-3 default; RFC 6817 maximum): 100 ms.
pub const TARGET_NS: u64 = 100_000_000;
/// The smaller target of the early LEDBAT drafts, ns: 25 ms.
pub const TARGET_25MS_NS: u64 = 25_000_000;
/// GAIN: cwnd change per RTT at zero queueing delay, packets (RFC: <= 1).
pub const GAIN: i64 = 1;
/// Number of per-minute base-delay minima kept (RFC BASE_HISTORY; ns-3: 10).
pub const BASE_HISTORY: usize = 10;
/// One base-delay history slot covers this long, ns (RFC: 1 minute).
pub const BASE_ROLLOVER_NS: u64 = 60_000_000_000;
/// Delay samples in the current-delay (noise) filter (RFC CURRENT_FILTER; ns-3: 4).
pub const CURRENT_FILTER: usize = 4;
/// Minimum cwnd, packets (RFC MIN_CWND = 2; ns-3 m_minCwnd = 2).
pub const MIN_CWND_PKTS: u32 = 2;
/// cwnd may exceed the flight size by at most this many packets (RFC ALLOWED_INCREASE = 1).
pub const ALLOWED_INCREASE_PKTS: u32 = 1;

/// LEDBAT state: delay filters and the cwnd byte remainder.
#[derive(Debug, Clone)]
pub struct Ledbat {
    target_ns: u64,
    /// Most recent delay samples (ring), ns.
    current: [u64; CURRENT_FILTER],
    n_current: usize,
    /// Per-minute minima, oldest first, ns.
    base: Vec<u64>,
    last_rollover_ns: u64,
    /// Fractional part of cwnd, bytes, in [0, mss).
    frac_bytes: i64,
    /// Whether delay samples came from timestamps (true) or RTTs (false).
    pub used_one_way_delay: bool,
}

impl Default for Ledbat {
    fn default() -> Self {
        Ledbat::new()
    }
}

impl Ledbat {
    pub fn new() -> Ledbat {
        Ledbat::with_target(TARGET_NS)
    }

    /// LEDBAT with another target queueing delay (e.g. [`TARGET_25MS_NS`]).
    pub fn with_target(target_ns: u64) -> Ledbat {
        Ledbat {
            target_ns,
            current: [0; CURRENT_FILTER],
            n_current: 0,
            base: Vec::with_capacity(BASE_HISTORY),
            last_rollover_ns: 0,
            frac_bytes: 0,
            used_one_way_delay: false,
        }
    }

    /// Add one delay sample to both filters (RFC `update_current_delay` / `update_base_delay`).
    pub fn add_delay_sample(&mut self, now_ns: u64, delay_ns: u64) {
        self.current[self.n_current % CURRENT_FILTER] = delay_ns;
        self.n_current += 1;
        match self.base.last_mut() {
            None => {
                self.base.push(delay_ns);
                self.last_rollover_ns = now_ns;
            }
            Some(last) if now_ns.saturating_sub(self.last_rollover_ns) < BASE_ROLLOVER_NS => {
                *last = (*last).min(delay_ns);
            }
            Some(_) => {
                self.last_rollover_ns = now_ns;
                if self.base.len() == BASE_HISTORY {
                    self.base.remove(0);
                }
                self.base.push(delay_ns);
            }
        }
    }

    /// Queueing delay estimate, ns (current - base, signed); None before any sample.
    pub fn queuing_delay_ns(&self) -> Option<i64> {
        let n = self.n_current.min(CURRENT_FILTER);
        let current = self.current[..n].iter().min()?;
        let base = self.base.iter().min()?;
        Some(*current as i64 - *base as i64)
    }

    /// RFC 6817 congestion avoidance for `acked` newly acknowledged packets.
    fn ledbat_cong_avoid(&mut self, tp: &mut TcpCc, acked: u32, queuing_delay_ns: i64) {
        let mss = tp.mss as i64;
        let target = self.target_ns as i64;
        let cwnd_bytes = (tp.cwnd as i64 * mss + self.frac_bytes).max(1);
        let bytes_acked = acked as i64 * mss;
        // GAIN x off_target x bytes_newly_acked x MSS / cwnd, off_target = (T - qd) / T.
        let num = GAIN as i128 * (target - queuing_delay_ns) as i128 * bytes_acked as i128 * mss as i128;
        let delta = (num / (target as i128 * cwnd_bytes as i128)) as i64;
        let mut new_bytes = cwnd_bytes + delta;
        // max_allowed_cwnd = flightsize + ALLOWED_INCREASE x MSS (flightsize before this ACK).
        let flight = (tp.in_flight + acked + ALLOWED_INCREASE_PKTS) as i64 * mss;
        new_bytes = new_bytes.min(flight.max(cwnd_bytes));
        new_bytes = new_bytes.max(MIN_CWND_PKTS as i64 * mss);
        tp.cwnd = ((new_bytes / mss) as u32).min(tp.cwnd_clamp);
        self.frac_bytes = new_bytes % mss;
        // ns-3: keep ssthresh below cwnd so slow start is not re-entered.
        if tp.cwnd <= tp.ssthresh {
            tp.ssthresh = tp.cwnd.saturating_sub(1).max(1);
        }
    }
}

impl CongestionControl for Ledbat {
    hooks!(pkts_acked);
    needs!(newest_tsval_echoed);

    fn name(&self) -> &'static str {
        "ledbat"
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        self.frac_bytes = 0;
        (tp.cwnd / 2).max(MIN_CWND_PKTS)
    }

    fn pkts_acked(&mut self, tp: &mut TcpCc, sample: &AckSample) {
        if tp.rcv_tsval_ns != 0 && tp.rcv_tsecr_ns != 0 && tp.rcv_tsval_ns >= tp.rcv_tsecr_ns {
            self.used_one_way_delay = true;
            self.add_delay_sample(tp.now_ns, tp.rcv_tsval_ns - tp.rcv_tsecr_ns);
        } else if sample.rtt_ns >= 0 {
            self.add_delay_sample(tp.now_ns, sample.rtt_ns as u64);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        // ns-3 TcpLedbat::IncreaseWindow: NewReno slow start while cwnd <= ssthresh.
        if tp.in_slow_start() {
            if tp.is_cwnd_limited {
                tp.slow_start(acked);
            }
            return;
        }
        match self.queuing_delay_ns() {
            Some(qd) => self.ledbat_cong_avoid(tp, acked, qd),
            // No valid delay yet: NewReno congestion avoidance (as ns-3).
            None => super::reno::reno_cong_avoid(tp, acked),
        }
    }
}

crate::declare_params! {
    /// LEDBAT's parameters.
    pub struct LedbatConfig {
        /// Target queueing delay (RFC 6817 TARGET; ns-3 default 100 ms, the RFC's maximum).
        target_ns: u64 = TARGET_NS, Range::above(0.0);
    }
}

impl super::Cca for Ledbat {
    type Params = LedbatConfig;
    const NAME: &'static str = "ledbat";
    const SOURCE: &'static str = "LEDBAT: RFC 6817; ns-3 tcp-ledbat.cc (target 100 ms, gain 1)";
    const VARIANTS: &'static [super::Variant] = &[super::Variant {
        name: "ledbat25",
        params: r#"{"target_ns": 25000000}"#,
        doc: "LEDBAT with a 25 ms target (early LEDBAT drafts); otherwise as ledbat",
        aliases: &["ledbat-25ms"],
    }];
    fn build(p: &LedbatConfig, _seed: u64) -> Box<dyn CongestionControl> {
        Box::new(Ledbat::with_target(p.target_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{ack_each, tp, tp_at};

    const OWD_NS: u64 = 25_000_000;

    /// LEDBAT in congestion avoidance with cwnd `cwnd` and the given queueing delay.
    fn at_delay(cwnd: u32, qd_ns: u64) -> (Ledbat, TcpCc) {
        let mut l = Ledbat::new();
        let mut t = tp();
        t.cwnd = cwnd;
        t.ssthresh = cwnd - 1;
        t.in_flight = cwnd;
        l.add_delay_sample(0, OWD_NS); // base delay
        for _ in 0..CURRENT_FILTER {
            l.add_delay_sample(1_000, OWD_NS + qd_ns);
        }
        (l, t)
    }

    /// cwnd in bytes (packets + remainder).
    fn bytes(l: &Ledbat, t: &TcpCc) -> i64 {
        t.cwnd as i64 * t.mss as i64 + l.frac_bytes
    }

    #[test]
    fn filters_give_current_minus_base_delay() {
        let mut l = Ledbat::new();
        l.add_delay_sample(0, 30_000_000);
        for d in [45_000_000, 41_000_000, 50_000_000, 47_000_000] {
            l.add_delay_sample(1, d);
        }
        // base = 30 ms (min ever); current = min of the last 4 = 41 ms.
        assert_eq!(l.queuing_delay_ns(), Some(11_000_000));
    }

    #[test]
    fn zero_queueing_delay_grows_one_packet_per_window_of_acks() {
        // off_target = 1, GAIN = 1: cwnd += MSS x MSS / cwnd per MSS acked,
        // i.e. +1 packet after a window of ACKs (Reno's rate).
        let (mut l, mut t) = at_delay(20, 0);
        t.in_flight = 40; // not flight-limited
        let before = bytes(&l, &t);
        ack_each(&mut l, &mut t, 20);
        let grown = bytes(&l, &t) - before;
        let mss = t.mss as i64;
        assert!((grown - mss).abs() <= mss / 20, "grew {grown} bytes, want ~{mss}");
    }

    #[test]
    fn change_is_proportional_to_off_target() {
        // qd = 25 ms of a 100 ms target: off_target = 0.75; qd = 75 ms: 0.25.
        let mss = 1448i64;
        let step = |qd| {
            let (mut l, mut t) = at_delay(100, qd);
            t.in_flight = 200;
            let b = bytes(&l, &t);
            l.cong_avoid(&mut t, 2);
            bytes(&l, &t) - b
        };
        let (d0, d25, d75) = (step(0), step(25_000_000), step(75_000_000));
        // RFC 6817: GAIN x off_target x bytes_acked x MSS / cwnd, cwnd = 100 MSS.
        assert_eq!(d0, 2 * mss * mss / (100 * mss));
        assert_eq!(d25, 3 * d0 / 4);
        assert_eq!(d75, d0 / 4);
    }

    #[test]
    fn sign_flips_at_the_target() {
        let change = |qd| {
            let (mut l, mut t) = at_delay(50, qd);
            t.in_flight = 100;
            let b = bytes(&l, &t);
            ack_each(&mut l, &mut t, 10);
            bytes(&l, &t) - b
        };
        assert!(change(TARGET_NS - 10_000_000) > 0, "below target: grow");
        assert_eq!(change(TARGET_NS), 0, "at target: hold");
        assert!(change(TARGET_NS + 10_000_000) < 0, "above target: shrink");
        // Symmetric: 50 ms over the target shrinks as fast as 50 ms under it grows.
        assert_eq!(change(TARGET_NS + 50_000_000), -change(TARGET_NS - 50_000_000));
    }

    #[test]
    fn smaller_target_reacts_to_smaller_delay() {
        let mut l = Ledbat::with_target(TARGET_25MS_NS);
        let mut t = tp_at(50, 49);
        t.in_flight = 50;
        l.add_delay_sample(0, OWD_NS);
        for _ in 0..CURRENT_FILTER {
            l.add_delay_sample(1, OWD_NS + 40_000_000); // 40 ms > 25 ms target
        }
        l.cong_avoid(&mut t, 50);
        assert!(t.cwnd < 50);
    }

    #[test]
    fn cwnd_never_below_min_cwnd() {
        let (mut l, mut t) = at_delay(3, 1_000_000_000); // 1 s of queueing: off_target = -9
        for _ in 0..10 {
            l.cong_avoid(&mut t, 3);
        }
        assert_eq!(t.cwnd, MIN_CWND_PKTS);
    }

    #[test]
    fn growth_limited_to_flightsize_plus_allowed_increase() {
        let (mut l, mut t) = at_delay(20, 0);
        t.in_flight = 5; // application-limited: flightsize after this ACK
        assert_eq!(ack_each(&mut l, &mut t, 1), 20, "cwnd does not grow past flight + 1 when it is already above");
    }

    #[test]
    fn loss_halves_with_floor() {
        let (mut l, mut t) = at_delay(40, 0);
        assert_eq!(l.ssthresh(&t), 20);
        t.cwnd = 3;
        assert_eq!(l.ssthresh(&t), MIN_CWND_PKTS);
    }

    #[test]
    fn one_way_delay_from_timestamps_is_preferred_over_rtt() {
        let mut l = Ledbat::new();
        let mut t = tp();
        t.now_ns = 10_000_000_000;
        t.rcv_tsecr_ns = 9_900_000_000;
        t.rcv_tsval_ns = 9_930_000_000; // 30 ms forward delay
        l.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_ns: 100_000_000, in_flight: 10 });
        assert!(l.used_one_way_delay);
        assert_eq!(l.base[0], 30_000_000);
    }

    #[test]
    fn base_history_keeps_per_minute_minima_for_ten_minutes() {
        let mut l = Ledbat::new();
        l.add_delay_sample(0, 10_000_000); // minute 0: 10 ms
        for m in 1..=BASE_HISTORY as u64 {
            l.add_delay_sample(m * BASE_ROLLOVER_NS, 20_000_000);
        }
        // 11 minutes seen: the 10 ms minimum of minute 0 has rolled out.
        assert_eq!(l.base.len(), BASE_HISTORY);
        assert_eq!(*l.base.iter().min().unwrap(), 20_000_000);
    }
}
