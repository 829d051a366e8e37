//! Merging run documents made separately on one machine with the same
//! settings into one, whose scenarios hold the measurements of them all.

use super::compatible::{self, Difference};
use super::MergeProblem;
use crate::document::methods::Methods;
use crate::document::schema::{
    Measurement, RunDocument, RunInfo, RunSettingsRecord, ScenarioResult, ToolInfo, SCHEMA,
};
use crate::figures::ProbeSheet;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Why runs cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum RunsMergeError {
    /// No run was given.
    #[error("no run to merge")]
    Nothing,
    /// A run was not made on the same machine with the same settings.
    #[error("{} and {} cannot be merged: {difference}", .first.display(), .other.display())]
    Mismatch {
        first: PathBuf,
        other: PathBuf,
        difference: Difference,
    },
    /// A measurement cannot be merged with the others of its scenario.
    #[error("{}: {probe} under {load}, measurement {measurement}: {problem}", .path.display())]
    Scenario {
        path: PathBuf,
        probe: String,
        load: String,
        /// Its place (from 1) among the scenario's measurements in that file.
        measurement: usize,
        problem: MergeProblem,
    },
}

/// The measurements of one scenario gathered from every run, with the run
/// each came from and its place there.
struct Gathered {
    probe: String,
    load: String,
    measurements: Vec<Measurement>,
    origins: Vec<(usize, usize)>,
}

/// Merges `runs` (each with the file it was read from, for messages), in
/// that order, into one run written by `command_line`. Each scenario keeps
/// every measurement of every run as its repeats, in run order, and their
/// merge as its outcome; a scenario missing from some runs keeps those it
/// has. The system, environment and settings are the first run's (the
/// repeat count is the sum of the runs'), the warnings those of any run.
pub fn merge_runs(
    runs: &[(PathBuf, RunDocument)],
    command_line: Vec<String>,
) -> Result<RunDocument, RunsMergeError> {
    let ((first_path, first), rest) = runs.split_first().ok_or(RunsMergeError::Nothing)?;
    for (path, run) in rest {
        if let Some(difference) = compatible::first_difference(first, run) {
            return Err(RunsMergeError::Mismatch {
                first: first_path.clone(),
                other: path.clone(),
                difference,
            });
        }
    }
    let mut probes = BTreeMap::new();
    for (_, run) in runs.iter().rev() {
        probes.extend(run.probes.clone());
    }
    let scenarios = gather(runs)
        .into_iter()
        .map(|g| merge_gathered(runs, g, &probes))
        .collect::<Result<_, _>>()?;
    let documents: Vec<&RunDocument> = runs.iter().map(|(_, run)| run).collect();
    let mut warnings = Vec::new();
    for warning in documents.iter().flat_map(|r| &r.warnings) {
        if !warnings.contains(warning) {
            warnings.push(warning.clone());
        }
    }
    Ok(RunDocument {
        schema: SCHEMA.to_string(),
        tool: ToolInfo::this_build(),
        run: merged_info(&documents, command_line),
        system: first.system.clone(),
        environment: first.environment.clone(),
        settings: RunSettingsRecord {
            repeats: documents.iter().map(|r| r.settings.repeats).sum(),
            ..first.settings.clone()
        },
        suite: first.suite.clone(),
        methods: Methods::union(documents.iter().map(|r| r.methods.as_ref())),
        probes,
        warnings,
        scenarios,
    })
}

/// The scenario of the measurements `g` gathered from `runs`, with the
/// figures of its probe as `probes` (the first run's that has it) declare.
fn merge_gathered(
    runs: &[(PathBuf, RunDocument)],
    g: Gathered,
    probes: &BTreeMap<String, ProbeSheet>,
) -> Result<ScenarioResult, RunsMergeError> {
    let sheet = probes.get(&g.probe).cloned().unwrap_or_default();
    ScenarioResult::from_measurements(g.probe.clone(), g.load.clone(), g.measurements, &sheet)
        .map_err(|e| {
            let (run, place) = g.origins[e.repeat];
            RunsMergeError::Scenario {
                path: runs[run].0.clone(),
                probe: g.probe,
                load: g.load,
                measurement: place + 1,
                problem: e.problem,
            }
        })
}

/// Every scenario of `runs` (in the order they first appear) with its
/// measurements from each run, in run order.
fn gather(runs: &[(PathBuf, RunDocument)]) -> Vec<Gathered> {
    let mut gathered: Vec<Gathered> = Vec::new();
    for (run, (_, document)) in runs.iter().enumerate() {
        for scenario in &document.scenarios {
            let index = match gathered
                .iter()
                .position(|g| g.probe == scenario.probe && g.load == scenario.load)
            {
                Some(index) => index,
                None => {
                    gathered.push(Gathered {
                        probe: scenario.probe.clone(),
                        load: scenario.load.clone(),
                        measurements: Vec::new(),
                        origins: Vec::new(),
                    });
                    gathered.len() - 1
                }
            };
            let entry = &mut gathered[index];
            for (place, measurement) in scenario.measurements().iter().enumerate() {
                entry.measurements.push(measurement.clone());
                entry.origins.push((run, place));
            }
        }
    }
    gathered
}

