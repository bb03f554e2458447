//! Thin PyO3 binding: `simulate(config_json) -> dict` plus typed exceptions.
//! All logic lives in the pure-Rust `ccfair-sim` crate.
//!
//! The result's numeric series cross into Python as lists, or with `arrays=True`
//! as numpy arrays that take over the Rust vectors without copying (rust-numpy's
//! `PyArray1::from_vec`): a sweep worker asks for arrays (no Python int per sample,
//! no list-to-array copy); `ccfair run` keeps lists, so it does not import numpy.

use ccfair_sim::{config::RunConfig, error::SimError, limits::Limits, result::RunResult};
use numpy::{Element, PyArray1};
use pyo3::create_exception;
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

create_exception!(_core, SimConfigError, PyValueError, "The run configuration could not be decoded.");
create_exception!(_core, SimValueError, PyValueError, "A configuration value is out of range; args = (field, message).");
create_exception!(
    _core,
    SimResourceError,
    PyMemoryError,
    "The run could not get the memory it needs (an allocation failed); args = (field, message)."
);

fn to_py_err(e: SimError) -> PyErr {
    match e {
        SimError::Config(m) => SimConfigError::new_err(m),
        SimError::Invalid { field, msg } => SimValueError::new_err((field, msg)),
        SimError::Resource { field, msg } => SimResourceError::new_err((field, msg)),
    }
}

/// How a numeric series becomes a Python object: a list, or a numpy array owning the vector.
#[derive(Clone, Copy)]
struct Series<'py> {
    py: Python<'py>,
    arrays: bool,
}

impl<'py> Series<'py> {
    fn of<T>(self, v: Vec<T>) -> PyResult<Bound<'py, PyAny>>
    where
        T: Element + IntoPyObject<'py>,
    {
        if self.arrays {
            Ok(PyArray1::from_vec(self.py, v).into_any())
        } else {
            Ok(pyo3::types::PyList::new(self.py, v)?.into_any())
        }
    }
}

fn result_to_dict<'py>(py: Python<'py>, r: RunResult, arrays: bool) -> PyResult<Bound<'py, PyDict>> {
    let v = Series { py, arrays };
    let d = PyDict::new(py);
    d.set_item("duration_ns", r.duration_ns)?;
    d.set_item("bin_ns", r.bin_ns)?;
    d.set_item("sample_ns", r.sample_ns)?;
    d.set_item("sojourn_bin_ns", r.sojourn_bin_ns)?;
    d.set_item("bottleneck_rate_bps", r.bottleneck_rate_bps)?;
    let flows = pyo3::types::PyList::empty(py);
    for f in r.flows {
        let fd = PyDict::new(py);
        fd.set_item("name", f.name)?;
        fd.set_item("cca", f.cca)?;
        fd.set_item("rtt_ns", f.rtt_ns)?;
        fd.set_item("start_ns", f.start_ns)?;
        fd.set_item("delivered_bytes", v.of(f.delivered_bytes)?)?;
        fd.set_item("arrival_bytes", v.of(f.arrival_bytes)?)?;
        fd.set_item("sent_packets", f.sent_packets)?;
        fd.set_item("retransmissions", f.retransmissions)?;
        fd.set_item("losses_detected", f.losses_detected)?;
        fd.set_item("drops", f.drops)?;
        fd.set_item("drops_overflow", f.drops_overflow)?;
        fd.set_item("drops_aqm", f.drops_aqm)?;
        fd.set_item("ecn_marks", f.ecn_marks)?;
        fd.set_item("rto_count", f.rto_count)?;
        fd.set_item("min_rtt_ns", f.min_rtt_ns)?;
        fd.set_item("mean_rtt_ns", f.mean_rtt_ns)?;
        fd.set_item("recoveries", f.recoveries)?;
        fd.set_item("size_bytes", f.size_bytes)?;
        fd.set_item("fct_ns", f.fct_ns)?;
        fd.set_item("random_losses", f.random_losses)?;
        fd.set_item("ecn", f.ecn)?;
        fd.set_item("ecn_reductions", f.ecn_reductions)?;
        fd.set_item("sojourn_sum_ns", f.sojourn_sum_ns)?;
        fd.set_item("sojourn_pkts", f.sojourn_pkts)?;
        flows.append(fd)?;
    }
    d.set_item("flows", flows)?;
    d.set_item("link_tx_bytes", v.of(r.link_tx_bytes)?)?;
    d.set_item("queue_time_ns", v.of(r.queue_time_ns)?)?;
    d.set_item("queue_packets", v.of(r.queue_packets)?)?;
    d.set_item("queue_bytes", v.of(r.queue_bytes)?)?;
    d.set_item("sojourn_bin", v.of(r.sojourn_bin)?)?;
    d.set_item("sojourn_count", v.of(r.sojourn_count)?)?;
    d.set_item("sojourn_l4s_bin", v.of(r.sojourn_l4s_bin)?)?;
    d.set_item("sojourn_l4s_count", v.of(r.sojourn_l4s_count)?)?;
    d.set_item("sojourn_sum_ns_per_bin", v.of(r.sojourn_sum_ns_per_bin)?)?;
    d.set_item("sojourn_pkts_per_bin", v.of(r.sojourn_pkts_per_bin)?)?;
    let t = PyDict::new(py);
    t.set_item("flow", v.of(r.trace.flow)?)?;
    t.set_item("time_ns", v.of(r.trace.time_ns)?)?;
    t.set_item("cwnd_pkts", v.of(r.trace.cwnd_pkts)?)?;
    t.set_item("inflight_pkts", v.of(r.trace.inflight_pkts)?)?;
    t.set_item("srtt_ns", v.of(r.trace.srtt_ns)?)?;
    t.set_item("pacing_rate_bps", v.of(r.trace.pacing_rate_bps)?)?;
    t.set_item("ssthresh_pkts", v.of(r.trace.ssthresh_pkts)?)?;
    d.set_item("trace", t)?;
    d.set_item("cca_classes", r.cca_classes)?;
    let m = PyDict::new(py);
    let mr = r.meter;
    m.set_item("window", v.of(mr.window)?)?;
    m.set_item("start_ns", v.of(mr.start_ns)?)?;
    m.set_item("class", v.of(mr.class)?)?;
    m.set_item("main_pkts", v.of(mr.main_pkts)?)?;
    m.set_item("rrmqs_pkts", v.of(mr.rrmqs_pkts)?)?;
    m.set_item("main_flows", v.of(mr.main_flows)?)?;
    m.set_item("rrmqs_flows", v.of(mr.rrmqs_flows)?)?;
    m.set_item("main_rate", v.of(mr.main_rate)?)?;
    m.set_item("rrmqs_rate", v.of(mr.rrmqs_rate)?)?;
    m.set_item("index", v.of(mr.index)?)?;
    m.set_item("action", mr.action)?;
    m.set_item("weight", v.of(mr.weight)?)?;
    m.set_item("main_done", v.of(mr.main_done)?)?;
    m.set_item("rrmqs_done", v.of(mr.rrmqs_done)?)?;
    m.set_item("main_flow_rate", v.of(mr.main_flow_rate)?)?;
    m.set_item("rrmqs_flow_rate", v.of(mr.rrmqs_flow_rate)?)?;
    m.set_item("pinned_flow", v.of(mr.pinned_flow)?)?;
    m.set_item("pinned_class", v.of(mr.pinned_class)?)?;
    m.set_item("pinned_ns", v.of(mr.pinned_ns)?)?;
    m.set_item("released_ns", v.of(mr.released_ns)?)?;
    d.set_item("meter", m)?;
    d.set_item("events", r.events)?;
    d.set_item("data_packets", r.data_packets)?;
    d.set_item("wall_ns", r.wall_ns)?;
    Ok(d)
}

