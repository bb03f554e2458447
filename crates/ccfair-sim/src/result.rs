//! What one run returns. Plain vectors, columnar, so the binding can hand them
//! to pandas without per-row objects. Times in ns, sizes in bytes.

use serde::Serialize;

use crate::error::SimError;

/// A vector of `n` zeros, allocated fallibly: failure is [`SimError::Resource`]
/// naming `field` (the setting that sized it), never an abort.
pub fn try_zeroed<T: Clone + Default>(n: usize, field: &str) -> Result<Vec<T>, SimError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| SimError::Resource {
        field: field.to_string(),
        msg: format!("could not allocate {n} elements of {} bytes", std::mem::size_of::<T>()),
    })?;
    v.resize(n, T::default());
    Ok(v)
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FlowResult {
    pub name: String,
    pub cca: String,
    /// Base RTT of the path (config), ns.
    pub rtt_ns: u64,
    /// Actual start time after jitter, ns.
    pub start_ns: u64,
    /// Bytes delivered in order to the receiving application, per bin of `bin_ns`
    /// (a hole's filling releases everything buffered behind it at once).
    pub delivered_bytes: Vec<u64>,
    /// TCP payload bytes of every data packet as it arrives at the receiver,
    /// per bin of `bin_ns` (what a capture at the client counts; retransmissions
    /// and out-of-order arrivals included). Never above the bottleneck rate.
    pub arrival_bytes: Vec<u64>,
    /// Data packets transmitted by the sender (originals + retransmissions).
    pub sent_packets: u64,
    /// Retransmitted data packets.
    pub retransmissions: u64,
    /// Segments the sender marked lost (RACK / RTO).
    pub losses_detected: u64,
    /// Packets of this flow (data and SYN) dropped at the bottleneck (= drops_overflow + drops_aqm).
    pub drops: u64,
    /// ... of which dropped because the buffer (limit) was full.
    pub drops_overflow: u64,
    /// ... of which dropped by the AQM's decision.
    pub drops_aqm: u64,
    /// This flow's packets CE-marked by the queue discipline (counted as they leave the queue).
    pub ecn_marks: u64,
    /// Retransmission timeouts that fired.
    pub rto_count: u64,
    /// Tail loss probes sent (RFC 8985 TLP): new data or a resent segment that
    /// no loss was counted for.
    pub loss_probes: u64,
    /// Minimum RTT sample seen by the sender, ns (0 if none).
    pub min_rtt_ns: u64,
    /// Mean of all RTT samples, ns (0 if none).
    pub mean_rtt_ns: f64,
    /// Recovery episodes entered (fast recovery).
    pub recoveries: u64,
    /// Finite flows: size in bytes (None = bulk).
    pub size_bytes: Option<u64>,
    /// Finite flows: completion time (last byte delivered) from the flow's start, ns.
    pub fct_ns: Option<u64>,
    /// Data packets lost on the access path by random (non-congestion) loss.
    pub random_losses: u64,
    /// ECN mode used: "off", "classic" or "scalable".
    pub ecn: String,
    /// ECN-triggered window reductions (CWR entries) of the sender.
    pub ecn_reductions: u64,
    /// Sum and count of this flow's packet sojourn times at the bottleneck
    /// within the analysis window (mean = sum / count).
    pub sojourn_sum_ns: u64,
    pub sojourn_pkts: u64,
}

/// Optional per-flow trace, sampled every `sample_ns`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TraceResult {
    pub flow: Vec<u32>,
    pub time_ns: Vec<u64>,
    pub cwnd_pkts: Vec<u32>,
    pub inflight_pkts: Vec<u32>,
    pub srtt_ns: Vec<u64>,
    pub pacing_rate_bps: Vec<u64>,
    pub ssthresh_pkts: Vec<u32>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct RunResult {
    pub duration_ns: u64,
    pub bin_ns: u64,
    pub sample_ns: u64,
    pub sojourn_bin_ns: u64,
    pub bottleneck_rate_bps: u64,
    pub flows: Vec<FlowResult>,
    /// Bytes (wire size) the bottleneck finished transmitting, per bin.
    pub link_tx_bytes: Vec<u64>,
    /// Queue samples every `sample_ns`: time, backlog in packets and bytes.
    pub queue_time_ns: Vec<u64>,
    pub queue_packets: Vec<u32>,
    pub queue_bytes: Vec<u64>,
    /// Sojourn-time histogram of packets leaving the bottleneck queue within the
    /// analysis window, sparse: bin index i covers [i*sojourn_bin_ns, (i+1)*sojourn_bin_ns).
    pub sojourn_bin: Vec<u32>,
    pub sojourn_count: Vec<u64>,
    /// The same histogram for packets of scalable-ECN (L4S-class) flows only.
    pub sojourn_l4s_bin: Vec<u32>,
    pub sojourn_l4s_count: Vec<u64>,
    /// Exact sojourn sums and packet counts per delivered-bytes bin (whole run),
    /// for queueing delay over time and exact means.
    pub sojourn_sum_ns_per_bin: Vec<u64>,
    pub sojourn_pkts_per_bin: Vec<u64>,
    pub trace: TraceResult,
    /// CCA class names: `cca_classes[Packet::cca_class]` (distinct CCAs in order of first appearance).
    pub cca_classes: Vec<String>,
    /// Flow-meter log of the queue discipline (RRMQS); empty for others.
    pub meter: MeterResult,
    /// Per link: the topology's links in declared order; a dumbbell run has
    /// one, named "bottleneck" (from the counters above).
    pub links: Vec<LinkStats>,
    /// Counters for benchmarks.
    pub events: u64,
    pub data_packets: u64,
    pub wall_ns: u64,
}

