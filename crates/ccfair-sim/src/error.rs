//! Typed errors of the simulator; the binding maps each variant to its own
//! Python exception class (ccfair.errors).

use thiserror::Error;

#[derive(Debug, Error)]
pub enum SimError {
    /// The configuration could not be decoded (wrong type, unknown key, missing key).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A value is out of range; `field` is the dotted path of the offending field.
    #[error("{field}: {msg}")]
    Invalid { field: String, msg: String },
    /// The run could not get the memory it needs (an allocation failed);
    /// `field` names the setting that sized the allocation.
    #[error("{field}: {msg}")]
    Resource { field: String, msg: String },
}
