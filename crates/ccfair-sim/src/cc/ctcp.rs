//! Compound TCP (CTCP): a Reno window plus a scalable delay-based window.
//!
//! Algorithm (Tan, Song, Zhang, Sridharan, "A Compound TCP Approach for
//! High-speed and Long Distance Networks", IEEE INFOCOM 2006, section III;
//! the form S4 (Bhatti & Bateman 2009) describes), with the round-by-round
//! details of the Linux module S4 ran (Caltech's `tcp_compound.c`, L. Andrew,
//! release 1.3, 2008, "written to the same specification used for the
//! Windows implementation"; S4 section IV.D):
//!   - send window win = cwnd + dwnd (both in packets);
//!   - cwnd is Reno's loss-based window: slow start as Reno, then
//!     cwnd += 1 / win per ACKed packet; on loss the whole window is halved,
//!     cwnd and dwnd in proportion (win' = win x (1 - beta));
//!   - once per round (the ACK passes the `snd_nxt` of the round's start), from
//!     the packets sent in the round before (`old_wnd`) and the smallest RTT
//!     sample of the round that just ended (the module min-filters "to avoid
//!     the effects of delayed ACKs"):
//!         diff = old_wnd x (1 - baseRTT / minRTT)      (packets queued, as Vegas)
//!     dwnd += (alpha x old_wnd^k - 1)^+     if diff < gamma
//!     dwnd  = (dwnd - zeta x diff)^+         if diff >= gamma;
//!     only with more than 2 RTT samples in the round (fewer are delayed ACKs);
//!   - dwnd is 0 in slow start, after a retransmission timeout and while the
//!     send window is below `LOW_WINDOW_PKTS` (38; "CTCP is disabled for small
//!     cwnds, the case Reno handles OK");
//!   - gamma tuning (the module's, after TUBE, Tan et al. 2006): at each loss,
//!     gamma += (3/4 diff_reno - gamma) / 4, clipped to [5, 30] packets, where
//!     diff_reno is the backlog of the Reno part alone (old cwnd instead of
//!     old_wnd) in the last round with samples.
//!
//! Constants (the paper's and the module's defaults): alpha = 1/8, beta = 1/2,
//! k = 3/4, zeta = 1, gamma = 30 packets (tuned within [5, 30]), low window
//! 38 packets; all are parameters ([`CtcpConfig`]).
//!
//! Sources: the INFOCOM 2006 paper; draft-sridharan-tcpm-ctcp-02 (2008);
//! Caltech's Linux module `tcp_compound.c` release 1.3 (the one S4 names).
//! Written from those descriptions, not copied.
//!
//! Simplifications: baseRTT is the lifetime minimum RTT (as the module); dwnd
//! is a real number and the send window is cwnd + floor(dwnd) (the module
//! keeps whole packets); the module's pacing of a round's dwnd increase over
//! the next round's ACKs is not modelled (the whole increase applies at the
//! round's end). When the sender leaves recovery a fresh round starts (the
//! module's `ctcp_enable`), with the packets in flight as the last round's
//! window (the module keeps the stale left edge).

use super::{reno, AckSample, CaState, CongestionControl, TcpCc};

/// dwnd increase factor alpha (paper: 1/8).
pub const ALPHA: f64 = 0.125;
/// Multiplicative decrease of the whole window on loss, beta (paper: 1/2).
pub const BETA: f64 = 0.5;
/// Exponent of the scalable increase, k (paper: 0.75).
pub const K: f64 = 0.75;
/// dwnd decrease per packet of early-congestion backlog, zeta (paper: 1; module ETA).
pub const ZETA: f64 = 1.0;
/// Backlog (packets queued) that counts as early congestion, gamma (paper and module: 30).
pub const GAMMA_PKTS: u32 = 30;
/// Gamma tuning range, packets (module GAMMA_LOW, GAMMA_HIGH).
pub const GAMMA_LOW_PKTS: u32 = 5;
pub const GAMMA_HIGH_PKTS: u32 = 30;
/// Below this send window CTCP is Reno (dwnd = 0) (module LOW_WINDOW).
pub const LOW_WINDOW_PKTS: u32 = 38;
/// A round updates dwnd only with more than this many RTT samples (module: cntRTT > 2).
pub const MIN_SAMPLES_PER_ROUND: u32 = 3;

