//! TCP Prague: the reference scalable congestion control of L4S.
//!
//! Algorithm (draft-briscoe-iccrg-prague-congestion-control; RFC 9331 section
//! 4.3 "Prague L4S requirements"; L4STeam/linux net/ipv4/tcp_prague.c):
//!   - ECN: data is ECT(1) (the L4S identifier) with per-packet CE feedback
//!     (the flow defaults to the scalable ECN mode, `needs_ecn`).
//!   - Scalable response: alpha = EWMA (g = 1/16) of the CE fraction per RTT,
//!     and on CE feedback, at most once per RTT, cwnd <- cwnd (1 - alpha / 2),
//!     as DCTCP, but with a 20-bit alpha (tcp_prague.c PRAGUE_ALPHA_BITS = 20)
//!     so that small CE fractions are not lost to rounding as in DCTCP's
//!     10-bit alpha (see cc/dctcp.rs).
//!   - Loss: halve, as Reno (Linux >= 5.1 DCTCP behaviour: dctcp.rs `LossHalving`).
//!   - Additive increase with the RTT-independence option (on for `prague`,
//!     off for `prague-rttdep`): a flow whose smoothed RTT R is below the
//!     reference R_ref = 25 ms grows by (R / R_ref)^2 segments per RTT instead
//!     of 1, so that its rate grows as fast (in bit/s per second) as a 25 ms
//!     flow's, whatever its RTT. Flows with R >= R_ref grow 1 segment per RTT.
//!   - Pacing always on (Prague requirement; Linux sets SK_PACING_NEEDED).
//!
//! Simplifications (docs/fidelity.md): cwnd is an integer number of segments
//! (Linux Prague keeps a fractional window); no AccECN (the DCTCP-style
//! receiver echo gives the same per-packet CE count on our lossless ACK path);
//! no classic-ECN-AQM fallback detection; slow start is Reno's (no RTT
//! scaling in slow start, as in tcp_prague.c).

use super::dctcp::{loss_halving_hooks, LossHalving, MIN_SSTHRESH_PKTS, SHIFT_G};
use super::{CaEvent, CaState, CeWindow, CongestionControl, TcpCc};

/// Reference RTT of the RTT-independence option (draft: 25 ms).
pub const RTT_REF_NS: u64 = 25_000_000;
/// Fixed-point one for the additive-increase accumulator.
const FP_ONE: u64 = 1 << 20;
/// Bits of alpha's fixed point (tcp_prague.c PRAGUE_ALPHA_BITS).
pub const ALPHA_BITS: u32 = 20;
/// alpha = 1.
pub const MAX_ALPHA: u64 = 1 << ALPHA_BITS;

#[derive(Debug, Clone)]
pub struct Prague {
    /// alpha x 2^20.
    pub alpha: u64,
    window: CeWindow,
    loss: LossHalving,
    rtt_independence: bool,
    /// Fractional cwnd growth, in 1/FP_ONE segments.
    ai_acc: u64,
}

impl Prague {
    pub fn new(rtt_independence: bool) -> Self {
        Prague { alpha: MAX_ALPHA, window: CeWindow::default(), loss: LossHalving::default(), rtt_independence, ai_acc: 0 }
    }

    /// Once per window: alpha <- alpha - alpha / 16 + F / 16.
    fn update_alpha(&mut self, tp: &TcpCc) {
        let Some((delivered, ce)) = self.window.ended(tp) else {
            return;
        };
        let mut alpha = self.alpha - (self.alpha >> SHIFT_G);
        alpha += (ce << (ALPHA_BITS - SHIFT_G)) / delivered;
        self.alpha = alpha.min(MAX_ALPHA);
        self.window.reset(tp);
    }

    /// Segments added per RTT of congestion avoidance, x FP_ONE.
    pub fn ai_per_rtt_fp(&self, srtt_ns: u64) -> u64 {
        if !self.rtt_independence || srtt_ns == 0 || srtt_ns >= RTT_REF_NS {
            return FP_ONE;
        }
        let r = srtt_ns as u128;
        ((FP_ONE as u128 * r * r) / (RTT_REF_NS as u128 * RTT_REF_NS as u128)).max(1) as u64
    }
}

