//! Compound TCP (CTCP): a Reno window plus a scalable delay-based window.
//!
//! Algorithm (Tan, Song, Zhang, Sridharan, "A Compound TCP Approach for
//! High-speed and Long Distance Networks", IEEE INFOCOM 2006, section III;
//! the form S4 (Bhatti & Bateman 2009) describes):
//!   - send window win = cwnd + dwnd (both in packets);
//!   - cwnd is Reno's loss-based window: slow start as Reno, then
//!     cwnd += 1 / win per ACKed packet; on loss cwnd = cwnd / 2;
//!   - dwnd, the delay-based window, is updated once per RTT from
//!         diff = win x (1 - baseRTT / RTT)      (packets queued, as Vegas)
//!     dwnd += (alpha x win^k - 1)^+     if diff < gamma
//!     dwnd  = (dwnd - zeta x diff)^+     if diff >= gamma
//!     dwnd  = (win x (1 - beta) - cwnd / 2)^+   on a loss,
//!     so that after a loss win = win x (1 - beta), and while the queue stays
//!     below gamma packets win grows like alpha x win^k per RTT (a
//!     HighSpeed-like scalable increase);
//!   - dwnd is 0 in slow start and after a retransmission timeout.
//!
//! Constants (the paper's): alpha = 1/8, beta = 1/2, k = 3/4, zeta = 1,
//! gamma = 30 packets; all five are parameters ([`CtcpConfig`]).
//!
//! Sources: the INFOCOM 2006 paper; draft-sridharan-tcpm-ctcp-02 (2008).
//! Written from those descriptions; there is no Linux implementation.
//!
//! Simplifications: RTT in `diff` is the mean of the RTT samples of the
//! round (the paper's per-RTT measurement; Vegas would take the minimum);
//! baseRTT is the lifetime minimum RTT. Windows' later refinements (TUBE's
//! automatic gamma tuning, dwnd caps) are not modelled; dwnd is kept as a
//! real number and the send window is cwnd + floor(dwnd).

use super::{reno, AckSample, CaState, CongestionControl, TcpCc};

/// dwnd increase factor alpha (paper: 1/8).
pub const ALPHA: f64 = 0.125;
/// Multiplicative decrease of the whole window on loss, beta (paper: 1/2).
pub const BETA: f64 = 0.5;
/// Exponent of the scalable increase, k (paper: 0.75).
pub const K: f64 = 0.75;
/// dwnd decrease per packet of early-congestion backlog, zeta (paper: 1).
pub const ZETA: f64 = 1.0;
/// Backlog (packets queued) that counts as early congestion, gamma (paper: 30).
pub const GAMMA_PKTS: u32 = 30;
/// Minimum RTT samples in a round to update dwnd.
pub const MIN_SAMPLES_PER_ROUND: u32 = 1;

/// Per-connection CTCP state.
#[derive(Debug, Clone)]
pub struct Ctcp {
    /// Parameters (alpha, beta, k, zeta, gamma).
    p: CtcpConfig,
    /// Delay-based window, packets (real-valued).
    dwnd: f64,
    /// Reno-part credit: ACKed packets towards the next +1 of cwnd.
    reno_cnt: u32,
    /// Round marker: `snd_nxt` at the start of this round.
    beg_snd_nxt: u64,
    /// RTT samples of this round: count and sum, ns.
    cnt_rtt: u32,
    sum_rtt_ns: u64,
    /// Smallest RTT ever seen, ns.
    base_rtt_ns: u64,
}

impl Default for Ctcp {
    fn default() -> Self {
        Ctcp::new()
    }
}

impl Ctcp {
    pub fn new() -> Ctcp {
        Ctcp::with_params(CtcpConfig::default())
    }

    pub fn with_params(p: CtcpConfig) -> Ctcp {
        Ctcp { p, dwnd: 0.0, reno_cnt: 0, beg_snd_nxt: 0, cnt_rtt: 0, sum_rtt_ns: 0, base_rtt_ns: u64::MAX }
    }

    /// Current delay-based window, packets.
    pub fn dwnd(&self) -> f64 {
        self.dwnd
    }

    /// Whole packets of dwnd included in the send window.
    fn dwnd_pkts(&self) -> u32 {
        self.dwnd.floor() as u32
    }
}

impl CtcpConfig {
    /// The paper's per-RTT dwnd rule, given the send window and the backlog `diff`.
    pub fn dwnd_update(&self, dwnd: f64, win: f64, diff: f64) -> f64 {
        if diff < f64::from(self.gamma_pkts) {
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
}

impl CongestionControl for Ctcp {
    fn name(&self) -> &'static str {
        "ctcp"
    }

    fn init(&mut self, tp: &mut TcpCc) {
        self.beg_snd_nxt = tp.snd_nxt;
    }

    /// The send window after a loss: win x (1 - beta) = cwnd/2 + dwnd'.
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        let win = tp.cwnd as f64;
        let cwnd = tp.cwnd.saturating_sub(self.dwnd_pkts()) as f64;
        let (cwnd_new, dwnd_new) = self.p.on_loss(win, cwnd);
        self.dwnd = dwnd_new;
        self.reno_cnt = 0;
        ((cwnd_new + dwnd_new).floor() as u32).max(reno::MIN_SSTHRESH_PKTS)
    }

    fn set_state(&mut self, _tp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Loss {
            // RTO: back to slow start from one packet with no delay window.
            self.dwnd = 0.0;
        }
    }

