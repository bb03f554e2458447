//! What a run measures per flow and at the measured queue (the dumbbell's
//! bottleneck, a topology's primary link): delivered and arriving bytes per
//! bin, drops, marks, sojourn times, queue samples, the optional per-flow
//! trace (`Monitor`); and the per-flow results built from them
//! (`flow_results`). Shared by sim.rs and topology.rs.

use crate::config::{EcnMode, RunConfig};
use crate::endpoint::FlowSender;
use crate::engine::TimeNs;
use crate::error::SimError;
use crate::packet::Packet;
use crate::qdisc::DropReason;
use crate::result::{try_zeroed, FlowResult, RunResult, TraceResult};

/// The run's measurements, filled as the events run.
pub(crate) struct Monitor {
    pub(crate) bin_ns: u64,
    pub(crate) delivered: Vec<Vec<u64>>,
    /// Per flow, per bin: payload bytes of data packets arriving at the receiver.
    pub(crate) arrivals: Vec<Vec<u64>>,
    pub(crate) link_tx: Vec<u64>,
    pub(crate) drops: Vec<u64>,
    pub(crate) drops_overflow: Vec<u64>,
    pub(crate) drops_aqm: Vec<u64>,
    pub(crate) ecn_marks: Vec<u64>,
    /// Window sojourn sum / packets per flow.
    pub(crate) flow_sojourn_sum: Vec<u64>,
    pub(crate) flow_sojourn_pkts: Vec<u64>,
    /// Sojourn histogram (window) of packets of scalable-ECN (L4S) flows only.
    pub(crate) sojourn_hist_l4s: Vec<u64>,
    /// Per flow: uses scalable ECN (its packets form the L4S class).
    pub(crate) flow_l4s: Vec<bool>,
    pub(crate) sojourn_hist: Vec<u64>,
    pub(crate) sojourn_bin_ns: u64,
    pub(crate) sojourn_sum: Vec<u64>,
    pub(crate) sojourn_pkts: Vec<u64>,
    pub(crate) window: (u64, u64),
    /// Bytes delivered in order per flow so far (capped at the flow size).
    pub(crate) delivered_total: Vec<u64>,
    /// Flow completion time (finite flows), ns from the flow's start.
    pub(crate) fct_ns: Vec<Option<u64>>,
    /// Data packets lost on the access path (random, non-congestion loss).
    pub(crate) random_losses: Vec<u64>,
    pub(crate) queue_time: Vec<u64>,
    pub(crate) queue_pkts: Vec<u32>,
    pub(crate) queue_bytes: Vec<u64>,
    pub(crate) trace: Option<TraceResult>,
}

/// Cap on sojourn histogram bins (beyond: counted in the last bin).
const MAX_SOJOURN_BINS: usize = 1 << 20;

impl Monitor {
    /// The per-flow and per-bin series of a run of `cfg` (`flow_l4s`: which flows use scalable ECN).
    pub(crate) fn try_new(cfg: &RunConfig, flow_l4s: Vec<bool>) -> Result<Monitor, SimError> {
        let n = cfg.flows.len();
        let nbins = cfg.duration_ns.div_ceil(cfg.bin_ns) as usize;
        let window = (cfg.window_start_ns.unwrap_or(0), cfg.window_end_ns.unwrap_or(cfg.duration_ns));
        Ok(Monitor {
            bin_ns: cfg.bin_ns,
            delivered: (0..n).map(|_| try_zeroed(nbins, "bin")).collect::<Result<_, _>>()?,
            arrivals: (0..n).map(|_| try_zeroed(nbins, "bin")).collect::<Result<_, _>>()?,
            link_tx: try_zeroed(nbins, "bin")?,
            drops: vec![0; n],
            drops_overflow: vec![0; n],
            drops_aqm: vec![0; n],
            ecn_marks: vec![0; n],
            flow_sojourn_sum: vec![0; n],
            flow_sojourn_pkts: vec![0; n],
            sojourn_hist_l4s: Vec::new(),
            flow_l4s,
            sojourn_hist: Vec::new(),
            sojourn_bin_ns: cfg.sojourn_bin_ns,
            sojourn_sum: try_zeroed(nbins, "bin")?,
            sojourn_pkts: try_zeroed(nbins, "bin")?,
            window,
            delivered_total: vec![0; n],
            fct_ns: vec![None; n],
            random_losses: vec![0; n],
            queue_time: Vec::new(),
            queue_pkts: Vec::new(),
            queue_bytes: Vec::new(),
            trace: if cfg.trace { Some(TraceResult::default()) } else { None },
        })
    }

