//! YeAH-TCP (Baiocchi, Castellani, Vacirca), modelled on Linux `tcp_yeah.c`.
//!
//! Algorithm (A. Baiocchi, A. P. Castellani, F. Vacirca, "YeAH-TCP: Yet
//! Another Highspeed TCP", PFLDnet 2007): a Vegas-style queue estimate picks
//! one of two modes once per RTT:
//!   - per RTT (when the ACK passes `beg_snd_nxt`, with > 2 RTT samples):
//!     RTT = min sample of the last RTT, `Q = cwnd (RTT - BaseRTT) / RTT`
//!     (packets this flow keeps queued);
//!   - "fast" mode if `Q <= alpha` (80 packets) and the queueing delay
//!     `RTT - BaseRTT <= BaseRTT / phy` (phy = 8): Scalable's increase
//!     (`tcp_cong_avoid_ai(min(cwnd, 100))`: +1 % per RTT above 100 packets);
//!     after more than `zeta` = 50 fast RTTs `reno_count` resets to 2;
//!   - "slow" mode otherwise: Reno's increase, and *precautionary
//!     decongestion*: if `Q > alpha` (and cwnd > `reno_count`) cwnd drops by
//!     `min(Q / gamma, cwnd / 2^epsilon)` (gamma = 1, epsilon = 1) but not
//!     below `reno_count`, and ssthresh follows; `reno_count` (an estimate
//!     of a competing Reno flow's window) is set to cwnd/2 on the first slow
//!     RTT and grows by 1 per further slow RTT; `doing_reno_now` counts the
//!     consecutive slow RTTs;
//!   - on loss: if fewer than `rho` = 16 consecutive slow RTTs, cut by the
//!     last Q, clamped to [cwnd/8, cwnd/2] (`delta` = 3: at least 1/8);
//!     otherwise (competing with Reno) halve; `reno_count` halves (>= 2);
//!   - RTT bookkeeping is Vegas's (`tcp_vegas_pkts_acked`, `_state`,
//!     `_cwnd_event`): BaseRTT = min RTT ever (µs + 1), reset on restart
//!     after idle; the per-RTT sample window restarts on entering Open.
//!
//! Sources: Baiocchi et al. 2007; Linux net/ipv4/tcp_yeah.c (A. P.
//! Castellani) with net/ipv4/tcp_vegas.c for the RTT bookkeeping.
//! Parameters (`YeahConfig`, Linux module parameters, defaults = Linux's):
//! alpha `ALPHA_PKTS` 80, gamma `GAMMA` 1, delta `DELTA_SHIFT` 3, epsilon
//! `EPSILON_SHIFT` 1, phy `PHY` 8, rho `RHO_RTTS` 16, zeta `ZETA_RTTS` 50.
//! Constants: Scalable `AI_CNT` 100 packets; cwnd clamp `u32::MAX / 128`.
//! Simplifications: Vegas's `beg_snd_una`/`beg_snd_cwnd` (written but not
//! read by YeAH) are not kept; the Vegas state lives in this file.

use super::{AckSample, CaEvent, CaState, CongestionControl, TcpCc};

/// Max packets this flow may queue in fast mode (Linux `TCP_YEAH_ALPHA`).
pub const ALPHA_PKTS: u32 = 80;
/// Fraction of the queue removed per RTT in decongestion (`TCP_YEAH_GAMMA`).
pub const GAMMA: u32 = 1;
/// On loss cut at least cwnd >> 3 (`TCP_YEAH_DELTA`).
pub const DELTA_SHIFT: u32 = 3;
/// Decongestion removes at most cwnd >> 1 (`TCP_YEAH_EPSILON`).
pub const EPSILON_SHIFT: u32 = 1;
/// Fast mode needs queueing delay <= BaseRTT / 8 (`TCP_YEAH_PHY`).
pub const PHY: u32 = 8;
/// Consecutive slow RTTs after which a loss halves (`TCP_YEAH_RHO`).
pub const RHO_RTTS: u32 = 16;
/// Fast RTTs after which `reno_count` resets (`TCP_YEAH_ZETA`).
pub const ZETA_RTTS: u32 = 50;
/// Scalable's ACKed packets per +1 cwnd (`TCP_SCALABLE_AI_CNT`).
const SCALABLE_AI_CNT_PKTS: u32 = 100;
/// Cap on cwnd for the MD arithmetic, packets.
const CWND_CLAMP_PKTS: u32 = u32::MAX / 128;
/// "No sample" marker for RTTs, µs.
const NO_RTT_US: u32 = 0x7fff_ffff;

