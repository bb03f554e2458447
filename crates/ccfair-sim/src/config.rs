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
    /// RED (Floyd & Jacobson 1993; RFC 2309; Linux sch_red), qdisc/red.rs.
    Red(RedConfig),
    /// STEP marker: mark/drop every arrival while the queue exceeds a threshold (S3), qdisc/step.rs.
    Step(StepConfig),
    /// CoDel (RFC 8289; Linux sch_codel), qdisc/codel.rs.
    Codel(CodelConfig),
    /// FQ-CoDel (RFC 8290; Linux sch_fq_codel), qdisc/fq_codel.rs.
    FqCodel(FqCodelConfig),
    /// PIE (RFC 8033; Linux sch_pie), qdisc/pie.rs.
    Pie(PieConfig),
    /// Per-flow deficit round robin without AQM ("perfect isolation"), qdisc/drr.rs.
    FqDrr(FqDrrConfig),
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
    /// CSAQM: core-stateless AQM with PPV edge marking (Nádas et al., ANRW 2018; S3), qdisc/csaqm.rs.
    Csaqm(CsaqmConfig),
    /// RRMQS + flow meter + feedback loop (S1), qdisc/rrmqs.rs.
    Rrmqs(crate::qdisc::rrmqs::RrmqsConfig),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CsaqmConfig {
    #[serde(default = "d_limit_1000")]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Delay target D (S3: K x RTT); the backlog target is D x link rate.
    #[serde(default = "d_csaqm_target")]
    pub target_ns: u64,
    /// CTV update period (S3: 5 ms).
    #[serde(default = "d_csaqm_update")]
    pub update_ns: u64,
    /// Time constant of the edge marker's per-flow rate meter.
    #[serde(default = "d_csaqm_tau")]
    pub rate_tau_ns: u64,
    /// Per-flow weights of the sharing policy, by flow index (missing = 1; empty = equal sharing).
    #[serde(default)]
    pub weights: Vec<f64>,
    /// Mark ECN-capable packets below the CTV (else drop them); Not-ECT packets are dropped.
    #[serde(default = "default_true")]
    pub ecn: bool,
    /// Time over which the backlog's distance to the target is to be closed:
    /// allowed = C x T + (L_target - backlog) x update / drain. None = one
    /// update period (the whole distance at once).
    #[serde(default)]
    pub drain_ns: Option<u64>,
    /// Overload variant (not in S3): while the backlog exceeds this multiple of
    /// the target, packets below the CTV are dropped even if ECN-capable. None = never.
    #[serde(default)]
    pub drop_above: Option<f64>,
    /// How the CTV is computed every update (qdisc/csaqm.rs): `pi` (default) =
    /// a PI controller on the queue delay gives the fraction of traffic to mark,
    /// the CTV is that quantile of the PV ECDF over `window_ns`; `load` = the
    /// CTV lets exactly the load that moves the backlog to the target through.
    #[serde(default)]
    pub controller: CsaqmController,
    /// Window of the PV ECDF of the `pi` controller.
    #[serde(default = "d_csaqm_window")]
    pub window_ns: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CsaqmController {
    #[default]
    Pi,
    Load,
}
fn d_csaqm_window() -> u64 {
    crate::qdisc::csaqm::DEFAULT_WINDOW_NS
}
fn d_csaqm_target() -> u64 {
    crate::qdisc::csaqm::DEFAULT_TARGET_NS
}
fn d_csaqm_update() -> u64 {
    crate::qdisc::csaqm::DEFAULT_UPDATE_NS
}
fn d_csaqm_tau() -> u64 {
    crate::qdisc::ppv::DEFAULT_RATE_TAU_NS
}

// Defaults of the AQM configs: the source's values, Linux's where the source
// leaves them open (stated per field; see docs/qdiscs.md).
fn d_limit_1000() -> Option<u64> {
    Some(1000) // Linux sch_codel / sch_pie default limit, packets
}
fn d_limit_10240() -> Option<u64> {
    Some(10 * 1024) // Linux sch_fq_codel default limit, packets
}
fn d_target_5ms() -> u64 {
    5_000_000 // RFC 8289 / RFC 8290
}
fn d_interval_100ms() -> u64 {
    100_000_000 // RFC 8289 / RFC 8290
}
fn d_mtu_1514() -> u64 {
    1514 // Linux psched_mtu() of an Ethernet device
}
fn d_false() -> bool {
    false
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    #[serde(default = "d_limit_1000")]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Thresholds on the average queue, packets (or bytes in byte mode).
    /// Defaults as tc-red: max_th = limit / 4, min_th = max_th / 3.
    #[serde(default)]
    pub min_th: Option<f64>,
    #[serde(default)]
    pub max_th: Option<f64>,
    /// Maximum marking probability at max_th (tc-red default 0.02 = Floyd's 1/50).
    #[serde(default = "d_red_max_p")]
    pub max_p: f64,
    /// EWMA weight of the average queue (Floyd & Jacobson: 0.002).
    #[serde(default = "d_red_w_q")]
    pub w_q: f64,
    /// Gentle RED (Floyd 2000): ramp p from max_p to 1 between max_th and 2 max_th. Linux has no gentle mode: off.
    #[serde(default = "d_false")]
    pub gentle: bool,
    /// Byte mode: average and thresholds in bytes, probability scaled by size / mean_packet_bytes.
    #[serde(default = "d_false")]
    pub byte_mode: bool,
    /// Typical packet size (tc-red `avpkt`; ours: a full data packet), for byte mode and the idle-time correction.
    #[serde(default = "d_red_avpkt")]
    pub mean_packet_bytes: u64,
    /// Mark ECN-capable packets instead of dropping them (tc-red `ecn`, off by default).
    #[serde(default = "d_false")]
    pub ecn: bool,
}
fn d_red_max_p() -> f64 {
    0.02
}
fn d_red_w_q() -> f64 {
    0.002
}
fn d_red_avpkt() -> u64 {
    1500
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    #[serde(default = "d_limit_1000")]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Threshold on the instantaneous queue; exactly one of the two.
    #[serde(default)]
    pub threshold_packets: Option<u64>,
    #[serde(default)]
    pub threshold_bytes: Option<u64>,
    /// Mark ECN-capable packets (S3's STEP marks); Not-ECT packets are dropped either way.
    #[serde(default = "default_true")]
    pub ecn: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodelConfig {
    #[serde(default = "d_limit_1000")]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    #[serde(default = "d_target_5ms")]
    pub target_ns: u64,
    #[serde(default = "d_interval_100ms")]
    pub interval_ns: u64,
    /// No drop while the backlog is at most this (one MTU).
    #[serde(default = "d_mtu_1514")]
    pub mtu_bytes: u64,
    /// Linux sch_codel: ecn off by default.
    #[serde(default = "d_false")]
    pub ecn: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    #[serde(default = "d_limit_10240")]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Linux memory_limit (32 MiB), here counted in wire bytes.
    #[serde(default = "d_fq_memory")]
    pub memory_limit_bytes: Option<u64>,
    /// Hash buckets (Linux `flows`, 1024).
    #[serde(default = "d_fq_flows")]
    pub flows: u32,
    /// DRR quantum (Linux: the device MTU, 1514).
    #[serde(default = "d_mtu_1514")]
    pub quantum_bytes: u64,
    #[serde(default = "d_target_5ms")]
    pub target_ns: u64,
    #[serde(default = "d_interval_100ms")]
    pub interval_ns: u64,
    #[serde(default = "d_mtu_1514")]
    pub mtu_bytes: u64,
    /// Linux sch_fq_codel: ecn on by default.
    #[serde(default = "default_true")]
    pub ecn: bool,
    /// Packets dropped at most per overflow from the fattest queue (Linux drop_batch_size 64).
    #[serde(default = "d_fq_batch")]
    pub drop_batch: u32,
}
fn d_fq_memory() -> Option<u64> {
    Some(32 << 20)
}
fn d_fq_flows() -> u32 {
    1024
}
fn d_fq_batch() -> u32 {
    64
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PieConfig {
    #[serde(default = "d_limit_1000")]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Target queueing delay (RFC 8033 QDELAY_REF = 15 ms; Linux 15 ms).
    #[serde(default = "d_pie_15ms")]
    pub target_ns: u64,
    /// Probability update interval (RFC 8033 T_UPDATE = 15 ms; Linux 15 ms).
    #[serde(default = "d_pie_15ms")]
    pub tupdate_ns: u64,
    /// Gains in Hz (RFC 8033: alpha 0.125, beta 1.25; Linux tc 2/16, 20/16).
    #[serde(default = "d_pie_alpha")]
    pub alpha: f64,
    #[serde(default = "d_pie_beta")]
    pub beta: f64,
    /// Burst allowance (RFC 8033 MAX_BURST = 150 ms).
    #[serde(default = "d_pie_burst")]
    pub burst_ns: u64,
    /// Linux sch_pie: ecn off by default; marks only while p <= 10 %.
    #[serde(default = "d_false")]
    pub ecn: bool,
    #[serde(default = "d_false")]
    pub byte_mode: bool,
    /// RFC 8033 section 5.1 derandomisation (Linux always does it).
    #[serde(default = "default_true")]
    pub derandomize: bool,
    #[serde(default = "d_mtu_1514")]
    pub mtu_bytes: u64,
}
fn d_pie_15ms() -> u64 {
    15_000_000
}
fn d_pie_alpha() -> f64 {
    0.125
}
fn d_pie_beta() -> f64 {
    1.25
}
fn d_pie_burst() -> u64 {
    150_000_000
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqDrrConfig {
    #[serde(default = "d_limit_1000")]
    pub limit_packets: Option<u64>,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    #[serde(default = "d_mtu_1514")]
    pub quantum_bytes: u64,
}

impl QdiscConfig {
    /// (limit_packets, limit_bytes) of any discipline.
    pub fn limits(&self) -> (Option<u64>, Option<u64>) {
        match self {
            QdiscConfig::Droptail { limit_packets, limit_bytes } => (*limit_packets, *limit_bytes),
            QdiscConfig::Red(c) => (c.limit_packets, c.limit_bytes),
            QdiscConfig::Step(c) => (c.limit_packets, c.limit_bytes),
            QdiscConfig::Codel(c) => (c.limit_packets, c.limit_bytes),
            QdiscConfig::FqCodel(c) => (c.limit_packets, c.limit_bytes),
            QdiscConfig::Pie(c) => (c.limit_packets, c.limit_bytes),
            QdiscConfig::FqDrr(c) => (c.limit_packets, c.limit_bytes),
            QdiscConfig::Csaqm(c) => (c.limit_packets, c.limit_bytes),
            QdiscConfig::Pi2 { limit_packets, .. } | QdiscConfig::DualPi2 { limit_packets, .. } => (Some(*limit_packets), None),
            QdiscConfig::Rrmqs(c) => (Some(c.limit_packets), None),
        }
    }

    /// Reject parameter combinations the disciplines cannot run: (field under
    /// `bottleneck.qdisc`, message).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        let (lp, lb) = self.limits();
        if lp == Some(0) {
            return Err(("limit", "must be at least one packet".into()));
        }
        if let Some(b) = lb {
            if b < 1500 {
                return Err(("limit", "must hold at least one 1500-byte packet".into()));
            }
        }
        let codel = |target: u64, interval: u64, mtu: u64| -> Result<(), (&'static str, String)> {
            if target == 0 {
                return Err(("target", "must be > 0".into()));
            }
            if target >= interval {
                return Err(("target", format!("must be smaller than interval ({interval} ns), got {target} ns")));
            }
            if mtu == 0 {
                return Err(("mtu", "must be > 0".into()));
            }
            Ok(())
        };
        match self {
            QdiscConfig::Droptail { .. } => {}
            QdiscConfig::Red(c) => {
                if !(c.max_p > 0.0 && c.max_p <= 1.0) {
                    return Err(("max_p", format!("must be in (0, 1], got {}", c.max_p)));
                }
                if !(c.w_q > 0.0 && c.w_q <= 1.0) {
                    return Err(("w_q", format!("must be in (0, 1], got {}", c.w_q)));
                }
                if c.mean_packet_bytes == 0 {
                    return Err(("mean_packet", "must be > 0".into()));
                }
                let (min, max) = crate::qdisc::red::thresholds(c);
                if !(min >= 0.0 && min.is_finite()) {
                    return Err(("min_th", format!("must be >= 0, got {min}")));
                }
                if !(max > min) {
                    return Err(("min_th", format!("must be smaller than max_th ({max}), got {min}")));
                }
            }
            QdiscConfig::Step(c) => match (c.threshold_packets, c.threshold_bytes) {
                (Some(0), _) | (_, Some(0)) => return Err(("threshold", "must be > 0".into())),
                (Some(_), Some(_)) | (None, None) => {
                    return Err(("threshold", "exactly one of threshold_packets and threshold_bytes is required".into()))
                }
                _ => {}
            },
            QdiscConfig::Codel(c) => codel(c.target_ns, c.interval_ns, c.mtu_bytes)?,
            QdiscConfig::FqCodel(c) => {
                codel(c.target_ns, c.interval_ns, c.mtu_bytes)?;
                if c.flows == 0 || c.flows > 65536 {
                    return Err(("flows", format!("must be in 1..=65536, got {}", c.flows)));
                }
                if c.quantum_bytes == 0 {
                    return Err(("quantum", "must be > 0".into()));
                }
                if c.drop_batch == 0 {
                    return Err(("drop_batch", "must be >= 1".into()));
                }
                if c.memory_limit_bytes.is_some_and(|m| m < 1500) {
                    return Err(("memory_limit", "must hold at least one 1500-byte packet".into()));
                }
            }
            QdiscConfig::Pie(c) => {
                if c.target_ns == 0 {
                    return Err(("target", "must be > 0".into()));
                }
                if c.tupdate_ns == 0 {
                    return Err(("tupdate", "must be > 0".into()));
                }
                if !(c.alpha >= 0.0 && c.alpha.is_finite()) {
                    return Err(("alpha", format!("must be >= 0 (Hz), got {}", c.alpha)));
                }
                if !(c.beta >= 0.0 && c.beta.is_finite()) {
                    return Err(("beta", format!("must be >= 0 (Hz), got {}", c.beta)));
                }
                if c.mtu_bytes == 0 {
                    return Err(("mtu", "must be > 0".into()));
                }
            }
            QdiscConfig::FqDrr(c) => {
                if c.quantum_bytes == 0 {
                    return Err(("quantum", "must be > 0".into()));
                }
            }
            QdiscConfig::Csaqm(c) => {
                for (name, v) in [("target", c.target_ns), ("update", c.update_ns), ("rate_tau", c.rate_tau_ns), ("window", c.window_ns)] {
                    if v == 0 {
                        return Err((name, "must be > 0".into()));
                    }
                }
                if c.drain_ns == Some(0) {
                    return Err(("drain", "must be > 0".into()));
                }
                if c.drop_above.is_some_and(|m| !(m.is_finite() && m >= 1.0)) {
                    return Err(("drop_above", "must be a finite multiple of the target >= 1".into()));
                }
                if let Some(w) = c.weights.iter().find(|w| !(w.is_finite() && **w > 0.0)) {
                    return Err(("weights", format!("every weight must be a finite number > 0, got {w}")));
                }
            }
            // Checked in RunConfig::validate (their errors name bottleneck.buffer / bottleneck.qdisc.*).
            QdiscConfig::Pi2 { .. } | QdiscConfig::DualPi2 { .. } => {}
            QdiscConfig::Rrmqs(c) => c.check()?,
        }
        Ok(())
    }
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
    /// Host noise, sender side: mean of an exponential extra delay per data
    /// packet between TCP and the wire (scheduling, softirq, qdisc), FIFO;
    /// 0 = none (the idealized host). The experiment file's `noise` sets it.
    #[serde(default)]
    pub host_jitter_ns: u64,
    /// Host noise, receiver side: the same for ACKs (mean, ns; 0 = none).
    #[serde(default)]
    pub ack_jitter_ns: u64,
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
        if self.cca == crate::dccp::CCID2_NAME {
            Transport::Dccp
        } else {
            Transport::Tcp
        }
    }
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
            q => {
                if let Err((field, msg)) = q.check() {
                    return bad(&format!("bottleneck.qdisc.{field}"), &msg);
                }
            }
        }
        if self.flows.is_empty() {
            return bad("flows", "at least one flow is required");
        }
        for (i, f) in self.flows.iter().enumerate() {
            let field = |name: &str| format!("flows.{i}.{name}");
            if let Err((name, msg)) = check_transport(f) {
                return Err(SimError::Invalid { field: field(name), msg });
            }
            if f.transport() == Transport::Tcp && crate::cc::make(&f.cca, 0).is_none() {
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
            if !(0.0..1.0).contains(&f.loss) {
                return Err(SimError::Invalid { field: field("loss"), msg: "must be a probability in [0, 1)".into() });
            }
            if f.size_bytes == Some(0) {
                return Err(SimError::Invalid { field: field("size"), msg: "must be > 0 bytes".into() });
            }
            if f.min_rto_ns == Some(0) {
                return Err(SimError::Invalid { field: field("min_rto"), msg: "must be > 0".into() });
            }
            if f.rate_cap_bps == Some(0) {
                return Err(SimError::Invalid { field: field("rate_cap"), msg: "must be > 0".into() });
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
        if matches!(f.ecn, Some(EcnMode::Classic) | Some(EcnMode::Scalable)) {
            return Err(("ecn", "not supported with transport 'dccp' (allowed: 'off' or omitted)".into()));
        }
    }
    Ok(())
}
