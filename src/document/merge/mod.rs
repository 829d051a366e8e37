//! Merging the repeated measurements of a scenario into one: histograms and
//! counts are added up and every figure is computed again from the sums, so
//! a percentile of the merge is the percentile of every frame of every
//! repeat, never an average of percentiles. [`runs`] merges whole run
//! documents made separately on one machine.

mod compatible;
mod probe;
pub mod runs;

use super::estimate::intervals;
use super::schema::{LoadWork, Measurement, ScenarioResult, ScenarioStatus};
use crate::figures::{ProbeResult, ProbeSheet, TallyError};
use crate::measure::requests::RequestLatencies;

/// Why the repeats of a scenario cannot be merged.
#[derive(Debug, thiserror::Error)]
#[error("repeat {}: {problem}", .repeat + 1)]
pub struct MergeError {
    /// Index (from 0) of the repeat at fault, in the order they were given.
    pub repeat: usize,
    pub problem: MergeProblem,
}

/// What is wrong with a repeat that cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeProblem {
    /// One of its stored histograms cannot be read back.
    #[error("{0}")]
    Histogram(TallyError),
    /// Its figures are not of the same kind as the first repeat's.
    #[error("{0}")]
    Disagrees(String),
}

impl MergeError {
    fn disagrees(repeat: usize, what: String) -> Self {
        Self {
            repeat,
            problem: MergeProblem::Disagrees(what),
        }
    }
}

/// A repeat that produced figures, with its index among all repeats.
struct Finished<'a> {
    repeat: usize,
    result: &'a ProbeResult,
    load_work: &'a [LoadWork],
}

