//! STEP marker: every arrival that finds the instantaneous queue above a
//! threshold is CE-marked (ECN-capable packets, if `ecn`) or dropped; below
//! the threshold nothing happens. This is RED configured as a step (min_th =
//! max_th = threshold, max_p = 1, w_q = 1), the "STEP" AQM of S3 and the
//! marking DCTCP was designed for.
//!
//! Threshold: in packets or bytes of backlog including the arrival; S3 sets
//! it to L_target = K x RTT x C (the experiment file converts `step = {k,
//! rtt}` or a time threshold with the link rate; docs/qdiscs.md).
//!
//! Sources: Fejes et al., "On the Incompatibility of Scalable Congestion
//! Controls over the Internet" (S3), section on AQMs;
//! Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, section 3.1
//! (mark when the instantaneous queue exceeds K); RFC 8257 section 3.
//! Linux has no STEP qdisc (S3 uses RED with equal thresholds).

use super::fifo::Fifo;
use super::{mark_or_drop, DropReason, Qdisc};

/// Where STEP is specified.
pub const SOURCE: &str = "STEP marker: DCTCP's K (RFC 8257 sec. 3.1), S3's step AQM";

super::limited_queue_params! {
    /// STEP's parameters: the threshold on the instantaneous queue.
    pub struct StepConfig {
        /// Threshold, packets (exactly one of threshold_packets and threshold_bytes).
        threshold_packets: Option<u64> = None, Range::at_least(1.0);
        /// Threshold, wire bytes.
        threshold_bytes: Option<u64> = None, Range::at_least(1.0);
        /// Mark ECN-capable packets (S3's STEP marks); Not-ECT packets are dropped either way.
        ecn: bool = true, Range::Any;
    }
    check = check_step;
}

fn check_step(c: &StepConfig) -> Result<(), crate::params::ParamError> {
    if c.threshold_packets.is_some() == c.threshold_bytes.is_some() {
        return Err(crate::params::ParamError::new("threshold", "exactly one of threshold_packets and threshold_bytes is required"));
    }
    Ok(())
}
use crate::engine::TimeNs;
use crate::packet::Packet;

#[derive(Debug, Clone, Default)]
pub struct StepStats {
    pub marks: u64,
    pub drops: u64,
}

pub struct Step {
    c: StepConfig,
    fifo: Fifo,
    pub stats: StepStats,
}

impl Step {
    pub fn new(c: &StepConfig) -> Self {
        Step { c: c.clone(), fifo: Fifo::new(c.limit_packets, c.limit_bytes), stats: StepStats::default() }
    }

    /// Would an arrival of `size` bytes take the queue above the threshold?
    fn above(&self, size: u32) -> bool {
        match (self.c.threshold_packets, self.c.threshold_bytes) {
            (Some(p), _) => self.fifo.len() as u64 + 1 > p,
            (None, Some(b)) => self.fifo.bytes() + size as u64 > b,
            (None, None) => false,
        }
    }
}

impl Qdisc for Step {
    fn enqueue(&mut self, mut pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        if self.fifo.would_overflow(pkt.wire_bytes) {
            return Err((pkt, DropReason::Overflow));
        }
        if self.above(pkt.wire_bytes) {
            pkt = mark_or_drop(pkt, self.c.ecn, &mut self.stats.marks, &mut self.stats.drops)?;
        }
        self.fifo.enqueue_at(pkt, now)
    }

    super::fifo::fifo_backlog!(fifo, dequeue);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, Kind};

    #[test]
    fn marks_every_packet_above_the_threshold_and_none_below() {
        let c: StepConfig = serde_json::from_str(r#"{"threshold_packets":10}"#).unwrap();
        let mut q = Step::new(&c);
        let mut d = vec![];
        let mut rng = 12345u64;
        // Random walk of the queue between 0 and 40 packets; check every arrival.
        for _ in 0..50_000 {
            rng = crate::rng::splitmix64(rng);
            if rng % 2 == 0 || q.len_packets() == 0 {
                let before = q.len_packets();
                let mut p = Packet::new(0, Kind::Data, 1500);
                p.ecn = Ecn::Ect1;
                q.enqueue(p, 0).unwrap();
                let marked = q.fifo.back().unwrap().ecn == Ecn::Ce;
                assert_eq!(marked, before + 1 > 10, "queue {before} before the arrival");
            } else {
                q.dequeue(0, &mut d);
            }
            while q.len_packets() > 40 {
                q.dequeue(0, &mut d);
            }
        }
        // Not-ECT packets: the first 10 pass, the 11th is dropped as an AQM drop.
        let mut q = Step::new(&c);
        for _ in 0..10 {
            q.enqueue(Packet::new(0, Kind::Data, 1500), 0).unwrap();
        }
        assert_eq!(q.enqueue(Packet::new(0, Kind::Data, 1500), 0).unwrap_err().1, DropReason::Aqm);
        assert_eq!(q.stats.drops, 1);
    }

    #[test]
    fn byte_threshold() {
        let c: StepConfig = serde_json::from_str(r#"{"threshold_bytes":3000}"#).unwrap();
        let mut q = Step::new(&c);
        let ect = || {
            let mut p = Packet::new(0, Kind::Data, 1500);
            p.ecn = Ecn::Ect0;
            p
        };
        q.enqueue(ect(), 0).unwrap();
        q.enqueue(ect(), 0).unwrap();
        q.enqueue(ect(), 0).unwrap();
        let e: Vec<Ecn> = q.fifo.iter().map(|p| p.ecn).collect();
        assert_eq!(e, vec![Ecn::Ect0, Ecn::Ect0, Ecn::Ce]);
    }
}
