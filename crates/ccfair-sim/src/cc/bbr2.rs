//! BBR version 2 (Linux "v2alpha").
//!
//! Algorithm (google/bbr branch v2alpha, net/ipv4/tcp_bbr2.c;
//! draft-cardwell-iccrg-bbr-congestion-control-02):
//!   - the model of BBRv1 (max delivery rate, min RTT) plus bounds learnt from
//!     loss and ECN: `bw_hi`/`inflight_hi` (long-term upper bounds, cut when a
//!     bandwidth probe sees too much loss or ECN) and `bw_lo`/`inflight_lo`
//!     (short-term lower bounds, cut every round with loss/ECN while not probing);
//!   - max_bw = max of the delivery-rate samples of the last 1-2 PROBE_BW cycles;
//!     bw = min(max_bw, bw_lo, bw_hi); pacing = gain x bw x 99 %;
//!     cwnd = cwnd_gain x BDP + ACK-aggregation allowance, then capped by the
//!     inflight model;
//!   - STARTUP (gains 2.885) ends after 3 rounds without 25 % bw growth, or
//!     when a recovery round has >= 8 loss events and loss > 2 %, or after 2
//!     rounds with CE ratio >= 50 % -> DRAIN (pacing 1/2.885) -> PROBE_BW;
//!   - PROBE_BW phases: DOWN (pacing 0.75 until in-flight <= BDP and leaves
//!     15 % headroom below inflight_hi) -> CRUISE (pacing 1.0, cwnd <=
//!     inflight_hi x 0.85 and <= inflight_lo) -> after 2-3 s (random) or
//!     min(63, BDP) rounds -> REFILL (one round at 1.0 with bounds reset) ->
//!     UP (pacing 1.25, inflight_hi raised by 1, 2, 4 ... packets per round)
//!     until in-flight >= 1.25 BDP, or loss rate > 2 % / CE ratio >= 50 %
//!     (then inflight_hi = max(tx_in_flight, 0.7 x target in-flight)) -> DOWN;
//!   - ECN: alpha = EWMA of the per-round CE ratio, gain 1/16, initial 1;
//!     every round with CE outside bandwidth probing:
//!     inflight_lo = inflight_lo x (1 - alpha x ecn_factor), ecn_factor = 1/3
//!     (S3's "cwnd <- cwnd (1 - f_ecn alpha)"), bw_lo likewise;
//!   - loss outside probing: bw_lo, inflight_lo x (1 - beta), beta = 0.3
//!     (i.e. x 0.7), but not below the latest round's delivered rate/volume;
//!   - PROBE_RTT every 5 s (the min RTT of the last 5 s was not refreshed):
//!     cwnd = max(4, 0.5 x BDP) for 200 ms and a round.
//!
//! Sources: github.com/google/bbr, branch v2alpha, net/ipv4/tcp_bbr2.c
//! (module parameters quoted below); draft-cardwell-iccrg-bbr-congestion-control-02;
//! Cardwell et al., "BBRv2: A Model-Based Congestion Control", IETF 104/105
//! ICCRG slides. Written from those descriptions, not copied.
//!
//! Units as in Linux and bbr.rs: gains in BBR_UNIT (256 = 1.0); bw in
//! packets/µs << 24; RTTs in whole µs; timestamps the simulator's ns clock.
//!
//! Simplifications against v2alpha (see docs/fidelity.md):
//!   - ECN: Linux enables BBRv2's ECN logic only with the module parameter
//!     `ecn_enable` (default off) and only when min_rtt <= `ecn_max_rtt_us`
//!     (5 ms). [`Bbr2Params::default`] turns it on at every RTT, the lab
//!     setting S3 (Fejes et al.) uses; [`Bbr2Params::linux`] keeps Linux's
//!     defaults. The receiver echoes DCTCP-style (per-CE-state ECE with an
//!     immediate ACK on a change; v2alpha `bbr_cwnd_event` with
//!     `precise_ece_ack` calls `dctcp_ece_ack_update`). `rs.is_ece` is this
//!     ACK's ECE flag (ecn_in_round); `rs.delivered_ce` counts ECE-echoed
//!     deliveries over the rate sample's interval (v2alpha tcp_rate.c
//!     `tcp_rate_gen`), which `is_inflight_too_high` compares with 50 % of
//!     `rs.delivered`. (Until 2026-11 the model passed one ACK's CE count here,
//!     so the 50 % test almost never fired; see docs/in-network.md, S3.);
//!   - `skb_marked_lost` (the per-lost-packet probe check that locates the
//!     packet where loss crossed 2 %) has no hook in the trait; loss is judged
//!     on each ACK's rate sample (`rs.lost` / `rs.tx_in_flight`), as v2alpha
//!     also does in `bbr2_adapt_upper_bounds`;
//!   - the app-limited fast path (a CPU optimisation) is not modelled; the
//!     earliest departure time is "now" (as in bbr.rs); `is_ack_delayed` is false;
//!   - `ecn_reprobe_gain` and `refill_add_inc` are 0 and `usage_based_cwnd`
//!     off, as in v2alpha's defaults.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::bbr::{
    BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT, CWND_MIN_TARGET_PKTS, DEFAULT_RTT_US, EXTRA_ACKED_MAX_US, MIN_TSO_RATE_BITS_PER_S,
    PACING_MARGIN_PERCENT, PACING_SHIFT, TSO_MAX_BYTES,
};
use super::{CaEvent, CaState, CongestionControl, RateSample, TcpCc, INFINITE_SSTHRESH};

