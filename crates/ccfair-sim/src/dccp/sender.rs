//! DCCP sender with CCID 2 (RFC 4340, RFC 4341): datagrams, no retransmission.
//!
//! - Handshake: Request (Kind::Syn) / Response; its RTT seeds the estimator;
//!   a lost Request is retried with RTO backoff as TCP's SYN.
//! - Sends a new datagram (fresh sequence number) whenever pipe < cwnd
//!   (RFC 4341 §5: pipe = packets sent and neither acknowledged nor lost).
//!   Each data packet carries the current Ack Ratio (see dccp/mod.rs).
//! - Each ACK's Ack Vector marks packets acknowledged. Loss detection
//!   (RFC 4341 §5): a packet is lost when at least NUMDUPACK = 3 packets sent
//!   after it have been acknowledged, the datagram analogue of TCP's three
//!   duplicate ACKs. Losses of packets sent before the last reduction belong
//!   to the same congestion event (one halving per window).
//! - Lost ACKs (gaps in ACK sequence numbers) feed the Ack Ratio rule.
//! - RTT: one sample per ACK, from the newest packet it acknowledges (the
//!   one that triggered it); RFC 6298 estimator with Linux's 200 ms minimum
//!   RTO (tcp/rtt.rs), as Linux ccid2 `ccid2_rtt_estimator`. The timer runs
//!   while packets are in flight and restarts when an ACK acknowledges new
//!   data; on expiry every packet in flight is declared lost (pipe = 0), CCID 2
//!   sets cwnd = 1 and the RTO backs off (RFC 4341 §5, RFC 6298 §5.5).
//! Constants: `NUMDUPACK` (packets).

use std::collections::VecDeque;

use crate::dccp::ccid2::Ccid2;
use crate::dccp::AckVectorChannel;
use crate::engine::{TimeNs, Timer};
use crate::packet::{Kind, Packet};
use crate::tcp::rtt::{RttEstimator, RTO_INIT_NS, RTO_MAX_NS};
use crate::tcp::sender::SenderStats;

/// RFC 4341 §5: packets acknowledged after a packet before it counts as lost.
pub const NUMDUPACK: usize = 3;

#[derive(Debug, Clone)]
pub struct DccpSenderConfig {
    pub flow: u32,
    pub mss_bytes: u32,
    pub wire_bytes: u32,
    pub init_cwnd_pkts: u32,
    pub stop_ns: Option<u64>,
    /// Finite flow: bytes to send (None = bulk).
    pub size_bytes: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Out,
    Acked,
    Lost,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conn {
    Idle,
    Requesting,
    Open,
}

pub struct DccpSender {
    pub cfg: DccpSenderConfig,
    pub cc: Ccid2,
    pub stats: SenderStats,
    pub rto_timer: Timer,
    /// Never armed (no pacing, no application timer); uniform timer plumbing.
    pub pace_timer: Timer,
    /// Never armed (no reordering timer); uniform timer plumbing.
    pub reo_timer: Timer,
    conn: Conn,
    vectors: AckVectorChannel,
    next_seq: u64,
    /// Sequence number of `segs[0]`.
    base: u64,
    /// (send time, state) of every packet from `base` to `next_seq`.
    segs: VecDeque<(TimeNs, St)>,
    pipe: u32,
    /// The NUMDUPACK highest acknowledged sequence numbers, ascending.
    top_acked: [Option<u64>; NUMDUPACK],
    /// Packets below this were already examined for loss.
    loss_scan: u64,
    /// Losses of packets below this belong to the last congestion event.
    recover_seq: u64,
    rtt: RttEstimator,
    backoff: u32,
    req_sent_ns: TimeNs,
    req_retries: u32,
    next_ack_seq: u64,
}

impl DccpSender {
    pub fn new(cfg: DccpSenderConfig, vectors: AckVectorChannel) -> DccpSender {
        DccpSender {
            cc: Ccid2::new(cfg.init_cwnd_pkts),
            cfg,
            stats: SenderStats::default(),
            rto_timer: Timer::default(),
            pace_timer: Timer::default(),
            reo_timer: Timer::default(),
            conn: Conn::Idle,
            vectors,
            next_seq: 0,
            base: 0,
            segs: VecDeque::with_capacity(64),
            pipe: 0,
            top_acked: [None; NUMDUPACK],
            loss_scan: 0,
            recover_seq: 0,
            rtt: RttEstimator::default(),
            backoff: 0,
            req_sent_ns: 0,
            req_retries: 0,
            next_ack_seq: 0,
        }
    }

