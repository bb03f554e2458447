//! Queue disciplines at the bottleneck: a small trait, one file per discipline.
//!
//! The bottleneck link calls `enqueue` when a packet arrives and `dequeue`
//! whenever it is ready to transmit. A discipline may drop at enqueue (the
//! packet is handed back) or at dequeue (AQMs such as CoDel push dropped
//! packets into `dropped`), and may ECN-mark packets it forwards.

use crate::config::QdiscConfig;
use crate::engine::TimeNs;
use crate::packet::{Ecn, Packet};

pub mod codel;
pub mod drr;
pub mod droptail;
pub mod fifo;
pub mod fq_codel;
pub mod pie;
pub mod red;
pub mod step;
pub mod dualpi2;
pub mod pi2;
pub mod csaqm;
pub mod ppv;
pub mod rrmqs;

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full.
    Overflow,
    /// The AQM decided to drop.
    Aqm,
}

pub trait Qdisc: Send {
    /// Admit `pkt` or hand it back as dropped.
    fn enqueue(&mut self, pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)>;
    /// Next packet to transmit; packets the discipline drops on the way go to `dropped`.
    fn dequeue(&mut self, now: TimeNs, dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet>;
    /// Backlog in packets.
    fn len_packets(&self) -> usize;
    /// Backlog in bytes (wire size).
    fn len_bytes(&self) -> u64;
    /// Packets other than the arrival that the last `enqueue` dropped (e.g.
    /// FQ-CoDel's batch drop from the fattest queue). Called after every enqueue.
    fn take_enqueue_drops(&mut self, _dropped: &mut Vec<(Packet, DropReason)>) {}
    /// The run has `n` CCA classes (`Packet::cca_class < n`). Called once after `build`.
    fn set_classes(&mut self, _n: usize) {}
    /// Flow `flow` completed (its last byte was delivered): the gateway's view of its FIN.
    fn flow_finished(&mut self, _flow: u32, _now: TimeNs) {}
    /// The measurement log of disciplines that keep one (RRMQS's flow meter), at the end of the run.
    fn take_meter(&mut self, _now: TimeNs) -> Option<crate::result::MeterResult> {
        None
    }
}

/// CE-mark `p` if it is ECN-capable; false for Not-ECT (the caller drops it).
/// Like Linux INET_ECN_set_ce: an already CE-marked packet counts as marked.
pub fn mark_ce(p: &mut Packet) -> bool {
    match p.ecn {
        Ecn::Ect0 | Ecn::Ect1 | Ecn::Ce => {
            p.ecn = Ecn::Ce;
            true
        }
        Ecn::NotEct => false,
    }
}

/// Build the discipline; `seed` is the run seed (randomised disciplines draw
/// from the `rng::stream::QDISC` stream), `rate_bps` the link it feeds.
pub fn build(cfg: &QdiscConfig, seed: u64, rate_bps: u64) -> Box<dyn Qdisc> {
    use crate::rng::{derive_seed, stream};
    match cfg {
        QdiscConfig::Droptail { limit_packets, limit_bytes } => {
            Box::new(droptail::DropTail::new(*limit_packets, *limit_bytes))
        }
        QdiscConfig::Red(c) => Box::new(red::Red::new(c, seed, rate_bps)),
        QdiscConfig::Step(c) => Box::new(step::Step::new(c)),
        QdiscConfig::Codel(c) => Box::new(codel::Codel::new(c)),
        QdiscConfig::FqCodel(c) => Box::new(fq_codel::FqCodel::new(c, seed)),
        QdiscConfig::Pie(c) => Box::new(pie::Pie::new(c, seed)),
        QdiscConfig::FqDrr(c) => Box::new(drr::FqDrr::new(c)),
        QdiscConfig::Pi2 { .. } => Box::new(pi2::Pi2::from_config(cfg, derive_seed(seed, stream::QDISC))),
        QdiscConfig::DualPi2 { .. } => Box::new(dualpi2::DualPi2::from_config(cfg, derive_seed(seed, stream::QDISC))),
        QdiscConfig::Csaqm(c) => Box::new(csaqm::Csaqm::new(c, derive_seed(seed, stream::QDISC), rate_bps)),
        QdiscConfig::Rrmqs(c) => Box::new(rrmqs::Rrmqs::new(c, derive_seed(seed, stream::QDISC))),
    }
}

#[cfg(test)]
mod conservation_tests {
    //! Conservation for every discipline: packets in = out + dropped + queued,
    //! for seeded random traffic (random flows, sizes, ECN codepoints, arrival
    //! and departure times), checked after every operation.
    use super::*;
    use crate::config::*;
    use crate::packet::Kind;