/// STARTUP pacing gain and cwnd gain 2/ln2 (`bbr_high_gain`, `bbr_startup_cwnd_gain`).
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// DRAIN pacing gain 1/2.885 (`bbr_drain_gain`).
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// PROBE_BW cwnd gain 2.0 (`bbr_cwnd_gain`).
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// Pacing gains of the PROBE_BW phases UP, DOWN, CRUISE, REFILL.
pub const PHASE_PACING_GAIN: [u32; 4] = [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT];
/// STARTUP is "still growing" while bw grows by 25 % per round (`bbr_full_bw_thresh`).
pub const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// Rounds without such growth before the pipe is full (`bbr_full_bw_cnt`).
pub const FULL_BW_CNT_ROUNDS: u32 = 3;
/// min_rtt filter window, ns (`bbr_min_rtt_win_sec` = 10 s).
pub const MIN_RTT_WINDOW_NS: u64 = 10_000_000_000;
/// PROBE_RTT interval: window of the probe_rtt_min filter, ns (`bbr_probe_rtt_win_ms` = 5 s).
pub const PROBE_RTT_WINDOW_NS: u64 = 5_000_000_000;
/// Minimum PROBE_RTT dwell, ns (`bbr_probe_rtt_mode_ms` = 200 ms).
pub const PROBE_RTT_DURATION_NS: u64 = 200_000_000;
/// cwnd in PROBE_RTT as a fraction of BDP: 0.5 (`bbr_probe_rtt_cwnd_gain`).
pub const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// Halve the RTT-based TSO allowance per this many µs of min RTT, as a shift (`bbr_tso_rtt_shift` = 9: 512 µs).
pub const TSO_RTT_SHIFT: u32 = 9;
/// `GSO_MAX_SIZE`, bytes.
pub const GSO_MAX_SIZE_BYTES: u64 = 65536;
/// Multiplicative cut of bw_lo/inflight_lo per lossy round, and of inflight_hi
/// after a too-lossy probe: beta = 0.3 (`bbr_beta` = 76/256), i.e. x 0.7.
pub const BETA: u32 = BBR_UNIT * 30 / 100;
/// EWMA gain of ecn_alpha: 1/16 (`bbr_ecn_alpha_gain`).
pub const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
/// Initial ecn_alpha: 1.0 (`bbr_ecn_alpha_init`), to respond at once.
pub const ECN_ALPHA_INIT: u32 = BBR_UNIT;
/// ECN cut factor f_ecn = 1/3 (`bbr_ecn_factor` = 85/256).
pub const ECN_FACTOR: u32 = BBR_UNIT / 3;
/// CE ratio at which a probe has gone too far: 50 % (`bbr_ecn_thresh`).
pub const ECN_THRESH: u32 = BBR_UNIT / 2;
/// Linux's max min_rtt for the ECN logic, µs (`bbr_ecn_max_rtt_us` = 5 ms).
pub const LINUX_ECN_MAX_RTT_US: u64 = 5_000;
/// Loss rate at which a probe has gone too far: 2 % (`bbr_loss_thresh` = 5/256).
pub const LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// Loss events in a STARTUP recovery round that end STARTUP (`bbr_full_loss_cnt`).
pub const FULL_LOSS_CNT: u32 = 8;
/// Rounds with CE ratio >= ECN_THRESH that end STARTUP (`bbr_full_ecn_cnt`).
pub const FULL_ECN_CNT: u32 = 2;
/// Headroom left below inflight_hi when cruising: 15 % (`bbr_inflight_headroom`).
pub const INFLIGHT_HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// PROBE_UP stops once in-flight reaches 1.25 BDP (`bbr_bw_probe_pif_gain`).
pub const BW_PROBE_PIF_GAIN: u32 = BBR_UNIT * 5 / 4;
/// Reno-coexistence probe interval: this x BDP rounds (`bbr_bw_probe_reno_gain` = 1.0).
pub const BW_PROBE_RENO_GAIN: u32 = BBR_UNIT;
/// ... but at most this many rounds (`bbr_bw_probe_max_rounds`).
pub const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// Random extra rounds, [0, this) (`bbr_bw_probe_rand_rounds`).
pub const BW_PROBE_RAND_ROUNDS: u32 = 2;
/// Wall-clock probe interval base, µs (`bbr_bw_probe_base_us` = 2 s) ...
pub const BW_PROBE_BASE_US: u64 = 2_000_000;
/// ... plus a random [0, this) µs (`bbr_bw_probe_rand_us` = 1 s).
pub const BW_PROBE_RAND_US: u64 = 1_000_000;
/// ACK-aggregation allowance gain 1.0 and window 5 rounds (as BBRv1).
pub const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
pub const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// Reset the ACK-aggregation epoch after this many packets.
pub const ACK_EPOCH_ACKED_RESET_THRESH_PKTS: u32 = 1 << 20;

const NO_RTT_US: u64 = u64::MAX;
const NO_BW: u64 = u64::MAX;
const NO_INFLIGHT: u32 = u32::MAX;

/// Which generation of the bounded-model BBR a [`Profile`] describes. BBRv3
/// (bbr3.rs) keeps v2alpha's machine and changes a few rules; each `V3`
/// branch below names the google/bbr v3 function it follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    V2Alpha,
    V3,
}

/// The gains and counts that differ between BBR generations, plus the
/// generation for the rules that changed. Gains in BBR_UNIT (256 = 1.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// Canonical CCA name.
    pub name: &'static str,
    pub generation: Generation,
    /// STARTUP pacing gain (`bbr_startup_pacing_gain` / v2 `bbr_high_gain`).
    pub startup_pacing_gain: u32,
    /// STARTUP and DRAIN cwnd gain (`bbr_startup_cwnd_gain`).
    pub startup_cwnd_gain: u32,
    /// DRAIN pacing gain (`bbr_drain_gain`).
    pub drain_gain: u32,
    /// PROBE_BW pacing gains of UP, DOWN, CRUISE, REFILL (`bbr_pacing_gain[]`).
    pub phase_pacing_gain: [u32; 4],
    /// Added to the PROBE_BW cwnd gain in UP (v3 `bbr_bw_probe_cwnd_gain` x 1/4).
    pub up_cwnd_gain_extra: u32,
    /// Loss events in a STARTUP recovery round that end STARTUP (`bbr_full_loss_cnt`).
    pub full_loss_cnt: u32,
    /// After a cycle with ECN but no loss, reprobe with this fraction of
    /// inflight_hi as the first round's growth; 0 = off (`bbr_ecn_reprobe_gain`).
    pub ecn_reprobe_gain: u32,
}

/// v2alpha's values (module parameters of tcp_bbr2.c).
pub const V2ALPHA: Profile = Profile {
    name: "bbr2",
    generation: Generation::V2Alpha,
    startup_pacing_gain: HIGH_GAIN,
    startup_cwnd_gain: HIGH_GAIN,
    drain_gain: DRAIN_GAIN,
    phase_pacing_gain: PHASE_PACING_GAIN,
    up_cwnd_gain_extra: 0,
    full_loss_cnt: FULL_LOSS_CNT,
    ecn_reprobe_gain: 0,
};

/// Tunables that differ between Linux's defaults and the lab setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bbr2Params {
    /// Use the ECN logic at all (`bbr_ecn_enable`).
    pub ecn_enable: bool,
    /// Only if min_rtt <= this, µs; 0 = any RTT (`bbr_ecn_max_rtt_us`).
    pub ecn_max_rtt_us: u64,
}

impl Default for Bbr2Params {
    /// The lab setting (S3): ECN logic on at every RTT.
    fn default() -> Self {
        Bbr2Params { ecn_enable: true, ecn_max_rtt_us: 0 }
    }
}

impl Bbr2Params {
    /// v2alpha's module defaults: ECN logic off; when on, only below 5 ms.
    pub fn linux() -> Self {
        Bbr2Params { ecn_enable: false, ecn_max_rtt_us: LINUX_ECN_MAX_RTT_US }
    }
}

/// Modes, as BBRv1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// PROBE_BW phases (`enum bbr_pacing_gain_phase`; index into PHASE_PACING_GAIN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Up = 0,
    Down = 1,
    Cruise = 2,
    Refill = 3,
}

/// What the ACKs currently arriving reflect (`enum bbr_ack_phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// The rate sample's interval in whole µs, if valid.
fn interval_us(rs: &RateSample) -> Option<u64> {
    if rs.delivered < 0 || rs.interval_ns < 1000 {
        return None;
    }
    Some(rs.interval_ns as u64 / 1000)
}

