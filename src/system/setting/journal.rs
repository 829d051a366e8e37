//! The journal of what to put back: one JSON file per [`super::Applied`],
//! named `PID-STARTTICKS-N.json` after the process that applied it, written
//! (atomically) *before* each change and removed once everything is put
//! back. A process that dies between two changes leaves a journal naming
//! both: putting back the second, which it may not have made, writes the
//! value the file had, which is harmless. The next start of feelbench puts
//! back what dead processes' journals name ([`restore_leftovers`]).
//!
//! Root's journals are in `/run/feelbench/settings`, on a tmpfs that a
//! reboot empties as it resets the settings themselves (a journal that
//! outlived a reboot would put back stale values); a user's (pairs of
//! commands only) under `$XDG_RUNTIME_DIR`, else `~/.cache/feelbench`.

use super::{command, preempt, scx, SettingError};
use crate::system::atomic::write_atomically;
use crate::system::procfs;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Root's journals.
const ROOT_DIR: &str = "/run/feelbench/settings";

/// The journals of this process so far, to name the next.
static JOURNALS: AtomicU64 = AtomicU64::new(0);

/// Where this user's journals are kept; `None` when there is no such place
/// (no `$HOME`).
pub fn default_dir() -> Option<PathBuf> {
    if super::is_root() {
        return Some(PathBuf::from(ROOT_DIR));
    }
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    var("XDG_RUNTIME_DIR")
        .map(|d| PathBuf::from(d).join("feelbench/settings"))
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache/feelbench/settings")))
}

/// How to put back one change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Undo {
    /// Write `original` to the file at `path`.
    File { path: PathBuf, original: String },
    /// Make `original` the preemption model again.
    Preempt { original: String },
    /// Run the restore command.
    Command { restore: String },
    /// Stop the sched_ext scheduler of process `pid` (started at
    /// `start_ticks`), whose kernel state is under `root`.
    Scheduler {
        pid: u32,
        start_ticks: Option<u64>,
        root: PathBuf,
    },
}

impl Undo {
    /// Puts the change back, for `setting`.
    pub fn run(&self, setting: &str) -> Result<(), SettingError> {
        match self {
            Undo::File { path, original } => super::file::write_checked(setting, path, original),
            Undo::Preempt { original } => preempt::Debugfs::open(setting)?.set(setting, original),
            Undo::Command { restore } => command::run(setting, restore),
            Undo::Scheduler {
                pid,
                start_ticks,
                root,
            } => scx::stop_leftover(setting, *pid, *start_ticks, root),
        }
        .map_err(|e| match e {
            SettingError::Restore { .. } => e,
            other => SettingError::Restore {
                setting: setting.to_string(),
                what: other.to_string(),
            },
        })
    }

    /// What putting it back does, in words.
    fn describe(&self) -> String {
        match self {
            Undo::File { path, original } => format!("{} back to {original}", path.display()),
            Undo::Preempt { original } => format!("the preemption model back to {original}"),
            Undo::Command { restore } => format!("ran `{restore}`"),
            Undo::Scheduler { pid, .. } => format!("stopped the sched_ext scheduler (pid {pid})"),
        }
    }
}

/// One change to put back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The setting's label.
    pub setting: String,
    pub undo: Undo,
}

/// A journal's content.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    pid: u32,
    start_ticks: Option<u64>,
    entries: Vec<Entry>,
}

impl Record {
    /// Whether the process that wrote it is alive.
    fn is_alive(&self) -> bool {
        let now = procfs::read_process_stat(Path::new("/proc"), self.pid)
            .ok()
            .map(|s| s.start_ticks);
        match self.start_ticks {
            Some(recorded) => now == Some(recorded),
            None => now.is_some(),
        }
    }
}

/// The journal of one set of applied settings.
#[derive(Debug)]
pub struct Journal {
    /// `None`: nowhere to keep it (said when made).
    path: Option<PathBuf>,
    record: Record,
}

impl Journal {
    /// A new journal in `dir` (written at its first entry).
    pub fn new(dir: Option<&Path>) -> Self {
        let pid = std::process::id();
        let start_ticks = procfs::read_process_stat(Path::new("/proc"), pid)
            .ok()
            .map(|s| s.start_ticks);
        let n = JOURNALS.fetch_add(1, Ordering::SeqCst);
        let ticks = start_ticks.map_or("x".to_string(), |t| t.to_string());
        Self {
            path: dir.map(|d| d.join(format!("{pid}-{ticks}-{n}.json"))),
            record: Record {
                pid,
                start_ticks,
                entries: Vec::new(),
            },
        }
    }

    /// Records `entry`, on disk before the change is made.
    pub fn push(&mut self, entry: Entry) -> Result<(), SettingError> {
        self.record.entries.push(entry);
        self.save()
    }

