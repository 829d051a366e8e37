//! A probe's declarations: its figures ([`FigureDef`]) and the columns of
//! its table ([`Column`]). Written once in the probe's file, stored in every
//! run document that measured the probe, and read by every renderer, merge
//! and comparison.

use super::tally::Tally;
use super::{Better, ChangeUnit, Unit};
use super::{Evaluator, Formula};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where the uncertainty of a figure comes from when a scenario was
/// measured once or twice (with three repeats or more, their spread is
/// used for every figure); it decides whether a difference between runs can
/// be tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "from")]
pub enum Spread {
    /// Repeats only: the figure is not kept per sub-window (a maximum, a
    /// figure one sub-window cannot estimate).
    RepeatsOnly,
    /// Batch means over the figure of each sub-window.
    SubWindows,
    /// Batch means over groups of neighbouring sub-windows holding at least
    /// `min_samples` samples each (a p99 needs about 100 to be more than a
    /// maximum).
    SubWindowGroups { min_samples: u64 },
}

/// One figure of a probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureDef {
    /// What `--figure` and comparisons call it (`mean`, `p99`, ...).
    pub key: String,
    /// Its name in run documents and CSV, with the stored unit
    /// (`latency_mean_us`).
    pub field: String,
    /// A label with the unit values are shown in (`latency mean (ms)`).
    pub label: String,
    pub unit: Unit,
    pub better: Better,
    pub change: ChangeUnit,
    /// Largest value it can take (100 for a share that cannot exceed the
    /// whole), to cut confidence intervals; none below 0 is ever possible.
    pub at_most: Option<f64>,
    pub formula: Formula,
    pub spread: Spread,
    /// A headline figure: each run stores its confidence interval.
    pub headline: bool,
    /// Compared by `feelbench compare` when no `--figure` is given.
    pub compared: bool,
    /// What the overview of a run (`report::overview`) makes of it;
    /// `None` (and in runs older than the field): nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overview: Option<OverviewRole>,
    /// When its user would notice it, in absolute terms (the overview's
    /// first judge); `None` (and in runs older than the field): the
    /// overview judges the probe by its ratio to `none`.
    /// (Boxed: most figures have none, and `FigureDef` is held by value.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noticeable: Option<Box<Noticeable>>,
}

/// When the user of a probe notices a figure, in absolute terms tied to
/// what the probe does: a value worse than `noticed` (worse as the
/// figure's `better` says) is noticed now and then, one worse than `poor`
/// spoils the use. Values are in the figure's stored unit (µs for a
/// latency, % for a share); `source` says where they come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Noticeable {
    pub noticed: f64,
    pub poor: f64,
    pub source: String,
}

/// How a value stands against its figure's [`Noticeable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Notice {
    /// No worse than `noticed`.
    Unnoticed,
    /// Worse than `noticed`.
    Noticed,
    /// Worse than `poor`.
    Poor,
}

impl Noticeable {
    /// The rule `noticed`/`poor`, from `source`.
    pub fn new(noticed: f64, poor: f64, source: &str) -> Self {
        Self {
            noticed,
            poor,
            source: source.to_string(),
        }
    }

    /// How `value` of a figure better as `better` stands.
    pub fn judge(&self, value: f64, better: Better) -> Notice {
        let worse = |threshold: f64| match better {
            Better::Lower => value > threshold,
            Better::Higher => value < threshold,
        };
        match (worse(self.poor), worse(self.noticed)) {
            (true, _) => Notice::Poor,
            (false, true) => Notice::Noticed,
            (false, false) => Notice::Unnoticed,
        }
    }
}

/// The part a figure plays in the overview of a run, the answer shown
/// before the tables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "as")]
pub enum OverviewRole {
    /// The probe's overview figure, shown under each load as a ratio to
    /// the same figure under no load; `worse` is how the verdict says a
    /// worse value (`later`, `slower`: "3.1× later under burn"). Several
    /// figures so marked (micro's operations) make a set, whose ratio is
    /// the geometric mean of theirs.
    Ratio { worse: String },
    /// A share in % (deadlines met) that the verdict quotes when it is low.
    Share,
}

