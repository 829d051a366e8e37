//! `rtapp`: an rt-app workload's tasks (`--probe rtapp:SPEC`, a file or a
//! shipped workload), run on threads by `sim::rtapp::exec` for the
//! window, every activation (timer event) measured as rt-app measures it:
//! wake-up latency (wake − expiry, 0 when the thread was already late),
//! slack (expiry − the event's start, negative when late), the start delay
//! (the wake-up latency, or −slack when late: the overview figure, which
//! unlike the wake-up latency grows as deadlines are missed), LISA's
//! performance index (slack / (period − run)) and each phase loop's
//! achieved period.
//!
//! The one probe whose figures depend on its parameters: besides the
//! figures over all tasks, its sheet has a few per task of the workload
//! in the run's parameters (`TASK.wakeup_p99`, ...) and, for a task of
//! several phases, per phase (`TASK.PHASE.wakeup_p99`), so a run stores
//! the sheet of its own file. A workload with a task that never waits is
//! refused: it would spin, with no activation to measure.
//!
//! Its late events (`--late-split`, `--explain`) are the work each thread
//! does after a wake-up: due at the timer's expiry, late when the thread's
//! next timer event began after that timer's expiry (negative slack).

use super::{BuildError, MeasureError, Probe, ProbeDef};
use crate::figures::result::MEASURED_S;
use crate::figures::{
    latency_figures, Better, Column, FigureDef, Formula, LateCauses, Measured, Noticeable,
    OverviewRole, ProbeSheet, Spread, Tally, Unit,
};
use crate::measure::batches::{batch_seconds, BATCHES};
use crate::measure::latency::LatencyHistogram;
use crate::measure::sched::MemoryPolicy;
use crate::measure::window::Window;
use crate::sim::rtapp::exec::record::PhaseRecord;
use crate::sim::rtapp::exec::{Executor, ThreadRecord};
use crate::sim::rtapp::model::{Task, Workload};
use crate::sim::{SettingsGroup, SimError, WorkParams};
use std::path::Path;

/// Registry entry.
pub const DEF: ProbeDef = ProbeDef {
    name: "rtapp",
    summary:
        "an rt-app workload's tasks (--probe rtapp:FILE): wake-up latency and slack per activation",
    method: 1,
    sheet,
    build: |params| {
        let workload = measurable(params)?;
        Ok(Box::new(RtappProbe {
            tasks: workload.tasks.iter().map(TaskNames::of).collect(),
            executor: Executor::new(workload, params.loops_per_ms, params.late_split)
                .logging(params.trace_events),
        }))
    },
    default: |_| false,
    uses: &[SettingsGroup::Rtapp],
    pace: super::Pace::Duration,
    disk_bytes: |_| 0,
    memory: MemoryPolicy::Locked,
    run_figure: is_task_figure,
};

/// Wake-up latency of each activation.
const WAKEUP: &str = "wakeup";
/// Start delay of each activation: its wake-up latency, or how late it
/// began when late.
const START_DELAY: &str = "start_delay";
/// How late each late activation began (−slack).
const OVERRUN: &str = "overrun";
/// The slack of the other activations.
const SLACK: &str = "slack";
const ACTIVATIONS: &str = "activations";
const NEGATIVE: &str = "negative";
const SLACK_SUM_US: &str = "slack_sum_us";
const PERF_SUM: &str = "perf_sum";
const PERF_COUNT: &str = "perf_count";
const PERIOD_SUM_US: &str = "period_sum_us";
const PERIODS: &str = "periods";
const LOOPS: &str = "loops";

/// The rule an activation's work is late by.
const LATE_RULE: &str = "its work ended after the next timer expiry (negative slack)";

/// A task's name and, when it has several phases, theirs: what its
/// figures are named by.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TaskNames {
    name: String,
    /// Empty for a task of one phase (its figures are the task's).
    phases: Vec<String>,
}

impl TaskNames {
    fn of(task: &Task) -> Self {
        Self {
            name: task.name.clone(),
            phases: match task.phases.len() {
                1 => Vec::new(),
                _ => task.phase_names(),
            },
        }
    }

