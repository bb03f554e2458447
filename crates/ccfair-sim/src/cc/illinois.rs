//! TCP-Illinois (Liu, Başar, Srikant), modelled on Linux `tcp_illinois.c`.
//!
//! Algorithm (S. Liu, T. Başar, R. Srikant, "TCP-Illinois: A loss- and
//! delay-based congestion control algorithm for high-speed networks",
//! Performance Evaluation 65(6-7), 2008): AIMD whose increase alpha and
//! decrease beta depend on the average queueing delay `d_a` of the last RTT,
//! relative to the largest queueing delay seen, `d_m = RTT_max - RTT_base`:
//!   - alpha (packets per RTT): alpha_max = 10 while `d_a <= d_1 = d_m / 100`,
//!     otherwise `k1 / (k2 + d_a)`, the concave curve from alpha_max at d_1
//!     down to alpha_min = 0.3 at d_m; after the delay has once risen above
//!     d_1, alpha returns to alpha_max only after `theta` = 5 consecutive
//!     low-delay RTTs;
//!   - beta (fraction cut on loss): 1/8 while `d_a <= d_2 = d_m / 10`, 1/2 at
//!     `d_a >= d_3 = 8 d_m / 10`, linear in between;
//!   - below `win_thresh` = 15 packets alpha = 1, beta = 1/2 (Reno);
//!   - alpha/beta are recomputed once per RTT (when the ACK passes the
//!     `snd_nxt` recorded at the last update); per ACK
//!     `snd_cwnd_cnt += acked` and cwnd grows by `cnt * alpha / cwnd` once
//!     that reaches 1;
//!   - on loss: `ssthresh = cwnd - cwnd * beta`; entering Loss (RTO) resets
//!     alpha = 1, beta = 1/2.
//!
//! Sources: Liu, Başar, Srikant 2008; Linux net/ipv4/tcp_illinois.c
//! (S. Hemminger, from the paper and the authors' ns-2 code).
//! Parameters (`IllinoisConfig`, defaults = Linux's): alpha_min/alpha_max
//! (used in 1/128: `ALPHA_MIN` 38 = 0.297, `ALPHA_MAX` 1280 = 10),
//! beta_min/beta_max (used in 1/64: `BETA_MIN` 8 = 1/8, `BETA_MAX` 32 = 1/2,
//! also Linux's `BETA_BASE`), `win_thresh` = 15 packets, `theta` = 5 RTTs.
//! Constants: `ALPHA_BASE` 128 = 1; RTT samples in µs capped at
//! u32::MAX / alpha_max (~3.3 s by default, Linux `RTT_MAX`).
//! Simplifications: none beyond the sender's; RTT_base/RTT_max are lifetime
//! extremes as in Linux (no ageing).

use super::{AckSample, CaState, CongestionControl, TcpCc};

const ALPHA_SHIFT: u32 = 7;
const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// alpha_min ~ 0.3 packets per RTT, in 1/128.
pub const ALPHA_MIN: u32 = (3 * ALPHA_SCALE) / 10;
/// alpha_max = 10 packets per RTT, in 1/128.
pub const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
/// alpha = 1 (Reno), in 1/128.
pub const ALPHA_BASE: u32 = ALPHA_SCALE;
const BETA_SHIFT: u32 = 6;
const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// beta_min = 1/8, in 1/64.
pub const BETA_MIN: u32 = BETA_SCALE / 8;
/// beta_max = 1/2, in 1/64.
pub const BETA_MAX: u32 = BETA_SCALE / 2;
/// beta = 1/2 (Reno), in 1/64.
pub const BETA_BASE: u32 = BETA_MAX;
/// Below this cwnd Illinois is Reno (module parameter `win_thresh`), packets.
pub const WIN_THRESH_PKTS: u32 = 15;
/// Low-delay RTTs before alpha may return to alpha_max (module parameter `theta`).
pub const THETA_RTTS: u32 = 5;

#[derive(Debug, Clone)]
pub struct Illinois {
    /// Sum of RTT samples in the current RTT, µs.
    sum_rtt_us: u64,
    /// Number of RTT samples in the current RTT (u16 in Linux).
    cnt_rtt: u16,
    /// Minimum RTT ever, µs.
    base_rtt_us: u64,
    /// Maximum RTT ever, µs.
    max_rtt_us: u64,
    /// `snd_nxt` at the last parameter update, packets.
    end_seq: u64,
    /// Additive increase, 1/128 packet per RTT.
    alpha: u32,
    /// Multiplicative decrease, 1/64.
    beta: u32,
    /// Packets ACKed by the current ACK (1 for repeated `cong_avoid` calls).
    acked: u32,
    /// The average delay has been above d_1 since alpha was last at max.
    rtt_above: bool,
    /// Consecutive RTTs with low delay.
    rtt_low: u32,
    /// The parameters in the algorithm's fixed point.
    k: Fixed,
}

