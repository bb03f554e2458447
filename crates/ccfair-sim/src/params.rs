//! Declared parameters: the one place a tunable of an algorithm is described.
//!
//! Every congestion-control algorithm and queue discipline declares, next to
//! its code, one parameter struct with [`declare_params!`]: per field its type,
//! default, allowed range and a one-line doc; the unit is the field name's
//! suffix (`_ns` time, `_bps` rate, `_bytes` size, `_pkts` packets, `_hz`),
//! the name in the experiment file is the field name without it
//! (`target_ns` -> `target`). From that declaration come:
//!
//! - the struct with its `Default` (the defaults above) and serde impls;
//! - [`Params::from_map`]: parsing + validation of a JSON object of values in
//!   simulator units, every error naming the parameter, the value and the
//!   allowed range or choices;
//! - [`Params::spec`]: the machine-readable description (name, type, unit,
//!   range, default, doc) that `ccfair list`, `ccfair schema`, the Python
//!   validation and the docs tables are generated from.
//!
//! Units: Python's `ccfair.units` is the one parser of human units ("25ms");
//! it converts a value by the unit declared here, so RunConfig carries
//! simulator units only (see config.rs).

use serde_json::{Map, Value};

/// What a parameter accepts besides its type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// Any value of the type.
    Any,
    /// A number in a range; `open` bounds exclude the end point.
    Num { min: f64, min_open: bool, max: f64, max_open: bool },
    /// One of these strings.
    Choice(&'static [&'static str]),
}

impl Range {
    /// `min <= x <= max`.
    pub const fn closed(min: f64, max: f64) -> Range {
        Range::Num { min, min_open: false, max, max_open: false }
    }
    /// `x >= min`.
    pub const fn at_least(min: f64) -> Range {
        Range::Num { min, min_open: false, max: f64::INFINITY, max_open: true }
    }
    /// `x > min`.
    pub const fn above(min: f64) -> Range {
        Range::Num { min, min_open: true, max: f64::INFINITY, max_open: true }
    }
    /// `min < x < max`.
    pub const fn open(min: f64, max: f64) -> Range {
        Range::Num { min, min_open: true, max, max_open: true }
    }
    /// `min < x <= max`.
    pub const fn open_closed(min: f64, max: f64) -> Range {
        Range::Num { min, min_open: true, max, max_open: false }
    }

    /// Whether `x` is allowed (numbers only; non-finite numbers never are).
    pub fn admits(&self, x: f64) -> bool {
        match *self {
            Range::Num { min, min_open, max, max_open } => {
                x.is_finite() && (if min_open { x > min } else { x >= min }) && (if max_open { x < max } else { x <= max })
            }
            _ => x.is_finite(),
        }
    }

    /// "in [0, 1]", ">= 1", "one of 'a', 'b'" for messages and docs (values in `unit`).
    pub fn describe(&self, unit: &str) -> String {
        match *self {
            Range::Any => "any value".into(),
            Range::Choice(c) => format!("one of {}", c.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(", ")),
            Range::Num { min, min_open, max, max_open } => {
                let f = |x: f64| format_value(x, unit);
                match (min.is_finite(), max.is_finite()) {
                    (true, true) => {
                        format!("in {}{}, {}{}", if min_open { "(" } else { "[" }, f(min), f(max), if max_open { ")" } else { "]" })
                    }
                    (true, false) => format!("{} {}", if min_open { ">" } else { ">=" }, f(min)),
                    (false, true) => format!("{} {}", if max_open { "<" } else { "<=" }, f(max)),
                    (false, false) => "a finite number".into(),
                }
            }
        }
    }
}

/// A number in `unit` as a person writes it: times with the largest exact unit
/// ("25ms"), other units after the number ("1514 bytes").
pub fn format_value(x: f64, unit: &str) -> String {
    let plain = |v: f64| if v.fract() == 0.0 && v.abs() < 1e15 { format!("{}", v as i64) } else { format!("{v}") };
    match unit {
        "ns" if x.fract() == 0.0 && x >= 0.0 => {
            let ns = x as u64;
            for (name, per) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
                if ns > 0 && ns % per == 0 {
                    return format!("{}{name}", ns / per);
                }
            }
            format!("{ns}ns")
        }
        "" => plain(x),
        u => format!("{} {u}", plain(x)),
    }
}

