//! `feelbench rtapp ...`: rt-app's workload files.

use crate::commands::rtapp;
use crate::exit::UsageError;
use clap::Subcommand;

/// `feelbench rtapp ...`.
#[derive(Debug, Subcommand)]
pub enum RtappCommand {
    /// The rt-app workloads shipped with feelbench, a line each.
    List,
    /// An rt-app file as feelbench understands it: its tasks, phases and
    /// events with their units, the keys it records without acting on, and
    /// whether it can run here as a probe and as a load.
    Check {
        /// A shipped workload's name (`audio-chain`) or an rt-app JSON file.
        workload: String,
        /// Refuse the file when it has a key rt-app ignores (a misspelt
        /// one) instead of listing it.
        #[arg(long)]
        strict: bool,
    },
}

impl RtappCommand {
    /// What the command prints; a file that cannot be used is bad input.
    pub fn text(self) -> Result<String, UsageError> {
        match self {
            RtappCommand::List => Ok(rtapp::list()),
            RtappCommand::Check { workload, strict } => {
                rtapp::check(&workload, strict).map_err(UsageError::input)
            }
        }
    }
}