/// Per-connection CTCP state.
#[derive(Debug, Clone)]
pub struct Ctcp {
    /// Parameters (alpha, beta, k, zeta, gamma, gamma range, low window).
    p: CtcpConfig,
    /// Delay-based window, packets (real-valued).
    dwnd: f64,
    /// Reno-part credit: ACKed packets towards the next +1 of cwnd.
    reno_cnt: u32,
    /// Round markers: `snd_nxt` at the start of this round and of the last one.
    beg_snd_nxt: u64,
    beg_snd_una: u64,
    /// The Reno part (cwnd) at the start of this round.
    beg_cwnd: u32,
    /// RTT samples of this round: count and minimum, ns.
    cnt_rtt: u32,
    min_rtt_ns: u64,
    /// Smallest RTT ever seen, ns.
    base_rtt_ns: u64,
    /// Current (tuned) gamma, packets.
    gamma: f64,
    /// Backlog of the Reno part alone in the last round with samples (None = no fresh measurement).
    diff_reno: Option<f64>,
}

default_is!(Ctcp = Ctcp::with_params(CtcpConfig::default()));

impl Ctcp {
    pub fn with_params(p: CtcpConfig) -> Ctcp {
        let gamma = f64::from(p.gamma_pkts);
        Ctcp {
            p,
            dwnd: 0.0,
            reno_cnt: 0,
            beg_snd_nxt: 0,
            beg_snd_una: 0,
            beg_cwnd: 0,
            cnt_rtt: 0,
            min_rtt_ns: u64::MAX,
            base_rtt_ns: u64::MAX,
            gamma,
            diff_reno: None,
        }
    }

    /// Current delay-based window, packets.
    pub fn dwnd(&self) -> f64 {
        self.dwnd
    }

    /// Current early-congestion threshold gamma, packets (after tuning).
    pub fn gamma(&self) -> f64 {
        self.gamma
    }

    /// Whole packets of dwnd included in the send window.
    fn dwnd_pkts(&self) -> u32 {
        self.dwnd.floor() as u32
    }

    /// Start a round now (the module's `ctcp_enable`).
    fn start_round(&mut self, tp: &TcpCc) {
        self.beg_snd_una = tp.snd_una;
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt_ns = u64::MAX;
        self.diff_reno = None;
    }

    /// End of a round: the dwnd rule on the round's samples (module `tcp_compound_cong_avoid`).
    fn end_round(&mut self, tp: &TcpCc, cwnd: u32) {
        let old_wnd = self.beg_snd_nxt.saturating_sub(self.beg_snd_una) as f64;
        let old_cwnd = f64::from(self.beg_cwnd);
        self.beg_snd_una = self.beg_snd_nxt;
        self.beg_snd_nxt = tp.snd_nxt;
        self.beg_cwnd = cwnd;
        if tp.cwnd < self.p.low_window_pkts || tp.in_slow_start() {
            self.dwnd = 0.0;
        } else if self.cnt_rtt >= MIN_SAMPLES_PER_ROUND && self.min_rtt_ns != u64::MAX {
            let queued = 1.0 - self.base_rtt_ns as f64 / self.min_rtt_ns as f64;
            let diff = old_wnd * queued;
            self.diff_reno = Some(old_cwnd * queued);
            self.dwnd = self.p.dwnd_update(self.dwnd, old_wnd, diff, self.gamma);
        }
        self.cnt_rtt = 0;
        self.min_rtt_ns = u64::MAX;
    }
}

impl CtcpConfig {
    /// The paper's per-RTT dwnd rule, given the send window, the backlog `diff` and gamma.
    pub fn dwnd_update(&self, dwnd: f64, win: f64, diff: f64, gamma: f64) -> f64 {
        if diff < gamma {
            dwnd + (self.alpha * win.powf(self.k) - 1.0).max(0.0)
        } else {
            (dwnd - self.zeta * diff).max(0.0)
        }
    }

    /// The paper's loss rule: (cwnd part, dwnd) after a loss with send window
    /// `win` and loss-based part `cwnd`.
    pub fn on_loss(&self, win: f64, cwnd: f64) -> (f64, f64) {
        let cwnd_new = cwnd / 2.0;
        let dwnd_new = (win * (1.0 - self.beta) - cwnd / 2.0).max(0.0);
        (cwnd_new, dwnd_new)
    }

    /// The module's gamma tuning at a loss: gamma moves a quarter of the way
    /// to 3/4 of the Reno part's backlog, within [gamma_low, gamma_high].
    pub fn tune_gamma(&self, gamma: f64, diff_reno: f64) -> f64 {
        let g = gamma + (0.75 * diff_reno - gamma) / 4.0;
        g.clamp(f64::from(self.gamma_low_pkts), f64::from(self.gamma_high_pkts))
    }
}

