//! Plain, fully-resolved run configuration: every unit is already converted
//! (nanoseconds, bits per second, bytes, packets). Python's `ccfair.spec`
//! turns the human experiment file into this; the Rust side never parses
//! "10Mbit" or "0.5bdp". Unknown keys are rejected (`deny_unknown_fields`).
//!
//! This struct is the whole contract across the Rust/Python boundary
//! (serialized as JSON); see docs/architecture.md.

use serde::{Deserialize, Serialize};

use crate::error::SimError;

/// One simulation run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Simulated duration.
    pub duration_ns: u64,
    /// Master seed; every random stream of the run is derived from it.
    pub seed: u64,
    /// Width of the per-flow delivered-bytes bins.
    #[serde(default = "u64_is::<BIN_DEFAULT_NS>")]
    pub bin_ns: u64,
    /// Interval of the queue-length samples and of the optional cwnd/RTT trace.
    #[serde(default = "u64_is::<SAMPLE_DEFAULT_NS>")]
    pub sample_ns: u64,
    /// Width of the sojourn-time histogram bins.
    #[serde(default = "u64_is::<SOJOURN_BIN_DEFAULT_NS>")]
    pub sojourn_bin_ns: u64,
    /// Analysis window: the sojourn histogram counts only packets leaving the
    /// queue in [window_start_ns, window_end_ns). None = whole run.
    #[serde(default)]
    pub window_start_ns: Option<u64>,
    #[serde(default)]
    pub window_end_ns: Option<u64>,
    /// Record per-flow cwnd / srtt / pacing-rate samples every `sample_ns`.
    #[serde(default)]
    pub trace: bool,
    /// The dumbbell's one bottleneck, which every flow crosses; absent when
    /// the run has `links` (exactly one of the two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<BottleneckConfig>,
    /// A topology of links in series (topology.rs): each flow crosses the
    /// links of its `path`. Empty: the dumbbell of `bottleneck`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkConfig>,
    pub flows: Vec<FlowConfig>,
    /// The end hosts' TCP timestamp clocks (`net.ipv4.tcp_timestamps`,
    /// Documentation/networking/ip-sysctl.rst): true = 1, Linux's default, a random
    /// offset per connection and end; false = 2, no offset, every TSval counting from
    /// one epoch (the host's boot). Only TCP-LP reads absolute TSvals (cc/mod.rs
    /// `TcpCc::draw_ts_clocks`).
    #[serde(default = "bool_is::<true>")]
    pub tcp_timestamp_offsets: bool,
    /// Where the hosts' tick clocks (jiffies, the 1 ms TCP timestamp clock) tick relative to
    /// the run's time 0: true, the phase of the hosts' clock
    /// (`tcp_timestamp_epoch_ns`, cc/mod.rs `host_clock_epoch_ns`: real hosts count from their boot); false, ticks at 0 (`noise = "none"`'s idealized hosts).
    #[serde(default = "bool_is::<true>")]
    pub host_clock_phase: bool,
    /// The hosts' clock (`tcp_clock_ns`: ns since the host booted,
    /// `ktime_get_ns`) at the run's time 0; the TSvals without offset are this clock
    /// in ms mod 2^32 (TCP_TS_HZ = 1000), the tick clocks tick at its phase. None: drawn from
    /// the seed (cc/mod.rs `host_clock_epoch_ns`); a testbed run's own is recorded (`ts_epoch_ns`) and
    /// given here when the simulator recomputes it (`ccfair fidelity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_timestamp_epoch_ns: Option<u64>,
}

/// Result bins when a run sets none (`bin_ns`), ns.
pub const BIN_DEFAULT_NS: u64 = 100_000_000;
/// Queue samples' period when a run sets none (`sample_ns`), ns.
pub const SAMPLE_DEFAULT_NS: u64 = 10_000_000;
/// Sojourn-time histogram bins when a run sets none (`sojourn_bin_ns`), ns.
pub const SOJOURN_BIN_DEFAULT_NS: u64 = 100_000;