/// One link's statistics. Utilisation and mean queue are over the analysis
/// window when the run has one, else over the whole run; the counters are
/// over the whole run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LinkStats {
    pub name: String,
    /// The link's rate; for a trace-driven link its mean rate over one period.
    pub rate_bps: u64,
    /// Wire bytes sent x 8 / (rate x time), over the result bins that lie
    /// within the window (`link_utilisation`).
    pub utilisation: f64,
    /// Mean of the queue samples (every `sample_ns`; the packet on the link included).
    pub mean_queue_packets: f64,
    pub mean_queue_bytes: f64,
    /// Packets dropped by the queue (overflow and AQM).
    pub drops: u64,
    /// Data packets CE-marked by the queue.
    pub marks: u64,
    /// Packets lost to the link's random loss.
    pub loss_drops: u64,
    /// Wire bytes the link finished sending.
    pub delivered_bytes: u64,
}

/// A link's utilisation from its sent wire bytes per result bin: the bins
/// lying wholly within the window [start, end) (if none, every bin the
/// window touches), their bytes x 8 over rate x their time.
pub fn link_utilisation(tx_bytes_per_bin: &[u64], bin_ns: u64, duration_ns: u64, window: (u64, u64), rate_bps: u64) -> f64 {
    let bin_span = |b: usize| (b as u64 * bin_ns, ((b as u64 + 1) * bin_ns).min(duration_ns));
    let within: Vec<usize> = (0..tx_bytes_per_bin.len()).filter(|&b| bin_span(b).0 >= window.0 && bin_span(b).1 <= window.1).collect();
    let bins = if within.is_empty() {
        (0..tx_bytes_per_bin.len()).filter(|&b| bin_span(b).0 < window.1 && bin_span(b).1 > window.0).collect()
    } else {
        within
    };
    let ns: u64 = bins.iter().map(|&b| bin_span(b).1 - bin_span(b).0).sum();
    let bytes: u64 = bins.iter().map(|&b| tx_bytes_per_bin[b]).sum();
    if ns == 0 || rate_bps == 0 {
        return 0.0;
    }
    bytes as f64 * 8.0 * 1e9 / (rate_bps as f64 * ns as f64)
}

/// Mean of the queue samples taken within the window [start, end) (0 if none).
pub fn mean_in_window(times: &[u64], values: impl IntoIterator<Item = f64>, window: (u64, u64)) -> f64 {
    let (sum, n) =
        times.iter().zip(values).filter(|(&t, _)| t >= window.0 && t < window.1).fold((0.0, 0u64), |(s, n), (_, v)| (s + v, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

/// RRMQS flow meter (qdisc/rrmqs.rs): one row per (window, CCA class), plus
/// the flows pinned to the measuring queues.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MeterResult {
    pub window: Vec<u32>,
    pub start_ns: Vec<u64>,
    pub class: Vec<u16>,
    /// Packets enqueued in the window (main queue / measuring set).
    pub main_pkts: Vec<u64>,
    pub rrmqs_pkts: Vec<u64>,
    /// Distinct flows in the window (Bloom-filter count).
    pub main_flows: Vec<u32>,
    pub rrmqs_flows: Vec<u32>,
    /// Per-flow packet rates, packets/s (NaN when no flow): V and V'.
    pub main_rate: Vec<f64>,
    pub rrmqs_rate: Vec<f64>,
    /// I = V / V' (NaN when undefined).
    pub index: Vec<f64>,
    /// Treatment decided for the next window: none / drop / priority (S1), weight (improved), off.
    pub action: Vec<String>,
    /// Improved feedback: the class's DRR weight for the next window (1 otherwise).
    pub weight: Vec<f64>,
    /// Flow meter: flows that completed in the window and their mean lifetime
    /// rate (admitted packets / (completion - first packet)), packets/s (NaN if none).
    pub main_done: Vec<u32>,
    pub rrmqs_done: Vec<u32>,
    pub main_flow_rate: Vec<f64>,
    pub rrmqs_flow_rate: Vec<f64>,
    /// Pinned flows: flow index, class, pin time, release time (u64::MAX = never released).
    pub pinned_flow: Vec<u32>,
    pub pinned_class: Vec<u16>,
    pub pinned_ns: Vec<u64>,
    pub released_ns: Vec<u64>,
}
