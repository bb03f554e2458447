//! CCID 2: TCP-like congestion control for DCCP (RFC 4341), the window and
//! Ack Ratio state machine. The packet bookkeeping (which datagram is
//! acknowledged or lost) is in dccp/sender.rs; this file only decides.
//!
//! Algorithm (RFC 4341 §5, §6.1.2; Linux net/dccp/ccids/ccid2.c for the
//! details the RFC leaves open):
//! - Window in packets. Slow start while cwnd < ssthresh: +1 packet per newly
//!   acknowledged data packet, at most R (the Ack Ratio) per ACK, i.e. byte
//!   counting (RFC 3465) with limit L = R, so one ACK covering R packets grows
//!   cwnd as R single ACKs would. Congestion avoidance: +1 packet per cwnd
//!   packets acknowledged.
//! - A congestion event (one or more data packets lost in a window): cwnd is
//!   halved, ssthresh = max(new cwnd, 2) (Linux `ccid2_congestion_event`),
//!   once per window of data (the sender ignores losses of packets sent before
//!   the previous reduction).
//! - Timeout (RFC 4341 §5, TCP's RTO of RFC 6298 with a 200 ms minimum as
//!   Linux): ssthresh = max(cwnd/2, 2), cwnd = 1.
//! - Ack Ratio R (RFC 4341 §6.1.2): an integer >= 1 with R <= ceil(cwnd/2);
//!   R starts at 2 (RFC 4340 §11.3 default). For each congestion window of
//!   data in which ACKs were lost (or marked), R doubles; for each
//!   cwnd/(R^2 - R) consecutive windows without lost ACKs, R decreases by 1.
//!   When cwnd shrinks, R is clamped to ceil(cwnd/2). As Linux
//!   (`ccid2_change_l_ack_ratio`) we do not keep RFC 4341's "R = 2 is always
//!   acceptable": with cwnd = 1 and R = 2 the receiver would never ACK.
//!
//! - Initial window (RFC 4341 §5: "The cwnd parameter is initialized to at
//!   most four packets for new connections, following the rules from
//!   [RFC3390]"): RFC 3390's min(4 MSS, max(2 MSS, 4380 bytes)) in whole
//!   packets, i.e. clamp(4380 / MSS, 2, 4) as Linux `ccid2_hc_tx_init`
//!   (3 packets at an MSS of 1448 bytes); see [`initial_window_pkts`]. A
//!   flow's explicit `init_cwnd` overrides it.
//!
//! Constants: NUMDUPACK = 3 (RFC 4341 §5, in sender.rs); initial R = 2
//! packets (`INIT_ACK_RATIO_PKTS`); minimum ssthresh 2 packets; RFC 3390's
//! initial-window bound 4380 bytes (`RFC3390_IW_BYTES`).
//! Simplifications: no ECN; no application-limited cwnd validation
//! (RFC 2861, which RFC 4341 §5.1 recommends); the Linux sequence-window
//! based Ack Ratio adjustment (RFC 4340 §7.5.2) is not modelled.

/// RFC 4340 §11.3: the default Ack Ratio.
pub const INIT_ACK_RATIO_PKTS: u32 = 2;
/// Lower bound of ssthresh after a reduction (Linux ccid2: max(cwnd, 2)).
pub const MIN_SSTHRESH_PKTS: u32 = 2;
/// RFC 3390 §1: the initial window is min(4*MSS, max(2*MSS, 4380 bytes)).
pub const RFC3390_IW_BYTES: u32 = 4380;

/// CCID 2's initial window in packets for a maximum packet size of
/// `mss_bytes` (RFC 4341 §5 with RFC 3390's rule, whole packets): 4 up to
/// 1095 bytes, 3 up to 1460, 2 above.
pub fn initial_window_pkts(mss_bytes: u32) -> u32 {
    (RFC3390_IW_BYTES / mss_bytes.max(1)).clamp(2, 4)
}

/// CCID 2 sender state (all in packets).
#[derive(Debug, Clone)]
pub struct Ccid2 {
    pub cwnd: u32,
    pub ssthresh: u32,
    /// Ack Ratio R.
    pub ack_ratio: u32,
    /// Packets acknowledged since the last congestion-avoidance increase.
    ca_acked: u32,
    /// Data packets sent since R last changed or an ACK was last lost (for
    /// the decrease rule).
    sent_without_ack_loss: u64,
    /// Data packets still to be sent before another ACK loss may double R
    /// again (one doubling per window).
    ack_loss_holdoff: u64,
    /// Statistics.
    pub ack_ratio_increases: u64,
    pub ack_ratio_decreases: u64,
}

