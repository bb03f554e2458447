//! Any `Serialize` value as Python objects, by its serde serialization: structs and
//! maps become dicts (keys in declaration order), strings `str`, `Option` `None` or
//! the value, numbers `int` / `float` (NaN and infinities kept, unlike JSON).
//!
//! A sequence of numbers is collected into one typed vector first and then becomes
//! one list (`PyList::new`) or, with `arrays`, one numpy array owning that vector
//! (`PyArray1::from_vec`), never a Python object per element on the array path. The
//! numpy dtype is the Rust element type; for an empty sequence, which serde
//! serializes without elements, it is read from the field's type name
//! (`std::any::type_name`, e.g. `alloc::vec::Vec<u64>`), so an empty `Vec<u64>` is
//! an empty `uint64` array as a non-empty one is (the store joins runs' columns by
//! dtype). tests/test_result_keys.py fails if that name stops parsing (an empty
//! series would then be a list).
//!
//! So the run's result (`ccfair_sim::result::RunResult`) is declared once, in Rust:
//! a field added there reaches Python with no edit here.

use std::fmt;

use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use pyo3::IntoPyObjectExt;
use serde::ser::{self, Impossible, Serialize};

/// `value` as Python objects; `arrays`: numeric sequences as numpy arrays instead of lists.
pub fn to_python<'py, T: Serialize + ?Sized>(py: Python<'py>, value: &T, arrays: bool) -> PyResult<Bound<'py, PyAny>> {
    value.serialize(PySer { py, arrays, elem: None }).map_err(|e| match e {
        Error::Py(e) => e,
        Error::NotPrimitive => PyValueError::new_err("a value could not be converted"),
    })
}

#[derive(Debug)]
pub enum Error {
    Py(PyErr),
    /// Internal: the element of a sequence is not a number or bool (it becomes an object).
    NotPrimitive,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Py(e) => write!(f, "{e}"),
            Error::NotPrimitive => write!(f, "not a primitive"),
        }
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::Py(PyValueError::new_err(msg.to_string()))
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error::Py(e)
    }
}

type Obj<'py> = Bound<'py, PyAny>;

/// One element of a numeric sequence, and the typed column such elements gather into.
macro_rules! columns {
    ($($var:ident: $t:ty, $name:literal;)*) => {
        #[derive(Clone, Copy)]
        enum Prim { $($var($t),)* }

        /// Element types of numeric sequences, named as `std::any::type_name` names them.
        #[derive(Clone, Copy, Debug, PartialEq)]
        enum Elem { $($var,)* }

        fn elem_named(name: &str) -> Option<Elem> {
            match name { $($name => Some(Elem::$var),)* _ => None }
        }

        enum Column<'py> {
            Empty,
            $($var(Vec<$t>),)*
            Objects(Vec<Obj<'py>>),
        }

        impl<'py> Column<'py> {
            fn typed(elem: Elem) -> Self {
                match elem { $(Elem::$var => Column::$var(Vec::new()),)* }
            }

            fn push(&mut self, py: Python<'py>, p: Prim, cap: usize) -> PyResult<()> {
                match (&mut *self, p) {
                    $((Column::$var(v), Prim::$var(x)) => v.push(x),)*
                    $((Column::Empty, Prim::$var(x)) => {
                        let mut v = Vec::with_capacity(cap);
                        v.push(x);
                        *self = Column::$var(v);
                    })*
                    (_, p) => {
                        let o = p.into_py(py)?;
                        self.push_object(py, o)?;
                    }
                }
                Ok(())
            }

            /// Everything gathered so far as Python objects (a sequence of mixed elements).
            fn objects(&mut self, py: Python<'py>) -> PyResult<&mut Vec<Obj<'py>>> {
                let objs = match std::mem::replace(self, Column::Empty) {
                    Column::Empty => Vec::new(),
                    Column::Objects(v) => v,
                    $(Column::$var(v) => v.into_iter().map(|x| x.into_bound_py_any(py)).collect::<PyResult<_>>()?,)*
                };
                *self = Column::Objects(objs);
                match self { Column::Objects(v) => Ok(v), _ => unreachable!() }
            }

            fn push_object(&mut self, py: Python<'py>, o: Obj<'py>) -> PyResult<()> {
                self.objects(py)?.push(o);
                Ok(())
            }

            fn finish(self, py: Python<'py>, arrays: bool) -> PyResult<Obj<'py>> {
                Ok(match self {
                    Column::Empty => PyList::empty(py).into_any(),
                    Column::Objects(v) => PyList::new(py, v)?.into_any(),
                    $(Column::$var(v) => if arrays { PyArray1::from_vec(py, v).into_any() } else { PyList::new(py, v)?.into_any() },)*
                })
            }
        }

        impl Prim {
            fn into_py<'py>(self, py: Python<'py>) -> PyResult<Obj<'py>> {
                match self { $(Prim::$var(x) => x.into_bound_py_any(py),)* }
            }
        }
    };
}

