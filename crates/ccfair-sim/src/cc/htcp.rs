//! H-TCP (Leith & Shorten), modelled on Linux `tcp_htcp.c`.
//!
//! Algorithm (R. N. Shorten, D. J. Leith, "H-TCP: TCP for high-speed and
//! long-distance networks", PFLDnet 2004; D. Leith, R. Shorten, Y. Lee,
//! "H-TCP: A framework for congestion control in high-speed and long-distance
//! networks", 2005):
//!   - the increase depends on the time `delta` since the last congestion
//!     event: alpha(delta) = 1 for delta <= delta_L = 1 s, else
//!     1 + 10 (delta - delta_L) + ((delta - delta_L) / 2)^2 (packets per RTT);
//!   - RTT scaling: alpha is multiplied by RTT_min / 100 ms (clamped to
//!     [0.1, 2]) so flows with different RTTs get similar rates;
//!   - cwnd += 2 (1 - beta) alpha / cwnd per ACK (Linux: `snd_cwnd_cnt`
//!     counts ACKed packets and cwnd grows by 1 when
//!     `cnt * alpha >= cwnd`, alpha in 1/128 already including 2 (1 - beta));
//!   - adaptive backoff: on loss cwnd <- beta cwnd with
//!     beta = RTT_min / RTT_max clamped to [0.5, 0.8]; the first congestion
//!     event (no mode switch yet) or an RTT_min <= 10 ms uses 0.5;
//!   - bandwidth switch: if the throughput measured just before this loss
//!     (`maxB`) differs from the one before the previous loss by more than
//!     20 %, beta = 0.5 (the network changed: let flows converge);
//!   - RTT_max grows only in Open state and by at most 20 ms per sample, and
//!     fades towards RTT_min by 5 % at every congestion event;
//!   - delta restarts when recovery ends (`set_state(Open)` after a
//!     CWR/Recovery/Loss), so the fast phase starts 1 s after recovery.
//!
//! Sources: Leith & Shorten (above); Linux net/ipv4/tcp_htcp.c (B. Even).
//! Constants: alpha base 1.0 (128/128), beta in [64/128, 102/128]
//! (0.5 .. 0.797), delta_L = 1 s (HZ), RTT reference 100 ms (Linux's
//! `scale` = 100 ms / RTT_min clamped to [4/8, 80/8]), RTT_max step limit 20 ms, beta needs RTT_min > 10 ms,
//! bandwidth-switch band [4/5, 6/5] of the previous maxB, RTT_max fade 95 %;
//! `use_rtt_scaling` and `use_bandwidth_switch` on; jiffy clock at the kernel's HZ, 250
//! (RTTs are measured in jiffies, rounded up as `usecs_to_jiffies`).
//! Simplifications: the `(diff/2)^2` term is computed in 64 bits (Linux's
//! u32 overflows after ~131 s without a congestion event).

use super::{jiffies, usecs_to_jiffies, AckSample, CaState, CongestionControl, TcpCc};

/// Kernel tick rate: the reference kernel's CONFIG_HZ (cc/mod.rs `KERNEL_HZ`; the BPF port reads the
/// running kernel's, testbed/bpf/ccfair_tcp.h), jiffies per second.
const HZ: u64 = super::KERNEL_HZ;
/// alpha = 1.0 in 1/128 (Linux `ALPHA_BASE`).
pub const ALPHA_BASE: u32 = 1 << 7;
/// beta lower bound 0.5 in 1/128 (Linux `BETA_MIN`).
pub const BETA_MIN: u32 = 1 << 6;
/// beta upper bound ~0.8 in 1/128 (Linux `BETA_MAX` = 102).
pub const BETA_MAX: u32 = 102;
/// RTT_max grows by at most this per sample, jiffies (Linux `msecs_to_jiffies(20)`).
const MAX_RTT_STEP_JIFFIES: u64 = usecs_to_jiffies(20_000_000);
/// The adaptive beta needs RTT_min above this, jiffies (10 ms).
const MIN_RTT_FOR_BETA_JIFFIES: u64 = usecs_to_jiffies(10_000_000);

