//! BBR version 1 (Bottleneck Bandwidth and Round-trip propagation time).
//!
//! Algorithm (Linux `tcp_bbr.c`, draft-cardwell-iccrg-bbr-congestion-control-00):
//!   - model the path on every ACK: `btl_bw` = windowed max of delivery-rate
//!     samples over 10 packet-timed rounds; `min_rtt` = min RTT over 10 s;
//!   - pacing_rate = pacing_gain * btl_bw * 99 %; cwnd = cwnd_gain * BDP +
//!     ACK-aggregation allowance + quantization (TSO) budget, floor 4 packets;
//!   - state machine: STARTUP (gains 2/ln2) until 3 rounds without 25 % bw
//!     growth -> DRAIN (pacing 1/2.885) until in-flight <= BDP -> PROBE_BW
//!     (pacing-gain cycle 5/4, 3/4, 1 x 6, one phase per min_rtt, random
//!     initial phase) <-> PROBE_RTT (cwnd 4 for >= 200 ms and one round,
//!     entered when min_rtt is 10 s old: only a strictly lower RTT sample
//!     restarts the 10 s, as in Linux since 5.10);
//!   - losses: packet conservation during the first round of recovery, then
//!     at most 2 packets per packet acked; cwnd restored on leaving recovery;
//!   - long-term ("LT") bandwidth: detect a token-bucket policer from two
//!     consistent lossy intervals and then pace at the policed rate for 48 rounds.
//!
//! Sources: Linux net/ipv4/tcp_bbr.c (v5.x/6.x, including the ACK-aggregation
//! `extra_acked` allowance merged in 5.1) and lib/win_minmax.c (Kathleen
//! Nichols' windowed min/max); draft-cardwell-iccrg-bbr-congestion-control-00;
//! Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016.
//! The code here is written from those descriptions, not copied.
//!
//! Units, as in Linux: gains are fixed point with `BBR_UNIT` = 256 = 1.0;
//! bandwidth is packets per microsecond << `BW_SCALE` (24); RTTs are whole
//! microseconds (`min_rtt_us`); timestamps are the simulator's ns clock
//! (Linux uses µs `tcp_mstamp` and jiffies, i.e. coarser). All arithmetic is
//! integer, so runs are bit-for-bit deterministic.
//!
//! Simplifications against Linux (see docs/fidelity.md):
//!   - `bbr_packets_in_net_at_edt`: the earliest departure time of the next
//!     packet is taken as "now" (the trait does not expose `tcp_wstamp_ns`), so
//!     no in-flight is credited as drained before the next departure; the
//!     difference is at most one pacing interval's worth of packets;
//!   - `rs->is_ack_delayed` is not modelled (treated as false);
//!   - the min_rtt window and PROBE_RTT dwell are timed on the exact ns clock
//!     (Linux: jiffies); RTT and rate intervals are truncated to whole µs as
//!     Linux's µs timestamps are; bandwidth is a u64 (Linux: u32);
//!   - `sk_max_pacing_rate` is unlimited; `GSO_MAX_SIZE - 1 - MAX_TCP_HEADER`
//!     uses MAX_TCP_HEADER = 320 bytes (x86-64 defaults).

use std::cell::Cell;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{CaEvent, CaState, CongestionControl, RateSample, TcpCc, INFINITE_SSTHRESH};