/// A serde default that is a constant: `#[serde(default = "u64_is::<NAME>")]`.
pub(crate) const fn u64_is<const V: u64>() -> u64 {
    V
}
/// The same for a `u32`.
pub(crate) const fn u32_is<const V: u32>() -> u32 {
    V
}
/// The same for a `bool`.
pub(crate) const fn bool_is<const V: bool>() -> bool {
    V
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BottleneckConfig {
    /// Bottleneck link rate.
    pub rate_bps: u64,
    /// One-way propagation delay of the bottleneck link itself (part of every flow's RTT).
    #[serde(default)]
    pub delay_ns: u64,
    pub qdisc: QdiscConfig,
    /// Bytes the link adds to every packet's IP length (layer-2 framing): it
    /// counts in the serialization time and in the queue's byte limits and
    /// backlog. 0 (unset) = IP packets only; experiment files default to the
    /// Ethernet header, 14 (python/ccfair/spec.py `Bottleneck.l2_overhead`).
    #[serde(default)]
    pub l2_overhead_bytes: u32,
    /// Outages of the link, `[start_ns, duration_ns]` in time order, not overlapping: it sends
    /// nothing over each, its frames wait (outages.rs). Empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outages_ns: Vec<[u64; 2]>,
}

impl BottleneckConfig {
    /// The link's outages (outages.rs; None: none), in the simulator's time base.
    pub fn outages(&self) -> Result<Option<crate::outages::Outages>, SimError> {
        outages_of(&self.outages_ns, "bottleneck")
    }
}

/// `outages_ns` as [`crate::outages::Outages`]; an error names `at.outages.N`.
fn outages_of(outages_ns: &[[u64; 2]], at: &str) -> Result<Option<crate::outages::Outages>, SimError> {
    crate::outages::Outages::from_pairs(outages_ns, 0).map_err(|(i, msg)| SimError::Invalid { field: format!("{at}.outages.{i}"), msg })
}

/// One link of a topology (topology.rs): a queue (`qdisc`), a shaper at a
/// constant `rate_bps` or driven by a mahimahi trace (`trace_ms`), a
/// propagation delay and a random loss.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Unique name; flows' `path` and `reverse_path` name links by it.
    pub name: String,
    /// Constant link rate (exactly one of `rate_bps` / `trace_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bps: Option<u64>,
    /// Delivery opportunities, ms since the start, non-decreasing (mahimahi's
    /// trace format): at each one up to [`TRACE_OPPORTUNITY_BYTES`] of queued
    /// packets leave; the trace repeats with period = its last timestamp.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_ms: Option<Vec<u64>>,
    /// One-way propagation delay from this link's output to the next hop.
    #[serde(default)]
    pub delay_ns: u64,
    pub qdisc: QdiscConfig,
    /// Bytes added to every packet's IP length on this link (as `BottleneckConfig`).
    #[serde(default)]
    pub l2_overhead_bytes: u32,
    /// Probability that a packet entering the link is lost (random, before its queue), in [0, 1).
    #[serde(default)]
    pub loss: f64,
    /// Outages of a rate link (as `BottleneckConfig`'s; outages.rs). Empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outages_ns: Vec<[u64; 2]>,
}

/// Bytes one delivery opportunity of a trace-driven link may carry: one
/// 1500-byte MTU (mahimahi's trace format, Netravali et al., USENIX ATC 2015).
pub const TRACE_OPPORTUNITY_BYTES: u64 = 1500;

impl LinkConfig {
    /// The link's outages (outages.rs; None: none), in the simulator's time base; an error names
    /// `links.{k}.outages.N`.
    pub fn outages(&self, k: usize) -> Result<Option<crate::outages::Outages>, SimError> {
        outages_of(&self.outages_ns, &format!("links.{k}"))
    }

    /// The link's rate, bit/s; for a trace, its mean over one period.
    pub fn mean_rate_bps(&self) -> u64 {
        match (&self.rate_bps, &self.trace_ms) {
            (Some(r), _) => *r,
            (None, Some(t)) => match t.last() {
                Some(&last) if last > 0 => (t.len() as u128 * TRACE_OPPORTUNITY_BYTES as u128 * 8 * 1000 / last as u128) as u64,
                _ => 0,
            },
            (None, None) => 0,
        }
    }

