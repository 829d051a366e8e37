//! The run document of `feelbench run`: where it goes, how it starts (the
//! system, the environment and the settings, before anything is measured)
//! and how it ends (the finish time and the warnings only the results tell).

use super::config::{OutputChoice, RunConfig};
use super::work::PreparedWork;
use crate::document::methods::Methods;
use crate::document::schema::{
    RunDocument, RunInfo, RunSettingsRecord, ToolInfo, Warning, WarningCode, SCHEMA,
};
use crate::figures::explain::ExplainStatus;
use crate::measure::sched::MemoryPolicy;
use crate::sim::SettingsGroup;
use crate::system::environment::Environment;
use crate::system::SystemInfo;
use std::path::PathBuf;
use std::time::SystemTime;

/// How far the CPU used per frame may stray from the CPU it wanted (as a
/// fraction) on an idle system before the run warns.
const CALIBRATION_DRIFT_LIMIT: f64 = 0.05;

/// The file the run is written to, if any: the default is named after the
/// kernel and the start time.
pub fn output_path(
    choice: &OutputChoice,
    system: &SystemInfo,
    started: SystemTime,
) -> Option<PathBuf> {
    match choice {
        OutputChoice::ConsoleOnly => None,
        OutputChoice::File(path) => Some(path.clone()),
        OutputChoice::Default => Some(PathBuf::from(format!(
            "feelbench-{}-{}.json",
            system.kernel_release,
            compact_time(started)
        ))),
    }
}

/// `2026-11-23T03:26:00Z` → `20261123-032600`.
pub fn compact_time(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time)
        .to_string()
        .chars()
        .filter_map(|c| match c {
            'T' => Some('-'),
            c if c.is_ascii_digit() => Some(c),
            _ => None,
        })
        .collect()
}

/// The document of a run started at `started`, with no scenario yet.
pub fn start(
    config: &RunConfig,
    work: &PreparedWork,
    system: SystemInfo,
    environment: Environment,
    started: SystemTime,
) -> RunDocument {
    RunDocument {
        schema: SCHEMA.to_string(),
        tool: ToolInfo::this_build(),
        run: RunInfo {
            id: format!("{}-{}", compact_time(started), std::process::id()),
            started: humantime::format_rfc3339_seconds(started).to_string(),
            finished: None,
            interrupted: false,
            comment: config.output.comment.clone(),
            // A store's URL may hold a password: the document keeps none.
            command_line: std::env::args()
                .map(|arg| crate::store::location::without_password(&arg))
                .collect(),
            trace: None,
        },
        system,
        environment,
        settings: settings_record(config, work),
        suite: config.suite.clone(),
        methods: Some(methods(work)),
        probes: work
            .scenarios
            .iter()
            .map(|s| (s.probe.name.to_string(), s.probe.sheet_for(&work.params)))
            .collect(),
        warnings: Vec::new(),
        scenarios: Vec::new(),
    }
}

/// The method version of every probe and load of the run's scenarios.
fn methods(work: &PreparedWork) -> Methods {
    let mut methods = Methods::default();
    for scenario in &work.scenarios {
        let probe = scenario.probe;
        methods.probes.insert(probe.name.to_string(), probe.method);
        for part in &scenario.load.parts {
            methods
                .loads
                .insert(part.def.name.to_string(), part.def.method);
        }
    }
    methods
}

/// The settings as the document records them.
fn settings_record(config: &RunConfig, work: &PreparedWork) -> RunSettingsRecord {
    let params = &work.params;
    let uses = |group: SettingsGroup| {
        work.scenarios.iter().any(|s| {
            s.probe.uses.contains(&group)
                || s.load.parts.iter().any(|p| p.def.uses.contains(&group))
        })
    };
    RunSettingsRecord {
        duration_s: config.timing.duration_ns as f64 / 1e9,
        warmup_s: config.timing.warmup_ns as f64 / 1e9,
        loops_per_ms: params.loops_per_ms,
        calibration: work.calibration.clone(),
        probe_sched: config.probe_sched,
        load_nice: config.load_nice,
        burn_processes: params.burn_processes,
        custom: params.custom,
        file_bytes: params.file_bytes,
        mem_bytes: params.mem_bytes,
        mem_limit_bytes: config.mem_limit_bytes,
        swap_bytes: config.swap_file_bytes,
        repeats: config.timing.repeats,
        cpu_dma_latency_us: config.cpu_dma_latency_us,
        precision_pct: config.timing.precision.map(|goal| goal.pct),
        max_time_s: config
            .timing
            .precision
            .map(|goal| goal.max_time_ns as f64 / 1e9),
        probe_cpus: config.placement.probe_cpus.clone(),
        probe_session: config.placement.probe_session,
        load_cpus: config.placement.load_cpus.clone(),
        load_cpu_weight: config.placement.load_cpu_weight,
        response: uses(SettingsGroup::Response).then(|| params.response.clone()),
        job: uses(SettingsGroup::Job).then(|| params.job.clone()),
        fragment: uses(SettingsGroup::Fragment).then_some(params.fragment),
        game: uses(SettingsGroup::Game).then_some(params.game),
        io: uses(SettingsGroup::Io).then(|| params.io.clone()),
        micro: uses(SettingsGroup::Micro).then_some(params.micro),
        rtapp: uses(SettingsGroup::Rtapp).then(|| params.rtapp.clone()),
        late_split: params.late_split,
    }
}

