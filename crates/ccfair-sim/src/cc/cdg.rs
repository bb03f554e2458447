//! CAIA Delay-Gradient (CDG, Hayes & Armitage), modelled on Linux `tcp_cdg.c`.
//!
//! Algorithm (D. A. Hayes, G. Armitage, "Revisiting TCP congestion control
//! using delay gradients", IFIP Networking 2011, as Linux implements it):
//!   - per RTT (the ACK passes the snd_nxt of the last round) the minimum and
//!     maximum RTT sample of the round; their changes from the previous round
//!     are the gradients g_min, g_max (µs), summed over the last `window` = 8
//!     rounds (a ring; while it fills, the sum is extrapolated to `window`);
//!     grad = g_min if > 0, else g_max;
//!   - grad > 0: back off with probability 1 - exp(-grad x backoff_factor /
//!     1e6) (backoff_factor 42: grad = 1 ms over 8 rounds gives 1 - e^-0.042):
//!     enter CWR with ssthresh = cwnd x backoff_beta (0.7071), PRR down to it;
//!     at most `use_ineff` = 5 backoffs in a row that do not lower the
//!     gradients (g <= -32 µs resets the count);
//!   - loss: ssthresh = max(cwnd / 2, shadow window / 2) where the shadow
//!     window grows as a loss-based flow's would and is not cut by
//!     delay-gradient backoffs (competition with loss-based flows);
//!   - growth: Reno; slow start ends by CDG's HyStart (ACK train longer than
//!     half the minimum RTT, or the round's min RTT above 9/8 of the lowest);
//!   - a delayed-ACK filter keeps a one-segment ACK after stretch ACKs out of
//!     the minimum unless it is lower.
//!
//! Sources: Hayes & Armitage 2011; Linux net/ipv4/tcp_cdg.c (K. K. Jonassen;
//! Linux 6.18), read for this model: `nexp_u32`, `tcp_cdg_hystart_update`,
//! `tcp_cdg_grad`, `tcp_cdg_backoff`, `tcp_cdg_cong_avoid`, `tcp_cdg_acked`,
//! `tcp_cdg_ssthresh`, `tcp_cdg_cwnd_event`.
//! Parameters (`CdgConfig`, Linux module parameters, defaults = Linux's):
//! window 8 rounds, backoff_beta 724/1024, backoff_factor 42, hystart_detect
//! 3, use_ineff 5, use_shadow on, use_tolerance off.
//! Simplifications: RTTs in µs as Linux's `rtt_us` (truncated); the HyStart
//! ACK-train clock is the simulated time in µs (Linux `tp->tcp_mstamp`); the
//! backoff draws come from the run seed's stream (Linux `get_random_u32`).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{reno, AckSample, CaEvent, CongestionControl, TcpCc};

const HYSTART_ACK_TRAIN: u64 = 1;
const HYSTART_DELAY: u64 = 2;
/// An ACK train stops counting after a gap of this much (Linux 3000 µs).
pub const ACK_TRAIN_GAP_US: u32 = 3000;
/// Lower bound of the HyStart thresholds, µs (Linux 125).
pub const HYSTART_MIN_US: u32 = 125;
/// Round samples before HyStart's delay test (Linux 8).
pub const HYSTART_MIN_SAMPLES: u16 = 8;
/// A gradient at or below this shows an effectual backoff, µs (Linux -32).
pub const EFFECTUAL_GRAD_US: i32 = -32;
/// The delayed-ACK filter counts up to this (Linux 5).
pub const DELACK_MAX: u8 = 5;

/// exp(-x) x 65536 - 1 for x = 0, 0.000256, 0.000512, ... (Linux `nexp_u32`'s table).
const NEXP_V: [u16; 17] = [65535, 65518, 65501, 65468, 65401, 65267, 65001, 64470, 63422, 61378, 57484, 50423, 38795, 22965, 8047, 987, 14];

