//! TCP Vegas: delay-based congestion avoidance.
//!
//! Algorithm (Brakmo & Peterson 1995 as implemented in Linux `tcp_vegas.c`):
//!   - baseRTT = the smallest RTT ever seen (propagation-delay estimate);
//!     within each RTT the smallest RTT sample `min_rtt` is kept;
//!   - once per RTT (when the ACK passes the `snd_nxt` remembered at the start
//!     of the round) compute, in packets,
//!         diff = cwnd x (min_rtt - baseRTT) / baseRTT
//!     i.e. the number of this flow's packets queued at the bottleneck;
//!   - congestion avoidance: diff > beta -> cwnd -= 1; diff < alpha ->
//!     cwnd += 1; otherwise hold;
//!   - slow start (Linux: Reno slow start on every ACK) ends once diff >
//!     gamma: cwnd = min(cwnd, target_cwnd + 1) with target_cwnd = cwnd x
//!     baseRTT / min_rtt, and ssthresh = min(ssthresh, cwnd);
//!   - fewer than 3 RTT samples in a round -> Reno growth for that round
//!     (delayed ACKs make the samples unreliable);
//!   - Vegas runs only in the Open state; in Recovery/Loss it is disabled and
//!     Reno's halving applies (`tcp_reno_ssthresh`);
//!   - a send with nothing in flight (CA_EVENT_TX_START: after idle, and after
//!     an RTO, when every outstanding segment is marked lost) re-initialises
//!     Vegas, baseRTT included (`tcp_vegas_cwnd_event` -> `tcp_vegas_init`).
//!
//! Sources: L. Brakmo, L. Peterson, "TCP Vegas: End to End Congestion
//! Avoidance on a Global Internet", IEEE JSAC 13(8), 1995; Linux 6.18
//! net/ipv4/tcp_vegas.c (alpha = 2, beta = 4, gamma = 1 packets;
//! `tcp_vegas_ssthresh` = min(ssthresh, cwnd): kernels before the
//! `tcp_snd_cwnd()` accessors used cwnd - 1).
//! Written from those descriptions, not copied.
//!
//! Simplifications: RTTs are exact ns (Linux: µs, `vrtt = rtt_us + 1`);
//! `tcp_current_ssthresh` (ssthresh = max(ssthresh, 3/4 cwnd)) is applied as in
//! Linux. The paper's "double every other RTT" slow start is not used (Linux
//! does not use it either).

use super::{reno, CaEvent, CaState, CongestionControl, TcpCc};

/// Lower bound on queued packets: below it, cwnd grows by 1 per RTT.
pub const ALPHA_PKTS: u64 = 2;
/// Upper bound on queued packets: above it, cwnd shrinks by 1 per RTT.
pub const BETA_PKTS: u64 = 4;
/// Slow start ends when more than this many packets are queued.
pub const GAMMA_PKTS: u64 = 1;
/// Minimum cwnd Vegas sets, packets (Linux: 2).
pub const MIN_CWND_PKTS: u32 = 2;
/// A round needs more than this many RTT samples to be judged (Linux: `cntRTT <= 2`).
pub const MIN_SAMPLES_PER_ROUND: u32 = 2;

/// Per-connection Vegas state (Linux `struct vegas`).
#[derive(Debug, Clone)]
pub struct Vegas {
    /// Whether Vegas logic is active (Open state).
    doing_vegas_now: bool,
    /// Round marker: `snd_nxt` at the start of this round.
    beg_snd_nxt: u64,
    /// RTT samples in this round.
    cnt_rtt: u32,
    /// Smallest RTT sample in this round, ns.
    min_rtt_ns: u64,
    /// Smallest RTT ever seen, ns.
    base_rtt_ns: u64,
    /// Thresholds on the packets queued (Linux `alpha`, `beta`, `gamma`).
    alpha_pkts: u64,
    beta_pkts: u64,
    gamma_pkts: u64,
}

impl Default for Vegas {
    fn default() -> Self {
        Vegas::new()
    }
}