    /// Packets in flight (RFC 4341 "pipe").
    pub fn in_flight(&self) -> u32 {
        self.pipe
    }

    pub fn srtt_ns(&self) -> u64 {
        self.rtt.srtt_ns
    }

    pub fn start(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        self.conn = Conn::Requesting;
        self.send_request(now, out);
    }

    fn send_request(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        self.req_sent_ns = now;
        let mut p = Packet::new(self.cfg.flow, Kind::Syn, crate::config::ACK_WIRE_BYTES + 8);
        p.ts_val = now;
        out.push(p);
        let rto = RTO_INIT_NS.saturating_mul(1 << self.req_retries.min(10)).min(RTO_MAX_NS);
        self.rto_timer.arm(now + rto);
    }

    fn has_data(&self, now: TimeNs) -> bool {
        if self.cfg.stop_ns.is_some_and(|s| now >= s) {
            return false;
        }
        let mss = self.cfg.mss_bytes as u64;
        self.cfg.size_bytes.is_none_or(|b| self.next_seq < b.div_ceil(mss))
    }

    fn rto_ns(&self) -> u64 {
        self.rtt.backed_off_rto_ns(self.backoff)
    }

    fn try_send(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        if self.conn != Conn::Open {
            return;
        }
        while self.pipe < self.cc.cwnd && self.has_data(now) {
            let mut p = Packet::new(self.cfg.flow, Kind::Data, self.cfg.wire_bytes);
            p.seq = self.next_seq;
            p.set_dccp_ack_ratio(self.cc.ack_ratio);
            p.ts_val = now;
            out.push(p);
            self.segs.push_back((now, St::Out));
            self.next_seq += 1;
            self.pipe += 1;
            self.stats.sent_packets += 1;
            self.cc.on_packet_sent();
            if !self.rto_timer.is_armed() {
                self.rto_timer.arm(now + self.rto_ns());
            }
        }
    }

    fn rtt_sample(&mut self, sample_ns: u64) {
        let s = sample_ns.max(1);
        self.rtt.update(s);
        self.stats.min_rtt_ns = if self.stats.rtt_samples == 0 { s } else { self.stats.min_rtt_ns.min(s) };
        self.stats.rtt_sum_ns += s as u128;
        self.stats.rtt_samples += 1;
    }

    fn note_acked(&mut self, seq: u64) {
        // Keep the NUMDUPACK highest acknowledged sequence numbers (ascending).
        if self.top_acked.contains(&Some(seq)) {
            return;
        }
        if let Some(lowest) = self.top_acked[0] {
            if seq < lowest {
                return;
            }
        }
        self.top_acked[0] = Some(seq);
        self.top_acked.sort_by_key(|t| t.map_or(0, |v| v + 1));
    }

    pub fn on_ack(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) {
        match p.kind {
            Kind::SynAck if self.conn == Conn::Requesting => {
                self.conn = Conn::Open;
                self.rtt_sample(now.saturating_sub(p.ts_ecr));
                self.rto_timer.disarm();
                if self.req_retries > 0 {
                    self.cc = Ccid2::new(1);
                }
                self.try_send(now, out);
            }
            Kind::Ack => self.on_data_ack(now, p, out),
            _ => {}
        }
    }

    fn on_data_ack(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) {
        let v = self.vectors.borrow_mut().pop_front().expect("an Ack Vector for every DCCP ACK");
        debug_assert_eq!(v.ack_seq, p.seq, "Ack Vectors pair with ACKs in order");
        // Lost ACKs: gaps in the ACK sequence numbers (RFC 4341 §6.1.2).
        if p.seq > self.next_ack_seq {
            self.cc.on_ack_loss(p.seq - self.next_ack_seq);
        }
        self.next_ack_seq = self.next_ack_seq.max(p.seq + 1);

        let mut newly = 0u32;
        let mut newest: Option<(u64, TimeNs)> = None;
        for &(a, b) in &v.runs {
            for seq in a.max(self.base)..b {
                let i = (seq - self.base) as usize;
                if i >= self.segs.len() {
                    break;
                }
                let (sent, st) = self.segs[i];
                if st == St::Acked {
                    continue;
                }
                if st == St::Out {
                    self.pipe -= 1;
                    newly += 1;
                }
                self.segs[i].1 = St::Acked;
                self.note_acked(seq);
                if newest.is_none_or(|(s, _)| seq > s) {
                    newest = Some((seq, sent));
                }
            }
        }
        if let Some((_, sent)) = newest {
            self.rtt_sample(now.saturating_sub(sent));
        }
        if newly > 0 {
            self.cc.on_ack(newly);
            self.backoff = 0;
        }
        self.detect_losses();
        while let Some(&(_, st)) = self.segs.front() {
            if st == St::Out || self.base >= self.loss_scan {
                break;
            }
            self.segs.pop_front();
            self.base += 1;
        }
        if self.pipe == 0 {
            self.rto_timer.disarm();
        } else if newly > 0 {
            self.rto_timer.arm(now + self.rto_ns());
        }
        self.try_send(now, out);
    }