    /// Reject values the simulator cannot run (also the testbed's bottleneck); the field is relative to the link.
    pub fn validate(&self) -> Result<(), (String, String)> {
        let err = |f: &str, m: String| Err((f.to_string(), m));
        if self.name.is_empty() || !self.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return err("name", format!("must be a non-empty name of [A-Za-z0-9_-], got '{}'", self.name));
        }
        match (&self.rate_bps, &self.trace_ms) {
            (Some(_), Some(_)) => return err("rate", "give exactly one of rate or trace, got both".into()),
            (None, None) => return err("rate", "give exactly one of rate or trace, got neither".into()),
            (Some(0), None) => return err("rate", "must be > 0 bit/s, got 0".into()),
            (None, Some(t)) => {
                if t.is_empty() {
                    return err("trace", "the trace has no delivery opportunity".into());
                }
                if let Some(i) = t.windows(2).position(|w| w[1] < w[0]) {
                    return err("trace", format!("timestamps must not decrease: line {} ({} ms) after {} ms", i + 2, t[i + 1], t[i]));
                }
                if t[t.len() - 1] == 0 {
                    return err("trace", "the last timestamp (the trace's period) must be > 0 ms".into());
                }
                if t[t.len() - 1] > u64::MAX / 1_000_000 / 2 {
                    return err("trace", format!("the last timestamp {} ms is too large", t[t.len() - 1]));
                }
            }
            _ => {}
        }
        if !(0.0..1.0).contains(&self.loss) {
            return err("loss", format!("must be a probability in [0, 1), got {}", self.loss));
        }
        if self.trace_ms.is_some() && !self.outages_ns.is_empty() {
            return err("outages", "a trace-driven link's outages are gaps in its trace; outages are allowed only with rate".into());
        }
        check_outages(&self.outages_ns)?;
        if let Err(e) = self.qdisc.validate() {
            return Err((format!("qdisc.{}", e.field), e.msg));
        }
        Ok(())
    }
}

/// A link's `outages_ns` (outages.rs): (field relative to the link, message) of the first entry refused.
fn check_outages(outages_ns: &[[u64; 2]]) -> Result<(), (String, String)> {
    crate::outages::Outages::check(outages_ns).map_err(|(i, msg)| (format!("outages.{i}"), msg))
}

/// Queue disciplines: each declares its config next to its code (qdisc/*.rs);
/// the registry in qdisc/mod.rs makes them the variants of [`QdiscConfig`].
pub use crate::qdisc::codel::CodelConfig;
pub use crate::qdisc::csaqm::{CsaqmConfig, CsaqmController};
pub use crate::qdisc::drr::FqDrrConfig;
pub use crate::qdisc::dualpi2::DualPi2Config;
pub use crate::qdisc::fq_codel::FqCodelConfig;
pub use crate::qdisc::pi2::Pi2Config;
pub use crate::qdisc::pie::PieConfig;
pub use crate::qdisc::red::RedConfig;
pub use crate::qdisc::rrmqs::RrmqsConfig;
pub use crate::qdisc::step::StepConfig;
pub use crate::qdisc::QdiscConfig;

