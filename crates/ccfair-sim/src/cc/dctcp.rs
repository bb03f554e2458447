//! DCTCP: Data Center TCP, a scalable ECN congestion control.
//!
//! Algorithm (RFC 8257 sections 3.3-3.5; Linux net/ipv4/tcp_dctcp.c):
//!   - Once per window of data (when snd_una passes the sequence that was
//!     snd_nxt at the previous update), with F = fraction of the packets
//!     delivered in that window that carried CE (ECE-echoed):
//!         alpha <- (1 - g) * alpha + g * F,   g = 1/16
//!     in Linux's fixed point: alpha in [0, 1024],
//!         alpha -= min_not_zero(alpha, alpha >> 4);  alpha += (ce << 6) / delivered.
//!   - On ECE the sender enters CWR once per window (the sender's RFC 3168
//!     machinery, tcp/sender.rs); the reduction is this algorithm's ssthresh:
//!         cwnd <- cwnd * (1 - alpha / 2)   (Linux: cwnd - (cwnd * alpha >> 11), >= 2)
//!   - On loss (entering Recovery, or an RTO) halve: ssthresh = max(cwnd / 2, 2)
//!     (`dctcp_react_to_loss`, Linux >= 5.1). Linux up to 5.0 had the module
//!     option `dctcp_clamp_alpha_on_loss` (alpha <- 1 on entering Loss; 5.1
//!     removed it); it is available here through
//!     [`Dctcp::with_clamp_alpha_on_loss`], off by default.
//!   - Growth: Reno slow start and congestion avoidance.
//!   - alpha starts at 1 (Linux `dctcp_alpha_on_init` = DCTCP_MAX_ALPHA).
//! The receiver side (echo the CE state of every packet, ACK at once on a CE
//! state change, RFC 8257 3.2; ACK a CWR segment at once) is tcp/receiver.rs's
//! scalable ECN mode; a DCTCP flow defaults to it (`needs_ecn`).
//!
//! Checked rule by rule against Linux 5.4 (S3's senders ran 5.4.0-rc6):
//! `dctcp_alpha_on_init` 1024, `dctcp_shift_g` 4, `dctcp_update_alpha` once
//! per window of delivered packets, `dctcp_ssthresh`, `dctcp_react_to_loss` on
//! entering Recovery and on CA_EVENT_LOSS, `dctcp_cwnd_undo`, Reno growth
//! (`tcp_reno_cong_avoid` with `tcp_is_cwnd_limited`), one CWR per window
//! (`tcp_enter_cwr` from `tcp_try_to_open`, held until snd_una > high_seq,
//! PRR in between), receiver `dctcp_ece_ack_update`. Differences found and
//! their measured effect on S3's point: docs/fidelity.md, "DCTCP".
//!
//! Linux's 10-bit alpha has a granularity trap that we keep: below 16/1024 the
//! decay step `min_not_zero(alpha, alpha >> 4)` removes all of alpha, so with
//! CE fractions F < 1/4 per window alpha stays near F x 64/1024 instead of F
//! (sparse, probabilistic marking such as DualPI2's coupled marks exposes it;
//! docs/fidelity.md). TCP Prague (cc/prague.rs) uses a 20-bit alpha instead.
//!
//! Simplification: Linux calls `in_ack_event` before the ACK's deliveries are
//! counted in `delivered_ce`, so its alpha lags one ACK; here the counters
//! include the current ACK (docs/fidelity.md).

use super::{reno, CaEvent, CaState, CeWindow, CongestionControl, TcpCc};

/// Fixed-point 1.0 of alpha (Linux DCTCP_MAX_ALPHA).
pub const MAX_ALPHA: u32 = 1024;
/// g = 1 / 2^SHIFT_G (Linux `dctcp_shift_g` = 4, RFC 8257 g = 1/16).
pub const SHIFT_G: u32 = 4;
/// Minimum ssthresh, packets.
pub const MIN_SSTHRESH_PKTS: u32 = 2;

/// DCTCP's response to loss, which tcp_prague.c repeats: on entering Recovery
/// (`dctcp_state`) and on an RTO's loss event (`dctcp_cwnd_event`, CA_EVENT_LOSS)
/// ssthresh is half of cwnd (`dctcp_react_to_loss`); undo restores at least the cwnd
/// before the last cut, loss or ECN (`dctcp_cwnd_undo`).
#[derive(Debug, Clone, Copy, Default)]
pub struct LossHalving {
    loss_cwnd: u32,
}

