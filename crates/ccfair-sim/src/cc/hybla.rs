//! TCP Hybla (Caini & Firrincieli), modelled on Linux `tcp_hybla.c`.
//!
//! Algorithm (C. Caini, R. Firrincieli, "TCP Hybla: a TCP enhancement for
//! heterogeneous networks", Int. J. Satellite Communications and Networking
//! 22(5), 2004): make a long-RTT flow grow (in packets per second) like a
//! Reno flow with the reference RTT `RTT0` = 25 ms.
//!   - rho = max(RTT / RTT0, 1), with RTT the smallest smoothed RTT seen
//!     (Linux recomputes rho whenever srtt reaches a new minimum), kept in
//!     fixed point with 3 fractional bits (`rho_3ls`) and rho^2 with 7;
//!   - slow start: cwnd += 2^rho - 1 per ACK (2^frac from an 8-entry table
//!     of 128 * 2^(k/8));
//!   - congestion avoidance: cwnd += rho^2 / cwnd per ACK (fractions kept in
//!     1/128 in `snd_cwnd_cents`), i.e. rho^2 packets per RTT;
//!   - loss: Reno (`ssthresh = cwnd / 2`); outside Open state Reno's growth;
//!   - `init` sets cwnd = rho (integer part, at least 1) from the handshake's
//!     srtt (Linux overrides the initial window this way), and the cwnd clamp
//!     to 65535.
//!
//! Sources: Caini & Firrincieli 2004; Linux net/ipv4/tcp_hybla.c (D. Lacamera).
//! Constants: `rtt0` = 25 ms (module parameter), fractions in 1/8 (rho) and
//! 1/128 (rho^2, cwnd increments), cwnd clamp 65535 packets, slow-start
//! exponent capped at 16.
//! Linux behaviour kept: the increase is per ACK, not per ACKed packet (Linux
//! ignores `acked`), so delayed ACKs halve the growth per RTT; slow start
//! clamps at ssthresh without carrying the leftover.

use super::{CaState, CongestionControl, TcpCc};

/// Reference RTT (Linux module parameter `rtt0`, ms).
pub const RTT0_MS: u64 = 25;
/// Linux sets `snd_cwnd_clamp` to this in `hybla_init`, packets.
const CWND_CLAMP_PKTS: u32 = 65_535;
/// `floor(128 * 2^(k/8))`, k = 0..7: 2^(fraction of rho) in 1/128 (Linux `hybla_fraction`).
pub const FRACTIONS_128: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];
/// Cap on the integer part of rho used in slow start (2^16).
const MAX_SS_EXPONENT: u32 = 16;

#[derive(Debug, Clone)]
pub struct Hybla {
    /// Reference RTT RTT0, ms (Linux module parameter `rtt0`).
    rtt0_ms: u64,
    /// Hybla's rules apply (Open state); otherwise Reno.
    enabled: bool,
    /// Accumulated fractional increments, 1/128 packet.
    cwnd_cents: u32,
    /// rho, integer part.
    rho: u32,
    /// rho^2, integer part.
    rho2: u32,
    /// rho in 1/8.
    rho_3ls: u32,
    /// rho^2 in 1/128.
    rho2_7ls: u32,
    /// Smallest smoothed RTT seen, ns.
    min_srtt_ns: u64,
}

impl Default for Hybla {
    fn default() -> Self {
        Hybla::new()
    }
}

impl Hybla {
    pub fn new() -> Hybla {
        Hybla { rtt0_ms: RTT0_MS, enabled: false, cwnd_cents: 0, rho: 0, rho2: 0, rho_3ls: 0, rho2_7ls: 0, min_srtt_ns: 0 }
    }

    /// `hybla_recalc_param`: rho from the current smoothed RTT.
    fn recalc_param(&mut self, srtt_ns: u64) {
        // Linux: tp->srtt_us (8 x srtt in µs) / (rtt0 * 1000), at least 8 (rho >= 1).
        let srtt_us_x8 = srtt_ns * 8 / 1000;
        self.rho_3ls = u32::try_from(srtt_us_x8 / (self.rtt0_ms * 1000)).unwrap_or(u32::MAX >> 8).max(8);
        self.rho = self.rho_3ls >> 3;
        self.rho2_7ls = (self.rho_3ls * self.rho_3ls) << 1;
        self.rho2 = self.rho2_7ls >> 7;
    }

    /// rho in 1/8 (for tests and diagnostics).
    pub fn rho_eighths(&self) -> u32 {
        self.rho_3ls
    }
}

