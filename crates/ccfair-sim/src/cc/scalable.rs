//! Scalable TCP (Kelly), modelled on Linux `tcp_scalable.c`.
//!
//! Algorithm (T. Kelly, "Scalable TCP: Improving Performance in Highspeed
//! Wide Area Networks", ACM SIGCOMM CCR 33(2), 2003):
//!   - congestion avoidance: cwnd += a per ACKed packet with a = 0.01, i.e.
//!     +1 per 100 ACKed packets, independent of cwnd (an MIMD law: +1 % per
//!     RTT). Linux writes this as `tcp_cong_avoid_ai(tp, min(cwnd, 100), acked)`,
//!     so below 100 packets it grows like Reno (+1 per cwnd ACKed packets)
//!     — the paper's "legacy window" below which Scalable behaves like Reno;
//!   - on loss: cwnd <- cwnd (1 - b) with b = 0.125
//!     (`ssthresh = max(cwnd - cwnd >> 3, 2)`);
//!   - slow start as Reno, the leftover of an ACK that crosses ssthresh goes
//!     to congestion avoidance.
//!
//! Sources: Kelly 2003; Linux net/ipv4/tcp_scalable.c (J. Heffner).
//! Parameters (`ScalableConfig`, defaults = Linux's constants): `ai_cnt`
//! = `AI_CNT_PKTS` = 100 (a = 1/100 per packet), `md_shift` = `MD_SHIFT` = 3
//! (b = 1/8). Constant: minimum ssthresh 2 packets.
//! Simplifications: none beyond the sender's (Linux undo uses the trait
//! default, `tcp_reno_undo_cwnd`).

use super::{CongestionControl, TcpCc};

/// ACKed packets per +1 cwnd once cwnd >= this (Linux `TCP_SCALABLE_AI_CNT`): a = 0.01.
pub const AI_CNT_PKTS: u32 = 100;
/// Multiplicative decrease b = 1 / 2^3 = 0.125 (Linux `TCP_SCALABLE_MD_SCALE`).
pub const MD_SHIFT: u32 = 3;
/// Minimum ssthresh after a loss, packets.
const MIN_SSTHRESH_PKTS: u32 = 2;

#[derive(Debug, Clone, Default)]
pub struct Scalable {
    params: ScalableConfig,
}

impl Scalable {
    pub fn with_params(params: ScalableConfig) -> Scalable {
        Scalable { params }
    }
}

impl CongestionControl for Scalable {
    hooks!();
    fn name(&self) -> &'static str {
        "scalable"
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        let Some(acked) = tp.after_slow_start(acked) else { return };
        let w = tp.cwnd.min(self.params.ai_cnt_pkts);
        tp.cong_avoid_ai(w, acked);
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        (tp.cwnd - (tp.cwnd >> self.params.md_shift)).max(MIN_SSTHRESH_PKTS)
    }
}

crate::declare_cca! {
    /// Scalable TCP's parameters: Linux `tcp_scalable` constants, defaults = Linux's.
    pub struct ScalableConfig {
        /// ACKed packets per +1 cwnd once cwnd >= this, a = 1/ai_cnt (Linux `TCP_SCALABLE_AI_CNT`).
        ai_cnt_pkts: u32 = AI_CNT_PKTS, Range::closed(1.0, 1_000_000.0);
        /// Loss cuts cwnd by b = 1/2^md_shift (Linux `TCP_SCALABLE_MD_SCALE`).
        md_shift: u32 = MD_SHIFT, Range::closed(1.0, 16.0);
    }
    cca Scalable = "scalable", "Scalable TCP: Kelly, CCR 2003; Linux net/ipv4/tcp_scalable.c";
    build = |p, _seed| Scalable::with_params(p.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{ack_each, cwnds_after, tp, tp_at};

    #[test]
    fn large_window_grows_one_per_hundred_acked_packets() {
        // Kelly 2003: a = 0.01 per ACK, independent of cwnd; one RTT's worth of ACKs (cwnd
        // packets) adds 1 %: +10.
        assert_eq!(cwnds_after(Scalable::default(), 1000, 500, &[99, 1, 1001]), [1000, 1001, 1011]);
    }

    #[test]
    fn small_window_grows_like_reno() {
        assert_eq!(cwnds_after(Scalable::default(), 50, 10, &[49, 1]), [50, 51]);
    }

    #[test]
    fn loss_cuts_one_eighth() {
        let mut t = tp();
        t.cwnd = 1000;
        assert_eq!(Scalable::default().ssthresh(&t), 875);
        t.cwnd = 80;
        assert_eq!(Scalable::default().ssthresh(&t), 70);
        t.cwnd = 2;
        assert_eq!(Scalable::default().ssthresh(&t), 2);
    }

    #[test]
    fn slow_start_leftover_goes_to_avoidance_and_app_limited_does_not_grow() {
        let mut t = tp_at(198, 200);
        let mut s = Scalable::default();
        s.cong_avoid(&mut t, 4);
        assert_eq!((t.cwnd, t.cwnd_cnt), (200, 2));
        t.is_cwnd_limited = false;
        s.cong_avoid(&mut t, 500);
        assert_eq!(t.cwnd, 200);
    }

    #[test]
    fn larger_ai_count_grows_slower_and_larger_md_shift_cuts_less() {
        // a = 1/ai_cnt: with ai_cnt = 200 one window of 1000 ACKs adds +5, not +10.
        let grow = |ai_cnt_pkts: u32| {
            let mut t = tp_at(1000, 500);
            let mut s = Scalable::with_params(ScalableConfig { ai_cnt_pkts, ..ScalableConfig::default() });
            ack_each(&mut s, &mut t, 1000);
            t.cwnd
        };
        assert_eq!(grow(100), 1010);
        assert_eq!(grow(200), 1005);
        // b = 1/2^md_shift: shift 4 cuts 1/16 (1000 -> 938 = 1000 - 62), not 1/8.
        let mut t = tp();
        t.cwnd = 1000;
        let mut s = Scalable::with_params(ScalableConfig { md_shift: 4, ..ScalableConfig::default() });
        assert_eq!(s.ssthresh(&t), 938);
    }
}