impl OverviewRole {
    /// The overview figure, a worse value said as `worse`.
    pub fn ratio(worse: &str) -> Self {
        OverviewRole::Ratio {
            worse: worse.to_string(),
        }
    }
}

/// What a [`Column`] shows: the probe's figures, or what the scenario's
/// load got done beside it (contest's `Loads` and `LCPU%`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColumnSource {
    /// The figures the column names.
    #[default]
    Figures,
    /// The units of work the load did per measurement (its parts joined
    /// by `+`).
    LoadAmount,
    /// The CPU the load's processes used, all parts together (200 % = two
    /// CPUs).
    LoadCpu,
}

impl ColumnSource {
    /// Whether the column shows figures (the default, left out of run
    /// documents).
    pub fn is_figures(&self) -> bool {
        *self == Self::Figures
    }
}

/// One column of a probe's console and Markdown table: the figures shown
/// in it, joined by ` +/- ` (mean and SD share one column), or what the
/// load did (`source`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub header: String,
    /// What it shows; figures in documents older than this field.
    #[serde(default, skip_serializing_if = "ColumnSource::is_figures")]
    pub source: ColumnSource,
    /// Keys of the figures shown (none for a load column).
    pub figures: Vec<String>,
    /// Width of the column in the console table.
    pub width: usize,
    /// Shown when the figures have no value.
    pub missing: String,
    /// Shows its first figure as a ratio to the same figure under the
    /// `none` load of the same run (resp1's and contest's "ratio to no
    /// load"), instead of the figures themselves.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ratio_to_none: bool,
}

impl Column {
    /// A column showing the figures `keys`, `width` wide, `-` when missing.
    pub fn new(header: &str, keys: &[&str], width: usize) -> Self {
        Self {
            header: header.to_string(),
            source: ColumnSource::Figures,
            figures: keys.iter().map(|k| k.to_string()).collect(),
            width,
            missing: "-".to_string(),
            ratio_to_none: false,
        }
    }

    /// A column showing what the load did (`source`, not
    /// [`ColumnSource::Figures`]), `width` wide.
    pub fn load(header: &str, source: ColumnSource, width: usize) -> Self {
        Self {
            source,
            ..Self::new(header, &[], width)
        }
    }

    /// A column showing figure `key` as a ratio to the same figure under
    /// the `none` load of the same run.
    pub fn ratio_to_none(header: &str, key: &str, width: usize) -> Self {
        Self {
            ratio_to_none: true,
            ..Self::new(header, &[key], width)
        }
    }
}

/// Everything rendering needs to know about a probe.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeSheet {
    /// One line for `feelbench list` and table titles.
    pub summary: String,
    pub columns: Vec<Column>,
    pub figures: Vec<FigureDef>,
    /// The probe measures until its own work is done (a job run to its
    /// end, a number of points), not for the run's duration (`-t`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own_pace: bool,
}

impl ProbeSheet {
    /// The figure called `key`.
    pub fn figure(&self, key: &str) -> Option<&FigureDef> {
        self.figures.iter().find(|f| f.key == key)
    }

    /// The same, with the figure called `key` playing `role` in the
    /// overview (a key the sheet lacks is a bug of the probe: the test of
    /// every probe's overview finds it).
    pub fn with_overview(mut self, key: &str, role: OverviewRole) -> Self {
        if let Some(figure) = self.figures.iter_mut().find(|f| f.key == key) {
            figure.overview = Some(role);
        }
        self
    }

    /// The same, with the figure called `key` judged by `rule` (see
    /// [`with_overview`](Self::with_overview) for a key it lacks).
    pub fn with_noticeable(mut self, key: &str, rule: Noticeable) -> Self {
        if let Some(figure) = self.figures.iter_mut().find(|f| f.key == key) {
            figure.noticeable = Some(Box::new(rule));
        }
        self
    }