/// A Rust type a parameter can have.
pub trait ParamValue: Sized {
    /// JSON Schema type ("boolean", "integer", "number", "string").
    const TYPE: &'static str;
    /// `Option<_>`: the parameter may be `null` (= unset).
    const NULLABLE: bool = false;
    fn from_json(v: &Value) -> Option<Self>;
    fn to_json(&self) -> Value;
    /// The numeric value for range checks (None = not a number, or unset).
    fn number(&self) -> Option<f64> {
        None
    }
    /// The string value for choice checks.
    fn text(&self) -> Option<&str> {
        None
    }
    /// Every number in the value (a list has several), for range checks.
    fn numbers(&self) -> Vec<f64> {
        self.number().into_iter().collect()
    }
}

impl<T: ParamValue> ParamValue for Vec<T> {
    const TYPE: &'static str = "array";
    fn from_json(v: &Value) -> Option<Self> {
        v.as_array()?.iter().map(T::from_json).collect()
    }
    fn to_json(&self) -> Value {
        Value::Array(self.iter().map(T::to_json).collect())
    }
    fn numbers(&self) -> Vec<f64> {
        self.iter().flat_map(T::numbers).collect()
    }
}

impl ParamValue for bool {
    const TYPE: &'static str = "boolean";
    fn from_json(v: &Value) -> Option<Self> {
        v.as_bool()
    }
    fn to_json(&self) -> Value {
        Value::Bool(*self)
    }
}

macro_rules! int_param {
    ($($t:ty),*) => {$(
        impl ParamValue for $t {
            const TYPE: &'static str = "integer";
            fn from_json(v: &Value) -> Option<Self> {
                v.as_u64().and_then(|x| <$t>::try_from(x).ok())
            }
            fn to_json(&self) -> Value {
                Value::from(*self)
            }
            fn number(&self) -> Option<f64> {
                Some(*self as f64)
            }
        }
    )*};
}
int_param!(u8, u32, u64);

impl ParamValue for f64 {
    const TYPE: &'static str = "number";
    fn from_json(v: &Value) -> Option<Self> {
        v.as_f64()
    }
    fn to_json(&self) -> Value {
        serde_json::Number::from_f64(*self).map(Value::Number).unwrap_or(Value::Null)
    }
    fn number(&self) -> Option<f64> {
        Some(*self)
    }
}

impl ParamValue for String {
    const TYPE: &'static str = "string";
    fn from_json(v: &Value) -> Option<Self> {
        v.as_str().map(str::to_string)
    }
    fn to_json(&self) -> Value {
        Value::String(self.clone())
    }
    fn text(&self) -> Option<&str> {
        Some(self)
    }
}

impl<T: ParamValue> ParamValue for Option<T> {
    const TYPE: &'static str = T::TYPE;
    const NULLABLE: bool = true;
    fn from_json(v: &Value) -> Option<Self> {
        if v.is_null() {
            Some(None)
        } else {
            T::from_json(v).map(Some)
        }
    }
    fn to_json(&self) -> Value {
        self.as_ref().map_or(Value::Null, T::to_json)
    }
    fn number(&self) -> Option<f64> {
        self.as_ref().and_then(T::number)
    }
    fn text(&self) -> Option<&str> {
        self.as_ref().and_then(T::text)
    }
}

/// The description of one parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    /// Name in the experiment file (`target`).
    pub name: &'static str,
    /// Name in the struct and in RunConfig (`target_ns`).
    pub field: &'static str,
    /// JSON Schema type of the value in simulator units.
    pub ty: &'static str,
    pub nullable: bool,
    /// "ns", "bit/s", "bytes", "packets", "Hz" or "" (dimensionless).
    pub unit: &'static str,
    pub range: Range,
    pub default: Value,
    pub doc: &'static str,
}

/// Unit suffixes of field names: (suffix, unit).
const UNIT_SUFFIXES: [(&str, &str); 6] =
    [("_ns", "ns"), ("_bps", "bit/s"), ("_bytes", "bytes"), ("_pkts", "packets"), ("_packets", "packets"), ("_hz", "Hz")];

/// (name in the experiment file, unit) of a field: the unit is the field's suffix.
pub fn split_unit(field: &'static str) -> (&'static str, &'static str) {
    for (suffix, unit) in UNIT_SUFFIXES {
        if let Some(name) = field.strip_suffix(suffix) {
            return (name, unit);
        }
    }
    (field, "")
}