impl CongestionControl for Ctcp {
    hooks!(pkts_acked);
    fn name(&self) -> &'static str {
        "ctcp"
    }

    fn init(&mut self, tp: &mut TcpCc) {
        self.start_round(tp);
        self.beg_cwnd = tp.cwnd;
    }

    /// The send window after a loss: win x (1 - beta) = cwnd/2 + dwnd'; gamma tuning.
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        if let Some(d) = self.diff_reno.take() {
            self.gamma = self.p.tune_gamma(self.gamma, d);
        }
        let win = tp.cwnd as f64;
        let cwnd = tp.cwnd.saturating_sub(self.dwnd_pkts()) as f64;
        let (cwnd_new, dwnd_new) = self.p.on_loss(win, cwnd);
        self.dwnd = dwnd_new;
        self.reno_cnt = 0;
        ((cwnd_new + dwnd_new).floor() as u32).max(reno::MIN_SSTHRESH_PKTS)
    }

    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        match new_state {
            // RTO: back to slow start from one packet with no delay window.
            CaState::Loss => self.dwnd = 0.0,
            // Back in Open: measure afresh (module `ctcp_enable`).
            CaState::Open if tp.ca_state != CaState::Open => self.start_round(tp),
            _ => {}
        }
    }

    fn pkts_acked(&mut self, _tp: &mut TcpCc, sample: &AckSample) {
        if sample.rtt_ns < 0 {
            return;
        }
        let rtt = sample.rtt_ns as u64 + 1;
        self.base_rtt_ns = self.base_rtt_ns.min(rtt);
        self.min_rtt_ns = self.min_rtt_ns.min(rtt);
        self.cnt_rtt += 1;
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        // The sender's cwnd is the send window win; the Reno part is win - dwnd.
        let dwnd_pkts = self.dwnd_pkts().min(tp.cwnd.saturating_sub(1));
        let mut cwnd = tp.cwnd - dwnd_pkts;
        let round_end = tp.snd_una > self.beg_snd_nxt;

        if tp.in_slow_start() {
            // Reno slow start on the loss-based part; no delay component.
            if tp.is_cwnd_limited {
                tp.slow_start(acked);
            }
            self.dwnd = 0.0;
            if round_end {
                self.end_round(tp, tp.cwnd);
            }
        } else if tp.is_cwnd_limited {
            // cwnd += 1 / win per ACKed packet.
            let win = tp.cwnd.max(1);
            self.reno_cnt += acked;
            if self.reno_cnt >= win {
                cwnd += self.reno_cnt / win;
                self.reno_cnt %= win;
            }
            if round_end {
                self.end_round(tp, cwnd);
            }
            tp.cwnd = (cwnd + self.dwnd_pkts()).min(tp.cwnd_clamp);
        } else if round_end {
            self.end_round(tp, cwnd);
        }
    }
}