/// Bandwidth scale: bw is packets/µs << 24 (one unit ~ 715 bit/s at 1500 B).
pub const BW_SCALE: u32 = 24;
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gain scale: 256 = 1.0.
pub const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// Phases in the PROBE_BW pacing-gain cycle.
pub const CYCLE_LEN: usize = 8;
/// Window of the max-bandwidth filter, packet-timed rounds (CYCLE_LEN + 2).
pub const BW_FILTER_WINDOW_ROUNDS: u32 = CYCLE_LEN as u32 + 2;
/// Window of the min_rtt filter, ns (10 s).
pub const MIN_RTT_WINDOW_NS: u64 = 10_000_000_000;
/// Minimum time spent at `CWND_MIN_TARGET_PKTS` in PROBE_RTT, ns (200 ms).
pub const PROBE_RTT_DURATION_NS: u64 = 200_000_000;
/// Below this pacing rate TSO is skipped (min TSO segs 1, else 2), bit/s.
pub const MIN_TSO_RATE_BITS_PER_S: u64 = 1_200_000;
/// Pace this many percent below the estimated bandwidth.
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// STARTUP pacing and cwnd gain 2/ln 2 = 2.885, in BBR_UNIT (= 739).
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// DRAIN pacing gain 1/2.885, in BBR_UNIT (= 88).
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// PROBE_BW cwnd gain 2.0, in BBR_UNIT.
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// PROBE_BW pacing gains, in BBR_UNIT: probe 5/4, drain 3/4, cruise 1 x 6.
pub const PACING_GAIN_CYCLE: [u32; CYCLE_LEN] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// The initial gain-cycle phase is randomised over this many phases.
pub const CYCLE_RAND: u32 = 7;
/// Minimum cwnd, and the cwnd of PROBE_RTT, packets.
pub const CWND_MIN_TARGET_PKTS: u32 = 4;
/// Bandwidth growth that counts as "still growing" in STARTUP: 1.25, in BBR_UNIT.
pub const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// Rounds without such growth before the pipe is deemed full.
pub const FULL_BW_CNT_ROUNDS: u32 = 3;
/// Minimum length of a long-term bw sampling interval, rounds.
pub const LT_INTVL_MIN_ROUNDS: u32 = 4;
/// Lost/delivered ratio above which an LT interval is "lossy": 50/256 ~ 20 %.
pub const LT_LOSS_THRESH: u64 = 50;
/// Two LT intervals are consistent if their bw differs by <= 1/8 (BBR_UNIT)...
pub const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
/// ... or by <= 4 kbit/s = 500 bytes/s.
pub const LT_BW_DIFF_BYTES_PER_S: u64 = 4000 / 8;
/// Rounds to keep using the policed rate `lt_bw` once detected.
pub const LT_BW_MAX_ROUNDS: u32 = 48;
/// Gain on the ACK-aggregation allowance, in BBR_UNIT (1.0 = on, Linux default).
pub const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// Window of the extra_acked max filter, rounds (two halves of 5).
pub const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// Reset the ACK-aggregation epoch after this many packets acked in it.
pub const ACK_EPOCH_ACKED_RESET_THRESH_PKTS: u32 = 1 << 20;
/// The aggregation allowance is capped at bw x this, µs (100 ms).
pub const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// `TCP_INIT_CWND`, packets: cwnd cap while no RTT sample exists.
pub const INIT_CWND_PKTS: u32 = 10;
/// `sk_pacing_shift`: TSO autosizing aims at ~1 ms (2^-10 s) of data per skb.
pub const PACING_SHIFT: u32 = 10;
/// `GSO_MAX_SIZE - 1 - MAX_TCP_HEADER`, bytes (65536 - 1 - 320).
pub const TSO_MAX_BYTES: u64 = 65536 - 1 - 320;
/// Largest TSO goal, segments (0x7F).
pub const TSO_SEGS_MAX: u32 = 0x7f;
/// Default RTT for the initial pacing rate when no sample exists, µs (1 ms).
pub const DEFAULT_RTT_US: u64 = 1_000;

/// `min_rtt_us` before any RTT sample (Linux: ~0U).
const NO_RTT_US: u64 = u64::MAX;

/// The rate sample's interval in whole µs, if the sample is valid (Linux:
/// `rs->delivered >= 0 && rs->interval_us > 0`, with µs timestamps).
fn valid_interval_us(rs: &RateSample) -> Option<u64> {
    if rs.delivered < 0 || rs.interval_ns < 1000 {
        return None;
    }
    Some(rs.interval_ns as u64 / 1000)
}

/// Packets delivered at `bw` (packets/µs << 24) in `us` µs, rounded down and
/// capped at u32::MAX. Multiplied in u64: a product that overflows is
/// >= 2^64, so divided by 2^24 it is above u32::MAX and the cap gives the
/// value the exact u128 product would.
fn packets_in(bw: u64, us: u64) -> u32 {
    bw.checked_mul(us).map_or(u32::MAX, |p| (p >> BW_SCALE).min(u32::MAX as u64) as u32)
}

/// BBR's modes (Linux `enum bbr_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BbrMode {
    /// Ramp up the sending rate rapidly to fill the pipe.
    Startup,
    /// Drain the queue created in STARTUP.
    Drain,
    /// Pace around the estimated bandwidth, cycling gains to probe and share.
    ProbeBw,
    /// Cut in-flight to 4 packets to re-measure min_rtt.
    ProbeRtt,
}

/// One sample of a windowed min/max tracker: (time, value).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct MinmaxSample {
    t: u32,
    v: u64,
}

/// Kathleen Nichols' windowed max (Linux lib/win_minmax.c): keeps the best,
/// second-best and third-best samples from successively later sub-windows,
/// so the max over the last `win` time units is tracked in O(1).
/// Time here is BBR's round count; wrap-around arithmetic as in Linux.
#[derive(Debug, Clone, Copy, Default)]
pub struct WindowedMax {
    s: [MinmaxSample; 3],
}

impl WindowedMax {
    /// Current windowed max.
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forget everything; the window holds just (t, v).
    pub fn reset(&mut self, t: u32, v: u64) -> u64 {
        let s = MinmaxSample { t, v };
        self.s = [s; 3];
        v
    }