impl Vegas {
    pub fn new() -> Vegas {
        Vegas {
            doing_vegas_now: true,
            beg_snd_nxt: 0,
            cnt_rtt: 0,
            min_rtt_ns: u64::MAX,
            base_rtt_ns: u64::MAX,
            alpha_pkts: ALPHA_PKTS,
            beta_pkts: BETA_PKTS,
            gamma_pkts: GAMMA_PKTS,
        }
    }

    fn enable(&mut self, tp: &TcpCc) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt_ns = u64::MAX;
    }

    fn disable(&mut self) {
        self.doing_vegas_now = false;
    }

    /// Linux 6.18 `tcp_vegas_ssthresh`: at most the current window.
    fn vegas_ssthresh(tp: &TcpCc) -> u32 {
        tp.ssthresh.min(tp.cwnd)
    }

    /// Base RTT estimate, ns (u64::MAX before any sample).
    pub fn base_rtt_ns(&self) -> u64 {
        self.base_rtt_ns
    }

    /// Once-per-RTT adjustment (the body of `tcp_vegas_cong_avoid`'s round branch).
    fn adjust(&mut self, tp: &mut TcpCc, acked: u32) {
        let rtt = self.min_rtt_ns;
        let base = self.base_rtt_ns;
        let cwnd = tp.cwnd as u64;
        // Packets queued: cwnd x (rtt - base) / base.
        let diff = cwnd * (rtt - base) / base;
        #[cfg(feature = "vegas-trace")]
        eprintln!("vg {:p} {} {} {} {} {} {}", self as *const Vegas, tp.now_ns, tp.cwnd, self.cnt_rtt, base / 1000, rtt / 1000, diff);
        if diff > self.gamma_pkts && tp.in_slow_start() {
            // Leaving slow start: go to the rate the path actually delivers.
            let target_cwnd = (cwnd * base / rtt) as u32;
            tp.cwnd = tp.cwnd.min(target_cwnd + 1);
            tp.ssthresh = Self::vegas_ssthresh(tp);
        } else if tp.in_slow_start() {
            tp.slow_start(acked);
        } else if diff > self.beta_pkts {
            tp.cwnd -= 1;
            tp.ssthresh = Self::vegas_ssthresh(tp);
        } else if diff < self.alpha_pkts {
            tp.cwnd += 1;
        }
        tp.cwnd = tp.cwnd.clamp(MIN_CWND_PKTS, tp.cwnd_clamp.max(MIN_CWND_PKTS));
        // tcp_current_ssthresh (Open state): ssthresh >= 3/4 cwnd.
        tp.ssthresh = tp.ssthresh.max((tp.cwnd >> 1) + (tp.cwnd >> 2));
    }
}

impl CongestionControl for Vegas {
    hooks!(pkts_acked);
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn init(&mut self, tp: &mut TcpCc) {
        self.base_rtt_ns = u64::MAX;
        self.enable(tp);
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        (tp.cwnd / 2).max(reno::MIN_SSTHRESH_PKTS)
    }

    fn pkts_acked(&mut self, _tp: &mut TcpCc, sample: &super::AckSample) {
        if sample.rtt_ns < 0 {
            return;
        }
        // Linux adds 1 µs so that a 0 sample never looks like "no sample".
        let vrtt = sample.rtt_ns as u64 + 1;
        self.base_rtt_ns = self.base_rtt_ns.min(vrtt);
        self.min_rtt_ns = self.min_rtt_ns.min(vrtt);
        self.cnt_rtt += 1;
    }

    fn set_state(&mut self, tp: &mut TcpCc, new_state: CaState) {
        if new_state == CaState::Open {
            self.enable(tp);
        } else {
            self.disable();
        }
    }

