//! The experiment's document (`feelbench.ab/1`, `experiment.json` in its
//! directory): what was asked (arms, rounds, seed, the slots and each
//! round's order), what ran (each arm-round's run file and id, and how it
//! ended), and, once analysed, the analysis. Written after every run, so an
//! interrupted experiment keeps what finished.

use super::analysis::Analysis;
use super::arms::ArmSpec;
use super::plan::{OrderKind, Slot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema the document follows.
pub const SCHEMA: &str = "feelbench.ab/1";

/// One experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExperimentDocument {
    pub schema: String,
    /// `ab-DATE-TIME-PID`; each run's comment carries it (`[ab ID arm NAME]`).
    pub id: String,
    pub started: String,
    pub finished: Option<String>,
    /// Stopped by a signal before its last run.
    pub interrupted: bool,
    pub command_line: Vec<String>,
    pub seed: u64,
    pub order: OrderKind,
    /// Rounds planned.
    pub rounds: u32,
    /// False discovery rate of the analysis.
    pub alpha: f64,
    /// The arms, the baseline first, with what each sets.
    pub arms: Vec<ArmRecord>,
    pub slots: Vec<Slot>,
    /// Each round's order of the slots.
    pub orders: Vec<Vec<usize>>,
    /// Each run made, in the order made.
    pub runs: Vec<RunRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis: Option<Analysis>,
}

/// An arm and what it changes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ArmRecord {
    #[serde(flatten)]
    pub spec: ArmSpec,
    /// Each setting of the system, as shown (`vm.swappiness=10`).
    pub settings: Vec<String>,
    /// What each setting that reads a value found before the experiment
    /// changed it (read at the rehearsal, as the kernel shows it), by the
    /// setting as shown: `"vm.swappiness=10": "60"`. Absent in documents
    /// older than the field.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub originals: BTreeMap<String, String>,
    /// The options its runs were given after the user's.
    pub run_options: Vec<String>,
}

impl ArmRecord {
    /// Each setting with what it replaced, where that was read:
    /// `vm.swappiness 60 → 10` for `vm.swappiness=10` over 60; as given
    /// otherwise (a pair of commands, a scheduler).
    pub fn changes(&self) -> Vec<String> {
        self.settings
            .iter()
            .map(|setting| {
                let original = self.originals.get(setting);
                match (setting.split_once('='), original) {
                    (Some((name, value)), Some(original)) => {
                        format!("{name} {original} → {value}")
                    }
                    _ => setting.clone(),
                }
            })
            .collect()
    }
}

/// How an arm's run of a round ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every scenario measured.
    Ok,
    /// The run exited with a failure (a scenario failed, or worse); the
    /// scenarios it measured still count.
    Failed,
    /// Stopped by a signal; the scenarios it finished still count.
    Interrupted,
    /// The arm's settings stopped holding during the run (a scheduler
    /// ejected, a value changed by someone else): the run is left out.
    NotHeld,
}

impl RunStatus {
    /// Whether the run's measured scenarios are the arm's.
    pub fn counts(self) -> bool {
        self != RunStatus::NotHeld
    }
}

/// One arm-round's run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    /// 0-based.
    pub round: u32,
    /// Its position in the round's order, 0-based.
    pub position: usize,
    pub slot: usize,
    /// Its run file, relative to the experiment's directory.
    pub file: String,
    /// The run's id (`run.id` of its document), when it wrote one.
    pub run_id: Option<String>,
    pub status: RunStatus,
    /// Seconds it took, settings applied and put back included.
    pub seconds: f64,
}

impl ExperimentDocument {
    /// The run of `slot` in `round`, if it was made.
    pub fn run_of(&self, round: u32, slot: usize) -> Option<&RunRecord> {
        self.runs
            .iter()
            .find(|r| r.round == round && r.slot == slot)
    }

    /// Rounds whose runs all ended well.
    pub fn complete_rounds(&self) -> Vec<u32> {
        (0..self.rounds)
            .filter(|&round| {
                (0..self.slots.len()).all(|slot| {
                    self.run_of(round, slot)
                        .is_some_and(|r| r.status == RunStatus::Ok)
                })
            })
            .collect()
    }
}
