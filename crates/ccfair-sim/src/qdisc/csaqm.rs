//! CSAQM: the core-stateless AQM with per-packet values (PPV).
//!
//! Algorithm (Nádas, Gombos, Fejes, Laki, "Towards a Congestion
//! Control-Independent Core-Stateless AQM", ACM/IRTF ANRW 2018; Nádas,
//! Turányi, Rácz, "Per Packet Value", Globecom 2016; as S3, Fejes et al.,
//! "On the Incompatibility of Scalable Congestion Controls over the Internet",
//! configures it):
//!   - edge: every arriving packet gets a packet value (PV) from its flow's
//!     throughput-value function (qdisc/ppv.rs; equal sharing by default);
//!     the marker sits where packets enter the bottleneck (our access paths
//!     are pure delay lines, so a flow's rate at the edge and at the
//!     bottleneck's entrance are the same);
//!   - core, one FIFO: a histogram of the PVs of the packets that arrived in
//!     the last update period (bytes per PV) is kept; every `update_ns`
//!     (5 ms, as S3) the congestion threshold value (CTV) is recomputed so
//!     that the load of the packets with PV >= CTV fits what the link may
//!     take in the period while the backlog moves to the delay target
//!     D = K x RTT (L_target = D x C bytes):
//!         allowed = C x T_update + (L_target - backlog) x T_update / drain
//!     (bytes, >= 0; `drain` defaults to T_update: the whole distance at once)
//!         CTV = the smallest PV with sum_{pv >= CTV} hist[pv] <= allowed;
//!   - at enqueue, a packet with PV < CTV is CE-marked if ECN-capable (and
//!     `ecn` is on), else dropped. Flows under their fair share draw no PV
//!     below CTV and are never marked (ppv.rs).
//! Optional overload variant (`drop_above`, not in S3): while the backlog
//! exceeds `drop_above` x L_target, packets below the CTV are dropped even if
//! ECN-capable (against flows that do not answer marks enough).
//! The update rule is our reading of "the unmarked load fits the delay
//! target" (S3); the ANRW paper's own controller may differ in detail
//! (docs/fidelity.md). The hard limit is checked first (tail drop).


use super::ppv::{PpvMarker, PV_MAX};
use super::fifo::Fifo;
use super::{mark_ce, DropReason, Qdisc};
use crate::config::CsaqmConfig;
use crate::engine::TimeNs;
use crate::packet::Packet;

/// S3's CTV update period (5 ms).
pub const DEFAULT_UPDATE_NS: u64 = 5_000_000;
/// Default delay target D when none is given (5 ms; S3 sets D = K x RTT).
pub const DEFAULT_TARGET_NS: u64 = 5_000_000;

/// The CTV for a PV histogram (`hist[pv]` = bytes that arrived with that PV):
/// the smallest PV such that the packets with PV >= it total at most
/// `allowed_bytes` (0 if all of them fit, i.e. nothing is marked).
pub fn ctv_for(hist: &[u64], allowed_bytes: f64) -> u32 {
    let mut cum = 0.0;
    for v in (0..hist.len()).rev() {
        cum += hist[v] as f64;
        if cum > allowed_bytes {
            return v as u32 + 1;
        }
    }
    0
}

#[derive(Debug, Clone, Default)]
pub struct CsaqmStats {
    pub marks: u64,
    pub aqm_drops: u64,
    pub updates: u64,
}

pub struct Csaqm {
    c: CsaqmConfig,
    /// Bytes the link sends per update period.
    link_bytes_per_update: f64,
    target_bytes: f64,
    /// update / drain: the share of the distance to the target closed per period.
    drain_gain: f64,
    fifo: Fifo,
    pub marker: PpvMarker,
    hist: Vec<u64>,
    pub ctv: u32,
    next_update_ns: TimeNs,
    pub stats: CsaqmStats,
}

impl Csaqm {
    pub fn new(c: &CsaqmConfig, seed: u64, rate_bps: u64) -> Self {
        let per_ns = rate_bps as f64 / 8e9;
        Csaqm {
            c: c.clone(),
            link_bytes_per_update: per_ns * c.update_ns as f64,
            target_bytes: per_ns * c.target_ns as f64,
            drain_gain: c.drain_ns.map_or(1.0, |d| c.update_ns as f64 / d as f64),
            fifo: Fifo::new(c.limit_packets, c.limit_bytes),
            marker: PpvMarker::new(c.rate_tau_ns, &c.weights, seed),
            hist: vec![0; PV_MAX as usize + 1],
            ctv: 0,
            next_update_ns: c.update_ns,
            stats: CsaqmStats::default(),
        }
    }

