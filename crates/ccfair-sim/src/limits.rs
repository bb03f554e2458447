//! Resource bounds of one run, checked before anything is allocated.
//!
//! A valid-looking but absurd configuration (a 1000000 Gbit/s link, a
//! million-hour run, 10 000 flows with 1 ms bins) would otherwise grow the
//! process until the machine runs out of memory, or abort inside the
//! allocator. [`project`] estimates, from the configuration alone, the run's
//! peak memory, its event count and its wall time; [`check`] refuses the run
//! when one exceeds its [`Limits`], naming the field that drives the figure.
//!
//! The projection is an upper-bound model with constants measured on the
//! S0 base case and its variants (docs/architecture.md, "Resource limits"):
//!
//! - memory = per-bin series + per-sample series + sojourn histogram
//!   + packets in flight + per-flow state;
//!   * per-bin series: ceil(duration / bin) x (2 x flows + 3) elements (delivered
//!     and wire-arrival bytes per flow, link bytes, sojourn sum and count), each
//!     [`SERIES_ELEMENT_BYTES`] through the whole pipeline (Rust vector, Python
//!     list, pandas frame; measured 48 bytes with bin = 10us, 51 with sample = 10us);
//!   * per-sample series: ceil(duration / sample) x (3 + 7 x flows if traced) elements;
//!   * sojourn histogram: min(duration, buffer drain time) / sojourn_bin bins, two histograms;
//!   * packets in flight: bottleneck BDP at the largest RTT plus the queue limit,
//!     in smallest packets, [`INFLIGHT_PACKET_BYTES`] each (packet in a delay
//!     line, the sender's scoreboard entry, its ACK; measured 260-340 bytes);
//!   * per-flow state: [`FLOW_STATE_BYTES`] each;
//!   * RRMQS's Bloom filters: two per CCA class, `bloom_bits` / 8 bytes each.
//! - events = [`EVENTS_PER_LINK_PACKET`] x the packets the bottleneck can send
//!   in the run (rate x duration / smallest wire size) + samples + bins
//!   (measured 3.0-4.2 events per link packet over S0 variants at 10 Mbit/s-10 Gbit/s);
//! - wall = events / [`PROJECTED_EVENTS_PER_S`].
//!
//! Allocation failures that slip past the projection are typed errors too
//! ([`crate::result::try_zeroed`], [`crate::sim::try_run`]), never an abort.

use serde::{Deserialize, Serialize};

use crate::config::{u64_is, QdiscConfig, RunConfig, HEADER_BYTES};
use crate::error::SimError;

/// Bytes one element of a per-bin or per-sample series costs from the engine
/// to the pandas frame (measured 48-51; rounded up).
pub const SERIES_ELEMENT_BYTES: f64 = 64.0;
/// Bytes per packet in flight (packet, scoreboard entry, ACK; measured 260-340; rounded up).
pub const INFLIGHT_PACKET_BYTES: f64 = 512.0;
/// Bytes of state per flow (sender, receiver, CCA, delay lines, result row).
pub const FLOW_STATE_BYTES: f64 = 16.0 * 1024.0;
/// Events per packet the bottleneck can send (measured 3.0-4.2; with margin).
pub const EVENTS_PER_LINK_PACKET: f64 = 6.0;
/// Events per second assumed for the wall-time projection (slowest measured: 14 M/s on S0 base).
pub const PROJECTED_EVENTS_PER_S: f64 = 10.0e6;

/// Default memory limit: 4 GiB.
pub const DEFAULT_MEMORY_BYTES: u64 = 4 << 30;
/// Default event limit: 10^12.
pub const DEFAULT_EVENTS: u64 = 1_000_000_000_000;
/// Default wall-time limit: 4 hours.
pub const DEFAULT_WALL_NS: u64 = 4 * 3600 * 1_000_000_000;

/// Upper bounds a run must stay within; each overridable (`[limits]`, `--max-memory`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    #[serde(default = "u64_is::<DEFAULT_MEMORY_BYTES>")]
    pub memory_bytes: u64,
    #[serde(default = "u64_is::<DEFAULT_EVENTS>")]
    pub events: u64,
    #[serde(default = "u64_is::<DEFAULT_WALL_NS>")]
    pub wall_ns: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { memory_bytes: DEFAULT_MEMORY_BYTES, events: DEFAULT_EVENTS, wall_ns: DEFAULT_WALL_NS }
    }
}

