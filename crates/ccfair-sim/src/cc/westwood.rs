//! TCP Westwood+ (Mascolo et al.), modelled on Linux `tcp_westwood.c`.
//!
//! Algorithm (S. Mascolo, C. Casetti, M. Gerla, M. Y. Sanadidi, R. Wang,
//! "TCP Westwood: bandwidth estimation for enhanced transport over wireless
//! links", ACM MobiCom 2001; L. A. Grieco, S. Mascolo, "Performance
//! evaluation and comparison of Westwood+, New Reno, and Vegas TCP
//! congestion control", ACM CCR 34(2), 2004 — the "+" variant):
//!   - growth is Reno's (slow start, +1 per window);
//!   - the sender estimates the bandwidth it gets: once per RTT (but at least
//!     every HZ/20) the bytes ACKed in that interval over its length give a
//!     sample `b_k`; two cascaded 7/8 low-pass filters smooth it
//!     (`bw_ns_est = (7 bw_ns_est + b_k) / 8`, `bw_est = (7 bw_est + bw_ns_est) / 8`);
//!   - after a loss, instead of halving, the sender sets
//!     `ssthresh = max(BWE * RTT_min / MSS, 2)` — the window that just fills
//!     the pipe at the measured rate, draining the queue — and on leaving
//!     recovery `cwnd = ssthresh` (Linux `CA_EVENT_COMPLETE_CWR`); after an
//!     RTO only ssthresh is set and RTT_min restarts from the next sample;
//!   - during recovery the sender reduces cwnd towards Reno's cwnd/2 (the
//!     `ssthresh` hook is Reno's), and Westwood's value is applied at the end.
//!
//! Sources: Mascolo et al. 2001; Grieco & Mascolo 2004; Linux
//! net/ipv4/tcp_westwood.c (S. Hemminger, A. Dell'Aera).
//! Constants: minimum sampling interval `RTT_MIN_WIN_JIFFIES` = HZ/20
//! (48 ms at HZ 250; parameter `rtt_min_win`, [`WestwoodConfig`]), initial RTT/RTT_min 20 s, filter gains 7/8, jiffy
//! clock at the kernel's HZ (250); the bandwidth is in payload bytes per jiffy, RTTs in jiffies
//! (`usecs_to_jiffies`, rounded up).
//! Simplifications: Linux counts ACKed bytes in `in_ack_event` from the
//! cumulative ACK, with dupacks counted as one MSS each and subtracted again
//! when the cumulative ACK jumps (`westwood_acked_count`). The trait has no
//! `in_ack_event`; we count newly delivered (ACKed or SACKed) packets x MSS
//! in `pkts_acked` (every ACK that delivers data; our receiver SACKs every
//! out-of-order segment, so this equals Linux's dupack accounting), doing
//! the window check first and the RTT update last, in Linux's order.

use super::{jiffies, usecs_to_jiffies, AckSample, CaEvent, CongestionControl, TcpCc};

/// Kernel tick rate: the reference kernel's CONFIG_HZ (cc/mod.rs `KERNEL_HZ`; the BPF port reads the
/// running kernel's, testbed/bpf/ccfair_tcp.h), jiffies per second.
const HZ: u64 = super::KERNEL_HZ;
/// Bandwidth samples span at least this, jiffies (Linux `TCP_WESTWOOD_RTT_MIN` = HZ/20).
pub const RTT_MIN_WIN_JIFFIES: u64 = HZ / 20;
/// Initial RTT and RTT_min, jiffies (Linux `TCP_WESTWOOD_INIT_RTT` = 20 s).
const INIT_RTT_JIFFIES: u64 = 20 * HZ;
/// Minimum ssthresh/cwnd from the estimate, packets.
const MIN_WINDOW_PKTS: u32 = 2;

#[derive(Debug, Clone)]
pub struct Westwood {
    /// Minimum bandwidth-sampling interval, jiffies (parameter `rtt_min_win`).
    rtt_min_win_j: u64,
    /// First filter stage, bytes per jiffy.
    bw_ns_est: u64,
    /// Bandwidth estimate (second stage), bytes per jiffy.
    bw_est: u64,
    /// Start of the current sampling interval, jiffies.
    rtt_win_sx_j: u64,
    /// Bytes ACKed in the current interval.
    bk: u64,
    /// `tp.delivered` already counted.
    counted_delivered: u64,
    /// Latest RTT sample, jiffies.
    rtt_j: u64,
    /// Minimum RTT, jiffies.
    rtt_min_j: u64,
    /// No ACK seen yet (the first ACK's bytes are not counted, as in Linux).
    first_ack: bool,
    /// Take the next RTT as the new RTT_min (after init / RTO).
    reset_rtt_min: bool,
}