#[derive(Debug, Clone)]
pub struct Htcp {
    params: HtcpConfig,
    /// Increase per RTT, in 1/128, including the 2 (1 - beta) factor.
    alpha: u32,
    /// Backoff factor, in 1/128.
    beta: u32,
    /// A congestion event has been seen since the last bandwidth switch.
    modeswitch: bool,
    /// Packets ACKed by the current ACK (1 for repeated `cong_avoid` calls).
    pkts_acked: u32,
    /// Packets ACKed since `lasttime` (throughput meter).
    packetcount: u32,
    /// Minimum RTT, jiffies (0 = none yet).
    min_rtt_j: u64,
    /// Maximum RTT (bounded growth), jiffies.
    max_rtt_j: u64,
    /// Jiffy of the last congestion event's end.
    last_cong_j: u64,
    /// Saved state for undo (`undo_last_cong` = None: nothing to undo).
    undo_last_cong_j: Option<u64>,
    undo_max_rtt_j: u64,
    undo_old_max_b: u32,
    /// Throughput meter, packets per second.
    min_b: u32,
    max_b: u32,
    old_max_b: u32,
    bi: u32,
    /// Start of the current throughput sample, jiffies.
    lasttime_j: u64,
}

default_is!(Htcp = Htcp::with_params(HtcpConfig::default()));

/// Linux `between(seq1, seq2, seq3)`: seq2 <= seq1 <= seq3 in u32 sequence space.
fn between(seq1: u32, seq2: u32, seq3: u32) -> bool {
    seq3.wrapping_sub(seq2) >= seq1.wrapping_sub(seq2)
}

impl Htcp {
    pub fn with_params(params: HtcpConfig) -> Htcp {
        Htcp {
            params,
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt_j: 0,
            max_rtt_j: 0,
            last_cong_j: 0,
            undo_last_cong_j: None,
            undo_max_rtt_j: 0,
            undo_old_max_b: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime_j: 0,
        }
    }

    fn cong_time(&self, now_j: u64) -> u64 {
        now_j.saturating_sub(self.last_cong_j)
    }

    /// RTTs since the last congestion event (`htcp_ccount`).
    fn ccount(&self, now_j: u64) -> u64 {
        self.cong_time(now_j) / self.min_rtt_j.max(1)
    }

    /// `htcp_reset`: a congestion event starts now.
    fn reset(&mut self, now_j: u64) {
        self.undo_last_cong_j = Some(self.last_cong_j);
        self.undo_max_rtt_j = self.max_rtt_j;
        self.undo_old_max_b = self.old_max_b;
        self.last_cong_j = now_j;
    }

    fn measure_rtt(&mut self, srtt_j: u64, state: CaState) {
        if self.min_rtt_j > srtt_j || self.min_rtt_j == 0 {
            self.min_rtt_j = srtt_j;
        }
        if state == CaState::Open {
            if self.max_rtt_j < self.min_rtt_j {
                self.max_rtt_j = self.min_rtt_j;
            }
            if self.max_rtt_j < srtt_j && srtt_j <= self.max_rtt_j + MAX_RTT_STEP_JIFFIES {
                self.max_rtt_j = srtt_j;
            }
        }
    }