impl Limits {
    pub fn from_json(s: &str) -> Result<Limits, SimError> {
        serde_json::from_str(s).map_err(|e| SimError::Config(format!("limits: {e}")))
    }
}

/// One term of the memory projection: the field that drives it and a description.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryTerm {
    pub field: String,
    pub bytes: f64,
    pub what: String,
}

/// What a run is projected to need (f64: the inputs may be absurd, e.g. 10^15 bit/s).
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    pub memory_bytes: f64,
    pub terms: Vec<MemoryTerm>,
    pub events: f64,
    pub wall_ns: f64,
}

impl Projection {
    /// The memory term that dominates.
    pub fn largest(&self) -> &MemoryTerm {
        self.terms.iter().max_by(|a, b| a.bytes.total_cmp(&b.bytes)).expect("at least one term")
    }
}

/// (limit in packets, limit in bytes) of the queue, converted to packets of `wire` bytes.
fn queue_packets(q: &QdiscConfig, wire: f64) -> f64 {
    match q.limits() {
        (Some(p), Some(b)) => (p as f64).min(b as f64 / wire),
        (Some(p), None) => p as f64,
        (None, Some(b)) => b as f64 / wire,
        (None, None) => 0.0,
    }
}

/// RRMQS's Bloom filters (qdisc/rrmqs.rs): two per CCA class, `bloom_bits` / 8 bytes each.
fn bloom_term(cfg: &RunConfig) -> MemoryTerm {
    let (mut bytes, mut classes, mut field) = (0.0, 0, "bottleneck.qdisc.bloom_bits".to_string());
    for (at, _, q) in queues(cfg) {
        if let QdiscConfig::Rrmqs(c) = q {
            let mut ccas: Vec<&str> = cfg.flows.iter().map(|f| f.cca.as_str()).collect();
            ccas.sort_unstable();
            ccas.dedup();
            bytes += 2.0 * ccas.len() as f64 * (c.bloom_bits.max(64) as f64 / 8.0);
            classes += ccas.len();
            field = format!("{at}.qdisc.bloom_bits");
        }
    }
    MemoryTerm { field, bytes, what: format!("{} Bloom filters", 2 * classes) }
}

/// Every queue of the run: (its field prefix, its link's rate in bit/s, its discipline): the
/// bottleneck, or each link of a topology (a trace-driven one at its mean rate).
fn queues(cfg: &RunConfig) -> Vec<(String, u64, &QdiscConfig)> {
    match &cfg.bottleneck {
        Some(b) => vec![("bottleneck".to_string(), b.rate_bps, &b.qdisc)],
        None => cfg.links.iter().enumerate().map(|(k, l)| (format!("links.{k}"), l.mean_rate_bps(), &l.qdisc)).collect(),
    }
}

/// A base RTT beyond any real path (a geostationary satellite hop is ~0.6 s): when the packets
/// in flight are too many and a flow's RTT is longer than this, its RTT is named, not the rate.
const LONG_RTT_NS: f64 = 10e9;