#[derive(Debug, Clone)]
pub struct Yeah {
    // Vegas bookkeeping.
    /// `snd_nxt` at the start of the current RTT, packets.
    beg_snd_nxt: u64,
    /// RTT samples in the current RTT.
    cnt_rtt: u32,
    /// Minimum RTT of the current RTT, µs (+1).
    min_rtt_us: u32,
    /// Minimum RTT ever, µs (+1).
    base_rtt_us: u32,
    // YeAH.
    /// Queue estimate of the last RTT, packets.
    last_q: u32,
    /// Consecutive slow (Reno) RTTs; 0 = fast mode.
    doing_reno_now: u32,
    /// Estimated window of a competing Reno flow, packets.
    reno_count: u32,
    /// Fast RTTs since the last reset.
    fast_count: u32,
    params: YeahConfig,
}

default_is!(Yeah = Yeah::with_params(YeahConfig::default()));

impl Yeah {
    pub fn with_params(params: YeahConfig) -> Yeah {
        Yeah {
            beg_snd_nxt: 0,
            cnt_rtt: 0,
            min_rtt_us: NO_RTT_US,
            base_rtt_us: NO_RTT_US,
            last_q: 0,
            doing_reno_now: 0,
            reno_count: 2,
            fast_count: 0,
            params,
        }
    }

    /// In fast (Scalable) mode.
    pub fn fast_mode(&self) -> bool {
        self.doing_reno_now == 0
    }

    /// `vegas_enable`: start a fresh RTT sample window.
    fn vegas_enable(&mut self, tp: &TcpCc) {
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt_us = NO_RTT_US;
    }

    /// `tcp_vegas_init`.
    fn vegas_init(&mut self, tp: &TcpCc) {
        self.base_rtt_us = NO_RTT_US;
        self.vegas_enable(tp);
    }

    /// End of an RTT: pick the mode, maybe decongest.
    fn per_rtt(&mut self, tp: &mut TcpCc) {
        if self.cnt_rtt > 2 {
            let rtt = self.min_rtt_us;
            let base = self.base_rtt_us;
            let qdelay = rtt.saturating_sub(base);
            let queue = (u64::from(tp.cwnd) * u64::from(qdelay) / u64::from(rtt.max(1))) as u32;
            let p = &self.params;
            if queue > p.alpha_pkts || qdelay > base / p.phy {
                if queue > p.alpha_pkts && tp.cwnd > self.reno_count {
                    let reduction = (queue / p.gamma).min(tp.cwnd >> p.epsilon_shift);
                    tp.cwnd = (tp.cwnd - reduction).max(self.reno_count);
                    tp.ssthresh = tp.cwnd;
                }
                if self.reno_count <= 2 {
                    self.reno_count = (tp.cwnd >> 1).max(2);
                } else {
                    self.reno_count += 1;
                }
                self.doing_reno_now = (self.doing_reno_now + 1).min(0xff_ffff);
            } else {
                self.fast_count += 1;
                if self.fast_count > self.params.zeta {
                    self.reno_count = 2;
                    self.fast_count = 0;
                }
                self.doing_reno_now = 0;
            }
            self.last_q = queue;
        }
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt_us = NO_RTT_US;
    }
}

