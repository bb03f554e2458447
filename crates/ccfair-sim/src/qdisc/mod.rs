//! Queue disciplines at the bottleneck: a small trait, one file per discipline.
//!
//! The bottleneck link calls `enqueue` when a packet arrives and `dequeue`
//! whenever it is ready to transmit. A discipline may drop at enqueue (the
//! packet is handed back) or at dequeue (AQMs such as CoDel push dropped
//! packets into `dropped`), and may ECN-mark packets it forwards.

use crate::config::QdiscConfig;
use crate::engine::TimeNs;
use crate::packet::Packet;

pub mod droptail;
pub mod dualpi2;
pub mod pi2;

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
}

/// Build the discipline; `seed` feeds its random stream (derived from the run
/// seed with `rng::stream::QDISC`).
pub fn build(cfg: &QdiscConfig, seed: u64) -> Box<dyn Qdisc> {
    match cfg {
        QdiscConfig::Droptail { limit_packets, limit_bytes } => {
            Box::new(droptail::DropTail::new(*limit_packets, *limit_bytes))
        }
        QdiscConfig::Pi2 { .. } => Box::new(pi2::Pi2::from_config(cfg, seed)),
        QdiscConfig::DualPi2 { .. } => Box::new(dualpi2::DualPi2::from_config(cfg, seed)),
    }
}

/// AQM congestion signal: CE-mark an ECN-capable packet (returns true), or
/// tell the caller to drop a Not-ECT one (returns false). RFC 3168 section 5.
pub fn ecn_mark(p: &mut Packet) -> bool {
    if p.ecn.is_capable() {
        p.ecn = crate::packet::Ecn::Ce;
        true
    } else {
        false
    }
}