default_is!(Westwood = Westwood::with_params(&WestwoodConfig::default()));

fn filter(a: u64, b: u64) -> u64 {
    (7 * a + b) >> 3
}

impl Westwood {
    pub fn with_params(p: &WestwoodConfig) -> Westwood {
        Westwood {
            rtt_min_win_j: jiffies(p.rtt_min_win_ns, HZ),
            bw_ns_est: 0,
            bw_est: 0,
            rtt_win_sx_j: 0,
            bk: 0,
            counted_delivered: 0,
            rtt_j: INIT_RTT_JIFFIES,
            rtt_min_j: INIT_RTT_JIFFIES,
            first_ack: true,
            reset_rtt_min: true,
        }
    }

    /// Bandwidth estimate, payload bytes per second.
    pub fn bwe_bytes_per_s(&self) -> u64 {
        self.bw_est * HZ
    }

    /// `westwood_filter`: fold the interval's sample into the estimate.
    fn filter(&mut self, delta_j: u64) {
        let sample = self.bk / delta_j.max(1);
        if self.bw_ns_est == 0 && self.bw_est == 0 {
            self.bw_ns_est = sample;
            self.bw_est = sample;
        } else {
            self.bw_ns_est = filter(self.bw_ns_est, sample);
            self.bw_est = filter(self.bw_est, self.bw_ns_est);
        }
    }

    /// `westwood_update_window`: close the interval if an RTT (>= HZ/20) passed.
    fn update_window(&mut self, tp: &TcpCc) {
        let now_j = jiffies(tp.host_clock_ns(tp.now_ns), HZ);
        if self.first_ack {
            self.counted_delivered = tp.delivered;
            self.first_ack = false;
        }
        let delta = now_j.saturating_sub(self.rtt_win_sx_j);
        if self.rtt_j > 0 && delta > self.rtt_j.max(self.rtt_min_win_j) {
            self.filter(delta);
            self.bk = 0;
            self.rtt_win_sx_j = now_j;
        }
    }

    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min_j = self.rtt_j;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min_j = self.rtt_min_j.min(self.rtt_j);
        }
    }

    /// `tcp_westwood_bw_rttmin`: BWE x RTT_min in packets, at least 2.
    pub fn bw_rttmin(&self, tp: &TcpCc) -> u32 {
        let pkts = self.bw_est * self.rtt_min_j / u64::from(tp.mss.max(1));
        u32::try_from(pkts).unwrap_or(u32::MAX).max(MIN_WINDOW_PKTS)
    }
}

impl CongestionControl for Westwood {
    hooks!(pkts_acked);
    fn name(&self) -> &'static str {
        "westwood"
    }

    fn init(&mut self, tp: &mut TcpCc) {
        *self = Westwood { rtt_min_win_j: self.rtt_min_win_j, ..Westwood::default() };
        self.rtt_win_sx_j = jiffies(tp.host_clock_ns(tp.now_ns), HZ);
        self.counted_delivered = tp.delivered;
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        (tp.cwnd / 2).max(2)
    }

    fn pkts_acked(&mut self, tp: &mut TcpCc, sample: &AckSample) {
        // Linux in_ack_event (runs before pkts_acked): window, bytes, RTT_min.
        self.update_window(tp);
        let newly = tp.delivered.saturating_sub(self.counted_delivered);
        self.bk += newly * u64::from(tp.mss);
        self.counted_delivered = tp.delivered;
        self.update_rtt_min();
        // Linux pkts_acked: remember this ACK's RTT.
        if sample.rtt_ns > 0 {
            self.rtt_j = usecs_to_jiffies(sample.rtt_ns as u64);
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CaEvent) {
        match ev {
            CaEvent::CompleteCwr => {
                tp.ssthresh = self.bw_rttmin(tp);
                tp.cwnd = tp.ssthresh;
            }
            CaEvent::Loss => {
                tp.ssthresh = self.bw_rttmin(tp);
                self.reset_rtt_min = true;
            }
            _ => {}
        }
    }
}