/// Project memory, events and wall time of `cfg`, from its fields alone.
pub fn project(cfg: &RunConfig) -> Projection {
    let flows = cfg.flows.len().max(1) as f64;
    let min_wire = cfg.flows.iter().map(|f| f.mss_bytes + HEADER_BYTES).min().unwrap_or(1500) as f64;
    let max_wire = cfg.flows.iter().map(|f| f.mss_bytes + HEADER_BYTES).max().unwrap_or(1500) as f64;
    let (longest, max_rtt_ns) = cfg.flows.iter().enumerate().map(|(i, f)| (i, f.rtt_ns)).max_by_key(|&(_, r)| r).unwrap_or((0, 0));
    let max_rtt_ns = max_rtt_ns as f64;
    let duration = cfg.duration_ns as f64;
    // A topology: every link's packets are events, every queue holds packets; the
    // fields named are those of its fastest link.
    let queues = queues(cfg);
    let rate = queues.iter().map(|q| q.1 as f64).sum::<f64>();
    let fastest = queues.iter().max_by_key(|q| q.1).map_or("bottleneck".to_string(), |q| q.0.clone());
    let bins = (duration / cfg.bin_ns.max(1) as f64).ceil();
    let samples = (duration / cfg.sample_ns.max(1) as f64).ceil();
    let sample_series = 3.0 + if cfg.trace { 7.0 * flows } else { 0.0 };
    let queue_pkts = queues.iter().map(|q| queue_packets(q.2, min_wire)).sum::<f64>();
    let bdp_pkts = rate * max_rtt_ns / 8e9 / min_wire;
    let drain_ns = queue_pkts * max_wire * 8e9 / rate;
    let hist_bins = duration.min(drain_ns.max(1.0)) / cfg.sojourn_bin_ns.max(1) as f64;
    let duration_or = |shorter: bool, f: &str| if shorter { f.to_string() } else { "duration".to_string() };
    // The packets in flight are the BDP (rate x the longest base RTT) plus the queue: named
    // after the buffer when the queue dominates, else after the flow's RTT when it is beyond
    // any real path, else after the rate.
    let inflight_field = if bdp_pkts < queue_pkts {
        format!("{fastest}.buffer")
    } else if max_rtt_ns > LONG_RTT_NS {
        format!("flows.{longest}.rtt")
    } else {
        format!("{fastest}.rate")
    };
    let terms = vec![
        MemoryTerm {
            field: duration_or(cfg.bin_ns < 100_000_000, "bin"),
            bytes: bins * (2.0 * flows + 3.0) * SERIES_ELEMENT_BYTES,
            what: format!("{bins:.3e} bins x {} per-bin series", 2.0 * flows + 3.0),
        },
        MemoryTerm {
            field: duration_or(cfg.sample_ns < 10_000_000, "sample"),
            bytes: samples * sample_series * SERIES_ELEMENT_BYTES,
            what: format!("{samples:.3e} samples x {sample_series} series"),
        },
        MemoryTerm {
            field: "sojourn_bin".into(),
            bytes: 2.0 * hist_bins * SERIES_ELEMENT_BYTES,
            what: format!("{hist_bins:.3e} sojourn-histogram bins"),
        },
        MemoryTerm {
            field: inflight_field,
            bytes: (bdp_pkts + queue_pkts) * INFLIGHT_PACKET_BYTES,
            what: format!("{:.3e} packets in flight (BDP {bdp_pkts:.3e} + queue limit {queue_pkts:.3e})", bdp_pkts + queue_pkts),
        },
        MemoryTerm { field: "flows".into(), bytes: flows * FLOW_STATE_BYTES, what: format!("{flows} flows' state") },
        bloom_term(cfg),
    ];
    let memory_bytes = terms.iter().map(|t| t.bytes).sum();
    let link_pkts = rate * duration / 8e9 / min_wire;
    let events = EVENTS_PER_LINK_PACKET * link_pkts + samples + bins;
    let wall_ns = events / PROJECTED_EVENTS_PER_S * 1e9;
    Projection { memory_bytes, terms, events, wall_ns }
}

fn human_bytes(b: f64) -> String {
    let units = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (u, shift) in units {
        let size = (1u64 << shift) as f64;
        if b >= size {
            return format!("{:.1} {u}", b / size);
        }
    }
    format!("{b:.0} B")
}

fn human_time(ns: f64) -> String {
    let s = ns / 1e9;
    if s >= 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{s:.1} s")
    }
}

/// [`RunConfig::resolve_json`] (decode and validate, each flow's algorithm resolved
/// once), then [`check`] against `limits`: what the binding's `simulate` and `check` call.
pub fn decode(json: &str, limits: &Limits) -> Result<(RunConfig, Vec<crate::cc::Algorithm>), SimError> {
    let (cfg, algorithms) = RunConfig::resolve_json(json)?;
    check(&cfg, limits)?;
    Ok((cfg, algorithms))
}