/// The run information of the merge: the runs' ids joined with `+`, the
/// earliest start and latest end (feelbench writes UTC times in one format,
/// so text order is time order), interrupted when any was, and the common
/// comment or the distinct ones joined with `; `.
fn merged_info(runs: &[&RunDocument], command_line: Vec<String>) -> RunInfo {
    let mut comments: Vec<&str> = Vec::new();
    for comment in runs.iter().filter_map(|r| r.run.comment.as_deref()) {
        if !comments.contains(&comment) {
            comments.push(comment);
        }
    }
    RunInfo {
        id: runs
            .iter()
            .map(|r| r.run.id.as_str())
            .collect::<Vec<_>>()
            .join("+"),
        started: runs
            .iter()
            .map(|r| r.run.started.clone())
            .min()
            .unwrap_or_default(),
        finished: runs.iter().filter_map(|r| r.run.finished.clone()).max(),
        interrupted: runs.iter().any(|r| r.run.interrupted),
        comment: (!comments.is_empty()).then(|| comments.join("; ")),
        command_line,
        trace: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{failed, ok, periodic, sheet};
    use super::*;
    use crate::document::fixture;
    use crate::document::schema::{ScenarioStatus, Warning, WarningCode};

    fn named(name: &str, run: RunDocument) -> (PathBuf, RunDocument) {
        (PathBuf::from(name), run)
    }

    /// The fixture with one scenario `audio` under `load` of `frames` frames.
    fn run_of(load: &str, frames: usize) -> RunDocument {
        let mut run = fixture::run();
        run.scenarios = vec![ScenarioResult::from_measurements(
            "audio".into(),
            load.into(),
            vec![ok(
                periodic(1.0, &vec![10; frames], 0, frames as u64),
                vec![],
            )],
            &sheet(),
        )
        .unwrap()];
        run
    }

    #[test]
    fn scenarios_gather_every_measurement_in_run_order() {
        let mut a = run_of("none", 2);
        a.scenarios[0].add_repeat(failed("boom"), &sheet()).unwrap();
        a.settings.repeats = 2;
        let mut b = run_of("none", 3);
        b.scenarios.push(run_of("burn", 4).scenarios.remove(0));
        let merged = merge_runs(
            &[named("a.json", a.clone()), named("b.json", b.clone())],
            vec!["feelbench".into(), "merge".into()],
        )
        .unwrap();
        assert_eq!(merged.scenarios.len(), 2);
        let none = &merged.scenarios[0];
        assert_eq!(none.repeats.len(), 3);
        assert_eq!(none.repeats[..2], a.scenarios[0].repeats[..]);
        assert_eq!(none.repeats[2], b.scenarios[0].outcome);
        assert_eq!(none.outcome.status, ScenarioStatus::Ok);
        assert_eq!(
            none.outcome.result.as_ref().unwrap().figures["frames_executed"],
            5.0
        );
        let burn = &merged.scenarios[1];
        assert_eq!(
            *burn, b.scenarios[1],
            "a scenario of one run keeps its measurement"
        );
        assert_eq!(merged.settings.repeats, 3);
        assert_eq!(merged.run.command_line, ["feelbench", "merge"]);
    }

    #[test]
    fn run_info_spans_the_runs() {
        let mut a = run_of("none", 1);
        let mut b = run_of("none", 1);
        a.run.id = "a".into();
        b.run.id = "b".into();
        b.run.started = "2026-11-22T12:00:00Z".into();
        b.run.finished = None;
        b.run.interrupted = true;
        b.run.comment = Some("second".into());
        b.warnings = vec![Warning::new(WarningCode::NoisyMachine, "busy".into())];
        let merged = merge_runs(&[named("a", a.clone()), named("b", b)], vec![]).unwrap();
        assert_eq!(merged.run.id, "a+b");
        assert_eq!(merged.run.started, "2026-11-22T12:00:00Z");
        assert_eq!(merged.run.finished, a.run.finished);
        assert!(merged.run.interrupted);
        assert_eq!(
            merged.run.comment.as_deref(),
            Some("fixture, with a | pipe; second")
        );
        assert_eq!(merged.warnings.len(), 1);
        let same = merge_runs(&[named("a", a.clone()), named("a2", a)], vec![]).unwrap();
        assert_eq!(same.run.comment.as_deref(), Some("fixture, with a | pipe"));
    }

    #[test]
    fn mismatched_runs_are_refused_naming_both_values() {
        let a = run_of("none", 1);
        let mut b = run_of("none", 1);
        b.settings.duration_s = 1.0;
        let err = merge_runs(&[named("a.json", a), named("b.json", b)], vec![])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "a.json and b.json cannot be merged: duration per scenario differs (3 s in the first, 1 s in the second)"
        );
        let a = run_of("none", 1);
        let mut b = run_of("none", 1);
        b.settings.loops_per_ms = 1000.0;
        let err = merge_runs(&[named("a.json", a), named("b.json", b)], vec![])
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("more than 5 % apart)"), "{err}");
    }

    #[test]
    fn a_damaged_measurement_names_its_file_and_place() {
        let a = run_of("none", 1);
        let mut b = run_of("none", 1);
        let result = b.scenarios[0].outcome.result.as_mut().unwrap();
        result.tally.samples.get_mut("latency").unwrap().histogram = "???".into();
        let err = merge_runs(&[named("a.json", a), named("b.json", b)], vec![])
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "b.json: audio under none, measurement 1: its latency histogram is damaged"
            ),
            "{err}"
        );
    }

    #[test]
    fn nothing_to_merge_is_an_error() {
        assert!(matches!(
            merge_runs(&[], vec![]),
            Err(RunsMergeError::Nothing)
        ));
    }
}
