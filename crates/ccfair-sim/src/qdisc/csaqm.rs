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
//!   - core, one FIFO; every `update_ns` (5 ms, as S3) the congestion
//!     threshold value (CTV) is recomputed from histograms of the PVs of
//!     arriving packets (bytes per PV), by one of two controllers:
//!   - `pi` (default; the ANRW 2018 "PVPIE" design: a PIE-style controller
//!     gives a drop/mark probability p, and the CTV is the PV below which the
//!     fraction p of recent traffic lies, read off the empirical CDF of the
//!     arriving PVs):
//!         p' += alpha_U (q - D) + beta (q - q_prev),  q = backlog / C,
//!         p = min(k p', 1),   CTV = min{v : bytes(PV < v) >= p x bytes(window)}
//!     with PI2's gains and coupling (alpha 0.16 Hz per 16 ms update, scaled
//!     to the update period: alpha_U = 0.16 x T_update / 16 ms; beta 3.2;
//!     k = 2, the L4S marking of RFC 9332 / Linux sch_dualpi2) and an ECDF
//!     window of 100 ms (the window of a public ns-3 PV-PIE module's eCDF);
//!     no marking while the backlog is under 2 MTUs (PI2, PV-PIE);
//!   - `load` (ccfair's first reading of S3's "the unmarked load fits the
//!     delay target"): from the last period's histogram, the CTV lets exactly
//!     the load through that moves the backlog to the target L_target = D x C:
//!         allowed = C x T_update + (L_target - backlog) x T_update / drain
//!     (bytes, >= 0; `drain` defaults to T_update: the whole distance at once)
//!         CTV = the smallest PV with sum_{pv >= CTV} hist[pv] <= allowed.
//!     It re-decides the whole allowed load every 5 ms, far faster than
//!     50 ms-RTT senders answer, so it swings between "mark nothing" and
//!     "mark every PV" and loses PPV's discrimination (docs/in-network.md);
//!   - at enqueue, a packet with PV < CTV is CE-marked if ECN-capable (and
//!     `ecn` is on), else dropped. Flows under their fair share draw no PV
//!     below CTV and are never marked (ppv.rs).
//! Optional overload variant (`drop_above`, not in S3): while the backlog
//! exceeds `drop_above` x L_target, packets below the CTV are dropped even if
//! ECN-capable (against flows that do not answer marks enough).
//! The ANRW paper's text was not at hand: the `pi` controller follows its
//! PVPIE design as S3 and the PV-PIE ns-3 module describe it, with PI2's
//! gains instead of PIE's auto-tuned ones (docs/fidelity.md). The hard limit
//! is checked first (tail drop).

use std::collections::VecDeque;

use super::fifo::Fifo;
use super::pi2::{PiController, DEFAULT_ALPHA_HZ, DEFAULT_BETA_HZ, DEFAULT_COUPLING, DEFAULT_TUPDATE_NS, MIN_BACKLOG_BYTES};
use super::ppv::{PpvMarker, PV_MAX};
use super::{mark_or_drop, DropReason, Qdisc};
use crate::engine::TimeNs;
use crate::packet::Packet;
use serde::{Deserialize, Serialize};

/// S3's CTV update period (5 ms).
pub const DEFAULT_UPDATE_NS: u64 = 5_000_000;
/// Default delay target D when none is given (5 ms; S3 sets D = K x RTT).
pub const DEFAULT_TARGET_NS: u64 = 5_000_000;
/// Window of the `pi` controller's PV ECDF (100 ms, the PV-PIE eCDF window).
pub const DEFAULT_WINDOW_NS: u64 = 100_000_000;

/// Where CSAQM is specified.
pub const SOURCE: &str = "CSAQM: core-stateless AQM with PPV edge marking, Nadas et al., ANRW 2018 (S3)";

/// How the CTV is computed every update: `pi` = a PI controller on the queue
/// delay gives the fraction to mark, the CTV is that quantile of the PV ECDF
/// over `window`; `load` = the CTV lets exactly the load through that moves
/// the backlog to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CsaqmController {
    #[default]
    Pi,
    Load,
}
crate::param_choice!(CsaqmController);