/// `IllinoisConfig` in Linux's fixed point: alpha in 1/128, beta in 1/64.
#[derive(Debug, Clone, Copy)]
struct Fixed {
    alpha_min: u32,
    alpha_max: u32,
    beta_min: u32,
    /// Also beta below `win_thresh` and after an RTO (Linux `BETA_BASE` = `BETA_MAX`).
    beta_max: u32,
    win_thresh_pkts: u32,
    theta: u32,
    /// RTT samples are capped here so the alpha arithmetic cannot overflow, µs
    /// (Linux `RTT_MAX` = U32_MAX / ALPHA_MAX).
    rtt_max_us: u64,
}

impl Fixed {
    fn of(p: &IllinoisConfig) -> Fixed {
        let alpha = |a: f64| (a * f64::from(ALPHA_SCALE)).round() as u32;
        let beta = |b: f64| (b * f64::from(BETA_SCALE)).round() as u32;
        let alpha_max = alpha(p.alpha_max);
        Fixed {
            alpha_min: alpha(p.alpha_min),
            alpha_max,
            beta_min: beta(p.beta_min),
            beta_max: beta(p.beta_max),
            win_thresh_pkts: p.win_thresh_pkts,
            theta: p.theta,
            rtt_max_us: u64::from(u32::MAX / alpha_max.max(1)),
        }
    }
}

impl Default for Illinois {
    fn default() -> Self {
        Self::new()
    }
}

impl Illinois {
    pub fn new() -> Illinois {
        Illinois::with_params(&IllinoisConfig::default())
    }

    pub fn with_params(p: &IllinoisConfig) -> Illinois {
        Illinois::fresh(Fixed::of(p))
    }

    fn fresh(k: Fixed) -> Illinois {
        Illinois {
            sum_rtt_us: 0,
            cnt_rtt: 0,
            base_rtt_us: 0x7fff_ffff,
            max_rtt_us: 0,
            end_seq: 0,
            alpha: k.alpha_max,
            beta: k.beta_max,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
            k,
        }
    }

    fn rtt_reset(&mut self, tp: &TcpCc) {
        self.end_seq = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt_us = 0;
    }

    /// alpha (1/128) for average queueing delay `da` and maximum `dm` (µs).
    pub fn alpha_for(&mut self, da: u64, dm: u64) -> u32 {
        let d1 = dm / 100;
        if da <= d1 {
            if !self.rtt_above {
                return self.k.alpha_max;
            }
            self.rtt_low += 1;
            if self.rtt_low < self.k.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return self.k.alpha_max;
        }
        self.rtt_above = true;
        let dm = dm - d1;
        let da = da - d1;
        let a_max = u64::from(self.k.alpha_max);
        let a_min = u64::from(self.k.alpha_min);
        ((dm * a_max) / (dm + (da * (a_max - a_min)) / a_min)) as u32
    }

    /// beta (1/64) for average queueing delay `da` and maximum `dm` (µs).
    pub fn beta_for(&self, da: u64, dm: u64) -> u32 {
        let d2 = dm / 10;
        if da <= d2 {
            return self.k.beta_min;
        }
        let d3 = 8 * dm / 10;
        if da >= d3 || d3 <= d2 {
            return self.k.beta_max;
        }
        let (bmin, bmax) = (u64::from(self.k.beta_min), u64::from(self.k.beta_max));
        ((bmin * d3 - bmax * d2 + (bmax - bmin) * da) / (d3 - d2)) as u32
    }

    /// Once per RTT: recompute alpha and beta from this RTT's delays.
    fn update_params(&mut self, tp: &TcpCc) {
        if tp.cwnd < self.k.win_thresh_pkts {
            self.alpha = ALPHA_BASE;
            self.beta = self.k.beta_max;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_rtt_us - self.base_rtt_us;
            let da = self.sum_rtt_us / u64::from(self.cnt_rtt) - self.base_rtt_us;
            self.alpha = self.alpha_for(da, dm);
            self.beta = self.beta_for(da, dm);
        }
        self.rtt_reset(tp);
    }
}

