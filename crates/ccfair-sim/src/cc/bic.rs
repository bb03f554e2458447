//! BIC-TCP (Binary Increase Congestion control), modelled on Linux `tcp_bic.c`.
//!
//! Algorithm (Xu, Harfoush, Rhee, "Binary Increase Congestion Control for
//! Fast, Long Distance Networks", IEEE INFOCOM 2004):
//!   - on loss remember `W_max` = cwnd (fast convergence: if the loss came
//!     below the previous `W_max`, `W_max = cwnd (1 + beta) / 2`) and cut to
//!     `cwnd * beta`, beta = 819/1024 ~ 0.8 (Reno's halving below
//!     `low_window` = 14 packets);
//!   - below `W_max`: binary search — per RTT grow by `(W_max - cwnd) / B`
//!     (B = 4), but at most `max_increment` = 16 packets ("additive
//!     increase" when far away) and at least `B / smooth_part` = 1/5 packet
//!     close to `W_max`;
//!   - above `W_max`: "max probing", the mirror image — grow slowly within
//!     `B` packets of `W_max` (1/5 per RTT), then by `(cwnd - W_max) / (B - 1)`
//!     per RTT, and by `max_increment` beyond `W_max + max_increment (B - 1)`;
//!   - the per-RTT growth is turned into `cnt` (ACKed packets per +1 cwnd,
//!     `cnt = cwnd / increment`) by `bictcp_update`, which reruns only if
//!     cwnd changed or 1/32 s passed; with no loss yet `cnt <= 20` (>= 5 %
//!     per RTT); at or below `low_window` `cnt = cwnd` (Reno);
//!   - Linux then divides `cnt` by the measured packets-per-ACK ratio
//!     `delayed_ack` (in 1/16, EWMA 15/16, initial 2, updated in `pkts_acked`
//!     in Open state) — a leftover from when `tcp_cong_avoid_ai` counted
//!     ACKs; since it counts ACKed packets, BIC grows about twice as fast as
//!     the nominal increments with delayed ACKs *and* (because the filter's
//!     integer dead band keeps 2.0 -> 1.94) without them. We keep Linux's
//!     arithmetic;
//!   - entering Loss (RTO) resets all state (`bictcp_state`).
//!
//! Sources: Xu, Harfoush, Rhee, INFOCOM 2004; Linux net/ipv4/tcp_bic.c.
//! Constants (Linux module defaults): `BICTCP_B` = 4, `max_increment` = 16
//! packets, `low_window` = 14 packets, `beta` = 819/1024, `smooth_part` = 20,
//! fast convergence on, `initial_ssthresh` unset; jiffy clock at the kernel's HZ (250).
//! Simplifications: `epoch_start` (recorded but never read by Linux) is not kept.

use super::{jiffies, AckSample, CaState, CongestionControl, TcpCc};

/// beta is a fraction of 1024 (Linux `BICTCP_BETA_SCALE`).
const BETA_SCALE: u32 = 1024;
/// Binary search divides the distance to `W_max` by B (Linux `BICTCP_B`).
pub const BICTCP_B: u32 = 4;
/// `delayed_ack` is packets per ACK in 1/16 (Linux `ACK_RATIO_SHIFT`).
const ACK_RATIO_SHIFT: u32 = 4;
/// Kernel tick rate: the reference kernel's CONFIG_HZ (cc/mod.rs `KERNEL_HZ`; the BPF port reads the
/// running kernel's, testbed/bpf/ccfair_tcp.h), jiffies per second.
const HZ: u64 = super::KERNEL_HZ;
/// `bictcp_update` reruns with unchanged cwnd only after HZ/32 jiffies.
const UPDATE_HOLD_JIFFIES: u64 = HZ / 32;
/// Before the first loss `cnt <= 20`: cwnd grows >= 5 % per RTT.
const FIRST_EPOCH_MAX_CNT: u32 = 20;
/// Minimum ssthresh after a loss, packets.
const MIN_SSTHRESH_PKTS: u32 = 2;

#[derive(Debug, Clone)]
pub struct Bic {
    params: BicConfig,
    /// `beta` in 1/1024 (Linux: 819 ~ 0.8).
    beta: u32,
    /// ACKed packets per +1 cwnd.
    cnt: u32,
    /// `W_max`, packets (0 = no loss yet).
    last_max_cwnd: u32,
    /// cwnd at the last `update`.
    last_cwnd: u32,
    /// Jiffy of the last `update`.
    last_time_jiffies: u64,
    /// Packets per ACK, in 1/16 (EWMA).
    delayed_ack: u32,
}

default_is!(Bic = Bic::with_params(BicConfig::default()));

impl Bic {
    pub fn with_params(params: BicConfig) -> Bic {
        let beta = (params.beta * 1024.0).round() as u32;
        let mut b = Bic { params, beta, cnt: 0, last_max_cwnd: 0, last_cwnd: 0, last_time_jiffies: 0, delayed_ack: 0 };
        b.reset();
        b
    }