/// A flow's use of ECN (RFC 3168 / RFC 9331).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnMode {
    /// Not ECN-capable: data is Not-ECT; congestion is signalled by drops only.
    #[default]
    Off,
    /// RFC 3168: data ECT(0); the receiver echoes ECE until it sees CWR; the
    /// sender reduces once per window (CWR state).
    Classic,
    /// Scalable / L4S (RFC 9331): data ECT(1); the receiver echoes the CE state
    /// of every packet (DCTCP's state machine, RFC 8257 3.2), accurate enough for
    /// per-packet CE counts.
    Scalable,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    pub name: String,
    /// Congestion-control algorithm name (see `cc::names()`).
    pub cca: String,
    /// Parameters of the CCA by field name, in simulator units (the CCA's
    /// declared params, cc/*.rs); unset fields keep their defaults.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub cca_params: serde_json::Map<String, serde_json::Value>,
    /// Pace packets (Linux internal pacing / fq); BBR always paces.
    #[serde(default)]
    pub pacing: bool,
    /// Base round-trip time of this flow's path (propagation only, no queueing,
    /// no serialization). Must be >= 2 x bottleneck delay.
    pub rtt_ns: u64,
    /// Start time (before jitter).
    #[serde(default)]
    pub start_ns: u64,
    /// A uniform random delay in [0, start_jitter_ns) added to the start, drawn from the seed.
    #[serde(default)]
    pub start_jitter_ns: u64,
    /// Stop sending new data at this time (None = end of run).
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// TCP payload per segment.
    #[serde(default = "u32_is::<MSS_DEFAULT_BYTES>")]
    pub mss_bytes: u32,
    /// Initial advertised receive window, in segments (S0: 200).
    #[serde(default = "u32_is::<RWND_INIT_DEFAULT_PKTS>")]
    pub rwnd_init_pkts: u32,
    /// Upper bound of the (auto-tuned) receive window, in segments (None = unbounded).
    #[serde(default)]
    pub rwnd_max_pkts: Option<u32>,
    /// Initial congestion window, in segments; None = the transport's
    /// default (sim.rs: TCP [`TCP_INIT_CWND_PKTS`] as Linux, RFC 6928; DCCP
    /// CCID 2 RFC 4341 §5, `dccp::ccid2::initial_window_pkts`).
    #[serde(default)]
    pub init_cwnd_pkts: Option<u32>,
    /// Delayed ACKs (every second full segment, 40 ms timer, quick-ACK at start and while the window opens).
    #[serde(default = "bool_is::<true>")]
    pub delayed_ack: bool,
    /// Host noise, sender side: mean of an exponential extra delay per skb
    /// of data between TCP and the wire (scheduling, softirq, qdisc), its
    /// frames back to back (lines.rs), FIFO; 0 = none (the idealized host).
    /// The experiment file's `noise` sets it.
    #[serde(default)]
    pub host_jitter_ns: u64,
    /// Host noise, receiver side: the same for ACKs (mean, ns; 0 = none).
    #[serde(default)]
    pub ack_jitter_ns: u64,
    /// Host noise, sender side: the stack's time per skb, ns: of the skbs one
    /// send leaves with, the k-th is stamped (its TSval) k times this later
    /// (tcp/sender.rs `stamp_skbs`); 0 = all at once (the idealized host).
    #[serde(default)]
    pub skb_stack_ns: u64,
    /// Host noise's heavy tail on ACKs: per million ACKs, how many get a
    /// further exponential delay of mean `ack_tail_ns` (lines.rs `TailLaw`;
    /// 0 = none, as the experiment file's `noise` sets it; only with
    /// `ack_jitter_ns`). A what-if of bench/fidelity_many_seeds.py `--noise-set`.
    #[serde(default)]
    pub ack_tail_ppm: u32,
    /// Host noise's heavy tail on ACKs: its mean, ns (0 = none).
    #[serde(default)]
    pub ack_tail_ns: u64,
    /// Finite flow: bytes the application sends (None = bulk, until `stop_ns`).
    #[serde(default)]
    pub size_bytes: Option<u64>,
    /// Application-limited flow: the application hands TCP data at this rate.
    #[serde(default)]
    pub rate_cap_bps: Option<u64>,
    /// Probability that a data packet of this flow is lost on its access path,
    /// before the bottleneck (non-congestion loss, e.g. a lossy wireless hop).
    #[serde(default)]
    pub loss: f64,
    /// ECN use; None = the CCA's default (scalable for CCAs that need ECN, e.g. DCTCP, Prague; else off).
    #[serde(default)]
    pub ecn: Option<EcnMode>,
    /// Transport; None = from the CCA ("ccid2" -> DCCP, every other CCA -> TCP).
    #[serde(default)]
    pub transport: Option<Transport>,
    /// Minimum retransmission timeout (Linux route `rto_min`); None = TCP_RTO_MIN, 200 ms.
    #[serde(default)]
    pub min_rto_ns: Option<u64>,
    /// TSO/GSO: at most this many segments per burst (the device's
    /// `gso_max_segs`); None = Linux autosizing (`tcp_tso_autosize`, up to
    /// 64 KB), 1 = TSO/GSO off (one segment per send).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tso_max_segs: Option<u32>,
    /// GRO-style receive coalescing at the receiver (tcp/receiver.rs): the
    /// NAPI poll window, ns, within which back-to-back in-order segments
    /// merge into one skb (one ACK); 0 = off (the default, as the testbed's
    /// veths and a veth's default on Linux 6.18).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub gro_ns: u64,
    /// Linux SACK compression at the receiver (tcp/receiver.rs:
    /// `tcp_comp_sack_nr` = 44 when on, 0 when off). Off by default: on, the
    /// ACKs per data frame are the kernel's but the fidelity sets are not
    /// closer (docs/fidelity.md, "Receiver").
    #[serde(default, skip_serializing_if = "is_false")]
    pub sack_compression: bool,
    /// Forward (data) path: names of `RunConfig::links` in order. Empty: the
    /// dumbbell's bottleneck (a run with links needs a path for every flow).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
    /// Links the flow's ACKs cross, queued behind the links' other traffic.
    /// Empty: ACKs return over an uncongested line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reverse_path: Vec<String>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !v
}

