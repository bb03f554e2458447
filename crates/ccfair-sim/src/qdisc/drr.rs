//! Per-flow fair queueing by deficit round robin, without AQM: the "perfect
//! isolation" reference. Every flow has its own FIFO (exact flow id, no
//! hashing, so no collisions). Active flows are served round robin; a flow at
//! the head of the list sends its head packet if that fits its deficit,
//! otherwise it gets one more `quantum` of deficit and goes to the tail (Linux
//! sch_drr's dequeue). A flow joining the active list starts with one quantum.
//! Each flow thus gets `quantum` bytes per round: equal byte shares whatever
//! the packet sizes. When the shared limit is exceeded, packets are dropped
//! from the head of the longest queue (bytes) until the limits hold, so a
//! flow that stays within its share is never dropped.
//!
//! Sources: M. Shreedhar, G. Varghese, "Efficient Fair Queueing Using Deficit
//! Round Robin", SIGCOMM 1995 (section 3, deficit counters, quantum); Linux
//! net/sched/sch_drr.c (`drr_dequeue`: `len <= deficit` or add quantum and
//! move to tail; new classes start with deficit = quantum). Longest-queue
//! drop: McKenney's SFQ / Linux sch_fq_codel `fq_codel_drop` (from the head).
//! Default quantum: 1514 bytes (one Ethernet MTU frame, as Linux).

use crate::ring::Ring;

use super::{DropReason, Qdisc};

/// Where FQ-DRR is specified.
pub const SOURCE: &str = "Per-flow deficit round robin, no AQM: Shreedhar & Varghese, SIGCOMM 1995";

super::limited_queue_params! {
    /// Per-flow DRR's parameters.
    pub struct FqDrrConfig {
        /// DRR quantum (Linux: the device MTU).
        quantum_bytes: u64 = 1514, Range::above(0.0);
    }
}
use crate::engine::TimeNs;
use crate::packet::Packet;

#[derive(Default)]
struct FlowQ {
    q: Ring<Packet>,
    bytes: u64,
    deficit: u64,
    active: bool,
}

pub struct FqDrr {
    limit_packets: Option<u64>,
    limit_bytes: Option<u64>,
    in_service: super::InService,
    quantum: u64,
    flows: Vec<FlowQ>,
    active: Ring<u32>,
    packets: u64,
    bytes: u64,
    pending_drops: Vec<(Packet, DropReason)>,
}

impl FqDrr {
    pub fn new(c: &FqDrrConfig) -> Self {
        FqDrr {
            limit_packets: c.limit_packets,
            limit_bytes: c.limit_bytes,
            in_service: super::InService::default(),
            quantum: c.quantum_bytes.max(1),
            flows: Vec::new(),
            active: Ring::new(),
            packets: 0,
            bytes: 0,
            pending_drops: Vec::new(),
        }
    }

    fn over_limit(&self) -> bool {
        let s = self.in_service;
        self.limit_packets.is_some_and(|l| self.packets + s.packets > l) || self.limit_bytes.is_some_and(|l| self.bytes + s.bytes > l)
    }
}

impl Qdisc for FqDrr {
    fn enqueue(&mut self, mut pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        let f = pkt.flow as usize;
        if f >= self.flows.len() {
            self.flows.resize_with(f + 1, FlowQ::default);
        }
        pkt.enqueue_ns = now;
        let fq = &mut self.flows[f];
        fq.bytes += pkt.wire_bytes as u64;
        fq.q.push_back(pkt);
        self.packets += 1;
        self.bytes += pkt.wire_bytes as u64;
        if !fq.active {
            fq.active = true;
            fq.deficit = self.quantum;
            self.active.push_back(f as u32);
        }
        while self.over_limit() {
            // Longest queue in bytes (lowest flow id on ties); drop its head.
            let (i, _) = self.flows.iter().enumerate().max_by_key(|(i, q)| (q.bytes, std::cmp::Reverse(*i))).expect("flows");
            let fq = &mut self.flows[i];
            let p = fq.q.pop_front().expect("longest queue is non-empty");
            fq.bytes -= p.wire_bytes as u64;
            self.packets -= 1;
            self.bytes -= p.wire_bytes as u64;
            self.pending_drops.push((p, DropReason::Overflow));
            // An emptied flow stays in the active list; dequeue skips and removes it.
        }
        Ok(())
    }

    super::pending_drops!(pending_drops);

    fn dequeue(&mut self, _now: TimeNs, _dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        loop {
            let &f = self.active.front()?;
            let fq = &mut self.flows[f as usize];
            let Some(head) = fq.q.front() else {
                fq.active = false;
                fq.deficit = 0;
                self.active.pop_front();
                continue;
            };
            let len = head.wire_bytes as u64;
            if len <= fq.deficit {
                fq.deficit -= len;
                let p = fq.q.pop_front().expect("head");
                fq.bytes -= len;
                self.packets -= 1;
                self.bytes -= len;
                if fq.q.is_empty() {
                    fq.active = false;
                    fq.deficit = 0;
                    self.active.pop_front();
                }
                return Some(p);
            }
            fq.deficit += self.quantum;
            self.active.pop_front();
            self.active.push_back(f);
        }
    }

    super::fifo::counted_backlog!(|q| q.packets as usize);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    fn drr(json: &str) -> FqDrr {
        FqDrr::new(&serde_json::from_str(json).unwrap())
    }

    #[test]
    fn service_is_quantum_proportional_in_bytes() {
        // Shreedhar & Varghese: each backlogged flow gets `quantum` bytes per
        // round, so byte shares are equal whatever the packet sizes, and after
        // any number of rounds a flow's service differs from quantum x rounds
        // by less than one maximum packet.
        for quantum in [500u64, 1514, 4000] {
            let mut q = drr(&format!(r#"{{"limit_packets":100000,"quantum_bytes":{quantum}}}"#));
            let sizes = [1500u32, 700, 64];
            for (f, &s) in sizes.iter().enumerate() {
                // 600 kB backlogged per flow: more than any flow can get below
                for _ in 0..600_000 / s {
                    q.enqueue(Packet::new(f as u32, Kind::Data, s), 0).unwrap();
                }
            }
            let mut served = [0u64; 3];
            let mut d = vec![];
            let mut total = 0;
            while total < 1_000_000 {
                let p = q.dequeue(0, &mut d).unwrap();
                served[p.flow as usize] += p.wire_bytes as u64;
                total += p.wire_bytes as u64;
            }
            let mean = total as f64 / 3.0;
            for s in served {
                assert!((s as f64 - mean).abs() <= (quantum + 1500) as f64, "quantum {quantum}: {served:?}");
            }
        }
    }

    #[test]
    fn overflow_drops_from_the_longest_queue_only() {
        let mut q = drr(r#"{"limit_packets":20}"#);
        for _ in 0..15 {
            q.enqueue(Packet::new(0, Kind::Data, 1500), 0).unwrap();
        }
        for _ in 0..10 {
            q.enqueue(Packet::new(1, Kind::Data, 1500), 0).unwrap();
        }
        let mut d = vec![];
        q.take_enqueue_drops(&mut d);
        assert_eq!(d.len(), 5);
        assert!(d.iter().all(|(p, r)| p.flow == 0 && *r == DropReason::Overflow));
        assert_eq!(q.flows[0].q.len(), 10);
        assert_eq!(q.flows[1].q.len(), 10);
    }
}
