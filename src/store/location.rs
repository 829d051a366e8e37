//! Where a store is: a SQLite file, or a PostgreSQL database named by a
//! URL. With neither `--store` nor `FEELBENCH_STORE`, the store is
//! `store.sqlite` in the user's data directory (`$XDG_DATA_HOME/feelbench`,
//! else `~/.local/share/feelbench`).

use std::fmt;
use std::path::PathBuf;

/// The environment variable that names the store when `--store` does not.
pub const STORE_VAR: &str = "FEELBENCH_STORE";

/// A store's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database.
    Postgres(PostgresUrl),
}

/// A `postgres://` or `postgresql://` URL as given. It may hold a
/// password, so it is shown (`Display`, `Debug`) without one, and only
/// the connection reads it whole.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl(String);

impl PostgresUrl {
    /// The URL `text`, when it is one of PostgreSQL's.
    fn parse(text: &str) -> Option<Self> {
        let scheme = text.split_once("://")?.0;
        matches!(scheme, "postgres" | "postgresql").then(|| Self(text.to_string()))
    }

    /// The URL whole, password and all: for the connection only.
    pub fn secret_text(&self) -> &str {
        &self.0
    }

    /// The value of the query parameter `key`, when the URL gives it.
    pub fn parameter(&self, key: &str) -> Option<&str> {
        let query = self.0.split_once('?')?.1;
        query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    /// The URL without its password (in the user part or as a parameter).
    fn redacted(&self) -> String {
        let (scheme, rest) = self.0.split_once("://").unwrap_or(("postgres", &self.0));
        let (head, query) = match rest.split_once('?') {
            Some((head, query)) => (head, Some(query)),
            None => (rest, None),
        };
        let (authority, path) = match head.find('/') {
            Some(at) => head.split_at(at),
            None => (head, ""),
        };
        let authority = match authority.rsplit_once('@') {
            Some((user, host)) => format!("{}@{host}", user.split(':').next().unwrap_or("")),
            None => authority.to_string(),
        };
        let query = query.map(|q| {
            q.split('&')
                .filter(|pair| !pair.starts_with("password="))
                .collect::<Vec<_>>()
                .join("&")
        });
        match query.filter(|q| !q.is_empty()) {
            Some(q) => format!("{scheme}://{authority}{path}?{q}"),
            None => format!("{scheme}://{authority}{path}"),
        }
    }
}

/// A command-line argument with the password of any PostgreSQL URL in it
/// left out (`postgres://u:pw@h/db`, `--store=postgres://u:pw@h/db`), for
/// what is kept or shown of a command line.
pub fn without_password(arg: &str) -> String {
    let start = ["postgres://", "postgresql://"]
        .iter()
        .filter_map(|scheme| arg.find(scheme))
        .min();
    match start.and_then(|at| PostgresUrl::parse(&arg[at..]).map(|url| (at, url))) {
        Some((at, url)) => format!("{}{url}", &arg[..at]),
        None => arg.to_string(),
    }
}

impl fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PostgresUrl({})", self.redacted())
    }
}

impl StoreLocation {
    /// The store `text` names: a path, or a URL of a database.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("the store is an empty name: give a path or a postgres:// URL".into());
        }
        if let Some(url) = PostgresUrl::parse(text) {
            if let Err(error) = url.secret_text().parse::<::postgres::Config>() {
                let cause = std::error::Error::source(&error)
                    .map(|c| format!(": {c}"))
                    .unwrap_or_default();
                return Err(format!("{url}: {error}{cause}"));
            }
            return Ok(StoreLocation::Postgres(url));
        }
        if let Some((scheme, _)) = text.split_once("://") {
            return Err(format!(
                "{scheme}:// is not a store this feelbench can use: give a path to a SQLite file \
                 or a postgres:// URL"
            ));
        }
        Ok(StoreLocation::Sqlite(PathBuf::from(text)))
    }

    /// The store used when none is named: `FEELBENCH_STORE`, else the
    /// user's data directory; `None` when there is no home to put it in.
    pub fn default_location() -> Result<Option<Self>, String> {
        if let Some(named) = std::env::var_os(STORE_VAR).filter(|v| !v.is_empty()) {
            let text = named
                .into_string()
                .map_err(|_| format!("{STORE_VAR} is not valid UTF-8"))?;
            return Self::parse(&text).map(Some);
        }
        Ok(Self::local_default())
    }

    /// The SQLite store of this user, whatever `FEELBENCH_STORE` says:
    /// where runs sent to a database are kept too, and wait when it cannot
    /// be reached. `None` when there is no home to put it in.
    pub fn local() -> Result<Option<Self>, String> {
        match Self::default_location()? {
            Some(StoreLocation::Postgres(_)) => Ok(Self::local_default()),
            other => Ok(other),
        }
    }

    /// `store.sqlite` in the user's data directory.
    fn local_default() -> Option<Self> {
        let data = std::env::var_os("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
        data.map(|dir| StoreLocation::Sqlite(dir.join("feelbench").join("store.sqlite")))
    }
}

impl fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreLocation::Sqlite(path) => write!(f, "{}", path.display()),
            StoreLocation::Postgres(url) => write!(f, "{url}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_postgres_url_is_shown_without_its_password() {
        for (given, shown) in [
            (
                "postgres://lab:s3cret@db.example:5433/feelbench?sslmode=require",
                "postgres://lab@db.example:5433/feelbench?sslmode=require",
            ),
            (
                "postgresql://db/feelbench?password=s3cret&user=lab",
                "postgresql://db/feelbench?user=lab",
            ),
            ("postgres://db", "postgres://db"),
        ] {
            let location = StoreLocation::parse(given).unwrap();
            assert_eq!(location.to_string(), shown);
            assert!(!format!("{location:?}").contains("s3cret"));
        }
    }

    #[test]
    fn a_command_line_keeps_no_password() {
        assert_eq!(
            without_password("--store=postgres://lab:s3cret@db/feelbench"),
            "--store=postgres://lab@db/feelbench"
        );
        assert_eq!(
            without_password("postgresql://lab:s3cret@db"),
            "postgresql://lab@db"
        );
        assert_eq!(without_password("--probe"), "--probe");
    }

    #[test]
    fn other_schemes_are_refused_and_paths_are_sqlite() {
        assert!(StoreLocation::parse("mysql://db").is_err());
        assert!(StoreLocation::parse("postgres://db?sslmode=sometimes").is_err());
        assert!(StoreLocation::parse("").is_err());
        assert_eq!(
            StoreLocation::parse("runs.sqlite").unwrap(),
            StoreLocation::Sqlite(PathBuf::from("runs.sqlite"))
        );
    }
}
