//! TCP Veno (Fu & Liew), modelled on Linux `tcp_veno.c`.
//!
//! Algorithm (C. P. Fu, S. C. Liew, "TCP Veno: TCP enhancement for
//! transmission over wireless access networks", IEEE JSAC 21(2), 2003):
//! Reno, plus a Vegas-style estimate of the flow's own backlog in the
//! bottleneck queue, N = cwnd (RTT - BaseRTT) / RTT, to tell congestive
//! from random loss:
//!   - N < beta = 3 packets: the path is not congested; a loss is taken as
//!     random (wireless) and cwnd is cut to 4/5 only; cwnd grows as Reno;
//!   - N >= beta: congestive state; a loss halves cwnd, and the additive
//!     increase slows to +1 every *other* RTT;
//!   - BaseRTT is the smallest RTT ever; RTT is the smallest sample since the
//!     previous ACK (Linux resets `minrtt` at the end of every `cong_avoid`,
//!     so in practice it is this ACK's RTT sample); N is kept doubled
//!     (`V_PARAM_SHIFT` = 1) in `diff`;
//!   - Veno's rules apply only in Open state and after more than 2 RTT
//!     samples (Linux never resets the u16 sample counter); otherwise Reno;
//!   - restart after idle (`CA_EVENT_TX_START` / `CWND_RESTART`) forgets BaseRTT.
//!
//! Sources: Fu & Liew 2003; Linux net/ipv4/tcp_veno.c (B. Zhou, C. P. Fu).
//! Parameter (`VenoConfig`): beta = 3 packets (6 in half-packets; Linux
//! module parameter `beta`). Constants: cuts 4/5 and 1/2,
//! minimum cwnd and ssthresh 2 packets; RTTs in µs (+1, never zero).
//! Simplifications: none beyond the sender's.

use super::{AckSample, CaEvent, CaState, CongestionControl, TcpCc};

/// Fixed point of `diff`/`beta`: one fractional bit (Linux `V_PARAM_SHIFT`).
const V_PARAM_SHIFT: u32 = 1;
/// Default backlog threshold beta = 3 packets (Linux `beta` = 3 << V_PARAM_SHIFT half-packets).
pub const BETA_PKTS: f64 = 3.0;
/// "No sample" marker for RTTs, µs (Linux 0x7fffffff).
const NO_RTT_US: u32 = 0x7fff_ffff;

#[derive(Debug, Clone)]
pub struct Veno {
    /// Veno's rules are on (Open state).
    doing_veno_now: bool,
    /// RTT samples taken (u16, never reset, as in Linux).
    cntrtt: u16,
    /// Minimum RTT since the last `cong_avoid`, µs (+1).
    minrtt_us: u32,
    /// Minimum RTT ever, µs (+1).
    basertt_us: u32,
    /// In the congestive state: grow on this window of ACKs (toggles).
    inc: bool,
    /// Backlog estimate N, in half-packets.
    diff: u32,
    /// Backlog threshold beta, in half-packets (from `VenoConfig::beta_pkts`).
    beta_half_pkts: u32,
}

impl Default for Veno {
    fn default() -> Self {
        Self::new()
    }
}

impl Veno {
    pub fn new() -> Veno {
        Veno::with_params(&VenoConfig::default())
    }

    pub fn with_params(p: &VenoConfig) -> Veno {
        let beta_half_pkts = (p.beta_pkts * f64::from(1u32 << V_PARAM_SHIFT)).round() as u32;
        Veno { doing_veno_now: true, cntrtt: 0, minrtt_us: NO_RTT_US, basertt_us: NO_RTT_US, inc: true, diff: 0, beta_half_pkts }
    }

    /// `tcp_veno_init`.
    fn restart(&mut self) {
        self.basertt_us = NO_RTT_US;
        self.inc = true;
        self.enable();
    }

    fn enable(&mut self) {
        self.doing_veno_now = true;
        self.minrtt_us = NO_RTT_US;
    }

