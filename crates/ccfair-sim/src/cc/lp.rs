//! TCP Low Priority (TCP-LP): Linux `net/ipv4/tcp_lp.c`, function by function.
//!
//! Algorithm (A. Kuzmanovic, E. Knightly, "TCP-LP: A Distributed Algorithm
//! for Low Priority Data Transfer", IEEE INFOCOM 2003), as the Linux module
//! (Wong Hoi Sing, Hung Hing Lun; Linux 6.x) implements it, per ACK that
//! acks data:
//!   - `tcp_lp_remote_hz_estimator`: the remote timestamp clock rate,
//!     remote_hz = TS_HZ x (TSval - TSval') / (TSecr - TSecr') between this
//!     ACK and the previous one (skipped while either is unchanged), averaged
//!     63/64 old + 1/64 new; valid once > 0;
//!   - `tcp_lp_owd_calculator`: owd = TSval x (LP_RESOL / remote_hz) - TSecr
//!     in u32 arithmetic (TSval: the receiver's clock when it sent the ACK;
//!     TSecr: our clock when we sent the echoed segment); valid if > 0;
//!   - `tcp_lp_rtt_sample` (only if the ACK has an RTT sample): owd_min,
//!     owd_max ("always forget the max of the max" through owd_max_rsv),
//!     sowd = 7/8 sowd + 1/8 owd (sowd holds owd << 3 in a u32);
//!   - `tcp_lp_pkts_acked`: inference = 3 x (now - TSecr); within inference
//!     if the last indication is younger; early congestion indication unless
//!     sowd >> 3 < owd_min + 15 % (owd_max - owd_min). On an indication the
//!     range restarts at owd_min = sowd, owd_max = owd_max_rsv = 2 sowd (the
//!     module's "FIXME"), cwnd = 1 within inference, else cwnd / 2 (never
//!     below 1); ssthresh is not touched;
//!   - `tcp_lp_cong_avoid`: `tcp_reno_cong_avoid` unless within inference;
//!     losses as Reno (`tcp_reno_ssthresh`).
//!
//! Written from the Linux source and the paper, not copied. Constants:
//! `THRESHOLD_PCT` = 15 (percent of the owd range), `INFERENCE_RTTS` = 3
//! (both parameters, [`LpConfig`], Linux's constants by default),
//! `TS_HZ` = `LP_RESOL` = 1000 (Linux TCP_TS_HZ: 1 ms timestamp ticks).
//!
//! Consequences of the module's integer arithmetic, modelled as they are
//! (tests below; docs/fidelity.md "TCP-LP"): the first owd sample is always
//! an indication (owd_min = owd_max); a remote_hz estimate above 1000 makes
//! `LP_RESOL / remote_hz` zero and owd = 2^32 - TSecr, so sowd overflows
//! and no indication ever comes (the flow runs as Reno) until the estimate
//! falls back to 1000 or below.
//!
//! Timestamps as Linux reads them: one host clock, `tcp_clock_ns` (ns since boot), in ms
//! mod 2^32 ([`TcpCc::draw_ts_clocks`]: its reading at time 0, the epoch). `now`
//! (`tcp_time_stamp_ts`) and TSecr (`rcv_tsecr`, from which `tcp_fast_parse_options`
//! takes our `tsoffset` off again) are our clock; TSval carries the receiver's random
//! offset (`net.ipv4.tcp_timestamps = 1`, Linux's default) or none (`= 2`). The owd is
//! then TSval - TSecr = (offset + one-way delay) mod 2^32 while remote_hz is in (500,
//! 1000], or 2^32 - TSecr above 1000, where the epoch decides what sowd and the owd
//! range become: above 2^29 ms (7/8 of offsets) owd << 3 overflows sowd and the module
//! never indicates (test `random_timestamp_offset_overflows_sowd_and_lp_never_indicates`).
//!
//! The receiver echoes the TSval as Linux's `tcp_replace_ts_recent` does (tcp/receiver.rs).
//! With the cargo feature `lp-trace` each `pkts_acked` prints the BPF port's trace fields
//! to stderr (bench/lp_bpf/trace.py), and `LP_WHATIF_FIRST_RHZ` replaces the first
//! remote_hz sample (a what-if of docs/linux-ports.md "TCP-LP"); without it nothing changes.

