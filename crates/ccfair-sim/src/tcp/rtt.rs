//! RTT estimation and retransmission timeout.
//!
//! RFC 6298 section 2: on the first sample R, SRTT = R, RTTVAR = R/2; then
//! RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, SRTT = 7/8 SRTT + 1/8 R.
//! Linux (net/ipv4/tcp_input.c `tcp_set_rto`) computes
//! RTO = SRTT + max(4 RTTVAR, rto_min) with rto_min = 200 ms (TCP_RTO_MIN),
//! instead of RFC 6298's max(1 s, SRTT + 4 RTTVAR); we follow Linux.
//! The initial RTO is 1 s (RFC 6298 2.1, Linux TCP_TIMEOUT_INIT); backoff
//! doubles it per expiry (RFC 6298 5.5) up to TCP_RTO_MAX = 120 s.
//! rto_min is per connection as in Linux (`ip route ... rto_min`,
//! RTAX_RTO_MIN, read by `tcp_rto_min()`); the default is TCP_RTO_MIN.
//!
//! min_rtt (`tcp_min_rtt()`, used for RACK's reordering window, the rate
//! sample's interval check and BBR's initial min_rtt) is Linux's windowed
//! running min: `tcp_update_rtt_min` feeds every RTT sample to
//! `minmax_running_min` (lib/win_minmax.c, Kathleen Nichols' algorithm) with
//! a window of `sysctl_tcp_min_rtt_wlen` = 300 s ([`MinRttFilter`]). Linux
//! also skips a sample above the current min when the ACK was probably
//! delayed (FLAG_ACK_MAYBE_DELAYED: one runt segment acked); we feed every
//! sample, which only matters once the best sample is 300 s old.
//!
//! Which RTT an ACK gives (tcp_input.c `tcp_clean_rtx_queue`,
//! `tcp_ack_update_rtt`): Karn's rule (RFC 6298 section 3) drops the send-time
//! RTTs of an ACK whose cumulative part frees any segment ever retransmitted
//! (FLAG_RETRANS_DATA_ACKED); without one (nor a SACK RTT) an ACK that
//! advances snd_una takes the RTT from its echoed timestamp (RFC 7323 section
//! 4, `tcp_rtt_tsopt_us`: 1 ms ticks, at least one), for srtt, min_rtt and
//! the CCA's `ca_rtt_us` alike ([`tsopt_rtt_ns`]). The oldest segment's RTT
//! (`seq_rtt_us`) feeds srtt, the newest's (`ca_rtt_us`) min_rtt. The
//! receiver echoes the newest TSval an ACK covers, not the first one since
//! its last ACK as Linux's `tcp_replace_ts_recent` (docs/fidelity.md).

use crate::tcp::receiver::TS_TICK_NS;

/// Linux TCP_RTO_MIN.
pub const RTO_MIN_NS: u64 = 200_000_000;
/// Linux TCP_RTO_MAX.
pub const RTO_MAX_NS: u64 = 120_000_000_000;
/// RFC 6298 / Linux TCP_TIMEOUT_INIT.
pub const RTO_INIT_NS: u64 = 1_000_000_000;

/// Linux `sysctl_tcp_min_rtt_wlen` default: 300 s.
pub const MIN_RTT_WLEN_NS: u64 = 300_000_000_000;

/// Linux's windowed running min of the RTT (`tp->rtt_min`, lib/win_minmax.c
/// `minmax_running_min`): the best, second-best and third-best samples from
/// successively later sub-windows, so the min over the last `MIN_RTT_WLEN_NS`
/// is tracked in O(1). Time in ns (Linux: jiffies).
#[derive(Debug, Clone, Copy)]
pub struct MinRttFilter {
    /// (time, value) of the three choices; value u64::MAX = no sample yet.
    s: [(u64, u64); 3],
}

impl Default for MinRttFilter {
    fn default() -> Self {
        MinRttFilter { s: [(0, u64::MAX); 3] }
    }
}

impl MinRttFilter {
    /// The windowed min, ns (u64::MAX before the first sample).
    pub fn get(&self) -> u64 {
        self.s[0].1
    }

