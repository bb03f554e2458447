//! BBR version 3 (Google's BBRv3, the BBR that Google runs and the IETF CCWG
//! specifies).
//!
//! Algorithm (draft-ietf-ccwg-bbr-01, "BBR Congestion Control"; google/bbr
//! branch v3, net/ipv4/tcp_bbr.c with BBR_VERSION 3):
//!   - the model of BBRv2: max_bw (max delivery rate of the last 1-2 PROBE_BW
//!     cycles), min_rtt, and bounds learnt from loss and ECN: inflight_hi (long
//!     term, cut when a bandwidth probe sees loss > 2 % or CE > 50 %) and
//!     bw_lo / inflight_lo (short term, cut every round with loss or ECN while
//!     not probing); bw = min(max_bw, bw_lo); pacing = gain x bw x 99 %;
//!     cwnd = cwnd_gain x BDP + ACK-aggregation allowance, capped by the bounds;
//!   - STARTUP: pacing gain 2.77 (4 ln 2), cwnd gain 2.0; ends on a bw plateau
//!     (3 rounds without 25 % growth of the delivery-rate sample), or when a
//!     recovery round has >= 6 loss events and loss > 2 % (then inflight_hi =
//!     max(BDP, the latest round's delivered volume)), or after 2 rounds with
//!     CE ratio >= 50 % (the probe check below is strict: > 50 %);
//!   - DRAIN: pacing gain 1/2.885 = 0.347, cwnd gain 2.0, until in-flight <= BDP;
//!   - PROBE_BW: DOWN (pacing 0.91, until in-flight <= BDP and 15 % below
//!     inflight_hi) -> CRUISE (1.0, cwnd <= 0.85 x inflight_hi and <= inflight_lo)
//!     -> after 2-3 s (random) or min(63, BDP) rounds -> REFILL (one round at 1.0,
//!     lower bounds reset) -> UP (pacing 1.25, cwnd gain 2.25, inflight_hi raised
//!     1, 2, 4 ... packets per round) until a bw plateau (while inflight_hi does
//!     not limit it), in-flight reaching an inflight_hi that was too high last
//!     time, or loss > 2 % / CE > 50 % (then inflight_hi = max(tx_in_flight,
//!     0.7 x target in-flight)) -> DOWN. All PROBE_BW cwnd gains 2.0 except UP;
//!   - loss outside probing, once per round: bw_lo, inflight_lo x 0.7 (beta
//!     0.3), not below the latest round's delivered rate / volume;
//!   - ECN (ECN-capable flows): alpha = EWMA (gain 1/16, initial 1.0) of the
//!     per-round CE ratio; a round with CE outside probing cuts inflight_lo by
//!     (1 - alpha / 3) (not bw_lo, unlike v2alpha); after a cycle with CE but no
//!     loss, reprobe at once with a first step of 0.5 x inflight_hi;
//!   - PROBE_RTT when the 5 s min-RTT window was not refreshed: cwnd =
//!     max(4, 0.5 x BDP) for 200 ms and a round.
//!
//! Sources: github.com/google/bbr branch v3, net/ipv4/tcp_bbr.c (module
//! parameters quoted below with their names); draft-ietf-ccwg-bbr-01;
//! Cardwell et al., "BBRv3: Algorithm Bug Fixes and Public Internet
//! Deployment", IETF 117 CCWG slides. Written from those, not copied.
//!
//! The machine is v2alpha's (bbr2.rs): v3 keeps its code structure and changes
//! gains and a few rules. This file holds v3's [`Profile`]; bbr2.rs branches on
//! [`Generation::V3`] where v3's rules differ (full-bw plateau detection and the
//! UP exit, startup inflight_hi, the ECN threshold being strict, ECN cutting
//! only inflight_lo, no ECN bw_hi, ECN reprobe, RTO handling, strict min-RTT).
//!
//! Units as bbr.rs / bbr2.rs: gains in BBR_UNIT (256 = 1.0), bw in
//! packets/µs << 24, RTTs in µs, time on the simulator's ns clock.
//!
//! Deviations from Linux v3 (docs/fidelity.md):
//!   - ECN: Linux uses the ECN logic only on routes flagged as shallow-threshold
//!     ECN (`TCP_ECN_LOW`) and only when min_rtt <= 5 ms (`bbr_ecn_max_rtt_us`).
//!     `bbr3` uses it for every ECN-capable flow at any RTT (as `bbr2`: the lab
//!     setting); [`Bbr2Params::linux`] gives Linux's RTT limit;
//!   - `skb_marked_lost` (per-lost-packet check that finds the packet where loss
//!     crossed 2 % and sets inflight_hi there, `bbr_inflight_hi_from_lost_skb`)
//!     and TLP-repair loss (`bbr_run_loss_probe_recovery`) have no hook here:
//!     loss is judged on each ACK's rate sample (`rs.lost` / `rs.tx_in_flight`),
//!     so inflight_hi is set to the sample's tx_in_flight, not the crossing point;
//!     `bbr_note_loss` (loss round restarted at the first loss) likewise;
//!   - the app-limited fast path (CPU saving), PLB (load balancing) and fast-ACK
//!     mode are not modelled; departure time is "now" (as bbr.rs).