    /// The prefix of its figures' keys and their label, then each phase's.
    fn prefixes(&self) -> Vec<(String, String)> {
        let task = (format!("{}.", self.name), format!("{}: ", self.name));
        let phases = self.phases.iter().map(|phase| {
            (
                format!("{}.{phase}.", self.name),
                format!("{}, phase {phase}: ", self.name),
            )
        });
        std::iter::once(task).chain(phases).collect()
    }
}
/// The workload of the run's parameters, if the probe can measure it.
fn measurable(params: &WorkParams) -> Result<&Workload, BuildError> {
    let workload = params
        .rtapp
        .probe
        .as_ref()
        .ok_or(SimError::NoRtappWorkload("probe"))?;
    match workload.probe_problem() {
        Some(why) => Err(SimError::RtappNotMeasurable(why).into()),
        None => Ok(workload),
    }
}

/// The figures over all tasks, then a few per task of the run's workload.
fn sheet(summary: &str, params: Option<&WorkParams>) -> ProbeSheet {
    let mut figures: Vec<FigureDef> = latency_figures(WAKEUP)
        .into_iter()
        .map(|f| FigureDef {
            label: f.label.replace("latency", "wake-up latency"),
            field: f.field.replace("latency", "wakeup"),
            ..f
        })
        .collect();
    figures.extend(start_delay_figures());
    figures.extend(activation_figures("", "", true));
    let tasks = params.and_then(|p| p.rtapp.probe.as_ref());
    for task in tasks.iter().flat_map(|w| &w.tasks) {
        for (prefix, label) in TaskNames::of(task).prefixes() {
            figures.extend(task_figures(&prefix, &label));
        }
    }
    let columns = vec![
        Column {
            missing: "no activations".to_string(),
            ..Column::new("Wake-up +/- SD (ms)", &["mean", "sd"], 22)
        },
        Column::new("p99 (ms)", &["p99"], 10),
        Column::new("Slack<0 %", &["negative_slack_pct"], 10),
        Column::new("Perf index", &["perf_index"], 10),
    ];
    ProbeSheet {
        summary: summary.to_string(),
        own_pace: false,
        columns,
        figures,
    }
    .with_overview("start_delay_mean", OverviewRole::ratio("later"))
    .with_noticeable(
        "negative_slack_pct",
        Noticeable::new(
            0.0,
            1.0,
            "an activation with negative slack ended after its period, rt-app's missed \
             deadline: any is noticed; poor from 1 % of activations (feelbench's choice, as \
             audio's)",
        ),
    )
}

/// The start delay's mean (the overview figure: unlike the wake-up
/// latency, which counts a late activation as 0, it grows with every
/// deadline missed) and p99.
fn start_delay_figures() -> Vec<FigureDef> {
    let figure = |name: &str, label: &str, formula: Formula| {
        FigureDef::new(
            &format!("start_delay_{name}"),
            &format!("start_delay_{name}_us"),
            &format!("start delay {label} (ms; the wake-up latency, or how late a late activation began)"),
            Unit::Micros,
            Better::Lower,
            formula,
        )
    };
    let samples = || START_DELAY.to_string();
    vec![
        figure("mean", "mean", Formula::Mean { samples: samples() })
            .spread(Spread::SubWindows)
            .headline()
            .compared(),
        figure(
            "p99",
            "p99",
            Formula::Quantile {
                samples: samples(),
                q: 0.99,
            },
        ),
    ]
}

/// The figures of a task or phase whose keys begin with `prefix`
/// (`TASK.`, `TASK.PHASE.`) and labels with `label`.
fn task_figures(prefix: &str, label: &str) -> Vec<FigureDef> {
    let mut figures = task_latency_figures(prefix, label);
    figures.extend(activation_figures(prefix, label, false));
    figures
}

/// Whether `key` is a figure this probe declares for a task or a phase of
/// its workload (`TASK.wakeup_p99`, `TASK.PHASE.wakeup_p99`): such keys
/// are in a run's stored sheet, not in the registry's.
fn is_task_figure(key: &str) -> bool {
    key.rsplit_once('.').is_some_and(|(owner, _)| {
        !owner.is_empty()
            && task_figures(&format!("{owner}."), "")
                .iter()
                .any(|f| f.key == key)
    })
}

/// A task's or phase's wake-up latency p50 and p99 (`TASK.wakeup_p50`).
fn task_latency_figures(prefix: &str, label: &str) -> Vec<FigureDef> {
    let samples = format!("{prefix}{WAKEUP}");
    [("p50", 0.5), ("p99", 0.99)]
        .into_iter()
        .map(|(name, q)| {
            FigureDef::new(
                &format!("{prefix}wakeup_{name}"),
                &format!("{prefix}wakeup_{name}_us"),
                &format!("{label}wake-up latency {name} (ms)"),
                Unit::Micros,
                Better::Lower,
                Formula::Quantile {
                    samples: samples.clone(),
                    q,
                },
            )
        })
        .collect()
}

