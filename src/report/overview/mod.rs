//! The answer before the details: per probe, its overview figure under
//! each load as a ratio to the same figure under `none`, a share it
//! declares (deadlines met) beside it, the worst loads named and a
//! one-line verdict; then a summary line, the geometric mean of the ratios
//! to `none` (as mmtests and the Phoronix suites give), which never
//! replaces the figures per scenario.
//!
//! Which figures count is declared in each probe's sheet
//! (`FigureDef.overview`); several figures declared as the ratio (micro's
//! operations) make a set whose ratio is the geometric mean of theirs. A
//! sheet without a declaration (runs older than it) falls back on its
//! first headline figure, a worse value said as "worse".
//!
//! Every ratio is "how many times worse": the figure over its value under
//! `none` when lower is better, the inverse when higher is.
//!
//! One rule judges a cell, for the verdict and the heat map's colours
//! alike ([`CellFigures::band`]). A probe whose sheet says when its user
//! notices a figure (`FigureDef.noticeable`: deadlines missed, frames
//! past two refreshes, a response past 0.1 s) is judged first by that,
//! in absolute terms: poor, noticed, or not, with its ratio beside it (a
//! ratio above [`FINE_RATIO`] that nobody would notice is still said).
//! A probe without one is judged by its ratio alone: fine when it is at
//! most [`FINE_RATIO`] (or within the 95 % intervals of the two, when both
//! have one: a difference the intervals cannot tell apart is not called)
//! and its share is at least [`FINE_SHARE_PCT`]. Pure over the run
//! document.

use crate::document::estimate::{estimate, RUN_LEVEL};
use crate::document::figure::Figure;
use crate::document::schema::{RunDocument, ScenarioResult, ScenarioStatus};
use crate::figures::{Better, FigureDef, Notice, Noticeable, OverviewRole, ProbeSheet};

mod text;
mod verdict;

pub use text::{cell_text, judged_text, legend, render, render_markdown, share_text};

/// The largest ratio to `none` that is still fine (verdict and heat map).
pub const FINE_RATIO: f64 = 1.5;
/// The ratios from which a probe without a rule of what its user notices
/// is in the heat map's two worst bands.
const BAD_RATIO: f64 = 2.0;
const WORST_RATIO: f64 = 5.0;
/// The smallest share (deadlines met, desired CPU) that is still fine.
pub const FINE_SHARE_PCT: f64 = 95.0;
/// The load every ratio is to.
pub const REFERENCE: &str = "none";

/// The overview of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Overview {
    /// Every load of the run, in the order it first appears.
    pub loads: Vec<String>,
    /// One per probe with an overview figure, in run order.
    pub probes: Vec<ProbeOverview>,
    /// The suite the run was made from, which the summary names.
    pub suite: Option<String>,
}

/// One probe's line of the overview.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeOverview {
    pub probe: String,
    /// The label of its ratio figure, or of the set
    /// (`12 figures, geometric mean`).
    pub figure: String,
    /// The label of its share figure, when it declares one.
    pub share: Option<String>,
    /// How the verdict says a worse value (`later`).
    pub worse: String,
    /// What its user notices, when its sheet says: the verdict's and the
    /// heat map's first judge.
    pub rule: Option<Rule>,
    /// Whether it was measured under `none`, so that ratios exist.
    pub has_reference: bool,
    /// One per scenario of the probe, in run order.
    pub cells: Vec<Cell>,
}

/// A probe's rule of what its user notices, as the overview shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The label of the figure it judges (`deadlines met %`).
    pub figure: String,
    /// Whether that figure is the probe's share, shown already.
    pub is_share: bool,
    /// `noticed below 100.0, poor below 99.0`, in the figure's shown unit.
    pub thresholds: String,
    /// Where the thresholds come from.
    pub source: String,
}

