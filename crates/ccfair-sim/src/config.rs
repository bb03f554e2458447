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
    #[serde(default = "default_bin_ns")]
    pub bin_ns: u64,
    /// Interval of the queue-length samples and of the optional cwnd/RTT trace.
    #[serde(default = "default_sample_ns")]
    pub sample_ns: u64,
    /// Width of the sojourn-time histogram bins.
    #[serde(default = "default_sojourn_bin_ns")]
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
    pub bottleneck: BottleneckConfig,
    pub flows: Vec<FlowConfig>,
}

fn default_bin_ns() -> u64 {
    100_000_000
}
fn default_sample_ns() -> u64 {
    10_000_000
}
fn default_sojourn_bin_ns() -> u64 {
    100_000
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
}

/// Queue discipline at the bottleneck. Later issues add AQMs here.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QdiscConfig {
    /// FIFO, tail drop. A packet is dropped if admitting it would exceed either limit.
    Droptail {
        #[serde(default)]
        limit_packets: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
    },
    /// PI2 (De Schepper et al., CoNEXT 2016): one FIFO, PI controller on queue
    /// delay; classic packets dropped/marked with p'^2, ECT(1) marked with k*p'.
    Pi2 {
        limit_packets: u64,
        #[serde(default = "default_pi2_target_ns")]
        target_ns: u64,
        #[serde(default = "default_pi2_tupdate_ns")]
        tupdate_ns: u64,
        #[serde(default = "default_pi2_alpha_hz")]
        alpha_hz: f64,
        #[serde(default = "default_pi2_beta_hz")]
        beta_hz: f64,
        #[serde(default = "default_coupling")]
        coupling: f64,
    },
    /// DualPI2 (RFC 9332, Linux sch_dualpi2): L4S queue (ECT(1)/CE) with a step
    /// (or ramp) marker, classic queue with PI2, coupled by k, time-shifted FIFO.
    #[serde(rename = "dualpi2")]
    DualPi2 {
        limit_packets: u64,
        #[serde(default = "default_pi2_target_ns")]
        target_ns: u64,
        #[serde(default = "default_pi2_tupdate_ns")]
        tupdate_ns: u64,
        #[serde(default = "default_pi2_alpha_hz")]
        alpha_hz: f64,
        #[serde(default = "default_pi2_beta_hz")]
        beta_hz: f64,
        #[serde(default = "default_coupling")]
        coupling: f64,
        #[serde(default = "default_step_thresh_ns")]
        step_thresh_ns: u64,
        #[serde(default)]
        ramp_range_ns: u64,
        #[serde(default = "default_tshift_ns")]
        tshift_ns: u64,
        #[serde(default = "default_true")]
        drop_overload: bool,
    },
}

fn default_pi2_target_ns() -> u64 {
    crate::qdisc::pi2::DEFAULT_TARGET_NS
}
fn default_pi2_tupdate_ns() -> u64 {
    crate::qdisc::pi2::DEFAULT_TUPDATE_NS
}
fn default_pi2_alpha_hz() -> f64 {
    crate::qdisc::pi2::DEFAULT_ALPHA_HZ
}
fn default_pi2_beta_hz() -> f64 {
    crate::qdisc::pi2::DEFAULT_BETA_HZ
}
fn default_coupling() -> f64 {
    crate::qdisc::pi2::DEFAULT_COUPLING
}
fn default_step_thresh_ns() -> u64 {
    crate::qdisc::dualpi2::DEFAULT_STEP_THRESH_NS
}
fn default_tshift_ns() -> u64 {
    crate::qdisc::dualpi2::DEFAULT_TSHIFT_NS
}

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
    #[serde(default = "default_mss")]
    pub mss_bytes: u32,
    /// Initial advertised receive window, in segments (S0: 200).
    #[serde(default = "default_rwnd_init")]
    pub rwnd_init_pkts: u32,
    /// Upper bound of the (auto-tuned) receive window, in segments (None = unbounded).
    #[serde(default)]
    pub rwnd_max_pkts: Option<u32>,
    /// Initial congestion window, in segments (Linux: 10, RFC 6928).
    #[serde(default = "default_init_cwnd")]
    pub init_cwnd_pkts: u32,
    /// Delayed ACKs (every second full segment, 40 ms timer, quick-ACK at start).
    #[serde(default = "default_true")]
    pub delayed_ack: bool,
    /// ECN use; None = the CCA's default (scalable for CCAs that need ECN, e.g. DCTCP, Prague; else off).
    #[serde(default)]
    pub ecn: Option<EcnMode>,
}

