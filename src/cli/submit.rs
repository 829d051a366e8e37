//! The options of `feelbench submit`: which runs go to which store.

use crate::commands::submit::{Sending, SubmitSettings};
use crate::exit::UsageError;
use crate::store::StoreLocation;
use clap::Args;
use std::path::PathBuf;

/// Options of `feelbench submit`.
#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// Run files to send [default: the runs of the local store that the
    /// store sent to does not have].
    #[arg(value_name = "RUN.json", conflicts_with = "pending")]
    files: Vec<PathBuf>,
    /// Send the runs that could not be sent to this store before (they
    /// wait in the local store).
    #[arg(long = "pending")]
    pending: bool,
    /// The store to send to: a postgres:// URL (or a SQLite file's path)
    /// [default: $FEELBENCH_STORE].
    #[arg(long = "store", value_name = "URL|PATH", value_parser = super::store::LocationParser)]
    store: Option<StoreLocation>,
}

impl SubmitArgs {
    /// The settings of `feelbench submit`.
    pub fn settings(self) -> Result<SubmitSettings, UsageError> {
        let local = StoreLocation::local().map_err(UsageError::new)?;
        let remote = match self.store {
            Some(location) => location,
            None => StoreLocation::default_location()
                .map_err(UsageError::new)?
                .filter(|named| Some(named) != local.as_ref())
                .ok_or_else(|| {
                    UsageError::new("submit sends runs to another store: give --store URL")
                })?,
        };
        if Some(&remote) == local.as_ref() {
            return Err(UsageError::new(format!(
                "{remote} is the local store, which submit sends from: give another --store"
            )));
        }
        let sending = match (self.pending, self.files.is_empty()) {
            (true, _) => Sending::Pending,
            (false, false) => Sending::Files(self.files),
            (false, true) => Sending::Missing,
        };
        Ok(SubmitSettings {
            remote,
            local,
            sending,
        })
    }
}