impl Rule {
    /// The rule of `def` as the overview says it.
    fn of(def: &FigureDef, rule: &Noticeable, share: Option<&FigureDef>) -> Self {
        let side = match def.better {
            Better::Lower => "above",
            Better::Higher => "below",
        };
        Rule {
            figure: def.label.clone(),
            is_share: share.is_some_and(|s| s.key == def.key),
            thresholds: format!(
                "noticed {side} {}, poor {side} {}",
                def.show(rule.noticed),
                def.show(rule.poor)
            ),
            source: rule.source.clone(),
        }
    }
}

/// One probe under one load.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub load: String,
    /// Its place in the run's scenarios (the anchor of its row in HTML).
    pub scenario: usize,
    /// `None`: the scenario failed.
    pub figures: Option<CellFigures>,
}

/// What the overview shows of one scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct CellFigures {
    /// The figure's value as shown, without its unit (a single figure).
    pub value: Option<String>,
    /// How many times worse than under `none` (1: the same).
    pub ratio: Option<f64>,
    /// Whether the ratio is beyond the 95 % intervals (true when either
    /// side has no interval: judged on the value alone).
    pub clear: bool,
    /// The share figure's value, in %.
    pub share: Option<f64>,
    /// How the figure the probe's rule judges stands (`None`: no rule, or
    /// no value), and that value as shown, without its unit.
    pub notice: Option<Notice>,
    pub judged: Option<String>,
}

impl CellFigures {
    /// Whether the load made the probe worse than fine: a clear ratio
    /// above [`FINE_RATIO`].
    pub fn worse(&self) -> bool {
        self.clear && self.ratio.is_some_and(|r| r > FINE_RATIO)
    }

    /// Whether its ratio is above [`FINE_RATIO`] but within the 95 %
    /// intervals of both: not called worse, and not fine either.
    pub fn unclear(&self) -> bool {
        !self.clear && self.ratio.is_some_and(|r| r > FINE_RATIO)
    }

    /// Whether its share is below [`FINE_SHARE_PCT`].
    pub fn low_share(&self) -> bool {
        self.share.is_some_and(|s| s < FINE_SHARE_PCT)
    }

    /// How bad it looks, 0 (fine) to 3: the heat map's colours, and the
    /// verdict's "fine" (0). Judged by the probe's rule of what its user
    /// notices where it has one: poor 3, noticed 2, not noticed 0, or 1
    /// when its ratio is above [`FINE_RATIO`] all the same. Else the worse
    /// of its ratio's band (≤ [`FINE_RATIO`], ≤ 2, < 5, ≥ 5; a ratio within
    /// the intervals counts as 1 above [`FINE_RATIO`], 0 below) and its
    /// share's (≥ 95, ≥ 80, ≥ 50, < 50 %).
    pub fn band(&self) -> usize {
        match self.notice {
            Some(Notice::Poor) => 3,
            Some(Notice::Noticed) => 2,
            Some(Notice::Unnoticed) => self.ratio_band().min(1),
            None => self.ratio_band().max(self.share_band()),
        }
    }

    /// The band of its ratio alone.
    fn ratio_band(&self) -> usize {
        match self.ratio {
            Some(r) if r > FINE_RATIO && !self.clear => 1,
            Some(r) if r >= WORST_RATIO => 3,
            Some(r) if r > BAD_RATIO => 2,
            Some(r) if r > FINE_RATIO => 1,
            _ => 0,
        }
    }

    /// The band of its share alone.
    fn share_band(&self) -> usize {
        match self.share {
            Some(s) if s < 50.0 => 3,
            Some(s) if s < 80.0 => 2,
            Some(s) if s < FINE_SHARE_PCT => 1,
            _ => 0,
        }
    }
}

/// The overview of `run`.
pub fn of(run: &RunDocument) -> Overview {
    let mut loads: Vec<String> = Vec::new();
    for s in &run.scenarios {
        if !loads.contains(&s.load) {
            loads.push(s.load.clone());
        }
    }
    let probes = run
        .probes()
        .into_iter()
        .filter_map(|probe| probe_overview(run, probe))
        .collect();
    Overview {
        loads,
        probes,
        suite: run.suite.as_ref().map(|s| s.name.clone()),
    }
}