impl ParamSpec {
    pub fn new<T: ParamValue>(field: &'static str, default: &T, range: Range, doc: &'static str) -> ParamSpec {
        let (name, unit) = split_unit(field);
        ParamSpec { name, field, ty: T::TYPE, nullable: T::NULLABLE, unit, range, default: default.to_json(), doc: doc.trim() }
    }

    /// "number in [0, 1] (or null)" — what the parameter accepts.
    pub fn allowed(&self) -> String {
        let base = match (self.ty, self.range) {
            ("boolean", _) => "true or false".to_string(),
            (_, Range::Choice(_)) => self.range.describe(self.unit),
            ("integer", Range::Any) if self.unit == "ns" => "a time >= 0".to_string(),
            ("integer", r) if self.unit == "ns" => format!("a time {}", r.describe(self.unit)),
            ("integer", Range::Any) => "an integer >= 0".to_string(),
            ("integer", r) => format!("an integer {}", r.describe(self.unit)),
            ("number", Range::Any) => "a finite number".to_string(),
            ("array", Range::Any) => "a list of numbers".to_string(),
            ("array", r) => format!("a list of numbers {}", r.describe(self.unit)),
            (_, r) => format!("a number {}", r.describe(self.unit)),
        };
        if self.nullable {
            format!("{base} (or unset)")
        } else {
            base
        }
    }

    /// Check one value: `Ok(parsed)` or the message "must be ..., got ...".
    pub fn parse<T: ParamValue>(&self, v: &Value) -> Result<T, String> {
        let bad = || format!("must be {}, got {v}", self.allowed());
        let x = T::from_json(v).ok_or_else(bad)?;
        if let Some(n) = x.numbers().into_iter().find(|n| !self.range.admits(*n)) {
            return Err(format!("must be {}, got {}", self.allowed(), format_value(n, self.unit)));
        }
        if let (Range::Choice(c), Some(s)) = (self.range, x.text()) {
            if !c.contains(&s) {
                return Err(bad());
            }
        }
        Ok(x)
    }

    /// This parameter as a JSON object (for `_core.schema()`, `ccfair list`, the docs).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), self.name.into());
        m.insert("field".into(), self.field.into());
        m.insert("type".into(), self.ty.into());
        m.insert("nullable".into(), self.nullable.into());
        m.insert("unit".into(), self.unit.into());
        m.insert("default".into(), self.default.clone());
        m.insert("doc".into(), self.doc.into());
        m.insert("allowed".into(), self.allowed().into());
        match self.range {
            Range::Num { min, min_open, max, max_open } => {
                if min.is_finite() {
                    m.insert(if min_open { "exclusive_minimum" } else { "minimum" }.into(), min.into());
                }
                if max.is_finite() {
                    m.insert(if max_open { "exclusive_maximum" } else { "maximum" }.into(), max.into());
                }
            }
            Range::Choice(c) => {
                m.insert("choices".into(), c.iter().map(|s| Value::from(*s)).collect::<Vec<_>>().into());
            }
            Range::Any => {}
        }
        Value::Object(m)
    }
}

/// A parameter error: (parameter name as in the experiment file, message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    pub field: String,
    pub msg: String,
}

impl ParamError {
    pub fn new(field: impl Into<String>, msg: impl Into<String>) -> ParamError {
        ParamError { field: field.into(), msg: msg.into() }
    }

    /// The cross-field order check `field <= other`: an error naming `field` when its `value`
    /// is above `other`'s `bound` ("must be <= other (bound), got value").
    pub fn at_most<T: PartialOrd + std::fmt::Display>(field: &str, value: T, other: &str, bound: T) -> Result<(), ParamError> {
        if value > bound {
            return Err(ParamError::new(field, format!("must be <= {other} ({bound}), got {value}")));
        }
        Ok(())
    }
}