fn default_mss() -> u32 {
    1448
}
fn default_rwnd_init() -> u32 {
    200
}
fn default_init_cwnd() -> u32 {
    10
}
fn default_true() -> bool {
    true
}

/// Bytes of headers on the wire per segment: IPv4 20 + TCP 20 + timestamps option 12.
/// With the default MSS of 1448 a data packet is 1500 bytes on the wire.
pub const HEADER_BYTES: u32 = 52;
/// Wire size of a pure ACK (IPv4 + TCP + timestamps; SACK blocks not counted).
pub const ACK_WIRE_BYTES: u32 = 52;

impl RunConfig {
    pub fn from_json(s: &str) -> Result<RunConfig, SimError> {
        let cfg: RunConfig =
            serde_json::from_str(s).map_err(|e| SimError::Config(format!("{e}")))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Reject values the simulator cannot run, naming the field.
    pub fn validate(&self) -> Result<(), SimError> {
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
        if self.bottleneck.rate_bps == 0 {
            return bad("bottleneck.rate", "must be > 0");
        }
        match &self.bottleneck.qdisc {
            QdiscConfig::Droptail { limit_packets, limit_bytes } => {
                if *limit_packets == Some(0) {
                    return bad("bottleneck.buffer", "must be at least one packet");
                }
                if let Some(b) = limit_bytes {
                    if *b < 1500 {
                        return bad("bottleneck.buffer", "must hold at least one 1500-byte packet");
                    }
                }
            }
            QdiscConfig::Pi2 { limit_packets, target_ns, tupdate_ns, alpha_hz, beta_hz, coupling }
            | QdiscConfig::DualPi2 { limit_packets, target_ns, tupdate_ns, alpha_hz, beta_hz, coupling, .. } => {
                if *limit_packets == 0 {
                    return bad("bottleneck.buffer", "must be at least one packet");
                }
                if *target_ns == 0 {
                    return bad("bottleneck.qdisc.target", "must be > 0");
                }
                if *tupdate_ns == 0 {
                    return bad("bottleneck.qdisc.tupdate", "must be > 0");
                }
                if !(alpha_hz.is_finite() && *alpha_hz >= 0.0) {
                    return bad("bottleneck.qdisc.alpha", "must be a finite number >= 0 (Hz)");
                }
                if !(beta_hz.is_finite() && *beta_hz >= 0.0) {
                    return bad("bottleneck.qdisc.beta", "must be a finite number >= 0 (Hz)");
                }
                if !(coupling.is_finite() && *coupling >= 1.0) {
                    return bad("bottleneck.qdisc.coupling", "must be a finite number >= 1");
                }
            }
        }
        if self.flows.is_empty() {
            return bad("flows", "at least one flow is required");
        }
        for (i, f) in self.flows.iter().enumerate() {
            let field = |name: &str| format!("flows.{i}.{name}");
            if crate::cc::make(&f.cca, 0).is_none() {
                return Err(SimError::Invalid {
                    field: field("cca"),
                    msg: format!("unknown CCA '{}'; allowed: {}", f.cca, crate::cc::names().join(", ")),
                });
            }
            if f.rtt_ns < 2 * self.bottleneck.delay_ns {
                return Err(SimError::Invalid {
                    field: field("rtt"),
                    msg: "must be at least twice the bottleneck delay".into(),
                });
            }
            if f.rtt_ns == 0 {
                return Err(SimError::Invalid { field: field("rtt"), msg: "must be > 0".into() });
            }
            if f.mss_bytes < 64 || f.mss_bytes > 9000 {
                return Err(SimError::Invalid { field: field("mss"), msg: "must be in 64..=9000 bytes".into() });
            }
            if f.init_cwnd_pkts == 0 {
                return Err(SimError::Invalid { field: field("init_cwnd"), msg: "must be >= 1".into() });
            }
            if f.rwnd_init_pkts == 0 {
                return Err(SimError::Invalid { field: field("rwnd"), msg: "must be >= 1".into() });
            }
            if let Some(stop) = f.stop_ns {
                if stop <= f.start_ns {
                    return Err(SimError::Invalid { field: field("stop"), msg: "must be after start".into() });
                }
            }
        }
        Ok(())
    }
}