/// The figures of a sheet that the overview shows.
struct Declared<'a> {
    ratio: Vec<&'a FigureDef>,
    worse: String,
    share: Option<&'a FigureDef>,
    /// The figure its user's notice is judged by, and the rule.
    rule: Option<(&'a FigureDef, &'a Noticeable)>,
}

/// What `sheet` declares for the overview, or its first headline figure
/// when it declares nothing; `None` when it has neither.
fn declared(sheet: &ProbeSheet) -> Option<Declared<'_>> {
    let mut ratio = Vec::new();
    let mut worse = None;
    let mut share = None;
    for def in &sheet.figures {
        match &def.overview {
            Some(OverviewRole::Ratio { worse: word }) => {
                ratio.push(def);
                worse.get_or_insert_with(|| word.clone());
            }
            Some(OverviewRole::Share) => share = share.or(Some(def)),
            None => {}
        }
    }
    if ratio.is_empty() {
        ratio.extend(sheet.figures.iter().find(|f| f.headline));
    }
    let rule = sheet
        .figures
        .iter()
        .find_map(|def| Some((def, def.noticeable.as_deref()?)));
    (!ratio.is_empty()).then(|| Declared {
        ratio,
        worse: worse.unwrap_or_else(|| "worse".to_string()),
        share,
        rule,
    })
}

/// The overview line of `probe`, `None` when its sheet shows nothing.
fn probe_overview(run: &RunDocument, probe: &str) -> Option<ProbeOverview> {
    let sheet = run.sheet(probe)?;
    let declared = declared(sheet)?;
    let reference = run
        .scenarios_of(probe)
        .find(|s| s.load == REFERENCE && s.outcome.status == ScenarioStatus::Ok);
    let cells = run
        .scenarios
        .iter()
        .enumerate()
        .filter(|(_, s)| s.probe == probe)
        .map(|(index, s)| Cell {
            load: s.load.clone(),
            scenario: index,
            figures: (s.outcome.status == ScenarioStatus::Ok)
                .then(|| cell_figures(s, reference, &declared)),
        })
        .collect();
    let figure = match declared.ratio.as_slice() {
        [one] => one.label.clone(),
        set => set_label(set),
    };
    Some(ProbeOverview {
        probe: probe.to_string(),
        figure,
        share: declared.share.map(|d| d.label.clone()),
        rule: declared
            .rule
            .map(|(def, rule)| Rule::of(def, rule, declared.share)),
        worse: declared.worse,
        has_reference: reference.is_some(),
        cells,
    })
}

/// What a set of figures is called: what their labels end with, and how
/// many they are (`median (µs) of 20, geometric mean`: `fork median (µs)`,
/// `exec median (µs)`, ...).
fn set_label(set: &[&FigureDef]) -> String {
    let first: Vec<char> = set[0].label.chars().rev().collect();
    let shared = set.iter().fold(first.len(), |shared, def| {
        let matching = def
            .label
            .chars()
            .rev()
            .zip(&first)
            .take_while(|(a, b)| a == *b);
        shared.min(matching.count())
    });
    let suffix: String = first[..shared].iter().rev().collect();
    // From the first whole word.
    let words = match suffix.find(' ') {
        Some(space) if !suffix.starts_with(' ') => suffix[space..].trim(),
        _ => suffix.trim(),
    };
    match words.is_empty() {
        true => format!("{} figures, geometric mean", set.len()),
        false => format!("{words} of {}, geometric mean", set.len()),
    }
}

