//! `feelbench ab`: runs a selection of scenarios under two or more arms, in
//! rounds, and says which feels best. Before anything runs, what a killed
//! experiment left changed is put back and every arm's settings are
//! checked (`arm_settings`); then each round runs each slot (each arm, and
//! the baseline again as the A/A control) in the round's order: its
//! settings applied, one `feelbench run` of the selection (`spawn`), the
//! settings checked as still holding and put back. Settings are put back
//! after every run, on Ctrl-C and on any failure (the `Applied` they are
//! held by puts them back when dropped too). The experiment's document is
//! written after every run; at the end it is analysed
//! (`experiment::analysis`) and rendered (`text`, `html`, JSON).

mod arm_settings;
mod html;
mod report;
mod settings;
mod spawn;
mod text;

pub use report::{report, AbReportSettings};
pub use settings::{AbFormat, AbSettings, ArmRuns};

use crate::document::file::read_run;
use crate::document::schema::RunDocument;
use crate::engine::interrupt::{Interrupt, Interrupted};
use crate::exit::{ExitCode, UsageError};
use crate::experiment::analysis;
use crate::experiment::model::{self, ArmRecord, ExperimentDocument, RunRecord, RunStatus};
use crate::experiment::plan;
use crate::probe;
use crate::progress::Progress;
use crate::system::atomic::write_atomically;
use crate::system::setting::{self, Setting};
use anyhow::Context as _;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// The experiment's document in its directory.
pub const DOCUMENT: &str = "experiment.json";
/// The HTML page in its directory.
const PAGE: &str = "experiment.html";

/// Runs the experiment `settings` asks for.
pub fn run(settings: AbSettings) -> anyhow::Result<ExitCode> {
    // Before the arms' settings are rehearsed, so each finds its original.
    match setting::restore_leftovers() {
        Ok(restored) => {
            for line in restored {
                say!("put back what a killed experiment left: {line}");
            }
        }
        Err(error) => say!("warning: {error}"),
    }
    let arms: Vec<(String, Vec<Setting>)> = settings
        .arms
        .iter()
        .map(|arm| {
            Ok((
                arm.spec.name.clone(),
                arm_settings::of(&arm.spec, &settings.workdir)?,
            ))
        })
        .collect::<Result<_, UsageError>>()?;
    arm_settings::check_runs(&settings.arms)?;
    let originals = arm_settings::check(&arms)?;
    let started = SystemTime::now();
    let id = format!(
        "ab-{}-{}",
        super::run::compact_time(started),
        std::process::id()
    );
    let dir = settings
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("feelbench-{id}")));
    std::fs::create_dir_all(dir.join("runs"))
        .with_context(|| format!("cannot make the experiment's directory {}", dir.display()))?;
    let mut doc = document(&settings, &arms, originals, &id, started);
    write(&dir, &doc)?;
    let interrupt = Interrupt::install().context("installing signal handlers")?;
    let mut experiment = Experiment {
        settings: &settings,
        arms: &arms,
        dir: &dir,
        interrupt: &interrupt,
    };
    let outcome = experiment.rounds(&mut doc);
    doc.interrupted = matches!(&outcome, Err(e) if e.downcast_ref::<Interrupted>().is_some());
    doc.finished = Some(humantime::format_rfc3339_seconds(SystemTime::now()).to_string());
    let runs = read_runs(&dir, &doc);
    doc.analysis = Some(analysis::analyse(&doc, &runs));
    write(&dir, &doc)?;
    let page = html::render(&doc);
    write_atomically(&dir.join(PAGE), page.as_bytes())?;
    say!("experiment written to {}", dir.join(DOCUMENT).display());
    if !doc.interrupted {
        // A failure (a setting that cannot be put back, a run that refused
        // to start) ends here; an interruption prints what finished.
        outcome?;
    }
    super::print(&rendered(&doc, settings.format)?)?;
    match doc.interrupted {
        true => {
            say!("interrupted; the analysis holds the runs that finished");
            Ok(ExitCode::Interrupted)
        }
        false => Ok(ExitCode::Success),
    }
}

/// The experiment's document before its first run.
fn document(
    settings: &AbSettings,
    arms: &[(String, Vec<Setting>)],
    originals: Vec<BTreeMap<String, String>>,
    id: &str,
    started: SystemTime,
) -> ExperimentDocument {
    // Drawn from the clock: the seed needs to be recorded, not secret.
    let seed = settings.seed.unwrap_or_else(|| {
        let nanos = started
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        nanos ^ u64::from(std::process::id()) << 32
    });
    let names: Vec<String> = settings.arms.iter().map(|a| a.spec.name.clone()).collect();
    let slots = plan::slots(&names, settings.aa);
    let orders = plan::orders(settings.order, slots.len(), settings.rounds, seed);
    ExperimentDocument {
        schema: model::SCHEMA.to_string(),
        id: id.to_string(),
        started: humantime::format_rfc3339_seconds(started).to_string(),
        finished: None,
        interrupted: false,
        command_line: std::env::args().collect(),
        seed,
        order: settings.order,
        rounds: settings.rounds,
        alpha: settings.alpha,
        arms: settings
            .arms
            .iter()
            .zip(arms)
            .zip(originals)
            .map(|((arm, (_, set)), originals)| ArmRecord {
                spec: arm.spec.clone(),
                settings: set.iter().map(Setting::label).collect(),
                originals,
                run_options: arm.options.clone(),
            })
            .collect(),
        slots,
        orders,
        runs: Vec::new(),
        analysis: None,
    }
}