use super::bbr::BBR_UNIT;
use super::bbr2::{Bbr2, Bbr2Params, Generation, Profile, DRAIN_GAIN, PHASE_PACING_GAIN};

/// STARTUP pacing gain 4 ln 2 = 2.77 (`bbr_startup_pacing_gain` = 256 x 277/100 + 1).
pub const STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// STARTUP (and DRAIN) cwnd gain 2.0 (`bbr_startup_cwnd_gain`).
pub const STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// PROBE_BW DOWN pacing gain 0.91 (`bbr_pacing_gain[BBR_BW_PROBE_DOWN]`).
pub const DOWN_PACING_GAIN: u32 = BBR_UNIT * 91 / 100;
/// Extra cwnd gain in PROBE_BW UP: 1 x 1/4 (`bbr_bw_probe_cwnd_gain` = 1), so UP's cwnd gain is 2.25.
pub const UP_CWND_GAIN_EXTRA: u32 = BBR_UNIT / 4;
/// Loss events in a STARTUP recovery round that end STARTUP (`bbr_full_loss_cnt` = 6; v2alpha 8).
pub const FULL_LOSS_CNT: u32 = 6;
/// ECN reprobe: first round's inflight_hi growth 0.5 x inflight_hi (`bbr_ecn_reprobe_gain`).
pub const ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;

/// BBRv3's gains and rules on the shared machine.
pub const V3: Profile = Profile {
    name: "bbr3",
    generation: Generation::V3,
    startup_pacing_gain: STARTUP_PACING_GAIN,
    startup_cwnd_gain: STARTUP_CWND_GAIN,
    drain_gain: DRAIN_GAIN,
    phase_pacing_gain: [PHASE_PACING_GAIN[0], DOWN_PACING_GAIN, PHASE_PACING_GAIN[2], PHASE_PACING_GAIN[3]],
    up_cwnd_gain_extra: UP_CWND_GAIN_EXTRA,
    full_loss_cnt: FULL_LOSS_CNT,
    ecn_reprobe_gain: ECN_REPROBE_GAIN,
};

/// BBRv3 with the lab ECN setting ([`Bbr2Params::default`]).
pub fn new(seed: u64) -> Bbr2 {
    Bbr2::with_profile(seed, V3, Bbr2Params::default())
}

/// BBRv3's registry declaration: v2's machine with [`V3`], the same ECN parameters as `bbr2`.
pub struct Bbr3;

impl super::Cca for Bbr3 {
    type Params = super::bbr2::Bbr2Config;
    const NAME: &'static str = "bbr3";
    const SOURCE: &'static str =
        "BBRv3: google/bbr v3 net/ipv4/tcp_bbr.c; draft-ietf-ccwg-bbr-01 (v2's machine with v3's gains and rules; ECN logic on)";
    fn build(p: &super::bbr2::Bbr2Config, seed: u64) -> Box<dyn super::CongestionControl> {
        let params = Bbr2Params { ecn_enable: p.ecn_enable, ecn_max_rtt_us: p.ecn_max_rtt_ns / 1_000 };
        Box::new(Bbr2::with_profile(seed, V3, params))
    }
}