    /// Add measurement `v` taken at time `t`; return the windowed max.
    pub fn update(&mut self, win: u32, t: u32, v: u64) -> u64 {
        let val = MinmaxSample { t, v };
        // A new overall max, or nothing left in the window: start afresh.
        if v >= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Age the choices: promote the 2nd/3rd best as the best leaves the window,
    /// and take fresh 2nd/3rd choices from later quarters/halves of the window.
    fn subwin_update(&mut self, win: u32, val: MinmaxSample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

/// BBRv1 congestion control block (Linux `struct bbr`).
#[derive(Debug, Clone)]
pub struct Bbr {
    rng: Pcg64Mcg,
    mode: BbrMode,
    /// Min RTT in the 10 s window, µs (`NO_RTT_US` before any sample).
    min_rtt_us: u64,
    /// When `min_rtt_us` was last set or refreshed, ns.
    min_rtt_stamp_ns: u64,
    /// End of the PROBE_RTT dwell, ns (None until in-flight reached 4).
    probe_rtt_done_ns: Option<u64>,
    probe_rtt_round_done: bool,
    /// Max delivery rate over the last 10 rounds, packets/µs << 24.
    bw: WindowedMax,
    /// Packet-timed rounds elapsed.
    rtt_cnt: u32,
    /// `tp.delivered` at which the current round ends.
    next_rtt_delivered: u64,
    /// Start of the current gain-cycle phase (`delivered_time_ns` then), ns.
    cycle_start_ns: u64,
    cycle_idx: usize,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    /// Bandwidth at the last 25 % growth in STARTUP, packets/µs << 24.
    full_bw: u64,
    has_seen_rtt: bool,
    /// cwnd saved on entering recovery or PROBE_RTT, packets.
    prior_cwnd: u32,
    // Long-term (policer) bandwidth sampling.
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    /// Long-term delivery rate, packets/µs << 24.
    lt_bw: u64,
    lt_last_delivered: u64,
    /// Start of the LT interval, ms (Linux keeps ms here too).
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    // ACK aggregation.
    ack_epoch_start_ns: u64,
    ack_epoch_acked: u32,
    extra_acked: [u32; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// Gains, in BBR_UNIT (defaults HIGH_GAIN, DRAIN_GAIN, CWND_GAIN, PACING_GAIN_CYCLE[0..2]).
    high_gain: u32,
    drain_gain: u32,
    probe_cwnd_gain: u32,
    probe_up_gain: u32,
    probe_down_gain: u32,
    /// Memo of `tso_segs_goal`: (pacing rate, mss) -> goal. The goal only
    /// changes with the pacing rate, which is read on every ACK but changes
    /// on few.
    tso_goal_memo: Cell<TsoGoalMemo>,
    /// Memo of `rate_bytes_per_sec` for the pacing rate: (mss, bw, gain) -> rate.
    pacing_rate_memo: RateMemo,
    /// Memo of the cwnd target: its inputs change on few ACKs.
    target_memo: (TargetKey, u32),
}

/// Key and value of the TSO goal memo; `mss` 0 = empty (the key never matches).
#[derive(Debug, Clone, Copy, Default)]
struct TsoGoalMemo {
    pacing_rate_bytes_per_s: u64,
    mss: u32,
    goal: u32,
}

/// Inputs of the cwnd target (`valid` false = empty memo).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct TargetKey {
    bw: u64,
    min_rtt_us: u64,
    pacing_rate_bytes_per_s: u64,
    gain: u32,
    extra_acked_max: u32,
    mss: u32,
    full_bw_reached: bool,
    probe_up: bool,
    valid: bool,
}

/// Key and value of the pacing-rate memo; `mss` 0 = empty.
#[derive(Debug, Clone, Copy, Default)]
struct RateMemo {
    bw: u64,
    mss: u32,
    gain: u32,
    rate_bytes_per_s: u64,
}

impl Bbr {
    /// A fresh BBR; `seed` drives the random initial PROBE_BW phase.
    pub fn new(seed: u64) -> Bbr {
        let mut bw = WindowedMax::default();
        bw.reset(0, 0);
        Bbr {
            rng: Pcg64Mcg::seed_from_u64(seed),
            mode: BbrMode::Startup,
            min_rtt_us: NO_RTT_US,
            min_rtt_stamp_ns: 0,
            probe_rtt_done_ns: None,
            probe_rtt_round_done: false,
            bw,
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_start_ns: 0,
            cycle_idx: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            // Linux leaves these 0 until the first ACK; STARTUP's values are
            // what the first ACK sets, so start with them for observability.
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            full_bw: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            ack_epoch_start_ns: 0,
            ack_epoch_acked: 0,
            extra_acked: [0, 0],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            high_gain: HIGH_GAIN,
            drain_gain: DRAIN_GAIN,
            probe_cwnd_gain: CWND_GAIN,
            probe_up_gain: PACING_GAIN_CYCLE[0],
            probe_down_gain: PACING_GAIN_CYCLE[1],
            tso_goal_memo: Cell::new(TsoGoalMemo::default()),
            pacing_rate_memo: RateMemo::default(),
            target_memo: (TargetKey::default(), 0),
        }
    }

    /// Current mode of the state machine.
    pub fn mode(&self) -> BbrMode {
        self.mode
    }

    /// Current pacing gain, in BBR_UNIT (256 = 1.0).
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }

    /// Current cwnd gain, in BBR_UNIT (256 = 1.0).
    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }

    /// Index into `PACING_GAIN_CYCLE` (meaningful in PROBE_BW).
    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }

