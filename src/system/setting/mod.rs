//! The settings an experiment's arm changes (`feelbench ab`): a sysctl, any
//! file under /proc/sys or /sys, the named ones (`iosched`, `thp`,
//! `autogroup`, `governor`, `preempt`), a sched_ext scheduler (`scx`) or a
//! pair of shell commands. Each is applied, read back as the kernel shows
//! it, and put back; what is to be put back is journaled on disk *before*
//! each change (`journal`), so the next start of feelbench puts back what a
//! SIGKILLed experiment left changed ([`restore_leftovers`]).
//!
//! The grammar is in `grammar`, writing and reading back a file in `file`,
//! debugfs in `preempt`,
//! the scheduler's process in `scx`.

mod apply;
mod command;
mod error;
mod file;
mod grammar;
mod journal;
mod preempt;
mod scx;

#[allow(unused_imports)] // Used by `feelbench ab` too (see above).
pub use apply::{apply, rehearse, Applied};
pub use error::SettingError;
pub use journal::restore_leftovers;

use std::path::{Path, PathBuf};

/// One change an arm makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    label: String,
    kind: Kind,
}

/// What a setting changes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// One value written to each file (under /proc/sys or /sys).
    Files { paths: Vec<PathBuf>, value: String },
    /// The preemption model, in debugfs's `sched/preempt`.
    Preempt { model: String },
    /// A sched_ext scheduler: its program and arguments, and the kernel's
    /// sched_ext directory.
    Scx { argv: Vec<String>, root: PathBuf },
    /// A command that sets and one that restores.
    Commands { set: String, restore: String },
}

impl Setting {
    /// Parses one setting as a user writes it: `vm.swappiness=10`,
    /// `/proc/sys/...=V`, `/sys/...=V`, `iosched=bfq` (the I/O scheduler of
    /// the disk holding `work_dir`), `thp=never`, `autogroup=0`,
    /// `governor=performance`, `preempt=full`, `scx=/path/to/binary args`.
    /// An error here is always bad input.
    pub fn parse(text: &str, work_dir: &Path) -> Result<Setting, SettingError> {
        grammar::parse(text, work_dir)
    }

    /// A pair of shell commands (`sh -c`): one sets, one restores. The set
    /// command's exit status is its check.
    pub fn commands(set: &str, restore: &str) -> Setting {
        Setting {
            label: format!("`{set}` (restored by `{restore}`)"),
            kind: Kind::Commands {
                set: set.to_string(),
                restore: restore.to_string(),
            },
        }
    }

    /// As shown to the user and recorded, e.g. `vm.swappiness=10`.
    pub fn label(&self) -> String {
        self.label.clone()
    }

    /// Whether applying it needs root: everything but a pair of commands
    /// (whose user knows what they need).
    pub fn needs_root(&self) -> bool {
        !matches!(self.kind, Kind::Commands { .. })
    }
}

/// Whether this process runs as root.
fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

#[cfg(test)]
mod tests;
