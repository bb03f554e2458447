//! Drop-tail FIFO (Linux `pfifo` / `bfifo`): admit a packet unless the backlog
//! would exceed the packet limit or the byte limit; otherwise drop the arrival.
//!
//! Source: Linux net/sched/sch_fifo.c (pfifo: `qlen < limit`; bfifo:
//! `backlog + len <= limit`). Either limit may be absent (unbounded).

use super::fifo::Fifo;
use super::{DropReason, Qdisc};
use crate::engine::TimeNs;
use crate::packet::Packet;

/// Where drop-tail is specified.
pub const SOURCE: &str = "FIFO with tail drop: Linux sch_fifo (pfifo / bfifo)";

crate::declare_params! {
    /// Drop-tail's limits (experiment files: bottleneck.buffer or qdisc.limit); either may be unset (unbounded).
    pub struct DroptailConfig {
        /// Limit, packets.
        limit_packets: Option<u64> = None, Range::at_least(1.0);
        /// Limit, wire bytes.
        limit_bytes: Option<u64> = None, Range::at_least(1500.0);
    }
}

pub struct DropTail {
    fifo: Fifo,
}

impl DropTail {
    pub fn new(limit_packets: Option<u64>, limit_bytes: Option<u64>) -> Self {
        DropTail { fifo: Fifo::new(limit_packets, limit_bytes) }
    }

    pub fn from_config(c: &DroptailConfig) -> Self {
        DropTail::new(c.limit_packets, c.limit_bytes)
    }
}

impl Qdisc for DropTail {
    fn enqueue(&mut self, pkt: Packet, _now: TimeNs) -> Result<(), (Packet, DropReason)> {
        if self.fifo.would_overflow(pkt.wire_bytes) {
            return Err((pkt, DropReason::Overflow));
        }
        self.fifo.push(pkt);
        Ok(())
    }

    super::fifo::fifo_backlog!(fifo, dequeue);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn pkt(flow: u32, bytes: u32) -> Packet {
        Packet::new(flow, Kind::Data, bytes)
    }

    #[test]
    fn packet_limit_drops_the_arrival_and_keeps_fifo_order() {
        let mut q = DropTail::new(Some(2), None);
        assert!(q.enqueue(pkt(0, 1500), 0).is_ok());
        assert!(q.enqueue(pkt(1, 1500), 0).is_ok());
        let (d, why) = q.enqueue(pkt(2, 1500), 0).unwrap_err();
        assert_eq!((d.flow, why), (2, DropReason::Overflow));
        let mut dropped = vec![];
        assert_eq!(q.dequeue(0, &mut dropped).unwrap().flow, 0);
        assert_eq!(q.dequeue(0, &mut dropped).unwrap().flow, 1);
        assert!(q.dequeue(0, &mut dropped).is_none());
    }

    #[test]
    fn byte_limit_admits_up_to_exactly_the_limit() {
        let mut q = DropTail::new(None, Some(3000));
        assert!(q.enqueue(pkt(0, 1500), 0).is_ok());
        assert!(q.enqueue(pkt(0, 1500), 0).is_ok());
        assert!(q.enqueue(pkt(0, 52), 0).is_err());
        assert_eq!(q.len_bytes(), 3000);
    }

    #[test]
    fn conservation_in_equals_out_plus_dropped_plus_queued() {
        // Deterministic pseudo-random arrivals and departures.
        let mut q = DropTail::new(Some(17), Some(20_000));
        let (mut inp, mut out, mut drop) = (0u64, 0u64, 0u64);
        let mut x: u64 = 12345;
        let mut dropped = vec![];
        for _ in 0..100_000 {
            x = crate::rng::splitmix64(x);
            if x % 3 != 0 {
                inp += 1;
                if q.enqueue(pkt(0, 52 + (x % 1449) as u32), 0).is_err() {
                    drop += 1;
                }
            } else if q.dequeue(0, &mut dropped).is_some() {
                out += 1;
            }
        }
        assert_eq!(inp, out + drop + q.len_packets() as u64);
    }
}