    /// Windowed min RTT, µs (None before any sample).
    pub fn min_rtt_us(&self) -> Option<u64> {
        (self.min_rtt_us != NO_RTT_US).then_some(self.min_rtt_us)
    }

    /// Whether STARTUP estimated the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// Whether the policer estimate `lt_bw` is in use.
    pub fn lt_use_bw(&self) -> bool {
        self.lt_use_bw
    }

    /// Packet-timed rounds elapsed.
    pub fn round_count(&self) -> u32 {
        self.rtt_cnt
    }

    /// Windowed max delivery rate, packets/µs << 24 (`bbr_max_bw`).
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// Bandwidth estimate in use, packets/µs << 24 (`bbr_bw`: lt_bw if policed).
    pub fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// Bandwidth estimate in use, payload bytes per second (as `bbr_get_info`).
    pub fn bw_bytes_per_s(&self, mss: u32) -> u64 {
        ((self.bw() as u128 * mss as u128 * 1_000_000) >> BW_SCALE) as u64
    }

    fn extra_acked_max(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: bw (pkts/µs << 24) x gain x (1 - margin) in
    /// payload bytes/s.
    fn rate_bytes_per_sec(mss: u32, rate: u64, gain: u32) -> u64 {
        let mut r = rate as u128 * mss as u128;
        r = (r * gain as u128) >> BBR_SCALE;
        r *= (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
        (r >> BW_SCALE).min(u64::MAX as u128) as u64
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain x cwnd / srtt (1 ms if none).
    #[cold]
    #[inline(never)]
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpCc) {
        let rtt_us = if tp.srtt_ns != 0 {
            self.has_seen_rtt = true;
            (tp.srtt_ns / 1000).max(1)
        } else {
            DEFAULT_RTT_US
        };
        let bw = tp.cwnd as u64 * BW_UNIT / rtt_us;
        tp.pacing_rate_bytes_per_s = Self::rate_bytes_per_sec(tp.mss, bw, self.high_gain);
    }

    /// `rate_bytes_per_sec`, memoised: bw and gain change on few ACKs.
    fn pacing_rate_for(&mut self, mss: u32, bw: u64, gain: u32) -> u64 {
        let m = self.pacing_rate_memo;
        if m.mss == mss && m.bw == bw && m.gain == gain && mss != 0 {
            return m.rate_bytes_per_s;
        }
        self.pacing_rate_memo_miss(mss, bw, gain)
    }

    #[cold]
    #[inline(never)]
    fn pacing_rate_memo_miss(&mut self, mss: u32, bw: u64, gain: u32) -> u64 {
        let rate_bytes_per_s = Self::rate_bytes_per_sec(mss, bw, gain);
        self.pacing_rate_memo = RateMemo { bw, mss, gain, rate_bytes_per_s };
        rate_bytes_per_s
    }

    /// `bbr_set_pacing_rate`: never lower the rate before the pipe is full.
    fn set_pacing_rate(&mut self, tp: &mut TcpCc, bw: u64, gain: u32) {
        let rate = self.pacing_rate_for(tp.mss, bw, gain);
        if !self.has_seen_rtt && tp.srtt_ns != 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate_bytes_per_s {
            tp.pacing_rate_bytes_per_s = rate;
        }
    }

    /// `bbr_min_tso_segs`.
    fn min_tso_segs(tp: &TcpCc) -> u32 {
        if tp.pacing_rate_bytes_per_s < MIN_TSO_RATE_BITS_PER_S >> 3 {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`: segments in ~1 ms at the pacing rate, >= min TSO segs.
    fn tso_segs_goal(tp: &TcpCc) -> u32 {
        let bytes = (tp.pacing_rate_bytes_per_s >> PACING_SHIFT).min(TSO_MAX_BYTES);
        let segs = ((bytes / tp.mss.max(1) as u64) as u32).max(Self::min_tso_segs(tp));
        segs.min(TSO_SEGS_MAX)
    }

    /// `tso_segs_goal`, memoised on (pacing rate, mss).
    fn tso_goal(&self, tp: &TcpCc) -> u32 {
        let m = self.tso_goal_memo.get();
        if m.pacing_rate_bytes_per_s == tp.pacing_rate_bytes_per_s && m.mss == tp.mss && m.mss != 0 {
            return m.goal;
        }
        self.tso_goal_memo_miss(tp)
    }

    #[cold]
    #[inline(never)]
    fn tso_goal_memo_miss(&self, tp: &TcpCc) -> u32 {
        let goal = Self::tso_segs_goal(tp);
        self.tso_goal_memo.set(TsoGoalMemo { pacing_rate_bytes_per_s: tp.pacing_rate_bytes_per_s, mss: tp.mss, goal });
        goal
    }

    /// `bbr_save_cwnd`: remember the last known good cwnd.
    fn save_cwnd(&mut self, cwnd: u32) {
        if self.prev_ca_state < CaState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            // Recovery or PROBE_RTT have cut cwnd temporarily.
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw x min_rtt x gain), packets.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == NO_RTT_US {
            return INIT_CWND_PKTS;
        }
        // In u64 when the product fits (always at realistic rates: bw x min_rtt
        // is ~2^24 x packets in flight), else the same formula in u128: the
        // checks make both paths give the same value for every input.
        if let Some(wg) = bw.checked_mul(self.min_rtt_us).and_then(|w| w.checked_mul(gain as u64)) {
            return (wg >> BBR_SCALE).div_ceil(BW_UNIT).min(u32::MAX as u64) as u32;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        let bdp = ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128);
        bdp.min(u32::MAX as u128) as u32
    }

    /// `bbr_quantization_budget`: room for 3 TSO bursts, rounded up to even,
    /// +2 in the probing phase so in-flight gets above BDP even for small BDPs.
    fn quantization_budget(&self, tp: &TcpCc, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.saturating_add(3 * self.tso_goal(tp));
        cwnd = cwnd.saturating_add(1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    /// `bbr_inflight`: BDP x gain plus the quantization budget.
    fn inflight(&self, tp: &TcpCc, bw: u64, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// `bbr_packets_in_net_at_edt`, with the next departure time taken as now
    /// (see the header): when raising in-flight, count the next TSO burst too.
    fn packets_in_net_at_edt(&self, tp: &TcpCc, inflight_now: u32) -> u32 {
        let mut inflight = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight += self.tso_goal(tp);
        }
        inflight
    }

    /// `bbr_ack_aggregation_cwnd`: extra cwnd for ACK aggregation, once full.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = packets_in(self.bw(), EXTRA_ACKED_MAX_US);
        let aggr = ((EXTRA_ACKED_GAIN as u64 * self.extra_acked_max() as u64) >> BBR_SCALE) as u32;
        aggr.min(max_aggr)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first
    /// round of recovery; restore the saved cwnd when recovery ends.
    /// Returns (using packet conservation, new cwnd).
    fn set_cwnd_to_recover_or_restore(&mut self, tp: &TcpCc, rs: &RateSample, acked: u32) -> (bool, u32) {
        let prev_state = self.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = tp.cwnd;
        // An ACK for P packets releases at most 2P: first deduct the losses
        // here, then `set_cwnd` slow-starts up toward the target.
        if rs.losses > 0 {
            cwnd = (cwnd as i64 - rs.losses as i64).max(1) as u32;
        }
        if state != prev_state {
            cwnd = self.on_ca_state_change(tp, prev_state, state, cwnd, acked);
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (true, cwnd.max(tp.in_flight + acked));
        }
        (false, cwnd)
    }

    /// The recovery transitions of `set_cwnd_to_recover_or_restore` (rare:
    /// a few per loss episode).
    #[cold]
    #[inline(never)]
    fn on_ca_state_change(&mut self, tp: &TcpCc, prev_state: CaState, state: CaState, mut cwnd: u32, acked: u32) -> u32 {
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // First round of recovery: packet conservation.
            self.packet_conservation = true;
            // The round starts now.
            self.next_rtt_delivered = tp.delivered;
            // Cut cwnd left unused by the application.
            cwnd = tp.in_flight + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Leaving recovery: restore the cwnd saved when it began.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        cwnd
    }

    /// The target of `bbr_set_cwnd`: BDP x gain + the aggregation allowance +
    /// the quantization budget, memoised on every input it reads.
    /// (`bw` is `self.bw()`, which `ack_aggregation_cwnd` reads itself.)
    fn cwnd_target(&mut self, tp: &TcpCc, bw: u64, gain: u32) -> u32 {
        debug_assert_eq!(bw, self.bw(), "the memo keys both on one bw");
        let key = TargetKey {
            bw,
            min_rtt_us: self.min_rtt_us,
            pacing_rate_bytes_per_s: tp.pacing_rate_bytes_per_s,
            gain,
            extra_acked_max: self.extra_acked_max(),
            mss: tp.mss,
            full_bw_reached: self.full_bw_reached,
            probe_up: self.mode == BbrMode::ProbeBw && self.cycle_idx == 0,
            valid: true,
        };
        if self.target_memo.0 == key {
            return self.target_memo.1;
        }
        let mut target = self.bdp(bw, gain);
        target = target.saturating_add(self.ack_aggregation_cwnd());
        target = self.quantization_budget(tp, target);
        self.target_memo = (key, target);
        target
    }

    /// `bbr_set_cwnd`: slow-start toward the target cwnd, or snap down to it
    /// once the pipe has been filled.
    fn set_cwnd(&mut self, tp: &mut TcpCc, rs: &RateSample, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = tp.cwnd;
        if acked > 0 {
            let (conserving, c) = self.set_cwnd_to_recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let target = self.cwnd_target(tp, bw, gain);
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || tp.delivered < INIT_CWND_PKTS as u64 {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(CWND_MIN_TARGET_PKTS);
            }
        }
        tp.cwnd = cwnd.min(tp.cwnd_clamp);
        if self.mode == BbrMode::ProbeRtt {
            tp.cwnd = tp.cwnd.min(CWND_MIN_TARGET_PKTS);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, tp: &TcpCc, rs: &RateSample) -> bool {
        let elapsed_us = tp.delivered_time_ns.saturating_sub(self.cycle_start_ns) / 1000;
        let is_full_length = elapsed_us > self.min_rtt_us;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            // Probe until in-flight reaches gain x BDP (or a loss says it won't fit).
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        // Drain until in-flight is down to BDP, but at most one min_rtt.
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    fn advance_cycle_phase(&mut self, tp: &TcpCc) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_start_ns = tp.delivered_time_ns;
    }

    fn update_cycle_phase(&mut self, tp: &TcpCc, rs: &RateSample) {
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
    }

    /// `bbr_reset_probe_bw_mode`: enter PROBE_BW at a random phase other than
    /// the 3/4 drain phase (Linux: CYCLE_LEN - 1 - prandom_u32_max(7), then +1).
    #[cold]
    #[inline(never)]
    fn reset_probe_bw_mode(&mut self, tp: &TcpCc) {
        self.mode = BbrMode::ProbeBw;
        let r = self.rng.gen_range(0..CYCLE_RAND) as usize;
        self.cycle_idx = CYCLE_LEN - 1 - r;
        self.advance_cycle_phase(tp);
    }

    fn reset_mode(&mut self, tp: &TcpCc) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(tp);
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    /// Start a new long-term sampling interval.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &TcpCc) {
        self.lt_last_stamp_ms = tp.delivered_time_ns / 1_000_000;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// Completely reset long-term bandwidth sampling.
    fn reset_lt_bw_sampling(&mut self, tp: &TcpCc) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// An LT interval ended: two consistent lossy intervals mean a policer.
    fn lt_bw_interval_done(&mut self, tp: &TcpCc, bw: u64) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO * self.lt_bw
                || Self::rate_bytes_per_sec(tp.mss, diff, BBR_UNIT) <= LT_BW_DIFF_BYTES_PER_S
            {
                // Policed: use the average of the two intervals.
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`: token-bucket policer detection. The common cases
    /// return without a call: not policed and no loss, and either not
    /// sampling, or sampling on an ACK that changes nothing there (no round
    /// start, so `lt_rtt_cnt` stays; not app-limited, so no reset; `lt_rtt_cnt`
    /// not past the 4 x `LT_INTVL_MIN_ROUNDS` limit, so no reset; no loss, so
    /// the interval does not end). In S0 BBR samples on ~90 % of its ACKs.
    #[inline(always)]
    fn lt_bw_sampling(&mut self, tp: &TcpCc, rs: &RateSample) {
        if !self.lt_use_bw
            && rs.losses == 0
            && (!self.lt_is_sampling || (!self.round_start && !rs.is_app_limited && self.lt_rtt_cnt <= 4 * LT_INTVL_MIN_ROUNDS))
        {
            return;
        }
        self.lt_bw_sampling_active(tp, rs);
    }

    #[cold]
    #[inline(never)]
    fn lt_bw_sampling_active(&mut self, tp: &TcpCc, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == BbrMode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_ROUNDS {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode(tp);
                }
            }
            return;
        }
        // Start sampling at the first loss, once the policer's tokens are gone.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        // Running out of data would underestimate the rate.
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_ROUNDS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_ROUNDS {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        // End the interval at a loss (tokens exhausted).
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost.saturating_sub(self.lt_last_lost);
        let delivered = tp.delivered.saturating_sub(self.lt_last_delivered);
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (tp.delivered_time_ns / 1_000_000) as i64 - self.lt_last_stamp_ms as i64;
        if t_ms < 1 {
            return; // shorter than 1 ms: wait
        }
        if t_ms as u64 >= u32::MAX as u64 / 1000 {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        let bw = delivered * BW_UNIT / (t_ms as u64 * 1000);
        self.lt_bw_interval_done(tp, bw);
    }

    /// `bbr_update_bw`: round counting and the max-bw filter.
    fn update_bw(&mut self, tp: &TcpCc, rs: &RateSample, interval_us: Option<u64>) {
        self.round_start = false;
        let Some(interval_us) = interval_us else {
            return; // not a valid observation
        };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs);
        let bw = rs.delivered as u64 * BW_UNIT / interval_us;
        // App-limited samples only count if they do not lower the estimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.update(BW_FILTER_WINDOW_ROUNDS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: windowed max of packets acked beyond
    /// what bw predicts since the start of the current ACK epoch.
    /// `valid`: the rate sample has a valid interval (`valid_interval_us`).
    fn update_ack_aggregation(&mut self, tp: &TcpCc, rs: &RateSample, valid: bool) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || !valid {
            return;
        }
        if self.round_start {
            self.advance_extra_acked_window();
        }
        let epoch_us = tp.delivered_time_ns.saturating_sub(self.ack_epoch_start_ns) / 1000;
        let mut expected = packets_in(self.bw(), epoch_us);
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked as u64 + rs.acked_sacked as u64 >= ACK_EPOCH_ACKED_RESET_THRESH_PKTS as u64
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_start_ns = tp.delivered_time_ns;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected).min(tp.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        if extra > *slot {
            *slot = extra;
        }
    }

    /// Once per round: the extra_acked filter's window moves every
    /// `EXTRA_ACKED_WIN_ROUNDS` rounds, starting a fresh half.
    #[cold]
    #[inline(never)]
    fn advance_extra_acked_window(&mut self) {
        self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
        if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_ROUNDS {
            self.extra_acked_win_rtts = 0;
            self.extra_acked_win_idx ^= 1;
            self.extra_acked[self.extra_acked_win_idx] = 0;
        }
    }

    /// `bbr_check_full_bw_reached`: 3 rounds without 25 % growth = pipe full.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        self.startup_round_end();
    }

    /// The rest of `check_full_bw_reached`: once per round, in STARTUP only.
    #[cold]
    #[inline(never)]
    fn startup_round_end(&mut self) {
        let thresh = ((self.full_bw as u128 * FULL_BW_THRESH as u128) >> BBR_SCALE) as u64;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT_ROUNDS;
    }

    /// `bbr_check_drain`: STARTUP -> DRAIN when full; DRAIN -> PROBE_BW when
    /// in-flight is down to one BDP (plus budget).
    fn check_drain(&mut self, tp: &mut TcpCc) {
        if matches!(self.mode, BbrMode::Startup | BbrMode::Drain) {
            self.check_drain_startup_or_drain(tp);
        }
    }

    #[cold]
    #[inline(never)]
    fn check_drain_startup_or_drain(&mut self, tp: &mut TcpCc) {
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            tp.ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == BbrMode::Drain && self.packets_in_net_at_edt(tp, tp.in_flight) <= self.inflight(tp, self.max_bw(), BBR_UNIT) {
            self.reset_probe_bw_mode(tp);
        }
    }

    /// `bbr_check_probe_rtt_done`: leave PROBE_RTT once its dwell is over.
    fn check_probe_rtt_done(&mut self, tp: &mut TcpCc) {
        match self.probe_rtt_done_ns {
            Some(done) if tp.now_ns > done => {}
            _ => return,
        }
        self.min_rtt_stamp_ns = tp.now_ns; // wait a while until the next PROBE_RTT
        tp.cwnd = tp.cwnd.max(self.prior_cwnd);
        self.reset_mode(tp);
    }

    /// `bbr_update_min_rtt`: the 10 s min filter and PROBE_RTT.
    fn update_min_rtt(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        let filter_expired = tp.now_ns > self.min_rtt_stamp_ns.saturating_add(MIN_RTT_WINDOW_NS);
        if rs.rtt_ns >= 0 {
            let rtt_us = rs.rtt_ns as u64 / 1000;
            // Strictly lower (Linux since 5.10, commit "tcp: only postpone PROBE_RTT
            // if RTT is < current min_rtt estimate"): an equal sample does not
            // postpone PROBE_RTT.
            if rtt_us < self.min_rtt_us || filter_expired {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp_ns = tp.now_ns;
            }
        }
        if (filter_expired && !self.idle_restart) || self.mode == BbrMode::ProbeRtt {
            self.probe_rtt(tp, filter_expired);
        }
        // An idle restart ends with the first ACK that delivers data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// The PROBE_RTT part of `update_min_rtt`: enter it when the min_rtt
    /// filter expired, hold it for max(200 ms, one round), then leave.
    #[cold]
    #[inline(never)]
    fn probe_rtt(&mut self, tp: &mut TcpCc, filter_expired: bool) {
        if filter_expired && !self.idle_restart && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd(tp.cwnd);
            self.probe_rtt_done_ns = None;
        }
        if self.mode == BbrMode::ProbeRtt {
            // Mark the samples of this mode app-limited: they are low on purpose.
            tp.app_limited = (tp.delivered + tp.in_flight as u64).max(1);
            // Hold in-flight at the minimum for max(200 ms, one round).
            if self.probe_rtt_done_ns.is_none() && tp.in_flight <= CWND_MIN_TARGET_PKTS {
                self.probe_rtt_done_ns = Some(tp.now_ns + PROBE_RTT_DURATION_NS);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_ns.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp);
                }
            }
        }
    }

