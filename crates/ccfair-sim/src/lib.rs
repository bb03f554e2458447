//! ccfair-sim: a deterministic packet-level simulator of TCP congestion
//! control at a shared bottleneck (dumbbell) or over links in series
//! (topology). Pure Rust, no Python.
//!
//! Entry point: [`run`] takes a fully-resolved [`config::RunConfig`] and
//! returns a [`result::RunResult`]. See docs/architecture.md for the map.

pub mod cc;
pub mod config;
pub mod dccp;
pub mod endpoint;
pub mod engine;
pub mod error;
#[cfg(feature = "event-counts")]
pub mod event_counts;
pub mod limits;
mod lines;
#[cfg(feature = "noise-batch")]
pub(crate) mod noise_batch;
pub mod outages;
pub mod packet;
pub mod params;
mod prefetch;
pub mod qdisc;
pub mod result;
pub(crate) mod ring;
pub mod rng;
pub mod schema;
pub mod sim;
#[cfg(feature = "slot-log")]
pub mod slot_log;
pub mod tcp;
pub mod token_bucket;
pub mod topology;

/// Run one configuration to completion: the dumbbell (sim.rs) or, with
/// `links`, the topology (topology.rs).
pub fn run(cfg: &config::RunConfig) -> result::RunResult {
    try_run(cfg).expect("allocating the run's per-bin series")
}

/// As [`run`], with an allocation failure of the run's series returned as
/// [`error::SimError::Resource`] instead of aborting, and an invalid algorithm
/// parameter as [`error::SimError::Invalid`].
pub fn try_run(cfg: &config::RunConfig) -> Result<result::RunResult, error::SimError> {
    try_run_with(cfg, &cfg.algorithms()?)
}

/// As [`try_run`], with each flow's algorithm as validating `cfg` gave it
/// ([`config::RunConfig::resolve`]; the binding's path): the flows are built from
/// these, their parameters are not checked again.
pub fn try_run_with(cfg: &config::RunConfig, algorithms: &[cc::Algorithm]) -> Result<result::RunResult, error::SimError> {
    if cfg.links.is_empty() {
        sim::try_run(cfg, algorithms)
    } else {
        topology::try_run(cfg, algorithms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_from_json_validates_each_parameter_set_once() {
        // Two flows' algorithms and the bottleneck's discipline: three parameter sets, each
        // validated once on the binding's path (decode, check, run); the flows are built from
        // the validated algorithms (cc::Algorithm), which cannot check their parameters again.
        let mut flows = vec![config::FlowConfig::bulk("a", "cubic", 40_000_000), config::FlowConfig::bulk("b", "bbr", 40_000_000)];
        flows[0].cca_params.insert("beta".into(), 0.6.into());
        let qdisc = serde_json::from_str(r#"{"kind": "codel", "limit_packets": 100}"#).unwrap();
        let json = serde_json::to_string(&config::RunConfig::dumbbell(10_000_000, qdisc, flows, 500_000_000)).unwrap();
        params::VALIDATIONS.with(|n| n.set(0));
        let (cfg, algorithms) = limits::decode(&json, &limits::Limits::default()).unwrap();
        let r = try_run_with(&cfg, &algorithms).unwrap();
        assert!(r.flows.iter().all(|f| f.sent_packets > 0));
        assert_eq!(params::VALIDATIONS.with(|n| n.get()), 3);
        assert_eq!(algorithms[0].resolved()["beta"], serde_json::json!(0.6));
    }
}