/// The merge of `measurements`, the repeats of one scenario in the order
/// they ran, whose figures `sheet` declares. Failed repeats are left out;
/// when every repeat failed, the merge failed with the first repeat's
/// error. The merge has no telemetry and no per-process usage (each repeat
/// keeps its own).
pub fn merge_measurements(
    measurements: &[Measurement],
    sheet: &ProbeSheet,
) -> Result<Measurement, MergeError> {
    let finished = measurements
        .iter()
        .enumerate()
        .filter(|(_, m)| m.status == ScenarioStatus::Ok)
        .map(|(repeat, m)| match &m.result {
            Some(result) => Ok(Finished {
                repeat,
                result,
                load_work: &m.load_work,
            }),
            None => Err(MergeError::disagrees(
                repeat,
                "it succeeded but holds no figures".to_string(),
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    if finished.is_empty() {
        return Ok(Measurement {
            status: ScenarioStatus::Failed,
            error: measurements.iter().find_map(|m| m.error.clone()),
            result: None,
            load_work: Vec::new(),
            telemetry: None,
        });
    }
    Ok(Measurement {
        status: ScenarioStatus::Ok,
        error: None,
        result: Some(probe::merge_results(&finished, sheet)?),
        load_work: merge_load_work(&finished)?,
        telemetry: None,
    })
}

/// Merges the load work of finished repeats, part by part: amounts add up,
/// the rate is the total over the total measured time, CPU and device
/// figures are means weighted by each repeat's measured time.
fn merge_load_work(finished: &[Finished]) -> Result<Vec<LoadWork>, MergeError> {
    let first = finished[0].load_work;
    let names = |work: &[LoadWork]| {
        work.iter()
            .map(|w| w.load.as_str())
            .collect::<Vec<_>>()
            .join("+")
    };
    if let Some(odd) = finished.iter().find(|f| names(f.load_work) != names(first)) {
        return Err(MergeError::disagrees(
            odd.repeat,
            format!(
                "its load parts ({}) are not the first repeat's ({})",
                names(odd.load_work),
                names(first)
            ),
        ));
    }
    let total_s: f64 = finished.iter().map(|f| f.result.measured_s()).sum();
    let per_second = |value: f64| if total_s > 0.0 { value / total_s } else { 0.0 };
    let merged = first
        .iter()
        .enumerate()
        .map(|(part, w)| {
            let parts = || {
                finished
                    .iter()
                    .map(move |f| (&f.load_work[part], f.result.measured_s()))
            };
            let weighted = |figure: fn(&LoadWork) -> f64| {
                per_second(parts().map(|(w, seconds)| figure(w) * seconds).sum())
            };
            // Missing when any repeat's is.
            let weighted_known = |figure: fn(&LoadWork) -> Option<f64>| {
                parts()
                    .map(|(w, seconds)| Some(figure(w)? * seconds))
                    .sum::<Option<f64>>()
                    .map(per_second)
            };
            let amount = parts().map(|(w, _)| w.amount).sum();
            let requests =
                RequestLatencies::merge(parts().filter_map(|(w, _)| w.requests.as_ref())).map_err(
                    |e| MergeError::disagrees(finished[finished.len() - 1].repeat, e.to_string()),
                )?;
            Ok(LoadWork {
                load: w.load.clone(),
                unit: w.unit.clone(),
                amount,
                rate_per_s: per_second(amount),
                cpu_pct: weighted(|w| w.cpu_pct),
                cpu_pct_lower_bound: parts().any(|(w, _)| w.cpu_pct_lower_bound),
                device_read_mb_s: weighted_known(|w| w.device_read_mb_s),
                device_write_mb_s: weighted_known(|w| w.device_write_mb_s),
                processes: w.processes,
                usage: Vec::new(),
                cpus: w.cpus.clone(),
                requests,
                batch_units: Vec::new(),
                tasks: Vec::new(),
            })
        })
        .collect::<Result<_, MergeError>>()?;
    Ok(merged)
}

impl ScenarioResult {
    /// The scenario `probe` under `load` measured by `measurements`, in the
    /// order they ran, with the figures `sheet` declares: a single
    /// measurement is the outcome itself; two or more are kept as the
    /// repeats, and the outcome is their merge. The confidence intervals
    /// are those of all the measurements.
    pub fn from_measurements(
        probe: String,
        load: String,
        measurements: Vec<Measurement>,
        sheet: &ProbeSheet,
    ) -> Result<Self, MergeError> {
        let (outcome, repeats) = match <[Measurement; 1]>::try_from(measurements) {
            Ok([only]) => return Ok(Self::single(probe, load, only, sheet)),
            Err(all) => (merge_measurements(&all, sheet)?, all),
        };
        Ok(Self::with_intervals(probe, load, outcome, repeats, sheet))
    }

    /// The scenario `probe` under `load` measured once, by `measurement`.
    pub fn single(
        probe: String,
        load: String,
        measurement: Measurement,
        sheet: &ProbeSheet,
    ) -> Self {
        Self::with_intervals(probe, load, measurement, Vec::new(), sheet)
    }

    fn with_intervals(
        probe: String,
        load: String,
        outcome: Measurement,
        repeats: Vec<Measurement>,
        sheet: &ProbeSheet,
    ) -> Self {
        let mut scenario = Self {
            probe,
            load,
            outcome,
            repeats,
            intervals: None,
        };
        scenario.intervals = intervals(&scenario, sheet);
        scenario
    }

    /// Every measurement of the scenario in the order they ran: its repeats,
    /// or its outcome when it was measured once.
    pub fn measurements(&self) -> &[Measurement] {
        if self.repeats.is_empty() {
            std::slice::from_ref(&self.outcome)
        } else {
            &self.repeats
        }
    }

    /// Adds `measurement` as the scenario's latest repeat and merges again;
    /// on an error the scenario is left as it was.
    pub fn add_repeat(
        &mut self,
        measurement: Measurement,
        sheet: &ProbeSheet,
    ) -> Result<(), MergeError> {
        let mut all = self.measurements().to_vec();
        all.push(measurement);
        *self = Self::from_measurements(self.probe.clone(), self.load.clone(), all, sheet)?;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::figures::series::SeriesPoint;
    use crate::figures::{LatencySeries, Tally};
    use crate::measure::latency::LatencyHistogram;
    use crate::measure::sched::SchedApplied;

    /// Latency histogram of `values_us`.
    pub fn histogram(values_us: &[u64]) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for &v in values_us {
            h.record_ns(v * 1_000);
        }
        h
    }

    /// The declarations of a periodic probe (`audio`'s).
    pub fn sheet() -> ProbeSheet {
        crate::probe::sheet_of("audio").unwrap()
    }

    /// A periodic probe's figures over `measured_s` with latencies
    /// `values_us`, `dropped` frames dropped and `met` deadlines met; late
    /// frames finished 100 µs late, and every frame got the CPU it wanted.
    pub fn periodic(measured_s: f64, values_us: &[u64], dropped: u64, met: u64) -> ProbeResult {
        let executed = values_us.len() as f64;
        let late = executed - met as f64;
        let sum_ns = values_us.iter().sum::<u64>() * 1_000;
        let tally = Tally::default()
            .with_samples("latency", &histogram(values_us), sum_ns)
            .with_count("measured_s", measured_s)
            .with_count("executed", executed)
            .with_count("dropped", dropped as f64)
            .with_count("periods", executed + dropped as f64)
            .with_count("met", met as f64)
            .with_count("late_frames", late)
            .with_count("late_sum_us", 100.0 * late)
            .with_maximum("late_max_us", 100.0)
            .with_count("cpu_wanted_ms", executed + dropped as f64)
            .with_count("cpu_received_ms", executed)
            .with_count("cpu_used_ms", executed)
            .with_count("cpu_wanted_run_ms", executed);
        ProbeResult::new(&sheet(), tally, Vec::new(), SchedApplied::for_tests())
    }

    /// The merge of `measurements` of a periodic probe.
    pub fn merge(measurements: &[Measurement]) -> Result<Measurement, MergeError> {
        merge_measurements(measurements, &sheet())
    }

    /// Work of a `burn` load: `amount` units, `cpu_pct` % CPU over `seconds`.
    pub fn burn(amount: f64, cpu_pct: f64, seconds: f64) -> LoadWork {
        LoadWork {
            load: "burn".into(),
            unit: "Mloop".into(),
            amount,
            rate_per_s: amount / seconds,
            cpu_pct,
            cpu_pct_lower_bound: false,
            device_read_mb_s: Some(0.0),
            device_write_mb_s: Some(0.0),
            processes: 4,
            usage: Vec::new(),
            cpus: None,
            requests: None,
            batch_units: Vec::new(),
            tasks: Vec::new(),
        }
    }

    /// A successful measurement of `result` under `load_work`.
    pub fn ok(result: ProbeResult, load_work: Vec<LoadWork>) -> Measurement {
        Measurement {
            status: ScenarioStatus::Ok,
            error: None,
            result: Some(result),
            load_work,
            telemetry: None,
        }
    }

    /// A failed measurement.
    pub fn failed(reason: &str) -> Measurement {
        Measurement {
            status: ScenarioStatus::Failed,
            error: Some(reason.into()),
            result: None,
            load_work: Vec::new(),
            telemetry: None,
        }
    }

    #[test]
    fn failed_repeats_are_kept_but_not_merged() {
        let good = ok(periodic(1.0, &[10, 20, 30], 1, 2), vec![]);
        let merged = merge(&[failed("first"), good.clone(), failed("third")]).unwrap();
        assert_eq!(merged.status, ScenarioStatus::Ok);
        assert_eq!(merged.error, None);
        let result = merged.result.unwrap();
        let good = good.result.unwrap();
        assert_eq!(result.figures, good.figures);
        assert_eq!(result.tally, good.tally);
    }

    #[test]
    fn all_failed_fails_with_the_first_error() {
        let merged = merge(&[failed("first"), failed("second")]).unwrap();
        assert_eq!(merged.status, ScenarioStatus::Failed);
        assert_eq!(merged.error.as_deref(), Some("first"));
        assert!(merged.result.is_none());
    }

    #[test]
    fn ok_without_figures_is_refused() {
        let mut odd = ok(periodic(1.0, &[10], 0, 1), vec![]);
        odd.result = None;
        let err = merge(&[ok(periodic(1.0, &[10], 0, 1), vec![]), odd]).unwrap_err();
        assert_eq!(err.repeat, 1);
        assert!(err.to_string().starts_with("repeat 2: "), "{err}");
    }

    #[test]
    fn load_work_adds_amounts_and_weights_rates_by_time() {
        let a = ok(periodic(1.0, &[10], 0, 1), vec![burn(100.0, 150.0, 1.0)]);
        let b = ok(periodic(3.0, &[10], 0, 1), vec![burn(900.0, 190.0, 3.0)]);
        let merged = merge(&[a, b]).unwrap();
        let work = &merged.load_work[0];
        assert_eq!(work.amount, 1000.0);
        assert_eq!(work.rate_per_s, 250.0);
        assert_eq!(work.cpu_pct, 180.0);
        assert_eq!(work.processes, 4);
        assert!(merged.telemetry.is_none());
    }

    #[test]
    fn different_load_parts_are_refused() {
        let a = ok(periodic(1.0, &[10], 0, 1), vec![burn(1.0, 1.0, 1.0)]);
        let b = ok(periodic(1.0, &[10], 0, 1), vec![]);
        let err = merge(&[a, b]).unwrap_err().to_string();
        assert_eq!(
            err,
            "repeat 2: its load parts () are not the first repeat's (burn)"
        );
    }

    #[test]
    fn repeats_keep_their_own_series_and_their_merge_has_none() {
        let with_series = |latency_us: f64| {
            let point = SeriesPoint {
                t_s: 0.0,
                count: 1,
                min_us: latency_us,
                mean_us: latency_us,
                max_us: latency_us,
            };
            let series = LatencySeries {
                ideal_us: None,
                points: vec![point],
            };
            ok(
                ProbeResult {
                    series: Some(series),
                    ..periodic(1.0, &[10], 0, 1)
                },
                vec![],
            )
        };
        let repeats = vec![with_series(10.0), with_series(20.0)];
        let scenario = ScenarioResult::from_measurements(
            "audio".into(),
            "none".into(),
            repeats.clone(),
            &sheet(),
        )
        .unwrap();
        assert_eq!(scenario.measurements(), repeats.as_slice());
        assert_eq!(scenario.outcome.result.unwrap().series, None);
    }

    #[test]
    fn one_measurement_is_its_own_outcome_and_repeats_accumulate() {
        let one = ok(periodic(1.0, &[10], 0, 1), vec![]);
        let sheet = sheet();
        let mut scenario = ScenarioResult::from_measurements(
            "audio".into(),
            "none".into(),
            vec![one.clone()],
            &sheet,
        )
        .unwrap();
        assert_eq!(scenario.outcome, one);
        assert!(scenario.repeats.is_empty());
        assert_eq!(scenario.measurements(), std::slice::from_ref(&one));
        scenario.add_repeat(failed("oops"), &sheet).unwrap();
        scenario
            .add_repeat(ok(periodic(1.0, &[20, 30], 0, 2), vec![]), &sheet)
            .unwrap();
        assert_eq!(scenario.repeats.len(), 3);
        assert_eq!(scenario.measurements().len(), 3);
        assert_eq!(
            scenario.outcome.result.unwrap().figures["frames_executed"],
            3.0
        );
    }
}