fn decode(config_json: &str, limits_json: Option<&str>) -> PyResult<RunConfig> {
    let limits = match limits_json {
        Some(l) => Limits::from_json(l).map_err(to_py_err)?,
        None => Limits::default(),
    };
    ccfair_sim::limits::decode(config_json, &limits).map_err(to_py_err)
}

/// Run one simulation. `config_json` is a serialized `RunConfig` (all units
/// resolved); `limits_json` a serialized `Limits` (default: limits.rs's);
/// `arrays`: numeric series as numpy arrays instead of lists.
#[pyfunction]
#[pyo3(signature = (config_json, limits_json=None, arrays=false))]
fn simulate<'py>(py: Python<'py>, config_json: &str, limits_json: Option<&str>, arrays: bool) -> PyResult<Bound<'py, PyDict>> {
    let cfg = decode(config_json, limits_json)?;
    let res = py.allow_threads(move || ccfair_sim::try_run(&cfg)).map_err(to_py_err)?;
    result_to_dict(py, res, arrays)
}

/// Validate a configuration and check its projected resources without running it;
/// returns the projected number of events (`limits::project`), the run's expected cost.
#[pyfunction]
#[pyo3(signature = (config_json, limits_json=None))]
fn check(config_json: &str, limits_json: Option<&str>) -> PyResult<f64> {
    decode(config_json, limits_json).map(|cfg| ccfair_sim::limits::project(&cfg).events)
}

/// Names of the congestion-control algorithms the simulator knows, with their sources.
#[pyfunction]
fn ccas() -> Vec<(String, String)> {
    ccfair_sim::cc::catalogue().iter().map(|(n, s)| (n.to_string(), s.to_string())).collect()
}

/// The declared parameters of every algorithm, as JSON (`ccfair_sim::schema::json`).
#[pyfunction]
fn schema() -> String {
    ccfair_sim::schema::json().to_string()
}

/// Every parameter CCA `name` (canonical or variant) runs with, given `params_json`
/// (an object of field values in simulator units), as JSON; SimValueError((field, message)) if invalid.
#[pyfunction]
fn resolve_cca(name: &str, params_json: &str) -> PyResult<String> {
    let params: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(params_json).map_err(|e| SimConfigError::new_err(format!("{e}")))?;
    ccfair_sim::cc::resolve(name, &params)
        .map(|m| serde_json::Value::Object(m).to_string())
        .map_err(|e| SimValueError::new_err((e.field, e.msg)))
}

/// Every parameter queue discipline `kind` runs with, given `params_json` (field
/// values in simulator units), as JSON; SimValueError((field, message)) if invalid.
#[pyfunction]
fn resolve_qdisc(kind: &str, params_json: &str) -> PyResult<String> {
    let params: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(params_json).map_err(|e| SimConfigError::new_err(format!("{e}")))?;
    ccfair_sim::qdisc::resolve(kind, &params)
        .map(|m| serde_json::Value::Object(m).to_string())
        .map_err(|e| SimValueError::new_err((e.field, e.msg)))
}

/// Validate a serialized `RunConfig` without running it (the checks `simulate` makes first).
#[pyfunction]
fn validate(config_json: &str) -> PyResult<()> {
    RunConfig::from_json(config_json).map(|_| ()).map_err(to_py_err)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(ccas, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_cca, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_qdisc, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add("SimConfigError", m.py().get_type::<SimConfigError>())?;
    m.add("SimValueError", m.py().get_type::<SimValueError>())?;
    m.add("SimResourceError", m.py().get_type::<SimResourceError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