/// exp(-ux / 1e6) x u32::MAX (Linux `nexp_u32`).
pub fn nexp_u32(ux: u32) -> u32 {
    let mut msb = ux >> 8;
    if msb > u16::MAX as u32 {
        return 0;
    }
    let mut res = u32::MAX - (ux & 0xff) * (u32::MAX / 1_000_000);
    let mut i = 1usize;
    while msb != 0 {
        let y = NEXP_V[if msb & 1 == 1 { i } else { 0 }] as u64 + 1;
        res = ((res as u64 * y) >> 16) as u32;
        i += 1;
        msb >>= 1;
    }
    res
}

/// Minimum and maximum RTT of a round, µs (Linux `struct cdg_minmax`); 0 = none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct MinMax {
    min: i32,
    max: i32,
}

impl MinMax {
    fn is_set(&self) -> bool {
        self.min != 0 || self.max != 0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Unknown,
    NonFull,
    Full,
    Backoff,
}

crate::declare_cca! {
    /// CDG's parameters: Linux `tcp_cdg` module parameters, defaults = Linux's.
    pub struct CdgConfig {
        /// Rounds in the gradient window, a power of two <= 256 (Linux `window`).
        window: u64 = 8, Range::closed(1.0, 256.0);
        /// Backoff multiplier, in 1/1024 (Linux `backoff_beta`, 0.7071 x 1024).
        backoff_beta: u64 = 724, Range::closed(0.0, 1024.0);
        /// Backoff probability scale (Linux `backoff_factor`).
        backoff_factor: u64 = 42, Range::closed(1.0, 1_000_000.0);
        /// HyStart: 0 off, 1 ACK train, 2 delay, 3 both (Linux `hystart_detect`).
        hystart_detect: u64 = 3, Range::closed(0.0, 3.0);
        /// Ineffectual backoffs in a row allowed, 0 = no limit (Linux `use_ineff`).
        use_ineff: u64 = 5, Range::closed(0.0, 65535.0);
        /// Shadow window against loss-based competition (Linux `use_shadow`).
        use_shadow: bool = true, Range::Any;
        /// Loss tolerance heuristic (Linux `use_tolerance`).
        use_tolerance: bool = false, Range::Any;
    }
    check = check_cdg;
    cca Cdg = "cdg", "CDG: Hayes & Armitage, IFIP Networking 2011; Linux net/ipv4/tcp_cdg.c (window 8, beta 0.7071, factor 42)";
    build = |p, seed| Cdg::new(p, seed);
}

fn check_cdg(p: &CdgConfig) -> Result<(), crate::params::ParamError> {
    if !p.window.is_power_of_two() {
        return Err(crate::params::ParamError::new("window", format!("must be a power of two (1, 2, 4, ..., 256), got {}", p.window)));
    }
    Ok(())
}

/// Per-connection CDG state (Linux `struct cdg`).
#[derive(Debug, Clone)]
pub struct Cdg {
    p: CdgConfig,
    rng: Pcg64Mcg,
    rtt: MinMax,
    rtt_prev: MinMax,
    /// The last `window` gradients (Linux `gradients`, kcalloc'ed in init).
    gradients: Vec<MinMax>,
    gsum: MinMax,
    gfilled: bool,
    tail: usize,
    state: State,
    delack: u8,
    /// The round ends when snd_una passes this (segments).
    rtt_seq: u64,
    shadow_wnd: u32,
    backoff_cnt: u16,
    sample_cnt: u16,
    delay_min_us: i32,
    last_ack_us: u32,
    round_start_us: u32,
    pub stats: CdgStats,
}

/// What CDG did, for tests and traces.
#[derive(Debug, Clone, Default)]
pub struct CdgStats {
    /// Delay-gradient backoffs (CWR entered).
    pub backoffs: u64,
    /// HyStart exits of slow start.
    pub hystart_exits: u64,
}

impl Cdg {
    pub fn new(p: &CdgConfig, seed: u64) -> Cdg {
        let window = p.window as usize;
        Cdg {
            p: p.clone(),
            rng: Pcg64Mcg::seed_from_u64(seed),
            rtt: MinMax::default(),
            rtt_prev: MinMax::default(),
            gradients: if window > 1 { vec![MinMax::default(); window] } else { vec![] },
            gsum: MinMax::default(),
            gfilled: false,
            tail: 0,
            state: State::Unknown,
            delack: 0,
            rtt_seq: 0,
            shadow_wnd: 0,
            backoff_cnt: 0,
            sample_cnt: 0,
            delay_min_us: 0,
            last_ack_us: 0,
            round_start_us: 0,
            stats: CdgStats::default(),
        }
    }