/// The overview figures of `scenario`, its ratios to `reference`.
fn cell_figures(
    scenario: &ScenarioResult,
    reference: Option<&ScenarioResult>,
    declared: &Declared,
) -> CellFigures {
    let ratios: Vec<(f64, bool)> = declared
        .ratio
        .iter()
        .filter_map(|def| ratio(scenario, reference?, def))
        .collect();
    let value = match declared.ratio.as_slice() {
        [one] => value_of(scenario, one).map(|v| one.show(v)),
        _ => None,
    };
    let judged = declared
        .rule
        .and_then(|(def, rule)| Some((def, rule, value_of(scenario, def)?)));
    CellFigures {
        value,
        ratio: geometric_mean(ratios.iter().map(|r| r.0)),
        clear: ratios.iter().any(|r| r.1),
        share: declared.share.and_then(|def| value_of(scenario, def)),
        notice: judged.map(|(def, rule, v)| rule.judge(v, def.better)),
        judged: judged.map(|(def, _, v)| def.show(v)),
    }
}

/// How many times worse `def` is in `scenario` than in `reference`, and
/// whether that is beyond their intervals; `None` when either lacks it or
/// the one in the denominator is 0.
fn ratio(
    scenario: &ScenarioResult,
    reference: &ScenarioResult,
    def: &FigureDef,
) -> Option<(f64, bool)> {
    let (here, there) = (value_of(scenario, def)?, value_of(reference, def)?);
    let (num, den) = match def.better {
        Better::Lower => (here, there),
        Better::Higher => (there, here),
    };
    if den <= 0.0 {
        return None;
    }
    let overlap = match (interval(scenario, def), interval(reference, def)) {
        (Some(a), Some(b)) => a.0 <= b.1 && b.0 <= a.1,
        _ => false,
    };
    Some((num / den, !overlap))
}

/// `def`'s value in the scenario's outcome.
fn value_of(scenario: &ScenarioResult, def: &FigureDef) -> Option<f64> {
    Figure::Probe(def.clone()).of(&scenario.outcome)
}

/// The 95 % interval of `def` in `scenario`: the stored one, else one from
/// its repeats or sub-windows, cut to the values the figure can take.
fn interval(scenario: &ScenarioResult, def: &FigureDef) -> Option<(f64, f64)> {
    let stored = scenario
        .intervals
        .as_ref()
        .and_then(|i| i.figures.iter().find(|f| f.figure == def.key));
    if let Some(f) = stored {
        return Some((f.low, f.high));
    }
    let (e, _) = estimate(scenario, &Figure::Probe(def.clone()))?.uncertainty?;
    Some(def.within_range(e.interval(RUN_LEVEL)))
}

/// The geometric mean of positive `values`, `None` when there are none.
pub fn geometric_mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values
        .into_iter()
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold((0.0, 0u32), |(sum, n), v| (sum + v.ln(), n + 1));
    (n > 0).then(|| (sum / f64::from(n)).exp())
}

/// A ratio as the tables show it: `1.04×`, `21.2×`, `130×`.
pub fn ratio_text(ratio: f64) -> String {
    match ratio {
        r if r < 10.0 => format!("{r:.2}×"),
        r if r < 100.0 => format!("{r:.1}×"),
        r => format!("{r:.0}×"),
    }
}

/// A ratio as a verdict says it: `3.1×`, `21×`.
fn ratio_words(ratio: f64) -> String {
    match ratio {
        r if r < 10.0 => format!("{r:.1}×"),
        r => format!("{r:.0}×"),
    }
}

/// A low share as a verdict says it: whole percents, or one decimal when
/// whole percents would round it up to the fine threshold (`94.6 %`, not
/// `95 %`).
fn share_words(share: f64) -> String {
    match share.round() >= FINE_SHARE_PCT {
        true => format!("{share:.1} %"),
        false => format!("{share:.0} %"),
    }
}

/// The name of a share in a verdict: its label without the `%`
/// (`deadlines met`).
fn share_name(label: &str) -> &str {
    label.trim_end_matches('%').trim_end()
}

#[cfg(test)]
mod tests;