    /// Every figure evaluated over `tally`, by field name; figures the
    /// tally cannot give are left out.
    pub fn evaluate(&self, tally: &Tally) -> BTreeMap<String, f64> {
        let mut evaluator = Evaluator::new(tally);
        self.figures
            .iter()
            .filter_map(|f| Some((f.field.to_string(), evaluator.value(&f.formula)?)))
            .collect()
    }
}

impl FigureDef {
    /// `(low, high)` cut to the values the figure can take.
    pub fn within_range(&self, (low, high): (f64, f64)) -> (f64, f64) {
        (low.max(0.0), self.at_most.map_or(high, |max| high.min(max)))
    }

    /// `value` as shown, without the unit.
    pub fn show(&self, value: f64) -> String {
        self.unit.show(value)
    }
}

impl FigureDef {
    /// A figure with no interval of its own (see [`Spread::RepeatsOnly`]),
    /// not a headline, not compared by default; changes in points for
    /// shares in %, in % otherwise.
    pub fn new(
        key: &str,
        field: &str,
        label: &str,
        unit: Unit,
        better: Better,
        formula: Formula,
    ) -> Self {
        Self {
            key: key.to_string(),
            field: field.to_string(),
            label: label.to_string(),
            unit,
            better,
            change: match unit {
                Unit::Percent => ChangeUnit::Points,
                _ => ChangeUnit::Percent,
            },
            at_most: None,
            formula,
            spread: Spread::RepeatsOnly,
            headline: false,
            compared: false,
            overview: None,
            noticeable: None,
        }
    }

    /// The same, with its uncertainty estimated as `spread` says.
    pub fn spread(self, spread: Spread) -> Self {
        Self { spread, ..self }
    }

    /// The same, as a headline figure (its interval is stored in runs).
    pub fn headline(self) -> Self {
        Self {
            headline: true,
            ..self
        }
    }

    /// The same, compared by default.
    pub fn compared(self) -> Self {
        Self {
            compared: true,
            ..self
        }
    }

    /// The same, never above `max`.
    pub fn at_most(self, max: f64) -> Self {
        Self {
            at_most: Some(max),
            ..self
        }
    }
}

/// Frames a group of sub-windows needs before its 99th percentile is more
/// than its largest value: below 100 the p99 of a group is its maximum.
pub const P99_MIN_SAMPLES: u64 = 100;

/// The usual figures of a latency distribution `samples` (count, mean, SD,
/// p50, p90, p99, p99.9, max); mean and p99 are headline figures estimated
/// from sub-windows.
pub fn latency_figures(samples: &str) -> Vec<FigureDef> {
    let s = || samples.to_string();
    let latency = |key: &str, label: &str, formula: Formula| {
        let field = format!("latency_{key}_us");
        FigureDef::new(key, &field, label, Unit::Micros, Better::Lower, formula)
    };
    let quantile =
        |key: &str, label: &str, q: f64| latency(key, label, Formula::Quantile { samples: s(), q });
    vec![
        FigureDef::new(
            "samples",
            "samples",
            "latency samples",
            Unit::Count,
            Better::Higher,
            Formula::SampleCount { samples: s() },
        ),
        latency("mean", "latency mean (ms)", Formula::Mean { samples: s() })
            .spread(Spread::SubWindows)
            .headline()
            .compared(),
        latency("sd", "latency SD (ms)", Formula::Sd { samples: s() }),
        quantile("p50", "latency p50 (ms)", 0.5),
        quantile("p90", "latency p90 (ms)", 0.9),
        quantile("p99", "latency p99 (ms)", 0.99)
            .spread(Spread::SubWindowGroups {
                min_samples: P99_MIN_SAMPLES,
            })
            .headline()
            .compared(),
        quantile("p999", "latency p99.9 (ms)", 0.999),
        latency("max", "latency max (ms)", Formula::Max { samples: s() }).compared(),
    ]
}