    fn window(&self) -> i32 {
        self.p.window as i32
    }

    /// Linux `tcp_cdg_hystart_update`.
    fn hystart_update(&mut self, tp: &mut TcpCc) {
        self.delay_min_us = min_not_zero(self.delay_min_us, self.rtt.min);
        if self.delay_min_us == 0 {
            return;
        }
        if self.p.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now_us = (tp.now_ns / 1000) as u32;
            if self.last_ack_us == 0 || !tp.is_cwnd_limited {
                self.last_ack_us = now_us;
                self.round_start_us = now_us;
            } else if before(now_us, self.last_ack_us.wrapping_add(ACK_TRAIN_GAP_US)) {
                let base_owd = (self.delay_min_us as u32 / 2).max(HYSTART_MIN_US);
                self.last_ack_us = now_us;
                if before(self.round_start_us.wrapping_add(base_owd), now_us) {
                    tp.ssthresh = tp.cwnd;
                    self.stats.hystart_exits += 1;
                    return;
                }
            }
        }
        if self.p.hystart_detect & HYSTART_DELAY != 0 {
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let d = self.delay_min_us as u32;
                let thresh = (d + d / 8).max(HYSTART_MIN_US) as i32;
                if self.rtt.min > thresh {
                    tp.ssthresh = tp.cwnd;
                    self.stats.hystart_exits += 1;
                }
            }
        }
    }

    /// Linux `tcp_cdg_grad`: the window's gradient sum, µs.
    fn grad(&mut self) -> i32 {
        let mut gmin = self.rtt.min.wrapping_sub(self.rtt_prev.min);
        let mut gmax = self.rtt.max.wrapping_sub(self.rtt_prev.max);
        let window = self.window();
        if !self.gradients.is_empty() {
            let old = self.gradients[self.tail];
            self.gsum.min = self.gsum.min.wrapping_add(gmin.wrapping_sub(old.min));
            self.gsum.max = self.gsum.max.wrapping_add(gmax.wrapping_sub(old.max));
            self.gradients[self.tail] = MinMax { min: gmin, max: gmax };
            self.tail = (self.tail + 1) & (window as usize - 1);
            gmin = self.gsum.min;
            gmax = self.gsum.max;
        }
        // Sums, so that gradients across cwnd reductions cancel; no division by window.
        let mut grad = if gmin > 0 { gmin } else { gmax };
        if !self.gfilled {
            if self.gradients.is_empty() && window > 1 {
                grad = grad.wrapping_mul(window);
            } else if self.tail == 0 {
                self.gfilled = true;
            } else {
                grad = grad.wrapping_mul(window) / self.tail as i32;
            }
        }
        if gmin <= EFFECTUAL_GRAD_US || gmax <= EFFECTUAL_GRAD_US {
            self.backoff_cnt = 0;
        }
        if self.p.use_tolerance {
            let gmin = div_round_closest(gmin, 64);
            let gmax = div_round_closest(gmax, 64);
            if gmin > 0 && gmax <= 0 {
                self.state = State::Full;
            } else if (gmin > 0 && gmax > 0) || gmax < 0 {
                self.state = State::NonFull;
            }
        }
        grad
    }

    /// Linux `tcp_cdg_backoff`: whether to back off (then CWR is asked for).
    fn backoff(&mut self, tp: &mut TcpCc, grad: u32) -> bool {
        let draw: u32 = self.rng.gen();
        if draw <= nexp_u32(grad.wrapping_mul(self.p.backoff_factor as u32)) {
            return false;
        }
        if self.p.use_ineff > 0 {
            self.backoff_cnt = self.backoff_cnt.wrapping_add(1);
            if self.backoff_cnt as u64 > self.p.use_ineff {
                return false;
            }
        }
        self.shadow_wnd = self.shadow_wnd.max(tp.cwnd);
        self.state = State::Backoff;
        self.stats.backoffs += 1;
        tp.enter_cwr = true;
        true
    }
}

