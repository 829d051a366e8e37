//! The one thing a back end does: run SQL with typed parameters and hand
//! back typed values. Everything the store does is written once over this
//! trait ([`super::ops`]), so SQLite and PostgreSQL answer every query alike.

use super::StoreError;

/// A value passed to or read from SQL; every variant may be NULL, and the
/// type stays known so PostgreSQL can check it against its column.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
    Blob(Option<Vec<u8>>),
}

impl Value {
    /// A text parameter.
    pub fn text(text: impl Into<String>) -> Self {
        Value::Text(Some(text.into()))
    }

    /// The value as an integer (a real is truncated), `None` when NULL.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => *v,
            Value::Real(v) => v.map(|v| v as i64),
            _ => None,
        }
    }

    /// The value as a real number, `None` when NULL.
    pub fn as_real(&self) -> Option<f64> {
        match self {
            Value::Real(v) => *v,
            Value::Int(v) => v.map(|v| v as f64),
            _ => None,
        }
    }

    /// The value as text, `None` when NULL.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(v) => v.as_deref(),
            _ => None,
        }
    }

    /// The value as text, empty when NULL.
    pub fn text_or_empty(&self) -> String {
        self.as_text().unwrap_or_default().to_string()
    }

    /// The value as bytes, `None` when NULL.
    pub fn into_blob(self) -> Option<Vec<u8>> {
        match self {
            Value::Blob(v) => v,
            _ => None,
        }
    }
}

/// A row of values, in the order the query selected them.
pub type Row = Vec<Value>;

/// The SQL dialect a back end speaks, where the two differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// The statement that opens a write transaction (SQLite takes the
    /// write lock at once, so two writers never deadlock on an upgrade).
    pub fn begin(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }
}

/// A connection to a store's database. SQL is written with numbered
/// parameters (`?1`); a back end rewrites them as its dialect needs.
pub trait Backend {
    /// Which dialect the schema and the transactions are written in.
    fn dialect(&self) -> Dialect;
    /// Runs statements without parameters or results (DDL, BEGIN, COMMIT).
    fn batch(&mut self, sql: &str) -> Result<(), StoreError>;
    /// Runs one statement; the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError>;
    /// Runs one query; its rows.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError>;
}
