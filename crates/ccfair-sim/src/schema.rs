//! The machine-readable description of everything an experiment can set that
//! the algorithms declare (crate::params): every CCA with its parameters,
//! aliases and variants, every queue discipline with its parameters, the flow
//! settings' defaults and bounds. Python's validation, `ccfair list`, `ccfair schema`
//! and the docs tables are generated from it (through `_core.schema()`).

use serde_json::{json, Value};

/// `{"ccas": [...], "qdiscs": [...], "flow": {...}}`; see `cc::schema_json`, `qdisc::schema_json`,
/// `config::flow_fields_json` (the flow settings' defaults and bounds).
pub fn json() -> Value {
    json!({ "ccas": crate::cc::schema_json(), "qdiscs": crate::qdisc::schema_json(), "flow": crate::config::flow_fields_json() })
}
