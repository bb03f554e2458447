//! TCP-NV ("New Vegas", Brakmo), modelled on Linux `tcp_nv.c`.
//!
//! Algorithm (L. Brakmo, "TCP-NV: An Update to TCP-Vegas", 2016; Linux
//! net/ipv4/tcp_nv.c): on every ACK with an RTT sample, in Open or Disorder,
//!   - avg_rtt = (rtt + last avg_rtt) / 2 (`nv_rtt_factor` 128/256); the
//!     delivery rate of the ACK's rate sample, in 100 bit/s:
//!     `in_flight_bytes * 80000 / avg_rtt_us` (`in_flight` = bytes delivered
//!     since the sampled packet was sent); its maximum over the RTT;
//!   - min_rtt = min avg_rtt; it restarts every `reset_period` x [3/4, 5/4)
//!     (random) from a second minimum kept since the last restart;
//!   - once per RTT (snd_una passed the snd_nxt of the last decision):
//!     `cwnd_by_slope = max_rate * min_rtt / (80000 * mss)`, the window that
//!     rate needs at the minimum RTT, and `max_win = cwnd_by_slope + pad`:
//!       cwnd > max_win (queue above `pad` packets): after at least 2 RTTs and
//!       60 ACK samples (30 in the first slow start) ssthresh = max_win and
//!       cwnd -= max(2, 30 % of cwnd - max_win) (cwnd = max_win if the gap
//!       is <= 2); growth stops until a later RTT finds no congestion;
//!       cwnd <= max_win - pad_buffer (and >= 20 samples): growth allowed;
//!       otherwise hold;
//!   - growth is Reno's (slow start, then +1 per RTT); after an RTO the
//!     growth rate halves per RTO down to 1/256 packet per RTT and doubles
//!     back after 8 uncongested RTTs each;
//!   - an RTT with a single ACK and a full nv_min_cwnd worth of bytes
//!     acknowledged (TSO / LRO / interrupt coalescing) raises the internal
//!     minimum window by 2 packets (to at most 81) and skips the decision;
//!   - on loss ssthresh = cwnd x 80 %; Loss/Recovery/CWR stop growth and
//!     reset the per-RTT state on return to Open.
//!
//! Sources: Brakmo 2016 (netdev 1.2 talk and the module's comments); Linux
//! net/ipv4/tcp_nv.c (Linux 6.18), read for this model.
//! Parameters (`NvConfig`): Linux's three module parameters, `nv_pad` 10
//! packets, `nv_reset_period` 5 s, `nv_min_cwnd` 2 packets; the module's other
//! statics are the constants below. Linux gets an optional base RTT from a
//! BPF_SOCK_OPS_BASE_RTT program (none here: no RTT bounds).
//! Simplifications: sequence numbers count segments, so byte quantities are
//! segments x mss; the reset timer runs on simulated ns instead of jiffies;
//! RTT samples are truncated to µs as Linux's `rtt_us`.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{AckSample, CaState, CongestionControl, TcpCc, INFINITE_SSTHRESH};