crate::declare_params! {
    /// CSAQM's parameters (S3's values).
    pub struct CsaqmConfig {
        /// Queue limit, packets.
        limit_packets: Option<u64> = Some(1000), Range::at_least(1.0);
        /// Queue limit, wire bytes (unset: none).
        limit_bytes: Option<u64> = None, Range::at_least(1500.0);
        /// Delay target D (S3: K x RTT); the backlog target is D x link rate.
        target_ns: u64 = DEFAULT_TARGET_NS, Range::above(0.0);
        /// CTV update period (S3: 5 ms).
        update_ns: u64 = DEFAULT_UPDATE_NS, Range::above(0.0);
        /// Time constant of the edge marker's per-flow rate meter.
        rate_tau_ns: u64 = super::ppv::DEFAULT_RATE_TAU_NS, Range::above(0.0);
        /// Per-flow weights of the sharing policy, by flow index (missing = 1; empty = equal sharing).
        weights: Vec<f64> = Vec::new(), Range::above(0.0);
        /// Mark ECN-capable packets below the CTV (else drop them); Not-ECT packets are dropped.
        ecn: bool = true, Range::Any;
        /// Close the backlog's distance to the target over this time (unset: one update period).
        drain_ns: Option<u64> = None, Range::above(0.0);
        /// Overload variant (not in S3): drop below-CTV packets while the backlog exceeds this multiple of the target.
        drop_above: Option<f64> = None, Range::at_least(1.0);
        /// CTV controller: `pi` (PVPIE) or `load` (ccfair's load rule).
        controller: CsaqmController = CsaqmController::Pi, Range::Choice(&["pi", "load"]);
        /// Window of the PV ECDF of the `pi` controller.
        window_ns: u64 = DEFAULT_WINDOW_NS, Range::above(0.0);
    }
}

/// The CTV that marks the fraction `p` of the bytes in `hist`
/// (`hist[pv]` = bytes with that PV): the smallest PV v such that the bytes
/// with PV < v reach p x total (0 = mark nothing; above every PV for p = 1).
pub fn ctv_for_fraction(hist: &[u64], p: f64) -> u32 {
    let total: u64 = hist.iter().sum();
    let need = p.clamp(0.0, 1.0) * total as f64;
    let mut below = 0.0;
    for (v, h) in hist.iter().enumerate() {
        if below >= need {
            return v as u32;
        }
        below += *h as f64;
    }
    hist.len() as u32
}

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
    /// PVs (bytes per PV) that arrived in the current update period.
    hist: Vec<u64>,
    /// `pi`: the PI controller (p' of PI2) and the bytes per link-byte-time.
    pi: Option<PiController>,
    bytes_per_ns: f64,
    /// `pi`: histograms of the completed periods in the ECDF window, and their
    /// sum plus the current period (`win`).
    ring: VecDeque<Vec<u64>>,
    win: Vec<u64>,
    window_periods: usize,
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
            pi: (c.controller == CsaqmController::Pi).then(|| {
                // PI2's integral gain is per 16 ms update: keep its rate per second.
                let alpha = DEFAULT_ALPHA_HZ * c.update_ns as f64 / DEFAULT_TUPDATE_NS as f64;
                PiController::new(c.target_ns, c.update_ns, alpha, DEFAULT_BETA_HZ, 1.0)
            }),
            bytes_per_ns: per_ns,
            ring: VecDeque::new(),
            win: vec![0; PV_MAX as usize + 1],
            window_periods: (c.window_ns.div_ceil(c.update_ns)).max(1) as usize,
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
            let backlog = self.fifo.bytes() as f64;
            if let Some(pi) = self.pi.as_mut() {
                pi.update((backlog / self.bytes_per_ns) as u64);
                let p = (DEFAULT_COUPLING * pi.p).min(1.0);
                self.ctv = ctv_for_fraction(&self.win, p);
                // Slide the window: this period joins the ring; the oldest leaves.
                let mut old = if self.ring.len() + 1 >= self.window_periods { self.ring.pop_front() } else { None }
                    .unwrap_or_else(|| vec![0; PV_MAX as usize + 1]);
                for (w, o) in self.win.iter_mut().zip(old.iter()) {
                    *w -= *o;
                }
                old.iter_mut().for_each(|h| *h = 0);
                self.ring.push_back(std::mem::replace(&mut self.hist, old));
            } else {
                let allowed = (self.link_bytes_per_update + self.drain_gain * (self.target_bytes - backlog)).max(0.0);
                self.ctv = ctv_for(&self.hist, allowed);
                self.hist.iter_mut().for_each(|h| *h = 0);
            }
            self.next_update_ns += self.c.update_ns;
            self.stats.updates += 1;
        }
    }
}