impl CongestionControl for Illinois {
    hooks!(pkts_acked);
    fn name(&self) -> &'static str {
        "illinois"
    }

    fn init(&mut self, tp: &mut TcpCc) {
        *self = Illinois::fresh(self.k);
        self.rtt_reset(tp);
    }

    fn pkts_acked(&mut self, _tp: &mut TcpCc, sample: &AckSample) {
        self.acked = sample.pkts_acked;
        if sample.rtt_ns < 0 {
            return;
        }
        let rtt_us = (sample.rtt_ns as u64 / 1000).min(self.k.rtt_max_us);
        self.base_rtt_us = self.base_rtt_us.min(rtt_us);
        self.max_rtt_us = self.max_rtt_us.max(rtt_us);
        self.cnt_rtt = self.cnt_rtt.wrapping_add(1);
        self.sum_rtt_us += rtt_us;
    }

    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = self.k.beta_max;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        if tp.snd_una > self.end_seq {
            self.update_params(tp);
        }
        if !tp.is_cwnd_limited {
            return;
        }
        if tp.in_slow_start() {
            tp.slow_start(acked);
            return;
        }
        tp.cwnd_cnt += self.acked;
        self.acked = 1;
        // ~ cwnd += alpha / cwnd per ACKed packet.
        let delta = (u64::from(tp.cwnd_cnt) * u64::from(self.alpha)) >> ALPHA_SHIFT;
        if delta >= u64::from(tp.cwnd) {
            let inc = (delta / u64::from(tp.cwnd)) as u32;
            tp.cwnd = (tp.cwnd + inc).min(tp.cwnd_clamp);
            tp.cwnd_cnt = 0;
        }
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        let cut = (u64::from(tp.cwnd) * u64::from(self.beta)) >> BETA_SHIFT;
        (tp.cwnd - cut as u32).max(2)
    }
}

crate::declare_cca! {
    /// Illinois's parameters: Linux `tcp_illinois` module parameters and constants, defaults = Linux's.
    pub struct IllinoisConfig {
        /// Smallest increase at the largest queueing delay, packets per RTT (Linux `ALPHA_MIN` = 38/128; used in 1/128).
        alpha_min: f64 = 0.3, Range::closed(0.01, 100.0);
        /// Increase at low queueing delay, packets per RTT (Linux `ALPHA_MAX` = 10; used in 1/128).
        alpha_max: f64 = 10.0, Range::closed(0.01, 100.0);
        /// Decrease at low queueing delay (Linux `BETA_MIN` = 1/8; used in 1/64).
        beta_min: f64 = 0.125, Range::closed(0.0, 1.0);
        /// Decrease at high delay, below win_thresh and after an RTO (Linux `BETA_MAX` = `BETA_BASE` = 1/2; used in 1/64).
        beta_max: f64 = 0.5, Range::closed(0.0, 1.0);
        /// Below this cwnd Illinois is Reno (Linux `win_thresh`).
        win_thresh_pkts: u32 = WIN_THRESH_PKTS, Range::Any;
        /// Low-delay RTTs before alpha returns to alpha_max (Linux `theta`).
        theta: u32 = THETA_RTTS, Range::Any;
    }
    check = check_illinois;
    cca Illinois = "illinois", "TCP-Illinois: Liu, Basar, Srikant, Perf. Eval. 2008; Linux net/ipv4/tcp_illinois.c";
    build = |p, _seed| Illinois::with_params(p);
}