/// Decrease by this fraction of the excess over max_win, in 1/128 (`nv_cong_dec_mult` = 30 %).
pub const CONG_DEC_MULT_128: u32 = 30 * 128 / 100;
/// On congestion ssthresh = this x max_win / 8 (`nv_ssthresh_factor`).
pub const SSTHRESH_FACTOR_8: u32 = 8;
/// RTT averaging weight of the new sample, in 1/256 (`nv_rtt_factor`).
pub const RTT_FACTOR_256: u64 = 128;
/// On loss cwnd x this / 1024 (`nv_loss_dec_factor` = 80 %).
pub const LOSS_DEC_FACTOR_1024: u32 = 819;
/// Uncongested RTTs before a negative growth factor rises (`nv_cwnd_growth_rate_neg`).
pub const GROWTH_RATE_NEG_RTTS: u32 = 8;
/// Same for a non-negative factor; 0 = fixed, Reno-like (`nv_cwnd_growth_rate_pos`).
pub const GROWTH_RATE_POS_RTTS: u32 = 0;
/// ACK samples needed before a decrease (`nv_dec_eval_min_calls`).
pub const DEC_EVAL_MIN_CALLS: u8 = 60;
/// ACK samples needed before allowing growth (`nv_inc_eval_min_calls`).
pub const INC_EVAL_MIN_CALLS: u8 = 20;
/// ACK samples needed before leaving the first slow start (`nv_ssthresh_eval_min_calls`).
pub const SSTHRESH_EVAL_MIN_CALLS: u8 = 30;
/// Stop growth after this many RTTs without a decision in congestion (`nv_stop_rtt_cnt`).
pub const STOP_RTT_CNT: u8 = 10;
/// RTTs before a congestion decision (`nv_rtt_min_cnt`).
pub const RTT_MIN_CNT: u8 = 2;
/// cwnd must grow this much above max_win - pad before "no congestion" (`nv_pad_buffer`).
pub const PAD_BUFFER_PKTS: u32 = 2;
/// Initial internal minimum window (`NV_MIN_CWND`).
pub const INIT_MIN_CWND_PKTS: u32 = 4;
/// Its step (`NV_MIN_CWND_GROW`).
pub const MIN_CWND_GROW_PKTS: u32 = 2;
/// Its bound (`NV_TSO_CWND_BOUND`).
pub const TSO_CWND_BOUND_PKTS: u32 = 80;
/// "No RTT yet" (`NV_INIT_RTT`).
const INIT_RTT_US: u32 = u32::MAX;
/// First min-RTT restart after the start (`jiffies + 2 * HZ`).
pub const FIRST_RESET_NS: u64 = 2_000_000_000;

/// Per-connection NV state (Linux `struct tcpnv`).
#[derive(Debug, Clone)]
pub struct Nv {
    p: NvConfig,
    rng: Pcg64Mcg,
    /// When min_rtt restarts from min_rtt_new, ns.
    min_rtt_reset_ns: u64,
    /// < 0: less than one packet per RTT of growth.
    cwnd_growth_factor: i8,
    allow_cwnd_growth: bool,
    reset: bool,
    catchup: bool,
    /// ACK samples since the last evaluation.
    eval_call_cnt: u8,
    /// No decision below this cwnd; grows with TSO-like ACK patterns (`ca->nv_min_cwnd`).
    eval_min_cwnd_pkts: u32,
    /// RTTs without a decision.
    rtt_cnt: u8,
    last_rtt_us: u32,
    min_rtt_us: u32,
    min_rtt_new_us: u32,
    /// Maximum rate of this RTT, 100 bit/s.
    rtt_max_rate: u32,
    /// The RTT ends when snd_una passes this (segments).
    rtt_start_seq: u64,
    last_snd_una: u64,
    no_cong_cnt: u32,
    pub stats: NvStats,
}

/// What NV decided, for tests and traces.
#[derive(Debug, Clone, Default)]
pub struct NvStats {
    /// Congestion decisions (cwnd cut to max_win's neighbourhood).
    pub decreases: u64,
    /// min-RTT restarts.
    pub min_rtt_resets: u64,
}

crate::declare_cca! {
    /// NV's parameters: Linux `tcp_nv` module parameters, defaults = Linux's.
    pub struct NvConfig {
        /// Packets a flow may keep queued before NV decreases (Linux `nv_pad`).
        pad_pkts: u64 = 10, Range::closed(0.0, 1000.0);
        /// Period of the min-RTT restart, x [3/4, 5/4) at random (Linux `nv_reset_period`, s).
        reset_period_ns: u64 = 5_000_000_000, Range::closed(1_000_000_000.0, 3_600_000_000_000.0);
        /// NV never decreases cwnd below this without loss (Linux `nv_min_cwnd`).
        min_cwnd_pkts: u64 = 2, Range::closed(1.0, 1000.0);
    }
    cca Nv = "nv", "TCP-NV: Brakmo 2016; Linux net/ipv4/tcp_nv.c (pad 10 packets, reset period 5 s)";
    build = |p, seed| Nv::new(p, seed);
}

