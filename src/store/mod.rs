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
mod private;
pub mod query;
pub mod rows;
pub mod schema;
mod sqlite;
mod tls;
mod url;
pub mod watch;

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
    /// The store was changed by a newer feelbench in a way this one cannot
    /// write.
    #[error("the store has schema version {found}, which this feelbench (schema {known}) cannot write: upgrade feelbench on this machine")]
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
    /// The store holds another document under the run's key (one run id
    /// on one host twice): the run is not stored, nothing is replaced.
    #[error("not stored: the store holds a different run under its key {0} (the same run id and host, another document)")]
    KeyTaken(String),
    /// The run's rows break one of the store's rules (a constraint): the
    /// run is not stored; other runs may be.
    #[error("the store rejected the run ({0})")]
    Rejected(String),
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

impl StoreError {
    /// Whether the error is about one run, not the store: adding other
    /// runs may still succeed.
    pub fn is_about_the_run(&self) -> bool {
        matches!(self, StoreError::KeyTaken(_) | StoreError::Rejected(_))
    }
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

    /// Runs `write` in one transaction: committed when it succeeds, rolled
    /// back when it fails, so the store has all its rows or none.
    fn in_transaction<T>(
        &mut self,
        write: impl FnOnce(&mut Self) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let begin = self.db.dialect().begin();
        self.db.batch(begin)?;
        match write(self) {
            Ok(done) => {
                self.db.batch("COMMIT")?;
                Ok(done)
            }
            Err(error) => {
                // The error says what went wrong; a failed rollback adds nothing.
                let _ = self.db.batch("ROLLBACK");
                Err(error)
            }
        }
    }
}

#[cfg(test)]
mod tests;