#[derive(Debug, Clone)]
pub struct Bbr2 {
    pub(super) profile: Profile,
    pub(super) params: Bbr2Params,
    pub(super) rng: Pcg64Mcg,
    pub(super) mode: Mode,
    pub(super) phase: Phase,
    pub(super) ack_phase: AckPhase,
    // --- model: RTT
    pub(super) min_rtt_us: u64,
    pub(super) min_rtt_stamp_ns: u64,
    pub(super) probe_rtt_min_us: u64,
    pub(super) probe_rtt_min_stamp_ns: u64,
    pub(super) probe_rtt_done_ns: Option<u64>,
    pub(super) probe_rtt_round_done: bool,
    // --- model: bandwidth (packets/µs << 24)
    pub(super) max_bw: [u64; 2],
    pub(super) bw_hi: u64,
    pub(super) bw_lo: u64,
    pub(super) bw_latest: u64,
    // --- model: volume (packets)
    pub(super) inflight_hi: u32,
    pub(super) inflight_lo: u32,
    pub(super) inflight_latest: u32,
    // --- rounds
    pub(super) next_rtt_delivered: u64,
    pub(super) round_start: bool,
    pub(super) rounds_since_probe: u32,
    pub(super) loss_round_delivered: u64,
    pub(super) loss_round_start: bool,
    // --- congestion signals
    pub(super) loss_in_round: bool,
    pub(super) ecn_in_round: bool,
    pub(super) loss_in_cycle: bool,
    pub(super) ecn_in_cycle: bool,
    pub(super) loss_events_in_round: u32,
    pub(super) ecn_eligible: bool,
    /// EWMA of the CE ratio, BBR_UNIT = 1.0.
    pub(super) ecn_alpha: u32,
    pub(super) alpha_last_delivered: u64,
    pub(super) alpha_last_delivered_ce: u64,
    pub(super) startup_ecn_rounds: u32,
    // --- probing
    pub(super) cycle_start_ns: u64,
    pub(super) probe_wait_us: u64,
    pub(super) bw_probe_up_cnt: u32,
    pub(super) bw_probe_up_acks: u32,
    pub(super) bw_probe_up_rounds: u32,
    pub(super) bw_probe_samples: bool,
    pub(super) prev_probe_too_high: bool,
    pub(super) stopped_risky_probe: bool,
    pub(super) got_ok_bw_probe_sample: bool,
    // --- STARTUP
    pub(super) full_bw_reached: bool,
    pub(super) full_bw: u64,
    pub(super) full_bw_cnt: u32,
    /// v3: the bw plateau (3 rounds without 25 % growth) was just seen (`full_bw_now`).
    pub(super) full_bw_now: bool,
    // --- control
    pub(super) pacing_gain: u32,
    pub(super) cwnd_gain: u32,
    pub(super) prev_ca_state: CaState,
    pub(super) idle_restart: bool,
    pub(super) has_seen_rtt: bool,
    pub(super) prior_cwnd: u32,
    pub(super) init_cwnd: u32,
    pub(super) undo_bw_lo: u64,
    pub(super) undo_inflight_lo: u32,
    pub(super) undo_inflight_hi: u32,
    // --- ACK aggregation
    pub(super) ack_epoch_start_ns: u64,
    pub(super) ack_epoch_acked: u32,
    pub(super) extra_acked: [u32; 2],
    pub(super) extra_acked_win_rtts: u32,
    pub(super) extra_acked_win_idx: usize,
}

impl Bbr2 {
    /// BBRv2 with the lab ECN setting ([`Bbr2Params::default`]).
    pub fn new(seed: u64) -> Bbr2 {
        Bbr2::with_params(seed, Bbr2Params::default())
    }

    pub fn with_params(seed: u64, params: Bbr2Params) -> Bbr2 {
        Bbr2::with_profile(seed, V2ALPHA, params)
    }

    /// The machine with another generation's gains and rules (bbr3.rs).
    pub fn with_profile(seed: u64, profile: Profile, params: Bbr2Params) -> Bbr2 {
        Bbr2 {
            profile,
            params,
            rng: Pcg64Mcg::seed_from_u64(seed),
            mode: Mode::Startup,
            phase: Phase::Up,
            ack_phase: AckPhase::Init,
            min_rtt_us: NO_RTT_US,
            min_rtt_stamp_ns: 0,
            probe_rtt_min_us: NO_RTT_US,
            probe_rtt_min_stamp_ns: 0,
            probe_rtt_done_ns: None,
            probe_rtt_round_done: false,
            max_bw: [0, 0],
            bw_hi: NO_BW,
            bw_lo: NO_BW,
            bw_latest: 0,
            inflight_hi: NO_INFLIGHT,
            inflight_lo: NO_INFLIGHT,
            inflight_latest: 0,
            next_rtt_delivered: 0,
            round_start: false,
            rounds_since_probe: 0,
            loss_round_delivered: 1,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_events_in_round: 0,
            ecn_eligible: false,
            ecn_alpha: ECN_ALPHA_INIT,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            startup_ecn_rounds: 0,
            cycle_start_ns: 0,
            probe_wait_us: 0,
            bw_probe_up_cnt: u32::MAX,
            bw_probe_up_acks: 0,
            bw_probe_up_rounds: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            got_ok_bw_probe_sample: false,
            full_bw_reached: false,
            full_bw: 0,
            full_bw_cnt: 0,
            full_bw_now: false,
            pacing_gain: profile.startup_pacing_gain,
            cwnd_gain: profile.startup_cwnd_gain,
            prev_ca_state: CaState::Open,
            idle_restart: false,
            has_seen_rtt: false,
            prior_cwnd: 0,
            init_cwnd: 10,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            ack_epoch_start_ns: 0,
            ack_epoch_acked: 0,
            extra_acked: [0, 0],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
        }
    }