/// What the rounds work with.
struct Experiment<'a> {
    settings: &'a AbSettings,
    arms: &'a [(String, Vec<Setting>)],
    dir: &'a Path,
    interrupt: &'a Interrupt,
}

impl Experiment<'_> {
    /// Every round, each slot in the round's order, recorded into `doc`
    /// (written after each run).
    fn rounds(&mut self, doc: &mut ExperimentDocument) -> anyhow::Result<()> {
        let per_run: Vec<Duration> = self.settings.arms.iter().map(expected_time).collect();
        let total = doc
            .slots
            .iter()
            .map(|slot| per_run[slot.arm])
            .sum::<Duration>()
            * doc.rounds;
        let mut progress = Progress::new(total, self.settings.quiet);
        for round in 0..doc.rounds {
            for (position, &slot) in doc.orders[round as usize].clone().iter().enumerate() {
                self.interrupt.check()?;
                let name = doc.slots[slot].name.clone();
                let label = format!("round {}/{} · {name}", round + 1, doc.rounds);
                progress.start_scenario(&label, per_run[doc.slots[slot].arm]);
                let record = self.one_run(doc, round, position, slot, &progress)?;
                progress.finish_scenario();
                let status = record.status;
                doc.runs.push(record);
                write(self.dir, doc)?;
                if status == RunStatus::Interrupted {
                    return Err(Interrupted.into());
                }
            }
        }
        Ok(())
    }

    /// The run of `slot` in `round`: its settings applied, the run, the
    /// settings checked and put back.
    fn one_run(
        &self,
        doc: &ExperimentDocument,
        round: u32,
        position: usize,
        slot: usize,
        progress: &Progress,
    ) -> anyhow::Result<RunRecord> {
        let started = Instant::now();
        let slot_def = &doc.slots[slot];
        let (arm_name, settings) = &self.arms[slot_def.arm];
        let stem = format!("r{:02}-{}", round + 1, slot_def.name);
        let file = format!("runs/{stem}.json");
        let comment = format!(
            "{}[ab {} arm {}]",
            self.settings
                .comment
                .as_deref()
                .map(|c| format!("{c} "))
                .unwrap_or_default(),
            doc.id,
            slot_def.name
        );
        // An arm of no settings (the baseline, often) applies nothing.
        let applied = (!settings.is_empty())
            .then(|| setting::apply(settings))
            .transpose()
            .map_err(|e| arm_settings::classified(arm_name, e))?;
        let ended = spawn::ArmRun {
            options: &self.settings.arms[slot_def.arm].options,
            file: &self.dir.join(&file),
            log: &self.dir.join(format!("runs/{stem}.log")),
            comment: &comment,
        }
        .run(self.interrupt, progress);
        let holding = applied.as_ref().map_or(Ok(()), |a| a.check_holding());
        if let Some(applied) = applied {
            applied
                .restore()
                .map_err(|e| anyhow::Error::new(e).context(format!("arm {arm_name}")))?;
        }
        let mut ended = ended?;
        if let Err(error) = holding {
            progress.say(&format!("warning: {stem}: {error}; its run is left out"));
            ended.status = RunStatus::NotHeld;
        }
        if ended.refused {
            return Err(UsageError::new(format!(
                "the run of {stem} refused to start: {}",
                ended.said.unwrap_or_default()
            ))
            .into());
        }
        if let (RunStatus::Failed, Some(said)) = (ended.status, &ended.said) {
            progress.say(&format!("warning: {stem} failed: {said}"));
        }
        Ok(RunRecord {
            round,
            position,
            slot,
            run_id: run_id(&self.dir.join(&file)),
            file,
            status: ended.status,
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}

/// About how long one run of `arm` takes: its scenarios' measurements and
/// warm-ups, the noise check, and a second of starting up.
fn expected_time(arm: &ArmRuns) -> Duration {
    let timing = &arm.config.timing;
    let per = timing.duration_ns + timing.warmup_ns;
    let measurements: u64 = arm
        .config
        .scenarios
        .iter()
        .map(|s| u64::from(s.repeats))
        .sum();
    Duration::from_nanos(measurements * per + arm.config.preflight.noise_check_ns)
        + Duration::from_secs(1)
}

/// The id of the run in `path`, when it wrote one.
fn run_id(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value["run"]["id"].as_str().map(str::to_string)
}

/// Every run of `doc` that counts, read from `dir`, by (round, slot) (a
/// failed or interrupted run's finished scenarios count); a file that cannot
/// be read is said and left out.
fn read_runs(dir: &Path, doc: &ExperimentDocument) -> Vec<((u32, usize), RunDocument)> {
    doc.runs
        .iter()
        .filter(|r| r.status.counts() && dir.join(&r.file).exists())
        .filter_map(|r| match read_run(&dir.join(&r.file), &probe::sheet_of) {
            Ok(run) => Some(((r.round, r.slot), run)),
            Err(error) => {
                say!("warning: {} left out: {error}", r.file);
                None
            }
        })
        .collect()
}

/// The experiment `doc` (analysed) as `format` renders it.
fn rendered(doc: &ExperimentDocument, format: AbFormat) -> anyhow::Result<String> {
    Ok(match format {
        AbFormat::Table => text::render(doc),
        AbFormat::Json => serde_json::to_string_pretty(doc)? + "\n",
        AbFormat::Html => html::render(doc),
    })
}

/// Writes `doc` into `dir`, atomically.
fn write(dir: &Path, doc: &ExperimentDocument) -> anyhow::Result<()> {
    let path = dir.join(DOCUMENT);
    let text = serde_json::to_string_pretty(doc).context("serialising the experiment")? + "\n";
    write_atomically(&path, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}