/// Activations, negative slack, slack, period and performance index of
/// the counts named with `prefix`; `all`: the figures over all tasks
/// (compared, with their sub-window spread), else a task's few.
fn activation_figures(prefix: &str, label: &str, all: bool) -> Vec<FigureDef> {
    let n = |name: &str| format!("{prefix}{name}");
    let ratio = |num: &str, den: &str, scale: f64| Formula::Ratio {
        num: n(num),
        den: n(den),
        scale,
    };
    let negative = FigureDef::new(
        &n("negative_slack_pct"),
        &n("negative_slack_pct"),
        &format!("{label}activations with negative slack %"),
        Unit::Percent,
        Better::Lower,
        ratio(NEGATIVE, ACTIVATIONS, 100.0),
    )
    .at_most(100.0);
    let perf = FigureDef::new(
        &n("perf_index"),
        &n("perf_index"),
        &format!("{label}performance index (LISA: slack / (period − run))"),
        Unit::Ratio,
        Better::Higher,
        ratio(PERF_SUM, PERF_COUNT, 1.0),
    );
    let mut figures = vec![
        FigureDef::new(
            &n(ACTIVATIONS),
            &n(ACTIVATIONS),
            &format!("{label}activations"),
            Unit::Count,
            Better::Higher,
            Formula::Total {
                count: n(ACTIVATIONS),
            },
        ),
        FigureDef::new(
            &n("period_mean"),
            &n("period_mean_us"),
            &format!("{label}achieved period mean (ms)"),
            Unit::Micros,
            Better::Lower,
            ratio(PERIOD_SUM_US, PERIODS, 1.0),
        ),
    ];
    let tightest = slack_quantile(prefix, label, "p1", 0.01);
    if !all {
        figures.extend([negative, perf, tightest]);
        return figures;
    }
    figures.extend([
        negative.spread(Spread::SubWindows).compared(),
        perf.compared(),
        slack_quantile(prefix, label, "p50", 0.5),
        tightest,
        FigureDef::new(
            "slack_mean",
            "slack_mean_us",
            "slack mean (ms; negative when late)",
            Unit::Micros,
            Better::Higher,
            ratio(SLACK_SUM_US, ACTIVATIONS, 1.0),
        ),
        FigureDef::new(
            "overrun_p99",
            "overrun_p99_us",
            "how late the late activations began, p99 (ms)",
            Unit::Micros,
            Better::Lower,
            Formula::Quantile {
                samples: OVERRUN.to_string(),
                q: 0.99,
            },
        ),
        FigureDef::new(
            "phase_loops",
            "phase_loops",
            "phase loops begun",
            Unit::Count,
            Better::Higher,
            Formula::Total {
                count: LOOPS.to_string(),
            },
        ),
    ]);
    figures
}

struct RtappProbe {
    tasks: Vec<TaskNames>,
    executor: Executor,
}

impl Probe for RtappProbe {
    fn measure(self: Box<Self>, window: Window, _dir: &Path) -> Result<Measured, MeasureError> {
        let records = self.executor.run(window).map_err(|e| MeasureError::Io {
            what: "iorun cannot open /dev/null for writing (rt-app's io_device)",
            error: e.0,
        })?;
        let mut measured = tallies(&records, &self.tasks, window);
        measured.left_out = records
            .iter()
            .filter_map(|r| {
                let why = r.failure.as_ref()?;
                Some(format!("task {}: {why}", self.tasks[r.task].name))
            })
            .collect();
        measured.left_out.dedup();
        measured.late = late_causes(&records);
        Ok(measured)
    }
}

/// Why the activations' work was late, over every thread that split it;
/// `None` when none did.
fn late_causes(records: &[ThreadRecord]) -> Option<LateCauses> {
    let each: Vec<LateCauses> = records
        .iter()
        .filter_map(|r| LateCauses::of_splitting(&r.splitting, LATE_RULE))
        .collect();
    if each.is_empty() {
        return None;
    }
    LateCauses::merged(&each.iter().collect::<Vec<_>>()).ok()
}