    /// RFC 4341 §5: every packet below the NUMDUPACK-th highest acknowledged
    /// one that is still outstanding is lost.
    fn detect_losses(&mut self) {
        let Some(limit) = self.top_acked[0] else { return };
        let from = self.loss_scan.max(self.base);
        for seq in from..limit {
            let i = (seq - self.base) as usize;
            if self.segs[i].1 == St::Out {
                self.segs[i].1 = St::Lost;
                self.pipe -= 1;
                self.stats.losses_detected += 1;
                if seq >= self.recover_seq {
                    self.cc.on_congestion();
                    self.recover_seq = self.next_seq;
                    self.stats.recoveries += 1;
                }
            }
        }
        self.loss_scan = self.loss_scan.max(limit);
    }

    pub fn on_rto(&mut self, now: TimeNs, out: &mut Vec<Packet>) {
        match self.conn {
            Conn::Idle => {}
            Conn::Requesting => {
                self.req_retries += 1;
                self.send_request(now, out);
            }
            Conn::Open => {
                if self.pipe == 0 {
                    return;
                }
                self.stats.rto_count += 1;
                for s in self.segs.iter_mut().filter(|s| s.1 == St::Out) {
                    s.1 = St::Lost;
                    self.stats.losses_detected += 1;
                }
                self.pipe = 0;
                self.cc.on_timeout();
                self.recover_seq = self.next_seq;
                self.backoff = (self.backoff + 1).min(20);
                self.try_send(now, out);
                if self.pipe > 0 {
                    self.rto_timer.arm(now + self.rto_ns());
                }
            }
        }
    }

    pub fn on_pace_timer(&mut self, _now: TimeNs, _out: &mut Vec<Packet>) {}

    pub fn on_reo_timer(&mut self, _now: TimeNs, _out: &mut Vec<Packet>) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dccp::receiver::DccpReceiver;
    use crate::dccp::{channel, AckVector};

    fn cfg(init_cwnd: u32) -> DccpSenderConfig {
        DccpSenderConfig { flow: 0, mss_bytes: 1448, wire_bytes: 1500, init_cwnd_pkts: init_cwnd, stop_ns: None, size_bytes: None }
    }

    /// An open connection with an RTT sample of 100 ms.
    fn open(init_cwnd: u32) -> (DccpSender, AckVectorChannel, Vec<Packet>) {
        let ch = channel();
        let mut s = DccpSender::new(cfg(init_cwnd), ch.clone());
        let mut out = Vec::new();
        s.start(0, &mut out);
        let mut syn_ack = Packet::new(0, Kind::SynAck, 60);
        syn_ack.ts_ecr = 0;
        out.clear();
        s.on_ack(100_000_000, &syn_ack, &mut out);
        (s, ch, out)
    }

    /// Deliver an ACK reporting `runs` directly to the sender.
    fn ack(s: &mut DccpSender, ch: &AckVectorChannel, ack_seq: u64, runs: Vec<(u64, u64)>, now: TimeNs) -> Vec<Packet> {
        ch.borrow_mut().push_back(AckVector { ack_seq, ack_number: 0, runs });
        let mut a = Packet::new(0, Kind::Ack, 60);
        a.seq = ack_seq;
        let mut out = Vec::new();
        s.on_ack(now, &a, &mut out);
        out
    }

    #[test]
    fn sends_a_window_of_fresh_datagrams_with_the_ack_ratio() {
        let (s, _, out) = open(4);
        assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        assert!(out.iter().all(|p| p.kind == Kind::Data && p.dccp_ack_ratio() == 2));
        assert_eq!(s.in_flight(), 4);
    }

