//! `feelbench ab report DIR`: an experiment rendered again from its
//! directory, nothing run: its document read, its runs' documents read and
//! analysed afresh (so an experiment that was killed before its analysis
//! gets one, and a rendering changed since shows on an old experiment),
//! printed in the format asked. The directory is left as it was.

use super::{read_runs, rendered, AbFormat, DOCUMENT};
use crate::exit::{ExitCode, UsageError};
use crate::experiment::analysis;
use crate::experiment::model::{ExperimentDocument, SCHEMA};
use std::path::{Path, PathBuf};

/// What `feelbench ab report` renders.
#[derive(Debug, Clone)]
pub struct AbReportSettings {
    /// The experiment's directory.
    pub dir: PathBuf,
    pub format: AbFormat,
}

/// Prints the experiment in `settings.dir`.
pub fn report(settings: &AbReportSettings) -> anyhow::Result<ExitCode> {
    let out = render_dir(&settings.dir, settings.format)?;
    super::super::print(&out)
}

/// The experiment in `dir`, analysed again from its runs, as `format`
/// renders it. A directory that holds no experiment is bad input.
pub fn render_dir(dir: &Path, format: AbFormat) -> anyhow::Result<String> {
    let mut doc = read_document(dir)?;
    let runs = read_runs(dir, &doc);
    doc.analysis = Some(analysis::analyse(&doc, &runs));
    rendered(&doc, format)
}

/// The experiment's document in `dir`; one line of bad input when there is
/// none.
fn read_document(dir: &Path) -> Result<ExperimentDocument, UsageError> {
    let path = dir.join(DOCUMENT);
    let bad = |why: String| UsageError::new(format!("{}: {why}", dir.display()));
    if !dir.is_dir() {
        return Err(bad("no such directory (give the experiment's --dir)".into()));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| {
        bad(format!(
            "not an experiment's directory: cannot read its {DOCUMENT} ({e})"
        ))
    })?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| bad(format!("its {DOCUMENT} is not JSON ({e})")))?;
    if value["schema"] != SCHEMA {
        return Err(bad(format!(
            "its {DOCUMENT} is not a feelbench experiment of schema {SCHEMA} (schema {})",
            value["schema"]
        )));
    }
    serde_json::from_value(value)
        .map_err(|e| bad(format!("its {DOCUMENT} is a damaged experiment ({e})")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::file::write_run;
    use crate::experiment::fixture;
    use crate::experiment::model::{RunRecord, RunStatus};

    /// A directory holding the fixture's experiment as `ab` writes it, its
    /// analysis left out (as a killed experiment leaves it).
    fn experiment_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("runs")).unwrap();
        let mut doc = fixture::document(&["base", "s10"]);
        for (position, ((round, slot), run)) in fixture::runs().into_iter().enumerate() {
            let file = format!("runs/r{:02}-{slot}.json", round + 1);
            write_run(&dir.path().join(&file), &run).unwrap();
            doc.runs.push(RunRecord {
                round,
                position: position % 3,
                slot,
                file,
                run_id: None,
                status: RunStatus::Ok,
                seconds: 1.0,
            });
        }
        super::super::write(dir.path(), &doc).unwrap();
        dir
    }

    #[test]
    fn an_experiments_directory_is_analysed_and_rendered_again() {
        let dir = experiment_dir();
        let before = std::fs::read(dir.path().join(DOCUMENT)).unwrap();
        let text = render_dir(dir.path(), AbFormat::Table).unwrap();
        let mut analysed = fixture::document(&["base", "s10"]);
        analysed.runs = read_document(dir.path()).unwrap().runs;
        analysed.analysis = Some(analysis::analyse(&analysed, &fixture::runs()));
        assert_eq!(text, super::super::text::render(&analysed));
        assert!(text.contains("1. s10: none unchanged"), "{text}");
        assert!(text.contains("burn better -50.0 %"), "{text}");
        let json: serde_json::Value =
            serde_json::from_str(&render_dir(dir.path(), AbFormat::Json).unwrap()).unwrap();
        assert_eq!(json["analysis"]["ranking"][0]["arms"][0]["name"], "s10");
        let page = render_dir(dir.path(), AbFormat::Html).unwrap();
        assert!(page.contains("<h1>Experiment ab-test</h1>"));
        let after = std::fs::read(dir.path().join(DOCUMENT)).unwrap();
        assert_eq!(before, after, "the directory is left as it was");
    }

    #[test]
    fn a_directory_without_an_experiment_is_one_line_of_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nothing");
        std::fs::write(dir.path().join("run.json"), "{}").unwrap();
        let cases = [
            (missing.clone(), "no such directory"),
            (dir.path().to_path_buf(), "not an experiment's directory"),
        ];
        for (path, said) in cases {
            let e = read_document(&path).unwrap_err().to_string();
            assert!(e.contains(said) && !e.contains('\n'), "{e}");
        }
        std::fs::write(
            dir.path().join(DOCUMENT),
            "{\"schema\": \"feelbench.run/2\"}",
        )
        .unwrap();
        let e = read_document(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not a feelbench experiment"), "{e}");
        std::fs::write(dir.path().join(DOCUMENT), "{").unwrap();
        let e = read_document(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is not JSON") && !e.contains('\n'), "{e}");
    }
}