impl LossHalving {
    /// A cut from `tp.cwnd` (loss or ECN): remember the window for undo.
    pub fn remember(&mut self, tp: &TcpCc) {
        self.loss_cwnd = tp.cwnd;
    }

    /// `dctcp_react_to_loss`.
    fn react(&mut self, tp: &mut TcpCc) {
        self.remember(tp);
        tp.ssthresh = (tp.cwnd >> 1).max(MIN_SSTHRESH_PKTS);
    }

    /// `set_state`: the reaction on entering Recovery.
    pub fn on_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Recovery && tp.ca_state != CaState::Recovery {
            self.react(tp);
        }
    }

    /// `cwnd_event`: the reaction to CA_EVENT_LOSS.
    pub fn on_event(&mut self, tp: &mut TcpCc, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.react(tp);
        }
    }

    /// `undo_cwnd`.
    pub fn undo(&self, tp: &TcpCc) -> u32 {
        tp.cwnd.max(self.loss_cwnd)
    }
}

/// Inside `impl CongestionControl` of an algorithm with a [`LossHalving`] in its field `$f`:
/// the hooks that are the loss response alone, `cwnd_event` and `undo_cwnd`.
macro_rules! loss_halving_hooks {
    ($f:ident) => {
        fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CaEvent) {
            self.$f.on_event(tp, ev);
        }

        fn undo_cwnd(&mut self, tp: &TcpCc) -> u32 {
            self.$f.undo(tp)
        }
    };
}
pub(crate) use loss_halving_hooks;

#[derive(Debug, Clone)]
pub struct Dctcp {
    /// alpha x 1024.
    pub alpha: u32,
    window: CeWindow,
    loss: LossHalving,
    clamp_alpha_on_loss: bool,
    /// g = 1 / 2^shift_g.
    shift_g: u32,
}

impl Default for Dctcp {
    fn default() -> Self {
        Self::new()
    }
}

impl Dctcp {
    pub fn new() -> Self {
        Dctcp { alpha: MAX_ALPHA, window: CeWindow::default(), loss: LossHalving::default(), clamp_alpha_on_loss: false, shift_g: SHIFT_G }
    }

    /// Pre-5.1 Linux option: set alpha to 1 when entering the Loss state (RTO).
    pub fn with_clamp_alpha_on_loss(mut self, on: bool) -> Self {
        self.clamp_alpha_on_loss = on;
        self
    }

    /// `dctcp_update_alpha`: once per window of data.
    fn update_alpha(&mut self, tp: &TcpCc) {
        let Some((delivered, delivered_ce)) = self.window.ended(tp) else {
            return;
        };
        let mut alpha = self.alpha;
        let decay = alpha >> self.shift_g;
        alpha -= if decay == 0 { alpha } else { decay.min(alpha) };
        if delivered_ce > 0 {
            let add = (delivered_ce << (10 - self.shift_g)) / delivered;
            alpha = (alpha as u64 + add).min(MAX_ALPHA as u64) as u32;
        }
        self.alpha = alpha;
        self.window.reset(tp);
    }
}

impl CongestionControl for Dctcp {
    hooks!(in_ack_event);
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn init(&mut self, tp: &mut TcpCc) {
        self.window.reset(tp);
        self.alpha = MAX_ALPHA;
        self.loss = LossHalving::default();
    }

    /// The ECN cut: cwnd (1 - alpha/2).
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        self.loss.remember(tp);
        let cut = ((tp.cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (tp.cwnd - cut).max(MIN_SSTHRESH_PKTS)
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        reno::reno_cong_avoid(tp, acked);
    }

    fn in_ack_event(&mut self, tp: &mut TcpCc, _ece: bool) {
        self.update_alpha(tp);
    }

    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        self.loss.on_state(tp, new_state);
        if self.clamp_alpha_on_loss && new_state == CaState::Loss {
            self.alpha = MAX_ALPHA;
        }
    }

    loss_halving_hooks!(loss);

    // Linux DCTCP negotiates RFC 3168 ECN, so its receiver ACKs CWR at once (`tcp_ecn_accept_cwr`).
    needs!(ecn, cwr_acked_at_once);
}