impl Ccid2 {
    pub fn new(init_cwnd_pkts: u32) -> Ccid2 {
        let mut c = Ccid2 {
            cwnd: init_cwnd_pkts.max(1),
            ssthresh: u32::MAX,
            ack_ratio: INIT_ACK_RATIO_PKTS,
            ca_acked: 0,
            sent_without_ack_loss: 0,
            ack_loss_holdoff: 0,
            ack_ratio_increases: 0,
            ack_ratio_decreases: 0,
        };
        c.clamp_ack_ratio();
        c
    }

    /// The largest Ack Ratio the window allows: ceil(cwnd/2), at least 1.
    pub fn max_ack_ratio(&self) -> u32 {
        self.cwnd.div_ceil(2).max(1)
    }

    fn clamp_ack_ratio(&mut self) {
        let m = self.max_ack_ratio();
        if self.ack_ratio > m {
            self.ack_ratio = m;
            self.sent_without_ack_loss = 0;
        }
    }

    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// One ACK newly acknowledged `newly_acked` data packets.
    pub fn on_ack(&mut self, newly_acked: u32) {
        let mut n = newly_acked;
        if self.in_slow_start() {
            let inc = n.min(self.ack_ratio).min(self.ssthresh - self.cwnd);
            self.cwnd += inc;
            n -= n.min(inc);
            if self.in_slow_start() {
                return;
            }
        }
        // Congestion avoidance: one packet per window acknowledged.
        self.ca_acked += n;
        while self.ca_acked >= self.cwnd {
            self.ca_acked -= self.cwnd;
            self.cwnd += 1;
        }
    }

    /// A data packet was lost (or marked) in a window not yet reduced for.
    pub fn on_congestion(&mut self) {
        self.cwnd = (self.cwnd / 2).max(1);
        self.ssthresh = self.cwnd.max(MIN_SSTHRESH_PKTS);
        self.ca_acked = 0;
        self.clamp_ack_ratio();
    }

    /// The retransmission timer expired.
    pub fn on_timeout(&mut self) {
        self.ssthresh = (self.cwnd / 2).max(MIN_SSTHRESH_PKTS);
        self.cwnd = 1;
        self.ca_acked = 0;
        self.clamp_ack_ratio();
    }

    /// The sender transmitted one data packet (drives the Ack Ratio decrease rule).
    pub fn on_packet_sent(&mut self) {
        self.ack_loss_holdoff = self.ack_loss_holdoff.saturating_sub(1);
        self.sent_without_ack_loss += 1;
        let r = self.ack_ratio as u64;
        if r > 1 {
            // cwnd / (R^2 - R) windows of cwnd packets each.
            let c = self.cwnd as u64;
            let need = (c * c).div_ceil(r * r - r).max(1);
            if self.sent_without_ack_loss >= need {
                self.ack_ratio -= 1;
                self.ack_ratio_decreases += 1;
                self.sent_without_ack_loss = 0;
            }
        }
    }