/// Marks the run finished and adds the warnings its results call for.
pub fn finish(run: &mut RunDocument) {
    run.run.finished = Some(humantime::format_rfc3339_seconds(SystemTime::now()).to_string());
    run.warnings.extend(memory_not_locked(run));
    run.warnings.extend(calibration_drift(run));
    run.warnings.extend(no_task_clock(run));
    run.warnings.extend(parts_left_out(run));
    run.warnings.extend(explain_notices(run));
    run.warnings.extend(late_split_notices(run));
}

/// A warning when the threads could not read their task clock, so their
/// frames' work and late split read their CPU clock instead.
fn no_task_clock(run: &RunDocument) -> Option<Warning> {
    (run.environment.task_clock == Some(false)).then(|| {
        Warning::new(
            WarningCode::NoTaskClock,
            "perf's task clock is not permitted here (perf_event_paranoid above 2 without \
             CAP_PERFMON): the probes' frames did their work to the thread's CPU clock, and the \
             late split read it, which makes the scheduler account the thread at each reading; \
             under CPU load that can lower the wake-up latency measured (lower \
             kernel.perf_event_paranoid to 2, or grant CAP_PERFMON, to measure as elsewhere)"
                .to_string(),
        )
    })
}

/// A warning for each different notice of the late split (a part it could
/// not tell apart here: the blocked time's kinds without root, run-queue
/// wait without schedstat), once.
fn late_split_notices(run: &RunDocument) -> Vec<Warning> {
    let mut notices: Vec<&String> = Vec::new();
    let all = run
        .scenarios
        .iter()
        .filter_map(|s| s.outcome.result.as_ref()?.late.as_ref())
        .flat_map(|late| &late.notices);
    for notice in all {
        if !notices.contains(&notice) {
            notices.push(notice);
        }
    }
    notices
        .into_iter()
        .map(|n| Warning::new(WarningCode::LateSplitPartial, n.clone()))
        .collect()
}

/// A warning for each different notice of `--explain` (unavailable, off
/// for its cost, stopped part-way), once.
fn explain_notices(run: &RunDocument) -> Vec<Warning> {
    let mut notices: Vec<String> = Vec::new();
    let explained = run.scenarios.iter().filter_map(|s| {
        Some((
            s,
            s.outcome.result.as_ref()?.late.as_ref()?.explain.as_ref()?,
        ))
    });
    for (s, summary) in explained {
        let Some(notice) = &summary.notice else {
            continue;
        };
        // Not root or no perf events: the same for every scenario.
        let line =
            if summary.status == ExplainStatus::Off && summary.cost.switch_rate_per_s.is_none() {
                notice.clone()
            } else {
                format!("{} under {}: {notice}", s.probe, s.load)
            };
        if !notices.contains(&line) {
            notices.push(line);
        }
    }
    notices
        .into_iter()
        .map(|n| Warning::new(WarningCode::ExplainUnavailable, n))
        .collect()
}

/// A warning for each part a probe left out in a scenario (its figures
/// are missing), with the reason.
fn parts_left_out(run: &RunDocument) -> Vec<Warning> {
    run.scenarios
        .iter()
        .filter_map(|s| Some((s, s.outcome.result.as_ref()?)))
        .flat_map(|(s, result)| {
            result.left_out.iter().map(|reason| {
                Warning::new(
                    WarningCode::PartLeftOut,
                    format!("{} under {}: left out {reason}", s.probe, s.load),
                )
            })
        })
        .collect()
}

/// A warning when a probe that locks its memory could not (those that
/// share it on purpose do not count).
fn memory_not_locked(run: &RunDocument) -> Option<Warning> {
    let unlocked = run
        .scenarios
        .iter()
        .filter_map(|s| s.outcome.result.as_ref())
        .any(|r| r.sched.memory == MemoryPolicy::Locked && !r.sched.memory_locked);
    unlocked.then(|| Warning::new(
        WarningCode::MemoryNotLocked,
        "the probe could not lock its memory (mlockall): page faults may show as latency; raise RLIMIT_MEMLOCK (ulimit -l) or run as root".to_string(),
    ))
}

/// A warning when, with no load, frames used more CPU time than they wanted.
/// Work runs until the thread's CPU time says it is done, in chunks sized by the
/// calibration, so only chunks that overshot can do that: the work loop ran
/// at less than about half its calibrated speed.
fn calibration_drift(run: &RunDocument) -> Option<Warning> {
    let worst = run
        .scenarios
        .iter()
        .filter(|s| s.load == "none")
        .filter_map(|s| {
            s.outcome
                .result
                .as_ref()?
                .figures
                .get("work_ratio")
                .copied()
        })
        .max_by(|a, b| (a - 1.0).abs().total_cmp(&(b - 1.0).abs()))?;
    ((worst - 1.0).abs() > CALIBRATION_DRIFT_LIMIT).then(|| Warning::new(
        WarningCode::CalibrationDrift,
        format!(
            "on an idle system frames used {:.0} % of the CPU time they wanted: the work loop ran far slower than calibrated, so its chunks overshot; run feelbench calibrate (or -b)",
            worst * 100.0
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::fixture;

    #[test]
    fn a_run_without_the_task_clock_warns_that_frames_read_the_cpu_clock() {
        let mut run = fixture::run();
        for (task_clock, warned) in [(Some(false), true), (Some(true), false), (None, false)] {
            run.environment.task_clock = task_clock;
            let warning = no_task_clock(&run);
            assert_eq!(warning.is_some(), warned, "{task_clock:?}");
            if let Some(warning) = warning {
                assert_eq!(warning.code, WarningCode::NoTaskClock);
                assert!(warning.message.contains("perf_event_paranoid"));
            }
        }
    }
}