    /// Keeps only `left` (what could not be put back), or removes the
    /// journal when nothing is left.
    pub fn keep_only(&mut self, left: Vec<Entry>) -> Result<(), SettingError> {
        self.record.entries = left;
        match (&self.path, self.record.entries.is_empty()) {
            (None, _) => Ok(()),
            (Some(path), true) => match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(SettingError::Journal {
                    path: path.clone(),
                    error: e.to_string(),
                }),
                _ => Ok(()),
            },
            (Some(_), false) => self.save(),
        }
    }

    fn save(&self) -> Result<(), SettingError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let error = |error: String| SettingError::Journal {
            path: path.clone(),
            error,
        };
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| error(e.to_string()))?;
        }
        let text = serde_json::to_string_pretty(&self.record).map_err(|e| error(e.to_string()))?;
        write_atomically(path, text.as_bytes()).map_err(|e| error(e.to_string()))
    }
}

/// Puts back what processes that died with settings applied left changed,
/// from their journals; one line per setting put back or not. A journal
/// whose changes could not all be put back is kept, naming only those, so
/// that every later start tries again.
pub fn restore_leftovers() -> Result<Vec<String>, SettingError> {
    match default_dir() {
        Some(dir) => restore_leftovers_in(&dir),
        None => Ok(Vec::new()),
    }
}

/// [`restore_leftovers`] of the journals in `dir`.
pub fn restore_leftovers_in(dir: &Path) -> Result<Vec<String>, SettingError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(SettingError::Journal {
                path: dir.to_path_buf(),
                error: e.to_string(),
            })
        }
    };
    let mut lines = Vec::new();
    let mut journals = Vec::new();
    let paths = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"));
    for path in paths {
        match read(&path) {
            Ok((_, record)) if record.is_alive() => {}
            Ok((modified, record)) => journals.push((modified, path, record)),
            Err(e) => lines.push(format!(
                "warning: cannot read the settings' journal {}: {e}; check what it names and remove it by hand",
                path.display()
            )),
        }
    }
    // The newest first, so that where two changed the same file, the value
    // from before both is written last.
    journals.sort_by_key(|j| std::cmp::Reverse(j.0));
    for (_, path, record) in journals {
        let mut journal = Journal {
            path: Some(path),
            record,
        };
        let left = put_back(&journal.record, &mut lines);
        if let Err(e) = journal.keep_only(left) {
            lines.push(format!("warning: {e}"));
        }
    }
    Ok(lines)
}

/// A journal's time and content.
fn read(path: &Path) -> Result<(std::time::SystemTime, Record), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let record = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let modified = path
        .metadata()
        .and_then(|m| m.modified())
        .map_err(|e| e.to_string())?;
    Ok((modified, record))
}

/// Puts back the changes `record` names, the last first, saying each in
/// `lines`; returns those that could not be.
fn put_back(record: &Record, lines: &mut Vec<String>) -> Vec<Entry> {
    let who = format!(
        "experiment {} (ended without putting its settings back)",
        record.pid
    );
    let mut left = Vec::new();
    for entry in record.entries.iter().rev() {
        lines.push(match entry.undo.run(&entry.setting) {
            Ok(()) => format!("{who}: {}: {}", entry.setting, entry.undo.describe()),
            Err(e) => {
                left.push(entry.clone());
                format!("{who}: {e}; tried again at every start")
            }
        });
    }
    left.reverse();
    left
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journal of a process that is gone (there is no pid 0), naming
    /// `restore` as its one change.
    fn dead_journal(dir: &Path, restore: &str) -> PathBuf {
        let mut journal = Journal::new(Some(dir));
        journal.record.pid = 0;
        journal
            .push(Entry {
                setting: "pair".to_string(),
                undo: Undo::Command {
                    restore: restore.to_string(),
                },
            })
            .unwrap();
        journal.path.unwrap()
    }

    #[test]
    fn what_cannot_be_put_back_stays_journaled_and_a_damaged_journal_is_said() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("damaged.json"), "{").unwrap();
        let failing = dead_journal(dir.path(), "exit 1");
        let lines = restore_leftovers_in(dir.path()).unwrap();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines.iter().any(|l| l.contains("damaged.json")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("tried again at every start")),
            "{lines:?}"
        );
        assert!(failing.exists(), "kept, to try again");
        let (_, record) = read(&failing).unwrap();
        assert_eq!(record.entries.len(), 1);

        std::fs::remove_file(&failing).unwrap();
        std::fs::remove_file(dir.path().join("damaged.json")).unwrap();
        let done = dead_journal(dir.path(), "true");
        let lines = restore_leftovers_in(dir.path()).unwrap();
        assert_eq!(
            lines,
            ["experiment 0 (ended without putting its settings back): pair: ran `true`"]
        );
        assert!(!done.exists());
    }
}