use super::{reno, AckSample, CongestionControl, TcpCc};

/// Early-congestion threshold δ: percent of (owd_max - owd_min) above owd_min.
pub const THRESHOLD_PCT: u32 = 15;
/// Inference time in units of the last ACK's TSecr age (~RTT).
pub const INFERENCE_RTTS: u32 = 3;
/// Linux TCP timestamp clock rate (TCP_TS_HZ): 1 ms ticks, 32 bits.
pub const TS_HZ: u32 = 1000;
/// Linux LP_RESOL (= TCP_TS_HZ): the owd's resolution, ticks per second.
pub const LP_RESOL: u32 = TS_HZ;
const NS_PER_TS_TICK: u64 = 1_000_000_000 / TS_HZ as u64;

// Linux `enum tcp_lp_state`.
const LP_VALID_RHZ: u32 = 1 << 0;
const LP_VALID_OWD: u32 = 1 << 1;
const LP_WITHIN_THR: u32 = 1 << 3;
const LP_WITHIN_INF: u32 = 1 << 4;

/// A simulator time (ns) on the 32-bit TCP timestamp clock (`tcp_time_stamp_ms`).
fn ts(ns: u64) -> u32 {
    (ns / NS_PER_TS_TICK) as u32
}

/// `tcp_time_stamp_ts(tp)`, `rx_opt.rcv_tsval`, `rx_opt.rcv_tsecr` as Linux sees
/// them: the host clock (time + epoch) in ms, TSval plus the receiver's `tsoffset`, u32.
fn linux_timestamps(tp: &TcpCc) -> (u32, u32, u32) {
    let clock = |ns: u64| ts(ns + tp.ts_epoch_ns);
    (clock(tp.now_ns), clock(tp.rcv_tsval_ns).wrapping_add(tp.peer_ts_offset_ms), clock(tp.rcv_tsecr_ns))
}

/// Per-connection state: Linux `struct lp`, with its u32 fields.
#[derive(Debug, Clone)]
pub struct Lp {
    /// Parameters (threshold, inference time).
    p: LpConfig,
    /// `LP_*` flags.
    flag: u32,
    /// Smoothed one-way delay << 3, TS ticks.
    sowd: u32,
    owd_min: u32,
    owd_max: u32,
    owd_max_rsv: u32,
    /// Estimated remote timestamp clock rate, Hz.
    remote_hz: u32,
    remote_ref_time: u32,
    local_ref_time: u32,
    /// Time of the last early-congestion reduction, TS ticks (0 = none).
    last_drop: u32,
    /// Inference time, TS ticks.
    inference: u32,
}

impl Default for Lp {
    fn default() -> Self {
        Lp::new()
    }
}

impl Lp {
    pub fn new() -> Lp {
        Lp::with_params(LpConfig::default())
    }

    /// Linux `tcp_lp_init`.
    pub fn with_params(p: LpConfig) -> Lp {
        Lp {
            p,
            flag: 0,
            sowd: 0,
            owd_min: u32::MAX,
            owd_max: 0,
            owd_max_rsv: 0,
            remote_hz: 0,
            remote_ref_time: 0,
            local_ref_time: 0,
            last_drop: 0,
            inference: 0,
        }
    }

    /// Linux `tcp_lp_remote_hz_estimator`: the ratio of the remote clock's
    /// advance to ours between two ACKs, x TS_HZ, averaged 63/64 old + 1/64
    /// new (all in Linux's integer types).
    fn remote_hz_estimator(&mut self, tsval: u32, tsecr: u32) -> u32 {
        let mut rhz = (self.remote_hz << 6) as i64;
        let known = self.remote_ref_time != 0 && self.local_ref_time != 0;
        if known && tsval != self.remote_ref_time && tsecr != self.local_ref_time {
            let mut m = (TS_HZ.wrapping_mul(tsval.wrapping_sub(self.remote_ref_time)) / tsecr.wrapping_sub(self.local_ref_time)) as i64;
            if rhz > 0 {
                m -= rhz >> 6;
                rhz += m;
            } else {
                rhz = m << 6;
                #[cfg(feature = "lp-trace")]
                if let Ok(v) = std::env::var("LP_WHATIF_FIRST_RHZ") {
                    rhz = v.parse::<i64>().unwrap() << 6;
                }
            }
        }
        self.set_flag(LP_VALID_RHZ, (rhz >> 6) > 0);
        self.remote_ref_time = tsval;
        self.local_ref_time = tsecr;
        (rhz >> 6) as u32
    }