    #[test]
    fn a_packet_is_lost_only_when_three_later_packets_are_acked() {
        let (mut s, ch, _) = open(10);
        s.cc.ssthresh = 10; // congestion avoidance: ACKs do not change cwnd here
                            // Packet 2 missing; 3 and 4 acknowledged: only two later packets, not lost yet.
        ack(&mut s, &ch, 0, vec![(0, 2), (3, 5)], 200_000_000);
        assert_eq!(s.stats.losses_detected, 0);
        assert_eq!(s.cc.cwnd, 10);
        // Packet 5 acknowledged: the third after 2 -> 2 is lost, cwnd halves once.
        let sent = ack(&mut s, &ch, 1, vec![(5, 6)], 210_000_000);
        assert_eq!(s.stats.losses_detected, 1);
        assert_eq!((s.cc.cwnd, s.cc.ssthresh), (5, 5));
        // The first ACK let 4 new packets go (pipe 6 < 10); now pipe =
        // 14 sent - 5 acked - 1 lost = 8 >= cwnd 5: nothing is sent.
        assert!(sent.is_empty());
        assert_eq!(s.in_flight(), 8);
    }

    #[test]
    fn losses_in_the_same_window_halve_once_and_a_later_window_halves_again() {
        let (mut s, ch, _) = open(20);
        s.cc.ssthresh = 20;
        // Packets 1 and 3 lost in the first window.
        ack(&mut s, &ch, 0, vec![(0, 1), (2, 3), (4, 8)], 200_000_000);
        assert_eq!(s.stats.losses_detected, 2);
        assert_eq!(s.cc.cwnd, 10, "one halving for two losses in one window");
        assert_eq!(s.stats.recoveries, 1);
        // ACK the rest of the first window; the sender keeps pipe < cwnd.
        ack(&mut s, &ch, 1, vec![(8, 20)], 210_000_000);
        let first_new = 20;
        assert!(s.next_seq > first_new);
        // A packet sent after the reduction is lost: a new congestion event.
        let hi = s.next_seq;
        ack(&mut s, &ch, 2, vec![(first_new + 1, hi)], 300_000_000);
        assert_eq!(s.stats.recoveries, 2);
        // cwnd grew 10 -> 11 -> 12 in congestion avoidance, then halved.
        assert_eq!(s.cc.cwnd, 6);
    }

    #[test]
    fn timeout_declares_everything_lost_and_restarts_from_one_packet() {
        let (mut s, _, _) = open(10);
        let mut out = Vec::new();
        s.on_rto(400_000_000, &mut out);
        assert_eq!(s.stats.rto_count, 1);
        assert_eq!(s.stats.losses_detected, 10);
        assert_eq!((s.cc.cwnd, s.cc.ssthresh), (1, 5));
        assert_eq!(out.len(), 1, "cwnd 1: one new datagram (no retransmission)");
        assert_eq!(out[0].seq, 10);
        assert_eq!(out[0].dccp_ack_ratio(), 1, "Ack Ratio clamped to ceil(cwnd/2) = 1");
        // The RTO backed off: 100 ms SRTT + 200 ms min = 300 ms, doubled.
        assert_eq!(s.rto_timer.deadline(), Some(400_000_000 + 600_000_000));
    }

    #[test]
    fn lost_acks_double_the_ack_ratio() {
        let (mut s, ch, _) = open(10);
        // ACK numbers 0 then 3: ACKs 1 and 2 were lost.
        ack(&mut s, &ch, 0, vec![(0, 2)], 200_000_000);
        assert_eq!(s.cc.ack_ratio, 2);
        ack(&mut s, &ch, 3, vec![(2, 4)], 210_000_000);
        assert_eq!(s.cc.ack_ratio, 4);
    }

    #[test]
    fn sender_and_receiver_exchange_without_loss_and_slow_start_doubles_per_round() {
        let ch = channel();
        let mut s = DccpSender::new(cfg(4), ch.clone());
        let mut r = DccpReceiver::new(0, 1448, ch.clone());
        let mut to_r = Vec::new();
        let mut to_s = Vec::new();
        s.start(0, &mut to_r);
        let mut now = 0;
        let mut delivered = 0;
        let mut flights = Vec::new();
        for _ in 0..6 {
            now += 50_000_000;
            let data: Vec<Packet> = std::mem::take(&mut to_r);
            flights.push(data.iter().filter(|p| p.kind == Kind::Data).count());
            for p in &data {
                delivered += r.on_packet(now, p, &mut to_s);
            }
            now += 50_000_000;
            for a in std::mem::take(&mut to_s) {
                s.on_ack(now, &a, &mut to_r);
            }
        }
        // Round 0 is the Request; then 4, 8, 16, 32, 64 packets (R = 2, two per ACK).
        assert_eq!(flights, vec![0, 4, 8, 16, 32, 64]);
        assert_eq!(delivered, 4 + 8 + 16 + 32 + 64);
        assert_eq!(s.stats.losses_detected, 0);
        assert!(ch.borrow().is_empty());
    }
}
