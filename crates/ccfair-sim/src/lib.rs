//! ccfair-sim: a deterministic packet-level simulator of TCP congestion
//! control at a shared bottleneck (dumbbell). Pure Rust, no Python.
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
pub mod topology;

pub use sim::{run, try_run};
