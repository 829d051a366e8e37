//! The lab's back end: a PostgreSQL database, over the synchronous
//! `postgres` crate (it drives its connection on a runtime of its own; no
//! async code here). The URL is completed from libpq's environment and
//! password file ([`super::libpq_env`]); TLS is used when the server offers
//! it (`sslmode=prefer`, libpq's default), required with `require`, never
//! with `disable`, and the server's certificate checked as libpq checks it
//! ([`super::tls`]).

use super::backend::{Backend, Dialect, Row, Value};
use super::libpq_env::{self, PassFile};
use super::location::PostgresUrl;
use super::tls::{self, Check, SslMode};
use super::StoreError;
use ::postgres::error::SqlState;
use ::postgres::types::{FromSql, ToSql, Type};
use ::postgres::{Client, Config, Statement};
use std::collections::HashMap;
use std::error::Error as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How long connecting may take before the server is called unreachable,
/// unless the URL says (`connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection to a PostgreSQL store.
pub struct Postgres {
    client: Client,
    /// Statements prepared on this connection, by their SQL and the types
    /// of their parameters.
    statements: HashMap<(String, Vec<Type>), Statement>,
}

impl Postgres {
    /// Connects to the database `url` names.
    pub fn connect(url: &PostgresUrl) -> Result<Self, StoreError> {
        let (mut config, ignored_passfile) = config_of(url)?;
        let check = tls_of(url, &mut config)?;
        let connector = tls::connector(check)
            .map_err(|e| StoreError::Failed(format!("cannot set up TLS: {e}")))?;
        let client = config.connect(connector).map_err(|error| {
            let said = describe(&error);
            let denied = error
                .code()
                .is_some_and(|code| code.code().starts_with("28"))
                || said.contains("password missing");
            match (denied, ignored_passfile) {
                (true, Some(why)) => StoreError::Denied(format!("{said}; {why}")),
                (true, None) => StoreError::Denied(said),
                (false, _) => StoreError::Unreachable(said),
            }
        })?;
        Ok(Self {
            client,
            statements: HashMap::new(),
        })
    }

    /// The statement for `sql` with parameters of `params`' types,
    /// prepared once per connection.
    fn statement(&mut self, sql: &str, params: &[Value]) -> Result<Statement, StoreError> {
        let types: Vec<Type> = params.iter().map(type_of).collect();
        let key = (sql.to_string(), types);
        if let Some(statement) = self.statements.get(&key) {
            return Ok(statement.clone());
        }
        let statement = self
            .client
            .prepare_typed(&dollar_numbered(sql), &key.1)
            .map_err(from_postgres)?;
        self.statements.insert(key, statement.clone());
        Ok(statement)
    }
}

impl Backend for Postgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn batch(&mut self, sql: &str) -> Result<(), StoreError> {
        self.client.batch_execute(sql).map_err(from_postgres)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        let statement = self.statement(sql, params)?;
        self.client
            .execute(&statement, &typed(params))
            .map_err(from_postgres)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
        let statement = self.statement(sql, params)?;
        let rows = self
            .client
            .query(&statement, &typed(params))
            .map_err(from_postgres)?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| row.try_get::<_, Cell>(i).map(|cell| cell.0))
                    .collect::<Result<Row, _>>()
                    .map_err(from_postgres)
            })
            .collect()
    }
}

