//! The embedded back end: one SQLite file (SQLite itself is compiled into
//! the binary by rusqlite's `bundled` feature, so nothing is installed).

use super::backend::{Backend, Dialect, Row, Value};
use super::StoreError;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, ToSql};
use std::path::Path;
use std::time::Duration;

/// How long a writer waits for another to finish before the store is
/// called locked: 10 s; half a second in the unit tests, whose test of a
/// locked store would otherwise wait the whole 10 s (issue 29, item 25).
const BUSY_TIMEOUT: Duration = if cfg!(test) {
    Duration::from_millis(500)
} else {
    Duration::from_secs(10)
};

/// A SQLite store file, open.
pub struct Sqlite {
    connection: Connection,
}

impl Sqlite {
    /// Opens the store file at `path`, creating it (and its directory),
    /// private to its user, when it is not there.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        super::private::make(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection = Connection::open_with_flags(path, flags).map_err(from_sqlite)?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(from_sqlite)?;
        // WAL lets readers go on while a run is added; foreign keys make
        // deleting a run delete its scenarios and figures.
        connection
            .execute_batch("PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;")
            .map_err(from_sqlite)?;
        Ok(Self { connection })
    }
}

impl Backend for Sqlite {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.connection.execute_batch(sql).map_err(from_sqlite)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        let mut statement = self.connection.prepare_cached(sql).map_err(from_sqlite)?;
        let changed = statement
            .execute(rusqlite::params_from_iter(params.iter().map(Param)))
            .map_err(from_sqlite)?;
        Ok(changed as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
        let mut statement = self.connection.prepare_cached(sql).map_err(from_sqlite)?;
        let columns = statement.column_count();
        let mut rows = statement
            .query(rusqlite::params_from_iter(params.iter().map(Param)))
            .map_err(from_sqlite)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(from_sqlite)? {
            let values = (0..columns)
                .map(|i| row.get_ref(i).map(value_of))
                .collect::<Result<Row, _>>()
                .map_err(from_sqlite)?;
            out.push(values);
        }
        Ok(out)
    }
}

/// A [`Value`] as SQLite takes it.
struct Param<'a>(&'a Value);

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self.0 {
            Value::Int(v) => v.map_or(ToSqlOutput::from(rusqlite::types::Null), ToSqlOutput::from),
            Value::Real(v) => v.map_or(ToSqlOutput::from(rusqlite::types::Null), ToSqlOutput::from),
            Value::Text(v) => v
                .as_deref()
                .map_or(ToSqlOutput::from(rusqlite::types::Null), |t| {
                    ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes()))
                }),
            Value::Blob(v) => v
                .as_deref()
                .map_or(ToSqlOutput::from(rusqlite::types::Null), |b| {
                    ToSqlOutput::Borrowed(ValueRef::Blob(b))
                }),
        })
    }
}

/// A value SQLite handed back, as a [`Value`] (a NULL as text's NULL:
/// readers ask for the type they expect, and NULL is absent in every type).
fn value_of(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Text(None),
        ValueRef::Integer(i) => Value::Int(Some(i)),
        ValueRef::Real(r) => Value::Real(Some(r)),
        ValueRef::Text(t) => Value::Text(Some(String::from_utf8_lossy(t).into_owned())),
        ValueRef::Blob(b) => Value::Blob(Some(b.to_vec())),
    }
}

/// A SQLite error as the store's: a busy or locked database, a file that
/// is not a database, a constraint the rows break, or anything else with
/// SQLite's words.
fn from_sqlite(error: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    match error.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            StoreError::Locked(error.to_string())
        }
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            StoreError::Corrupt(error.to_string())
        }
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => {
            StoreError::Unreachable(error.to_string())
        }
        Some(ErrorCode::ConstraintViolation) => StoreError::Rejected(error.to_string()),
        _ => StoreError::Failed(error.to_string()),
    }
}