    // ------------------------------------------------------------ accessors

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn phase(&self) -> Phase {
        self.phase
    }
    pub fn inflight_hi(&self) -> Option<u32> {
        (self.inflight_hi != NO_INFLIGHT).then_some(self.inflight_hi)
    }
    pub fn inflight_lo(&self) -> Option<u32> {
        (self.inflight_lo != NO_INFLIGHT).then_some(self.inflight_lo)
    }
    /// ECN alpha, BBR_UNIT = 1.0.
    pub fn ecn_alpha(&self) -> u32 {
        self.ecn_alpha
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// `bbr_max_bw`: max of the two cycle slots.
    pub fn max_bw(&self) -> u64 {
        self.max_bw[0].max(self.max_bw[1])
    }
    /// Current pacing gain, BBR_UNIT = 1.0.
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }
    /// Current cwnd gain, BBR_UNIT = 1.0.
    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }
    /// `bbr_bw`: min(max_bw, bw_lo, bw_hi).
    pub fn bw(&self) -> u64 {
        self.max_bw().min(self.bw_lo).min(self.bw_hi)
    }

    // ------------------------------------------------------ shared with v1

    fn rate_bytes_per_sec(mss: u32, rate: u64, gain: u32) -> u64 {
        let mut r = rate as u128 * mss as u128;
        r = (r * gain as u128) >> BBR_SCALE;
        r *= (1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT)) as u128;
        ((r >> BW_SCALE).max(1)).min(u64::MAX as u128) as u64
    }

    fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpCc) {
        let rtt_us = if tp.srtt_ns != 0 {
            self.has_seen_rtt = true;
            (tp.srtt_ns / 1000).max(1)
        } else {
            DEFAULT_RTT_US
        };
        let bw = tp.cwnd as u64 * BW_UNIT / rtt_us;
        tp.pacing_rate_bytes_per_s = Self::rate_bytes_per_sec(tp.mss, bw, self.profile.startup_pacing_gain);
    }

    fn set_pacing_rate(&mut self, tp: &mut TcpCc, bw: u64, gain: u32) {
        let rate = Self::rate_bytes_per_sec(tp.mss, bw, gain);
        if !self.has_seen_rtt && tp.srtt_ns != 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate_bytes_per_s {
            tp.pacing_rate_bytes_per_s = rate;
        }
    }

    /// `bbr_tso_segs_goal` (v2: plus an allowance that halves per 512 µs of min RTT).
    fn tso_segs_goal(&self, tp: &TcpCc) -> u32 {
        let mut bytes = tp.pacing_rate_bytes_per_s >> PACING_SHIFT;
        if self.min_rtt_us != NO_RTT_US {
            let r = self.min_rtt_us >> TSO_RTT_SHIFT;
            if r < 32 {
                bytes += GSO_MAX_SIZE_BYTES >> r;
            }
        }
        let bytes = bytes.min(TSO_MAX_BYTES);
        let min_segs = if tp.pacing_rate_bytes_per_s < MIN_TSO_RATE_BITS_PER_S >> 3 { 1 } else { 2 };
        ((bytes / tp.mss.max(1) as u64) as u32).max(min_segs)
    }

    fn save_cwnd(&mut self, cwnd: u32) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw x min_rtt x gain), packets.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == NO_RTT_US {
            return self.init_cwnd;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        let bdp = ((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128);
        bdp.min(u32::MAX as u128 / 2) as u32
    }

    /// `bbr_quantization_budget` with v2alpha's `cwnd_tso_budget` = 1 (flooring).
    fn quantization_budget(&self, tp: &TcpCc, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal(tp)).max(CWND_MIN_TARGET_PKTS);
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            cwnd = cwnd.saturating_add(2);
        }
        cwnd
    }

    pub(super) fn inflight(&self, tp: &TcpCc, bw: u64, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    fn packets_in_net_at_edt(&self, tp: &TcpCc, inflight_now: u32) -> u32 {
        if self.pacing_gain > BBR_UNIT {
            inflight_now + self.tso_segs_goal(tp)
        } else {
            inflight_now
        }
    }

    fn ack_aggregation_cwnd(&self) -> u32 {
        // v2alpha: extra_acked_in_startup = 1, so also before the pipe is full.
        let max_aggr = (self.bw() as u128 * EXTRA_ACKED_MAX_US as u128 / BW_UNIT as u128).min(u32::MAX as u128) as u32;
        let aggr = ((EXTRA_ACKED_GAIN as u64 * self.extra_acked[0].max(self.extra_acked[1]) as u64) >> BBR_SCALE) as u32;
        aggr.min(max_aggr)
    }

    fn probe_rtt_cwnd(&self) -> u32 {
        CWND_MIN_TARGET_PKTS.max(self.bdp(self.bw(), PROBE_RTT_CWND_GAIN))
    }

    /// `bbr_set_cwnd` (v2alpha: no packet conservation; losses act via the bounds).
    fn set_cwnd(&mut self, tp: &mut TcpCc, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = tp.cwnd;
        if acked > 0 {
            let mut target = self.bdp(bw, gain);
            target = target.saturating_add(self.ack_aggregation_cwnd());
            target = self.quantization_budget(tp, target);
            if self.full_bw_reached {
                cwnd = cwnd.saturating_add(acked).min(target);
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd = cwnd.saturating_add(acked);
            }
            cwnd = cwnd.max(CWND_MIN_TARGET_PKTS);
        }
        tp.cwnd = cwnd.min(tp.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.cwnd = tp.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    fn update_round_start(&mut self, tp: &TcpCc, rs: &RateSample) {
        self.round_start = false;
        if interval_us(rs).is_some() && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.round_start = true;
        }
    }

    fn update_ack_aggregation(&mut self, tp: &TcpCc, rs: &RateSample) {
        if rs.acked_sacked == 0 || interval_us(rs).is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            let thresh = if self.full_bw_reached { EXTRA_ACKED_WIN_ROUNDS } else { 1 };
            if self.extra_acked_win_rtts >= thresh {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = tp.delivered_time_ns.saturating_sub(self.ack_epoch_start_ns) / 1000;
        let mut expected = (self.bw() as u128 * epoch_us as u128 / BW_UNIT as u128).min(u32::MAX as u128) as u32;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH_PKTS {
            self.ack_epoch_acked = 0;
            self.ack_epoch_start_ns = tp.delivered_time_ns;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected).min(tp.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.profile.generation == Generation::V3 {
            self.check_full_bw_plateau(rs, sample_bw);
            return;
        }
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = ((self.full_bw as u128 * FULL_BW_THRESH as u128) >> BBR_SCALE) as u64;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT_ROUNDS;
    }

    /// v3 `bbr_check_full_bw_reached`: a non-app-limited sample >= 1.25 x
    /// full_bw restarts the count (on any ACK); 3 rounds without one is a
    /// plateau (`full_bw_now`), which ends STARTUP and, later, PROBE_BW UP.
    fn check_full_bw_plateau(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let thresh = ((self.full_bw as u128 * FULL_BW_THRESH as u128) >> BBR_SCALE) as u64;
        if sample_bw >= thresh {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT_ROUNDS;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// `bbr_reset_full_bw`.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    // ---------------------------------------------------------- v2 proper

    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup || (self.mode == Mode::ProbeBw && matches!(self.phase, Phase::Refill | Phase::Up))
    }

    fn has_elapsed_in_phase(&self, tp: &TcpCc, interval_us: u64) -> bool {
        tp.now_ns > self.cycle_start_ns + interval_us * 1000
    }

    pub(super) fn target_inflight(&self, tp: &TcpCc) -> u32 {
        self.inflight(tp, self.bw(), BBR_UNIT).min(tp.cwnd)
    }

    pub(super) fn handle_queue_too_high_in_startup(&mut self, tp: &TcpCc) {
        self.full_bw_reached = true;
        self.inflight_hi = self.inflight(tp, self.max_bw(), BBR_UNIT);
        if self.profile.generation == Generation::V3 {
            // v3: not below the volume the latest round delivered.
            self.inflight_hi = self.inflight_hi.max(self.inflight_latest);
        }
    }

    fn check_ecn_too_high_in_startup(&mut self, tp: &TcpCc, ce_ratio: u32) {
        if self.full_bw_reached || !self.ecn_eligible {
            return;
        }
        if ce_ratio >= ECN_THRESH {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup(tp);
        }
    }

    /// `bbr2_update_ecn_alpha`, once per round: alpha = (1 - g) alpha + g x CE ratio.
    pub(super) fn update_ecn_alpha(&mut self, tp: &TcpCc) {
        let delivered = tp.delivered.saturating_sub(self.alpha_last_delivered);
        let delivered_ce = tp.delivered_ce.saturating_sub(self.alpha_last_delivered_ce);
        if delivered == 0 {
            return;
        }
        if !self.ecn_eligible
            && self.params.ecn_enable
            && (self.params.ecn_max_rtt_us == 0 || self.min_rtt_us <= self.params.ecn_max_rtt_us)
        {
            self.ecn_eligible = true;
        }
        let ce_ratio = ((delivered_ce << BBR_SCALE) / delivered) as u32;
        let alpha = ((BBR_UNIT - ECN_ALPHA_GAIN) * self.ecn_alpha) >> BBR_SCALE;
        let alpha = alpha + ((ECN_ALPHA_GAIN * ce_ratio) >> BBR_SCALE);
        self.ecn_alpha = alpha.min(BBR_UNIT);
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
        self.check_ecn_too_high_in_startup(tp, ce_ratio);
    }

    fn raise_inflight_hi_slope(&mut self, tp: &TcpCc) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (tp.cwnd / growth_this_round).max(1);
    }

    fn probe_inflight_hi_upward(&mut self, tp: &TcpCc, rs: &RateSample) {
        if !tp.is_cwnd_limited || tp.cwnd < self.inflight_hi {
            self.bw_probe_up_acks = 0;
            return;
        }
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.round_start {
            self.raise_inflight_hi_slope(tp);
        }
    }

    /// `bbr2_is_inflight_too_high`: loss > 2 % of tx_in_flight, or CE >= 50 % of
    /// delivered, both counted over the rate sample's interval (about one round:
    /// from the sampled packet's send to this ACK), not over this ACK alone.
    pub fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight > 0 {
            let loss_thresh = (rs.tx_in_flight as u64 * LOSS_THRESH as u64) >> BBR_SCALE;
            if rs.lost > loss_thresh {
                return true;
            }
        }
        if rs.delivered_ce > 0 && rs.delivered > 0 && self.ecn_eligible {
            let ecn_thresh = (rs.delivered as u64 * ECN_THRESH as u64) >> BBR_SCALE;
            // v2alpha: CE >= 50 %; v3: CE > 50 %.
            let too_high = match self.profile.generation {
                Generation::V2Alpha => rs.delivered_ce as u64 >= ecn_thresh,
                Generation::V3 => rs.delivered_ce as u64 > ecn_thresh,
            };
            if too_high {
                return true;
            }
        }
        false
    }

    fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == NO_INFLIGHT {
            return NO_INFLIGHT;
        }
        let headroom = ((self.inflight_hi as u64 * INFLIGHT_HEADROOM as u64) >> BBR_SCALE).max(1) as u32;
        self.inflight_hi.saturating_sub(headroom).max(CWND_MIN_TARGET_PKTS)
    }

    pub(super) fn bound_cwnd_for_inflight_model(&mut self, tp: &mut TcpCc) {
        let mut cap = NO_INFLIGHT;
        if self.mode == Mode::ProbeBw && self.phase != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt || (self.mode == Mode::ProbeBw && self.phase == Phase::Cruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET_PKTS);
        tp.cwnd = tp.cwnd.min(cap);
    }

    /// `bbr2_ecn_cut`: 1 - alpha x ecn_factor, in BBR_UNIT.
    pub fn ecn_cut(&self) -> u32 {
        BBR_UNIT - ((self.ecn_alpha * ECN_FACTOR) >> BBR_SCALE)
    }

    /// `bbr2_adapt_lower_bounds`: once per round, outside bw probing.
    pub(super) fn adapt_lower_bounds(&mut self, tp: &TcpCc) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = NO_INFLIGHT;
        let mut ecn_bw_lo = NO_BW;
        // v2alpha cuts bw_lo and inflight_lo on ECN; v3 only inflight_lo
        // (`bbr_init_lower_bounds(sk, false)`, `bbr_ecn_lower_bounds`).
        let ecn_cuts_bw = self.profile.generation == Generation::V2Alpha;
        if self.ecn_in_round && self.ecn_eligible {
            let cut = self.ecn_cut() as u64;
            if ecn_cuts_bw && self.bw_lo == NO_BW {
                self.bw_lo = self.max_bw();
            }
            if self.inflight_lo == NO_INFLIGHT {
                self.inflight_lo = tp.cwnd;
            }
            ecn_inflight_lo = ((self.inflight_lo as u64 * cut) >> BBR_SCALE) as u32;
            if ecn_cuts_bw {
                ecn_bw_lo = ((self.bw_lo as u128 * cut as u128) >> BBR_SCALE) as u64;
            }
        }
        if self.loss_in_round {
            if self.bw_lo == NO_BW {
                self.bw_lo = self.max_bw();
            }
            if self.inflight_lo == NO_INFLIGHT {
                self.inflight_lo = tp.cwnd;
            }
            let keep = (BBR_UNIT - BETA) as u64;
            self.bw_lo = self.bw_latest.max(((self.bw_lo as u128 * keep as u128) >> BBR_SCALE) as u64);
            self.inflight_lo = self.inflight_latest.max(((self.inflight_lo as u64 * keep) >> BBR_SCALE) as u32);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.min(ecn_bw_lo);
        if !ecn_cuts_bw {
            self.bw_lo = self.bw_lo.max(1);
        }
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = NO_BW;
        self.inflight_lo = NO_INFLIGHT;
    }

    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    fn update_congestion_signals(&mut self, tp: &TcpCc, rs: &RateSample, sample_bw: u64) {
        self.loss_round_start = false;
        if interval_us(rs).is_none() || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.max_bw[1] = self.max_bw[1].max(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.max(0) as u32);
        if rs.prior_delivered < self.loss_round_delivered {
            return;
        }
        self.loss_round_delivered = tp.delivered;
        self.loss_round_start = true;
        self.adapt_lower_bounds(tp);
        self.loss_in_round = false;
        self.ecn_in_round = false;
        if self.profile.generation == Generation::V2Alpha {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered.max(0) as u32;
        }
    }

    /// v3 `bbr_advance_latest_delivery_signals`: the per-round reset of the
    /// latest rate and volume happens after the ACK is fully processed, so the
    /// STARTUP exit (`inflight_hi = max(BDP, inflight_latest)`) still sees the
    /// whole round's maximum.
    fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.profile.generation == Generation::V3 && self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered.max(0) as u32;
        }
    }

    fn is_reno_coexistence_probe_time(&self, tp: &TcpCc) -> bool {
        let reno_rounds = ((self.target_inflight(tp) as u64 * BW_PROBE_RENO_GAIN as u64) >> BBR_SCALE) as u32;
        self.rounds_since_probe >= BW_PROBE_MAX_ROUNDS.min(reno_rounds)
    }

    pub(super) fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.gen_range(0..BW_PROBE_RAND_ROUNDS);
        self.probe_wait_us = BW_PROBE_BASE_US + self.rng.gen_range(0..BW_PROBE_RAND_US);
    }

    fn start_bw_probe_refill(&mut self, tp: &TcpCc, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.got_ok_bw_probe_sample = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = tp.delivered;
        self.phase = Phase::Refill;
    }

    fn start_bw_probe_up(&mut self, tp: &TcpCc, sample_bw: u64) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = tp.delivered;
        self.cycle_start_ns = tp.now_ns;
        if self.profile.generation == Generation::V3 {
            // v3: UP ends on a bw plateau, measured from this sample on.
            self.reset_full_bw();
            self.full_bw = sample_bw;
        }
        self.phase = Phase::Up;
        self.raise_inflight_hi_slope(tp);
    }

    fn start_bw_probe_down(&mut self, tp: &TcpCc) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = u32::MAX;
        self.pick_probe_wait();
        self.cycle_start_ns = tp.now_ns;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = tp.delivered;
        self.phase = Phase::Down;
    }

    fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != NO_INFLIGHT {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.phase = Phase::Cruise;
    }

    /// `bbr2_handle_inflight_too_high`: inflight_hi = max(tx_in_flight, 0.7 x target).
    pub(super) fn handle_inflight_too_high(&mut self, tp: &TcpCc, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !rs.is_app_limited {
            let keep = (BBR_UNIT - BETA) as u64;
            self.inflight_hi = rs.tx_in_flight.max(((self.target_inflight(tp) as u64 * keep) >> BBR_SCALE) as u32);
            // bbr2_handle_inflight_too_high_via_ecn (ecn_bw_hi on); v3 has no bw_hi cut.
            if self.profile.generation == Generation::V2Alpha && self.ecn_eligible && !self.got_ok_bw_probe_sample {
                if self.bw_hi == NO_BW {
                    self.bw_hi = self.max_bw();
                }
                self.bw_hi = ((self.bw_hi as u128 * self.ecn_cut() as u128) >> BBR_SCALE) as u64;
            }
        }
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            self.start_bw_probe_down(tp);
        }
    }

    /// Returns true if it decided a state transition.
    fn adapt_upper_bounds(&mut self, tp: &TcpCc, rs: &RateSample, sample_bw: u64) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited && self.max_bw[1] != 0 {
                // bbr2_advance_max_bw_filter
                self.max_bw[0] = self.max_bw[1];
                self.max_bw[1] = 0;
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(tp, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(tp, rs);
            }
        } else {
            self.got_ok_bw_probe_sample |= self.bw_probe_samples;
            if self.inflight_hi == NO_INFLIGHT && self.bw_hi == NO_BW {
                return false;
            }
            if self.inflight_hi != NO_INFLIGHT && rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if self.bw_hi != NO_BW && sample_bw > self.bw_hi {
                self.bw_hi = sample_bw;
            }
            if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
                self.probe_inflight_hi_upward(tp, rs);
            }
        }
        false
    }

    pub(super) fn check_time_to_probe_bw(&mut self, tp: &TcpCc) -> bool {
        // v3: after a cycle with ECN marks but no loss, reprobe at once, the
        // first round growing inflight_hi by about ecn_reprobe_gain x inflight_hi
        // (0 in v2alpha: off).
        if self.profile.ecn_reprobe_gain > 0
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && tp.ca_state == CaState::Open
        {
            let growth = (self.inflight_hi as u64 * self.profile.ecn_reprobe_gain as u64) >> BBR_SCALE;
            let n = if growth == 0 { 0 } else { growth.ilog2().min(30) };
            self.start_bw_probe_refill(tp, n);
            return true;
        }
        if self.has_elapsed_in_phase(tp, self.probe_wait_us) || self.is_reno_coexistence_probe_time(tp) {
            self.start_bw_probe_refill(tp, 0);
            return true;
        }
        false
    }

    fn check_time_to_cruise(&self, tp: &TcpCc, inflight: u32, bw: u64) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        // drain_to_target = true in v2alpha.
        inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    fn update_cycle_phase(&mut self, tp: &TcpCc, rs: &RateSample, sample_bw: u64) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(tp, rs, sample_bw) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        match self.phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw(tp);
            }
            Phase::Refill => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(tp, sample_bw);
                }
            }
            Phase::Up => {
                let mut is_risky = false;
                let mut is_queuing = false;
                if self.prev_probe_too_high && self.inflight_hi != NO_INFLIGHT && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    is_risky = true;
                } else if self.profile.generation == Generation::V3 {
                    // v3: inflight_hi limiting growth restarts the plateau
                    // detector; otherwise a bw plateau ends the probe.
                    if tp.is_cwnd_limited && tp.cwnd >= self.inflight_hi {
                        self.reset_full_bw();
                        self.full_bw = sample_bw;
                    } else if self.full_bw_now {
                        is_queuing = true;
                    }
                } else if self.min_rtt_us != NO_RTT_US
                    && self.has_elapsed_in_phase(tp, self.min_rtt_us)
                    && inflight >= self.inflight(tp, bw, BW_PROBE_PIF_GAIN)
                {
                    is_queuing = true;
                }
                if is_risky || is_queuing {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(tp);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(tp) {
                    return;
                }
                if self.check_time_to_cruise(tp, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }

    fn exit_probe_rtt(&mut self, tp: &TcpCc) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    fn check_probe_rtt_done(&mut self, tp: &mut TcpCc) {
        match self.probe_rtt_done_ns {
            Some(done) if tp.now_ns > done => {}
            _ => return,
        }
        self.probe_rtt_min_stamp_ns = tp.now_ns;
        tp.cwnd = tp.cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(tp);
    }

    pub(super) fn check_loss_too_high_in_startup(&mut self, tp: &TcpCc, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xf {
            self.loss_events_in_round += 1;
        }
        if self.loss_round_start
            && tp.ca_state == CaState::Recovery
            && self.loss_events_in_round >= self.profile.full_loss_cnt
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup(tp);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    fn check_drain(&mut self, tp: &mut TcpCc) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            tp.ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain && self.packets_in_net_at_edt(tp, tp.in_flight) <= self.inflight(tp, self.max_bw(), BBR_UNIT) {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
        }
    }

    /// `bbr_update_min_rtt` (v2: PROBE_RTT when the 5 s probe_rtt_min is stale).
    fn update_min_rtt(&mut self, tp: &mut TcpCc, rs: &RateSample) {
        let now = tp.now_ns;
        let probe_rtt_expired = now > self.probe_rtt_min_stamp_ns + PROBE_RTT_WINDOW_NS;
        if rs.rtt_ns >= 0 {
            let rtt_us = rs.rtt_ns as u64 / 1000;
            // v3 takes only a strictly lower sample (`rs->rtt_us < probe_rtt_min_us`).
            let lower = match self.profile.generation {
                Generation::V2Alpha => rtt_us <= self.probe_rtt_min_us,
                Generation::V3 => rtt_us < self.probe_rtt_min_us,
            };
            if lower || probe_rtt_expired {
                self.probe_rtt_min_us = rtt_us;
                self.probe_rtt_min_stamp_ns = now;
            }
        }
        let min_rtt_expired = now > self.min_rtt_stamp_ns + MIN_RTT_WINDOW_NS;
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp_ns = self.probe_rtt_min_stamp_ns;
        }
        if probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tp.cwnd);
            self.probe_rtt_done_ns = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = tp.delivered;
        }
        if self.mode == Mode::ProbeRtt {
            tp.app_limited = (tp.delivered + tp.in_flight as u64).max(1);
            if self.probe_rtt_done_ns.is_none() && tp.in_flight <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_ns = Some(now + PROBE_RTT_DURATION_NS);
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
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    pub(super) fn update_gains(&mut self) {
        let p = &self.profile;
        let (p, c) = match self.mode {
            Mode::Startup => (p.startup_pacing_gain, p.startup_cwnd_gain),
            Mode::Drain => (p.drain_gain, p.startup_cwnd_gain),
            Mode::ProbeBw if self.phase == Phase::Up => (p.phase_pacing_gain[Phase::Up as usize], CWND_GAIN + p.up_cwnd_gain_extra),
            Mode::ProbeBw => (p.phase_pacing_gain[self.phase as usize], CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }
}

impl CongestionControl for Bbr2 {
    hooks!(cong_control);
    fn name(&self) -> &'static str {
        self.profile.name
    }

    fn init(&mut self, tp: &mut TcpCc) {
        self.init_cwnd = tp.cwnd.min(0x7f);
        self.prior_cwnd = tp.prior_cwnd;
        tp.ssthresh = INFINITE_SSTHRESH;
        let min_rtt_us = if tp.min_rtt_ns == u64::MAX { NO_RTT_US } else { tp.min_rtt_ns / 1000 };
        self.probe_rtt_min_us = min_rtt_us;
        self.probe_rtt_min_stamp_ns = tp.now_ns;
        self.min_rtt_us = min_rtt_us;
        self.min_rtt_stamp_ns = tp.now_ns;
        self.init_pacing_rate_from_rtt(tp);
        self.ack_epoch_start_ns = tp.now_ns;
        self.loss_round_delivered = tp.delivered + 1;
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
    }

    /// `bbr2_ssthresh`: keep ssthresh; save cwnd and the loss-adapted bounds for undo.
    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        self.save_cwnd(tp.cwnd);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        tp.ssthresh
    }

    fn cong_control(&mut self, tp: &mut TcpCc, rs: &RateSample) -> bool {
        self.update_round_start(tp, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xff);
            self.update_ecn_alpha(tp);
        }
        // v2alpha bbr2_main: `ecn_in_round |= rs->is_ece` (this ACK's ECE flag).
        self.ecn_in_round |= rs.is_ece;
        let sample_bw = match interval_us(rs) {
            Some(us) => ((rs.delivered as u128 * BW_UNIT as u128).div_ceil(us as u128)).min(u64::MAX as u128) as u64,
            None => 0,
        };
        // bbr2_update_model
        self.update_congestion_signals(tp, rs, sample_bw);
        self.update_ack_aggregation(tp, rs);
        self.check_loss_too_high_in_startup(tp, rs);
        self.check_full_bw_reached(rs, sample_bw);
        self.check_drain(tp);
        self.update_cycle_phase(tp, rs, sample_bw);
        self.update_min_rtt(tp, rs);
        // control
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs.acked_sacked, bw, self.cwnd_gain);
        self.bound_cwnd_for_inflight_model(tp);

        self.prev_ca_state = tp.ca_state;
        self.advance_latest_delivery_signals(rs, sample_bw);
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
        true
    }

    /// `bbr2_set_state`: an RTO counts as loss; restore cwnd when it ends.
    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            match self.profile.generation {
                Generation::V2Alpha => {
                    self.full_bw = 0;
                    if !self.is_probing_bandwidth() && self.inflight_lo == NO_INFLIGHT {
                        self.inflight_lo = self.prior_cwnd;
                    }
                }
                Generation::V3 => {
                    self.reset_full_bw();
                    if !self.is_probing_bandwidth() && self.inflight_lo == NO_INFLIGHT {
                        self.inflight_lo = tp.cwnd.max(self.prior_cwnd);
                    }
                }
            }
        } else if self.prev_ca_state == CaState::Loss {
            tp.cwnd = tp.cwnd.max(self.prior_cwnd);
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CaEvent) {
        if ev == CaEvent::TxStart && tp.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_start_ns = tp.now_ns;
            self.ack_epoch_acked = 0;
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(tp, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(tp);
            }
        }
    }

    /// `bbr2_undo_cwnd`: revert the loss-adapted bounds of a spurious recovery.
    fn undo_cwnd(&mut self, _tp: &TcpCc) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.prior_cwnd
    }

    needs!(pacing, own_pacing_rate);
}