    fn update_gains(&mut self) {
        let (pacing, cwnd) = match self.mode {
            BbrMode::Startup => (self.high_gain, self.high_gain),
            BbrMode::Drain => (self.drain_gain, self.high_gain),
            BbrMode::ProbeBw => {
                let p = match self.cycle_idx {
                    _ if self.lt_use_bw => BBR_UNIT,
                    0 => self.probe_up_gain,
                    1 => self.probe_down_gain,
                    i => PACING_GAIN_CYCLE[i],
                };
                (p, self.probe_cwnd_gain)
            }
            BbrMode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = pacing;
        self.cwnd_gain = cwnd;
    }

    fn update_model(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        let interval_us = valid_interval_us(rs);
        self.update_bw(tp, rs, interval_us);
        self.update_ack_aggregation(tp, rs, interval_us.is_some());
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
    }
}

impl CongestionControl for Bbr {
    hooks!(cong_control, min_tso_segs);
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// `bbr_init`.
    fn init(&mut self, tp: &mut TcpCc) {
        self.prior_cwnd = 0;
        tp.ssthresh = INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = 0;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt_done_ns = None;
        self.probe_rtt_round_done = false;
        self.min_rtt_us = if tp.min_rtt_ns == u64::MAX { NO_RTT_US } else { tp.min_rtt_ns / 1000 };
        self.min_rtt_stamp_ns = tp.now_ns;
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_start_ns = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(tp);
        self.mode = BbrMode::Startup;
        self.pacing_gain = self.high_gain;
        self.cwnd_gain = self.high_gain;
        self.ack_epoch_start_ns = tp.now_ns;
        self.ack_epoch_acked = 0;
        self.extra_acked_win_rtts = 0;
        self.extra_acked_win_idx = 0;
        self.extra_acked = [0, 0];
    }

