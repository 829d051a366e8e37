//! The settings of `feelbench ab`, checked by the command line.

use crate::commands::run::RunConfig;
use crate::experiment::arms::ArmSpec;
use crate::experiment::plan::OrderKind;
use std::path::PathBuf;

/// What `feelbench ab` prints at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbFormat {
    /// The answer, then the tables.
    Table,
    /// The experiment's document with its analysis.
    Json,
    /// One page with a heat map of arms × scenarios.
    Html,
}

/// An arm with the run it makes in each round.
#[derive(Debug, Clone)]
pub struct ArmRuns {
    pub spec: ArmSpec,
    /// The options of its `feelbench run`: the user's, then the arm's.
    pub options: Vec<String>,
    /// Those options as `run` settles them (checked; its scenarios and
    /// timing give the experiment's expected length).
    pub config: RunConfig,
}

/// Validated settings of an experiment.
#[derive(Debug, Clone)]
pub struct AbSettings {
    /// The arms, the baseline first.
    pub arms: Vec<ArmRuns>,
    pub rounds: u32,
    /// The orders' seed; drawn when not given.
    pub seed: Option<u64>,
    /// Run the baseline twice a round (the A/A control).
    pub aa: bool,
    /// False discovery rate of the verdicts.
    pub alpha: f64,
    /// The experiment's directory; `feelbench-ab-ID` when not given.
    pub dir: Option<PathBuf>,
    pub format: AbFormat,
    pub order: OrderKind,
    /// The run's work directory (where `iosched` finds its disk).
    pub workdir: PathBuf,
    /// The user's comment, put before each run's mark.
    pub comment: Option<String>,
    /// No progress bar.
    pub quiet: bool,
}