    /// Linux `bictcp_reset`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time_jiffies = 0;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
    }

    /// The binary-search / max-probing part of `bictcp_update`: ACKed
    /// packets per +1 cwnd before the ACK-ratio scaling.
    pub fn raw_cnt(&self, cwnd: u32) -> u32 {
        let p = &self.params;
        let b = BICTCP_B;
        let max_inc = p.max_increment_pkts.max(1);
        let mut cnt = if cwnd <= p.low_window_pkts {
            return cwnd;
        } else if cwnd < self.last_max_cwnd {
            let dist = (self.last_max_cwnd - cwnd) / b;
            if dist > max_inc {
                cwnd / max_inc // additive increase
            } else if dist <= 1 {
                cwnd * p.smooth_part / b // close to W_max
            } else {
                cwnd / dist // binary search
            }
        } else if cwnd < self.last_max_cwnd + b {
            cwnd * p.smooth_part / b
        } else if cwnd < self.last_max_cwnd + max_inc * (b - 1) {
            cwnd * (b - 1) / (cwnd - self.last_max_cwnd) // max probing
        } else {
            cwnd / max_inc
        };
        if self.last_max_cwnd == 0 {
            cnt = cnt.min(FIRST_EPOCH_MAX_CNT);
        }
        cnt
    }

    /// Linux `bictcp_update`.
    fn update(&mut self, cwnd: u32, now_jiffies: u64) {
        if self.last_cwnd == cwnd && now_jiffies.saturating_sub(self.last_time_jiffies) <= UPDATE_HOLD_JIFFIES {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time_jiffies = now_jiffies;
        if cwnd <= self.params.low_window_pkts {
            self.cnt = cwnd;
            return;
        }
        let raw = self.raw_cnt(cwnd);
        self.cnt = ((u64::from(raw) << ACK_RATIO_SHIFT) / u64::from(self.delayed_ack.max(1))) as u32;
        self.cnt = self.cnt.max(1);
    }
}

impl CongestionControl for Bic {
    hooks!(pkts_acked);
    fn name(&self) -> &'static str {
        "bic"
    }

    fn init(&mut self, _tp: &mut TcpCc) {
        self.reset();
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        let Some(acked) = tp.after_slow_start(acked) else { return };
        self.update(tp.cwnd, jiffies(tp.host_clock_ns(tp.now_ns), HZ));
        tp.cong_avoid_ai(self.cnt, acked);
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        let cwnd = tp.cwnd;
        let p = &self.params;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && p.fast_convergence {
            ((u64::from(cwnd) * u64::from(BETA_SCALE + self.beta)) / u64::from(2 * BETA_SCALE)) as u32
        } else {
            cwnd
        };
        if cwnd <= p.low_window_pkts {
            (cwnd >> 1).max(MIN_SSTHRESH_PKTS)
        } else {
            ((u64::from(cwnd) * u64::from(self.beta) / u64::from(BETA_SCALE)) as u32).max(MIN_SSTHRESH_PKTS)
        }
    }

    fn set_state(&mut self, _tp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
        }
    }

    fn pkts_acked(&mut self, tp: &mut TcpCc, sample: &AckSample) {
        if tp.ca_state == CaState::Open {
            // ratio = 15/16 ratio + sample (u32 arithmetic as in Linux).
            self.delayed_ack = self.delayed_ack.wrapping_add(sample.pkts_acked).wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT);
        }
    }
}

