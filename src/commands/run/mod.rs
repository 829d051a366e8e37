//! `feelbench run`: check the system, set up, make the work complete
//! (sizes and calibration), then run every scenario in order (`--repeat`
//! times, in rounds: see [`rounds`]; or, with `--precision`, until precise:
//! see [`adaptive`]), saying each scenario's figures on stderr as it
//! finishes and rewriting the run file after each measurement, so an
//! interrupted run keeps what finished; at the end stdout gets the answer
//! first, exactly what `feelbench report` prints of the run (the overview,
//! then the tables). Each phase is a function of its own module.

mod adaptive;
mod config;
pub(crate) mod document;
mod preflight;
mod rounds;
mod setup;
mod work;

pub use config::{
    OutputChoice, OutputSettings, Placement, PrecisionGoal, Preflight, ResponseSettings, RunConfig,
    Timing, WorkSettings,
};
pub use document::compact_time;
pub use preflight::check_privileges;
pub(crate) use setup::hold_delayacct;

use crate::document::file::write_run;
use crate::document::schema::{RunDocument, ScenarioResult, ScenarioStatus, Warning, WarningCode};
use crate::engine::interrupt::Interrupt;
use crate::engine::scenario::ScenarioSettings;
use crate::exit::{ExitCode, UsageError};
use crate::progress::Progress;
use crate::report::table;
use crate::store::StoreLocation;
use crate::system::blockdev;
use crate::system::cgroup::Cgroup;
use crate::system::process_tree;
use crate::system::SystemInfo;
use crate::trace::ScenarioTrace;
use anyhow::Context as _;
use rounds::Rounds;
use setup::Setup;
use std::cell::RefCell;
use std::path::Path;
use std::time::SystemTime;
use work::PreparedWork;

/// Runs the scenarios of `config` on the machine `system` describes.
pub fn run(config: RunConfig, system: SystemInfo) -> anyhow::Result<ExitCode> {
    if let Some(path) = &config.output.trace {
        // Checked first, so a bad path fails before anything is said.
        crate::trace::check_writable(path).map_err(UsageError::input)?;
    }
    let (mut environment, steal) = preflight::check_system(&config)?;
    let interrupt = Interrupt::install().context("installing signal handlers")?;
    // The orchestrator reaps its orphaned descendants, so what a load starts
    // (a command's children, daemons) stays below feelbench instead of
    // escaping to init.
    process_tree::become_subreaper().context("becoming the subreaper of the loads")?;
    let setup = Setup::make(&config)?;
    setup::note_switches(&mut environment, setup.delayacct.as_ref());
    let work = work::prepare(&config, &system, setup.workspace.dir())?;
    let noise_warning = preflight::noise_check(&config.preflight)?;
    let started = SystemTime::now();
    let output = document::output_path(&config.output.file, &system, started);
    let mut run = document::start(&config, &work, system, environment, started);
    run.warnings.extend(
        suite_warnings(&config)
            .into_iter()
            .chain(work.warnings.iter().cloned())
            .chain(noise_warning),
    );
    // Warnings known before measuring are said now; the rest at the end.
    say(&run.warnings);
    let said_before = run.warnings.len();
    if let Some(path) = &output {
        // Written before measuring, so a bad path fails in the first second.
        write(path, &run)?;
    }
    let traces = RefCell::new(Vec::new());
    let context = Measuring {
        config: &config,
        work: &work,
        setup: &setup,
        interrupt: &interrupt,
        output: output.as_deref(),
        traces: &traces,
    };
    let measured = context.measure(&mut run);
    steal.end(&mut run.environment);
    measured?;
    document::finish(&mut run);
    say(&run.warnings[said_before..]);
    let traced = config
        .output
        .trace
        .as_deref()
        .is_none_or(|path| write_trace(path, &traces.into_inner(), &mut run));
    if let Some(path) = &output {
        write(path, &run)?;
        say!("run written to {}", path.display());
        if let Some(location) = &config.output.store {
            store(location, &run, path);
        }
    }
    if run.run.interrupted {
        let repeated =
            config.scenarios.iter().any(|s| s.repeats > 1) || config.timing.precision.is_some();
        report_interruption(&run, repeated);
    }
    Ok(match exit_code(&run) {
        ExitCode::Success if !traced => ExitCode::Failure,
        code => code,
    })
}

/// Writes the trace of `scenarios` to `path` and records it in `run`;
/// whether it was written. One that cannot be is said in one line, and
/// the run's document is still written.
fn write_trace(path: &Path, scenarios: &[ScenarioTrace], run: &mut RunDocument) -> bool {
    let started = std::time::Instant::now();
    match crate::trace::write(path, &crate::trace::render(scenarios)) {
        Ok(()) => {
            run.run.trace = Some(path.display().to_string());
            say!(
                "trace written to {} ({:.3} s); {}",
                path.display(),
                started.elapsed().as_secs_f64(),
                crate::trace::HOW_TO_OPEN
            );
            true
        }
        Err(error) => {
            say!("error: {error}; the run's measurements are still written");
            false
        }
    }
}