impl CongestionControl for Hybla {
    hooks!();
    fn name(&self) -> &'static str {
        "hybla"
    }

    fn init(&mut self, tp: &mut TcpCc) {
        *self = Hybla::default();
        self.enabled = true;
        tp.cwnd_clamp = CWND_CLAMP_PKTS;
        self.recalc_param(tp.srtt_ns);
        self.min_srtt_ns = tp.srtt_ns;
        tp.cwnd = self.rho.max(1);
    }

    fn ssthresh(&mut self, tp: &TcpCc) -> u32 {
        (tp.cwnd / 2).max(2)
    }

    fn set_state(&mut self, _tp: &mut TcpCc, new_state: CaState) {
        self.enabled = new_state == CaState::Open;
    }

    fn cong_avoid(&mut self, tp: &mut TcpCc, acked: u32) {
        if tp.srtt_ns < self.min_srtt_ns {
            self.recalc_param(tp.srtt_ns);
            self.min_srtt_ns = tp.srtt_ns;
        }
        if !tp.is_cwnd_limited {
            return;
        }
        if !self.enabled {
            super::reno::reno_cong_avoid(tp, acked);
            return;
        }
        if self.rho == 0 {
            self.recalc_param(tp.srtt_ns);
        }
        let rho_fractions = self.rho_3ls - (self.rho << 3);
        let slow_start = tp.in_slow_start();
        let increment = if slow_start {
            // 2^rho - 1, in 1/128.
            (1u32 << self.rho.min(MAX_SS_EXPONENT)) * FRACTIONS_128[rho_fractions as usize] - 128
        } else {
            // rho^2 / cwnd, in 1/128.
            let inc = self.rho2_7ls / tp.cwnd.max(1);
            if inc < 128 {
                tp.cwnd_cnt += 1;
            }
            inc
        };
        let odd = increment % 128;
        tp.cwnd += increment >> 7;
        self.cwnd_cents += odd;
        while self.cwnd_cents >= 128 {
            tp.cwnd += 1;
            self.cwnd_cents -= 128;
            tp.cwnd_cnt = 0;
        }
        // Increments below 1/128: fall back to +1 per cwnd ACKs.
        if increment == 0 && odd == 0 && tp.cwnd_cnt >= tp.cwnd {
            tp.cwnd += 1;
            tp.cwnd_cnt = 0;
        }
        if slow_start {
            tp.cwnd = tp.cwnd.min(tp.ssthresh);
        }
        tp.cwnd = tp.cwnd.min(tp.cwnd_clamp);
    }
}

crate::declare_cca! {
    /// Hybla's parameters: Linux `tcp_hybla` module parameters, defaults = Linux's.
    pub struct HyblaConfig {
        /// Reference RTT RTT0 the flow's growth is equalised to (Linux `rtt0` = 25 ms; whole milliseconds).
        rtt0_ns: u64 = RTT0_MS * 1_000_000, Range::at_least(1_000_000.0);
    }
    cca Hybla = "hybla", "Hybla: Caini & Firrincieli, IJSCN 2004; Linux net/ipv4/tcp_hybla.c";
    build = |p, _seed| {
        let mut h = Hybla::new();
        h.rtt0_ms = p.rtt0_ns / 1_000_000;
        h
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::{ack_each, tp};

    const MS: u64 = 1_000_000;

    fn started(srtt_ms: u64) -> (Hybla, TcpCc) {
        let mut t = tp();
        t.srtt_ns = srtt_ms * MS;
        let mut h = Hybla::new();
        h.init(&mut t);
        (h, t)
    }

    #[test]
    fn fraction_table_is_two_to_the_k_eighths() {
        for (k, &f) in FRACTIONS_128.iter().enumerate() {
            assert_eq!(f, (128.0 * 2f64.powf(k as f64 / 8.0)).floor() as u32);
        }
    }

    #[test]
    fn rho_is_rtt_over_25ms_at_least_one() {
        assert_eq!(started(50).0.rho_eighths(), 16); // rho 2
        assert_eq!(started(100).0.rho_eighths(), 32); // rho 4
        assert_eq!(started(60).0.rho_eighths(), 19); // 2.4 -> 19/8
        assert_eq!(started(10).0.rho_eighths(), 8); // below RTT0: rho = 1 (Reno)
                                                    // init sets cwnd = rho and the clamp.
        let (_, t) = started(100);
        assert_eq!((t.cwnd, t.cwnd_clamp), (4, 65_535));
    }

    #[test]
    fn congestion_avoidance_adds_rho_squared_per_rtt() {
        // RTT 100 ms: rho = 4, +16 packets per cwnd ACKs.
        let (mut h, mut t) = started(100);
        t.cwnd = 100;
        t.ssthresh = 50;
        ack_each(&mut h, &mut t, 100);
        // Continuous law dw/dack = 16/w: w = sqrt(100^2 + 2 * 16 * 100) = 115.3;
        // the 1/128 floor of rho^2 / cwnd costs about one packet.
        assert!((114..=115).contains(&t.cwnd), "cwnd {}", t.cwnd);
        // RTT 25 ms: rho = 1, Reno's 1/cwnd per ACK — but in Linux's 1/128
        // units: floor(128 / 100) = 1/128 per ACK, so +1 per 128 ACKs.
        let (mut h, mut t) = started(25);
        t.cwnd = 100;
        t.ssthresh = 50;
        assert_eq!(ack_each(&mut h, &mut t, 127), 100);
        assert_eq!(ack_each(&mut h, &mut t, 1), 101);
    }

    #[test]
    fn slow_start_adds_two_to_the_rho_minus_one_per_ack() {
        let (mut h, mut t) = started(100); // rho 4: +15 per ACK
        t.cwnd = 10;
        assert_eq!(ack_each(&mut h, &mut t, 1), 25);
        let (mut h, mut t) = started(60); // rho 2.375: 2^2.375 - 1 = 4.19 per ACK
        t.cwnd = 10;
        ack_each(&mut h, &mut t, 10);
        assert!((51..=52).contains(&t.cwnd), "cwnd {}", t.cwnd);
        // Clamped at ssthresh.
        let (mut h, mut t) = started(100);
        t.cwnd = 10;
        t.ssthresh = 12;
        assert_eq!(ack_each(&mut h, &mut t, 1), 12);
    }

    #[test]
    fn reno_outside_open_and_rho_follows_new_minimum_srtt() {
        let (mut h, mut t) = started(100);
        t.cwnd = 100;
        t.ssthresh = 50;
        h.set_state(&mut t, CaState::Recovery);
        assert_eq!(ack_each(&mut h, &mut t, 100), 101);
        assert_eq!(h.ssthresh(&t), 50);
        h.set_state(&mut t, CaState::Open);
        t.srtt_ns = 50 * MS;
        h.cong_avoid(&mut t, 1);
        assert_eq!(h.rho_eighths(), 16);
    }
}