/// The counts of `records` (all of them, each task's under `TASK.` and
/// each phase's of a task of several under `TASK.PHASE.`), over `window`.
fn tallies(records: &[ThreadRecord], tasks: &[TaskNames], window: Window) -> Measured {
    let measured_s = (window.end_ns - window.start_ns) as f64 / 1e9;
    let all_phases = records.iter().flat_map(|r| &r.phases);
    let mut tally = counts(all_phases, "").with_count(MEASURED_S, measured_s);
    for (index, task) in tasks.iter().enumerate() {
        let of_task = || records.iter().filter(move |r| r.task == index);
        let prefixes = task.prefixes();
        let (task_prefix, _) = &prefixes[0];
        tally = merge_into(
            tally,
            counts(of_task().flat_map(|r| &r.phases), task_prefix),
        );
        for (phase, (prefix, _)) in prefixes[1..].iter().enumerate() {
            tally = merge_into(tally, counts(of_task().map(|r| &r.phases[phase]), prefix));
        }
    }
    let seconds = batch_seconds(window);
    let batches = (0..BATCHES)
        .map(|b| {
            let mut wakeup = LatencyHistogram::new();
            let mut start_delay = LatencyHistogram::new();
            let (mut sum_ns, mut start_sum_ns, mut negative) = (0, 0, 0);
            for record in records {
                wakeup.add(record.batches[b].histogram());
                sum_ns += record.batches[b].sum_ns();
                start_delay.add(record.start_batches[b].histogram());
                start_sum_ns += record.start_batches[b].sum_ns();
                negative += record.negative_batches[b];
            }
            Tally::default()
                .with_samples(WAKEUP, &wakeup, sum_ns)
                .with_samples(START_DELAY, &start_delay, start_sum_ns)
                .with_count(ACTIVATIONS, wakeup.len() as f64)
                .with_count(NEGATIVE, negative as f64)
                .with_count(MEASURED_S, seconds)
        })
        .collect();
    Measured::of(tally, batches)
}

/// Slack at quantile `q` (`TASK.slack_p1`), late activations below 0.
fn slack_quantile(prefix: &str, label: &str, name: &str, q: f64) -> FigureDef {
    FigureDef::new(
        &format!("{prefix}slack_{name}"),
        &format!("{prefix}slack_{name}_us"),
        &format!("{label}slack {name} (ms; negative when late)"),
        Unit::Micros,
        Better::Higher,
        Formula::SignedQuantile {
            negative: format!("{prefix}{OVERRUN}"),
            positive: format!("{prefix}{SLACK}"),
            q,
        },
    )
}

/// The tally of `records` with every name prefixed by `prefix`.
fn counts<'a>(records: impl Iterator<Item = &'a PhaseRecord>, prefix: &str) -> Tally {
    let mut wakeup = LatencyHistogram::new();
    let mut start_delay = LatencyHistogram::new();
    let mut overrun = LatencyHistogram::new();
    let mut slack = LatencyHistogram::new();
    let (mut wakeup_ns, mut start_delay_ns, mut overrun_ns) = (0, 0, 0);
    let (mut activations, mut negative, mut slack_ns, mut loops) = (0, 0, 0i64, 0);
    let (mut perf_sum, mut perf_count, mut period_ns, mut periods) = (0.0, 0, 0, 0);
    for r in records {
        wakeup.add(&r.wakeup);
        start_delay.add(&r.start_delay);
        overrun.add(&r.overrun);
        slack.add(&r.slack);
        wakeup_ns += r.wakeup_sum_ns;
        start_delay_ns += r.start_delay_sum_ns;
        overrun_ns += r.overrun_sum_ns;
        activations += r.activations;
        negative += r.negative;
        slack_ns += r.slack_sum_ns;
        perf_sum += r.perf_sum;
        perf_count += r.perf_count;
        period_ns += r.period_sum_ns;
        periods += r.periods;
        loops += r.loops;
    }
    let n = |name: &str| format!("{prefix}{name}");
    Tally::default()
        .with_samples(&n(WAKEUP), &wakeup, wakeup_ns)
        .with_samples(&n(START_DELAY), &start_delay, start_delay_ns)
        .with_samples(&n(OVERRUN), &overrun, overrun_ns)
        .with_samples(&n(SLACK), &slack, (slack_ns + overrun_ns as i64) as u64)
        .with_count(&n(ACTIVATIONS), activations as f64)
        .with_count(&n(NEGATIVE), negative as f64)
        .with_count(&n(SLACK_SUM_US), slack_ns as f64 / 1e3)
        .with_count(&n(PERF_SUM), perf_sum)
        .with_count(&n(PERF_COUNT), perf_count as f64)
        .with_count(&n(PERIOD_SUM_US), period_ns as f64 / 1e3)
        .with_count(&n(PERIODS), periods as f64)
        .with_count(&n(LOOPS), loops as f64)
}

