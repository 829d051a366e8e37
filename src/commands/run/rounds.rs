//! The scenario loop of `feelbench run`: with `--repeat N`, N rounds that
//! each measure every scenario once, so slow drift of the machine spreads
//! over all scenarios instead of landing on one (a scenario a suite
//! measures more often than others takes part in that many rounds). After every measurement the
//! scenario holds its repeats and their merge, and the run file is written
//! again, so an interrupted run keeps every finished measurement. A
//! scenario's figures are said on stderr, as progress, once its last repeat
//! is done (the tables go to stdout when the run ends). Each measurement
//! has a fresh directory, removed after it; one that cannot be removed is a
//! warning of the run, and a scenario whose files no longer fit (checked
//! before each one that needs disk) fails without running.

use super::work::check_room;
use crate::document::file::write_run;
use crate::document::schema::{
    Measurement, RunDocument, ScenarioResult, ScenarioStatus, Warning, WarningCode,
};
use crate::engine::interrupt::Interrupt;
use crate::engine::scenario::{run_scenario, Scenario, ScenarioSettings};
use crate::engine::workspace::Workspace;
use crate::progress::Progress;
use crate::report::table;
use crate::trace::ScenarioTrace;
use anyhow::Context as _;
use std::cell::RefCell;
use std::path::Path;
use std::time::Duration;

/// What the scenario loops work with (this module's rounds, and
/// `--precision`'s in [`super::adaptive`]).
pub struct Rounds<'a> {
    /// The scenarios, in run order.
    pub scenarios: &'a [Scenario],
    /// What every scenario shares.
    pub settings: &'a ScenarioSettings,
    /// Where each scenario gets its directory.
    pub workspace: &'a Workspace,
    /// Set by SIGINT, SIGTERM or SIGHUP.
    pub interrupt: &'a Interrupt,
    /// Where the run is written after every measurement.
    pub output: Option<&'a Path>,
    /// What the trace shows of each measurement, when the run writes one.
    pub traces: &'a RefCell<Vec<ScenarioTrace>>,
}