/// The connection settings: the URL, then libpq's environment for what it
/// leaves out, then the password file; and why a password file was
/// ignored, when it was.
fn config_of(url: &PostgresUrl) -> Result<(Config, Option<String>), StoreError> {
    let mut config: Config = url
        .connection_text()
        .parse()
        .map_err(|e| StoreError::Unreachable(describe(&e)))?;
    if config.get_hosts().is_empty() {
        match libpq_env::var("PGHOST") {
            Some(host) if host.starts_with('/') => config.host_path(host),
            Some(host) => config.host(&host),
            None => config.host("localhost"),
        };
    }
    if config.get_ports().is_empty() {
        if let Some(port) = libpq_env::var("PGPORT") {
            let port = port
                .parse()
                .map_err(|_| StoreError::Unreachable(format!("PGPORT={port} is not a port")))?;
            config.port(port);
        }
    }
    if config.get_user().is_none() {
        if let Some(user) = libpq_env::var("PGUSER") {
            config.user(&user);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(database) = libpq_env::var("PGDATABASE") {
            config.dbname(&database);
        }
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    config.application_name("feelbench");
    let mut ignored = None;
    if config.get_password().is_none() {
        if let Some(password) = libpq_env::var("PGPASSWORD") {
            config.password(password);
        } else if let Some(file) = libpq_env::password_file() {
            match password_in(&config, &file) {
                PassFile::Found(password) => {
                    config.password(password);
                }
                PassFile::Ignored(why) => ignored = Some(why),
                PassFile::Absent => {}
            }
        }
    }
    Ok((config, ignored))
}

/// The password `file` gives for `config`'s first host, port, database
/// and user.
fn password_in(config: &Config, file: &std::path::Path) -> PassFile {
    let host = match config.get_hosts().first() {
        Some(::postgres::config::Host::Tcp(host)) => host.clone(),
        _ => "localhost".to_string(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config
        .get_user()
        .map(str::to_string)
        .or_else(|| libpq_env::var("USER"))
        .unwrap_or_default();
    let database = config.get_dbname().unwrap_or(&user).to_string();
    libpq_env::password_for(file, &host, port, &database, &user)
}

/// The TLS of the connection, as libpq's `sslmode` and root certificate
/// file say: set in `config`, and what is checked of the server's
/// certificate.
fn tls_of(url: &PostgresUrl, config: &mut Config) -> Result<Check, StoreError> {
    use ::postgres::config::SslMode as CrateMode;
    let mode = ssl_mode(url)?;
    config.ssl_mode(match mode {
        SslMode::Disable => CrateMode::Disable,
        SslMode::Allow | SslMode::Prefer => CrateMode::Prefer,
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => CrateMode::Require,
    });
    match mode {
        SslMode::Disable => Ok(Check::Nothing),
        _ => certificate_check(url, mode),
    }
}

/// The URL's `sslmode`, else `PGSSLMODE`'s, else `prefer`.
fn ssl_mode(url: &PostgresUrl) -> Result<SslMode, StoreError> {
    match (url.ssl_mode(), libpq_env::var("PGSSLMODE")) {
        (Some(mode), _) => Ok(mode),
        (None, Some(word)) => SslMode::parse(&word).ok_or_else(|| {
            StoreError::Unreachable(format!(
                "PGSSLMODE={word} is not a mode: give {}",
                SslMode::CHOICES
            ))
        }),
        (None, None) => Ok(SslMode::Prefer),
    }
}

/// What is checked of the server's certificate in `mode` (one that
/// encrypts): as libpq, a root certificate file that is there is used in
/// every such mode, and the `verify-` modes refuse to go on without one.
fn certificate_check(url: &PostgresUrl, mode: SslMode) -> Result<Check, StoreError> {
    let file = libpq_env::root_certificate_file(url.root_certificate());
    if file.as_deref() == Some(Path::new("system")) {
        return Err(StoreError::Unreachable(
            "sslrootcert=system (the system's roots) is not supported: give the root \
             certificate's file"
                .to_string(),
        ));
    }
    let roots = match file {
        Some(file) if file.exists() => {
            Arc::new(tls::root_certificates(&file).map_err(StoreError::Unreachable)?)
        }
        _ if !mode.verifies() => return Ok(Check::Nothing),
        file => {
            let which = file.map_or(
                "there is no home to find ~/.postgresql/root.crt in".to_string(),
                |f| format!("{} does not exist", f.display()),
            );
            return Err(StoreError::Unreachable(format!(
                "sslmode=verify-ca and verify-full check the server against a root \
                 certificate, and {which}: give sslrootcert=FILE in the URL or \
                 PGSSLROOTCERT, or use sslmode=require, which does not check the server"
            )));
        }
    };
    Ok(match mode {
        SslMode::VerifyFull => Check::ChainAndName(roots),
        _ => Check::Chain(roots),
    })
}

/// `sql` with its `?N` parameters spelt `$N`, as PostgreSQL wants them
/// (a `?` inside a quoted string is left alone).
fn dollar_numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => quoted = !quoted,
            '?' if !quoted && chars.peek().is_some_and(char::is_ascii_digit) => {
                out.push('$');
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// The PostgreSQL type a [`Value`] is sent as.
fn type_of(value: &Value) -> Type {
    match value {
        Value::Int(_) => Type::INT8,
        Value::Real(_) => Type::FLOAT8,
        Value::Text(_) => Type::TEXT,
        Value::Blob(_) => Type::BYTEA,
    }
}

/// `params` as the crate sends them (a NULL keeps its type).
fn typed(params: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    params
        .iter()
        .map(|value| match value {
            Value::Int(v) => v as &(dyn ToSql + Sync),
            Value::Real(v) => v,
            Value::Text(v) => v,
            Value::Blob(v) => v,
        })
        .collect()
}

/// A result column's value as a [`Value`], by the column's type.
struct Cell(Value);

impl<'a> FromSql<'a> for Cell {
    fn from_sql(
        ty: &Type,
        raw: &'a [u8],
    ) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Cell(match *ty {
            Type::INT8 => Value::Int(Some(i64::from_sql(ty, raw)?)),
            Type::INT4 => Value::Int(Some(i32::from_sql(ty, raw)?.into())),
            Type::INT2 => Value::Int(Some(i16::from_sql(ty, raw)?.into())),
            Type::BOOL => Value::Int(Some(bool::from_sql(ty, raw)?.into())),
            Type::FLOAT8 => Value::Real(Some(f64::from_sql(ty, raw)?)),
            Type::FLOAT4 => Value::Real(Some(f32::from_sql(ty, raw)?.into())),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => {
                Value::Text(Some(String::from_sql(ty, raw)?))
            }
            Type::BYTEA => Value::Blob(Some(Vec::from_sql(ty, raw)?)),
            Type::VOID => Value::Text(None),
            _ => return Err(format!("the store reads no column of type {ty}").into()),
        }))
    }

    fn from_sql_null(ty: &Type) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Cell(match *ty {
            Type::INT8 | Type::INT4 | Type::INT2 | Type::BOOL => Value::Int(None),
            Type::FLOAT8 | Type::FLOAT4 => Value::Real(None),
            Type::BYTEA => Value::Blob(None),
            _ => Value::Text(None),
        }))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// An error of the crate in one line, with its cause (the crate's own
/// words say only its kind: "db error").
fn describe(error: &::postgres::Error) -> String {
    let said = match error.source() {
        Some(cause) => format!("{error}: {cause}"),
        None => error.to_string(),
    };
    said.replace('\n', "; ")
}

/// A PostgreSQL error as the store's: a race with another writer (a
/// deadlock, a serialization failure, a lock not granted) is `Locked`,
/// which a sender tries again; a lost connection is `Unreachable`. A
/// constraint violated (a unique key among them: runs and machines are
/// added `ON CONFLICT`, so it is no race) is `Rejected`: trying again would
/// fail alike.
fn from_postgres(error: ::postgres::Error) -> StoreError {
    let said = describe(&error);
    let races = [
        SqlState::T_R_SERIALIZATION_FAILURE,
        SqlState::T_R_DEADLOCK_DETECTED,
        SqlState::LOCK_NOT_AVAILABLE,
    ];
    match error.code() {
        Some(code) if races.contains(code) => StoreError::Locked(said),
        Some(code) if code.code().starts_with("28") => StoreError::Denied(said),
        Some(code) if code.code().starts_with("23") => StoreError::Rejected(said),
        Some(code) if code.code().starts_with("08") || code.code().starts_with("57P") => {
            StoreError::Unreachable(said)
        }
        Some(_) => StoreError::Failed(said),
        None if error.is_closed()
            || error
                .source()
                .is_some_and(|cause| cause.is::<std::io::Error>()) =>
        {
            StoreError::Unreachable(said)
        }
        None => StoreError::Failed(said),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_parameters_are_spelt_with_a_dollar() {
        assert_eq!(
            dollar_numbered("SELECT a FROM t WHERE b = ?1 AND c = ?12 AND d = '?3'"),
            "SELECT a FROM t WHERE b = $1 AND c = $12 AND d = '?3'"
        );
    }
}