crate::declare_cca! {
    /// BIC's parameters: Linux `tcp_bic` module parameters, defaults = Linux's.
    pub struct BicConfig {
        /// Multiplicative decrease factor (Linux `beta` = 819/1024; used as round(beta x 1024)).
        beta: f64 = 0.8, Range::open(0.0, 1.0);
        /// Release bandwidth faster when W_max shrinks (Linux `fast_convergence`).
        fast_convergence: bool = true, Range::Any;
        /// Largest growth per RTT (Linux `max_increment`).
        max_increment_pkts: u32 = 16, Range::at_least(1.0);
        /// Reno behaviour at or below this cwnd (Linux `low_window`).
        low_window_pkts: u32 = 14, Range::Any;
        /// RTTs from W_max - B to W_max (Linux `smooth_part`).
        smooth_part: u32 = 20, Range::at_least(1.0);
    }
    cca Bic = "bic", "BIC: Xu, Harfoush, Rhee, INFOCOM 2004; Linux net/ipv4/tcp_bic.c";
    build = |p, _seed| Bic::with_params(p.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::tp;

    fn with_wmax(w_max: u32) -> Bic {
        Bic { last_max_cwnd: w_max, ..Bic::default() }
    }

    /// Packets added per RTT (cwnd ACKed packets) for the raw increment rule.
    fn per_rtt(b: &Bic, cwnd: u32) -> f64 {
        f64::from(cwnd) / f64::from(b.raw_cnt(cwnd))
    }

    #[test]
    fn far_below_wmax_grows_by_max_increment_16_per_rtt() {
        // INFOCOM 2004: additive increase by S_max = 16 while (W_max - cwnd)/B > S_max.
        let b = with_wmax(1000);
        assert_eq!(b.raw_cnt(500), 500 / 16);
        assert!((per_rtt(&b, 512) - 16.0).abs() < 1e-9);
    }

    #[test]
    fn binary_search_halves_the_distance_in_b_steps() {
        // Within reach: per RTT grow by (W_max - cwnd) / B.
        let b = with_wmax(1000);
        assert_eq!(b.raw_cnt(960), 96); // dist 10 -> +10 per RTT
        assert!((per_rtt(&b, 960) - 10.0).abs() < 1e-9);
        assert!((per_rtt(&b, 940) - 15.0).abs() < 0.2); // cnt = 940 / 15 = 62 (floor)
                                                        // Within B of W_max: 1/5 packet per RTT (B / smooth_part).
        assert!((per_rtt(&b, 997) - 0.2).abs() < 1e-3);
    }

    #[test]
    fn max_probing_mirrors_binary_search_above_wmax() {
        let b = with_wmax(1000);
        assert!((per_rtt(&b, 1002) - 0.2).abs() < 1e-3); // < W_max + B: slow
        assert_eq!(b.raw_cnt(1012), 1012 * 3 / 12); // +(cwnd - W_max)/(B-1) = 4 per RTT
        assert_eq!(b.raw_cnt(1100), 1100 / 16); // beyond W_max + 48: max_increment
    }

    #[test]
    fn reno_below_low_window_and_5_percent_floor_before_first_loss() {
        let b = with_wmax(1000);
        assert_eq!(b.raw_cnt(14), 14);
        let b = with_wmax(0); // no loss yet: max probing capped at cnt 20
        assert_eq!(b.raw_cnt(400), 20);
    }

    #[test]
    fn ack_ratio_filter_scales_cnt_as_linux() {
        // Initial ratio 2 (32/16): cnt is halved. One packet per ACK: the
        // filter 32 + 1 - 2 = 31 stays at 31 (integer dead band).
        let mut b = with_wmax(1000);
        let mut t = tp();
        for _ in 0..100 {
            b.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_ns: 50_000_000, in_flight: 10 });
        }
        assert_eq!(b.delayed_ack, 31);
        b.update(960, 0);
        assert_eq!(b.cnt, 96 * 16 / 31);
        // Two packets per ACK keep it at 32; not updated outside Open.
        t.ca_state = CaState::Recovery;
        b.pkts_acked(&mut t, &AckSample { pkts_acked: 7, rtt_ns: -1, in_flight: 10 });
        assert_eq!(b.delayed_ack, 31);
    }

    #[test]
    fn loss_sets_wmax_with_fast_convergence_and_cuts_to_beta() {
        let mut b = Bic::default();
        let mut t = tp();
        t.cwnd = 1000;
        assert_eq!(b.ssthresh(&t), 799); // 1000 * 819 / 1024
        assert_eq!(b.last_max_cwnd, 1000);
        t.cwnd = 900; // below previous W_max: W_max = 900 * (1 + 0.8) / 2
        b.ssthresh(&t);
        assert_eq!(b.last_max_cwnd, 900 * 1843 / 2048);
        t.cwnd = 12; // low window: halve
        assert_eq!(b.ssthresh(&t), 6);
    }

    #[test]
    fn window_climbs_towards_wmax_in_a_binary_search() {
        // Simulate rounds of cwnd ACKs (1 packet each) after a loss at 1000.
        let mut b = Bic::default();
        let mut t = tp();
        t.cwnd = 1000;
        t.ssthresh = b.ssthresh(&t);
        t.cwnd = t.ssthresh;
        let mut prev = t.cwnd;
        let mut incs = vec![];
        for r in 0..25 {
            t.now_ns = (r as u64) * 100_000_000;
            for _ in 0..t.cwnd {
                b.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_ns: 100_000_000, in_flight: 0 });
                b.cong_avoid(&mut t, 1);
            }
            incs.push(t.cwnd - prev);
            prev = t.cwnd;
        }
        // Far from W_max the step is the (ACK-ratio scaled) max increment,
        // ~2 x 16; it shrinks as cwnd approaches W_max, where cwnd plateaus.
        assert!((28..=36).contains(&incs[0]), "first step {}", incs[0]);
        assert!((990..=1010).contains(&t.cwnd), "cwnd {}", t.cwnd);
        assert!(incs[20..].iter().all(|&i| i <= 2), "steps {incs:?}");
    }

    #[test]
    fn rto_resets_state() {
        let mut b = with_wmax(500);
        let mut t = tp();
        b.set_state(&mut t, CaState::Recovery);
        assert_eq!(b.last_max_cwnd, 500);
        b.set_state(&mut t, CaState::Loss);
        assert_eq!(b.last_max_cwnd, 0);
    }
}