columns! {
    U64: u64, "u64";
    U32: u32, "u32";
    U16: u16, "u16";
    U8: u8, "u8";
    I64: i64, "i64";
    I32: i32, "i32";
    I16: i16, "i16";
    I8: i8, "i8";
    F64: f64, "f64";
    F32: f32, "f32";
    Bool: bool, "bool";
}

/// The element type of a `Vec<_>` (or slice) of numbers from its type name; None otherwise.
fn elem_of_type_name(name: &str) -> Option<Elem> {
    let inner = name.strip_suffix('>').and_then(|s| s.rsplit_once("Vec<").map(|(_, t)| t))?;
    elem_named(inner)
}

/// Serializes one value into a Python object. `elem`: the element type of the value
/// when it is a numeric sequence (from its field's type), for an empty one's dtype.
#[derive(Clone, Copy)]
struct PySer<'py> {
    py: Python<'py>,
    arrays: bool,
    elem: Option<Elem>,
}

impl<'py> PySer<'py> {
    fn child(self) -> Self {
        PySer { elem: None, ..self }
    }

    fn field<T: Serialize + ?Sized>(self, value: &T) -> Result<Obj<'py>, Error> {
        value.serialize(PySer { elem: elem_of_type_name(std::any::type_name::<T>()), ..self })
    }

    fn obj<T: IntoPyObject<'py>>(self, v: T) -> Result<Obj<'py>, Error> {
        Ok(v.into_bound_py_any(self.py)?)
    }
}

/// A sequence: numbers into a typed column, anything else into objects.
struct SeqSer<'py> {
    ser: PySer<'py>,
    col: Column<'py>,
    cap: usize,
}

impl<'py> SeqSer<'py> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let py = self.ser.py;
        match value.serialize(ElemSer) {
            Ok(p) => self.col.push(py, p, self.cap)?,
            Err(Error::NotPrimitive) => {
                let o = value.serialize(self.ser.child())?;
                self.col.push_object(py, o)?;
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }

    fn end(self) -> Result<Obj<'py>, Error> {
        let col = match (self.col, self.ser.elem) {
            (Column::Empty, Some(elem)) => Column::typed(elem),
            (col, _) => col,
        };
        Ok(col.finish(self.ser.py, self.ser.arrays)?)
    }

    fn tuple(self) -> Result<Obj<'py>, Error> {
        let py = self.ser.py;
        let mut col = self.col;
        let items = std::mem::take(col.objects(py)?);
        Ok(PyTuple::new(py, items)?.into_any())
    }
}

/// A struct or map: a dict.
struct DictSer<'py> {
    ser: PySer<'py>,
    dict: Bound<'py, PyDict>,
    key: Option<Obj<'py>>,
}

impl<'py> ser::Serializer for PySer<'py> {
    type Ok = Obj<'py>;
    type Error = Error;
    type SerializeSeq = SeqSer<'py>;
    type SerializeTuple = SeqSer<'py>;
    type SerializeTupleStruct = SeqSer<'py>;
    type SerializeTupleVariant = SeqSer<'py>;
    type SerializeMap = DictSer<'py>;
    type SerializeStruct = DictSer<'py>;
    type SerializeStructVariant = DictSer<'py>;

    fn serialize_bool(self, v: bool) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_i8(self, v: i8) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_i16(self, v: i16) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_i32(self, v: i32) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_i64(self, v: i64) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_u8(self, v: u8) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_u16(self, v: u16) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_u32(self, v: u32) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_u64(self, v: u64) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_f32(self, v: f32) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_f64(self, v: f64) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_char(self, v: char) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_str(self, v: &str) -> Result<Obj<'py>, Error> {
        self.obj(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Obj<'py>, Error> {
        Ok(PyBytes::new(self.py, v).into_any())
    }
    fn serialize_none(self) -> Result<Obj<'py>, Error> {
        Ok(self.py.None().into_bound(self.py))
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Obj<'py>, Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Obj<'py>, Error> {
        self.serialize_none()
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Obj<'py>, Error> {
        self.serialize_none()
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<Obj<'py>, Error> {
        self.obj(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<Obj<'py>, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Obj<'py>, Error> {
        let d = PyDict::new(self.py);
        d.set_item(variant, value.serialize(self.child())?)?;
        Ok(d.into_any())
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqSer<'py>, Error> {
        Ok(SeqSer { ser: self, col: Column::Empty, cap: len.unwrap_or(0) })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqSer<'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SeqSer<'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(self, _name: &'static str, _index: u32, _variant: &'static str, len: usize) -> Result<SeqSer<'py>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<DictSer<'py>, Error> {
        Ok(DictSer { ser: self.child(), dict: PyDict::new(self.py), key: None })
    }
    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<DictSer<'py>, Error> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(self, _name: &'static str, _index: u32, _variant: &'static str, len: usize) -> Result<DictSer<'py>, Error> {
        self.serialize_map(Some(len))
    }
}

macro_rules! seq_impl {
    ($($tr:ident :: $f:ident),*) => {$(
        impl<'py> ser::$tr for SeqSer<'py> {
            type Ok = Obj<'py>;
            type Error = Error;
            fn $f<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
                self.element(value)
            }
            fn end(self) -> Result<Obj<'py>, Error> {
                SeqSer::end(self)
            }
        }
    )*};
}
seq_impl!(SerializeSeq::serialize_element, SerializeTupleStruct::serialize_field, SerializeTupleVariant::serialize_field);

impl<'py> ser::SerializeTuple for SeqSer<'py> {
    type Ok = Obj<'py>;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<Obj<'py>, Error> {
        self.tuple()
    }
}

impl<'py> ser::SerializeMap for DictSer<'py> {
    type Ok = Obj<'py>;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key = Some(key.serialize(self.ser)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self.key.take().ok_or_else(|| <Error as ser::Error>::custom("a map value without its key"))?;
        self.dict.set_item(key, self.ser.field(value)?)?;
        Ok(())
    }
    fn end(self) -> Result<Obj<'py>, Error> {
        Ok(self.dict.into_any())
    }
}