    /// Add sample `v_ns` taken at `t_ns`; return the windowed min. (Inline:
    /// the sender calls it on every ACK with an RTT, and nearly every call
    /// takes the first test's return; the rest is out of line.)
    #[inline(always)]
    pub fn update(&mut self, t_ns: u64, v_ns: u64) -> u64 {
        let win = MIN_RTT_WLEN_NS;
        // Nearly every sample changes nothing: above all three choices, with
        // the best one less than a quarter window old, so no choice ages (the
        // choices' times are ordered, s[0] the oldest, for a clock that does
        // not go back). The general code below gives the same.
        if v_ns > self.s[2].1 && t_ns.saturating_sub(self.s[0].0) <= win / 4 {
            return self.s[0].1;
        }
        self.update_choices(t_ns, v_ns)
    }

    /// `minmax_running_min` in full.
    #[inline(never)]
    fn update_choices(&mut self, t_ns: u64, v_ns: u64) -> u64 {
        let win = MIN_RTT_WLEN_NS;
        let val = (t_ns, v_ns);
        // A new overall min, or nothing left in the window: start afresh.
        if v_ns <= self.s[0].1 || t_ns.saturating_sub(self.s[2].0) > win {
            self.s = [val; 3];
            return v_ns;
        }
        if v_ns <= self.s[1].1 {
            self.s[1] = val;
            self.s[2] = val;
        } else if v_ns <= self.s[2].1 {
            self.s[2] = val;
        }
        // minmax_subwin_update: age the choices.
        let dt = t_ns.saturating_sub(self.s[0].0);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if t_ns.saturating_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
}

/// Linux `tcp_rtt_tsopt_us(tp, 1)`: the RTT an ACK's echoed timestamp gives
/// at `now_ns`, in whole ticks of the 1 ms timestamp clock (TCP_TS_HZ = 1000,
/// `tcp_time_stamp_ts` of the ACK's arrival minus the echoed TSval, both
/// truncated to ms), at least one tick; ns.
/// Both times are on the host's clock (`TcpCc::host_clock_ns`: the run's time plus the
/// host's clock phase), whose ms the timestamp clock counts.
pub fn tsopt_rtt_ns(now_ns: u64, ts_ecr_ns: u64) -> u64 {
    let ticks = (now_ns / TS_TICK_NS).saturating_sub(ts_ecr_ns / TS_TICK_NS);
    ticks.max(1) * TS_TICK_NS
}

#[derive(Debug, Clone)]
pub struct RttEstimator {
    /// Smoothed RTT, ns (0 = no sample yet).
    pub srtt_ns: u64,
    /// RTT variation, ns.
    pub rttvar_ns: u64,
    /// Lower bound of the variance term (Linux `tcp_rto_min()`), ns.
    pub rto_min_ns: u64,
    /// Windowed min RTT (Linux `tp->rtt_min`).
    pub min_rtt: MinRttFilter,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator::with_rto_min(RTO_MIN_NS)
    }
}

impl RttEstimator {
    /// An estimator whose RTO uses `rto_min_ns` instead of TCP_RTO_MIN (route `rto_min`).
    pub fn with_rto_min(rto_min_ns: u64) -> RttEstimator {
        RttEstimator { srtt_ns: 0, rttvar_ns: 0, rto_min_ns, min_rtt: MinRttFilter::default() }
    }

    pub fn update(&mut self, sample_ns: u64) {
        let r = sample_ns.max(1);
        if self.srtt_ns == 0 {
            self.srtt_ns = r;
            self.rttvar_ns = r / 2;
        } else {
            let err = self.srtt_ns.abs_diff(r);
            self.rttvar_ns = (3 * self.rttvar_ns + err) / 4;
            self.srtt_ns = (7 * self.srtt_ns + r) / 8;
        }
    }

    /// Current RTO before backoff, ns.
    pub fn rto_ns(&self) -> u64 {
        if self.srtt_ns == 0 {
            return RTO_INIT_NS;
        }
        (self.srtt_ns + (4 * self.rttvar_ns).max(self.rto_min_ns)).min(RTO_MAX_NS)
    }

