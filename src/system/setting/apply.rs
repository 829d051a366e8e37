//! Applying settings: journaled, written, read back; held until restored
//! (by [`Applied::restore`] or, best effort, when dropped).

use super::journal::{self, Entry, Journal, Undo};
use super::{command, file, preempt, scx, Kind, Setting, SettingError};
use std::path::Path;

/// Settings in force; put back by [`Applied::restore`] (and, best effort,
/// when dropped).
#[derive(Debug)]
pub struct Applied {
    journal: Journal,
    /// What was applied, in order, and how to put each back.
    held: Vec<Held>,
}

/// One setting in force.
#[derive(Debug)]
struct Held {
    setting: Setting,
    /// Its changes, in the order made.
    undo: Vec<Undo>,
    /// Its scheduler's process, for a sched_ext setting.
    scheduler: Option<scx::Running>,
    /// What it changed read before the change, as the kernel shows it
    /// (`None` for a scheduler or a pair of commands, which read nothing).
    original: Option<String>,
}

/// Writes each setting, reads it back (a value that reads back otherwise
/// is an error naming the setting) and journals what to put back before
/// writing. On an error, what was applied is put back before it returns.
pub fn apply(settings: &[Setting]) -> Result<Applied, SettingError> {
    let dir = journal::default_dir().ok_or_else(|| SettingError::Journal {
        path: "$XDG_RUNTIME_DIR or ~/.cache/feelbench".into(),
        error: "neither is set".to_string(),
    })?;
    apply_in(Some(&dir), settings)
}

/// Applies, reads back and restores once: the check before anything runs.
/// Returns each setting's original value (see [`Applied::originals`]).
pub fn rehearse(settings: &[Setting]) -> Result<Vec<Option<String>>, SettingError> {
    let applied = apply(settings)?;
    let originals = applied.originals();
    applied.restore()?;
    Ok(originals)
}

/// [`apply`], journaled in `dir` (`None`: not journaled).
pub(super) fn apply_in(dir: Option<&Path>, settings: &[Setting]) -> Result<Applied, SettingError> {
    if !super::is_root() {
        if let Some(setting) = settings.iter().find(|s| s.needs_root()) {
            return Err(SettingError::NeedsRoot {
                setting: setting.label(),
                what: setting.target(),
            });
        }
    }
    let mut applied = Applied {
        journal: Journal::new(dir),
        held: Vec::new(),
    };
    for setting in settings {
        if let Err(e) = applied.apply_one(setting) {
            for left in applied.restore_all() {
                say!("warning: {left}; the next feelbench start tries again");
            }
            return Err(e);
        }
    }
    Ok(applied)
}

impl Setting {
    /// What it writes, for the error that says it needs root.
    fn target(&self) -> String {
        match &self.kind {
            Kind::Files { paths, .. } => paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            Kind::Preempt { .. } => "the preemption model in debugfs".to_string(),
            Kind::Scx { .. } => "the kernel's scheduler (sched_ext)".to_string(),
            Kind::Commands { set, .. } => format!("what `{set}` changes"),
        }
    }
}

impl Applied {
    /// Puts every setting back, the last first; the first error (after
    /// trying them all; the others are said as warnings). What could not be
    /// put back stays journaled, for the next start to try again.
    pub fn restore(mut self) -> Result<(), SettingError> {
        let mut errors = self.restore_all().into_iter();
        let first = errors.next();
        for e in errors {
            say!("warning: {e}");
        }
        first.map_or(Ok(()), Err)
    }

    /// Each setting's value before it was applied, in the settings' order,
    /// as the kernel showed it: a file's (the distinct ones joined by `/`
    /// when a setting writes several files that differed, as governors of
    /// CPUs can), the preemption model's; `None` for a scheduler or a pair
    /// of commands.
    pub fn originals(&self) -> Vec<Option<String>> {
        self.held.iter().map(|h| h.original.clone()).collect()
    }

    /// Errors if a setting stopped holding (a sched_ext scheduler ejected,
    /// a value changed by someone else).
    pub fn check_holding(&self) -> Result<(), SettingError> {
        self.held.iter().try_for_each(Held::check)
    }