macro_rules! struct_impl {
    ($($tr:ident),*) => {$(
        impl<'py> ser::$tr for DictSer<'py> {
            type Ok = Obj<'py>;
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
                self.dict.set_item(key, self.ser.field(value)?)?;
                Ok(())
            }
            fn end(self) -> Result<Obj<'py>, Error> {
                Ok(self.dict.into_any())
            }
        }
    )*};
}
struct_impl!(SerializeStruct, SerializeStructVariant);

/// Serializes a number or bool to [`Prim`]; anything else is [`Error::NotPrimitive`]
/// before it serializes any part of itself.
struct ElemSer;

macro_rules! elem_prims {
    ($($f:ident: $t:ty => $var:ident),*) => {$(
        fn $f(self, v: $t) -> Result<Prim, Error> {
            Ok(Prim::$var(v))
        }
    )*};
}

macro_rules! not_prim {
    ($($f:ident($($a:ident: $t:ty),*) -> $r:ty),*) => {$(
        fn $f(self, $(_: $t),*) -> Result<$r, Error> {
            Err(Error::NotPrimitive)
        }
    )*};
}

impl ser::Serializer for ElemSer {
    type Ok = Prim;
    type Error = Error;
    type SerializeSeq = Impossible<Prim, Error>;
    type SerializeTuple = Impossible<Prim, Error>;
    type SerializeTupleStruct = Impossible<Prim, Error>;
    type SerializeTupleVariant = Impossible<Prim, Error>;
    type SerializeMap = Impossible<Prim, Error>;
    type SerializeStruct = Impossible<Prim, Error>;
    type SerializeStructVariant = Impossible<Prim, Error>;

    elem_prims!(
        serialize_bool: bool => Bool, serialize_i8: i8 => I8, serialize_i16: i16 => I16,
        serialize_i32: i32 => I32, serialize_i64: i64 => I64, serialize_u8: u8 => U8,
        serialize_u16: u16 => U16, serialize_u32: u32 => U32, serialize_u64: u64 => U64,
        serialize_f32: f32 => F32, serialize_f64: f64 => F64
    );
    not_prim!(
        serialize_char(v: char) -> Prim,
        serialize_none() -> Prim,
        serialize_unit() -> Prim,
        serialize_unit_struct(n: &'static str) -> Prim,
        serialize_unit_variant(n: &'static str, i: u32, v: &'static str) -> Prim,
        serialize_seq(l: Option<usize>) -> Self::SerializeSeq,
        serialize_tuple(l: usize) -> Self::SerializeTuple,
        serialize_tuple_struct(n: &'static str, l: usize) -> Self::SerializeTupleStruct,
        serialize_tuple_variant(n: &'static str, i: u32, v: &'static str, l: usize) -> Self::SerializeTupleVariant,
        serialize_map(l: Option<usize>) -> Self::SerializeMap,
        serialize_struct(n: &'static str, l: usize) -> Self::SerializeStruct,
        serialize_struct_variant(n: &'static str, i: u32, v: &'static str, l: usize) -> Self::SerializeStructVariant
    );
    fn serialize_str(self, _: &str) -> Result<Prim, Error> {
        Err(Error::NotPrimitive)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Prim, Error> {
        Err(Error::NotPrimitive)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<Prim, Error> {
        Err(Error::NotPrimitive)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, _: &T) -> Result<Prim, Error> {
        Err(Error::NotPrimitive)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<Prim, Error> {
        Err(Error::NotPrimitive)
    }
}
