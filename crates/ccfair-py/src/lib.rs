//! Thin PyO3 binding: `simulate(config_json) -> dict` plus typed exceptions.
//! All logic lives in the pure-Rust `ccfair-sim` crate.
//!
//! The result crosses into Python by its serde serialization (to_py.rs): dicts keyed
//! by `RunResult`'s field names, so a field added there needs no edit here. Its
//! numeric series are lists, or with `arrays=True` numpy arrays (one typed vector
//! each, rust-numpy's `PyArray1::from_vec`): a sweep worker asks for arrays (no
//! Python int per sample, no list-to-array copy); `ccfair run` keeps lists, so it
//! does not import numpy.

use ccfair_sim::{cc::Algorithm, config::RunConfig, error::SimError, limits::Limits};
use pyo3::create_exception;
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod to_py;

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

fn decode(config_json: &str, limits_json: Option<&str>) -> PyResult<(RunConfig, Vec<Algorithm>)> {
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
    let (cfg, algorithms) = decode(config_json, limits_json)?;
    let res = py.allow_threads(move || ccfair_sim::try_run_with(&cfg, &algorithms)).map_err(to_py_err)?;
    to_py::to_python(py, &res, arrays)?.downcast_into::<PyDict>().map_err(PyErr::from)
}

/// Validate a configuration and check its projected resources without running it;
/// returns the projected number of events (`limits::project`), the run's expected cost.
#[pyfunction]
#[pyo3(signature = (config_json, limits_json=None))]
fn check(config_json: &str, limits_json: Option<&str>) -> PyResult<f64> {
    decode(config_json, limits_json).map(|(cfg, _)| ccfair_sim::limits::project(&cfg).events)
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
    resolved_json(params_json, |params| ccfair_sim::cc::resolve(name, params))
}

/// Every parameter queue discipline `kind` runs with, given `params_json` (field
/// values in simulator units), as JSON; SimValueError((field, message)) if invalid.
#[pyfunction]
fn resolve_qdisc(kind: &str, params_json: &str) -> PyResult<String> {
    resolved_json(params_json, |params| ccfair_sim::qdisc::resolve(kind, params))
}

type JsonMap = serde_json::Map<String, serde_json::Value>;

/// `params_json` parsed, resolved by `resolve` (a registry's), back to JSON; its error as
/// SimValueError((field, message)), malformed JSON as SimConfigError.
fn resolved_json(params_json: &str, resolve: impl FnOnce(&JsonMap) -> Result<JsonMap, ccfair_sim::params::ParamError>) -> PyResult<String> {
    let params: JsonMap = serde_json::from_str(params_json).map_err(|e| SimConfigError::new_err(format!("{e}")))?;
    resolve(&params).map(|m| serde_json::Value::Object(m).to_string()).map_err(|e| SimValueError::new_err((e.field, e.msg)))
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
