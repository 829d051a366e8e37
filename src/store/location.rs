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
}

impl StoreLocation {
    /// The store `text` names: a path, or a URL of a database.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("the store is an empty name: give a path or a postgres:// URL".into());
        }
        if let Some((scheme, _)) = text.split_once("://") {
            return Err(format!(
                "{scheme}:// is not a store this feelbench can use: give a path to a SQLite file"
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
        let data = std::env::var_os("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
        Ok(data.map(|dir| StoreLocation::Sqlite(dir.join("feelbench").join("store.sqlite"))))
    }
}

impl fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreLocation::Sqlite(path) => write!(f, "{}", path.display()),
        }
    }
}
