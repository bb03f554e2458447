//! DCCP receiver (RFC 4340) for CCID 2 (RFC 4341 §6).
//!
//! - Answers the Request (Kind::Syn) with a Response (Kind::SynAck) echoing
//!   its timestamp.
//! - Every data packet is delivered on arrival, in or out of order, once
//!   (DCCP is unreliable; there are no retransmissions to wait for).
//! - Sends one ACK per R data packets received (RFC 4340 §11.3: "at least one
//!   acknowledgement per R data packets"), R being the Ack Ratio the sender
//!   announces on its data packets. Each ACK is numbered (`Packet::seq`,
//!   DCCP ACKs have sequence numbers) and carries the greatest sequence
//!   number received (`Packet::ack`, RFC 4340's Acknowledgement Number); its
//!   Ack Vector goes through the [`AckVectorChannel`] (see dccp/mod.rs).
//! - No ACK timer: RFC 4341 §6.1 lets a receiver with fewer than R new
//!   packets wait; the sender's bound R <= ceil(cwnd/2) keeps the ACK clock
//!   running, and a tail with fewer than R packets is recovered by the RTO.

use crate::dccp::{AckVector, AckVectorChannel};
use crate::engine::{TimeNs, Timer};
use crate::packet::{Kind, Packet};

pub struct DccpReceiver {
    pub flow: u32,
    pub mss_bytes: u32,
    /// Never armed (DCCP has no delayed-ACK timer here); kept so the
    /// simulation's timer plumbing is the same for both transports.
    pub delack_timer: Timer,
    vectors: AckVectorChannel,
    /// Greatest sequence number received.
    gsr: Option<u64>,
    /// Data packets received since the last ACK.
    unacked: u32,
    pending: AckVector,
    next_ack_seq: u64,
    pub acks_sent: u64,
}

impl DccpReceiver {
    pub fn new(flow: u32, mss_bytes: u32, vectors: AckVectorChannel) -> DccpReceiver {
        DccpReceiver {
            flow,
            mss_bytes,
            delack_timer: Timer::default(),
            vectors,
            gsr: None,
            unacked: 0,
            pending: AckVector::default(),
            next_ack_seq: 0,
            acks_sent: 0,
        }
    }

    /// Handle an arriving packet; returns the number of data packets
    /// delivered to the application (0 or 1).
    pub fn on_packet(&mut self, now: TimeNs, p: &Packet, out: &mut Vec<Packet>) -> u64 {
        match p.kind {
            Kind::Syn => {
                let mut r = Packet::new(self.flow, Kind::SynAck, crate::config::ACK_WIRE_BYTES + 8);
                r.ts_val = now;
                r.ts_ecr = p.ts_val;
                out.push(r);
                0
            }
            Kind::Data => {
                let s = p.seq;
                self.gsr = Some(self.gsr.map_or(s, |g| g.max(s)));
                match self.pending.runs.last_mut() {
                    Some(run) if run.1 == s => run.1 += 1,
                    _ => self.pending.runs.push((s, s + 1)),
                }
                self.unacked += 1;
                let ratio = p.dccp_ack_ratio().max(1);
                if self.unacked >= ratio {
                    self.send_ack(now, p.ts_val, out);
                }
                1
            }
            _ => 0,
        }
    }

    fn send_ack(&mut self, now: TimeNs, ts_ecr: u64, out: &mut Vec<Packet>) {
        let mut a = Packet::new(self.flow, Kind::Ack, crate::config::ACK_WIRE_BYTES);
        a.seq = self.next_ack_seq;
        a.ts_val = now;
        a.ts_ecr = ts_ecr;
        let mut v = std::mem::take(&mut self.pending);
        v.ack_seq = self.next_ack_seq;
        v.ack_number = self.gsr.unwrap_or(0);
        self.vectors.borrow_mut().push_back(v);
        self.next_ack_seq += 1;
        self.unacked = 0;
        self.acks_sent += 1;
        out.push(a);
    }

    pub fn on_delack_timer(&mut self, _now: TimeNs, _out: &mut Vec<Packet>) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dccp::channel;

    fn data(seq: u64, ratio: u32) -> Packet {
        let mut p = Packet::new(0, Kind::Data, 1500);
        p.seq = seq;
        p.set_dccp_ack_ratio(ratio);
        p
    }

    #[test]
    fn acks_every_ack_ratio_packets_with_the_runs_received_since_the_last_ack() {
        let ch = channel();
        let mut r = DccpReceiver::new(0, 1448, ch.clone());
        let mut out = Vec::new();
        // R = 3; packets 0, 1, 3 arrive (2 lost): one ACK after the third arrival.
        assert_eq!(r.on_packet(1, &data(0, 3), &mut out), 1);
        r.on_packet(2, &data(1, 3), &mut out);
        assert!(out.is_empty());
        r.on_packet(3, &data(3, 3), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].kind, out[0].seq, ch.borrow().front().unwrap().ack_number), (Kind::Ack, 0, 3));
        assert_eq!(ch.borrow_mut().pop_front().unwrap(), AckVector { ack_seq: 0, ack_number: 3, runs: vec![(0, 2), (3, 4)] });
        // R = 1: every packet is ACKed, ACK numbers increase by one.
        out.clear();
        r.on_packet(4, &data(4, 1), &mut out);
        r.on_packet(5, &data(6, 1), &mut out);
        assert_eq!(out.iter().map(|a| a.seq).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(ch.borrow().iter().map(|v| v.runs.clone()).collect::<Vec<_>>(), vec![vec![(4, 5)], vec![(6, 7)]]);
    }
}
