//! NewReno congestion control.
//!
//! Algorithm (RFC 5681 section 3.1, Linux `tcp_reno_cong_avoid`):
//!   - slow start: cwnd += acked (appropriate byte counting, capped at ssthresh);
//!   - congestion avoidance: cwnd += 1 per cwnd packets ACKed;
//!   - on loss: ssthresh = max(cwnd / 2, 2) (Linux `tcp_reno_ssthresh`).
//! NewReno's partial-ACK handling (RFC 6582) lives in the sender's SACK/RACK
//! recovery, which subsumes it; PRR (RFC 6937) shapes the reduction.
//!
//! Sources: RFC 5681, RFC 6582; Linux net/ipv4/tcp_cong.c.
//! Constants: beta = 1/2 (halving), minimum ssthresh 2 packets.

use super::{CongestionControl, TcpCc};

/// Minimum slow-start threshold after a loss, packets (Linux: 2).
pub const MIN_SSTHRESH_PKTS: u32 = 2;

/// Linux `tcp_reno_cong_avoid`, shared as the default growth of the trait.
pub fn reno_cong_avoid(tp: &mut TcpCc, acked: u32) {
    let Some(acked) = tp.after_slow_start(acked) else { return };
    let w = tp.cwnd;
    tp.cong_avoid_ai(w, acked);
}

#[derive(Debug, Clone, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    hooks!();
    fn name(&self) -> &'static str {
        "reno"
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        (tp.cwnd / 2).max(MIN_SSTHRESH_PKTS)
    }
}

impl super::Cca for Reno {
    type Params = crate::params::NoParams;
    const NAME: &'static str = "reno";
    const SOURCE: &'static str =
        "NewReno: RFC 5681 / RFC 6582; Linux net/ipv4/tcp_cong.c (tcp_reno_*); no parameters, as in Linux (tcp_cong.c has no module parameters)";
    fn build(_: &crate::params::NoParams, _seed: u64) -> Box<dyn CongestionControl> {
        Box::new(Reno)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{ack_each, tp, tp_at};

    #[test]
    fn slow_start_doubles_per_window_of_acks() {
        let mut t = tp();
        let mut r = Reno;
        // One ACK per packet of a 10-packet window: cwnd 10 -> 20 (RFC 5681 / ABC L=1 per ACK).
        assert_eq!(ack_each(&mut r, &mut t, 10), 20);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_leftover_goes_to_ca() {
        let mut t = tp_at(18, 20);
        let mut r = Reno;
        r.cong_avoid(&mut t, 4); // 2 used to reach 20, 2 left for CA
        assert_eq!(t.cwnd, 20);
        assert_eq!(t.cwnd_cnt, 2);
    }

    #[test]
    fn congestion_avoidance_adds_one_per_window() {
        let mut t = tp_at(20, 10);
        let mut r = Reno;
        assert_eq!(ack_each(&mut r, &mut t, 19), 20);
        assert_eq!(ack_each(&mut r, &mut t, 1), 21);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut t = tp();
        t.is_cwnd_limited = false;
        Reno.cong_avoid(&mut t, 5);
        assert_eq!(t.cwnd, 10);
    }

    #[test]
    fn ssthresh_halves_with_floor_of_two() {
        let mut t = tp();
        t.cwnd = 31;
        assert_eq!(Reno.ssthresh(&t), 15);
        t.cwnd = 3;
        assert_eq!(Reno.ssthresh(&t), 2);
    }
}