    /// The sender detected `n` lost (or marked) ACK packets.
    pub fn on_ack_loss(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        self.sent_without_ack_loss = 0;
        if self.ack_loss_holdoff > 0 {
            return; // this window already doubled R
        }
        let doubled = (self.ack_ratio * 2).min(self.max_ack_ratio());
        if doubled > self.ack_ratio {
            self.ack_ratio = doubled;
            self.ack_ratio_increases += 1;
        }
        self.ack_loss_holdoff = self.cwnd as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` ACKs of one packet each; the window after them.
    fn acks(c: &mut Ccid2, n: u32) -> u32 {
        for _ in 0..n {
            c.on_ack(1);
        }
        c.cwnd
    }

    /// `n` packets sent.
    fn send(c: &mut Ccid2, n: u32) {
        for _ in 0..n {
            c.on_packet_sent();
        }
    }

    #[test]
    fn initial_window_follows_rfc_4341_and_rfc_3390() {
        // RFC 3390: min(4*MSS, max(2*MSS, 4380 bytes)), in whole packets (RFC 4341 §5: at most four).
        for (mss, iw) in [(536, 4), (1095, 4), (1096, 3), (1448, 3), (1460, 3), (1461, 2), (2190, 2), (9000, 2)] {
            let bytes = (4 * mss).min((2 * mss).max(RFC3390_IW_BYTES));
            assert_eq!(initial_window_pkts(mss), iw, "mss {mss}");
            assert_eq!(bytes / mss, iw, "RFC 3390 bytes {bytes} at mss {mss}");
        }
    }

    #[test]
    fn slow_start_grows_one_per_acked_packet_capped_at_ack_ratio_per_ack() {
        let mut c = Ccid2::new(10);
        assert_eq!(c.ack_ratio, 2);
        assert_eq!(acks(&mut c, 1), 11);
        c.on_ack(2);
        assert_eq!(c.cwnd, 13);
        // An ACK covering 5 packets (losses before it) counts at most R = 2.
        c.on_ack(5);
        assert_eq!(c.cwnd, 15);
        // A window of 15 packets ACKed pairwise doubles the window per RTT.
        assert_eq!(acks(&mut c, 15), 30);
    }

    #[test]
    fn congestion_avoidance_adds_one_packet_per_window() {
        let mut c = Ccid2::new(10);
        c.ssthresh = 10;
        assert_eq!(acks(&mut c, 9), 10);
        assert_eq!(acks(&mut c, 1), 11);
        assert_eq!(acks(&mut c, 11), 12);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_carries_the_rest_into_avoidance() {
        let mut c = Ccid2::new(10);
        c.ssthresh = 11;
        c.on_ack(2); // 1 to reach ssthresh, 1 counted towards CA
        assert_eq!((c.cwnd, c.ca_acked), (11, 1));
    }

    #[test]
    fn loss_halves_the_window_and_timeout_resets_it_to_one() {
        let mut c = Ccid2::new(10);
        c.cwnd = 101;
        c.on_congestion();
        assert_eq!((c.cwnd, c.ssthresh), (50, 50));
        c.on_congestion();
        c.on_congestion();
        c.on_congestion();
        c.on_congestion();
        c.on_congestion();
        assert_eq!((c.cwnd, c.ssthresh), (1, 2), "cwnd floors at 1, ssthresh at 2");
        c.cwnd = 40;
        c.on_timeout();
        assert_eq!((c.cwnd, c.ssthresh), (1, 20));
        assert_eq!(c.ack_ratio, 1, "R <= ceil(cwnd/2) = 1 after a timeout");
    }

    #[test]
    fn ack_ratio_never_exceeds_half_the_window_rounded_up() {
        // RFC 4341 6.1.2: R <= ceil(cwnd/2); with cwnd 1 the receiver must ACK every packet.
        assert_eq!(Ccid2::new(1).ack_ratio, 1);
        assert_eq!(Ccid2::new(3).ack_ratio, 2);
        let mut c = Ccid2::new(100);
        c.ack_ratio = 50;
        c.on_congestion();
        assert_eq!(c.cwnd, 50);
        assert_eq!(c.ack_ratio, 25);
        // Doubling on ACK loss is capped by the same bound.
        c.ack_ratio = 20;
        c.on_ack_loss(1);
        assert_eq!(c.ack_ratio, 25);
    }

    #[test]
    fn ack_loss_doubles_ack_ratio_once_per_window() {
        let mut c = Ccid2::new(100);
        c.on_ack_loss(1);
        assert_eq!(c.ack_ratio, 4);
        // More lost ACKs in the same window of data: no further doubling.
        c.on_ack_loss(3);
        send(&mut c, 99);
        c.on_ack_loss(1);
        assert_eq!(c.ack_ratio, 4);
        // After a full window (100 packets) another ACK loss doubles again.
        c.on_packet_sent();
        c.on_ack_loss(1);
        assert_eq!(c.ack_ratio, 8);
        assert_eq!(c.ack_ratio_increases, 2);
    }

    #[test]
    fn ack_ratio_decreases_by_one_after_cwnd_over_r2_minus_r_clean_windows() {
        // R = 4, cwnd = 24: cwnd/(R^2-R) = 2 windows = 48 packets without ACK loss.
        let mut c = Ccid2::new(24);
        c.ack_ratio = 4;
        send(&mut c, 47);
        assert_eq!(c.ack_ratio, 4);
        c.on_packet_sent();
        assert_eq!(c.ack_ratio, 3);
        // R = 3: 24/(9-3) = 4 windows = 96 packets; an ACK loss restarts the count.
        send(&mut c, 90);
        c.ack_loss_holdoff = 1;
        c.on_ack_loss(1);
        assert_eq!(c.ack_ratio, 3, "within the holdoff: no doubling, but the clean-window count restarts");
        send(&mut c, 95);
        assert_eq!(c.ack_ratio, 3);
        c.on_packet_sent();
        assert_eq!(c.ack_ratio, 2);
        // R = 2: 24/2 = 12 windows = 288 packets; then R = 1, which never decreases.
        send(&mut c, 288);
        assert_eq!(c.ack_ratio, 1);
        send(&mut c, 10_000);
        assert_eq!(c.ack_ratio, 1);
        assert_eq!(c.ack_ratio_decreases, 3);
    }
}