impl CongestionControl for Yeah {
    hooks!(pkts_acked);
    fn name(&self) -> &'static str {
        "yeah"
    }

    fn init(&mut self, tp: &mut TcpCc) {
        *self = Yeah::with_params(self.params.clone());
        self.vegas_init(tp);
        tp.cwnd_clamp = tp.cwnd_clamp.min(CWND_CLAMP_PKTS);
    }

    fn pkts_acked(&mut self, _tp: &mut TcpCc, sample: &AckSample) {
        if sample.rtt_ns < 0 {
            return;
        }
        let vrtt = u32::try_from(sample.rtt_ns as u64 / 1000).unwrap_or(NO_RTT_US - 1).min(NO_RTT_US - 1) + 1;
        self.base_rtt_us = self.base_rtt_us.min(vrtt);
        self.min_rtt_us = self.min_rtt_us.min(vrtt);
        self.cnt_rtt += 1;
    }

    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Open {
            self.vegas_enable(tp);
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.vegas_init(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, mut acked: u32) {
        if !tp.is_cwnd_limited {
            return;
        }
        let mut grow = true;
        if tp.in_slow_start() {
            acked = tp.slow_start(acked);
            grow = acked > 0;
        }
        if grow {
            let w = if self.fast_mode() { tp.cwnd.min(SCALABLE_AI_CNT_PKTS) } else { tp.cwnd };
            tp.cong_avoid_ai(w, acked);
        }
        if tp.snd_una > self.beg_snd_nxt {
            self.per_rtt(tp);
        }
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        let cwnd = tp.cwnd;
        let reduction = if self.doing_reno_now < self.params.rho {
            self.last_q.min((cwnd >> 1).max(2)).max(cwnd >> self.params.delta_shift)
        } else {
            (cwnd >> 1).max(2)
        };
        self.fast_count = 0;
        self.reno_count = (self.reno_count >> 1).max(2);
        cwnd.saturating_sub(reduction).max(2)
    }
}

