//! Per Packet Value (PPV) edge marker: gives every data packet a packet value
//! (PV) from its flow's throughput-value function (TVF), so that a core node
//! can share capacity by comparing PVs only (core-stateless).
//!
//! Algorithm (Nádas, Turányi, Rácz, "Per Packet Value: A Practical Concept for
//! Network Resource Sharing", IEEE Globecom 2016; used by the core-stateless
//! AQM of Nádas, Gombos, Fejes, Laki, "Towards a Congestion Control-Independent
//! Core-Stateless AQM", ANRW 2018, and by S3, Fejes et al.):
//!   - per flow, a rate meter estimates the flow's current rate r;
//!   - for every packet draw x uniformly in [0, r] and set PV = TVF(x), a
//!     decreasing function of the throughput x. A flow at rate r then sends
//!     the PVs of the whole interval [0, r] of its TVF: if the core admits
//!     only PVs >= CTV = TVF(x*), the flow keeps exactly min(r, x*) and only
//!     its excess r - x* is marked; flows below x* are never marked;
//!   - equal sharing: every flow has the same TVF. Weighted sharing: flow f's
//!     TVF is TVF(x / w_f), so the flows' shares at a common CTV are in the
//!     ratio of their weights.
//!
//! Our TVF is logarithmic: PV = floor(PV_PER_OCTAVE x log2(REF_RATE_BPS x w / x)),
//! clamped to [0, PV_MAX] (64 PV steps per doubling of the rate, about 1.1 %
//! rate resolution, from 100 Gbit/s down to ~1e-8 bit/s). Any decreasing TVF
//! gives the same equal-sharing equilibrium; the log shape gives the CTV the
//! same relative resolution at every rate.
//!
//! Rate meter: an exponentially-weighted rate, r <- r exp(-dt / tau) +
//! 8 bytes / tau at every packet (the exponential-kernel estimator: exact for
//! a constant rate, forgets with time constant tau). The draw uses the rate
//! including the current packet. Randomness comes from the run seed (the qdisc
//! stream, rng::stream::QDISC).

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use crate::engine::TimeNs;

/// PV steps per doubling of the throughput.
pub const PV_PER_OCTAVE: f64 = 64.0;
/// Largest PV (the throughput x -> 0 end of the TVF); the histogram has PV_MAX + 1 bins.
pub const PV_MAX: u32 = 4095;
/// Throughput at which PV = 0 for weight 1: 100 Gbit/s.
pub const REF_RATE_BPS: f64 = 100e9;
/// Default time constant of the per-flow rate meter (ns).
pub const DEFAULT_RATE_TAU_NS: u64 = 40_000_000;

/// The TVF: packet value of throughput `x_bps` for a flow of weight `w`.
pub fn tvf(x_bps: f64, w: f64) -> u32 {
    if !(x_bps > 0.0) {
        return PV_MAX;
    }
    let v = PV_PER_OCTAVE * (REF_RATE_BPS * w / x_bps).log2();
    if v <= 0.0 {
        0
    } else if v >= PV_MAX as f64 {
        PV_MAX
    } else {
        v as u32
    }
}

/// The inverse of the TVF: the highest throughput that still gets PV `pv` for a
/// weight-`w` flow. A packet has PV < `pv` exactly when its draw x exceeds this.
pub fn tvf_inverse(pv: u32, w: f64) -> f64 {
    REF_RATE_BPS * w / (pv as f64 / PV_PER_OCTAVE).exp2()
}

#[derive(Debug, Clone, Default)]
struct Meter {
    rate_bps: f64,
    last_ns: TimeNs,
}

/// The per-flow marker (state: one rate meter per flow).
pub struct PpvMarker {
    tau_ns: u64,
    weights: Vec<f64>,
    meters: Vec<Meter>,
    rng: Pcg64Mcg,
}

impl PpvMarker {
    /// `weights[f]` is flow f's weight (missing = 1).
    pub fn new(tau_ns: u64, weights: &[f64], seed: u64) -> Self {
        PpvMarker { tau_ns: tau_ns.max(1), weights: weights.to_vec(), meters: Vec::new(), rng: rand::SeedableRng::seed_from_u64(seed) }
    }

