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
pub mod limits;
mod lines;
pub mod packet;
pub mod params;
mod prefetch;
pub mod qdisc;
pub mod result;
pub(crate) mod ring;
pub mod rng;
pub mod schema;
pub mod sim;
pub mod tcp;
pub mod token_bucket;
pub mod topology;

/// Run one configuration to completion: the dumbbell (sim.rs) or, with
/// `links`, the topology (topology.rs).
pub fn run(cfg: &config::RunConfig) -> result::RunResult {
    try_run(cfg).expect("allocating the run's per-bin series")
}

/// As [`run`], with an allocation failure of the run's series returned as
/// [`error::SimError::Resource`] instead of aborting (the binding uses this).
pub fn try_run(cfg: &config::RunConfig) -> Result<result::RunResult, error::SimError> {
    if cfg.links.is_empty() {
        sim::try_run(cfg)
    } else {
        topology::try_run(cfg)
    }
}