fn min_not_zero(a: i32, b: i32) -> i32 {
    match (a, b) {
        (0, b) => b,
        (a, 0) => a,
        (a, b) => a.min(b),
    }
}

/// Linux `before(seq1, seq2)` on 32-bit clocks.
fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// Linux `DIV_ROUND_CLOSEST` of a signed value.
fn div_round_closest(x: i32, d: i32) -> i32 {
    if x > 0 {
        (x + d / 2) / d
    } else {
        (x - d / 2) / d
    }
}

impl CongestionControl for Cdg {
    hooks!(pkts_acked);
    fn name(&self) -> &'static str {
        "cdg"
    }

    /// Linux `tcp_cdg_init`.
    fn init(&mut self, tp: &mut TcpCc) {
        self.rtt_seq = tp.snd_nxt;
        self.shadow_wnd = tp.cwnd;
    }

    /// Linux `tcp_cdg_ssthresh`.
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        if self.state == State::Backoff {
            return 2u32.max(((tp.cwnd as u64 * self.p.backoff_beta.min(1024)) >> 10) as u32);
        }
        if self.state == State::NonFull && self.p.use_tolerance {
            return tp.cwnd;
        }
        self.shadow_wnd = (self.shadow_wnd >> 1).min(tp.cwnd);
        if self.p.use_shadow {
            return 2u32.max(self.shadow_wnd).max(tp.cwnd >> 1);
        }
        2u32.max(tp.cwnd >> 1)
    }

    /// Linux `tcp_cdg_cong_avoid` (not called in CWR or Recovery).
    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        if tp.in_slow_start() && self.p.hystart_detect != 0 {
            self.hystart_update(tp);
        }
        if tp.snd_una > self.rtt_seq && self.rtt.is_set() {
            let grad = if self.rtt_prev.is_set() { self.grad() } else { 0 };
            self.rtt_seq = tp.snd_nxt;
            self.rtt_prev = self.rtt;
            self.rtt = MinMax::default();
            self.last_ack_us = 0;
            self.sample_cnt = 0;
            if grad > 0 && self.backoff(tp, grad as u32) {
                return;
            }
        }
        if !tp.is_cwnd_limited {
            self.shadow_wnd = self.shadow_wnd.min(tp.cwnd);
            return;
        }
        let prior = tp.cwnd;
        reno::reno_cong_avoid(tp, acked);
        let incr = tp.cwnd.wrapping_sub(prior);
        self.shadow_wnd = self.shadow_wnd.max(self.shadow_wnd.wrapping_add(incr));
    }

    /// Linux `tcp_cdg_acked`, with Hayes's delayed-ACK filter.
    fn pkts_acked(&mut self, tp: &mut TcpCc, sample: &AckSample) {
        if sample.rtt_ns <= 0 {
            return;
        }
        let rtt_us = (sample.rtt_ns / 1000) as i32;
        if rtt_us <= 0 {
            return;
        }
        if tp.sacked_out == 0 {
            if sample.pkts_acked == 1 && self.delack > 0 {
                // A delayed ACK counts for the minimum only if provably lower.
                self.rtt.min = self.rtt.min.min(rtt_us);
                self.delack -= 1;
                return;
            } else if sample.pkts_acked > 1 && self.delack < DELACK_MAX {
                self.delack += 1;
            }
        }
        self.rtt.min = min_not_zero(self.rtt.min, rtt_us);
        self.rtt.max = self.rtt.max.max(rtt_us);
    }

    /// Linux `tcp_cdg_cwnd_event`.
    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CaEvent) {
        match ev {
            CaEvent::CwndRestart => {
                let mut fresh = Cdg::new(&self.p, 0);
                fresh.rng = self.rng.clone();
                fresh.stats = std::mem::take(&mut self.stats);
                fresh.rtt_seq = tp.snd_nxt;
                fresh.shadow_wnd = tp.cwnd;
                *self = fresh;
            }
            CaEvent::CompleteCwr => {
                self.state = State::Unknown;
                self.rtt_seq = tp.snd_nxt;
                self.rtt_prev = self.rtt;
                self.rtt = MinMax::default();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::tp;

    fn cdg() -> (Cdg, TcpCc) {
        let mut t = tp();
        let mut c = Cdg::new(&CdgConfig::default(), 1);
        c.init(&mut t);
        t.is_cwnd_limited = true;
        (c, t)
    }

    /// One round: samples `rtts_us` (each acking `acked` packets), then the round-closing ACK.
    fn round(c: &mut Cdg, t: &mut TcpCc, rtts_us: &[i64], acked: u32) {
        for &r in rtts_us {
            c.pkts_acked(t, &AckSample { pkts_acked: acked, rtt_ns: r * 1000, in_flight: t.cwnd });
        }
        t.snd_una = c.rtt_seq + 1;
        t.snd_nxt = t.snd_una + t.cwnd as u64;
        c.cong_avoid(t, acked);
    }

    #[test]
    fn nexp_matches_exp_of_minus_micro_x() {
        // tcp_cdg.c nexp_u32: "Returns exp(ux * -1e-6) * U32_MAX"
        for ux in [0u32, 1_000, 42_000, 336_000, 1_000_000, 5_000_000] {
            let want = (-(ux as f64) * 1e-6).exp() * u32::MAX as f64;
            let got = nexp_u32(ux) as f64;
            assert!((got - want).abs() / u32::MAX as f64 <= 2e-4, "ux {ux}: {got} vs {want}");
        }
        assert_eq!(nexp_u32(1 << 24), 0, "cut off at ux >= 2^24");
    }

    #[test]
    fn gradient_is_the_change_of_the_round_minimum_extrapolated_while_the_window_fills() {
        // tcp_cdg.c tcp_cdg_grad: grad = gmin > 0 ? gmin : gmax; !gfilled: grad * window / tail
        let (mut c, _) = cdg();
        c.rtt_prev = MinMax { min: 50_000, max: 50_500 };
        c.rtt = MinMax { min: 51_000, max: 52_000 };
        assert_eq!(c.grad(), 1000 * 8, "one gradient of 8, x 8 / 1");
        c.rtt_prev = c.rtt;
        c.rtt = MinMax { min: 51_000, max: 53_000 };
        assert_eq!(c.grad(), 1000 * 8 / 2, "gmin sum 1000 > 0, over 2 of 8");
        c.rtt_prev = c.rtt;
        c.rtt = MinMax { min: 50_000, max: 53_500 };
        assert_eq!(c.grad(), 3000 * 8 / 3, "gmin sum 0: the gmax sum 1500 + 1000 + 500");
        for _ in 0..5 {
            c.rtt_prev = c.rtt;
            c.grad();
        }
        assert!(c.gfilled);
        c.rtt_prev = c.rtt;
        assert_eq!(c.grad(), 1500, "full window: the plain sum, the first gradients dropped (gmin -1000, gmax 1500)");
    }

    #[test]
    fn rising_delay_backs_off_to_beta_via_cwr_and_a_falling_one_never_does() {
        // tcp_cdg.c tcp_cdg_backoff: get_random_u32() <= nexp_u32(grad * backoff_factor) -> no backoff;
        // else state BACKOFF, tcp_enter_cwr; tcp_cdg_ssthresh: cwnd * backoff_beta >> 10
        let (mut c, mut t) = cdg();
        t.ssthresh = 10;
        t.cwnd = 100;
        round(&mut c, &mut t, &[50_000, 50_000, 50_000], 1);
        // +40 ms per round: grad = 40000 x 8 = 320 ms -> P(backoff) = 1 - e^-13.4 ~ 1.
        round(&mut c, &mut t, &[90_000, 90_000, 90_000], 1);
        assert!(t.enter_cwr, "CWR asked for");
        assert_eq!(c.stats.backoffs, 1);
        assert_eq!(c.ssthresh(&t), (100 * 724) >> 10);

        let (mut c, mut t) = cdg();
        t.ssthresh = 10;
        t.cwnd = 100;
        round(&mut c, &mut t, &[90_000, 90_000], 1);
        for r in [80_000, 70_000, 60_000] {
            round(&mut c, &mut t, &[r, r], 1);
        }
        assert!(!t.enter_cwr);
        assert_eq!(c.stats.backoffs, 0);
    }

    #[test]
    fn ineffectual_backoffs_stop_after_use_ineff_in_a_row() {
        // tcp_cdg.c tcp_cdg_backoff: if (++backoff_cnt > use_ineff) return false
        let (mut c, mut t) = cdg();
        t.ssthresh = 10;
        t.cwnd = 100;
        let mut r = 50_000;
        round(&mut c, &mut t, &[r], 1);
        for _ in 0..10 {
            r += 40_000;
            t.enter_cwr = false;
            round(&mut c, &mut t, &[r], 1);
        }
        assert_eq!(c.stats.backoffs, 5);
    }

    #[test]
    fn loss_halves_but_keeps_the_shadow_window_of_a_loss_based_flow() {
        // tcp_cdg.c tcp_cdg_ssthresh: shadow_wnd = min(shadow_wnd >> 1, cwnd); max3(2, shadow_wnd, cwnd >> 1)
        let (mut c, t) = cdg();
        let mut t = t;
        t.cwnd = 50;
        c.shadow_wnd = 140; // cwnd was cut by backoffs; a loss-based flow would be at 140
        assert_eq!(c.ssthresh(&t), 50, "min(70, cwnd 50)");
        c.shadow_wnd = 80;
        assert_eq!(c.ssthresh(&t), 40);
        c.p.use_shadow = false;
        c.shadow_wnd = 140;
        assert_eq!(c.ssthresh(&t), 25);
    }

    #[test]
    fn delayed_ack_filter_keeps_single_segment_acks_out_of_the_maximum() {
        // tcp_cdg.c tcp_cdg_acked: pkts_acked == 1 && delack: only rtt.min = min(rtt.min, rtt)
        let (mut c, mut t) = cdg();
        c.pkts_acked(&mut t, &AckSample { pkts_acked: 2, rtt_ns: 50_000_000, in_flight: 10 });
        assert_eq!(c.delack, 1);
        c.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_ns: 90_000_000, in_flight: 10 });
        assert_eq!(c.rtt, MinMax { min: 50_000, max: 50_000 });
        assert_eq!(c.delack, 0);
        // With SACKed data out the filter is off.
        t.sacked_out = 1;
        c.delack = 1;
        c.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_ns: 90_000_000, in_flight: 10 });
        assert_eq!(c.rtt.max, 90_000);
    }

    #[test]
    fn hystart_delay_ends_slow_start_when_the_round_minimum_exceeds_nine_eighths() {
        // tcp_cdg.c tcp_cdg_hystart_update: sample_cnt >= 8 and rtt.min > delay_min + delay_min / 8
        let (mut c, mut t) = cdg();
        c.p.hystart_detect = HYSTART_DELAY;
        c.delay_min_us = 50_000;
        t.cwnd = 30;
        for _ in 0..9 {
            c.pkts_acked(&mut t, &AckSample { pkts_acked: 2, rtt_ns: 57_000_000, in_flight: 30 });
            c.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.ssthresh, t.cwnd, "57 ms > 56.25 ms");
        assert_eq!(c.stats.hystart_exits, 1);
    }

    #[test]
    fn complete_cwr_starts_a_new_round_and_clears_the_backoff_state() {
        // tcp_cdg.c tcp_cdg_cwnd_event CA_EVENT_COMPLETE_CWR
        let (mut c, mut t) = cdg();
        c.state = State::Backoff;
        c.rtt = MinMax { min: 1, max: 2 };
        t.snd_nxt = 77;
        c.cwnd_event(&mut t, CaEvent::CompleteCwr);
        assert_eq!(c.state, State::Unknown);
        assert_eq!(c.rtt_seq, 77);
        assert_eq!(c.rtt_prev, MinMax { min: 1, max: 2 });
        assert!(!c.rtt.is_set());
    }
}
