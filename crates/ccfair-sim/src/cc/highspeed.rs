//! HighSpeed TCP (RFC 3649), modelled on Linux `tcp_highspeed.c`.
//!
//! Algorithm (RFC 3649, S. Floyd, 2003):
//!   - below `W_low` = 38 packets the response is Reno's (a = 1, b = 0.5);
//!   - above it, congestion avoidance adds a(w) per RTT and a loss cuts cwnd
//!     by b(w), with (RFC 3649 section 5)
//!       b(w) = (b_high - 0.5) (log w - log W_low) / (log W_high - log W_low) + 0.5,
//!       a(w) = w^2 p(w) 2 b(w) / (2 - b(w)),  p(w) = 0.078 / w^1.2,
//!     W_high = 83 000 packets, b_high = 0.1;
//!   - Linux uses the RFC's Appendix B table: row i covers
//!     `W[i-1] < cwnd <= W[i]` and gives a = i + 1 and b = `MD[i]` / 256
//!     (= floor(256 b(W[i])), checked in the tests). The row index is only
//!     moved in congestion avoidance; per ACK `snd_cwnd_cnt += a` and cwnd
//!     grows by 1 when the count reaches cwnd (a / cwnd per ACK);
//!   - on loss: `ssthresh = max(cwnd - cwnd * MD[i] / 256, 2)`;
//!   - slow start as Reno (no RFC 3742 limited slow start, as in Linux).
//!
//! Sources: RFC 3649 (sections 5 and Appendix B); Linux
//! net/ipv4/tcp_highspeed.c (J. Heffner).
//! Constants: the 72-row (W, MD) table below, MD in 1/256; cwnd clamp
//! `u32::MAX / 128` packets (Linux, for the MD arithmetic).
//! Simplifications / Linux behaviour kept: the increase counts ACKs, not
//! ACKed packets (Linux ignores `acked` here), so with delayed ACKs the growth
//! per RTT is a(w)/2; within a row a is the row's upper value (rounded up
//! from the RFC's continuous a(w)).

use super::{CongestionControl, TcpCc};

/// Upper cwnd bound of each AIMD row, packets (RFC 3649 Appendix B, "w").
pub const HSTCP_W_PKTS: [u32; 72] = [
    38, 118, 221, 347, 495, 663, 851, 1058, 1284, 1529, 1793, 2076, 2378, 2699, 3039, 3399, 3778, 4177, 4596, 5036, 5497, 5979, 6483, 7009,
    7558, 8130, 8726, 9346, 9991, 10661, 11358, 12082, 12834, 13614, 14424, 15265, 16137, 17042, 17981, 18955, 19965, 21013, 22101, 23230,
    24402, 25618, 26881, 28193, 29557, 30975, 32450, 33986, 35586, 37253, 38992, 40808, 42707, 44694, 46776, 48961, 51258, 53677, 56230,
    58932, 61799, 64851, 68113, 71617, 75401, 79517, 84035, 89053,
];
/// Multiplicative decrease of each row, in 1/256 (floor(256 b(W))).
pub const HSTCP_MD_256: [u32; 72] = [
    128, 112, 104, 98, 93, 89, 86, 83, 81, 78, 76, 74, 72, 71, 69, 68, 66, 65, 64, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 52, 51, 50,
    49, 48, 48, 47, 46, 45, 45, 44, 43, 43, 42, 41, 41, 40, 39, 39, 38, 38, 37, 36, 36, 35, 35, 34, 33, 33, 32, 32, 31, 30, 30, 29, 28, 28,
    27, 26, 26, 25, 24,
];
/// Cap on cwnd so `cwnd * MD` fits in 32 bits (Linux `hstcp_init`), packets.
const CWND_CLAMP_PKTS: u32 = u32::MAX / 128;
/// Minimum ssthresh after a loss, packets.
const MIN_SSTHRESH_PKTS: u32 = 2;

#[derive(Debug, Clone, Default)]
pub struct HighSpeed {
    /// Current row of the AIMD table (Linux `ca->ai`); a(w) = ai + 1.
    ai: usize,
}

impl HighSpeed {
    pub fn new() -> HighSpeed {
        HighSpeed { ai: 0 }
    }

    /// Move `ai` so that `W[ai-1] < cwnd <= W[ai]` (clamped to the table).
    fn update_row(&mut self, cwnd: u32) {
        while cwnd > HSTCP_W_PKTS[self.ai] && self.ai < HSTCP_W_PKTS.len() - 1 {
            self.ai += 1;
        }
        while self.ai > 0 && cwnd <= HSTCP_W_PKTS[self.ai - 1] {
            self.ai -= 1;
        }
    }

    /// a(w): packets added per RTT (per cwnd ACKs) in the current row.
    pub fn a(&self) -> u32 {
        self.ai as u32 + 1
    }

    /// b(w) in 1/256 in the current row.
    pub fn md_256(&self) -> u32 {
        HSTCP_MD_256[self.ai]
    }
}