crate::declare_cca! {
    /// DCTCP's parameters: Linux `tcp_dctcp` module parameters, defaults = Linux's.
    pub struct DctcpConfig {
        /// EWMA gain g = 1 / 2^shift_g (Linux `dctcp_shift_g` = 4, RFC 8257 g = 1/16).
        shift_g: u32 = SHIFT_G, Range::closed(0.0, 10.0);
        /// Set alpha to 1 on entering Loss (RTO), the pre-5.1 Linux option `dctcp_clamp_alpha_on_loss`.
        clamp_alpha_on_loss: bool = false, Range::Any;
    }
    cca Dctcp = "dctcp", "DCTCP: RFC 8257; Linux net/ipv4/tcp_dctcp.c (g = 1/16, halve on loss as Linux >= 5.1)";
    build = |p, _seed| {
        let mut d = Dctcp::new().with_clamp_alpha_on_loss(p.clamp_alpha_on_loss);
        d.shift_g = p.shift_g;
        d
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{started, tp};

    /// One window: `n` packets delivered, `ce` of them with CE, then snd_una passes next_seq.
    fn window(d: &mut Dctcp, t: &mut TcpCc, n: u64, ce: u64) {
        t.delivered += n;
        t.delivered_ce += ce;
        t.snd_una = t.snd_nxt;
        t.snd_nxt += n;
        d.in_ack_event(t, ce > 0);
    }

    #[test]
    fn alpha_ewma_with_g_one_sixteenth() {
        let (mut d, mut t) = started::<Dctcp>();
        assert_eq!(d.alpha, 1024, "alpha starts at 1");
        // No marks: alpha <- alpha (1 - 1/16): 1024 -> 960 -> 900.
        window(&mut d, &mut t, 100, 0);
        assert_eq!(d.alpha, 960);
        window(&mut d, &mut t, 100, 0);
        assert_eq!(d.alpha, 900);
        // F = 1/2: alpha <- 900 - 56 + (50 << 6) / 100 = 844 + 32 = 876
        // (RFC 8257: (1-g) 0.879 + g 0.5 = 0.855 x 1024 = 875.6).
        window(&mut d, &mut t, 100, 50);
        assert_eq!(d.alpha, 876);
        // Converges to F: all packets marked -> alpha -> 1024 (within fixed-point rounding).
        for _ in 0..200 {
            window(&mut d, &mut t, 100, 100);
        }
        assert!(d.alpha >= 1024 - 16, "{}", d.alpha);
        // No marks for long: alpha reaches exactly 0 (min_not_zero drains the tail).
        for _ in 0..200 {
            window(&mut d, &mut t, 100, 0);
        }
        assert_eq!(d.alpha, 0);
    }

    #[test]
    fn alpha_updates_only_once_per_window() {
        let (mut d, mut t) = started::<Dctcp>();
        t.snd_nxt = 100;
        window(&mut d, &mut t, 10, 0); // snd_una 100 >= next_seq 0: update, next_seq = 110
        assert_eq!(d.alpha, 960);
        t.snd_una = 50;
        d.in_ack_event(&mut t, false);
        assert_eq!(d.alpha, 960, "snd_una < next_seq: no update");
    }

    #[test]
    fn ecn_cut_is_cwnd_times_one_minus_alpha_half() {
        let mut t = tp();
        let mut d = Dctcp::new();
        t.cwnd = 100;
        d.alpha = 512; // alpha = 1/2: cwnd (1 - 1/4) = 75
        assert_eq!(d.ssthresh(&t), 75);
        d.alpha = 1024; // alpha = 1: halve
        assert_eq!(d.ssthresh(&t), 50);
        d.alpha = 0; // no congestion seen: no cut
        assert_eq!(d.ssthresh(&t), 100);
        t.cwnd = 2;
        d.alpha = 1024;
        assert_eq!(d.ssthresh(&t), 2, "floor of 2 packets");
    }

    #[test]
    fn loss_halves_whatever_alpha() {
        let (mut d, mut t) = started::<Dctcp>();
        d.alpha = 64;
        t.cwnd = 80;
        // The sender computes ssthresh (the small alpha cut), then enters Recovery:
        t.ssthresh = d.ssthresh(&t);
        assert_eq!(t.ssthresh, 78);
        d.set_state(&mut t, CaState::Recovery);
        assert_eq!(t.ssthresh, 40, "Linux >= 5.1: halve on loss");
        // RTO: the same.
        t.cwnd = 30;
        d.cwnd_event(&mut t, CaEvent::Loss);
        assert_eq!(t.ssthresh, 15);
        assert_eq!(d.alpha, 64, "alpha untouched by default");
        let mut c = Dctcp::new().with_clamp_alpha_on_loss(true);
        c.alpha = 64;
        c.set_state(&mut t, CaState::Loss);
        assert_eq!(c.alpha, MAX_ALPHA);
    }
}