    /// `bbr_min_tso_segs`: one-segment skbs below 1.2 Mbit/s of pacing, else 2.
    fn min_tso_segs(&self, tp: &TcpCc) -> Option<u32> {
        Some(Self::min_tso_segs(tp))
    }

    /// `bbr_ssthresh`: save cwnd for after recovery; ssthresh unchanged.
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        self.save_cwnd(tp.cwnd);
        tp.ssthresh
    }

    /// `bbr_main`.
    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) -> bool {
        self.update_model(tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
        true
    }

    /// `bbr_set_state`: an RTO ends a round and counts as a loss for LT sampling.
    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            let rs = RateSample { losses: 1, ..RateSample::default() };
            self.lt_bw_sampling(tp, &rs);
        }
    }

    /// `bbr_cwnd_event`: on restart from idle, pace at bw (not above it).
    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CaEvent) {
        if ev == CaEvent::TxStart && tp.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_start_ns = tp.now_ns;
            self.ack_epoch_acked = 0;
            match self.mode {
                BbrMode::ProbeBw => {
                    let bw = self.bw();
                    self.set_pacing_rate(tp, bw, BBR_UNIT);
                }
                BbrMode::ProbeRtt => self.check_probe_rtt_done(tp),
                _ => {}
            }
        }
    }

    /// `bbr_undo_cwnd`: a spurious slow-down; restart full-pipe detection and
    /// LT sampling, keep cwnd.
    fn undo_cwnd(&mut self, tp: &TcpCc) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.cwnd
    }

    needs!(pacing);
}