    /// RTO after `backoff` expiries, ns (RFC 6298 5.5, capped at 120 s).
    pub fn backed_off_rto_ns(&self, backoff: u32) -> u64 {
        let base = self.rto_ns();
        if backoff == 0 {
            return base; // already capped (every ACK's timer)
        }
        let shift = backoff.min(20);
        base.saturating_mul(1u64 << shift).min(RTO_MAX_NS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn a_timestamp_rtt_counts_the_ms_ticks_of_the_hosts_clock() {
        // tcp_rtt_tsopt_us: whole ms of tcp_clock_ns() at the ACK minus the echoed TSval's.
        // Sent at 0.5 ms, ACKed at 10.3 ms (9.8 ms later): 10 ticks at phase 0 (0 and 10),
        // 9 at phase 0.6 ms (the host reads 1.1 and 10.9 ms), 10 at 0.8 ms (1.3 and 11.1).
        let (sent, acked) = (500_000, 10_300_000);
        let at = |phase: u64| tsopt_rtt_ns(acked + phase, sent + phase);
        assert_eq!((at(0), at(600_000), at(800_000)), (10_000_000, 9_000_000, 10_000_000));
    }

    #[test]
    fn min_rtt_is_the_min_over_the_last_300_s_as_linux_tcp_min_rtt_wlen() {
        let mut f = MinRttFilter::default();
        assert_eq!(f.get(), u64::MAX);
        assert_eq!(f.update(0, 50_000_000), 50_000_000);
        // Larger samples every second: the 50 ms minimum holds for the whole 300 s window...
        for t in 1..=300 {
            assert_eq!(f.update(t * S, 80_000_000 + t), 50_000_000, "at {t} s");
        }
        // ...and is forgotten after it; the best later sample takes over (sub-window choices).
        let after = f.update(301 * S, 90_000_000);
        assert!((80_000_000..90_000_000).contains(&after), "{after}");
        // A new minimum is taken at once.
        assert_eq!(f.update(302 * S, 40_000_000), 40_000_000);
    }

    #[test]
    fn min_rtt_shortcut_gives_what_the_full_running_min_gives() {
        // `update`'s no-change test against `update_choices` alone, sample by
        // sample (state and result), over increasing times that cross the
        // quarter, half and whole window, with values around the min.
        let (mut fast, mut full) = (MinRttFilter::default(), MinRttFilter::default());
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut t = 0u64;
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            t += x % (if i % 1000 == 0 { 200 * S } else { S / 2 });
            let v = 40_000_000 + (x >> 20) % 60_000_000;
            assert_eq!(fast.update(t, v), full.update_choices(t, v), "sample {i}");
            assert_eq!(fast.s, full.s, "sample {i}");
        }
    }

    #[test]
    fn min_rtt_forgets_everything_when_no_sample_is_left_in_the_window() {
        let mut f = MinRttFilter::default();
        f.update(0, 50_000_000);
        assert_eq!(f.update(400 * S, 70_000_000), 70_000_000);
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = RttEstimator::default();
        assert_eq!(e.rto_ns(), RTO_INIT_NS);
        e.update(100_000_000);
        assert_eq!(e.srtt_ns, 100_000_000);
        assert_eq!(e.rttvar_ns, 50_000_000);
        // Linux: srtt + max(4*rttvar, 200 ms) = 100 + 200 = 300 ms.
        assert_eq!(e.rto_ns(), 300_000_000);
    }

    #[test]
    fn steady_rtt_converges_to_srtt_plus_rto_min() {
        let mut e = RttEstimator::default();
        for _ in 0..200 {
            e.update(50_000_000);
        }
        assert_eq!(e.srtt_ns, 50_000_000);
        assert_eq!(e.rto_ns(), 250_000_000);
    }

    #[test]
    fn rfc6298_smoothing_constants() {
        let mut e = RttEstimator::default();
        e.update(80);
        e.update(160);
        // RTTVAR = 3/4*40 + 1/4*|80-160| = 50; SRTT = 7/8*80 + 1/8*160 = 90.
        assert_eq!(e.rttvar_ns, 50);
        assert_eq!(e.srtt_ns, 90);
    }

    #[test]
    fn backoff_doubles_and_caps_at_120s() {
        let mut e = RttEstimator::default();
        e.update(50_000_000);
        let base = e.rto_ns();
        assert_eq!(e.backed_off_rto_ns(0), base);
        assert_eq!(e.backed_off_rto_ns(1), 2 * base);
        assert_eq!(e.backed_off_rto_ns(3), 8 * base);
        assert_eq!(e.backed_off_rto_ns(30), RTO_MAX_NS);
    }

    #[test]
    fn route_rto_min_replaces_the_200ms_floor() {
        // Linux tcp_set_rto with `ip route ... rto_min 50ms`: srtt + max(4 rttvar, 50 ms).
        let mut e = RttEstimator::with_rto_min(50_000_000);
        for _ in 0..200 {
            e.update(50_000_000);
        }
        assert_eq!(e.rto_ns(), 100_000_000);
        assert_eq!(RttEstimator::default().rto_min_ns, RTO_MIN_NS);
    }
}