    /// `htcp_beta_update`.
    fn beta_update(&mut self) {
        if self.params.use_bandwidth_switch {
            let max_b = self.max_b;
            let old_max_b = self.old_max_b;
            self.old_max_b = self.max_b;
            if !between(max_b.wrapping_mul(5), old_max_b.wrapping_mul(4), old_max_b.wrapping_mul(6)) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && self.min_rtt_j > MIN_RTT_FOR_BETA_JIFFIES && self.max_rtt_j > 0 {
            self.beta = (((self.min_rtt_j << 7) / self.max_rtt_j) as u32).clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
    }

    /// alpha(delta) of the paper, packets per RTT, with delta in jiffies
    /// since the last congestion event (before RTT scaling and 2 (1 - beta)).
    pub fn alpha_of_delta(delta_j: u64) -> u64 {
        if delta_j > HZ {
            let d = delta_j - HZ;
            1 + (10 * d + (d / 2) * (d / 2) / HZ) / HZ
        } else {
            1
        }
    }

    /// `htcp_alpha_update`.
    fn alpha_update(&mut self, now_j: u64) {
        let mut factor = Self::alpha_of_delta(self.cong_time(now_j));
        if self.params.use_rtt_scaling && self.min_rtt_j > 0 {
            // scale = 8 * 100 ms / RTT_min, clamped to [0.5, 10] x 8.
            let scale = ((HZ << 3) / (10 * self.min_rtt_j)).clamp(1 << 2, 10 << 3);
            factor = ((factor << 3) / scale).max(1);
        }
        let alpha = 2 * factor * u64::from((1u32 << 7) - self.beta);
        self.alpha = u32::try_from(alpha).unwrap_or(u32::MAX);
        if self.alpha == 0 {
            self.alpha = ALPHA_BASE;
        }
    }

    /// `htcp_param_update`, at each congestion event.
    fn param_update(&mut self, now_j: u64) {
        self.beta_update();
        self.alpha_update(now_j);
        if self.min_rtt_j > 0 && self.max_rtt_j > self.min_rtt_j {
            self.max_rtt_j = self.min_rtt_j + (self.max_rtt_j - self.min_rtt_j) * 95 / 100;
        }
    }
}

impl CongestionControl for Htcp {
    hooks!(pkts_acked);
    fn name(&self) -> &'static str {
        "htcp"
    }

    fn init(&mut self, tp: &mut TcpCc) {
        *self = Self::with_params(self.params.clone());
        self.last_cong_j = jiffies(tp.host_clock_ns(tp.now_ns), HZ);
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        self.param_update(jiffies(tp.host_clock_ns(tp.now_ns), HZ));
        ((u64::from(tp.cwnd) * u64::from(self.beta)) >> 7).max(2) as u32
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        if !tp.past_slow_start(acked) {
            return;
        }
        if (u64::from(tp.cwnd_cnt) * u64::from(self.alpha)) >> 7 >= u64::from(tp.cwnd) {
            if tp.cwnd < tp.cwnd_clamp {
                tp.cwnd += 1;
            }
            tp.cwnd_cnt = 0;
            self.alpha_update(jiffies(tp.host_clock_ns(tp.now_ns), HZ));
        } else {
            tp.cwnd_cnt += self.pkts_acked;
        }
        self.pkts_acked = 1;
    }

    /// `measure_achieved_throughput`.
    fn pkts_acked(&mut self, tp: &mut TcpCc, sample: &AckSample) {
        let now_j = jiffies(tp.host_clock_ns(tp.now_ns), HZ);
        if tp.ca_state == CaState::Open {
            self.pkts_acked = sample.pkts_acked;
        }
        if sample.rtt_ns > 0 {
            self.measure_rtt(usecs_to_jiffies(sample.rtt_ns as u64), tp.ca_state);
        }
        if !self.params.use_bandwidth_switch {
            return;
        }
        if !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime_j = now_j;
            return;
        }
        self.packetcount += sample.pkts_acked;
        let need = tp.cwnd.checked_sub((self.alpha >> 7).max(1));
        let elapsed = now_j.saturating_sub(self.lasttime_j);
        if need.is_some_and(|n| self.packetcount >= n) && elapsed >= self.min_rtt_j && self.min_rtt_j > 0 {
            let cur_bi = (u64::from(self.packetcount) * HZ / elapsed.max(1)) as u32;
            if self.ccount(now_j) <= 3 {
                // just after a backoff
                self.min_b = cur_bi;
                self.max_b = cur_bi;
                self.bi = cur_bi;
            } else {
                self.bi = ((3 * u64::from(self.bi) + u64::from(cur_bi)) / 4) as u32;
                self.max_b = self.max_b.max(self.bi);
                self.min_b = self.min_b.min(self.max_b);
            }
            self.packetcount = 0;
            self.lasttime_j = now_j;
        }
    }

    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        match new_state {
            CaState::Open => {
                if self.undo_last_cong_j.take().is_some() {
                    self.last_cong_j = jiffies(tp.host_clock_ns(tp.now_ns), HZ);
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(jiffies(tp.host_clock_ns(tp.now_ns), HZ)),
            CaState::Disorder => {}
        }
    }

    fn undo_cwnd(&mut self, tp: &TcpCc) -> u32 {
        if let Some(last) = self.undo_last_cong_j.take() {
            self.last_cong_j = last;
            self.max_rtt_j = self.undo_max_rtt_j;
            self.old_max_b = self.undo_old_max_b;
        }
        tp.cwnd.max(tp.prior_cwnd)
    }
}

crate::declare_cca! {
    /// H-TCP's parameters: Linux `tcp_htcp` module parameters, defaults = Linux's.
    pub struct HtcpConfig {
        /// Scale the increase by the RTT (Linux `use_rtt_scaling`).
        use_rtt_scaling: bool = true, Range::Any;
        /// Adapt the backoff to throughput changes (Linux `use_bandwidth_switch`).
        use_bandwidth_switch: bool = true, Range::Any;
    }
    cca Htcp = "htcp", "H-TCP: Leith & Shorten, PFLDnet 2004; Linux net/ipv4/tcp_htcp.c";
    build = |p, _seed| Htcp::with_params(p.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{ack_each, started, tp};

    const MS: u64 = 1_000_000;

    /// `ms` in jiffies at the kernel's HZ (whole for multiples of 4 ms at HZ 250).
    fn j(ms: u64) -> u64 {
        ms * HZ / 1000
    }

    /// The paper's alpha(delta) for delta in seconds, delta_L = 1 s.
    fn paper_alpha(delta_s: f64) -> f64 {
        if delta_s <= 1.0 {
            1.0
        } else {
            let d = delta_s - 1.0;
            1.0 + 10.0 * d + (d / 2.0).powi(2)
        }
    }

    #[test]
    fn alpha_of_delta_follows_the_paper() {
        for delta_ms in [0u64, 500, 1000, 1500, 2000, 3000, 5000, 10_000, 30_000] {
            let got = Htcp::alpha_of_delta(j(delta_ms)) as f64;
            let want = paper_alpha(delta_ms as f64 / 1000.0);
            // Linux truncates to an integer factor.
            assert!(got <= want && want - got < 1.0, "delta {delta_ms} ms: {got} vs {want}");
        }
        assert_eq!(Htcp::alpha_of_delta(j(3000)), 22); // 1 + 20 + 1
        assert_eq!(Htcp::alpha_of_delta(j(11_000)), 126); // 1 + 100 + 25
    }

    fn with_rtts(min_rtt_j: u64, max_rtt_j: u64) -> Htcp {
        let mut h = Htcp::with_params(HtcpConfig { use_rtt_scaling: true, use_bandwidth_switch: false });
        h.min_rtt_j = min_rtt_j;
        h.max_rtt_j = max_rtt_j;
        h.modeswitch = true;
        h
    }

    #[test]
    fn beta_is_rtt_ratio_clamped_to_half_and_point_eight() {
        let mut h = with_rtts(50, 80);
        h.beta_update();
        assert_eq!(h.beta, (50 << 7) / 80); // 0.625
        let mut h = with_rtts(50, 55);
        h.beta_update();
        assert_eq!(h.beta, BETA_MAX); // 0.91 -> 0.797
        let mut h = with_rtts(50, 200);
        h.beta_update();
        assert_eq!(h.beta, BETA_MIN); // 0.25 -> 0.5
                                      // RTT_min <= 10 ms: 0.5.
        let mut h = with_rtts(j(12), j(16)); // msecs_to_jiffies(10) = 3 jiffies
        h.beta_update();
        assert_eq!(h.beta, BETA_MIN);
        // First congestion event (no mode switch yet): 0.5, and arms it.
        let mut h = with_rtts(50, 55);
        h.modeswitch = false;
        h.beta_update();
        assert_eq!(h.beta, BETA_MIN);
        assert!(h.modeswitch);
    }

    #[test]
    fn bandwidth_switch_resets_beta_when_throughput_changed_by_more_than_20_percent() {
        let mut h = with_rtts(50, 55);
        h.params.use_bandwidth_switch = true;
        h.old_max_b = 1000;
        h.max_b = 1100; // +10 %: keep adaptive beta
        h.beta_update();
        assert_eq!(h.beta, BETA_MAX);
        h.max_b = 1500; // +36 % over 1100
        h.beta_update();
        assert_eq!(h.beta, BETA_MIN);
        assert!(!h.modeswitch);
    }

    #[test]
    fn rtt_scaling_makes_alpha_proportional_to_rtt_over_100ms() {
        let now = j(11_000); // delta 11 s: alpha(delta) = 126
        let mut h = with_rtts(j(100), j(100));
        h.beta = BETA_MIN;
        h.alpha_update(now);
        assert_eq!(h.alpha, 2 * 126 * 64); // 2 (1 - 0.5) * 126 in 1/128
        let mut h = with_rtts(j(48), j(48));
        h.beta = BETA_MIN;
        h.alpha_update(now);
        assert_eq!(h.alpha, 2 * 63 * 64); // half at 48 ms (50 ms is no whole number of jiffies)
                                          // The multiplier RTT_min / 100 ms is clamped to [0.1, 2].
        let mut h = with_rtts(j(4), j(4)); // 0.04 -> 0.1
        h.beta = BETA_MIN;
        h.alpha_update(now);
        assert_eq!(h.alpha, 2 * 12 * 64);
        let mut h = with_rtts(j(400), j(400)); // 4 -> 2
        h.beta = BETA_MIN;
        h.alpha_update(now);
        assert_eq!(h.alpha, 2 * 252 * 64);
    }

    #[test]
    fn low_speed_regime_grows_like_reno_with_beta_half() {
        // delta < 1 s, beta 0.5: alpha = 2 * 0.5 * 1 = 1 packet per cwnd ACKs.
        let (mut h, mut t) = started::<Htcp>();
        t.cwnd = 40;
        t.ssthresh = 20;
        assert_eq!(ack_each(&mut h, &mut t, 41), 41);
    }

    #[test]
    fn ssthresh_applies_beta_and_fades_rtt_max() {
        let mut t = tp();
        t.now_ns = 500 * MS;
        let mut h = with_rtts(50, 70);
        t.cwnd = 100;
        let s = h.ssthresh(&t);
        assert_eq!(s, (100 * ((50u32 << 7) / 70)) >> 7); // beta 0.71
        assert_eq!(h.max_rtt_j, 50 + 20 * 95 / 100);
    }

    #[test]
    fn rtt_max_grows_only_in_open_and_by_at_most_20ms() {
        let mut h = Htcp::default();
        h.measure_rtt(j(48), CaState::Open);
        assert_eq!((h.min_rtt_j, h.max_rtt_j), (j(48), j(48)));
        h.measure_rtt(j(88), CaState::Open); // jump of 40 ms: ignored
        assert_eq!(h.max_rtt_j, j(48));
        h.measure_rtt(j(64), CaState::Open); // 16 ms: within msecs_to_jiffies(20)
        assert_eq!(h.max_rtt_j, j(64));
        h.measure_rtt(j(80), CaState::Recovery);
        assert_eq!(h.max_rtt_j, j(64));
    }

    #[test]
    fn delta_restarts_when_recovery_ends() {
        let (mut h, mut t) = started::<Htcp>();
        t.now_ns = 5_000 * MS;
        h.set_state(&mut t, CaState::Recovery);
        assert_eq!(h.last_cong_j, j(5_000));
        t.now_ns = 5_080 * MS;
        h.set_state(&mut t, CaState::Open);
        assert_eq!(h.last_cong_j, j(5_080));
        // Undo restores the previous epoch.
        t.now_ns = 6_000 * MS;
        h.set_state(&mut t, CaState::Recovery);
        assert_eq!(h.last_cong_j, j(6_000));
        t.prior_cwnd = 30;
        t.cwnd = 20;
        assert_eq!(h.undo_cwnd(&t), 30);
        assert_eq!(h.last_cong_j, j(5_080));
    }
}