    /// Journals, writes and reads back `setting`.
    fn apply_one(&mut self, setting: &Setting) -> Result<(), SettingError> {
        let label = setting.label();
        self.held.push(Held {
            setting: setting.clone(),
            undo: Vec::new(),
            scheduler: None,
            original: None,
        });
        match &setting.kind {
            Kind::Files { paths, value } => {
                let mut originals: Vec<String> = Vec::new();
                for path in paths {
                    let original = file::read(&label, path)?;
                    if !originals.contains(&original) {
                        originals.push(original.clone());
                    }
                    self.journal_change(Undo::File {
                        path: path.clone(),
                        original,
                    })?;
                    file::write_checked(&label, path, value)?;
                }
                self.last().original = Some(originals.join("/"));
            }
            Kind::Preempt { model } => {
                let debugfs = preempt::Debugfs::open(&label)?;
                let original = debugfs.read(&label)?;
                self.last().original = Some(original.clone());
                self.journal_change(Undo::Preempt { original })?;
                debugfs.set(&label, model)?;
            }
            Kind::Commands { set, restore } => {
                self.journal_change(Undo::Command {
                    restore: restore.clone(),
                })?;
                command::run(&label, set)?;
            }
            Kind::Scx { argv, root } => {
                let running = scx::start(&label, argv, root, |pid, start_ticks| {
                    self.journal_change(Undo::Scheduler {
                        pid,
                        start_ticks,
                        root: root.clone(),
                    })
                })?;
                self.last().scheduler = Some(running);
            }
        }
        Ok(())
    }

    /// The setting being applied.
    fn last(&mut self) -> &mut Held {
        self.held.last_mut().expect("a setting is being applied")
    }

    /// Journals a change of the setting being applied, before it is made.
    fn journal_change(&mut self, undo: Undo) -> Result<(), SettingError> {
        let setting = self.last().setting.label();
        self.last().undo.push(undo.clone());
        self.journal.push(Entry { setting, undo })
    }

    /// Puts back every setting, the last first; the errors. What could not
    /// be put back stays journaled.
    fn restore_all(&mut self) -> Vec<SettingError> {
        let mut errors = Vec::new();
        let mut left = Vec::new();
        for mut held in std::mem::take(&mut self.held).into_iter().rev() {
            let label = held.setting.label();
            if let Some(running) = &mut held.scheduler {
                if let Err(e) = running.stop(&label) {
                    errors.push(e);
                    left.extend(held.undo.into_iter().map(|undo| Entry {
                        setting: label.clone(),
                        undo,
                    }));
                }
                continue;
            }
            for undo in held.undo.into_iter().rev() {
                if let Err(e) = undo.run(&label) {
                    errors.push(e);
                    left.push(Entry {
                        setting: label.clone(),
                        undo,
                    });
                }
            }
        }
        left.reverse();
        if let Err(e) = self.journal.keep_only(left) {
            errors.push(e);
        }
        errors
    }
}

impl Held {
    /// An error when the setting no longer holds.
    fn check(&self) -> Result<(), SettingError> {
        let label = self.setting.label();
        let changed = |e: SettingError| match e {
            SettingError::ReadBack { path, shown, .. } => SettingError::NotHolding {
                setting: label.clone(),
                what: format!("{} reads {shown:?} now", path.display()),
            },
            other => other,
        };
        match (&self.setting.kind, &self.scheduler) {
            (Kind::Files { paths, value }, _) => paths
                .iter()
                .try_for_each(|path| file::check(&label, path, value))
                .map_err(changed),
            (Kind::Preempt { model }, _) => preempt::Debugfs::open(&label)?
                .check(&label, model)
                .map_err(changed),
            (Kind::Scx { .. }, Some(running)) => running.check(&label),
            _ => Ok(()),
        }
    }
}

impl Drop for Applied {
    /// Puts back what is still in force (after an error or a panic), saying
    /// what could not be.
    fn drop(&mut self) {
        for e in self.restore_all() {
            say!("warning: {e}; the next feelbench start tries again");
        }
    }
}