impl Rounds<'_> {
    /// Measures every scenario `repeats` times, round by round, into
    /// `run.scenarios` (in scenario order), saying each one's figures after
    /// its last repeat. A signal drops the running measurement, marks the
    /// run interrupted and ends the loop.
    pub fn measure(&self, run: &mut RunDocument, progress: &mut Progress) -> anyhow::Result<()> {
        let rounds = self.scenarios.iter().map(|s| s.repeats).max().unwrap_or(1);
        'rounds: for round in 1..=rounds {
            for (index, scenario) in self.scenarios.iter().enumerate() {
                if round > scenario.repeats {
                    continue;
                }
                let (label, repeat) = match scenario.repeats {
                    1 => (String::new(), String::new()),
                    n => (
                        format!(", round {round}/{n}"),
                        format!(" (repeat {round} of {n})"),
                    ),
                };
                let measured = self.measure_once(index, &label, progress, &mut run.warnings)?;
                let Some(result) = measured else {
                    run.run.interrupted = true;
                    break 'rounds;
                };
                self.warn_about(&result, &repeat, progress);
                self.keep(run, index, result)?;
                if round == scenario.repeats {
                    self.say_done(run, index, progress);
                }
            }
        }
        Ok(())
    }

    /// How long one measurement of scenario `index` is expected to measure.
    pub(super) fn measuring_time(&self, index: usize) -> Duration {
        let settings = self.settings;
        let probe = self.scenarios[index].probe;
        Duration::from_nanos(probe.expected_ns(&settings.params, settings.duration_ns))
    }

    /// How long one measurement of scenario `index` is expected to take,
    /// with the loads' warm-up.
    pub(super) fn scenario_time(&self, index: usize) -> Duration {
        self.measuring_time(index) + Duration::from_nanos(self.settings.warmup_ns)
    }

    /// Measures scenario `index` once, `note` after its place in the
    /// progress bar's label; `None` when a signal interrupted it. A
    /// scenario whose files no longer fit in the work directory fails
    /// without running; a directory that cannot be removed after it is a
    /// warning in `warnings`.
    pub(super) fn measure_once(
        &self,
        index: usize,
        note: &str,
        progress: &mut Progress,
        warnings: &mut Vec<Warning>,
    ) -> anyhow::Result<Option<ScenarioResult>> {
        let scenario = &self.scenarios[index];
        let params = &self.settings.params;
        if let Err(e) = check_room(scenario, params, self.workspace.dir()) {
            progress.skip(self.scenario_time(index));
            return Ok(Some(ScenarioResult::single(
                scenario.probe.name.to_string(),
                scenario.load.name.clone(),
                not_measured(&format!("not measured: {e:#}")),
                &scenario.probe.sheet_for(params),
            )));
        }
        progress.start_scenario(
            &format!(
                "{} under {} ({}/{}{note})",
                scenario.probe.name,
                scenario.load.name,
                index + 1,
                self.scenarios.len()
            ),
            self.scenario_time(index),
        );
        let dir = self.workspace.scenario_dir(index)?;
        let outcome = run_scenario(scenario, self.settings, &dir, self.interrupt, &mut || {
            progress.tick()
        });
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            warnings.push(Warning::new(
                WarningCode::CleanupFailed,
                format!(
                    "cannot remove the files of {} under {} in {}: {e}; they hold their space until the run ends, and each later scenario that needs disk checks the space left",
                    scenario.probe.name,
                    scenario.load.name,
                    dir.display()
                ),
            ));
        }
        progress.finish_scenario();
        Ok(outcome.ok().map(|(result, trace)| {
            if let Some(mut trace) = trace {
                trace.name.push_str(note);
                self.traces.borrow_mut().push(trace);
            }
            result
        }))
    }

    /// Keeps `result` as scenario `index`'s first measurement or its latest
    /// repeat, and writes the run again.
    pub(super) fn keep(
        &self,
        run: &mut RunDocument,
        index: usize,
        result: ScenarioResult,
    ) -> anyhow::Result<()> {
        let sheet = run.sheet(&result.probe).cloned().unwrap_or_default();
        match run.scenarios.get_mut(index) {
            Some(scenario) => scenario
                .add_repeat(result.outcome, &sheet)
                .with_context(|| {
                    format!(
                        "merging the repeats of {} under {}",
                        result.probe, result.load
                    )
                })?,
            None => run.scenarios.push(result),
        }
        if let Some(path) = self.output {
            write_run(path, run)
                .with_context(|| format!("cannot write the run to {}", path.display()))?;
        }
        Ok(())
    }

    /// Says that a measurement failed or was disturbed, naming it by its
    /// scenario and `which` (` (repeat 2 of 3)`).
    pub(super) fn warn_about(&self, result: &ScenarioResult, which: &str, progress: &Progress) {
        let what = format!("{} under {}{which}", result.probe, result.load);
        let outcome = &result.outcome;
        if outcome.status == ScenarioStatus::Failed {
            progress.say(&format!(
                "{what} failed: {}",
                outcome.error.as_deref().unwrap_or("unknown reason")
            ));
        }
        if let Some(disturbed) = outcome
            .telemetry
            .as_ref()
            .and_then(|t| t.figures.disturbed.as_deref())
        {
            progress.say(&format!("warning: {what}: {disturbed}"));
        }
    }

    /// Says on stderr that scenario `index` is done, with its figures on
    /// one line (`x under burn (2/6): Latency +/- SD (ms) 2.207 +/- 2.777,
    /// p99 (ms) 9.519, ...`).
    pub(super) fn say_done(&self, run: &RunDocument, index: usize, progress: &Progress) {
        let scenario = &run.scenarios[index];
        let sheet = run.sheet(&scenario.probe).cloned().unwrap_or_default();
        let cells = table::row_cells(scenario, &sheet, run.baseline_of(&scenario.probe));
        let named: Vec<String> = table::header_cells(&sheet)
            .into_iter()
            .zip(&cells)
            .skip(1)
            .map(|(header, cell)| format!("{header} {cell}"))
            .collect();
        let figures = match cells.get(1) {
            Some(failed) if failed.starts_with("FAILED") => failed.clone(),
            _ => named.join(", "),
        };
        progress.say(&format!(
            "{} under {} ({}/{}): {figures}",
            scenario.probe,
            scenario.load,
            index + 1,
            self.scenarios.len()
        ));
    }
}

/// A measurement that failed for `reason` before anything ran.
fn not_measured(reason: &str) -> Measurement {
    Measurement {
        status: ScenarioStatus::Failed,
        error: Some(reason.to_string()),
        result: None,
        load_work: Vec::new(),
        telemetry: None,
    }
}