    /// Linux `tcp_vegas_cwnd_event`: a send with nothing in flight (after idle
    /// or an RTO: `tcp_event_data_sent`'s CA_EVENT_TX_START) or a restart
    /// re-runs `tcp_vegas_init`, which forgets baseRTT too.
    fn cwnd_event(&mut self, tp: &mut TcpCc, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::TxStart) {
            self.init(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        if !self.doing_vegas_now {
            reno::reno_cong_avoid(tp, acked);
            return;
        }
        // `ack` in Linux is the new snd_una: a new round once it passes beg_snd_nxt.
        if tp.snd_una > self.beg_snd_nxt {
            self.beg_snd_nxt = tp.snd_nxt;
            if self.cnt_rtt <= MIN_SAMPLES_PER_ROUND {
                reno::reno_cong_avoid(tp, acked);
            } else {
                self.adjust(tp, acked);
            }
            self.cnt_rtt = 0;
            self.min_rtt_ns = u64::MAX;
        } else if tp.in_slow_start() {
            tp.slow_start(acked);
        }
    }
}

crate::declare_cca! {
    /// Vegas's parameters: Linux `tcp_vegas` module parameters, defaults = Linux's.
    pub struct VegasConfig {
        /// Grow cwnd while fewer than alpha packets are queued (Linux `alpha`).
        alpha_pkts: u64 = ALPHA_PKTS, Range::Any;
        /// Shrink cwnd while more than beta packets are queued (Linux `beta`).
        beta_pkts: u64 = BETA_PKTS, Range::Any;
        /// Leave slow start once more than gamma packets are queued (Linux `gamma`).
        gamma_pkts: u64 = GAMMA_PKTS, Range::Any;
    }
    check = check_vegas;
    cca Vegas = "vegas", "Vegas: Brakmo & Peterson, IEEE JSAC 1995; Linux net/ipv4/tcp_vegas.c (alpha 2, beta 4, gamma 1)";
    build = |p, _seed| {
        let mut v = Vegas::new();
        (v.alpha_pkts, v.beta_pkts, v.gamma_pkts) = (p.alpha_pkts, p.beta_pkts, p.gamma_pkts);
        v
    };
}

fn check_vegas(p: &VegasConfig) -> Result<(), crate::params::ParamError> {
    crate::params::ParamError::at_most("alpha", p.alpha_pkts, "beta", p.beta_pkts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::tp;
    use crate::cc::AckSample;

    const BASE_NS: u64 = 50_000_000;

    /// Feed one round: `n` RTT samples of `rtt_ns`, then the round-closing ACK.
    fn round(v: &mut Vegas, t: &mut TcpCc, rtt_ns: u64, n: u32) {
        for _ in 0..n {
            v.pkts_acked(t, &AckSample { pkts_acked: 1, rtt_ns: rtt_ns as i64 - 1, in_flight: t.cwnd });
        }
        t.snd_una = v.beg_snd_nxt + 1;
        t.snd_nxt = t.snd_una + t.cwnd as u64;
        v.cong_avoid(t, 1);
    }

    /// A connection in congestion avoidance with baseRTT = 50 ms and cwnd 20.
    fn ca_state() -> (Vegas, TcpCc) {
        let mut t = tp();
        let mut v = Vegas::new();
        v.init(&mut t);
        t.cwnd = 20;
        t.ssthresh = 10;
        round(&mut v, &mut t, BASE_NS, 5); // sets baseRTT, diff = 0 -> +1
        t.cwnd = 20;
        (v, t)
    }

    /// In slow start at cwnd 40 after one round at the base RTT.
    fn slow_start_state() -> (Vegas, TcpCc) {
        let mut t = tp();
        let mut v = Vegas::new();
        v.init(&mut t);
        round(&mut v, &mut t, BASE_NS, 5); // baseRTT
        t.cwnd = 40;
        (v, t)
    }

    /// RTT at which `cwnd` packets put `queued` packets in the queue (exactly).
    fn rtt_for_queue(cwnd: u64, queued: u64) -> u64 {
        BASE_NS + BASE_NS * queued / cwnd
    }

    #[test]
    fn grows_by_one_per_rtt_when_fewer_than_alpha_packets_queued() {
        let (mut v, mut t) = ca_state();
        round(&mut v, &mut t, rtt_for_queue(20, 1), 5); // diff = 1 < alpha = 2
        assert_eq!(t.cwnd, 21);
    }

    #[test]
    fn holds_between_alpha_and_beta() {
        for queued in [ALPHA_PKTS, 3, BETA_PKTS] {
            let (mut v, mut t) = ca_state();
            round(&mut v, &mut t, rtt_for_queue(20, queued), 5);
            assert_eq!(t.cwnd, 20, "diff = {queued} packets must hold cwnd");
        }
    }

    #[test]
    fn shrinks_by_one_per_rtt_when_more_than_beta_packets_queued() {
        let (mut v, mut t) = ca_state();
        round(&mut v, &mut t, rtt_for_queue(20, 5), 5); // diff = 5 > beta = 4
        assert_eq!(t.cwnd, 19);
        assert!(t.ssthresh <= 19);
    }

    #[test]
    fn adjusts_only_once_per_rtt() {
        let (mut v, mut t) = ca_state();
        round(&mut v, &mut t, rtt_for_queue(20, 0), 5);
        assert_eq!(t.cwnd, 21);
        // More ACKs inside the same round (snd_una below beg_snd_nxt): no change.
        for _ in 0..20 {
            v.pkts_acked(&mut t, &AckSample { pkts_acked: 1, rtt_ns: BASE_NS as i64, in_flight: 21 });
            v.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.cwnd, 21);
    }

    #[test]
    fn too_few_rtt_samples_fall_back_to_reno() {
        let (mut v, mut t) = ca_state();
        t.cwnd_cnt = 19; // Reno adds 1 on the 20th ACKed packet of cwnd 20
        round(&mut v, &mut t, rtt_for_queue(20, 10), 2); // only 2 samples: not judged
        assert_eq!(t.cwnd, 21, "Reno growth, not the Vegas decrease");
    }

    #[test]
    fn slow_start_exits_when_more_than_gamma_packets_queued() {
        let (mut v, mut t) = slow_start_state();
        assert!(t.in_slow_start());
        // diff = 40 x 10/50 = 8 > gamma: cwnd -> target + 1 = 40 x 50/60 + 1 = 34.
        round(&mut v, &mut t, 60_000_000, 5);
        assert_eq!(t.cwnd, 34);
        assert!(!t.in_slow_start(), "ssthresh {} cwnd {}", t.ssthresh, t.cwnd);
    }

    #[test]
    fn slow_start_exit_sets_ssthresh_to_the_window_as_linux_6_18() {
        // tcp_vegas_ssthresh = min(ssthresh, cwnd) (Linux 6.18 tcp_vegas.c), then
        // tcp_current_ssthresh keeps it >= 3/4 cwnd: ssthresh = cwnd = 34.
        let (mut v, mut t) = slow_start_state();
        round(&mut v, &mut t, 60_000_000, 5);
        assert_eq!((t.cwnd, t.ssthresh), (34, 34));
    }

    #[test]
    fn slow_start_continues_while_queue_at_most_gamma() {
        let (mut v, mut t) = slow_start_state();
        round(&mut v, &mut t, rtt_for_queue(40, GAMMA_PKTS), 5);
        assert_eq!(t.cwnd, 41, "slow start: +acked");
        assert!(t.in_slow_start());
    }

    #[test]
    fn a_send_with_nothing_in_flight_forgets_base_rtt_as_tcp_vegas_init() {
        // tcp_vegas_cwnd_event calls tcp_vegas_init on CA_EVENT_TX_START (sent by
        // tcp_event_data_sent when tcp_packets_in_flight is 0: after idle or an
        // RTO): the next round's RTT becomes the base, queue included.
        let (mut v, mut t) = ca_state();
        assert_eq!(v.base_rtt_ns(), BASE_NS);
        v.cwnd_event(&mut t, CaEvent::TxStart);
        assert_eq!(v.base_rtt_ns(), u64::MAX);
        let queued_rtt = rtt_for_queue(20, 10);
        round(&mut v, &mut t, queued_rtt, 5);
        assert_eq!(v.base_rtt_ns(), queued_rtt);
        assert_eq!(t.cwnd, 21, "diff 0 against the new base: grow");
    }

    #[test]
    fn loss_halves_like_reno_and_disables_vegas_until_open() {
        let (mut v, mut t) = ca_state();
        assert_eq!(v.ssthresh(&t), 10);
        v.set_state(&mut t, CaState::Recovery);
        assert!(!v.doing_vegas_now);
        v.set_state(&mut t, CaState::Open);
        assert!(v.doing_vegas_now);
    }
}