    /// Linux `tcp_lp_owd_calculator`: owd = TSval x (LP_RESOL / remote_hz) -
    /// TSecr, in u32 arithmetic (so never negative: its `owd < 0` branch is dead).
    fn owd_calculator(&mut self, tsval: u32, tsecr: u32) -> u32 {
        self.remote_hz = self.remote_hz_estimator(tsval, tsecr);
        let mut owd = 0u32;
        if self.flag & LP_VALID_RHZ != 0 {
            owd = tsval.wrapping_mul(LP_RESOL / self.remote_hz).wrapping_sub(tsecr.wrapping_mul(LP_RESOL / TS_HZ));
        }
        self.set_flag(LP_VALID_OWD, owd > 0);
        owd
    }

    /// Linux `tcp_lp_rtt_sample`: owd range ("always forget the max of the
    /// max") and smoothed owd, sowd = 7/8 sowd + 1/8 owd.
    fn rtt_sample(&mut self, tsval: u32, tsecr: u32) {
        let mut mowd = self.owd_calculator(tsval, tsecr) as i64;
        if self.flag & LP_VALID_RHZ == 0 || self.flag & LP_VALID_OWD == 0 {
            return;
        }
        if mowd < self.owd_min as i64 {
            self.owd_min = mowd as u32;
        }
        if mowd > self.owd_max as i64 {
            if mowd > self.owd_max_rsv as i64 {
                self.owd_max = if self.owd_max_rsv == 0 { mowd as u32 } else { self.owd_max_rsv };
                self.owd_max_rsv = mowd as u32;
            } else {
                self.owd_max = mowd as u32;
            }
        }
        if self.sowd != 0 {
            mowd -= (self.sowd >> 3) as i64;
            self.sowd = (self.sowd as i64 + mowd) as u32;
        } else {
            self.sowd = (mowd << 3) as u32;
        }
    }

    fn set_flag(&mut self, f: u32, on: bool) {
        if on {
            self.flag |= f;
        } else {
            self.flag &= !f;
        }
    }
}

impl CongestionControl for Lp {
    hooks!(pkts_acked);
    fn name(&self) -> &'static str {
        "lp"
    }

    /// Linux `tcp_reno_ssthresh`.
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        (tp.cwnd / 2).max(reno::MIN_SSTHRESH_PKTS)
    }

    /// Linux `tcp_lp_cong_avoid`: Reno, except within the inference time.
    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        if self.flag & LP_WITHIN_INF == 0 {
            reno::reno_cong_avoid(tp, acked);
        }
    }

    /// Linux `tcp_lp_pkts_acked`: early congestion indication and reaction.
    fn pkts_acked(&mut self, tp: &mut TcpCc, sample: &AckSample) {
        let (now, tsval, tsecr) = linux_timestamps(tp);
        if sample.rtt_ns > 0 {
            self.rtt_sample(tsval, tsecr);
        }
        let delta = now.wrapping_sub(tsecr);
        if (delta as i32) > 0 {
            self.inference = self.p.inference_rtts.wrapping_mul(delta);
        }
        let within_inf = self.last_drop != 0 && now.wrapping_sub(self.last_drop) < self.inference;
        self.set_flag(LP_WITHIN_INF, within_inf);
        let span = self.owd_max.wrapping_sub(self.owd_min);
        let thr = self.owd_min.wrapping_add(self.p.threshold_pct.wrapping_mul(span) / 100);
        self.set_flag(LP_WITHIN_THR, (self.sowd >> 3) < thr);
        #[cfg(feature = "lp-trace")]
        eprintln!(
            "lp {:p} {} {now} {} {} {tsval} {tsecr} {} {} {} {} {} {}",
            self as *const Lp,
            tp.now_ns,
            tp.cwnd,
            self.flag,
            self.remote_hz,
            self.sowd >> 3,
            self.owd_min,
            self.owd_max,
            self.inference,
            sample.rtt_ns / 1000
        );
        if self.flag & LP_WITHIN_THR != 0 {
            return;
        }
        // Linux's "FIXME": restart the owd range around the smoothed owd.
        self.owd_min = self.sowd >> 3;
        self.owd_max = self.sowd >> 2;
        self.owd_max_rsv = self.sowd >> 2;
        tp.cwnd = if within_inf { 1 } else { (tp.cwnd >> 1).max(1) };
        self.last_drop = now;
    }
}