/// A flow's transport protocol: TCP, or DCCP with CCID 2 (dccp/, RFC 4340/4341).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Tcp,
    Dccp,
}

impl FlowConfig {
    /// A bulk flow starting at 0 with every other field at its default:
    /// exactly what a config naming only `name`, `cca` and `rtt_ns` gets (it is
    /// built through the same serde defaults).
    pub fn bulk(name: &str, cca: &str, rtt_ns: u64) -> FlowConfig {
        serde_json::from_value(serde_json::json!({ "name": name, "cca": cca, "rtt_ns": rtt_ns }))
            .expect("a FlowConfig with only the required fields deserializes")
    }

    /// The transport this flow uses: DCCP exactly when the CCA is CCID 2.
    pub fn transport(&self) -> Transport {
        if self.cca == crate::cc::CCID2_NAME {
            Transport::Dccp
        } else {
            Transport::Tcp
        }
    }
}

/// A flow's TCP payload per segment when it sets none, bytes (1500 on the wire with [`HEADER_BYTES`]).
pub const MSS_DEFAULT_BYTES: u32 = 1448;
/// The payloads per segment a flow may set, bytes.
pub const MSS_RANGE_BYTES: std::ops::RangeInclusive<u32> = 64..=9000;
/// The initial advertised receive window when a flow sets none, segments (study S0's 200).
pub const RWND_INIT_DEFAULT_PKTS: u32 = 200;
/// The smallest initial receive or congestion window a flow may set, segments.
pub const MIN_WINDOW_PKTS: u32 = 1;
/// TCP's initial window (Linux TCP_INIT_CWND, RFC 6928), in segments.
pub const TCP_INIT_CWND_PKTS: u32 = 10;
/// The access-path loss probabilities a flow may set.
pub const LOSS_RANGE: std::ops::Range<f64> = 0.0..1.0;

/// The flow settings' defaults and bounds by the experiment file's names (`schema::json`'s
/// "flow"), from the constants above and `FlowConfig`'s serde defaults: Python's flow and
/// group models, the JSON Schema and docs/experiment-file.md are checked against it
/// (tests/test_flow_defaults.py).
pub fn flow_fields_json() -> serde_json::Value {
    let d = FlowConfig::bulk("", "", 1);
    serde_json::json!({
        "mss": { "default": d.mss_bytes, "min": MSS_RANGE_BYTES.start(), "max": MSS_RANGE_BYTES.end(), "unit": "bytes" },
        "rwnd": { "default": d.rwnd_init_pkts, "min": MIN_WINDOW_PKTS, "unit": "packets" },
        "init_cwnd": { "default": TCP_INIT_CWND_PKTS, "min": MIN_WINDOW_PKTS, "unit": "packets" },
        "loss": { "default": d.loss, "min": LOSS_RANGE.start, "max_exclusive": LOSS_RANGE.end },
        "delayed_ack": { "default": d.delayed_ack },
    })
}

/// Bytes of headers on the wire per segment: IPv4 20 + TCP 20 + timestamps option 12.
/// With the default MSS of 1448 a data packet is 1500 bytes on the wire.
pub const HEADER_BYTES: u32 = 52;
/// Wire size of a pure ACK (IPv4 + TCP + timestamps; SACK blocks not counted).
pub const ACK_WIRE_BYTES: u32 = 52;

impl RunConfig {
    /// A run of `duration_ns` through one bottleneck (`rate_bps`, `qdisc`, no
    /// extra delay, no L2 overhead) with the default bins and samples, seed 1,
    /// no analysis window and no trace: what tests and benchmarks start from.
    pub fn dumbbell(rate_bps: u64, qdisc: QdiscConfig, flows: Vec<FlowConfig>, duration_ns: u64) -> RunConfig {
        RunConfig {
            duration_ns,
            seed: 1,
            bin_ns: BIN_DEFAULT_NS,
            sample_ns: SAMPLE_DEFAULT_NS,
            sojourn_bin_ns: SOJOURN_BIN_DEFAULT_NS,
            window_start_ns: None,
            window_end_ns: None,
            trace: false,
            bottleneck: Some(BottleneckConfig { rate_bps, delay_ns: 0, qdisc, l2_overhead_bytes: 0, outages_ns: Vec::new() }),
            links: Vec::new(),
            flows,
            tcp_timestamp_offsets: true,
            host_clock_phase: true,
            tcp_timestamp_epoch_ns: None,
        }
    }