    fn pkts_acked(&mut self, _tp: &mut TcpCc, sample: &AckSample) {
        if sample.rtt_ns < 0 {
            return;
        }
        let rtt = sample.rtt_ns as u64 + 1;
        self.base_rtt_ns = self.base_rtt_ns.min(rtt);
        self.cnt_rtt += 1;
        self.sum_rtt_ns += rtt;
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
        } else if tp.is_cwnd_limited {
            // cwnd += 1 / win per ACKed packet.
            let win = tp.cwnd.max(1);
            self.reno_cnt += acked;
            if self.reno_cnt >= win {
                cwnd += self.reno_cnt / win;
                self.reno_cnt %= win;
            }
            if round_end && self.cnt_rtt >= MIN_SAMPLES_PER_ROUND {
                let rtt = (self.sum_rtt_ns / self.cnt_rtt as u64) as f64;
                let win = (cwnd as f64) + self.dwnd;
                let diff = win * (1.0 - self.base_rtt_ns as f64 / rtt);
                self.dwnd = self.p.dwnd_update(self.dwnd, win, diff);
            }
            tp.cwnd = (cwnd + self.dwnd_pkts()).min(tp.cwnd_clamp);
        }
        if round_end {
            self.beg_snd_nxt = tp.snd_nxt;
            self.cnt_rtt = 0;
            self.sum_rtt_ns = 0;
        }
    }
}

crate::declare_params! {
    /// CTCP's parameters: the paper's constants (Tan et al. 2006, section III), defaults = the paper's.
    pub struct CtcpConfig {
        /// dwnd increase factor alpha: win grows by alpha x win^k per RTT without queueing (paper: 1/8).
        alpha: f64 = ALPHA, Range::open_closed(0.0, 10.0);
        /// Multiplicative decrease of the whole send window on loss, beta: win' = win x (1 - beta) (paper: 1/2).
        beta: f64 = BETA, Range::open(0.0, 1.0);
        /// Exponent k of the scalable increase alpha x win^k (paper: 0.75).
        k: f64 = K, Range::closed(0.0, 1.0);
        /// dwnd decrease per packet of backlog once the backlog reaches gamma, zeta (paper: 1).
        zeta: f64 = ZETA, Range::at_least(0.0);
        /// Backlog (packets queued) that counts as early congestion, gamma (paper: 30).
        gamma_pkts: u32 = GAMMA_PKTS, Range::at_least(1.0);
    }
}

impl super::Cca for Ctcp {
    type Params = CtcpConfig;
    const NAME: &'static str = "ctcp";
    const SOURCE: &'static str = "Compound TCP: Tan et al., IEEE INFOCOM 2006 (alpha 1/8, beta 1/2, k 0.75, gamma 30)";
    fn build(p: &CtcpConfig, _seed: u64) -> Box<dyn CongestionControl> {
        Box::new(Ctcp::with_params(p.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::tp;

    const BASE_NS: u64 = 100_000_000;

    /// One round of `cwnd` ACKs at `rtt_ns` (the last one passes the round
    /// marker); returns the window afterwards.
    fn round(c: &mut Ctcp, t: &mut TcpCc, rtt_ns: u64) -> u32 {
        let n = t.cwnd;
        for i in 0..n {
            c.pkts_acked(t, &AckSample { pkts_acked: 1, rtt_ns: rtt_ns as i64 - 1, in_flight: n });
            t.snd_una += 1;
            if i + 1 == n {
                t.snd_una = c.beg_snd_nxt + 1;
            }
            c.cong_avoid(t, 1);
        }
        t.snd_nxt = t.snd_una + t.cwnd as u64;
        t.cwnd
    }

    fn ca(win: u32) -> (Ctcp, TcpCc) {
        let mut c = Ctcp::new();
        let mut t = tp();
        t.snd_nxt = 1_000;
        c.init(&mut t); // round marker at snd_nxt = 1000
        t.cwnd = win;
        t.ssthresh = 2;
        c.base_rtt_ns = BASE_NS;
        (c, t)
    }

    #[test]
    fn dwnd_increase_is_alpha_win_to_the_k_minus_one_below_gamma() {
        // win = 100: 0.125 x 100^0.75 - 1 = 0.125 x 31.62 - 1 = 2.953 packets.
        let d = CtcpConfig::default().dwnd_update(5.0, 100.0, 10.0);
        assert!((d - 5.0 - (0.125 * 100f64.powf(0.75) - 1.0)).abs() < 1e-12);
        assert!((d - 7.953).abs() < 1e-3);
        // Small windows: alpha x win^k < 1, so dwnd does not grow (Reno alone).
        assert_eq!(CtcpConfig::default().dwnd_update(0.0, 10.0, 0.0), 0.0);
    }

    #[test]
    fn dwnd_decreases_by_zeta_diff_at_or_above_gamma() {
        assert_eq!(CtcpConfig::default().dwnd_update(50.0, 200.0, f64::from(GAMMA_PKTS)), 50.0 - ZETA * f64::from(GAMMA_PKTS));
        assert_eq!(CtcpConfig::default().dwnd_update(50.0, 200.0, 45.0), 5.0);
        assert_eq!(CtcpConfig::default().dwnd_update(10.0, 200.0, 45.0), 0.0, "never negative");
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
        let (mut c, mut t) = ca(100);
        c.dwnd = 40.0;
        t.cwnd = 140;
        // RTT 1.5 x base: diff = 140 x (1 - 1/1.5) = 46.7 >= 30 -> dwnd = 0.
        round(&mut c, &mut t, BASE_NS * 3 / 2);
        assert_eq!(c.dwnd(), 0.0);
        assert!(t.cwnd <= 101, "win back to the Reno part: {}", t.cwnd);
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
            let mut c = Ctcp::with_params(CtcpConfig { alpha, ..CtcpConfig::default() });
            let (_, mut t) = ca(100);
            c.beg_snd_nxt = 1_000;
            c.base_rtt_ns = BASE_NS;
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