impl Qdisc for Csaqm {
    fn enqueue(&mut self, mut pkt: Packet, now: TimeNs) -> Result<(), (Packet, DropReason)> {
        self.catch_up(now);
        pkt.set_pv(self.marker.mark(pkt.flow, pkt.wire_bytes, now));
        self.hist[pkt.pv() as usize] += pkt.wire_bytes as u64;
        if self.pi.is_some() {
            self.win[pkt.pv() as usize] += pkt.wire_bytes as u64;
        }
        if self.fifo.would_overflow(pkt.wire_bytes) {
            return Err((pkt, DropReason::Overflow));
        }
        let pi_idle = self.pi.is_some() && self.fifo.bytes() < MIN_BACKLOG_BYTES;
        if pkt.pv() < self.ctv && !pi_idle {
            let overload = self.c.drop_above.is_some_and(|m| self.fifo.bytes() as f64 > m * self.target_bytes);
            pkt = mark_or_drop(pkt, self.c.ecn && !overload, &mut self.stats.marks, &mut self.stats.aqm_drops)?;
        }
        self.fifo.enqueue_at(pkt, now)
    }

    fn dequeue(&mut self, now: TimeNs, _dropped: &mut Vec<(Packet, DropReason)>) -> Option<Packet> {
        self.catch_up(now);
        let p = self.fifo.pop()?;
        Some(p)
    }