#[cfg(test)]
mod tests {
    //! What v3 shares with v2 (loss and headroom bounds, PROBE_RTT) is tested on both profiles
    //! in bbr2.rs (`PROFILES`); here what v3 changes.
    use super::*;
    use crate::cc::bbr2::testkit::{bw_10mbit, deliver, probing_up_with_ecn, round_sample, steady_from};
    use crate::cc::bbr2::{Mode, Phase, ECN_FACTOR};
    use crate::cc::testutil::tp;
    use crate::cc::{CaState, CongestionControl, TcpCc};

    /// A BBRv3 in PROBE_BW at 10 Mbit/s, 50 ms min RTT (BDP 41.7 packets).
    fn steady(phase: Phase) -> (Bbr2, TcpCc) {
        steady_from(new(1), phase)
    }

    fn gains(b: &mut Bbr2, mode: Mode, phase: Phase) -> (u32, u32) {
        b.mode = mode;
        b.phase = phase;
        b.update_gains();
        (b.pacing_gain(), b.cwnd_gain())
    }

    #[test]
    fn pacing_and_cwnd_gains_per_phase_are_v3s() {
        // tcp_bbr.c v3: startup 277/100 + 1, cwnd 2; drain 1000/2885, cwnd 2;
        // PROBE_BW UP 5/4 with cwnd 2 + 1/4; DOWN 91/100; CRUISE, REFILL 1; cwnd 2.
        let mut b = new(1);
        assert_eq!(b.name(), "bbr3");
        assert_eq!(gains(&mut b, Mode::Startup, Phase::Up), (710, 512));
        assert!((710.0 / 256.0 - 4.0 * 2f64.ln()).abs() < 0.01, "2.77 = 4 ln 2");
        assert_eq!(gains(&mut b, Mode::Drain, Phase::Up), (88, 512));
        assert!((88.0f64 / 256.0 - 0.35).abs() < 0.01);
        assert_eq!(gains(&mut b, Mode::ProbeBw, Phase::Up), (320, 576), "UP: 1.25, cwnd 2.25");
        assert_eq!(gains(&mut b, Mode::ProbeBw, Phase::Down), (232, 512), "DOWN: 0.91 (v2alpha 0.75)");
        assert_eq!(gains(&mut b, Mode::ProbeBw, Phase::Cruise), (256, 512));
        assert_eq!(gains(&mut b, Mode::ProbeBw, Phase::Refill), (256, 512));
        assert_eq!(gains(&mut b, Mode::ProbeRtt, Phase::Cruise), (256, 256));
        // The v2alpha profile on the same machine keeps its own gains.
        let mut v2 = Bbr2::new(1);
        assert_eq!(gains(&mut v2, Mode::Startup, Phase::Up), (739, 739));
        assert_eq!(gains(&mut v2, Mode::ProbeBw, Phase::Up), (320, 512));
        assert_eq!(gains(&mut v2, Mode::ProbeBw, Phase::Down), (192, 512));
    }

    #[test]
    fn initial_pacing_rate_uses_the_startup_gain_of_2_77() {
        // bbr_init_pacing_rate_from_rtt: 2.77 x init_cwnd / RTT x 99 %.
        let mut b = new(1);
        let mut t = tp();
        t.srtt_ns = 50_000_000;
        b.init(&mut t);
        let expected = 10.0 * 1448.0 / 0.05 * 710.0 / 256.0 * 0.99;
        let got = t.pacing_rate_bytes_per_s as f64;
        assert!((got / expected - 1.0).abs() < 0.01, "{got} vs {expected}");
    }

    #[test]
    fn loss_above_two_percent_in_a_probing_ack_through_cong_control() {
        let (mut b, mut t) = steady(Phase::Up);
        b.bw_probe_samples = true;
        b.inflight_hi = 90;
        t.cwnd = 90;
        deliver(&mut t, 40, 0);
        let mut rs = round_sample(&t, 40, 0, 3);
        rs.tx_in_flight = 50; // 6 % lost
        rs.losses = 3;
        b.cong_control(&mut t, &rs);
        assert!(b.inflight_hi().unwrap() < 90, "inflight_hi cut: {:?}", b.inflight_hi());
        assert!(b.inflight_hi().unwrap() >= 50, "not below tx_in_flight: {:?}", b.inflight_hi());
        // The probe ended: DOWN, and CRUISE at once if in-flight is already low.
        assert!(matches!(b.phase(), Phase::Down | Phase::Cruise), "{:?}", b.phase());
    }

