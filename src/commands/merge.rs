//! `feelbench merge RUN RUN... -o FILE`: merges runs made separately on one
//! machine with the same settings into one run document.

use crate::document::file::{read_run, write_run};
use crate::document::merge::runs::merge_runs;
use crate::exit::{ExitCode, UsageError};
use crate::probe;
use anyhow::Context as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// Settings of `feelbench merge`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeSettings {
    /// The run files, in the order their repeats are kept.
    pub files: Vec<PathBuf>,
    /// Where the merged run is written.
    pub output: PathBuf,
}

/// Reads the runs, merges them and writes the merge atomically. Files that
/// are not runs, runs that do not match and an output that is one of the
/// inputs are bad input.
pub fn run(settings: &MergeSettings) -> anyhow::Result<ExitCode> {
    let MergeSettings { files, output } = settings;
    refuse_overwriting_an_input(files, output)?;
    let runs = files
        .iter()
        .map(|path| Ok((path.clone(), read_run(path, &probe::sheet_of)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let merged = merge_runs(&runs, std::env::args().collect()).map_err(UsageError::input)?;
    write_run(output, &merged)
        .with_context(|| format!("cannot write the merged run to {}", output.display()))?;
    say!(
        "{} runs merged into {} ({} scenarios)",
        files.len(),
        output.display(),
        merged.scenarios.len()
    );
    Ok(ExitCode::Success)
}

/// Refuses an `output` that is the same file as an input (by device and
/// inode, so another name for it counts too).
fn refuse_overwriting_an_input(files: &[PathBuf], output: &Path) -> Result<(), UsageError> {
    let Ok(target) = std::fs::metadata(output) else {
        return Ok(());
    };
    let same = |path: &&PathBuf| {
        std::fs::metadata(path).is_ok_and(|m| m.dev() == target.dev() && m.ino() == target.ino())
    };
    match files.iter().find(same) {
        Some(input) => Err(UsageError::new(format!(
            "-o {} is the input {}; write the merge to a new file",
            output.display(),
            input.display()
        ))),
        None => Ok(()),
    }
}