fn check_illinois(p: &IllinoisConfig) -> Result<(), crate::params::ParamError> {
    crate::params::ParamError::at_most("alpha_min", p.alpha_min, "alpha_max", p.alpha_max)?;
    crate::params::ParamError::at_most("beta_min", p.beta_min, "beta_max", p.beta_max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::tp;

    const MS: i64 = 1_000_000;

    #[test]
    fn alpha_is_max_at_low_delay_and_min_at_max_delay() {
        let mut c = Illinois::new();
        let dm = 40_000; // 40 ms max queueing delay
        assert_eq!(c.alpha_for(0, dm), ALPHA_MAX);
        assert_eq!(c.alpha_for(dm / 100, dm), ALPHA_MAX);
        // At d_m alpha = alpha_min (0.3): k1 / (k2 + d_m) = alpha_min.
        let a = c.alpha_for(dm, dm);
        assert!((i64::from(a) - i64::from(ALPHA_MIN)).abs() <= 1, "alpha(d_m) = {a}");
        // The curve is decreasing and convex (paper Fig. 2): at d_m / 2 it is
        // already well below the midpoint of [alpha_min, alpha_max].
        let mid = c.alpha_for(dm / 2, dm);
        assert!(mid > ALPHA_MIN && mid < (ALPHA_MIN + ALPHA_MAX) / 8, "alpha(d_m/2) = {mid}");
    }

    #[test]
    fn alpha_returns_to_max_only_after_theta_low_delay_rtts() {
        let mut c = Illinois::new();
        let dm = 40_000;
        c.alpha = c.alpha_for(dm, dm);
        let low = c.alpha;
        for i in 1..THETA_RTTS {
            c.alpha = c.alpha_for(0, dm);
            assert_eq!(c.alpha, low, "RTT {i}");
        }
        assert_eq!(c.alpha_for(0, dm), ALPHA_MAX);
    }

    #[test]
    fn beta_is_eighth_at_low_delay_half_at_high_delay_linear_between() {
        let dm = 40_000;
        assert_eq!(Illinois::new().beta_for(0, dm), BETA_MIN);
        assert_eq!(Illinois::new().beta_for(dm / 10, dm), BETA_MIN);
        assert_eq!(Illinois::new().beta_for(8 * dm / 10, dm), BETA_MAX);
        assert_eq!(Illinois::new().beta_for(dm, dm), BETA_MAX);
        // Midway between d_2 and d_3: midway between 1/8 and 1/2 (= 20/64).
        assert_eq!(Illinois::new().beta_for(dm * 45 / 100, dm), 20);
    }

    fn ack(c: &mut Illinois, t: &mut TcpCc, rtt_ms: i64) {
        t.snd_una += 1;
        t.snd_nxt += 1;
        c.pkts_acked(t, &AckSample { pkts_acked: 1, rtt_ns: rtt_ms * MS, in_flight: t.cwnd });
        c.cong_avoid(t, 1);
    }

    #[test]
    fn per_rtt_update_sets_alpha_beta_from_average_queueing_delay() {
        let mut t = tp();
        let mut c = Illinois::new();
        t.cwnd = 100;
        t.ssthresh = 50;
        c.init(&mut t);
        ack(&mut c, &mut t, 50); // base 50 ms
        ack(&mut c, &mut t, 90); // max 90 ms: d_m = 40 ms
        t.snd_nxt += 100;
        // An RTT at 90 ms average (d_a = d_m): alpha_min, beta 1/2, loss cuts half.
        for _ in 0..101 {
            ack(&mut c, &mut t, 90);
        }
        assert!(c.alpha <= ALPHA_MIN + 1);
        assert_eq!(c.beta, BETA_MAX);
        t.cwnd = 200;
        assert_eq!(c.ssthresh(&t), 100);
        // An RTT at the base delay: beta 1/8 -> loss cuts 1/8 (alpha waits theta RTTs).
        let end = t.snd_nxt;
        while t.snd_una <= end + 1 {
            ack(&mut c, &mut t, 50);
        }
        assert_eq!(c.beta, BETA_MIN);
        t.cwnd = 200;
        assert_eq!(c.ssthresh(&t), 175);
    }

    #[test]
    fn small_window_is_reno_and_rto_resets() {
        let mut t = tp();
        let mut c = Illinois::new();
        c.init(&mut t);
        t.cwnd = 10;
        t.ssthresh = 5;
        ack(&mut c, &mut t, 50);
        ack(&mut c, &mut t, 50);
        assert_eq!((c.alpha, c.beta), (ALPHA_BASE, BETA_BASE));
        c.alpha = ALPHA_MAX;
        c.beta = BETA_MIN;
        c.set_state(&mut t, CaState::Loss);
        assert_eq!((c.alpha, c.beta), (ALPHA_BASE, BETA_BASE));
    }

    #[test]
    fn increase_is_alpha_per_window_of_acked_packets() {
        let mut t = tp();
        let mut c = Illinois::new();
        c.init(&mut t);
        c.end_seq = u64::MAX; // hold alpha at its initial 10
        t.cwnd = 100;
        t.ssthresh = 50;
        for _ in 0..10 {
            c.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_ns: 50 * MS, in_flight: 100 });
            c.cong_avoid(&mut t, 1);
        }
        // 10 packets * alpha 10 / cwnd 100 = +1.
        assert_eq!(t.cwnd, 101);
    }

    #[test]
    fn larger_beta_min_cuts_more_at_low_delay_and_larger_win_thresh_stays_reno() {
        // At the base delay beta = beta_min: 1/8 cuts 200 -> 175, 1/4 cuts 200 -> 150.
        let dm = 40_000;
        let quarter = Illinois::with_params(&IllinoisConfig { beta_min: 0.25, ..IllinoisConfig::default() });
        assert_eq!(quarter.beta_for(0, dm), BETA_SCALE / 4);
        let mut c = quarter.clone();
        c.beta = c.beta_for(0, dm);
        let mut t = tp();
        t.cwnd = 200;
        assert_eq!(c.ssthresh(&t), 150);
        // cwnd 100 is above the default win_thresh 15 (alpha_max) but below 150 (Reno, alpha 1).
        let alpha_after_an_rtt = |win_thresh_pkts: u32| {
            let mut t = tp();
            let mut c = Illinois::with_params(&IllinoisConfig { win_thresh_pkts, ..IllinoisConfig::default() });
            c.init(&mut t);
            t.cwnd = 100;
            t.ssthresh = 50;
            ack(&mut c, &mut t, 50);
            ack(&mut c, &mut t, 50);
            c.alpha
        };
        assert_eq!(alpha_after_an_rtt(15), ALPHA_MAX);
        assert_eq!(alpha_after_an_rtt(150), ALPHA_BASE);
    }
}