#[cfg(test)]
thread_local! {
    /// Parameter sets validated on this thread ([`Params::from_map`] calls), for the tests that count them.
    pub(crate) static VALIDATIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A declared parameter struct (implemented by [`declare_params!`]).
pub trait Params: Default + Clone + std::fmt::Debug + Send + Sync + 'static {
    /// Every parameter, in declaration order.
    fn spec() -> Vec<ParamSpec>;
    /// Set one field from JSON (simulator units); `None` = no such field.
    fn set_field(&mut self, field: &str, v: &Value, spec: &ParamSpec) -> Option<Result<(), String>>;
    /// Every field as JSON, keyed by field name (simulator units).
    fn to_map(&self) -> Map<String, Value>;
    /// Checks across fields (declared with `check = path` in the macro).
    fn check(&self) -> Result<(), ParamError>;

    /// Defaults overridden by `m` (keys: field names), validated.
    fn from_map(m: &Map<String, Value>) -> Result<Self, ParamError> {
        #[cfg(test)]
        VALIDATIONS.with(|n| n.set(n.get() + 1));
        let spec = Self::spec();
        let mut p = Self::default();
        for (k, v) in m {
            let Some(s) = spec.iter().find(|s| s.field == k) else {
                let valid: Vec<&str> = spec.iter().map(|s| s.name).collect();
                let name = split_unit_owned(k);
                let msg = if valid.is_empty() {
                    "unknown parameter; this algorithm has no parameters".to_string()
                } else {
                    format!("unknown parameter; valid: {}", valid.join(", "))
                };
                return Err(ParamError::new(name, msg));
            };
            if let Some(Err(msg)) = p.set_field(k, v, s) {
                return Err(ParamError::new(s.name, msg));
            }
        }
        p.check()?;
        Ok(p)
    }

    /// Check every field's range and the cross-field checks of a value built
    /// another way (e.g. deserialized by serde as part of RunConfig).
    fn validate(&self) -> Result<(), ParamError> {
        Self::from_map(&self.to_map()).map(|_| ())
    }
}

/// Make a serde enum of unit variants usable as a parameter (a string choice;
/// declare its spellings with `Range::Choice(&[...])`).
#[macro_export]
macro_rules! param_choice {
    ($t:ty) => {
        impl $crate::params::ParamValue for $t {
            const TYPE: &'static str = "string";
            fn from_json(v: &serde_json::Value) -> Option<Self> {
                serde_json::from_value(v.clone()).ok()
            }
            fn to_json(&self) -> serde_json::Value {
                serde_json::to_value(self).expect("a unit variant serializes")
            }
        }
    };
}

fn split_unit_owned(field: &str) -> String {
    for (suffix, _) in UNIT_SUFFIXES {
        if let Some(name) = field.strip_suffix(suffix) {
            return name.to_string();
        }
    }
    field.to_string()
}

/// Every parameter of `P` as a JSON array (see [`ParamSpec::to_json`]).
pub fn spec_json<P: Params>() -> Value {
    Value::Array(P::spec().iter().map(ParamSpec::to_json).collect())
}

/// Declare a parameter struct: per field a doc line, `name: Type = default, range;`.
///
/// ```
/// ccfair_sim::declare_params! {
///     /// Parameters of a toy algorithm.
///     pub struct ToyParams {
///         /// Multiplicative decrease factor.
///         beta: f64 = 0.5, Range::open(0.0, 1.0);
///         /// Target queueing delay.
///         target_ns: u64 = 5_000_000, Range::above(0.0);
///     }
/// }
/// use ccfair_sim::params::Params;
/// let p = ToyParams::from_map(serde_json::json!({"beta": 0.7}).as_object().unwrap()).unwrap();
/// assert_eq!((p.beta, p.target_ns), (0.7, 5_000_000));
/// let e = ToyParams::from_map(serde_json::json!({"beta": 1.5}).as_object().unwrap()).unwrap_err();
/// assert_eq!((e.field.as_str(), e.msg.as_str()), ("beta", "must be a number in (0, 1), got 1.5"));
/// ```
///
/// An optional `check = path;` after the fields names a `fn(&Self) ->
/// Result<(), ParamError>` for constraints across fields. (`cc::declare_cca!` is this
/// macro plus the congestion control's `impl cc::Cca`.)
#[macro_export]
macro_rules! declare_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[doc = $doc:literal])+ $field:ident : $ty:ty = $default:expr , $range:expr ; )*
        }
        $(check = $check:path;)?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $name {
            $( $(#[doc = $doc])+ pub $field: $ty, )*
        }

        impl Default for $name {
            fn default() -> Self {
                $name { $( $field: $default, )* }
            }
        }

        impl $crate::params::Params for $name {
            fn spec() -> Vec<$crate::params::ParamSpec> {
                #[allow(unused_imports)]
                use $crate::params::Range;
                vec![ $( $crate::params::ParamSpec::new::<$ty>(
                    stringify!($field), &{ let d: $ty = $default; d }, $range, concat!($($doc),+)) ),* ]
            }
            #[allow(unused_variables)]
            fn set_field(&mut self, field: &str, v: &serde_json::Value, spec: &$crate::params::ParamSpec)
                -> Option<Result<(), String>> {
                match field {
                    $( stringify!($field) => Some(spec.parse::<$ty>(v).map(|x| self.$field = x)), )*
                    _ => None,
                }
            }
            fn to_map(&self) -> serde_json::Map<String, serde_json::Value> {
                #[allow(unused_mut)]
                let mut m = serde_json::Map::new();
                $( m.insert(stringify!($field).into(), $crate::params::ParamValue::to_json(&self.$field)); )*
                m
            }
            fn check(&self) -> Result<(), $crate::params::ParamError> {
                $( return $check(self); )?
                #[allow(unreachable_code)]
                Ok(())
            }
        }
    };
}