crate::declare_cca! {
    /// Westwood+'s parameters: Linux `tcp_westwood.c` constants (not module parameters there), defaults = Linux's.
    pub struct WestwoodConfig {
        /// Shortest bandwidth-sampling interval: a sample spans max(RTT, this) (Linux `TCP_WESTWOOD_RTT_MIN` = HZ/20: 48 ms at HZ 250; whole ms).
        rtt_min_win_ns: u64 = RTT_MIN_WIN_JIFFIES * (1_000_000_000 / HZ), Range::closed(1_000_000.0, 10_000_000_000.0);
    }
    cca Westwood = "westwood", "Westwood+: Mascolo et al. 2001, Grieco & Mascolo 2004; Linux net/ipv4/tcp_westwood.c";
    build = |p, _seed| Westwood::with_params(p);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{started, tp};

    const MS: u64 = 1_000_000;

    /// An RTT of `ms` in jiffies as Linux measures it (`usecs_to_jiffies`, rounded up).
    fn rtt_j(ms: u64) -> u64 {
        (ms * HZ).div_ceil(1000)
    }

    /// Deliver one packet every `gap_ns` for `dur_ns` with the given RTT.
    fn feed(w: &mut Westwood, t: &mut TcpCc, gap_ns: u64, dur_ns: u64, rtt_ns: u64) {
        let end = t.now_ns + dur_ns;
        while t.now_ns < end {
            t.now_ns += gap_ns;
            t.delivered += 1;
            w.pkts_acked(t, &AckSample { pkts_acked: 1, rtt_ns: rtt_ns as i64, in_flight: t.cwnd });
        }
    }

    #[test]
    fn estimate_converges_to_the_delivery_rate() {
        // One 1448-byte packet per 1.2 ms = 1.207 MB/s (9.65 Mbit/s payload).
        let (mut w, mut t) = started::<Westwood>();
        feed(&mut w, &mut t, 1_200_000, 3_000 * MS, 50 * MS);
        let want = 1448.0 / 1.2e-3;
        let got = w.bwe_bytes_per_s() as f64;
        assert!((got - want).abs() / want < 0.03, "BWE {got} B/s vs {want}");
    }

    #[test]
    fn ssthresh_after_recovery_is_bwe_times_rtt_min_over_mss() {
        let (mut w, mut t) = started::<Westwood>();
        feed(&mut w, &mut t, 1_200_000, 3_000 * MS, 50 * MS);
        // Queueing raises the RTT to 80 ms, RTT_min stays 50 ms.
        feed(&mut w, &mut t, 1_200_000, 1_000 * MS, 80 * MS);
        t.cwnd = 70;
        assert_eq!(w.ssthresh(&t), 35); // Reno target during recovery
        w.cwnd_event(&mut t, CaEvent::CompleteCwr);
        // 1.207 MB/s x RTT_min / 1448 B, RTT_min 50 ms in whole jiffies (13: 52 ms):
        // 43.3 packets (bytes per jiffy truncate).
        assert_eq!(w.rtt_min_j, rtt_j(50));
        assert!((42..=44).contains(&t.cwnd), "cwnd {}", t.cwnd);
        assert_eq!(t.ssthresh, t.cwnd);
        assert_eq!(u64::from(w.bw_rttmin(&t)), w.bw_est * rtt_j(50) / 1448);
    }

    #[test]
    fn rto_sets_ssthresh_only_and_restarts_rtt_min() {
        let (mut w, mut t) = started::<Westwood>();
        feed(&mut w, &mut t, 1_200_000, 3_000 * MS, 50 * MS);
        feed(&mut w, &mut t, 1_200_000, 10 * MS, 90 * MS);
        assert_eq!(w.rtt_min_j, rtt_j(50));
        t.cwnd = 1;
        w.cwnd_event(&mut t, CaEvent::Loss);
        assert!((42..=44).contains(&t.ssthresh));
        assert_eq!(t.cwnd, 1);
        // RTT_min restarts from the latest sample (90 ms) and follows new ones.
        feed(&mut w, &mut t, 1_200_000, 10 * MS, 70 * MS);
        assert_eq!(w.rtt_min_j, rtt_j(70));
    }

    #[test]
    fn no_estimate_gives_the_two_packet_floor() {
        let t = tp();
        assert_eq!(Westwood::default().bw_rttmin(&t), 2);
    }

    #[test]
    fn longer_sampling_interval_tracks_a_rate_change_more_slowly() {
        // RTT 5 ms < the interval: samples span rtt_min_win. The rate doubles
        // for 300 ms: 50 ms intervals fold ~6 samples into the estimate, 200 ms ones ~1.
        let after_step = |rtt_min_win_ns: u64| {
            let mut t = tp();
            let mut w = Westwood::with_params(&WestwoodConfig { rtt_min_win_ns });
            w.init(&mut t);
            feed(&mut w, &mut t, 1_200_000, 3_000 * MS, 5 * MS);
            feed(&mut w, &mut t, 600_000, 300 * MS, 5 * MS);
            w.bwe_bytes_per_s()
        };
        let (fast, slow) = (after_step(50 * MS), after_step(200 * MS));
        let before = 1448.0 / 1.2e-3;
        assert!(fast as f64 > 1.1 * before, "50 ms interval: {fast} B/s vs {before}");
        assert!(slow < fast, "200 ms interval: {slow} B/s vs {fast}");
    }
}
