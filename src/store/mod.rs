//! Every run remembered: a store of run documents with their figures
//! indexed, in a SQLite file by default or a PostgreSQL database shared by
//! a lab. The document stays the truth: it is kept whole (compressed, with
//! its SHA-256), and the rows beside it only make it quick to find.
//! [`Store`] is one open store; what it does is written once over
//! [`backend::Backend`], so both back ends answer alike.

pub mod add;
pub mod backend;
pub mod fingerprint;
mod libpq_env;
pub mod location;
mod postgres;
pub mod query;
pub mod rows;
pub mod schema;
mod sqlite;
mod tls;
mod url;

pub use location::StoreLocation;

use backend::Backend;

/// Why the store could not do what was asked, in one line.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another process holds the store's write lock for too long.
    #[error("the store is locked by another process ({0})")]
    Locked(String),
    /// The file is not a store, or is damaged.
    #[error("the store is damaged or not a store ({0})")]
    Corrupt(String),
    /// The store was made by a newer feelbench.
    #[error("the store has schema version {found}, newer than this feelbench's {known}: use a newer feelbench")]
    NewerSchema { found: i64, known: i64 },
    /// The database server refused the login (a wrong password, an
    /// unknown role).
    #[error("the store refused the login ({0})")]
    Denied(String),
    /// The store cannot be opened or reached.
    #[error("cannot reach the store: {0}")]
    Unreachable(String),
    /// A run the store does not have.
    #[error("no run {0} in the store")]
    NoSuchRun(String),
    /// More than one run matches what was given.
    #[error("{given} names {count} runs in the store; give more of the id")]
    Ambiguous { given: String, count: usize },
    /// Anything else, in the database's words.
    #[error("{0}")]
    Failed(String),
}

/// An open store.
pub struct Store {
    db: Box<dyn Backend>,
}

impl Store {
    /// Opens the store at `location`, creating it or bringing its schema up
    /// to date.
    pub fn open(location: &StoreLocation) -> Result<Self, StoreError> {
        let mut db: Box<dyn Backend> = match location {
            StoreLocation::Sqlite(path) => Box::new(sqlite::Sqlite::open(path)?),
            StoreLocation::Postgres(url) => Box::new(postgres::Postgres::connect(url)?),
        };
        schema::migrate(db.as_mut())?;
        Ok(Self { db })
    }
}

#[cfg(test)]
mod tests;