    #[test]
    fn ecn_round_outside_probing_cuts_inflight_lo_by_alpha_over_three_but_not_bw_lo() {
        let (mut b, mut t) = steady(Phase::Cruise);
        b.ecn_eligible = true;
        t.cwnd = 60;
        deliver(&mut t, 40, 40); // alpha stays 1.0
        let rs = round_sample(&t, 40, 40, 0);
        b.cong_control(&mut t, &rs);
        assert_eq!(ECN_FACTOR, 85, "ecn_factor 1/3");
        assert_eq!(b.ecn_cut(), BBR_UNIT - 85);
        assert_eq!(b.inflight_lo(), Some(60 * 171 / 256));
        assert!(t.cwnd <= 40, "cwnd bounded by inflight_lo: {}", t.cwnd);
        assert_eq!(b.bw(), b.max_bw(), "v3 leaves bw_lo alone on ECN");
        // v2alpha on the same input cuts bw_lo too.
        let mut v2 = Bbr2::new(1);
        let (s, mut t2) = steady(Phase::Cruise);
        copy_state(&mut v2, &s);
        v2.ecn_eligible = true;
        t2.cwnd = 60;
        deliver(&mut t2, 40, 40);
        let rs = round_sample(&t2, 40, 40, 0);
        v2.cong_control(&mut t2, &rs);
        assert!(v2.bw() < v2.max_bw());
    }

    fn copy_state(dst: &mut Bbr2, src: &Bbr2) {
        let profile = dst.profile;
        *dst = src.clone();
        dst.profile = profile;
    }

    #[test]
    fn ce_above_half_ends_the_probe_and_exactly_half_does_not() {
        let (mut b, mut t) = probing_up_with_ecn(new(1));
        deliver(&mut t, 40, 20);
        let mut rs = round_sample(&t, 40, 20, 0);
        rs.tx_in_flight = 50;
        assert!(!b.is_inflight_too_high(&rs), "v3: CE must exceed 50 % (20 of 40 is not)");
        rs.delivered_ce = 21;
        assert!(b.is_inflight_too_high(&rs));
        b.handle_inflight_too_high(&t, &rs);
        let target = b.target_inflight(&t);
        assert_eq!(b.inflight_hi(), Some(50u32.max(target * 180 / 256)));
        assert_eq!(b.phase(), Phase::Down);
        assert_eq!(b.bw_hi, u64::MAX, "v3 has no ECN bw_hi cut");
    }

    #[test]
    fn ecn_without_loss_reprobes_at_once_with_half_inflight_hi() {
        let (mut b, t) = steady(Phase::Cruise);
        b.ecn_eligible = true;
        b.inflight_hi = 64;
        b.ecn_in_cycle = true;
        b.loss_in_cycle = false;
        assert!(b.check_time_to_probe_bw(&t), "no wait: reprobe");
        assert_eq!(b.phase(), Phase::Refill);
        // ilog2(0.5 x 64) = 5: the first UP round grows inflight_hi by 2^5 = 32.
        assert_eq!(b.bw_probe_up_rounds, 5);
        // With loss in the cycle: wait for the clock as usual.
        let (mut c, t) = steady(Phase::Cruise);
        c.ecn_eligible = true;
        c.inflight_hi = 64;
        c.ecn_in_cycle = true;
        c.loss_in_cycle = true;
        assert!(!c.check_time_to_probe_bw(&t));
        let mut r = t.clone();
        r.ca_state = CaState::Recovery;
        c.loss_in_cycle = false;
        assert!(!c.check_time_to_probe_bw(&r), "only in Open state");
    }