crate::declare_cca! {
    /// BBRv2's ECN parameters (defaults: the lab setting, ECN logic on at every RTT; Linux v2alpha: off, 5 ms).
    pub struct Bbr2Config {
        /// Use the ECN logic at all (`bbr_ecn_enable`).
        ecn_enable: bool = true, Range::Any;
        /// Use ECN only if min_rtt <= this; 0 = at any RTT (`bbr_ecn_max_rtt_us`; whole microseconds).
        ecn_max_rtt_ns: u64 = 0, Range::Any;
    }
    cca Bbr2 = "bbr2", "BBRv2: Linux v2alpha net/ipv4/tcp_bbr2.c (google/bbr); draft-cardwell-iccrg-bbr-congestion-control-02; ECN logic on";
    build = |p, seed| Bbr2::with_params(seed, Bbr2Params { ecn_enable: p.ecn_enable, ecn_max_rtt_us: p.ecn_max_rtt_ns / 1_000 });
}

/// Test fixtures shared by the BBRv2 and BBRv3 tests (one machine, two profiles).
#[cfg(test)]
pub(crate) mod testkit {
    use super::*;
    use crate::cc::testutil::tp;

    /// 10 Mbit/s of 1500-byte packets = 0.8333 packets/ms: bw in pkts/µs << 24.
    pub(crate) fn bw_10mbit() -> u64 {
        (10_000_000u128 * BW_UNIT as u128 / (1500 * 8 * 1_000_000)) as u64
    }