/// `into` with every distribution and count of `more` added.
fn merge_into(into: Tally, more: Tally) -> Tally {
    Tally {
        samples: into.samples.into_iter().chain(more.samples).collect(),
        counts: into.counts.into_iter().chain(more.counts).collect(),
        ..into
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::ProbeResult;
    use crate::measure::sched::SchedApplied;
    use crate::sim::rtapp::exec::record::ActivationTimes;
    use crate::sim::rtapp::model::Phase;

    const MS: u64 = 1_000_000;
    const WINDOW: Window = Window::ms(1_000, 2_000);

    /// Task `a`: 4 activations, one 2 ms late, the last in its second
    /// phase; task `b`: 2 on time.
    fn scripted() -> ProbeResult {
        let activation = ActivationTimes::for_tests;
        let mut a = ThreadRecord::new(0, 2, false);
        a.open(WINDOW);
        for (k, slack_ms, wakeup_us) in [(0, 8, 50), (1, 8, 70), (2, -2, 0), (3, 8, 90)] {
            let began = WINDOW.start_ns + k * 10 * MS;
            a.activation(usize::from(k == 3), activation(began, slack_ms, wakeup_us));
        }
        let mut b = ThreadRecord::new(1, 1, false);
        b.open(WINDOW);
        b.activation(0, activation(WINDOW.start_ns, 4, 10));
        b.activation(0, activation(WINDOW.start_ns + 500 * MS, 4, 30));
        let two_phases = Task {
            phases: vec![
                Task::looping("a", 1, vec![]).phases[0].clone(),
                Phase {
                    name: "heavy".to_string(),
                    ..Task::looping("a", 1, vec![]).phases[0].clone()
                },
            ],
            ..Task::looping("a", 1, vec![])
        };
        let tasks = vec![two_phases, Task::looping("b", 1, vec![])];
        let names: Vec<TaskNames> = tasks.iter().map(TaskNames::of).collect();
        let params = WorkParams {
            rtapp: crate::sim::rtapp::settings::RtappSettings {
                probe: Some(Workload::of_tasks(tasks)),
                load: None,
            },
            ..WorkParams::for_tests()
        };
        ProbeResult::of_measured(
            &sheet("scripted", Some(&params)),
            tallies(&[a, b], &names, WINDOW),
            SchedApplied::for_tests(),
        )
    }

    #[test]
    fn figures_over_all_tasks_and_per_task() {
        let f = scripted().figures;
        assert_eq!(f["activations"], 6.0);
        assert_eq!(f["a.activations"], 4.0);
        assert_eq!(f["b.activations"], 2.0);
        assert!((f["negative_slack_pct"] - 100.0 / 6.0).abs() < 1e-9);
        assert_eq!(f["a.negative_slack_pct"], 25.0);
        assert_eq!(f["b.negative_slack_pct"], 0.0);
        // (1 + 1 − 0.25 + 1 + 0.5 + 0.5) / 6
        assert!((f["perf_index"] - 3.75 / 6.0).abs() < 1e-9);
        assert!((f["slack_mean_us"] - 30_000.0 / 6.0).abs() < 1e-9);
        assert!((f["wakeup_mean_us"] - 250.0 / 6.0).abs() < 1e-9);
        assert!((f["b.wakeup_p99_us"] - 30.0).abs() < 0.1);
        assert!((f["overrun_p99_us"] - 2_000.0).abs() < 2.0);
        // Slacks −2, 4, 4, 8, 8, 8 ms.
        assert!((f["slack_p1_us"] + 2_000.0).abs() < 2.0);
        assert!((f["slack_p50_us"] - 4_000.0).abs() < 4.0);
        assert!((f["a.slack_p1_us"] + 2_000.0).abs() < 2.0);
        assert!((f["b.slack_p1_us"] - 4_000.0).abs() < 4.0);
    }

    #[test]
    fn a_task_of_several_phases_has_figures_per_phase() {
        let f = scripted().figures;
        assert_eq!(f["a.main.activations"], 3.0);
        assert_eq!(f["a.heavy.activations"], 1.0);
        assert!((f["a.main.negative_slack_pct"] - 100.0 / 3.0).abs() < 1e-9);
        assert!((f["a.heavy.wakeup_p99_us"] - 90.0).abs() < 0.1);
        assert!(!f.contains_key("b.main.activations"), "b has one phase");
        let params = WorkParams {
            rtapp: crate::sim::rtapp::settings::RtappSettings {
                probe: Some(Workload::of_tasks(vec![Task {
                    phases: vec![Task::looping("a", 1, vec![]).phases[0].clone(); 2],
                    ..Task::looping("a", 1, vec![])
                }])),
                load: None,
            },
            ..WorkParams::for_tests()
        };
        let sheet = sheet("scripted", Some(&params));
        let label = &sheet.figure("a.main#2.wakeup_p99").unwrap().label;
        assert_eq!(label, "a, phase main#2: wake-up latency p99 (ms)");
    }

    #[test]
    fn sub_windows_hold_the_activations_that_began_in_them() {
        let result = scripted();
        let counts: Vec<f64> = result
            .batches
            .iter()
            .map(|b| b.count(ACTIVATIONS))
            .collect();
        assert_eq!(counts.iter().sum::<f64>(), 6.0);
        assert_eq!((counts[0], counts[10]), (5.0, 1.0));
    }

    /// Sub-windows count the negative slacks, so the share has a spread
    /// (it read 0 in every sub-window).
    #[test]
    fn the_negative_slack_share_has_a_value_in_each_sub_window() {
        let result = scripted();
        let sheet = sheet("scripted", None);
        let share = &sheet.figure("negative_slack_pct").unwrap().formula;
        let values: Vec<Option<f64>> = result
            .batches
            .iter()
            .map(|b| crate::figures::Evaluator::new(b).value(share))
            .collect();
        // Sub-window 0 holds 5 activations, the late one among them.
        assert_eq!(values[0], Some(20.0));
        assert_eq!(values[10], Some(0.0));
        assert_eq!(values[5], None, "no activation, no share");
    }

    /// Two threads of one 10 ms task: the first on time with 100 µs
    /// wake-ups, the second the same but its last `late` activations
    /// began 3 ms late (wake-up latency 0, as rt-app counts it).
    fn overview_with(late: u64) -> f64 {
        let mut record = ThreadRecord::new(0, 1, false);
        record.open(WINDOW);
        for k in 0..10 {
            let began = WINDOW.start_ns + k * 10 * MS;
            let times = match k >= 10 - late {
                true => ActivationTimes::for_tests(began, -3, 0),
                false => ActivationTimes::for_tests(began, 8, 100),
            };
            record.activation(0, times);
        }
        let tasks = [Task::looping("t", 1, vec![])];
        let names: Vec<TaskNames> = tasks.iter().map(TaskNames::of).collect();
        let sheet = sheet("scripted", None);
        let overview = sheet
            .figures
            .iter()
            .find(|f| f.overview.is_some())
            .expect("an overview figure");
        let result = ProbeResult::of_measured(
            &sheet,
            tallies(&[record], &names, WINDOW),
            SchedApplied::for_tests(),
        );
        result.figures[&overview.field]
    }

    #[test]
    fn the_overview_figure_grows_as_deadlines_are_missed() {
        let (none, some, most) = (overview_with(0), overview_with(3), overview_with(8));
        assert!((none - 100.0).abs() < 0.5, "{none}");
        assert!(none < some && some < most, "{none} {some} {most}");
    }

    #[test]
    fn task_figure_keys_are_known_by_their_form() {
        assert!(is_task_figure("audio.in.wakeup_p99"));
        assert!(is_task_figure("t.perf_index"));
        assert!(is_task_figure("tab.click.negative_slack_pct"));
        assert!(!is_task_figure("t.p42") && !is_task_figure(".perf_index"));
        assert!(!is_task_figure("perf_index"));
    }

    #[test]
    fn the_sheet_without_a_workload_has_only_the_figures_over_all_tasks() {
        let sheet = DEF.sheet();
        assert!(sheet.figure("p99").is_some() && sheet.figure("perf_index").is_some());
        assert!(sheet.figures.iter().all(|f| !f.key.contains('.')));
    }
}