    super::fifo::fifo_backlog!(fifo);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Ecn, Kind};
    use crate::qdisc::ppv::{tvf, tvf_inverse};

    /// A PV histogram of 64 classes with these (PV, bytes).
    fn histogram(bytes_at: &[(usize, u64)]) -> Vec<u64> {
        let mut h = vec![0u64; 64];
        for &(pv, bytes) in bytes_at {
            h[pv] = bytes;
        }
        h
    }

    #[test]
    fn ctv_is_the_pv_where_the_cumulative_high_pv_load_reaches_the_allowed_load() {
        // Hand-built histogram: PV 10: 3000 B, PV 20: 1500 B, PV 30: 4500 B, PV 40: 1500 B.
        let h = histogram(&[(10, 3000), (20, 1500), (30, 4500), (40, 1500)]);
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

    fn load_cfg(target_ms: u64) -> CsaqmConfig {
        let mut c = cfg(target_ms, true);
        c.controller = CsaqmController::Load;
        c
    }

    #[test]
    fn ctv_for_fraction_is_the_quantile_of_the_pv_ecdf() {
        // Hand-built histogram: PV 10: 1000 B, PV 20: 3000 B, PV 30: 6000 B (10 000 B).
        let h = histogram(&[(10, 1000), (20, 3000), (30, 6000)]);
        assert_eq!(ctv_for_fraction(&h, 0.0), 0, "p = 0: nothing marked");
        assert_eq!(ctv_for_fraction(&h, 0.1), 11, "10 %: exactly the PV-10 bytes");
        assert_eq!(ctv_for_fraction(&h, 0.05), 11, "granularity: the lowest PV class is marked whole");
        assert_eq!(ctv_for_fraction(&h, 0.4), 21, "40 %: PV 10 and 20");
        assert_eq!(ctv_for_fraction(&h, 0.41), 31);
        assert_eq!(ctv_for_fraction(&h, 1.0), 31, "p = 1: every PV below the CTV");
        assert_eq!(ctv_for_fraction(&[0; 8], 0.5), 0, "no traffic, no CTV");
    }

    #[test]
    fn pi_controller_raises_the_mark_fraction_while_the_queue_is_above_target() {
        // 12 Mbit/s, target 10 ms = 15000 bytes; 30 packets (45000 B, 30 ms) queued.
        let mut q = Csaqm::new(&cfg(10, true), 1, 12_000_000);
        for _ in 0..30 {
            q.fifo.push(Packet::new(0, Kind::Data, 1500));
        }
        // Arrivals spread over PVs 1..=100, 100 bytes each: the ECDF is uniform.
        for v in 1..=100 {
            q.hist[v] = 100;
            q.win[v] = 100;
        }
        q.catch_up(5_000_000);
        // p' = alpha_U x (30 - 10) ms + beta x (30 - 0) ms, alpha_U = 0.16 x 5/16.
        let p1 = 0.16 * 5.0 / 16.0 * 0.020 + 3.2 * 0.030;
        let pi = q.pi.as_ref().unwrap();
        assert!((pi.p - p1).abs() < 1e-9, "{} vs {p1}", pi.p);
        // Mark fraction k p' = 2 x 0.097 = 19.4 % of the uniform PVs 1..=100: CTV 21.
        assert_eq!(q.ctv, ctv_for_fraction(&q.win, 2.0 * p1));
        assert_eq!(q.ctv, 21);
        // The queue stays: only the integral term adds, p' grows every period.
        let mut last = q.pi.as_ref().unwrap().p;
        for k in 2..=5 {
            q.catch_up(k * 5_000_000);
            let p = q.pi.as_ref().unwrap().p;
            assert!((p - last - 0.16 * 5.0 / 16.0 * 0.020).abs() < 1e-9);
            last = p;
        }
        // Queue gone: the proportional term takes 3.2 x 30 ms off at once, then
        // the integral term 0.16 x 5/16 x 10 ms per period, down to 0: CTV 0.
        while q.fifo.pop().is_some() {}
        q.catch_up(30_000_000);
        let p = q.pi.as_ref().unwrap().p;
        assert!((p - (last - 0.16 * 5.0 / 16.0 * 0.010 - 3.2 * 0.030)).abs() < 1e-9);
        q.catch_up(100_000_000);
        assert_eq!(q.pi.as_ref().unwrap().p, 0.0);
        assert_eq!(q.ctv, 0);
        // Below 2 MTUs of backlog nothing is marked, whatever the CTV.
        q.ctv = PV_MAX + 1;
        q.next_update_ns = u64::MAX;
        let mut e = Packet::new(0, Kind::Data, 1500);
        e.ecn = Ecn::Ect1;
        q.enqueue(e, 200_000_000).unwrap();
        q.enqueue(e, 200_000_000).unwrap();
        assert_eq!(q.stats.marks, 0);
        q.enqueue(e, 200_000_000).unwrap();
        assert_eq!(q.stats.marks, 1, "3000 bytes queued: marked");
    }

    #[test]
    fn pi_ecdf_window_forgets_periods_older_than_the_window() {
        // window 100 ms = 20 periods of 5 ms.
        let mut q = Csaqm::new(&cfg(10, true), 1, 12_000_000);
        q.enqueue(Packet::new(0, Kind::Data, 1500), 1).unwrap();
        let pv = q.fifo.pop().unwrap().pv() as usize;
        assert_eq!(q.win[pv], 1500);
        q.catch_up(95_000_000); // 19 updates: still inside the window
        assert_eq!(q.win.iter().sum::<u64>(), 1500);
        q.catch_up(100_000_000); // the 20th: the first period leaves
        assert_eq!(q.win.iter().sum::<u64>(), 0);
        assert_eq!(q.ring.len(), 19);
    }

    #[test]
    fn update_uses_link_load_plus_the_distance_to_the_target() {
        // 12 Mbit/s: 1.5 MB/s, 7500 bytes (5 packets) per 5 ms; target 10 ms = 15000 bytes.
        let mut q = Csaqm::new(&load_cfg(10), 1, 12_000_000);
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
        let mut c = load_cfg(10);
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
        // The load controller: marking does not wait for 2 MTUs of backlog.
        let mut q = Csaqm::new(&load_cfg(10), 1, 12_000_000);
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
                        assert!(p.ecn != Ecn::Ce || p.pv() < q.ctv);
                    }
                }
                Err((p, why)) => {
                    assert_eq!(why, DropReason::Aqm);
                    assert_eq!(p.ecn, Ecn::NotEct);
                    assert!(p.pv() < q.ctv);
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
        let mut c = load_cfg(10);
        c.ecn = false;
        let mut q = Csaqm::new(&c, 1, 12_000_000);
        q.ctv = PV_MAX + 1;
        q.next_update_ns = u64::MAX;
        let mut p = Packet::new(0, Kind::Data, 1500);
        p.ecn = Ecn::Ect1;
        assert_eq!(q.enqueue(p, 1).unwrap_err().1, DropReason::Aqm);
        // Overload variant: above drop_above x target an ECT packet below the CTV is dropped, below it marked.
        let mut c = load_cfg(1); // 1 ms at 12 Mbit/s = 1500 bytes
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