    /// `b` (a fresh BBRv2 or BBRv3) put in PROBE_BW `phase` with a 50 ms min RTT at
    /// 10 Mbit/s (BDP ~42 packets), with the connection state that goes with it.
    pub(crate) fn steady_from(mut b: Bbr2, phase: Phase) -> (Bbr2, TcpCc) {
        let mut t = tp();
        t.now_ns = 1_000_000_000;
        t.cwnd = 84;
        t.delivered = 10_000;
        b.full_bw_reached = true;
        b.mode = Mode::ProbeBw;
        b.phase = phase;
        b.min_rtt_us = 50_000;
        b.min_rtt_stamp_ns = t.now_ns;
        b.probe_rtt_min_us = 50_000;
        b.probe_rtt_min_stamp_ns = t.now_ns;
        b.max_bw = [bw_10mbit(), bw_10mbit()];
        b.alpha_last_delivered = t.delivered;
        b.loss_round_delivered = t.delivered;
        b.next_rtt_delivered = t.delivered;
        b.cycle_start_ns = t.now_ns;
        b.probe_wait_us = 2_500_000;
        b.rounds_since_probe = 0;
        t.pacing_rate_bytes_per_s = 1_250_000;
        (b, t)
    }

    /// A valid rate sample that starts a new round: `delivered` packets in 50 ms.
    pub(crate) fn round_sample(t: &TcpCc, delivered: u32, ce: u32, lost: u64) -> RateSample {
        RateSample {
            prior_delivered: t.delivered - delivered as u64,
            delivered: delivered as i64,
            interval_ns: 50_000_000,
            rtt_ns: 50_000_000,
            acked_sacked: 2,
            prior_in_flight: 30,
            delivered_ce: ce,
            is_ece: ce > 0,
            tx_in_flight: 42,
            lost,
            ..Default::default()
        }
    }