    /// Packet `p` leaves the measured queue at `now` (result bin `b`): its
    /// sojourn time per bin and, within the window, in the histograms and
    /// its flow's sums.
    #[inline(always)]
    pub(crate) fn record_sojourn(&mut self, now: TimeNs, b: usize, p: &Packet) {
        let sojourn = now - p.enqueue_ns;
        if b < self.sojourn_sum.len() {
            self.sojourn_sum[b] += sojourn;
            self.sojourn_pkts[b] += 1;
        }
        if now >= self.window.0 && now < self.window.1 {
            let i = ((sojourn / self.sojourn_bin_ns) as usize).min(MAX_SOJOURN_BINS - 1);
            if i >= self.sojourn_hist.len() {
                self.sojourn_hist.resize(i + 1, 0);
            }
            self.sojourn_hist[i] += 1;
            let f = p.flow as usize;
            self.flow_sojourn_sum[f] += sojourn;
            self.flow_sojourn_pkts[f] += 1;
            if self.flow_l4s[f] {
                let h = &mut self.sojourn_hist_l4s;
                if i >= h.len() {
                    h.resize(i + 1, 0);
                }
                h[i] += 1;
            }
        }
    }

    pub(crate) fn count_drop(&mut self, flow: u32, why: DropReason) {
        let f = flow as usize;
        self.drops[f] += 1;
        match why {
            DropReason::Overflow => self.drops_overflow[f] += 1,
            DropReason::Aqm => self.drops_aqm[f] += 1,
        }
    }

    pub(crate) fn bin(&self, t: TimeNs) -> usize {
        (t / self.bin_ns) as usize
    }
}

/// The per-flow results from the senders' statistics and the monitor's
/// counters (the per-bin series are moved out of `mon`).
pub(crate) fn flow_results(senders: &[FlowSender], mon: &mut Monitor, starts: &[u64], sizes: &[Option<u64>]) -> Vec<FlowResult> {
    let mut flows = Vec::with_capacity(senders.len());
    let mut arrivals = std::mem::take(&mut mon.arrivals).into_iter();
    for (i, (s, delivered)) in senders.iter().zip(std::mem::take(&mut mon.delivered)).enumerate() {
        let st = s.stats();
        flows.push(FlowResult {
            name: String::new(),
            cca: s.cca_name().to_string(),
            rtt_ns: 0,
            start_ns: starts[i],
            delivered_bytes: delivered,
            arrival_bytes: arrivals.next().unwrap_or_default(),
            sent_packets: st.sent_packets,
            retransmissions: st.retransmissions,
            losses_detected: st.losses_detected,
            drops: mon.drops[i],
            drops_overflow: mon.drops_overflow[i],
            drops_aqm: mon.drops_aqm[i],
            ecn_marks: mon.ecn_marks[i],
            rto_count: st.rto_count,
            min_rtt_ns: st.min_rtt_ns,
            mean_rtt_ns: if st.rtt_samples > 0 { st.rtt_sum_ns as f64 / st.rtt_samples as f64 } else { 0.0 },
            recoveries: st.recoveries,
            size_bytes: sizes[i],
            fct_ns: mon.fct_ns[i],
            random_losses: mon.random_losses[i],
            ecn: match s.ecn() {
                EcnMode::Off => "off",
                EcnMode::Classic => "classic",
                EcnMode::Scalable => "scalable",
            }
            .to_string(),
            ecn_reductions: st.ecn_reductions,
            sojourn_sum_ns: mon.flow_sojourn_sum[i],
            sojourn_pkts: mon.flow_sojourn_pkts[i],
        });
    }
    flows
}

/// A histogram as (bin index, count) of its non-empty bins.
pub(crate) fn sparse(hist: &[u64]) -> (Vec<u32>, Vec<u64>) {
    hist.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| (i as u32, c)).unzip()
}

/// Names and RTTs of the flows in `r`, from `cfg`.
pub(crate) fn name_flows(r: &mut RunResult, cfg: &RunConfig) {
    for (f, c) in r.flows.iter_mut().zip(&cfg.flows) {
        f.name = c.name.clone();
        f.rtt_ns = c.rtt_ns;
    }
}