    #[test]
    fn probe_up_ends_on_a_bw_plateau_not_at_1_25_bdp() {
        let (mut b, mut t) = steady(Phase::Refill);
        t.cwnd = 200;
        t.is_cwnd_limited = false;
        let bw_pkts_per_round = 42;
        // REFILL -> UP at the next round.
        deliver(&mut t, bw_pkts_per_round, 0);
        let mut rs = round_sample(&t, bw_pkts_per_round, 0, 0);
        rs.prior_in_flight = 60; // > 1.25 BDP: v2alpha would stop UP after min_rtt
        b.cong_control(&mut t, &rs);
        assert_eq!(b.phase(), Phase::Up);
        // Three rounds at the same delivery rate (no 25 % growth): plateau.
        for round in 1..=3 {
            deliver(&mut t, bw_pkts_per_round, 0);
            let mut rs = round_sample(&t, bw_pkts_per_round, 0, 0);
            rs.prior_in_flight = 60;
            b.cong_control(&mut t, &rs);
            if round < 3 {
                assert_eq!(b.phase(), Phase::Up, "round {round}: still probing");
            }
        }
        assert_eq!(b.phase(), Phase::Down, "plateau ends UP");
    }

    #[test]
    fn startup_ends_after_three_rounds_without_25_percent_growth() {
        let mut b = new(1);
        let mut t = tp();
        t.srtt_ns = 50_000_000;
        t.min_rtt_ns = 50_000_000;
        b.init(&mut t);
        t.delivered = 1;
        b.next_rtt_delivered = 1;
        let mut per_round = 10u32;
        for _ in 0..4 {
            deliver(&mut t, per_round, 0);
            let rs = round_sample(&t, per_round, 0, 0);
            b.cong_control(&mut t, &rs);
            per_round *= 2;
        }
        assert_eq!(b.mode(), Mode::Startup, "doubling: still in STARTUP");
        per_round /= 2; // the last rate again: no growth
        for round in 1..=3 {
            assert_eq!(b.mode(), Mode::Startup, "{round} flat rounds");
            deliver(&mut t, per_round, 0);
            let rs = round_sample(&t, per_round, 0, 0);
            b.cong_control(&mut t, &rs);
        }
        assert!(b.full_bw_reached());
        assert_ne!(b.mode(), Mode::Startup);
    }

    #[test]
    fn startup_exits_on_six_loss_events_in_a_lossy_recovery_round() {
        assert_eq!(FULL_LOSS_CNT, 6);
        let mut b = new(1);
        let mut t = tp();
        b.init(&mut t);
        b.min_rtt_us = 50_000;
        b.max_bw = [bw_10mbit(), bw_10mbit()];
        t.delivered = 1000;
        t.ca_state = CaState::Recovery;
        b.loss_round_delivered = u64::MAX; // no round end while losses come in
        let mut rs = round_sample(&t, 40, 0, 10);
        rs.losses = 1;
        rs.tx_in_flight = 100;
        rs.prior_delivered = 0;
        for _ in 0..5 {
            b.check_loss_too_high_in_startup(&t, &rs);
        }
        b.loss_round_start = true;
        b.check_loss_too_high_in_startup(&t, &rs);
        assert!(b.full_bw_reached(), "6 loss events and 10 % loss end STARTUP");
        assert!(b.inflight_hi().is_some());
    }

    #[test]
    fn startup_exit_on_loss_keeps_inflight_hi_at_least_the_rounds_delivered_volume() {
        // v3 bbr_handle_queue_too_high_in_startup: inflight_hi = max(BDP, inflight_latest).
        let mut b = new(1);
        let mut t = tp();
        b.init(&mut t);
        b.min_rtt_us = 50_000;
        b.max_bw = [bw_10mbit(), bw_10mbit()]; // BDP ~42 packets
        b.inflight_latest = 300;
        b.handle_queue_too_high_in_startup(&t);
        assert_eq!(b.inflight_hi(), Some(300));
        b.inflight_latest = 10;
        b.handle_queue_too_high_in_startup(&t);
        assert_eq!(b.inflight_hi(), Some(b.inflight(&t, b.max_bw(), BBR_UNIT)));
    }

    #[test]
    fn rto_keeps_the_larger_of_cwnd_and_prior_cwnd_as_inflight_lo() {
        let (mut b, mut t) = steady(Phase::Cruise);
        b.prior_cwnd = 30;
        t.cwnd = 50;
        b.set_state(&mut t, CaState::Loss);
        assert_eq!(b.inflight_lo(), Some(50));
        assert!(!b.full_bw_now);
    }
}