    /// Run every CTV update due at or before `now`. The backlog does not change
    /// between events, so the current backlog is the backlog at each missed
    /// update time.
    fn catch_up(&mut self, now: TimeNs) {
        while self.next_update_ns <= now {
            let allowed = (self.link_bytes_per_update + self.drain_gain * (self.target_bytes - self.fifo.bytes() as f64)).max(0.0);
            self.ctv = ctv_for(&self.hist, allowed);
            self.hist.iter_mut().for_each(|h| *h = 0);
            self.next_update_ns += self.c.update_ns;
            self.stats.updates += 1;
        }
    }
}

impl Qdisc for Csaqm {
    fn enqueue(&mut self, mut pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        self.catch_up(now);
        pkt.pv = self.marker.mark(pkt.flow, pkt.wire_bytes, now);
        self.hist[pkt.pv as usize] += pkt.wire_bytes as u64;
        if self.fifo.would_overflow(pkt.wire_bytes) {
            return Err((pkt, DropReason::Overflow));
        }
        if pkt.pv < self.ctv {
            let overload = self.c.drop_above.is_some_and(|m| self.fifo.bytes() as f64 > m * self.target_bytes);
            if self.c.ecn && !overload && mark_ce(&mut pkt) {
                self.stats.marks += 1;
            } else {
                self.stats.aqm_drops += 1;
                return Err((pkt, DropReason::Aqm));
            }
        }
        pkt.enqueue_ns = now;
        self.fifo.push(pkt);
        Ok(())
    }

    fn dequeue(&mut self, now: TimeNs, _dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        self.catch_up(now);
        let p = self.fifo.pop()?;
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, Kind};
    use crate::qdisc::ppv::{tvf, tvf_inverse};

    #[test]
    fn ctv_is_the_pv_where_the_cumulative_high_pv_load_reaches_the_allowed_load() {
        // Hand-built histogram: PV 10: 3000 B, PV 20: 1500 B, PV 30: 4500 B, PV 40: 1500 B.
        let mut h = vec![0u64; 64];
        h[10] = 3000;
        h[20] = 1500;
        h[30] = 4500;
        h[40] = 1500;
        // Cumulative from the top: >=40: 1500, >=30: 6000, >=20: 7500, >=10: 10500.
        assert_eq!(ctv_for(&h, 10_500.0), 0, "everything fits: nothing marked");
        assert_eq!(ctv_for(&h, 20_000.0), 0);
        assert_eq!(ctv_for(&h, 10_499.0), 11, "PV 10 no longer fits");
        assert_eq!(ctv_for(&h, 7_500.0), 11);
        assert_eq!(ctv_for(&h, 7_499.0), 21, "PV 20 no longer fits");
        assert_eq!(ctv_for(&h, 6_000.0), 21);
        assert_eq!(ctv_for(&h, 5_999.0), 31);
        assert_eq!(ctv_for(&h, 1_500.0), 31);
        assert_eq!(ctv_for(&h, 1_499.0), 41, "not even the top PV fits");
        assert_eq!(ctv_for(&h, 0.0), 41);
        assert_eq!(ctv_for(&[0; 8], 0.0), 0, "no load, no marking");
    }