    /// Decode and validate (the errors name the field).
    pub fn from_json(s: &str) -> Result<RunConfig, SimError> {
        Self::resolve_json(s).map(|(cfg, _)| cfg)
    }

    /// [`RunConfig::from_json`], with each flow's algorithm as validating it gave it ([`RunConfig::resolve`]).
    pub fn resolve_json(s: &str) -> Result<(RunConfig, Vec<crate::cc::Algorithm>), SimError> {
        let cfg: RunConfig = match serde_json::from_str(s) {
            Ok(cfg) => cfg,
            Err(e) => return Err(locate_decode_error(s).unwrap_or_else(|| SimError::Config(format!("{e}")))),
        };
        let algorithms = cfg.resolve()?;
        Ok((cfg, algorithms))
    }

    /// Reject values the simulator cannot run, naming the field.
    pub fn validate(&self) -> Result<(), SimError> {
        self.resolve().map(|_| ())
    }

    /// [`RunConfig::validate`], giving each flow's algorithm with its parameters validated
    /// ([`crate::cc::Algorithm`]): a run builds its flows from these (`crate::try_run_with`).
    pub fn resolve(&self) -> Result<Vec<crate::cc::Algorithm>, SimError> {
        let bad = |field: &str, msg: &str| Err(SimError::Invalid { field: field.to_string(), msg: msg.to_string() });
        if self.duration_ns == 0 {
            return bad("duration", "must be > 0");
        }
        if self.bin_ns == 0 {
            return bad("bin", "must be > 0");
        }
        if self.sample_ns == 0 {
            return bad("sample", "must be > 0");
        }
        if self.sojourn_bin_ns == 0 {
            return bad("sojourn_bin", "must be > 0");
        }
        match (&self.bottleneck, self.links.is_empty()) {
            (Some(_), false) => return bad("links", "a run has either a bottleneck or links, not both"),
            (None, true) => return bad("bottleneck", "a run needs a bottleneck or links"),
            (Some(b), true) => validate_bottleneck(b)?,
            (None, false) => self.validate_links()?,
        }
        if self.flows.is_empty() {
            return bad("flows", "at least one flow is required");
        }
        let mut algorithms = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            let invalid = |(name, msg): (&str, String)| SimError::Invalid { field: format!("flows.{i}.{name}"), msg };
            check_transport(f).map_err(invalid)?;
            algorithms.push(flow_algorithm(i, f)?);
            match &self.bottleneck {
                Some(b) => check_dumbbell_flow(b, f).map_err(invalid)?,
                None => self.validate_paths(i, f)?,
            }
            check_flow_settings(f).map_err(invalid)?;
        }
        Ok(algorithms)
    }

    /// Each flow's algorithm with its parameters validated (the part of [`RunConfig::resolve`]
    /// a run needs; `crate::try_run` for configurations built in Rust).
    pub fn algorithms(&self) -> Result<Vec<crate::cc::Algorithm>, SimError> {
        self.flows.iter().enumerate().map(|(i, f)| flow_algorithm(i, f)).collect()
    }
}

/// Flow `i`'s algorithm (`cca` with `cca_params`), validated; the error names the field.
fn flow_algorithm(i: usize, f: &FlowConfig) -> Result<crate::cc::Algorithm, SimError> {
    if crate::cc::lookup(&f.cca).is_none() {
        return Err(SimError::Invalid { field: format!("flows.{i}.cca"), msg: crate::cc::unknown_cca(&f.cca) });
    }
    crate::cc::prepare(&f.cca, &f.cca_params).map_err(|e| SimError::Invalid { field: format!("flows.{i}.cca.{}", e.field), msg: e.msg })
}