    /// Advance `t` by one round in which `delivered` packets (`ce` CE-marked) arrived.
    pub(crate) fn deliver(t: &mut TcpCc, delivered: u32, ce: u32) {
        t.delivered += delivered as u64;
        t.delivered_ce += ce as u64;
        t.now_ns += 50_000_000;
    }

    /// `b` in PROBE_BW UP, taking bandwidth samples, with the ECN logic on, at cwnd 100.
    pub(crate) fn probing_up_with_ecn(b: Bbr2) -> (Bbr2, TcpCc) {
        let (mut b, mut t) = steady_from(b, Phase::Up);
        b.ecn_eligible = true;
        b.bw_probe_samples = true;
        t.cwnd = 100;
        (b, t)
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::{bw_10mbit, deliver, probing_up_with_ecn, round_sample, steady_from};
    use super::*;
    use crate::cc::testutil::tp;

    /// BBRv2 and BBRv3 (bbr3.rs): one machine, two profiles; the tests of what they share run on both.
    const PROFILES: [fn(u64) -> Bbr2; 2] = [Bbr2::new, super::super::bbr3::new];

    /// A BBRv2 in PROBE_BW with a 50 ms min RTT, 10 Mbit/s (BDP ~42 packets).
    fn steady(phase: Phase) -> (Bbr2, TcpCc) {
        steady_from(Bbr2::new(1), phase)
    }

    #[test]
    fn ecn_alpha_is_an_ewma_with_gain_one_sixteenth() {
        let (mut b, mut t) = steady(Phase::Cruise);
        assert_eq!(b.ecn_alpha(), BBR_UNIT, "alpha starts at 1.0");
        deliver(&mut t, 40, 0);
        b.update_ecn_alpha(&t);
        assert_eq!(b.ecn_alpha(), BBR_UNIT * 15 / 16, "a clean round: alpha x 15/16");
        deliver(&mut t, 40, 20); // CE ratio 0.5 = 128
        b.update_ecn_alpha(&t);
        assert_eq!(b.ecn_alpha(), ((240 * 240) >> 8) + ((16 * 128) >> 8));
    }

    #[test]
    fn ecn_round_outside_probing_cuts_inflight_lo_by_alpha_over_three() {
        let (mut b, mut t) = steady(Phase::Cruise);
        b.ecn_eligible = true;
        t.cwnd = 60;
        deliver(&mut t, 40, 40); // all CE: alpha stays 1.0
        let rs = round_sample(&t, 40, 40, 0);
        b.cong_control(&mut t, &rs);
        // inflight_lo = cwnd x (1 - 1.0 x 85/256) = 60 x 171/256 = 40.
        assert_eq!(b.ecn_cut(), BBR_UNIT - ECN_FACTOR);
        assert_eq!(b.inflight_lo(), Some(60 * 171 / 256));
        assert!(t.cwnd <= 40, "cwnd bounded by inflight_lo: {}", t.cwnd);
        // A second CE round with alpha ~1 cuts again, multiplicatively.
        deliver(&mut t, 40, 40);
        let rs = round_sample(&t, 40, 40, 0);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.inflight_lo(), Some(40 * 171 / 256));
    }

    #[test]
    fn ecn_in_round_follows_the_acks_ece_flag_not_the_interval_count() {
        // v2alpha bbr2_main: ecn_in_round |= rs->is_ece. rs->delivered_ce spans
        // the rate sample's interval and may still count CE from earlier ACKs.
        let (mut b, mut t) = steady(Phase::Cruise);
        b.ecn_eligible = true;
        t.cwnd = 60;
        deliver(&mut t, 40, 0);
        let mut rs = round_sample(&t, 40, 10, 0);
        rs.is_ece = false;
        b.cong_control(&mut t, &rs);
        assert_eq!(b.inflight_lo(), None, "no ECE on the round's ACKs: no ECN cut");
        deliver(&mut t, 40, 0);
        let mut rs = round_sample(&t, 40, 0, 0);
        rs.is_ece = true;
        b.cong_control(&mut t, &rs);
        assert!(b.inflight_lo().is_some(), "an ECE-flagged ACK in the round: inflight_lo cut");
    }