    fn cfg(target_ms: u64, ecn: bool) -> CsaqmConfig {
        serde_json::from_str(&format!(r#"{{"limit_packets":100000,"target_ns":{},"ecn":{ecn}}}"#, target_ms * 1_000_000)).unwrap()
    }

    #[test]
    fn update_uses_link_load_plus_the_distance_to_the_target() {
        // 12 Mbit/s: 1.5 MB/s, 7500 bytes (5 packets) per 5 ms; target 10 ms = 15000 bytes.
        let mut q = Csaqm::new(&cfg(10, true), 1, 12_000_000);
        // Queue empty at the update: allowed = 7500 + 15000 = 22500 bytes.
        q.hist[100] = 20_000;
        q.hist[50] = 5_000;
        q.catch_up(5_000_000);
        assert_eq!(q.ctv, 51, "22500 allowed: PV 100 fits, PV 50 does not");
        // 20 packets queued (30000 bytes, 15000 above target): allowed = 7500 - 15000 < 0 -> 0.
        for _ in 0..20 {
            q.fifo.push(Packet::new(0, Kind::Data, 1500));
        }
        q.hist[3] = 1;
        q.catch_up(10_000_000);
        assert_eq!(q.ctv, 4, "allowed 0: every PV that arrived is marked");
        // An idle period with no arrivals: the CTV returns to 0.
        q.catch_up(15_000_000);
        assert_eq!(q.ctv, 0);
        // drain = 20 ms: a quarter of the distance per 5 ms period. 15000 bytes
        // above target -> allowed = 7500 - 15000 / 4 = 3750 bytes.
        let mut c = cfg(10, true);
        c.drain_ns = Some(20_000_000);
        let mut q = Csaqm::new(&c, 1, 12_000_000);
        for _ in 0..20 {
            q.fifo.push(Packet::new(0, Kind::Data, 1500));
        }
        q.hist[100] = 3000;
        q.hist[50] = 3000;
        q.catch_up(5_000_000);
        assert_eq!(q.ctv, 51, "3750 allowed: PV 100 (3000) fits, PV 50 does not");
    }

    #[test]
    fn marks_ect_and_drops_not_ect_below_ctv_only() {
        let mut q = Csaqm::new(&cfg(10, true), 1, 12_000_000);
        q.ctv = tvf(1e6, 1.0); // fair share 1 Mbit/s
        // A flow far above the fair share (one packet every 100 us = 120 Mbit/s) with ECT(1).
        let (mut marked, mut dropped, mut n) = (0, 0, 0);
        let mut t = 0;
        let mut d = vec![];
        for i in 0..4000 {
            t += 100_000;
            q.next_update_ns = u64::MAX; // hold the CTV fixed
            let mut p = Packet::new(0, Kind::Data, 1500);
            p.ecn = if i % 2 == 0 { Ecn::Ect1 } else { Ecn::NotEct };
            match q.enqueue(p, t) {
                Ok(()) => {
                    let p = q.dequeue(t, &mut d).unwrap();
                    if i >= 2000 {
                        n += 1;
                        marked += (p.ecn == Ecn::Ce) as u32;
                        assert!(p.ecn != Ecn::Ce || p.pv < q.ctv);
                    }
                }
                Err((p, why)) => {
                    assert_eq!(why, DropReason::Aqm);
                    assert_eq!(p.ecn, Ecn::NotEct);
                    assert!(p.pv < q.ctv);
                    if i >= 2000 {
                        n += 1;
                        dropped += 1;
                    }
                }
            }
        }
        // Excess fraction (r - x*) / r with r = 120 Mbit/s, x* = 1 Mbit/s: ~99 %.
        let want = 1.0 - tvf_inverse(q.ctv, 1.0) / 120e6;
        let frac = (marked + dropped) as f64 / n as f64;
        assert!((frac - want).abs() < 0.02, "{frac} vs {want}");
        assert!(marked > 800 && dropped > 800, "both ECN marks and drops happen: {marked} {dropped}");
        // With ecn off, ECT packets are dropped too.
        let mut q = Csaqm::new(&cfg(10, false), 1, 12_000_000);
        q.ctv = PV_MAX + 1;
        q.next_update_ns = u64::MAX;
        let mut p = Packet::new(0, Kind::Data, 1500);
        p.ecn = Ecn::Ect1;
        assert_eq!(q.enqueue(p, 1).unwrap_err().1, DropReason::Aqm);
        // Overload variant: above drop_above x target an ECT packet below the CTV is dropped, below it marked.
        let mut c = cfg(1, true); // 1 ms at 12 Mbit/s = 1500 bytes
        c.drop_above = Some(2.0);
        let mut q = Csaqm::new(&c, 1, 12_000_000);
        q.ctv = PV_MAX + 1;
        q.next_update_ns = u64::MAX;
        let ect = || {
            let mut p = Packet::new(0, Kind::Data, 1500);
            p.ecn = Ecn::Ect1;
            p
        };
        for _ in 0..2 {
            q.enqueue(ect(), 1).unwrap(); // backlog 0, then 1500 <= 3000: marked
        }
        q.enqueue(ect(), 1).unwrap(); // backlog 3000, not above 3000
        assert_eq!(q.stats.marks, 3);
        assert_eq!(q.enqueue(ect(), 1).unwrap_err().1, DropReason::Aqm, "backlog 4500 > 2 x 1500");
    }
}