impl RunConfig {
    /// The links (each has a name unique in the run).
    fn validate_links(&self) -> Result<(), SimError> {
        for (k, l) in self.links.iter().enumerate() {
            l.validate().map_err(|(f, msg)| SimError::Invalid { field: format!("links.{k}.{f}"), msg })?;
            if let Some(j) = self.links[..k].iter().position(|o| o.name == l.name) {
                return Err(SimError::Invalid {
                    field: format!("links.{k}.name"),
                    msg: format!("duplicate link name '{}' (also links.{j})", l.name),
                });
            }
        }
        Ok(())
    }

    /// IP length of the run's largest data packet (largest MSS + headers): a
    /// rate-limited link's token bucket holds one such packet's frame
    /// (token_bucket.rs; the testbed's `burst_bytes`, spec.py `packet_wire_bytes`).
    pub fn largest_packet_bytes(&self) -> u32 {
        self.flows.iter().map(|f| f.mss_bytes).max().unwrap_or(MSS_DEFAULT_BYTES) + HEADER_BYTES
    }

    /// Index of the link named `name`.
    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }

    /// Flow `i`'s path and reverse path name known links, none twice, and
    /// its RTT holds their delays.
    fn validate_paths(&self, i: usize, f: &FlowConfig) -> Result<(), SimError> {
        let names = || self.links.iter().map(|l| format!("'{}'", l.name)).collect::<Vec<_>>().join(", ");
        for (key, path) in [("path", &f.path), ("reverse_path", &f.reverse_path)] {
            if key == "path" && path.is_empty() {
                return Err(SimError::Invalid {
                    field: format!("flows.{i}.path"),
                    msg: format!("must name at least one link (allowed: {})", names()),
                });
            }
            for (j, name) in path.iter().enumerate() {
                if self.link_index(name).is_none() {
                    return Err(SimError::Invalid {
                        field: format!("flows.{i}.{key}.{j}"),
                        msg: format!("unknown link '{name}' (allowed: {})", names()),
                    });
                }
                if path[..j].contains(name) {
                    return Err(SimError::Invalid {
                        field: format!("flows.{i}.{key}.{j}"),
                        msg: format!("link '{name}' appears twice in one path (a loop)"),
                    });
                }
            }
        }
        let (fwd, rev) = self.path_delays_ns(f);
        let need = fwd as u128 + if f.reverse_path.is_empty() { fwd as u128 } else { rev as u128 };
        if (f.rtt_ns as u128) < need {
            return Err(SimError::Invalid {
                field: format!("flows.{i}.rtt"),
                msg: format!("must be at least the delays of its links ({need} ns), got {} ns", f.rtt_ns),
            });
        }
        Ok(())
    }

    /// Sums of the link delays of `f`'s path and reverse path (names must be known).
    pub fn path_delays_ns(&self, f: &FlowConfig) -> (u64, u64) {
        let sum =
            |p: &[String]| p.iter().filter_map(|n| self.link_index(n)).map(|k| self.links[k].delay_ns).fold(0u64, u64::saturating_add);
        (sum(&f.path), sum(&f.reverse_path))
    }
}

fn validate_bottleneck(b: &BottleneckConfig) -> Result<(), SimError> {
    if b.rate_bps == 0 {
        return Err(SimError::Invalid { field: "bottleneck.rate".into(), msg: "must be > 0".into() });
    }
    if let Err(e) = b.qdisc.validate() {
        return Err(SimError::Invalid { field: format!("bottleneck.qdisc.{}", e.field), msg: e.msg });
    }
    check_outages(&b.outages_ns).map_err(|(field, msg)| SimError::Invalid { field: format!("bottleneck.{field}"), msg })
}

/// A config that does not decode: if the cause is a queue-discipline parameter
/// (wrong type, unknown name), the declared parameters name it.
fn locate_decode_error(s: &str) -> Option<SimError> {
    let v: serde_json::Value = serde_json::from_str(s).ok()?;
    let links = v.get("links").and_then(|l| l.as_array()).cloned().unwrap_or_default();
    let places = std::iter::once(("bottleneck".to_string(), v.get("bottleneck").cloned()))
        .chain(links.into_iter().enumerate().map(|(k, l)| (format!("links.{k}"), Some(l))));
    places.filter_map(|(at, c)| Some((at, c?.get("qdisc")?.as_object()?.clone()))).find_map(|(at, mut q)| {
        let kind = q.remove("kind")?;
        let e = crate::qdisc::resolve(kind.as_str()?, &q).err()?;
        Some(SimError::Invalid { field: format!("{at}.qdisc.{}", e.field), msg: e.msg })
    })
}