declare_params! {
    /// An algorithm without tunable parameters.
    pub struct NoParams {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    declare_params! {
        /// Test struct.
        pub struct T {
            /// A ratio.
            beta: f64 = 0.7, Range::open(0.0, 1.0);
            /// A time.
            target_ns: u64 = 5_000_000, Range::above(0.0);
            /// A switch.
            on: bool = true, Range::Any;
            /// A choice.
            mode: String = "pi".to_string(), Range::Choice(&["pi", "load"]);
            /// Optional.
            limit_pkts: Option<u64> = None, Range::at_least(1.0);
        }
        check = check_t;
    }
    fn check_t(t: &T) -> Result<(), ParamError> {
        if t.beta > 0.9 && !t.on {
            return Err(ParamError::new("beta", "must be <= 0.9 when on = false"));
        }
        Ok(())
    }

    fn from(v: Value) -> Result<T, ParamError> {
        T::from_map(v.as_object().unwrap())
    }

    #[test]
    fn defaults_fill_every_unset_field() {
        assert_eq!(from(json!({})).unwrap(), T::default());
        let t = from(json!({"beta": 0.5, "limit_pkts": 3})).unwrap();
        assert_eq!((t.beta, t.target_ns, t.limit_pkts), (0.5, 5_000_000, Some(3)));
    }

    #[test]
    fn every_error_names_parameter_value_and_allowed_range() {
        let e = |v| from(v).unwrap_err();
        assert_eq!(e(json!({"beta": 1.0})), ParamError::new("beta", "must be a number in (0, 1), got 1"));
        assert_eq!(e(json!({"target_ns": 0})), ParamError::new("target", "must be a time > 0ns, got 0ns"));
        assert_eq!(e(json!({"on": 1})), ParamError::new("on", "must be true or false, got 1"));
        assert_eq!(e(json!({"mode": "x"})), ParamError::new("mode", "must be one of 'pi', 'load', got \"x\""));
        assert_eq!(e(json!({"limit_pkts": 0})), ParamError::new("limit", "must be an integer >= 1 packets (or unset), got 0 packets"));
        assert_eq!(e(json!({"bta": 1})), ParamError::new("bta", "unknown parameter; valid: beta, target, on, mode, limit"));
        assert_eq!(e(json!({"beta": 0.95, "on": false})), ParamError::new("beta", "must be <= 0.9 when on = false"));
        assert_eq!(e(json!({"target_ns": -5})).field, "target");
    }

    #[test]
    fn unit_is_the_field_suffix() {
        let s = T::spec();
        let units: Vec<(&str, &str)> = s.iter().map(|p| (p.name, p.unit)).collect();
        assert_eq!(units, [("beta", ""), ("target", "ns"), ("on", ""), ("mode", ""), ("limit", "packets")]);
        assert_eq!(s[1].default, json!(5_000_000));
        assert_eq!(s[0].doc, "A ratio.");
    }

    #[test]
    fn to_map_round_trips() {
        let t = from(json!({"beta": 0.25, "mode": "load"})).unwrap();
        assert_eq!(T::from_map(&t.to_map()).unwrap(), t);
    }
}