crate::declare_params! {
    /// TCP-LP's parameters: Linux `tcp_lp.c` constants (not module parameters there), defaults = Linux's.
    pub struct LpConfig {
        /// Early-congestion threshold delta: smoothed one-way delay above owd_min + this percent of (owd_max - owd_min) (Linux/paper: 15).
        threshold_pct: u32 = THRESHOLD_PCT, Range::closed(0.0, 100.0);
        /// Inference time after an indication, in units of the ACK's TSecr age (~RTT): no growth, and a second indication sets cwnd = 1 (Linux: 3).
        inference_rtts: u32 = INFERENCE_RTTS, Range::closed(0.0, 100.0);
    }
}

impl super::Cca for Lp {
    type Params = LpConfig;
    const NAME: &'static str = "lp";
    const SOURCE: &'static str =
        "TCP-LP (low priority): Kuzmanovic & Knightly, INFOCOM 2003; Linux net/ipv4/tcp_lp.c (one-way delay threshold 15 %, inference 3 RTT)";
    fn build(p: &LpConfig, _seed: u64) -> Box<dyn CongestionControl> {
        Box::new(Lp::with_params(p.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::tp;

    const MS: u64 = 1_000_000;

    /// One sender and the ACKs it receives; times in ms on the simulator clock,
    /// the receiver's timestamp offset `offset_ms` (Linux tcp_timestamps = 1), ours 0.
    struct Conn {
        lp: Lp,
        t: TcpCc,
    }

    impl Conn {
        fn new(p: LpConfig, offset_ms: u32) -> Conn {
            Conn::with_clock(p, 0, offset_ms)
        }

        /// The host clock at time 0 (ms since boot) and the receiver's `tsoffset`.
        fn with_clock(p: LpConfig, epoch_ms: u32, peer_ms: u32) -> Conn {
            let mut t = tp();
            t.ts_epoch_ns = epoch_ms as u64 * MS;
            t.peer_ts_offset_ms = peer_ms;
            Conn { lp: Lp::with_params(p), t }
        }

        /// An ACK arriving at `now_ms` for a segment sent at `sent_ms` whose
        /// ACK left the receiver `owd_ms` later; then Reno's growth step.
        fn ack(&mut self, sent_ms: u64, owd_ms: u64, now_ms: u64) {
            self.t.now_ns = now_ms * MS;
            self.t.rcv_tsecr_ns = sent_ms * MS;
            self.t.rcv_tsval_ns = (sent_ms + owd_ms) * MS;
            let rtt_ns = ((now_ms - sent_ms) * MS) as i64;
            self.lp.pkts_acked(&mut self.t, &AckSample { pkts_acked: 1, rtt_ns, in_flight: 10 });
            self.lp.cong_avoid(&mut self.t, 1);
        }

        /// Two ACKs that set remote_hz = 850 (the owd fell from 40 to 25 ms
        /// between them), the second the first owd sample.
        fn learn_clock(&mut self) {
            self.ack(1000, 40, 1060);
            self.ack(1100, 25, 1150);
            assert_eq!(self.lp.remote_hz, 850);
        }

        /// ACKs every 10 ms from `from_ms` on, owd 40 ms: a standing queue of 15 ms.
        /// Returns the cwnd after each.
        fn queue_builds(&mut self, from_ms: u64, n: u64) -> Vec<u32> {
            (0..n)
                .map(|k| {
                    let sent = from_ms + 10 * k;
                    self.ack(sent, 40, sent + 65);
                    self.t.cwnd
                })
                .collect()
        }
    }

    #[test]
    fn no_owd_sample_until_two_acks_advance_both_timestamp_clocks() {
        // tcp_lp_remote_hz_estimator: no reference, then an unchanged TSecr: no estimate.
        let mut c = Conn::new(LpConfig::default(), 0);
        c.ack(1000, 30, 1050);
        c.ack(1000, 31, 1051);
        assert_eq!((c.lp.remote_hz, c.lp.sowd, c.t.cwnd), (0, 0, 12), "no sample, Reno slow start");
        // TSval +94, TSecr +100: remote_hz = 1000 x 94 / 100.
        c.ack(1100, 25, 1150);
        assert_eq!(c.lp.remote_hz, 940);
    }

    #[test]
    fn first_owd_sample_is_an_indication_and_restarts_the_range_at_sowd_and_twice_sowd() {
        // tcp_lp_pkts_acked: with owd_min = owd_max the threshold is owd_min itself.
        let mut c = Conn::new(LpConfig::default(), 0);
        c.ack(1000, 40, 1060);
        assert_eq!(c.t.cwnd, 11);
        c.ack(1100, 25, 1150);
        // 11 halved, then this ACK's Reno step: its inference flag was set
        // before the indication (Linux calls cong_avoid after pkts_acked).
        assert_eq!(c.t.cwnd, 6);
        assert_eq!((c.lp.sowd >> 3, c.lp.owd_min, c.lp.owd_max, c.lp.owd_max_rsv), (25, 25, 50, 50));
    }

    #[test]
    fn second_indication_within_inference_sets_cwnd_one_and_growth_waits_for_its_end() {
        // tcp_lp_pkts_acked / tcp_lp_cong_avoid. After the first sample (cwnd
        // 11 -> 5 + 1 at 1150 ms) the threshold is 25 + 15 % x 25 = 28 ms; with owd
        // 40 ms sowd crosses it on the second ACK, within the inference time
        // (3 x 65 ms).
        let mut c = Conn::new(LpConfig::default(), 0);
        c.learn_clock();
        let cwnds = c.queue_builds(1200, 2);
        assert_eq!(cwnds, vec![6, 1]);
        assert!(c.lp.remote_hz < TS_HZ, "{}", c.lp.remote_hz);
        // Delay back to 25 ms (the range restarted at [sowd, 2 sowd] = [28, 56]):
        // no growth until 3 x 65 ms after the last indication, Reno's after.
        assert_eq!(c.lp.last_drop, 1275);
        for k in 0..30 {
            let sent = 1300 + 10 * k;
            c.ack(sent, 25, sent + 50);
            if sent + 50 - 1275 < c.lp.inference as u64 {
                assert_eq!(c.t.cwnd, 1, "within inference at {} ms", sent + 50);
            }
        }
        assert_eq!(c.lp.last_drop, 1275, "no indication at the old delay");
        assert!(c.t.cwnd > 1, "Reno growth after the inference time");
    }

    #[test]
    fn remote_hz_estimate_above_ts_hz_zeroes_the_owd_scale_and_lp_never_indicates() {
        // tcp_lp_owd_calculator: LP_RESOL / remote_hz = 0 for remote_hz > 1000,
        // owd = 2^32 - TSecr; sowd (owd << 3 in a u32) overflows below owd_min.
        let mut c = Conn::new(LpConfig::default(), 0);
        c.ack(1000, 25, 1050);
        c.ack(1100, 40, 1150); // TSval +115 per TSecr +100
        assert_eq!(c.lp.remote_hz, 1150);
        assert_eq!(c.lp.owd_min, 0u32.wrapping_sub(1100), "owd = 2^32 - TSecr");
        let cwnd = c.t.cwnd;
        let cwnds = c.queue_builds(1200, 30);
        assert!(cwnds.windows(2).all(|w| w[1] >= w[0]), "never reduced: {cwnds:?}");
        assert!(c.t.cwnd > cwnd);
    }

    #[test]
    fn random_timestamp_offset_overflows_sowd_and_lp_never_indicates() {
        // The same ACKs as the test above, the receiver's timestamp clock ahead by
        // an offset (Linux tcp_timestamps = 1: a random u32 per connection).
        // Above 2^29 ms, owd << 3 overflows sowd: not even the first sample
        // indicates, nor the standing queue.
        let mut c = Conn::new(LpConfig::default(), 3_000_000_000);
        c.learn_clock();
        assert_eq!(c.t.cwnd, 12, "first sample: no indication");
        let cwnds = c.queue_builds(1200, 30);
        assert!(cwnds.windows(2).all(|w| w[1] >= w[0]), "never reduced: {cwnds:?}");
        // Below 2^29 ms: the first sample halves, and the restarted range [S, 2 S]
        // (S ~ the offset) puts the threshold out of reach.
        let mut c = Conn::new(LpConfig::default(), 100_000_000);
        c.learn_clock();
        assert_eq!(c.t.cwnd, 6);
        let cwnds = c.queue_builds(1200, 30);
        assert!(cwnds.windows(2).all(|w| w[1] >= w[0]), "never reduced again: {cwnds:?}");
    }

    #[test]
    fn the_receiver_draws_a_uniform_u32_timestamp_offset_per_flow_on_one_host_clock_per_run() {
        // Linux tcp_timestamps = 1 (ip-sysctl.rst): tp->tsoffset = secure_tcp_ts_off(net,
        // saddr, daddr) per connection and end; the sender's own is taken off the TSecr it
        // reads (tcp_fast_parse_options), so only the receiver's reaches the CCA: one
        // stream per (seed, flow). Both ends' clock: one per run (one host).
        let clocks = |seed: u64, flow: u32, random: bool, epoch: Option<u64>| {
            let mut t = TcpCc::new(1448, 1500, 10);
            t.draw_ts_clocks(seed, flow, random, crate::cc::host_clock_epoch_ns(seed, epoch, true));
            (t.ts_epoch_ns, t.peer_ts_offset_ms)
        };
        assert_eq!(clocks(7, 0, true, None), clocks(7, 0, true, None), "same seed, same clocks");
        assert_ne!(clocks(7, 0, true, None).1, clocks(8, 0, true, None).1, "two seeds give different offsets");
        assert_ne!(clocks(7, 0, true, None).1, clocks(7, 1, true, None).1, "two flows give different offsets");
        assert_eq!(clocks(7, 0, true, None).0, clocks(7, 1, true, None).0, "one host clock for every flow");
        assert_ne!(clocks(7, 0, true, None).0, clocks(8, 0, true, None).0, "two seeds give different epochs");
        // Uniform over u32: 7/8 of 4000 draws at or above 2^29 (3500; the half-width
        // of a 99.99 % binomial interval is about 80).
        let above = (0..4000u32).map(|f| clocks(1, f, true, None).1).filter(|&o| o >= 1 << 29).count();
        assert!((3420..=3580).contains(&above), "{above}");
        // tcp_timestamps = 2: no offset, both ends' TSvals are the host's clock.
        assert_eq!(clocks(7, 0, false, None), (clocks(7, 0, true, None).0, 0));
        // A recorded epoch (a testbed run's) replaces the draw, kept below 2^32 ms.
        assert_eq!(clocks(7, 0, false, Some(11_096_123_456_789)), (11_096_123_456_789, 0));
        assert_eq!(clocks(7, 0, false, Some((1 << 32) * MS + 5)).0, 5, "the 32-bit ms clock wraps");
    }

    #[test]
    fn lp_reads_the_host_clock_and_the_receivers_offset_with_u32_wraparound() {
        // Linux tcp_timestamps = 1 (ip-sysctl.rst: "a random offset for each connection";
        // tsoffset = secure_tcp_ts_off): rcv_tsval carries the receiver's offset; rcv_tsecr
        // (our offset taken off by tcp_fast_parse_options) and tcp_time_stamp_ts are our
        // clock. The clock wraps past 2^32 ms between the two ACKs of learn_clock (1000 ms
        // -> 2^32 - 50, 1100 ms -> 50): without an offset every u32 difference, hence the
        // first indication, is as at epoch 0.
        let epoch = u32::MAX - 1049;
        let mut c = Conn::with_clock(LpConfig::default(), epoch, 0);
        c.learn_clock();
        assert_eq!(c.t.cwnd, 6);
        assert_eq!((c.lp.sowd >> 3, c.lp.owd_min, c.lp.owd_max), (25, 25, 50));
        assert_eq!(c.lp.last_drop, 1150u32.wrapping_add(epoch), "now = the host clock");
        assert_eq!(c.lp.inference, 3 * 50, "3 x (now - TSecr) across the wrap");
        // The receiver's offset 2^31 ms: owd = 2^31 + 25 ms, owd << 3 overflows sowd and
        // no indication ever comes.
        let mut c = Conn::with_clock(LpConfig::default(), epoch, 1 << 31);
        c.learn_clock();
        assert_eq!(c.t.cwnd, 12, "first sample: no indication");
        let cwnds = c.queue_builds(1200, 30);
        assert!(cwnds.windows(2).all(|w| w[1] >= w[0]), "never reduced: {cwnds:?}");
    }

    #[test]
    fn a_delayed_ack_pushes_remote_hz_past_ts_hz_only_if_its_segment_left_in_a_later_ms() {
        // tcp_lp_remote_hz_estimator: the ACK of the first segments of a flight leaves at
        // once, the one of the last segment 45 ms later (the receiver's delayed-ACK timer).
        // Sent in the same ms as the first, the last segment's TSecr equals the previous
        // ACK's: no estimate, the pair only becomes the reference. Sent 2 ms later, the pair
        // gives 1000 x 47 / 2 = 23 500 Hz with weight 1/64, past TCP_TS_HZ: LP_RESOL /
        // remote_hz is then 0 and LP runs as Reno (sowd overflows, test above).
        let pair = |gap_ms: u64| {
            let mut c = Conn::new(LpConfig::default(), 0);
            c.learn_clock();
            c.ack(1200, 25, 1250);
            assert_eq!(c.lp.remote_hz, 852, "TSval +100, TSecr +100 ms: 1000 Hz, 850 + 150 / 64");
            c.ack(1200 + gap_ms, 70, 1295 + gap_ms);
            c
        };
        assert_eq!(pair(0).lp.remote_hz, 852);
        let mut c = pair(2);
        assert_eq!(c.lp.remote_hz, 852 + (23_500 - 852) / 64);
        let cwnd = c.t.cwnd;
        let cwnds = c.queue_builds(1400, 30);
        assert!(cwnds.windows(2).all(|w| w[1] >= w[0]) && c.t.cwnd > cwnd, "never reduced: {cwnds:?}");
    }

    #[test]
    fn higher_threshold_indicates_later_and_zero_inference_time_only_halves() {
        // Samples until the standing queue is an indication, and the cwnd it leaves.
        let run = |p: LpConfig| {
            let mut c = Conn::new(p, 0);
            c.learn_clock();
            let cwnds = c.queue_builds(1200, 20);
            (cwnds.iter().position(|&w| w < 6).map(|i| i + 1), c.t.cwnd)
        };
        assert_eq!(run(LpConfig::default()), (Some(2), 1));
        // 50 % of the restarted 25 ms range: threshold 37 ms instead of 28 ms.
        let (n50, _) = run(LpConfig { threshold_pct: 50, ..LpConfig::default() });
        assert!(n50.unwrap() > 2, "{n50:?}");
        // Inference time 0: a second indication halves again instead of setting 1.
        let (_, cwnd) = run(LpConfig { inference_rtts: 0, ..LpConfig::default() });
        assert!(cwnd > 1, "{cwnd}");
    }
}