    /// The backlog estimate N in packets (from the last `cong_avoid`).
    pub fn backlog_pkts(&self) -> f64 {
        f64::from(self.diff) / f64::from(1u32 << V_PARAM_SHIFT)
    }

    /// Whether the last estimate said "congestive" (N >= beta).
    pub fn congestive(&self) -> bool {
        self.diff >= self.beta_half_pkts
    }
}

impl CongestionControl for Veno {
    hooks!(pkts_acked);
    fn name(&self) -> &'static str {
        "veno"
    }

    fn init(&mut self, _tp: &mut TcpCc) {
        self.restart();
    }

    fn pkts_acked(&mut self, _tp: &mut TcpCc, sample: &AckSample) {
        if sample.rtt_ns < 0 {
            return;
        }
        let vrtt = u32::try_from(sample.rtt_ns as u64 / 1000).unwrap_or(NO_RTT_US - 1).min(NO_RTT_US - 1) + 1;
        self.basertt_us = self.basertt_us.min(vrtt);
        self.minrtt_us = self.minrtt_us.min(vrtt);
        self.cntrtt = self.cntrtt.wrapping_add(1);
    }

    fn set_state(&mut self, _tp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable();
        } else {
            self.doing_veno_now = false;
        }
    }

    fn cwnd_event(&mut self, _tp: &mut TcpCc, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.restart();
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, mut acked: u32) {
        if !self.doing_veno_now {
            super::reno::reno_cong_avoid(tp, acked);
            return;
        }
        if !tp.is_cwnd_limited {
            return;
        }
        if self.cntrtt <= 2 {
            super::reno::reno_cong_avoid(tp, acked);
        } else {
            let rtt = u64::from(self.minrtt_us.max(1));
            // Expected window at the base RTT, doubled: cwnd * BaseRTT / RTT.
            let target = ((u64::from(tp.cwnd) * u64::from(self.basertt_us)) << V_PARAM_SHIFT) / rtt;
            self.diff = u32::try_from((u64::from(tp.cwnd) << V_PARAM_SHIFT).saturating_sub(target)).unwrap_or(u32::MAX);
            let mut done = false;
            if tp.in_slow_start() {
                acked = tp.slow_start(acked);
                done = acked == 0;
            }
            if !done {
                if self.diff < self.beta_half_pkts {
                    // Non-congestive: Reno, +1 per window.
                    let w = tp.cwnd;
                    tp.cong_avoid_ai(w, acked);
                } else if tp.cwnd_cnt >= tp.cwnd {
                    // Congestive: +1 every other window.
                    if self.inc && tp.cwnd < tp.cwnd_clamp {
                        tp.cwnd += 1;
                        self.inc = false;
                    } else {
                        self.inc = true;
                    }
                    tp.cwnd_cnt = 0;
                } else {
                    tp.cwnd_cnt += acked;
                }
            }
            tp.cwnd = tp.cwnd.clamp(2, tp.cwnd_clamp.max(2));
        }
        self.minrtt_us = NO_RTT_US;
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        if self.diff < self.beta_half_pkts {
            (tp.cwnd * 4 / 5).max(2) // random loss: cut 1/5
        } else {
            (tp.cwnd >> 1).max(2) // congestive loss: halve
        }
    }
}