    fn all() -> Vec<QdiscConfig> {
        let j = |s: &str| serde_json::from_str::<QdiscConfig>(s).unwrap();
        vec![
            QdiscConfig::Droptail { limit_packets: Some(40), limit_bytes: None },
            j(r#"{"kind":"red","limit_packets":40,"min_th":5,"max_th":15,"max_p":0.1,"w_q":0.02}"#),
            j(r#"{"kind":"red","limit_bytes":60000,"byte_mode":true,"gentle":true,"ecn":true,"w_q":0.02}"#),
            j(r#"{"kind":"step","limit_packets":40,"threshold_packets":10}"#),
            j(r#"{"kind":"step","limit_packets":40,"threshold_bytes":9000,"ecn":false}"#),
            j(r#"{"kind":"codel","limit_packets":40,"target_ns":1000000,"interval_ns":20000000,"ecn":true}"#),
            j(r#"{"kind":"codel","limit_packets":40,"target_ns":1000000,"interval_ns":20000000}"#),
            j(r#"{"kind":"fq_codel","limit_packets":40,"flows":8,"target_ns":1000000,"interval_ns":20000000}"#),
            j(r#"{"kind":"fq_codel","limit_packets":1000,"memory_limit_bytes":30000,"flows":4,"ecn":false}"#),
            j(r#"{"kind":"pie","limit_packets":40,"target_ns":2000000,"tupdate_ns":2000000,"burst_ns":0}"#),
            j(r#"{"kind":"pie","limit_packets":40,"ecn":true,"derandomize":false,"target_ns":2000000,"tupdate_ns":2000000,"burst_ns":0}"#),
            j(r#"{"kind":"fq_drr","limit_packets":40}"#),
            j(r#"{"kind":"fq_drr","limit_bytes":30000,"quantum_bytes":300}"#),
            j(r#"{"kind":"pi2","limit_packets":40,"target_ns":2000000,"tupdate_ns":2000000}"#),
            j(r#"{"kind":"dualpi2","limit_packets":40,"target_ns":2000000,"tupdate_ns":2000000}"#),
            j(r#"{"kind":"dualpi2","limit_packets":40,"target_ns":2000000,"tupdate_ns":2000000,"ramp_range_ns":500000,"drop_overload":false}"#),
            j(r#"{"kind":"csaqm","limit_packets":40,"target_ns":2000000,"update_ns":1000000,"drop_above":2.0}"#),
            j(r#"{"kind":"csaqm","limit_bytes":30000,"target_ns":1000000,"ecn":false,"weights":[1,2,3]}"#),
            j(r#"{"kind":"rrmqs","limit_packets":40,"measure_limit_packets":2,"p":0.2,"window_ns":20000000}"#),
            j(r#"{"kind":"rrmqs","limit_packets":40,"measure_limit_packets":3,"p":0.2,"window_ns":20000000,"feedback":"improved"}"#),
            j(r#"{"kind":"rrmqs","limit_packets":40,"measure_limit_packets":3,"p":0.2,"window_ns":20000000,"feedback":"allocate","alloc_interval_ns":5000000}"#),
        ]
    }

    #[test]
    fn every_qdisc_conserves_packets_under_random_traffic() {
        for (k, cfg) in all().iter().enumerate() {
            let mut q = build(cfg, 7, 10_000_000);
            let (mut inp, mut out, mut drop) = (0u64, 0u64, 0u64);
            let (mut inb, mut outb, mut dropb) = (0u64, 0u64, 0u64);
            let mut x: u64 = 99 + k as u64;
            let mut now = 0u64;
            let mut dropped = vec![];
            for _ in 0..20_000 {
                x = crate::rng::splitmix64(x);
                now += x % 400_000; // up to 0.4 ms between operations
                // Bursty: arrivals dominate in phases so queues fill and AQMs act.
                let arrive = (x >> 8) % 10 < if (now / 50_000_000) % 2 == 0 { 8 } else { 4 };
                if arrive {
                    let mut p = Packet::new(((x >> 16) % 6) as u32, Kind::Data, 52 + ((x >> 24) % 1449) as u32);
                    p.ecn = [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1][((x >> 40) % 3) as usize];
                    inp += 1;
                    inb += p.wire_bytes as u64;
                    if let Err((d, _)) = q.enqueue(p, now) {
                        drop += 1;
                        dropb += d.wire_bytes as u64;
                    }
                    q.take_enqueue_drops(&mut dropped);
                } else if let Some(p) = q.dequeue(now, &mut dropped) {
                    out += 1;
                    outb += p.wire_bytes as u64;
                }
                for (d, _) in dropped.drain(..) {
                    drop += 1;
                    dropb += d.wire_bytes as u64;
                }
                assert_eq!(inp, out + drop + q.len_packets() as u64, "{cfg:?}");
                assert_eq!(inb, outb + dropb + q.len_bytes(), "{cfg:?}");
            }
            assert!(drop > 0 && out > 0, "{cfg:?}: traffic must exercise drops and departures");
            // Drain: everything left comes out or is dropped.
            now += 1_000_000_000;
            while let Some(p) = q.dequeue(now, &mut dropped) {
                out += 1;
                outb += p.wire_bytes as u64;
                now += 1_000;
            }
            for (d, _) in dropped.drain(..) {
                drop += 1;
                dropb += d.wire_bytes as u64;
            }
            assert_eq!(q.len_packets(), 0, "{cfg:?}");
            assert_eq!((inp, inb), (out + drop, outb + dropb), "{cfg:?}");
        }
    }
}
