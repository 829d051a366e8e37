//! Why a setting could not be parsed, applied, held or put back.

use std::path::PathBuf;

/// Why a setting could not be parsed, applied, held or put back; each
/// names the setting.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    /// Not a setting, or not one this machine has.
    #[error("{text}: {reason}")]
    Invalid { text: String, reason: String },
    /// Applying it needs root.
    #[error("{setting} needs root: it writes {what}; run as root or leave it out")]
    NeedsRoot { setting: String, what: String },
    /// A file of it could not be read.
    #[error("{setting}: cannot read {}: {error}", path.display())]
    Read {
        setting: String,
        path: PathBuf,
        error: std::io::Error,
    },
    /// The kernel refused the value.
    #[error("{setting}: cannot write {value:?} to {}: {error}", path.display())]
    Write {
        setting: String,
        path: PathBuf,
        value: String,
        error: std::io::Error,
    },
    /// The write succeeded, but the file shows another value.
    #[error("{setting}: wrote {value:?} to {}, but it reads back {shown:?}", path.display())]
    ReadBack {
        setting: String,
        path: PathBuf,
        value: String,
        shown: String,
    },
    /// The set command failed.
    #[error("{setting}: {what}")]
    Command { setting: String, what: String },
    /// The sched_ext scheduler could not be started, or was not the one
    /// the kernel ran.
    #[error("{setting}: {what}")]
    Scheduler { setting: String, what: String },
    /// It was applied but stopped holding (a scheduler ejected, a value
    /// changed by someone else).
    #[error("{setting} no longer holds: {what}")]
    NotHolding { setting: String, what: String },
    /// It could not be put back (or the journal that would let the next
    /// start put it back could not be kept); what to do by hand is said.
    #[error("{setting}: could not put it back: {what}")]
    Restore { setting: String, what: String },
    /// The journal of what to put back could not be written.
    #[error("cannot keep the settings' journal {}: {error}", path.display())]
    Journal { path: PathBuf, error: String },
}

impl SettingError {
    /// Whether it is bad input (exit 2): a setting that cannot be applied
    /// on this machine as given — not one, needs root, refused by the
    /// kernel, not readable or reading back otherwise, its command failing or its
    /// scheduler not starting. The rest (a journal that cannot be written,
    /// a setting that stopped holding or could not be put back) is a
    /// failure.
    pub fn is_bad_input(&self) -> bool {
        match self {
            Self::Invalid { .. }
            | Self::NeedsRoot { .. }
            | Self::Write { .. }
            | Self::ReadBack { .. }
            | Self::Command { .. }
            | Self::Scheduler { .. } => true,
            // A file that cannot be read back cannot be a setting.
            Self::Read { error, .. } => error.kind() == std::io::ErrorKind::PermissionDenied,
            Self::NotHolding { .. } | Self::Restore { .. } | Self::Journal { .. } => false,
        }
    }

    /// The bad-input error of `text` for `reason`.
    pub(super) fn invalid(text: &str, reason: impl Into<String>) -> Self {
        Self::Invalid {
            text: text.to_string(),
            reason: reason.into(),
        }
    }
}