crate::declare_cca! {
    /// BBRv1's gains (Linux `tcp_bbr.c` constants; a gain g is used as round(g x 256), BBR_UNIT = 256).
    pub struct BbrConfig {
        /// STARTUP pacing and cwnd gain, and DRAIN's cwnd gain (Linux `bbr_high_gain` = 739/256 = 2/ln 2).
        high_gain: f64 = HIGH_GAIN as f64 / 256.0, Range::open_closed(0.0, 64.0);
        /// DRAIN pacing gain (Linux `bbr_drain_gain` = 88/256 = ln 2 / 2).
        drain_gain: f64 = DRAIN_GAIN as f64 / 256.0, Range::open_closed(0.0, 64.0);
        /// PROBE_BW cwnd gain (Linux `bbr_cwnd_gain` = 2).
        cwnd_gain: f64 = CWND_GAIN as f64 / 256.0, Range::open_closed(0.0, 64.0);
        /// PROBE_BW probing pacing gain, first phase of the cycle (Linux 5/4).
        probe_up_gain: f64 = PACING_GAIN_CYCLE[0] as f64 / 256.0, Range::open_closed(0.0, 64.0);
        /// PROBE_BW draining pacing gain, second phase of the cycle (Linux 3/4).
        probe_down_gain: f64 = PACING_GAIN_CYCLE[1] as f64 / 256.0, Range::open_closed(0.0, 64.0);
    }
    cca Bbr = "bbr", "BBRv1: draft-cardwell-iccrg-bbr-congestion-control-00; Linux net/ipv4/tcp_bbr.c";
    build = |p, seed| {
        let gain = |g: f64| (g * f64::from(BBR_UNIT)).round() as u32;
        let mut b = Bbr::new(seed);
        b.high_gain = gain(p.high_gain);
        b.drain_gain = gain(p.drain_gain);
        b.probe_cwnd_gain = gain(p.cwnd_gain);
        b.probe_up_gain = gain(p.probe_up_gain);
        b.probe_down_gain = gain(p.probe_down_gain);
        b.pacing_gain = b.high_gain;
        b.cwnd_gain = b.high_gain;
        b
    };
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