crate::declare_cca! {
    /// CTCP's parameters: the paper's constants (Tan et al. 2006, section III) and the Linux module's (Caltech tcp_compound.c 1.3), defaults = theirs.
    pub struct CtcpConfig {
        /// dwnd increase factor alpha: win grows by alpha x win^k per RTT without queueing (paper: 1/8).
        alpha: f64 = ALPHA, Range::open_closed(0.0, 10.0);
        /// Multiplicative decrease of the whole send window on loss, beta: win' = win x (1 - beta) (paper: 1/2).
        beta: f64 = BETA, Range::open(0.0, 1.0);
        /// Exponent k of the scalable increase alpha x win^k (paper: 0.75).
        k: f64 = K, Range::closed(0.0, 1.0);
        /// dwnd decrease per packet of backlog once the backlog reaches gamma, zeta (paper: 1).
        zeta: f64 = ZETA, Range::at_least(0.0);
        /// Initial backlog (packets queued) that counts as early congestion, gamma (paper, module: 30).
        gamma_pkts: u32 = GAMMA_PKTS, Range::at_least(1.0);
        /// Lower bound of the tuned gamma, packets (module GAMMA_LOW: 5); gamma_low = gamma_high = gamma turns tuning off.
        gamma_low_pkts: u32 = GAMMA_LOW_PKTS, Range::at_least(1.0);
        /// Upper bound of the tuned gamma, packets (module GAMMA_HIGH: 30).
        gamma_high_pkts: u32 = GAMMA_HIGH_PKTS, Range::at_least(1.0);
        /// Send windows below this many packets use no delay window (module LOW_WINDOW: 38).
        low_window_pkts: u32 = LOW_WINDOW_PKTS, Range::at_least(0.0);
    }
    cca Ctcp = "ctcp", "Compound TCP: Tan et al., IEEE INFOCOM 2006 (alpha 1/8, beta 1/2, k 0.75, gamma 30); Caltech Linux module tcp_compound.c 1.3 (min-RTT rounds, low window 38, gamma tuning 5-30)";
    build = |p, _seed| Ctcp::with_params(p.clone());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::tp;

    const BASE_NS: u64 = 100_000_000;
    const G: f64 = GAMMA_PKTS as f64;

    /// One round of `cwnd` ACKs, the i-th with RTT `rtt_ns(i)` (the last one
    /// passes the round marker); returns the window afterwards.
    fn round_with(c: &mut Ctcp, t: &mut TcpCc, rtt_ns: impl Fn(u32) -> u64) -> u32 {
        let n = t.cwnd;
        for i in 0..n {
            c.pkts_acked(t, &AckSample { pkts_acked: 1, rtt_ns: rtt_ns(i) as i64 - 1, in_flight: n });
            t.snd_una += 1;
            if i + 1 == n {
                t.snd_una = c.beg_snd_nxt + 1;
            }
            c.cong_avoid(t, 1);
        }
        t.snd_nxt = t.snd_una + t.cwnd as u64;
        t.cwnd
    }

    fn round(c: &mut Ctcp, t: &mut TcpCc, rtt_ns: u64) -> u32 {
        round_with(c, t, |_| rtt_ns)
    }

    /// Congestion avoidance with send window `win`, the last round having sent `win` packets.
    fn ca(win: u32) -> (Ctcp, TcpCc) {
        let mut c = Ctcp::default();
        let mut t = tp();
        t.snd_una = 1_000 - win as u64;
        t.snd_nxt = 1_000;
        t.cwnd = win;
        c.init(&mut t); // round [1000 - win, 1000)
        t.ssthresh = 2;
        c.base_rtt_ns = BASE_NS;
        (c, t)
    }

    #[test]
    fn dwnd_increase_is_alpha_win_to_the_k_minus_one_below_gamma() {
        // win = 100: 0.125 x 100^0.75 - 1 = 0.125 x 31.62 - 1 = 2.953 packets.
        let d = CtcpConfig::default().dwnd_update(5.0, 100.0, 10.0, G);
        assert!((d - 5.0 - (0.125 * 100f64.powf(0.75) - 1.0)).abs() < 1e-12);
        assert!((d - 7.953).abs() < 1e-3);
        // Small windows: alpha x win^k < 1, so dwnd does not grow (Reno alone).
        assert_eq!(CtcpConfig::default().dwnd_update(0.0, 10.0, 0.0, G), 0.0);
    }

    #[test]
    fn dwnd_decreases_by_zeta_diff_at_or_above_gamma() {
        let p = CtcpConfig::default();
        assert_eq!(p.dwnd_update(50.0, 200.0, G, G), 50.0 - ZETA * G);
        assert_eq!(p.dwnd_update(50.0, 200.0, 45.0, G), 5.0);
        assert_eq!(p.dwnd_update(10.0, 200.0, 45.0, G), 0.0, "never negative");
        // A tuned-down gamma (10) turns a backlog of 20 into a decrease.
        assert_eq!(p.dwnd_update(50.0, 200.0, 20.0, 10.0), 30.0);
    }

    #[test]
    fn loss_sets_dwnd_to_win_times_one_minus_beta_minus_half_cwnd() {
        // win 120 = cwnd 80 + dwnd 40: dwnd' = 120 x 0.5 - 40 = 20, cwnd' = 40, win' = 60.
        let (cw, dw) = CtcpConfig::default().on_loss(120.0, 80.0);
        assert_eq!((cw, dw), (40.0, 20.0));
        assert_eq!(cw + dw, 120.0 * (1.0 - BETA));
        let (mut c, mut t) = ca(120);
        c.dwnd = 40.0;
        assert_eq!(c.ssthresh(&t), 60);
        assert_eq!(c.dwnd(), 20.0);
        // No delay window: plain Reno halving.
        c.dwnd = 0.0;
        t.cwnd = 80;
        assert_eq!(c.ssthresh(&t), 40);
    }

    #[test]
    fn window_grows_scalably_without_queueing() {
        let (mut c, mut t) = ca(100);
        let after = round(&mut c, &mut t, BASE_NS);
        // Reno +1 plus dwnd += 2.95 (floor): 100 -> 103 .. 104.
        assert!((103..=104).contains(&after), "{after}");
        assert!(c.dwnd() > 2.9);
    }

    #[test]
    fn dwnd_drains_when_backlog_exceeds_gamma() {
        let (mut c, mut t) = ca(140);
        c.dwnd = 40.0;
        // RTT 1.5 x base: diff = 140 x (1 - 1/1.5) = 46.7 >= 30 -> dwnd = 0.
        round(&mut c, &mut t, BASE_NS * 3 / 2);
        assert_eq!(c.dwnd(), 0.0);
        assert!(t.cwnd <= 101, "win back to the Reno part: {}", t.cwnd);
    }

    #[test]
    fn backlog_is_measured_with_the_smallest_rtt_of_the_round() {
        // Caltech module: "min-filter RTT samples from within an RTT ... to
        // avoid the effects of delayed ACKs". All samples at 1.5 x base but
        // one at base: min-filtered diff = 0 -> dwnd grows (a mean would give
        // diff ~ 46 >= gamma and drain it).
        let (mut c, mut t) = ca(140);
        c.dwnd = 40.0;
        round_with(&mut c, &mut t, |i| if i == 5 { BASE_NS } else { BASE_NS * 3 / 2 });
        assert!(c.dwnd() > 40.0, "dwnd {}", c.dwnd());
    }

    #[test]
    fn no_delay_window_below_the_low_window_of_38_packets() {
        // Module LOW_WINDOW = 38: "CTCP is disabled for small cwnds, the case Reno handles OK".
        let (mut c, mut t) = ca(37);
        c.dwnd = 5.0;
        round(&mut c, &mut t, BASE_NS);
        assert_eq!(c.dwnd(), 0.0);
        let (mut c, mut t) = ca(60);
        round(&mut c, &mut t, BASE_NS);
        assert!(c.dwnd() > 0.0, "60 packets: alpha x 60^0.75 - 1 = 0.70");
    }

    #[test]
    fn a_round_with_two_rtt_samples_leaves_dwnd_alone() {
        // Module: dwnd changes only with cntRTT > 2 (2 samples per round are delayed ACKs).
        let (mut c, mut t) = ca(100);
        c.dwnd = 10.0;
        c.cnt_rtt = 0;
        c.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_ns: BASE_NS as i64, in_flight: 100 });
        c.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_ns: BASE_NS as i64, in_flight: 100 });
        t.snd_una = c.beg_snd_nxt + 1;
        c.cong_avoid(&mut t, 1);
        assert_eq!(c.dwnd(), 10.0);
    }

    #[test]
    fn gamma_tuning_moves_a_quarter_towards_three_quarters_of_the_reno_backlog_within_5_and_30() {
        let p = CtcpConfig::default();
        // diff_reno 20: sample 15; 30 + (15 - 30)/4 = 26.25.
        assert_eq!(p.tune_gamma(30.0, 20.0), 26.25);
        assert_eq!(p.tune_gamma(6.0, 0.0), 5.0, "clipped at GAMMA_LOW");
        assert_eq!(p.tune_gamma(30.0, 400.0), 30.0, "clipped at GAMMA_HIGH");
        // At a loss with a fresh diff_reno; without one gamma stays.
        let (mut c, t) = ca(100);
        c.diff_reno = Some(20.0);
        c.ssthresh(&t);
        assert_eq!(c.gamma(), 26.25);
        c.ssthresh(&t);
        assert_eq!(c.gamma(), 26.25, "diff_reno is consumed by the adjustment");
    }

    #[test]
    fn rto_clears_dwnd() {
        let (mut c, mut t) = ca(100);
        c.dwnd = 30.0;
        c.set_state(&mut t, CaState::Loss);
        assert_eq!(c.dwnd(), 0.0);
    }

    #[test]
    fn larger_alpha_grows_the_window_faster_and_larger_beta_cuts_deeper() {
        let grow = |alpha: f64| {
            let (_, mut t) = ca(100);
            let mut c = Ctcp::with_params(CtcpConfig { alpha, ..CtcpConfig::default() });
            c.init(&mut t);
            c.base_rtt_ns = BASE_NS;
            t.ssthresh = 2;
            round(&mut c, &mut t, BASE_NS)
        };
        // alpha 1/8: dwnd += 2.95 (window 103..104); alpha 1/4: dwnd += 6.9 (window >= 107).
        assert!(grow(0.25) >= grow(0.125) + 3, "{} vs {}", grow(0.25), grow(0.125));
        let cut = |beta: f64| {
            let mut c = Ctcp::with_params(CtcpConfig { beta, ..CtcpConfig::default() });
            c.dwnd = 40.0;
            let (_, t) = ca(120);
            c.ssthresh(&t)
        };
        // win 120: beta 1/2 -> 60, beta 0.7 -> max(0, 36 - 40) + 40 = 40 (dwnd floored at 0).
        assert_eq!(cut(0.5), 60);
        assert!(cut(0.7) < cut(0.5));
    }
}