    #[test]
    fn ecn_cut_scales_with_alpha() {
        let (mut b, _) = steady(Phase::Cruise);
        b.ecn_alpha = BBR_UNIT / 2; // alpha 0.5: cut 1 - 0.5/3 = 0.833
        assert_eq!(b.ecn_cut(), BBR_UNIT - ((128 * ECN_FACTOR) >> BBR_SCALE));
        assert_eq!(b.ecn_cut(), 214);
        b.ecn_alpha = 0;
        assert_eq!(b.ecn_cut(), BBR_UNIT, "no marks: no cut");
    }

    #[test]
    fn ecn_is_ignored_with_linux_defaults() {
        let mut b = Bbr2::with_params(1, Bbr2Params::linux());
        let (s, mut t) = steady(Phase::Cruise);
        b.mode = s.mode;
        b.phase = s.phase;
        b.full_bw_reached = true;
        b.min_rtt_us = 50_000; // > 5 ms: not eligible even if enabled
        b.alpha_last_delivered = t.delivered;
        deliver(&mut t, 40, 40);
        b.update_ecn_alpha(&t);
        assert!(!b.ecn_eligible);
        let mut p = Bbr2::with_params(1, Bbr2Params { ecn_enable: true, ecn_max_rtt_us: LINUX_ECN_MAX_RTT_US });
        p.min_rtt_us = 4_000;
        p.alpha_last_delivered = t.delivered - 40;
        p.update_ecn_alpha(&t);
        assert!(p.ecn_eligible, "below 5 ms the ECN logic applies");
    }

    #[test]
    fn ce_ratio_of_half_while_probing_up_sets_inflight_hi_and_ends_probe() {
        let (mut b, mut t) = probing_up_with_ecn(Bbr2::new(1));
        deliver(&mut t, 40, 19); // 47.5 % < 50 %: fine
        let mut rs = round_sample(&t, 40, 19, 0);
        rs.tx_in_flight = 50;
        assert!(!b.is_inflight_too_high(&rs));
        rs.delivered_ce = 20; // 50 %
        assert!(b.is_inflight_too_high(&rs));
        b.handle_inflight_too_high(&t, &rs);
        // inflight_hi = max(tx_in_flight, 0.7 x target_inflight); target = min(BDP budget, cwnd).
        let target = b.target_inflight(&t);
        assert_eq!(b.inflight_hi(), Some(50u32.max(target * 180 / 256)));
        assert_eq!(b.phase(), Phase::Down);
    }

    #[test]
    fn loss_above_two_percent_while_probing_cuts_inflight_hi_to_seventy_percent() {
        // Loss above 2 % of a probing round (in fixed point: 5 of 256 is not above it, 6 is)
        // sets inflight_hi to max(tx_in_flight, 0.7 x target) and ends the probe.
        for new in PROFILES {
            let (mut b, mut t) = steady_from(new(1), Phase::Up);
            b.bw_probe_samples = true;
            b.max_bw = [bw_10mbit() * 4, bw_10mbit() * 4]; // BDP budget > cwnd: target = cwnd
            t.cwnd = 100;
            let mut rs = round_sample(&t, 40, 0, 5);
            rs.tx_in_flight = 256;
            assert!(!b.is_inflight_too_high(&rs), "5 of 256 lost is not above 2 %");
            rs.lost = 6;
            assert!(b.is_inflight_too_high(&rs), "6 of 256 lost is above 2 %");
            rs.tx_in_flight = 20;
            b.handle_inflight_too_high(&t, &rs);
            assert_eq!(b.target_inflight(&t), 100);
            assert_eq!(BBR_UNIT - BETA, 180, "beta 0.3: keep 0.7");
            assert_eq!(b.inflight_hi(), Some(100 * 180 / 256), "max(tx_in_flight 20, 0.7 x 100)");
            assert_eq!(b.phase(), Phase::Down, "a too-high probe ends UP");
        }
    }

    #[test]
    fn lossy_round_outside_probing_cuts_inflight_lo_to_seventy_percent() {
        // A lossy round outside probing cuts inflight_lo and bw_lo to 0.7; not while probing.
        for new in PROFILES {
            let (mut b, mut t) = steady_from(new(1), Phase::Cruise);
            t.cwnd = 80;
            b.loss_in_round = true;
            b.inflight_latest = 10;
            b.bw_latest = 1;
            b.adapt_lower_bounds(&t);
            assert_eq!(b.inflight_lo(), Some(80 * 180 / 256));
            assert_eq!(b.bw_lo, b.max_bw() * 180 / 256);
            let (mut p, t) = steady_from(new(1), Phase::Up);
            p.loss_in_round = true;
            p.adapt_lower_bounds(&t);
            assert_eq!(p.inflight_lo(), None);
        }
    }

    #[test]
    fn cruise_leaves_fifteen_percent_headroom_below_inflight_hi() {
        // CRUISE keeps 15 % headroom below inflight_hi; the probing phases may use all of it.
        for new in PROFILES {
            for (phase, cwnd) in [(Phase::Cruise, 100 - (100 * INFLIGHT_HEADROOM / BBR_UNIT)), (Phase::Up, 100)] {
                let (mut b, mut t) = steady_from(new(1), phase);
                b.inflight_hi = 100;
                t.cwnd = 200;
                b.bound_cwnd_for_inflight_model(&mut t);
                assert_eq!(t.cwnd, cwnd, "{phase:?}"); // CRUISE: 100 - 14 = 86
            }
        }
    }

    #[test]
    fn probe_rtt_every_five_seconds_at_half_bdp() {
        // PROBE_RTT comes 5 s after the last min-RTT sample, at 0.5 x BDP: 10 Mbit/s x 50 ms =
        // 41.7 packets -> ceil(20.8) = 21.
        for new in PROFILES {
            let (mut b, mut t) = steady_from(new(1), Phase::Cruise);
            t.in_flight = 80;
            t.now_ns += PROBE_RTT_WINDOW_NS + 1;
            assert_eq!(PROBE_RTT_WINDOW_NS, 5_000_000_000);
            let mut rs = round_sample(&t, 40, 0, 0);
            rs.rtt_ns = 60_000_000; // no new minimum
            b.cong_control(&mut t, &rs);
            assert_eq!(b.mode(), Mode::ProbeRtt);
            assert_eq!(t.cwnd, 21);
        }
    }

    #[test]
    fn cruise_probes_again_after_the_random_wait() {
        let (mut b, mut t) = steady(Phase::Cruise);
        b.probe_wait_us = 2_500_000;
        t.now_ns += 2_000_000_000;
        assert!(!b.check_time_to_probe_bw(&t));
        t.now_ns += 600_000_000;
        assert!(b.check_time_to_probe_bw(&t));
        assert_eq!(b.phase(), Phase::Refill);
        assert!(b.inflight_lo().is_none(), "refill resets the lower bounds");
        // Reno coexistence bound: min(63, BDP) rounds.
        let (mut c, t) = steady(Phase::Cruise);
        c.rounds_since_probe = 63;
        assert!(c.is_reno_coexistence_probe_time(&t));
    }

    #[test]
    fn probe_wait_is_two_to_three_seconds() {
        let mut b = Bbr2::new(7);
        for _ in 0..100 {
            b.pick_probe_wait();
            assert!((BW_PROBE_BASE_US..BW_PROBE_BASE_US + BW_PROBE_RAND_US).contains(&b.probe_wait_us));
            assert!(b.rounds_since_probe < BW_PROBE_RAND_ROUNDS);
        }
    }

    #[test]
    fn startup_exits_after_two_rounds_of_high_ce() {
        let mut b = Bbr2::new(1);
        let mut t = tp();
        b.init(&mut t);
        b.ecn_eligible = true;
        b.min_rtt_us = 50_000;
        for _ in 0..2 {
            deliver(&mut t, 20, 12);
            b.update_ecn_alpha(&t);
        }
        assert!(b.full_bw_reached());
        assert!(b.inflight_hi().is_some());
    }
}