/// A dumbbell flow: no path, and an RTT that covers the bottleneck's delay both ways.
fn check_dumbbell_flow(b: &BottleneckConfig, f: &FlowConfig) -> Result<(), (&'static str, String)> {
    if !f.path.is_empty() || !f.reverse_path.is_empty() {
        let name = if f.path.is_empty() { "reverse_path" } else { "path" };
        return Err((name, "a path needs links (the run has a bottleneck)".into()));
    }
    if f.rtt_ns < 2 * b.delay_ns {
        return Err(("rtt", format!("must be at least twice the bottleneck delay ({} ns), got {} ns", 2 * b.delay_ns, f.rtt_ns)));
    }
    Ok(())
}

/// A flow's own settings against their bounds: (field, message) of the first one out.
fn check_flow_settings(f: &FlowConfig) -> Result<(), (&'static str, String)> {
    if f.rtt_ns == 0 {
        return Err(("rtt", "must be > 0".into()));
    }
    if !MSS_RANGE_BYTES.contains(&f.mss_bytes) {
        let (lo, hi) = (MSS_RANGE_BYTES.start(), MSS_RANGE_BYTES.end());
        return Err(("mss", format!("must be in {lo}..={hi} bytes, got {}", f.mss_bytes)));
    }
    if let Some(w) = f.init_cwnd_pkts.filter(|&w| w < MIN_WINDOW_PKTS) {
        return Err(("init_cwnd", format!("must be >= {MIN_WINDOW_PKTS} packet, got {w}")));
    }
    if f.rwnd_init_pkts < MIN_WINDOW_PKTS {
        return Err(("rwnd", format!("must be >= {MIN_WINDOW_PKTS} packet, got {}", f.rwnd_init_pkts)));
    }
    if !LOSS_RANGE.contains(&f.loss) {
        return Err(("loss", format!("must be a probability in [0, 1), got {}", f.loss)));
    }
    if f.size_bytes == Some(0) {
        return Err(("size", "must be > 0 bytes, got 0".into()));
    }
    if f.tso_max_segs == Some(0) {
        return Err(("tso", "must be true (autosizing), false (off) or a segment count >= 1, got 0".into()));
    }
    if f.min_rto_ns == Some(0) {
        return Err(("min_rto", "must be > 0".into()));
    }
    if f.rate_cap_bps == Some(0) {
        return Err(("rate_cap", "must be > 0 bit/s, got 0".into()));
    }
    match f.stop_ns {
        Some(stop) if stop <= f.start_ns => Err(("stop", format!("must be after start ({} ns), got {} ns", f.start_ns, stop))),
        _ => Ok(()),
    }
}

/// DCCP flows: CCID 2 is the only DCCP congestion control, and the TCP-only
/// options do not apply (the error names the field).
fn check_transport(f: &FlowConfig) -> Result<(), (&'static str, String)> {
    match (f.transport, f.transport()) {
        (Some(Transport::Dccp), Transport::Tcp) => {
            return Err(("cca", format!("transport 'dccp' supports only cca 'ccid2' (got '{}')", f.cca)))
        }
        (Some(Transport::Tcp), Transport::Dccp) => {
            return Err(("transport", "cca 'ccid2' is DCCP's CCID 2: transport must be 'dccp' (or omitted)".into()))
        }
        _ => {}
    }
    if f.transport() == Transport::Dccp {
        if f.pacing {
            return Err(("pacing", "not supported with transport 'dccp' (CCID 2 is window-based, unpaced)".into()));
        }
        if f.rate_cap_bps.is_some() {
            return Err(("rate_cap", "not supported with transport 'dccp'".into()));
        }
        if f.min_rto_ns.is_some() {
            return Err(("min_rto", "not supported with transport 'dccp' (CCID 2 keeps its own RTO)".into()));
        }
        if f.tso_max_segs.is_some() {
            return Err(("tso", "not supported with transport 'dccp' (datagrams are not segmented)".into()));
        }
        if f.gro_ns > 0 {
            return Err(("gro", "not supported with transport 'dccp' (no TCP receive coalescing)".into()));
        }
        if matches!(f.ecn, Some(EcnMode::Classic) | Some(EcnMode::Scalable)) {
            return Err(("ecn", "not supported with transport 'dccp' (allowed: 'off' or omitted)".into()));
        }
    }
    Ok(())
}