impl Nv {
    pub fn new(p: &NvConfig, seed: u64) -> Nv {
        Nv {
            p: p.clone(),
            rng: Pcg64Mcg::seed_from_u64(seed),
            min_rtt_reset_ns: 0,
            cwnd_growth_factor: 0,
            allow_cwnd_growth: true,
            reset: false,
            catchup: false,
            eval_call_cnt: 0,
            eval_min_cwnd_pkts: INIT_MIN_CWND_PKTS,
            rtt_cnt: 0,
            last_rtt_us: 0,
            min_rtt_us: INIT_RTT_US,
            min_rtt_new_us: INIT_RTT_US,
            rtt_max_rate: 0,
            rtt_start_seq: 0,
            last_snd_una: 0,
            no_cong_cnt: 0,
            stats: NvStats::default(),
        }
    }

    /// Linux `tcpnv_reset`.
    fn reset_round(&mut self, tp: &TcpCc) {
        self.reset = false;
        self.no_cong_cnt = 0;
        self.rtt_cnt = 0;
        self.last_rtt_us = 0;
        self.rtt_max_rate = 0;
        self.rtt_start_seq = tp.snd_una;
        self.eval_call_cnt = 0;
        self.last_snd_una = tp.snd_una;
    }

    fn pad(&self) -> u32 {
        self.p.pad_pkts as u32
    }

    fn min_cwnd(&self) -> u32 {
        self.p.min_cwnd_pkts as u32
    }

    /// The once-per-RTT decision of `tcpnv_acked`.
    fn decide(&mut self, tp: &mut TcpCc, bytes_acked: u64) {
        let mss = tp.mss as u64;
        self.rtt_start_seq = tp.snd_nxt;
        self.rtt_cnt = self.rtt_cnt.saturating_add(1);
        // One ACK per RTT carrying a whole minimum window: too small a cwnd
        // to judge (TSO, LRO, interrupt coalescing).
        if self.eval_call_cnt == 1
            && bytes_acked >= (self.eval_min_cwnd_pkts as u64 - 1) * mss
            && self.eval_min_cwnd_pkts < TSO_CWND_BOUND_PKTS + 1
        {
            self.eval_min_cwnd_pkts = (self.eval_min_cwnd_pkts + MIN_CWND_GROW_PKTS).min(TSO_CWND_BOUND_PKTS + 1);
            self.rtt_start_seq = tp.snd_nxt + self.eval_min_cwnd_pkts as u64;
            self.eval_call_cnt = 0;
            self.allow_cwnd_growth = true;
            return;
        }
        // The window the RTT's maximum rate needs at the minimum RTT.
        let cwnd_by_slope = (self.rtt_max_rate as u64 * self.min_rtt_us as u64 / (80_000 * mss)) as u32;
        let max_win = cwnd_by_slope.wrapping_add(self.pad());
        if tp.cwnd > max_win {
            if self.rtt_cnt < RTT_MIN_CNT {
                return;
            } else if tp.ssthresh == INFINITE_SSTHRESH {
                if self.eval_call_cnt < SSTHRESH_EVAL_MIN_CALLS {
                    return;
                }
            } else if self.eval_call_cnt < DEC_EVAL_MIN_CALLS {
                if self.allow_cwnd_growth && self.rtt_cnt > STOP_RTT_CNT {
                    self.allow_cwnd_growth = false;
                }
                return;
            }
            self.allow_cwnd_growth = false;
            self.stats.decreases += 1;
            tp.ssthresh = (SSTHRESH_FACTOR_8.wrapping_mul(max_win)) >> 3;
            if tp.cwnd - max_win > 2 {
                let dec = 2u32.max(((tp.cwnd - max_win) * CONG_DEC_MULT_128) >> 7);
                tp.cwnd -= dec;
            } else {
                tp.cwnd = max_win;
            }
            if self.cwnd_growth_factor > 0 {
                self.cwnd_growth_factor = 0;
            }
            self.no_cong_cnt = 0;
        } else if tp.cwnd <= max_win.wrapping_sub(PAD_BUFFER_PKTS) {
            if self.eval_call_cnt < INC_EVAL_MIN_CALLS {
                return;
            }
            self.allow_cwnd_growth = true;
            self.no_cong_cnt += 1;
            // Linux: a rate of 0 RTTs switches the step off (nv_cwnd_growth_rate_pos is 0).
            let rate = if self.cwnd_growth_factor < 0 { GROWTH_RATE_NEG_RTTS } else { GROWTH_RATE_POS_RTTS };
            if rate != 0 && self.no_cong_cnt > rate {
                self.cwnd_growth_factor += 1;
                self.no_cong_cnt = 0;
            }
        } else {
            return;
        }
        self.eval_call_cnt = 0;
        self.rtt_cnt = 0;
        self.rtt_max_rate = 0;
        tp.cwnd = tp.cwnd.max(self.min_cwnd());
    }
}