/// Refuse `cfg` when its projection exceeds `limits`; the error names the
/// field driving the figure, the projected figure and the limit to raise.
pub fn check(cfg: &RunConfig, limits: &Limits) -> Result<(), SimError> {
    let p = project(cfg);
    if p.memory_bytes > limits.memory_bytes as f64 {
        let t = p.largest();
        return Err(SimError::Invalid {
            field: t.field.clone(),
            msg: format!(
                "the run would need about {} of memory ({}: {}), over the limit of {}; \
                 change {} or raise the limit (limits.memory / --max-memory)",
                human_bytes(p.memory_bytes),
                t.what,
                human_bytes(t.bytes),
                human_bytes(limits.memory_bytes as f64),
                t.field
            ),
        });
    }
    let fastest = queues(cfg).into_iter().max_by_key(|q| q.1).expect("a bottleneck or links");
    let field = if fastest.1 > 10_000_000_000 { format!("{}.rate", fastest.0) } else { "duration".to_string() };
    if p.events > limits.events as f64 {
        return Err(SimError::Invalid {
            field: field.clone(),
            msg: format!(
                "the run would take about {:.3e} events, over the limit of {:.3e} (limits.events)",
                p.events, limits.events as f64
            ),
        });
    }
    if p.wall_ns > limits.wall_ns as f64 {
        return Err(SimError::Invalid {
            field: field.clone(),
            msg: format!(
                "the run would take about {} of wall time ({:.3e} events at {:.0e} events/s), over the limit of {} (limits.wall)",
                human_time(p.wall_ns),
                p.events,
                PROJECTED_EVENTS_PER_S,
                human_time(limits.wall_ns as f64)
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FlowConfig;

    fn s0(rate_bps: u64, duration_ns: u64) -> RunConfig {
        let flows = vec![FlowConfig::bulk("A", "cubic", 50_000_000), FlowConfig::bulk("B", "bbr", 50_000_000)];
        RunConfig::dumbbell(rate_bps, QdiscConfig::droptail(Some(21), None), flows, duration_ns)
    }

    /// The field and message of `check`'s refusal of `cfg` (a panic if it accepts it).
    fn refusal(cfg: &RunConfig, limits: &Limits) -> (String, String) {
        match check(cfg, limits) {
            Err(SimError::Invalid { field, msg }) => (field, msg),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn s0_base_case_is_within_the_default_limits() {
        assert!(check(&s0(10_000_000, 45_000_000_000), &Limits::default()).is_ok());
    }

    #[test]
    fn absurd_rate_is_refused_naming_the_rate() {
        let (field, msg) = refusal(&s0(1_000_000_000_000_000, 45_000_000_000), &Limits::default());
        assert_eq!(field, "bottleneck.rate");
        assert!(msg.contains("packets in flight"), "{msg}");
    }

    #[test]
    fn absurd_rtt_is_refused_naming_the_flows_rtt() {
        let mut cfg = s0(10_000_000, 45_000_000_000);
        cfg.flows[1].rtt_ns = 100_000 * 3600 * 1_000_000_000; // "100000h"
        assert_eq!(refusal(&cfg, &Limits::default()).0, "flows.1.rtt");
    }

    #[test]
    fn million_hour_run_is_refused_naming_the_duration() {
        let cfg = s0(10_000_000, 1_000_000 * 3600 * 1_000_000_000);
        assert_eq!(refusal(&cfg, &Limits::default()).0, "duration");
    }

    #[test]
    fn raising_the_memory_limit_moves_the_refusal_to_wall_time() {
        let cfg = s0(10_000_000, 1_000_000 * 3600 * 1_000_000_000);
        let big = Limits { memory_bytes: u64::MAX, ..Limits::default() };
        let msg = refusal(&cfg, &big).1;
        assert!(msg.contains("events"), "{msg}");
        let none = Limits { memory_bytes: u64::MAX, events: u64::MAX, wall_ns: u64::MAX };
        assert!(check(&cfg, &none).is_ok());
    }

    #[test]
    fn projection_grows_linearly_with_bins() {
        let mut a = s0(10_000_000, 45_000_000_000);
        let p1 = project(&a).terms[0].bytes;
        a.bin_ns /= 10;
        assert_eq!(project(&a).terms[0].bytes, 10.0 * p1);
    }
}