impl CongestionControl for Prague {
    hooks!(in_ack_event);
    fn name(&self) -> &'static str {
        if self.rtt_independence {
            "prague"
        } else {
            "prague-rttdep"
        }
    }

    fn init(&mut self, tp: &mut TcpCc) {
        self.window.reset(tp);
        self.alpha = MAX_ALPHA;
        self.ai_acc = 0;
    }

    /// The scalable cut: cwnd (1 - alpha / 2), rounded as DCTCP (cut rounded down).
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        self.ai_acc = 0;
        self.loss.remember(tp);
        let cut = ((tp.cwnd as u64 * self.alpha) >> (ALPHA_BITS + 1)) as u32;
        (tp.cwnd - cut).max(MIN_SSTHRESH_PKTS)
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        let Some(acked) = tp.after_slow_start(acked) else { return };
        // cwnd += ai / cwnd per ACKed segment, ai = segments per RTT.
        let ai = self.ai_per_rtt_fp(tp.srtt_ns);
        if ai == FP_ONE {
            let w = tp.cwnd;
            tp.cong_avoid_ai(w, acked);
            return;
        }
        self.ai_acc += acked as u64 * ai / tp.cwnd.max(1) as u64;
        if self.ai_acc >= FP_ONE {
            let add = self.ai_acc / FP_ONE;
            self.ai_acc -= add * FP_ONE;
            tp.cwnd = (tp.cwnd as u64 + add).min(tp.cwnd_clamp as u64) as u32;
        }
    }

    fn in_ack_event(&mut self, tp: &mut TcpCc, _ece: bool) {
        self.update_alpha(tp);
    }

    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        self.loss.on_state(tp, new_state);
    }

    loss_halving_hooks!(loss);

    needs!(ecn, pacing);
}

crate::declare_params! {
    /// TCP Prague's parameters.
    pub struct PragueConfig {
        /// RTT-independent additive increase (as if the RTT were 25 ms when it is shorter); false = Reno's increase.
        rtt_independence: bool = true, Range::Any;
    }
}

impl super::Cca for Prague {
    type Params = PragueConfig;
    const NAME: &'static str = "prague";
    const SOURCE: &'static str =
        "TCP Prague (L4S): draft-briscoe-iccrg-prague-congestion-control; scalable ECN, RTT-independent increase (25 ms)";
    const VARIANTS: &'static [super::Variant] = &[super::Variant {
        name: "prague-rttdep",
        params: r#"{"rtt_independence": false}"#,
        doc: "TCP Prague without RTT-independence (Reno additive increase)",
        aliases: &[],
    }];
    fn build(p: &PragueConfig, _seed: u64) -> Box<dyn CongestionControl> {
        Box::new(Prague::new(p.rtt_independence))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{ack_each, tp, tp_at};

    /// cwnd after `rtts` rounds of congestion avoidance, one ACK per segment.
    fn grow(p: &mut Prague, srtt_ns: u64, rtts: u32) -> u32 {
        let mut t = tp_at(100, 50);
        t.srtt_ns = srtt_ns;
        for _ in 0..rtts {
            let w = t.cwnd;
            ack_each(p, &mut t, w);
        }
        t.cwnd
    }

    #[test]
    fn rtt_independence_scales_increase_by_rtt_ratio_squared() {
        // 5 ms: (5/25)^2 = 0.04 segments per RTT -> +1 segment per 25 RTTs = 125 ms.
        // Rate growth: (1 seg / 5 ms) per 125 ms = 1/625 seg/ms^2, the same as a
        // 25 ms flow's (1 seg / 25 ms) per 25 ms.
        let mut p = Prague::new(true);
        assert_eq!(p.ai_per_rtt_fp(5_000_000), FP_ONE / 25);
        assert_eq!(grow(&mut p, 5_000_000, 24), 100);
        let mut p = Prague::new(true);
        assert_eq!(grow(&mut p, 5_000_000, 26), 101);
        // At or above 25 ms: Reno's one segment per RTT.
        let mut p = Prague::new(true);
        assert_eq!(grow(&mut p, 50_000_000, 10), 110);
        // Without the option: one segment per RTT at any RTT.
        let mut p = Prague::new(false);
        assert_eq!(grow(&mut p, 5_000_000, 10), 110);
    }

    #[test]
    fn scalable_cut_and_loss_halving_follow_dctcp() {
        let mut t = tp();
        let mut p = Prague::new(true);
        p.init(&mut t);
        t.cwnd = 100;
        assert_eq!(p.ssthresh(&t), 50, "alpha starts at 1");
        p.alpha = MAX_ALPHA / 4;
        assert_eq!(p.ssthresh(&t), 88, "cwnd (1 - alpha/2) = 100 (1 - 1/8) = 87.5 -> 88 (the cut is rounded down)");
        t.ssthresh = p.ssthresh(&t);
        p.set_state(&mut t, CaState::Recovery);
        assert_eq!(t.ssthresh, 50);
        assert!(p.needs_ecn() && p.needs_pacing());
    }

    #[test]
    fn twenty_bit_alpha_tracks_small_ce_fractions() {
        // F = 8/150 ~ 0.053 per window: alpha converges to F (DCTCP's 10-bit
        // alpha would be trapped near 3/1024 here).
        let mut t = tp();
        let mut p = Prague::new(true);
        p.init(&mut t);
        for _ in 0..300 {
            t.delivered += 150;
            t.delivered_ce += 8;
            t.snd_una = t.snd_nxt;
            t.snd_nxt += 150;
            p.in_ack_event(&mut t, true);
        }
        let a = p.alpha as f64 / MAX_ALPHA as f64;
        assert!((a - 8.0 / 150.0).abs() < 0.002, "alpha {a}");
    }
}