crate::declare_cca! {
    /// YeAH's parameters: Linux `tcp_yeah` module parameters, defaults = Linux's.
    pub struct YeahConfig {
        /// Most packets this flow may queue and stay in fast mode (Linux `TCP_YEAH_ALPHA`).
        alpha_pkts: u32 = ALPHA_PKTS, Range::Any;
        /// Decongestion removes queue / gamma packets per RTT (Linux `TCP_YEAH_GAMMA`).
        gamma: u32 = GAMMA, Range::closed(1.0, 1_000_000.0);
        /// A loss in fast mode cuts at least cwnd / 2^delta_shift (Linux `TCP_YEAH_DELTA`).
        delta_shift: u32 = DELTA_SHIFT, Range::closed(0.0, 31.0);
        /// Decongestion removes at most cwnd / 2^epsilon_shift per RTT (Linux `TCP_YEAH_EPSILON`).
        epsilon_shift: u32 = EPSILON_SHIFT, Range::closed(0.0, 31.0);
        /// Fast mode needs queueing delay <= BaseRTT / phy (Linux `TCP_YEAH_PHY`).
        phy: u32 = PHY, Range::closed(1.0, 1_000_000.0);
        /// Consecutive slow RTTs after which a loss halves cwnd (Linux `TCP_YEAH_RHO`).
        rho: u32 = RHO_RTTS, Range::Any;
        /// Fast RTTs after which the Reno-window estimate resets (Linux `TCP_YEAH_ZETA`).
        zeta: u32 = ZETA_RTTS, Range::Any;
    }
    cca Yeah = "yeah", "YeAH-TCP: Baiocchi, Castellani, Vacirca, PFLDnet 2007; Linux net/ipv4/tcp_yeah.c";
    build = |p, _seed| Yeah::with_params(p.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{tp, tp_at};

    const MS: i64 = 1_000_000;

    /// One RTT of `cwnd` single-packet ACKs, all with the given RTT sample.
    fn round(y: &mut Yeah, t: &mut TcpCc, rtt_ms: i64) {
        let n = t.cwnd;
        t.snd_nxt = t.snd_una + u64::from(n);
        for _ in 0..n {
            t.snd_una += 1;
            y.pkts_acked(t, &AckSample { pkts_acked: 1, rtt_ns: rtt_ms * MS, in_flight: t.cwnd });
            y.cong_avoid(t, 1);
        }
        // The ACK that passes beg_snd_nxt closes the RTT.
        t.snd_una += 1;
        y.pkts_acked(t, &AckSample { pkts_acked: 1, rtt_ns: rtt_ms * MS, in_flight: t.cwnd });
        y.cong_avoid(t, 1);
    }

    fn flow(cwnd: u32) -> (Yeah, TcpCc) {
        let mut t = tp_at(cwnd, 2);
        let mut y = Yeah::default();
        y.init(&mut t);
        (y, t)
    }

    #[test]
    fn fast_mode_is_scalable_while_queueing_delay_is_small() {
        let (mut y, mut t) = flow(1000);
        round(&mut y, &mut t, 50); // base 50 ms
        round(&mut y, &mut t, 53); // +3 ms < 50/8: fast
        assert!(y.fast_mode());
        // Scalable: +1 per 100 ACKed packets -> ~ +10 per round of 1000.
        let before = t.cwnd;
        round(&mut y, &mut t, 53);
        assert!((10..=11).contains(&(t.cwnd - before)), "grew {}", t.cwnd - before);
    }

    #[test]
    fn slow_mode_is_reno_when_queueing_delay_exceeds_base_over_eight() {
        let (mut y, mut t) = flow(200);
        round(&mut y, &mut t, 50);
        round(&mut y, &mut t, 57); // +7 ms > 6.25 ms: slow; Q = 200*7/57 = 24 < 80
        assert!(!y.fast_mode());
        assert_eq!(y.reno_count, t.cwnd / 2);
        let before = t.cwnd;
        round(&mut y, &mut t, 57);
        assert_eq!(t.cwnd - before, 1); // Reno: +1 per window
                                        // Back to fast when the queue drains.
        round(&mut y, &mut t, 50);
        assert!(y.fast_mode());
    }

    #[test]
    fn precautionary_decongestion_removes_the_excess_queue() {
        let (mut y, mut t) = flow(1000);
        round(&mut y, &mut t, 50);
        let cwnd = t.cwnd;
        round(&mut y, &mut t, 60); // Q = cwnd * 10 / 60 ~ 170 > 80
        assert!(!y.fast_mode());
        assert!(y.last_q >= 160 && y.last_q <= 175, "Q {}", y.last_q);
        assert_eq!(t.ssthresh, t.cwnd);
        // cwnd drops by Q (~170; Scalable added ~10 during the round).
        assert!(t.cwnd < cwnd - 150, "cwnd {cwnd} -> {}", t.cwnd);
        assert_eq!(y.reno_count, t.cwnd / 2);
    }

    #[test]
    fn loss_cuts_by_queue_between_an_eighth_and_a_half() {
        let mut t = tp();
        let mut y = Yeah::default();
        t.cwnd = 400;
        y.last_q = 10; // small queue: cut cwnd/8
        assert_eq!(y.ssthresh(&t), 350);
        y.last_q = 100; // in range: cut Q
        assert_eq!(y.ssthresh(&t), 300);
        y.last_q = 300; // at most half
        assert_eq!(y.ssthresh(&t), 200);
        y.doing_reno_now = RHO_RTTS; // long Reno phase: halve
        y.last_q = 10;
        assert_eq!(y.ssthresh(&t), 200);
    }

    #[test]
    fn larger_phy_leaves_fast_mode_at_a_smaller_delay_and_smaller_delta_cuts_more() {
        // +5 ms over a 50 ms base: <= 50/8 (fast with phy 8), > 50/16 (slow with phy 16).
        let fast_after = |phy: u32| {
            let mut t = tp_at(200, 2);
            let mut y = Yeah::with_params(YeahConfig { phy, ..YeahConfig::default() });
            y.init(&mut t);
            round(&mut y, &mut t, 50);
            round(&mut y, &mut t, 55);
            y.fast_mode()
        };
        assert!(fast_after(8));
        assert!(!fast_after(16));
        // A small queue: the loss cut is cwnd >> delta_shift, 400/8 = 50 by default, 400/4 = 100 with 2.
        let mut t = tp();
        t.cwnd = 400;
        let mut y = Yeah::with_params(YeahConfig { delta_shift: 2, ..YeahConfig::default() });
        y.last_q = 10;
        assert_eq!(y.ssthresh(&t), 300);
    }
}
