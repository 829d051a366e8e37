//! Each arm's settings of the system, made from what the user wrote
//! (`system::setting` parses them), and checked before anything runs: a
//! plain user asking for one that needs root is refused, and each arm's
//! settings are applied, read back and put back once (`rehearse`), so a
//! setting this machine cannot take stops the experiment with one line
//! (exit 2) before its first run; so is an arm whose run options its runs
//! would refuse (`check_runs`).

use super::ArmRuns;
use crate::commands::run::check_privileges;
use crate::exit::UsageError;
use crate::experiment::arms::ArmSpec;
use crate::system::setting::{self, Setting, SettingError};
use std::collections::BTreeMap;
use std::path::Path;

/// The settings of `arm` (its system settings, then its pairs of
/// commands); an unknown or malformed one is bad input.
pub fn of(arm: &ArmSpec, workdir: &Path) -> Result<Vec<Setting>, UsageError> {
    let mut settings = arm
        .system
        .iter()
        .map(|text| Setting::parse(text, workdir))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| in_arm(&arm.name, &e))?;
    settings.extend(
        arm.commands
            .iter()
            .map(|pair| Setting::commands(&pair.set, &pair.restore)),
    );
    Ok(settings)
}

/// Refuses `arms` (name and settings each) when one needs root and this
/// process is not root's; then applies and puts back each arm's settings
/// once, and returns what each arm's settings found before they changed
/// it, by the setting as shown (`vm.swappiness=10`: `60`). A setting that
/// cannot be applied is bad input; one that cannot be put back is a
/// failure.
pub fn check(arms: &[(String, Vec<Setting>)]) -> anyhow::Result<Vec<BTreeMap<String, String>>> {
    if !nix::unistd::geteuid().is_root() {
        let needing: Vec<String> = arms
            .iter()
            .flat_map(|(name, settings)| {
                settings
                    .iter()
                    .filter(|s| s.needs_root())
                    .map(move |s| format!("{} (arm {name})", s.label()))
            })
            .collect();
        if !needing.is_empty() {
            return Err(UsageError::new(format!(
                "{} need(s) root: run the experiment as root, or leave them out",
                needing.join(", ")
            ))
            .into());
        }
    }
    arms.iter()
        .map(|(name, settings)| {
            if settings.is_empty() {
                return Ok(BTreeMap::new());
            }
            let originals = setting::rehearse(settings).map_err(|e| classified(name, e))?;
            Ok(settings
                .iter()
                .zip(originals)
                .filter_map(|(s, original)| Some((s.label(), original?)))
                .collect())
        })
        .collect()
}

/// Refuses an arm whose run options its runs would refuse (a negative nice
/// or SCHED_FIFO without the privileges, a slice this kernel ignores, CPUs
/// the workers may not use, an option that changes the system without
/// root), as `run` would at its start: with the arm's name, before
/// anything runs.
pub fn check_runs(arms: &[ArmRuns]) -> Result<(), UsageError> {
    arms.iter().try_for_each(|arm| {
        check_privileges(&arm.config)
            .map_err(|e| UsageError::new(format!("arm {}: {e}", arm.spec.name)))
    })
}

/// `error` of arm `name`, as bad input or a failure.
pub fn classified(name: &str, error: SettingError) -> anyhow::Error {
    match error.is_bad_input() {
        true => in_arm(name, &error).into(),
        false => anyhow::Error::new(error).context(format!("arm {name}")),
    }
}

/// `error` as bad input of arm `name`.
fn in_arm(name: &str, error: &SettingError) -> UsageError {
    UsageError::new(format!("arm {name}: {error}"))
}
