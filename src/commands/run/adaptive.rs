//! The scenario loop of `feelbench run --precision`: each scenario is
//! measured again and again, back to back, until the intervals of its
//! headline figures are narrow enough (`document::precision`) or its
//! measuring time has reached `--max-time`. Unlike `--repeat`'s rounds, the
//! measurements of a scenario are not spread over the run: whether another
//! one is needed is known only from those before it. Every measurement is
//! kept as a repeat and the run file written again; a failed measurement
//! ends its scenario. A scenario's figures are said once it is done.

use super::config::PrecisionGoal;
use super::rounds::Rounds;
use crate::document::precision;
use crate::document::schema::{RunDocument, ScenarioStatus};
use crate::progress::Progress;

/// How a scenario's measuring ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// Precise, at the cap, or failed.
    Done,
    /// A signal stopped the running measurement.
    Interrupted,
}

impl Rounds<'_> {
    /// Measures every scenario, one after the other, until it is as precise
    /// as `goal` asks, into `run.scenarios` (in scenario order), saying
    /// each one's figures when it is done. A signal drops the running
    /// measurement (the scenario keeps those before it), marks the run
    /// interrupted and ends the loop.
    pub fn measure_until_precise(
        &self,
        run: &mut RunDocument,
        progress: &mut Progress,
        goal: PrecisionGoal,
    ) -> anyhow::Result<()> {
        for index in 0..self.scenarios.len() {
            let ended = self.measure_scenario(run, index, goal, progress)?;
            if index < run.scenarios.len() {
                self.say_done(run, index, progress);
            }
            if ended == Ended::Interrupted {
                run.run.interrupted = true;
                break;
            }
        }
        Ok(())
    }

    /// Measures scenario `index` until it is precise, fails, or has had as
    /// many measurements as `goal` allows.
    fn measure_scenario(
        &self,
        run: &mut RunDocument,
        index: usize,
        goal: PrecisionGoal,
        progress: &mut Progress,
    ) -> anyhow::Result<Ended> {
        let most = goal.max_measurements(self.measuring_time(index).as_nanos() as u64);
        for count in 1..=most {
            let label = format!(", measurement {count} of at most {most}");
            let measured = self.measure_once(index, &label, progress, &mut run.warnings)?;
            let Some(result) = measured else {
                return Ok(Ended::Interrupted);
            };
            self.warn_about(&result, &format!(" (measurement {count})"), progress);
            let failed = result.outcome.status == ScenarioStatus::Failed;
            let sheet = run.sheet(&result.probe).cloned().unwrap_or_default();
            self.keep(run, index, result)?;
            if failed || precision::is_precise(&run.scenarios[index], &sheet, goal.pct) {
                progress.skip(self.scenario_time(index) * (most - count));
                break;
            }
        }
        Ok(Ended::Done)
    }
}