impl CongestionControl for Nv {
    hooks!(pkts_acked);
    fn name(&self) -> &'static str {
        "nv"
    }

    fn init(&mut self, tp: &mut TcpCc) {
        self.reset_round(tp);
        self.allow_cwnd_growth = true;
        self.min_rtt_reset_ns = tp.now_ns + FIRST_RESET_NS;
        self.min_rtt_us = INIT_RTT_US;
        self.min_rtt_new_us = INIT_RTT_US;
        self.eval_min_cwnd_pkts = INIT_MIN_CWND_PKTS;
        self.catchup = false;
        self.cwnd_growth_factor = 0;
    }

    /// Linux `tcpnv_recalc_ssthresh`.
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        ((tp.cwnd.wrapping_mul(LOSS_DEC_FACTOR_1024)) >> 10).max(2)
    }

    /// Linux `tcpnv_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        if !self.allow_cwnd_growth {
            return;
        }
        let Some(acked) = tp.after_slow_start(acked) else { return };
        let cnt = if self.cwnd_growth_factor < 0 {
            tp.cwnd << (-self.cwnd_growth_factor) as u32
        } else {
            4u32.max(tp.cwnd >> self.cwnd_growth_factor as u32)
        };
        tp.cong_avoid_ai(cnt, acked);
    }

    /// Linux `tcpnv_state`.
    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Open && self.reset {
            self.reset_round(tp);
        } else if matches!(new_state, CaState::Loss | CaState::Cwr | CaState::Recovery) {
            self.reset = true;
            self.allow_cwnd_growth = false;
            if new_state == CaState::Loss {
                if self.cwnd_growth_factor > 0 {
                    self.cwnd_growth_factor = 0;
                }
                // Linux also asks nv_cwnd_growth_rate_neg > 0 (it is GROWTH_RATE_NEG_RTTS = 8).
                if self.cwnd_growth_factor > -8 {
                    self.cwnd_growth_factor -= 1;
                }
            }
        }
    }

    /// Linux `tcpnv_acked`.
    fn pkts_acked(&mut self, tp: &mut TcpCc, sample: &AckSample) {
        if sample.rtt_ns < 0 {
            return;
        }
        if !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            return;
        }
        if self.catchup && tp.cwnd >= self.min_cwnd() {
            self.catchup = false;
            self.allow_cwnd_growth = false;
        }
        let mss = tp.mss as u64;
        let bytes_acked = (tp.snd_una - self.last_snd_una) * mss;
        self.last_snd_una = tp.snd_una;
        // Linux: sample->in_flight = mss * (delivered - rate->prior_delivered).
        let in_flight_bytes = mss * (tp.delivered - tp.rate_prior_delivered);
        if in_flight_bytes == 0 {
            return;
        }
        let rtt_us = (sample.rtt_ns as u64 / 1000) as u32;
        let avg_rtt_us = if self.last_rtt_us > 0 {
            ((rtt_us as u64 * RTT_FACTOR_256 + self.last_rtt_us as u64 * (256 - RTT_FACTOR_256)) >> 8) as u32
        } else {
            self.min_rtt_us = rtt_us << 1;
            rtt_us
        };
        self.last_rtt_us = avg_rtt_us;
        // Rate in 100 bit/s.
        let rate = (in_flight_bytes * 80_000 / (avg_rtt_us.max(1) as u64)) as u32;
        self.rtt_max_rate = self.rtt_max_rate.max(rate);
        self.eval_call_cnt = self.eval_call_cnt.saturating_add(1);
        self.min_rtt_us = self.min_rtt_us.min(avg_rtt_us);
        self.min_rtt_new_us = self.min_rtt_new_us.min(avg_rtt_us);
        if tp.now_ns >= self.min_rtt_reset_ns {
            let rand = self.rng.gen::<u8>() as u64;
            self.min_rtt_us = self.min_rtt_new_us;
            self.min_rtt_new_us = INIT_RTT_US;
            self.min_rtt_reset_ns = tp.now_ns + ((self.p.reset_period_ns * (384 + rand)) >> 9);
            self.eval_min_cwnd_pkts = (self.eval_min_cwnd_pkts / 2).max(INIT_MIN_CWND_PKTS);
            self.stats.min_rtt_resets += 1;
        }
        if self.rtt_start_seq < tp.snd_una {
            self.decide(tp, bytes_acked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::tp;

    const RTT_NS: i64 = 50_000_000;

    fn nv() -> (Nv, TcpCc) {
        let mut t = tp();
        let mut n = Nv::new(&NvConfig::default(), 1);
        n.init(&mut t);
        t.delivered = 1000;
        (n, t)
    }

    /// One ACK of one segment with `rtt_ns`, `in_flight` segments delivered since its send.
    fn ack(n: &mut Nv, t: &mut TcpCc, rtt_ns: i64, in_flight: u64) {
        t.snd_una += 1;
        t.snd_nxt = t.snd_nxt.max(t.snd_una + t.cwnd as u64);
        t.delivered += 1;
        t.rate_prior_delivered = t.delivered - in_flight;
        n.pkts_acked(t, &AckSample { pkts_acked: 1, rtt_ns, in_flight: t.cwnd });
    }

    /// Rate of a flow with `in_flight` segments over `rtt_us`, NV's 100 bit/s.
    fn rate(in_flight: u64, rtt_us: u64) -> u32 {
        (in_flight * 1448 * 80_000 / rtt_us) as u32
    }

    #[test]
    fn rate_is_bytes_delivered_since_send_over_the_averaged_rtt_in_100_bit_per_s() {
        // tcp_nv.c tcpnv_acked: rate64 = in_flight * 80000; do_div(rate64, avg_rtt)
        let (mut n, mut t) = nv();
        ack(&mut n, &mut t, RTT_NS, 40);
        assert_eq!(n.rtt_max_rate, rate(40, 50_000));
        // The first sample sets min_rtt to twice the RTT (`nv_min_rtt = avg_rtt << 1`).
        assert_eq!(n.min_rtt_us, 50_000);
        // avg_rtt = (new + old) / 2: a 70 ms sample averages to 60 ms.
        ack(&mut n, &mut t, 70_000_000, 40);
        assert_eq!(n.last_rtt_us, 60_000);
    }

    #[test]
    fn congestion_cuts_thirty_percent_of_the_excess_over_max_win_and_sets_ssthresh_to_max_win() {
        // tcp_nv.c tcpnv_acked: cwnd > max_win = cwnd_by_slope + nv_pad, enough calls:
        // ssthresh = (nv_ssthresh_factor * max_win) >> 3; dec = max(2, (cwnd - max_win) * 38 >> 7)
        let (mut n, mut t) = nv();
        t.ssthresh = 50;
        t.cwnd = 100;
        // Path: 40 packets per 50 ms at the min RTT, so cwnd_by_slope = 40, max_win = 50.
        for _ in 0..70 {
            ack(&mut n, &mut t, RTT_NS, 40);
        }
        n.rtt_cnt = RTT_MIN_CNT;
        n.rtt_start_seq = 0;
        ack(&mut n, &mut t, RTT_NS, 40);
        assert_eq!(t.ssthresh, 50);
        assert_eq!(t.cwnd, 100 - (((100 - 50) * 38) >> 7));
        assert!(!n.allow_cwnd_growth);
        assert_eq!(n.stats.decreases, 1);
    }

    #[test]
    fn no_decision_before_nv_dec_eval_min_calls_samples() {
        // tcp_nv.c: `else if (ca->nv_eval_call_cnt < nv_dec_eval_min_calls) return;`
        let (mut n, mut t) = nv();
        t.ssthresh = 50;
        t.cwnd = 100;
        for _ in 0..30 {
            ack(&mut n, &mut t, RTT_NS, 40);
        }
        n.rtt_cnt = RTT_MIN_CNT;
        n.rtt_start_seq = 0;
        ack(&mut n, &mut t, RTT_NS, 40);
        assert_eq!(t.cwnd, 100);
        assert_eq!(n.stats.decreases, 0);
    }

    #[test]
    fn growth_allowed_again_when_cwnd_is_pad_buffer_below_max_win() {
        // tcp_nv.c: `else if (tp->snd_cwnd <= max_win - nv_pad_buffer)`: allow growth
        let (mut n, mut t) = nv();
        t.ssthresh = 20;
        t.cwnd = 45;
        n.allow_cwnd_growth = false;
        for _ in 0..25 {
            ack(&mut n, &mut t, RTT_NS, 40);
        }
        n.rtt_start_seq = 0;
        ack(&mut n, &mut t, RTT_NS, 40); // max_win = 50, 45 <= 48
        assert!(n.allow_cwnd_growth);
        t.is_cwnd_limited = true;
        let before = (t.cwnd, t.cwnd_cnt);
        n.cong_avoid(&mut t, 1);
        assert_eq!((t.cwnd, t.cwnd_cnt), (before.0, before.1 + 1), "Reno growth: one credit per ACKed packet");
    }

    #[test]
    fn loss_sets_ssthresh_to_eighty_percent_and_an_rto_lowers_the_growth_rate() {
        // tcp_nv.c tcpnv_recalc_ssthresh: max((cwnd * 819) >> 10, 2); tcpnv_state: Loss -> factor--
        let (mut n, mut t) = nv();
        t.cwnd = 100;
        assert_eq!(n.ssthresh(&t), 79);
        n.set_state(&mut t, CaState::Loss);
        assert_eq!(n.cwnd_growth_factor, -1);
        assert!(!n.allow_cwnd_growth);
        // A negative factor: cwnd_cnt must reach cwnd << 1 per +1.
        n.allow_cwnd_growth = true;
        t.ssthresh = 10;
        t.cwnd = 20;
        t.is_cwnd_limited = true;
        n.cong_avoid(&mut t, 39);
        assert_eq!(t.cwnd, 20);
        n.cong_avoid(&mut t, 1);
        assert_eq!(t.cwnd, 21);
    }

    #[test]
    fn min_rtt_restarts_from_the_newer_minimum_after_the_reset_period() {
        // tcp_nv.c: time_after_eq(now, nv_min_rtt_reset_jiffies): nv_min_rtt = nv_min_rtt_new,
        // next deadline now + nv_reset_period * (384 + rand) / 512
        let (mut n, mut t) = nv();
        ack(&mut n, &mut t, RTT_NS, 40);
        n.min_rtt_us = 10_000; // an old, lower minimum
        t.now_ns = FIRST_RESET_NS;
        ack(&mut n, &mut t, RTT_NS, 40);
        assert_eq!(n.min_rtt_us, 50_000);
        assert_eq!(n.stats.min_rtt_resets, 1);
        let period = n.min_rtt_reset_ns - t.now_ns;
        assert!((3_750_000_000..6_250_000_000).contains(&period), "{period}");
    }

    #[test]
    fn one_ack_per_rtt_raises_the_internal_minimum_window_and_skips_the_decision() {
        // tcp_nv.c: nv_eval_call_cnt == 1 && bytes_acked >= (nv_min_cwnd - 1) * mss
        let (mut n, mut t) = nv();
        t.cwnd = 100;
        t.ssthresh = 50;
        n.rtt_start_seq = 0;
        n.last_snd_una = 0;
        t.snd_una = 10;
        t.delivered = 10;
        t.rate_prior_delivered = 0;
        n.pkts_acked(&mut t, &AckSample { pkts_acked: 10, rtt_ns: RTT_NS, in_flight: 100 });
        assert_eq!(n.eval_min_cwnd_pkts, INIT_MIN_CWND_PKTS + MIN_CWND_GROW_PKTS);
        assert_eq!(n.rtt_start_seq, t.snd_nxt + n.eval_min_cwnd_pkts as u64);
        assert_eq!(t.cwnd, 100);
    }
}