impl CongestionControl for HighSpeed {
    hooks!();
    fn name(&self) -> &'static str {
        "highspeed"
    }

    fn init(&mut self, tp: &mut TcpCc) {
        self.ai = 0;
        tp.cwnd_clamp = tp.cwnd_clamp.min(CWND_CLAMP_PKTS);
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        if !tp.past_slow_start(acked) {
            return;
        }
        self.update_row(tp.cwnd);
        if tp.cwnd < tp.cwnd_clamp {
            tp.cwnd_cnt += self.a();
            if tp.cwnd_cnt >= tp.cwnd {
                tp.cwnd_cnt -= tp.cwnd;
                tp.cwnd += 1;
            }
        }
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        let cut = (u64::from(tp.cwnd) * u64::from(self.md_256())) >> 8;
        (tp.cwnd - cut as u32).max(MIN_SSTHRESH_PKTS)
    }
}

impl super::Cca for HighSpeed {
    type Params = crate::params::NoParams;
    const NAME: &'static str = "highspeed";
    const SOURCE: &'static str = "HighSpeed TCP: RFC 3649; Linux net/ipv4/tcp_highspeed.c; no parameters, as in Linux (the RFC 3649 table is fixed; no module parameters)";
    fn build(_: &crate::params::NoParams, _seed: u64) -> Box<dyn CongestionControl> {
        Box::new(HighSpeed::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{cwnds_after, tp};

    /// RFC 3649 section 5: b(w) with W_low = 38, W_high = 83000, b_high = 0.1.
    fn rfc_b(w: f64) -> f64 {
        (0.1 - 0.5) * (w.ln() - 38f64.ln()) / (83_000f64.ln() - 38f64.ln()) + 0.5
    }

    /// RFC 3649 section 5: a(w) = w^2 p(w) 2 b(w) / (2 - b(w)), p(w) = 0.078 / w^1.2.
    fn rfc_a(w: f64) -> f64 {
        let p = 0.078 / w.powf(1.2);
        w * w * p * 2.0 * rfc_b(w) / (2.0 - rfc_b(w))
    }

    #[test]
    fn table_matches_rfc3649_response_function() {
        for (i, (&w, &md)) in HSTCP_W_PKTS.iter().zip(HSTCP_MD_256.iter()).enumerate() {
            let w = f64::from(w);
            assert_eq!(md, (256.0 * rfc_b(w)).floor() as u32, "row {i}: b({w})");
            let want_a = i as f64 + 1.0;
            assert!((rfc_a(w) - want_a).abs() < 0.05, "row {i}: a({w}) = {} vs {want_a}", rfc_a(w));
        }
        // RFC 3649 Appendix B spot values: a(w), b(w) rounded to 2 decimals.
        assert_eq!(HSTCP_MD_256[0], 128); // w 38: a 1, b 0.50
        assert!((f64::from(HSTCP_MD_256[9]) / 256.0 - 0.30).abs() < 0.01); // w 1529: a 10, b 0.31
        assert!((f64::from(HSTCP_MD_256[70]) / 256.0 - 0.10).abs() < 0.01); // w 84035: a 71, b 0.10
    }

    fn row_for(cwnd: u32) -> HighSpeed {
        let mut h = HighSpeed::new();
        h.update_row(cwnd);
        h
    }

    #[test]
    fn rows_cover_half_open_intervals() {
        assert_eq!(row_for(38).a(), 1);
        assert_eq!(row_for(39).a(), 2);
        assert_eq!(row_for(118).a(), 2);
        assert_eq!(row_for(119).a(), 3);
        assert_eq!(row_for(1_000_000).a(), 72);
        // And back down.
        let mut h = row_for(5000);
        h.update_row(100);
        assert_eq!(h.a(), 2);
    }

    #[test]
    fn congestion_avoidance_adds_a_of_w_per_window_of_acks() {
        // cwnd 1000 is in row 7 (851 < w <= 1058): a = 8 per cwnd ACKs.
        // +1 each time the count (8 per ACK) reaches cwnd: 1000 + ... + 1007
        // = 8028 = 8 x 1003.5 -> the 8th increment comes with ACK 1004.
        assert_eq!(cwnds_after(HighSpeed::new(), 1000, 500, &[1003, 1]), [1007, 1008]);
        // At or below W_low it is Reno: +1 per cwnd ACKs.
        assert_eq!(cwnds_after(HighSpeed::new(), 30, 10, &[30]), [31]);
    }

    #[test]
    fn loss_cuts_by_b_of_w() {
        let mut t = tp();
        let mut h = HighSpeed::new();
        t.cwnd = 30; // Reno region: halve
        h.update_row(t.cwnd);
        assert_eq!(h.ssthresh(&t), 15);
        t.cwnd = 1000; // row 7, MD 83/256 = 0.324
        h.update_row(t.cwnd);
        assert_eq!(h.ssthresh(&t), 1000 - 1000 * 83 / 256);
        t.cwnd = 80_000; // row 70 (79517 < w <= 84035), b = 25/256 ~ 0.10
        h.update_row(t.cwnd);
        assert_eq!(h.a(), 71);
        assert_eq!(h.ssthresh(&t), 80_000 - 80_000 * 25 / 256);
    }

    #[test]
    fn init_clamps_cwnd_for_md_arithmetic() {
        let mut t = tp();
        HighSpeed::new().init(&mut t);
        assert_eq!(t.cwnd_clamp, u32::MAX / 128);
    }
}