crate::declare_cca! {
    /// Veno's parameters: Linux `tcp_veno` module parameter, default = Linux's.
    pub struct VenoConfig {
        /// Backlog N at or above which a loss is congestive (Linux `beta` = 3 << V_PARAM_SHIFT; used in half-packets).
        beta_pkts: f64 = BETA_PKTS, Range::closed(0.0, 1_000_000.0);
    }
    cca Veno = "veno", "Veno: Fu & Liew, IEEE JSAC 2003; Linux net/ipv4/tcp_veno.c";
    build = |p, _seed| Veno::with_params(p);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::tp;

    const MS: i64 = 1_000_000;

    /// A Veno flow in congestion avoidance at `cwnd` with base RTT 50 ms.
    fn flow(cwnd: u32) -> (Veno, TcpCc) {
        flow_with(cwnd, &VenoConfig::default())
    }

    fn flow_with(cwnd: u32, p: &VenoConfig) -> (Veno, TcpCc) {
        let mut t = tp();
        t.cwnd = cwnd;
        t.ssthresh = 2;
        let mut v = Veno::with_params(p);
        v.init(&mut t);
        for _ in 0..3 {
            v.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_ns: 50 * MS, in_flight: cwnd });
            v.cong_avoid(&mut t, 1);
        }
        t.cwnd = cwnd;
        t.cwnd_cnt = 0;
        (v, t)
    }

    fn ack(v: &mut Veno, t: &mut TcpCc, rtt_ms: i64) {
        v.pkts_acked(t, &AckSample { pkts_acked: 1, rtt_ns: rtt_ms * MS, in_flight: t.cwnd });
        v.cong_avoid(t, 1);
    }

    #[test]
    fn backlog_below_beta_means_random_loss_cut_to_four_fifths() {
        // N = 100 * (51 - 50) / 51 = 1.96 < 3.
        let (mut v, mut t) = flow(100);
        ack(&mut v, &mut t, 51);
        assert!(!v.congestive(), "N = {}", v.backlog_pkts());
        assert_eq!(v.ssthresh(&t), 80);
    }

    #[test]
    fn backlog_at_or_above_beta_means_congestive_loss_halves() {
        // N = 100 * (52 - 50) / 52 = 3.85 >= 3.
        let (mut v, mut t) = flow(100);
        ack(&mut v, &mut t, 52);
        assert!(v.congestive(), "N = {}", v.backlog_pkts());
        assert!((v.backlog_pkts() - 3.5).abs() < 0.6);
        assert_eq!(v.ssthresh(&t), 50);
    }

    #[test]
    fn congestive_state_grows_every_other_window() {
        let (mut v, mut t) = flow(100);
        // Four windows of ACKs at 60 ms (N = 16.7): +2, not +4.
        for _ in 0..404 {
            ack(&mut v, &mut t, 60);
        }
        assert_eq!(t.cwnd, 102);
        // Non-congestive: Reno, +1 per window.
        let (mut v, mut t) = flow(100);
        for _ in 0..100 {
            ack(&mut v, &mut t, 50);
        }
        assert_eq!(t.cwnd, 101);
    }

    #[test]
    fn reno_before_three_samples_and_outside_open() {
        let mut t = tp();
        t.cwnd = 100;
        t.ssthresh = 2;
        let mut v = Veno::new();
        v.init(&mut t);
        ack(&mut v, &mut t, 80);
        assert_eq!(v.diff, 0); // no estimate yet
        v.set_state(&mut t, CaState::Recovery);
        assert!(!v.doing_veno_now);
        v.set_state(&mut t, CaState::Open);
        assert!(v.doing_veno_now);
    }

    #[test]
    fn restart_after_idle_forgets_base_rtt() {
        let (mut v, mut t) = flow(100);
        assert_eq!(v.basertt_us, 50_001);
        v.cwnd_event(&mut t, CaEvent::TxStart);
        assert_eq!(v.basertt_us, NO_RTT_US);
    }

    #[test]
    fn larger_beta_takes_a_larger_backlog_for_random_loss() {
        // N = 100 * (52 - 50) / 52 = 3.85: congestive with beta 3 (halve), random with beta 5 (cut to 4/5).
        let (mut v, mut t) = flow_with(100, &VenoConfig { beta_pkts: 5.0 });
        ack(&mut v, &mut t, 52);
        assert!(!v.congestive(), "N = {}", v.backlog_pkts());
        assert_eq!(v.ssthresh(&t), 80);
    }
}