/// Everything the measuring phase works with.
struct Measuring<'a> {
    config: &'a RunConfig,
    work: &'a PreparedWork,
    setup: &'a Setup,
    interrupt: &'a Interrupt,
    output: Option<&'a Path>,
    traces: &'a RefCell<Vec<ScenarioTrace>>,
}

impl Measuring<'_> {
    /// Measures every scenario into `run`, with the progress bar, then
    /// prints what was measured (also when a signal ended it early).
    fn measure(&self, run: &mut RunDocument) -> anyhow::Result<()> {
        let timing = &self.config.timing;
        let settings = ScenarioSettings {
            marker: self.setup.workspace.marker().to_string(),
            duration_ns: timing.duration_ns,
            warmup_ns: timing.warmup_ns,
            params: self.work.params.clone(),
            probe_sched: self.config.probe_sched,
            load_nice: self.config.load_nice,
            load_cgroup_procs: self
                .setup
                .load_cgroups
                .iter()
                .map(Cgroup::procs_file)
                .collect(),
            memory_cgroup_procs: self.setup.memory_cgroup_procs.clone(),
            probe_cpus: self.config.placement.probe_cpus.clone(),
            probe_session: self.config.placement.probe_session,
            load_cpus: self.config.placement.load_cpus.clone(),
            workdir_device: blockdev::device_of(Path::new("/proc"), &self.config.workdir),
            explain: self.config.explain,
            trace: self.config.output.trace.is_some(),
        };
        let rounds = Rounds {
            scenarios: &self.work.scenarios,
            settings: &settings,
            workspace: &self.setup.workspace,
            interrupt: self.interrupt,
            output: self.output,
            traces: self.traces,
        };
        let total = (0..self.work.scenarios.len())
            .map(|index| {
                let measuring_ns = rounds.measuring_time(index).as_nanos() as u64;
                let repeats = self.work.scenarios[index].repeats;
                rounds.scenario_time(index) * timing.most_measurements(repeats, measuring_ns)
            })
            .sum();
        let mut progress = Progress::new(total, self.config.output.quiet);
        match timing.precision {
            Some(goal) => rounds.measure_until_precise(run, &mut progress, goal)?,
            None => rounds.measure(run, &mut progress)?,
        }
        progress.print(&table::render(run, self.config.output.verbose));
        Ok(())
    }
}

/// What a suite left out here: its members that cannot run, and its
/// root-only options when not root (said once, as one warning each).
fn suite_warnings(config: &RunConfig) -> Vec<Warning> {
    let Some(suite) = &config.suite else {
        return Vec::new();
    };
    let root_options = (!suite.root_options_left_out.is_empty()).then(|| {
        format!(
            "suite {}: not root, so without {} (and what needs them)",
            suite.name,
            suite.root_options_left_out.join(" ")
        )
    });
    let members = (!suite.left_out.is_empty()).then(|| {
        format!(
            "suite {}: left out here: {}",
            suite.name,
            suite.left_out.join("; ")
        )
    });
    root_options
        .into_iter()
        .chain(members)
        .map(|m| Warning::new(WarningCode::SuiteMembersLeftOut, m))
        .collect()
}

/// Says `warnings` on stderr.
fn say(warnings: &[Warning]) {
    for warning in warnings {
        say!("warning: {}", warning.message);
    }
}

/// Writes the run to `path`, atomically.
fn write(path: &Path, run: &RunDocument) -> anyhow::Result<()> {
    write_run(path, run).with_context(|| format!("cannot write the run to {}", path.display()))
}

/// Adds the run, written to `path`, to the store at `location`; a store
/// that fails is said in one line and changes nothing else: the file has
/// the run.
fn store(location: &StoreLocation, run: &RunDocument, path: &Path) {
    let started = std::time::Instant::now();
    let stored = std::fs::read(path)
        .map_err(|e| format!("cannot read {} back: {e}", path.display()))
        .and_then(|bytes| super::store::remember(location, run, &bytes).map_err(|e| e.to_string()));
    match stored {
        Ok(said) => say!("{said} ({:.2} s)", started.elapsed().as_secs_f64()),
        Err(error) => say!("warning: run not stored in {location}: {error}"),
    }
}

/// 130 for an interrupted run, 1 when a measurement failed, else 0.
fn exit_code(run: &RunDocument) -> ExitCode {
    let failed = run
        .scenarios
        .iter()
        .flat_map(ScenarioResult::measurements)
        .any(|m| m.status == ScenarioStatus::Failed);
    if run.run.interrupted {
        ExitCode::Interrupted
    } else if failed {
        ExitCode::Failure
    } else {
        ExitCode::Success
    }
}

/// Says what an interrupted run kept (`repeated`: when scenarios were
/// measured more than once).
fn report_interruption(run: &RunDocument, repeated: bool) {
    let scenarios = run.scenarios.len();
    if !repeated {
        say!("interrupted; {scenarios} finished scenario(s) kept, the running one dropped");
    } else {
        let measurements: usize = run.scenarios.iter().map(|s| s.measurements().len()).sum();
        say!(
            "interrupted; {measurements} finished measurement(s) of {scenarios} scenario(s) kept, the running one dropped"
        );
    }
}