    pub fn weight(&self, flow: u32) -> f64 {
        self.weights.get(flow as usize).copied().unwrap_or(1.0)
    }

    /// Current rate estimate of `flow` (as of its last packet).
    pub fn rate_bps(&self, flow: u32) -> f64 {
        self.meters.get(flow as usize).map_or(0.0, |m| m.rate_bps)
    }

    /// Meter a packet of `wire_bytes` of `flow` arriving at `now` and return its PV.
    pub fn mark(&mut self, flow: u32, wire_bytes: u32, now: TimeNs) -> u32 {
        let f = flow as usize;
        if f >= self.meters.len() {
            self.meters.resize(f + 1, Meter::default());
        }
        let tau = self.tau_ns as f64;
        let m = &mut self.meters[f];
        let dt = now.saturating_sub(m.last_ns) as f64;
        m.rate_bps = m.rate_bps * (-dt / tau).exp() + wire_bytes as f64 * 8.0 * 1e9 / tau;
        m.last_ns = now;
        let r = m.rate_bps;
        let x = self.rng.gen::<f64>() * r;
        let w = self.weights.get(f).copied().unwrap_or(1.0);
        tvf(x, w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tvf_is_decreasing_and_inverts() {
        let mut last = PV_MAX + 1;
        for e in 3..11 {
            let x = 10f64.powi(e);
            let v = tvf(x, 1.0);
            assert!(v < last, "TVF must decrease with throughput");
            last = v;
            let lo = tvf_inverse(v, 1.0);
            // one PV step is a factor 2^(1/64) = 1.0109 in throughput
            assert!(lo >= x && lo <= x * 1.011, "{x} -> {v} -> {lo}");
        }
        // A weight-2 flow has the PV of a weight-1 flow at half its rate.
        assert_eq!(tvf(2e6, 2.0), tvf(1e6, 1.0));
        assert_eq!(tvf(0.0, 1.0), PV_MAX);
    }

    /// Feed a constant-rate flow and return the fraction of its packets with PV < ctv.
    fn fraction_below(rate_bps: f64, ctv: u32, w: f64) -> f64 {
        let mut m = PpvMarker::new(DEFAULT_RATE_TAU_NS, &[w], 42);
        let gap_ns = (1500.0 * 8.0 * 1e9 / rate_bps) as u64;
        let (mut t, mut below, mut n) = (0u64, 0u64, 0u64);
        for i in 0..40_000u64 {
            t += gap_ns;
            let pv = m.mark(0, 1500, t);
            if i >= 10_000 {
                // after 10 000 packets the meter has converged (many tau)
                n += 1;
                below += (pv < ctv) as u64;
            }
        }
        let r = m.rate_bps(0);
        assert!((r / rate_bps - 1.0).abs() < 0.01, "meter {r} vs {rate_bps}");
        below as f64 / n as f64
    }

    #[test]
    fn flows_below_fair_share_are_never_below_ctv_and_above_it_lose_their_excess() {
        // Fair share x* = 100 Mbit/s: CTV = TVF(x*). A flow at rate r sends
        // PVs of x ~ U[0, r]: the fraction with PV < CTV is max(0, (r - x*) / r).
        let fair = 100e6;
        let ctv = tvf(fair, 1.0);
        let x_ctv = tvf_inverse(ctv, 1.0); // PV < ctv exactly when x > x_ctv
        for (rate, want) in [(50e6, 0.0), (fair * 0.97, 0.0), (200e6, 1.0 - x_ctv / 200e6), (400e6, 1.0 - x_ctv / 400e6)] {
            let got = fraction_below(rate, ctv, 1.0);
            assert!((got - want).abs() < 0.015, "rate {rate}: {got} vs {want}");
        }
        // At the fair share, nearly nothing (only the meter's noise and the PV step).
        assert!(fraction_below(fair, ctv, 1.0) < 0.03);
        // Weight 2: the same CTV lets the flow keep twice the rate.
        assert!(fraction_below(190e6, ctv, 2.0) < 0.001);
        let got = fraction_below(400e6, ctv, 2.0);
        assert!((got - (1.0 - 2.0 * x_ctv / 400e6)).abs() < 0.015, "{got}");
    }
}
