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

use super::markdown::pipe_row;
use crate::document::estimate::{estimate, RUN_LEVEL};
use crate::document::figure::Figure;
use crate::document::schema::{RunDocument, ScenarioResult, ScenarioStatus};
use crate::figures::{Better, FigureDef, Notice, Noticeable, OverviewRole, ProbeSheet};

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

/// Loads named in a verdict, at most this many per kind.
const NAMED: usize = 3;

impl ProbeOverview {
    /// The cells of the loads other than `none` that have figures.
    fn loaded(&self) -> impl Iterator<Item = (&Cell, &CellFigures)> {
        self.cells
            .iter()
            .filter(|c| c.load != REFERENCE)
            .filter_map(|c| Some((c, c.figures.as_ref()?)))
    }

    /// The loads whose scenario gave no figures.
    fn failed_loads(&self) -> Vec<&str> {
        self.cells
            .iter()
            .filter(|c| c.figures.is_none())
            .map(|c| c.load.as_str())
            .collect()
    }

    /// The one-line verdict: by the probe's rule of what its user notices
    /// where it has one ([`judged_verdict`](Self::judged_verdict)), else
    /// by ratios: `job: 3.1× slower under burn, 1.8× under hack; fine
    /// under read`.
    pub fn verdict(&self) -> String {
        if self.rule.is_some() {
            return self.judged_verdict();
        }
        let name = &self.probe;
        if !self.has_reference {
            return format!(
                "{name}: not measured under {REFERENCE}, so no ratios: values as measured"
            );
        }
        let mut worse: Vec<(&Cell, f64)> = self
            .loaded()
            .filter(|(_, f)| f.worse())
            .filter_map(|(c, f)| Some((c, f.ratio?)))
            .collect();
        worse.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut low: Vec<(&Cell, f64)> = self
            .cells
            .iter()
            .filter_map(|c| Some((c, c.figures.as_ref().filter(|f| f.low_share())?.share?)))
            .collect();
        low.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut unclear: Vec<(&Cell, f64)> = self
            .loaded()
            .filter(|(_, f)| f.unclear())
            .filter_map(|(c, f)| Some((c, f.ratio?)))
            .collect();
        unclear.sort_by(|a, b| b.1.total_cmp(&a.1));
        let fine: Vec<&str> = self
            .loaded()
            .filter(|(_, f)| f.band() == 0)
            .map(|(c, _)| c.load.as_str())
            .collect();
        let failed = self.failed_loads();
        let worse: Vec<(String, &str)> = worse
            .iter()
            .map(|(c, r)| (ratio_words(*r), c.load.as_str()))
            .collect();
        let low: Vec<(String, &str)> = low
            .iter()
            .map(|(c, share)| (share_words(*share), c.load.as_str()))
            .collect();
        let unclear: Vec<(String, &str)> = unclear
            .iter()
            .map(|(c, r)| (ratio_words(*r), c.load.as_str()))
            .collect();
        let mut parts = Vec::new();
        parts.extend(listed(&worse, &self.worse));
        if let Some(label) = &self.share {
            parts.extend(listed(&low, share_name(label)));
        }
        parts.extend(
            listed(&unclear, &self.worse).map(|text| format!("{text} within the noise (°)")),
        );
        let loaded = self.cells.iter().any(|c| c.load != REFERENCE);
        match (parts.is_empty(), loaded, failed.is_empty()) {
            (true, false, true) => return format!("{name}: measured under {REFERENCE} only"),
            (true, true, true) => return format!("{name}: fine under every load"),
            _ => {}
        }
        if !fine.is_empty() && !parts.is_empty() {
            parts.push(format!("fine under {}", fine.join(", ")));
        }
        if !failed.is_empty() {
            parts.push(format!("failed under {}", failed.join(", ")));
        }
        format!("{name}: {}", parts.join("; "))
    }

    /// The verdict by the probe's rule: `audio: poor under hack (deadlines
    /// met % 85.0, 3.1× later); noticed under read (deadlines met % 99.5,
    /// 1.2× later); 25× later under burn, not noticed; fine under write`. Every load is
    /// judged, `none` too (its user notices there as well), and needs no
    /// `none` to be judged; the ratio is said beside where there is one.
    fn judged_verdict(&self) -> String {
        let name = &self.probe;
        let figure = self.rule.as_ref().map_or("", |r| r.figure.as_str());
        let judged = |notice: Notice| -> Vec<(String, &str)> {
            let mut cells: Vec<(&Cell, &CellFigures)> = self
                .cells
                .iter()
                .filter_map(|c| Some((c, c.figures.as_ref()?)))
                .filter(|(_, f)| f.notice == Some(notice))
                .collect();
            cells.sort_by(|a, b| {
                b.1.ratio
                    .unwrap_or(0.0)
                    .total_cmp(&a.1.ratio.unwrap_or(0.0))
            });
            cells
                .into_iter()
                .map(|(c, f)| {
                    let mark = if f.clear { "" } else { "°" };
                    let ratio = f
                        .ratio
                        .filter(|_| c.load != REFERENCE)
                        .map(|r| format!(", {}{mark} {}", ratio_words(r), self.worse));
                    let judged = f.judged.as_deref().unwrap_or_default();
                    let text = format!("({figure} {judged}{})", ratio.unwrap_or_default());
                    (text, c.load.as_str())
                })
                .collect()
        };
        let mut parts = Vec::new();
        for (notice, words) in [(Notice::Poor, "poor"), (Notice::Noticed, "noticed")] {
            let items: Vec<String> = judged(notice)
                .iter()
                .take(NAMED)
                .map(|(value, load)| format!("{load} {value}"))
                .collect();
            let more = judged(notice).len().saturating_sub(NAMED);
            if !items.is_empty() {
                let more = (more > 0).then(|| format!(" and {more} more"));
                parts.push(format!(
                    "{words} under {}{}",
                    items.join(", "),
                    more.unwrap_or_default()
                ));
            }
        }
        let mut unnoticed: Vec<(&Cell, f64)> = self
            .loaded()
            .filter(|(_, f)| f.notice == Some(Notice::Unnoticed) && f.band() > 0)
            .filter_map(|(c, f)| Some((c, f.ratio?)))
            .collect();
        unnoticed.sort_by(|a, b| b.1.total_cmp(&a.1));
        let unnoticed: Vec<(String, &str)> = unnoticed
            .iter()
            .map(|(c, r)| {
                let mark = if c.figures.as_ref().is_some_and(|f| f.clear) {
                    ""
                } else {
                    "°"
                };
                (format!("{}{mark}", ratio_words(*r)), c.load.as_str())
            })
            .collect();
        parts.extend(listed(&unnoticed, &self.worse).map(|text| format!("{text}, not noticed")));
        let unjudged: Vec<&str> = self
            .cells
            .iter()
            .filter(|c| c.figures.as_ref().is_some_and(|f| f.notice.is_none()))
            .map(|c| c.load.as_str())
            .collect();
        let fine: Vec<&str> = self
            .loaded()
            .filter(|(_, f)| f.notice.is_some() && f.band() == 0)
            .map(|(c, _)| c.load.as_str())
            .collect();
        let failed = self.failed_loads();
        let loaded = self.cells.iter().any(|c| c.load != REFERENCE);
        if !unjudged.is_empty() {
            parts.push(format!(
                "not judged under {} (no {figure})",
                unjudged.join(", ")
            ));
        }
        match (parts.is_empty(), loaded, failed.is_empty()) {
            (true, false, true) => {
                return format!("{name}: fine under {REFERENCE}, measured only there")
            }
            (true, true, true) => return format!("{name}: fine under every load"),
            _ => {}
        }
        if !fine.is_empty() {
            parts.push(format!("fine under {}", fine.join(", ")));
        }
        if !failed.is_empty() {
            parts.push(format!("failed under {}", failed.join(", ")));
        }
        format!("{name}: {}", parts.join("; "))
    }

    /// The geometric mean of its ratios over the loads other than `none`.
    pub fn mean_ratio(&self) -> Option<f64> {
        geometric_mean(self.loaded().filter_map(|(_, f)| f.ratio))
    }
}

/// `38× later under hack, 24× under burn and 2 more`: the first
/// [`NAMED`] of `items` (a value and its load, worst first), the first
/// with `what`; `None` when there are none.
fn listed(items: &[(String, &str)], what: &str) -> Option<String> {
    let named: Vec<String> = items
        .iter()
        .take(NAMED)
        .enumerate()
        .map(|(i, (value, load))| match i {
            0 => format!("{value} {what} under {load}"),
            _ => format!("{value} under {load}"),
        })
        .collect();
    let more = match items.len().saturating_sub(NAMED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    (!named.is_empty()).then(|| named.join(", ") + &more)
}

impl Overview {
    /// The summary line: the geometric mean of every ratio to `none`, per
    /// probe and over all, naming the run's suite when it has one; `None`
    /// when no probe has a ratio.
    pub fn summary(&self) -> Option<String> {
        let all = geometric_mean(
            self.probes
                .iter()
                .flat_map(|p| p.loaded().filter_map(|(_, f)| f.ratio)),
        )?;
        let per_probe: Vec<String> = self
            .probes
            .iter()
            .filter_map(|p| Some(format!("{} {}", p.probe, ratio_text(p.mean_ratio()?))))
            .collect();
        let subject = match &self.suite {
            Some(suite) => format!("suite {suite}"),
            None => "the run".to_string(),
        };
        Some(format!(
            "geometric mean of the ratios to {REFERENCE}, {subject}: {} ({}); the figures per scenario are above",
            ratio_text(all),
            per_probe.join(", ")
        ))
    }
}

/// What the overview's ratios, marks and thresholds mean, line by line,
/// with the rule of each probe of `overview` that has one.
pub fn legend(overview: &Overview) -> Vec<String> {
    let general = [
        format!("ratio: times worse than under {REFERENCE} (the figure over its value there; the inverse when higher is better)"),
        format!(
            "°: within the {:.0} % intervals of both, not called; a probe with a rule below is judged by what its user notices, its ratio beside; one without is fine at a ratio of at most {FINE_RATIO} and a share of at least {FINE_SHARE_PCT:.0} %",
            RUN_LEVEL * 100.0
        ),
    ];
    let rules = overview.probes.iter().filter_map(|p| {
        let rule = p.rule.as_ref()?;
        Some(format!(
            "{}: {} {}: {}",
            p.probe, rule.figure, rule.thresholds, rule.source
        ))
    });
    general.into_iter().chain(rules).collect()
}

/// The text of a cell: the value under `none` (a set's ratio, 1) or
/// under any load when the probe has no `none`, else the ratio, `°` when
/// within the intervals; `failed`; `-` when missing.
pub fn cell_text(probe: &ProbeOverview, cell: &Cell) -> String {
    let Some(figures) = &cell.figures else {
        return "failed".to_string();
    };
    if cell.load == REFERENCE || !probe.has_reference {
        let ratio = figures.ratio.map(ratio_text);
        return figures
            .value
            .clone()
            .or(ratio)
            .unwrap_or_else(|| "-".to_string());
    }
    match figures.ratio {
        Some(r) if figures.clear => ratio_text(r),
        Some(r) => format!("{}°", ratio_text(r)),
        None => "-".to_string(),
    }
}

/// The text of the figure a cell's rule judges, `-` when it has none.
pub fn judged_text(cell: &Cell) -> String {
    cell.figures
        .as_ref()
        .and_then(|f| f.judged.clone())
        .unwrap_or_else(|| "-".to_string())
}

/// The text of a cell's share, `-` when it has none.
pub fn share_text(cell: &Cell) -> String {
    cell.figures
        .as_ref()
        .and_then(|f| f.share)
        .map_or_else(|| "-".to_string(), |s| format!("{s:.1}"))
}

/// The overview's table: a header row (the loads), then a row per probe
/// (its figure's label and a cell per load), one more for its share and
/// one for the figure its rule judges when that is not the share.
fn table_rows(overview: &Overview) -> Vec<Vec<String>> {
    let header = ["probe", "figure"].map(String::from);
    let mut rows: Vec<Vec<String>> =
        vec![header.into_iter().chain(overview.loads.clone()).collect()];
    for p in &overview.probes {
        let cells = |text: &dyn Fn(&Cell) -> String| -> Vec<String> {
            overview
                .loads
                .iter()
                .map(|load| {
                    p.cells
                        .iter()
                        .find(|c| &c.load == load)
                        .map_or_else(String::new, text)
                })
                .collect()
        };
        rows.push(
            [
                vec![p.probe.clone(), p.figure.clone()],
                cells(&|c| cell_text(p, c)),
            ]
            .concat(),
        );
        if let Some(share) = &p.share {
            rows.push([vec![String::new(), share.clone()], cells(&share_text)].concat());
        }
        if let Some(rule) = p.rule.as_ref().filter(|r| !r.is_share) {
            rows.push(
                [
                    vec![String::new(), rule.figure.clone()],
                    cells(&judged_text),
                ]
                .concat(),
            );
        }
    }
    rows
}

/// The lines under the table: each probe's verdict, the summary line and
/// the legend.
fn closing_lines(overview: &Overview) -> Vec<String> {
    overview
        .probes
        .iter()
        .map(ProbeOverview::verdict)
        .chain(overview.summary())
        .chain(legend(overview))
        .collect()
}

/// The overview as console text: its table, aligned, then the verdicts,
/// the summary line and the legend; empty when no probe has an overview
/// figure.
pub fn render(run: &RunDocument) -> String {
    let overview = of(run);
    if overview.probes.is_empty() {
        return String::new();
    }
    let rows = table_rows(&overview);
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::from("\n=== Overview ===\n");
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, &w))| match i {
                0 | 1 => format!("{cell:<w$}"),
                _ => format!("{cell:>w$}"),
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out.push('\n');
    closing_lines(&overview)
        .into_iter()
        .fold(out, |out, line| out + &line + "\n")
}

/// The overview as Markdown: a section with its table and the verdicts,
/// summary and legend as a list; empty when no probe has an overview
/// figure.
pub fn render_markdown(run: &RunDocument) -> String {
    let overview = of(run);
    if overview.probes.is_empty() {
        return String::new();
    }
    let rows = table_rows(&overview);
    let mut out = String::from("\n## Overview\n\n");
    out.push_str(&pipe_row(&rows[0]));
    out.push_str(&pipe_row(&vec!["---"; rows[0].len()]));
    rows[1..]
        .iter()
        .for_each(|row| out.push_str(&pipe_row(row)));
    out.push('\n');
    closing_lines(&overview)
        .into_iter()
        .fold(out, |out, line| out + "- " + &line + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::fixture;
    use crate::document::schema::{FigureInterval, IntervalMethod, Intervals, SuiteRecord};

    fn interval(figure: &str, low: f64, high: f64) -> FigureInterval {
        FigureInterval {
            figure: figure.into(),
            value: (low + high) / 2.0,
            low,
            high,
            se: 1.0,
            df: 19.0,
            samples: 20,
        }
    }

    /// The fixture run with no probe's rule of what its user notices: its
    /// probes judged by their ratios alone, as runs older than the rules.
    fn by_ratio_alone() -> RunDocument {
        let mut run = fixture::run();
        for sheet in run.probes.values_mut() {
            sheet.figures.iter_mut().for_each(|f| f.noticeable = None);
        }
        run
    }

    fn with_intervals(figures: Vec<FigureInterval>) -> Option<Intervals> {
        Some(Intervals {
            method: IntervalMethod::BatchMeans,
            level: 0.95,
            figures,
        })
    }

    #[test]
    fn every_probe_declares_an_overview_figure() {
        for def in crate::probe::PROBES {
            let sheet = def.sheet();
            let declared = sheet
                .figures
                .iter()
                .filter(|f| matches!(f.overview, Some(OverviewRole::Ratio { .. })));
            // job's sheet falls back on its first headline figure.
            assert!(
                declared.count() > 0 || sheet.figures.iter().any(|f| f.headline),
                "{}",
                def.name
            );
            for f in sheet.figures.iter().filter(|f| f.overview.is_some()) {
                if f.overview == Some(OverviewRole::Share) {
                    assert_eq!(f.unit, crate::figures::Unit::Percent, "{}", def.name);
                }
            }
        }
        let set_of = |probe: &str| -> Vec<FigureDef> {
            let sheet = crate::probe::sheet_of(probe).unwrap();
            sheet
                .figures
                .into_iter()
                .filter(|f| f.overview.is_some())
                .collect()
        };
        let micro = set_of("micro");
        assert!(micro.len() > 10, "micro: one median per operation");
        let label = set_label(&micro.iter().collect::<Vec<_>>());
        assert_eq!(
            label,
            format!("median (µs) of {}, geometric mean", micro.len())
        );
        let fileio = set_label(&set_of("fileio").iter().collect::<Vec<_>>());
        assert_eq!(fileio, "avg (ms) of 2, geometric mean");
    }

    #[test]
    fn ratios_are_to_none_and_say_how_many_times_worse() {
        let overview = of(&fixture::run());
        assert_eq!(
            overview.loads,
            ["none", "burn", "cmd:stress-ng --cpu 2", "video"]
        );
        let audio = &overview.probes[0];
        assert_eq!(audio.figure, "latency mean (ms)");
        assert_eq!(audio.share.as_deref(), Some("deadlines met %"));
        let burn = audio.cells[1].figures.as_ref().unwrap();
        assert!((burn.ratio.unwrap() - 1234.5 / 52.5).abs() < 1e-9);
        assert!(burn.clear && burn.worse());
        assert_eq!(burn.share, Some(90.0));
        assert_eq!(audio.cells[0].figures.as_ref().unwrap().ratio, Some(1.0));
        assert!(audio.cells[3].figures.is_none(), "video failed");
        // Gaming's FPS is better higher: the ratio is none's over burn's
        // (both 58.25 in the fixture).
        let gaming = &overview.probes[1];
        assert_eq!(gaming.figure, "FPS");
        let fps = gaming.cells[1].figures.as_ref().unwrap();
        assert_eq!(fps.ratio, Some(1.0));
        assert_eq!(fps.share, Some(93.33));
    }

    #[test]
    fn the_verdict_names_the_worst_loads_and_a_low_share() {
        let overview = of(&by_ratio_alone());
        assert_eq!(
            overview.probes[0].verdict(),
            "audio: 38× later under cmd:stress-ng --cpu 2, 24× under burn; \
             90 % deadlines met under none, 90 % under burn, 90 % under cmd:stress-ng --cpu 2; \
             failed under video"
        );
        let mut run = by_ratio_alone();
        for s in &mut run.scenarios {
            let figures = &mut s.outcome.result.as_mut().map(|r| &mut r.figures);
            if let Some(figures) = figures {
                figures.insert("latency_mean_us".into(), 52.5);
                figures.insert("deadlines_met_pct".into(), 100.0);
                figures.insert("desired_cpu_pct".into(), 100.0);
            }
        }
        run.scenarios.retain(|s| s.load != "video");
        let overview = of(&run);
        assert_eq!(overview.probes[0].verdict(), "audio: fine under every load");
        assert_eq!(
            overview.probes[1].verdict(),
            "gaming: fine under every load"
        );
        run.scenarios.retain(|s| s.load != "none");
        let overview = of(&run);
        assert!(!overview.probes[0].has_reference);
        assert!(overview.probes[0]
            .verdict()
            .contains("not measured under none"));
        assert_eq!(
            cell_text(&overview.probes[0], &overview.probes[0].cells[0]),
            "0.052"
        );
        assert_eq!(overview.summary(), None);
    }

    #[test]
    fn a_low_share_never_reads_as_the_fine_threshold() {
        assert_eq!(share_words(94.6), "94.6 %");
        assert_eq!(share_words(94.4), "94 %");
        assert_eq!(share_words(7.5), "8 %");
    }

    #[test]
    fn a_ratio_within_the_intervals_is_not_called_worse() {
        let mut run = by_ratio_alone();
        run.scenarios[0].intervals = with_intervals(vec![interval("mean", 40.0, 1300.0)]);
        run.scenarios[1].intervals = with_intervals(vec![interval("mean", 1000.0, 1500.0)]);
        let overview = of(&run);
        let audio = &overview.probes[0];
        let burn = audio.cells[1].figures.as_ref().unwrap();
        assert!(!burn.clear && !burn.worse());
        assert_eq!(cell_text(audio, &audio.cells[1]), "23.5×°");
        assert!(burn.unclear());
        assert!(
            audio
                .verdict()
                .contains("24× later under burn within the noise (°)"),
            "not called worse, nor fine: {}",
            audio.verdict()
        );
        assert_eq!(burn.band(), 1, "the share of 90 % is still low");
        run.scenarios[0].intervals = with_intervals(vec![interval("mean", 40.0, 60.0)]);
        let overview = of(&run);
        assert!(overview.probes[0].cells[1]
            .figures
            .as_ref()
            .unwrap()
            .worse());
    }

    #[test]
    fn a_set_of_figures_takes_the_geometric_mean_of_their_ratios() {
        let mut run = by_ratio_alone();
        let sheet = run.probes.get_mut("audio").unwrap();
        for f in &mut sheet.figures {
            f.overview = match f.key.as_str() {
                "p50" | "p99" => Some(OverviewRole::ratio("slower")),
                _ => None,
            };
        }
        // p50 and p99 both scale with the mean in the fixture: under burn
        // each is 1234.5 / 52.5 times none's.
        let overview = of(&run);
        let audio = &overview.probes[0];
        assert_eq!(audio.figure, "(ms) of 2, geometric mean", "p50 and p99");
        assert_eq!(audio.share, None);
        let burn = audio.cells[1].figures.as_ref().unwrap();
        assert!((burn.ratio.unwrap() - 1234.5 / 52.5).abs() < 1e-9);
        assert_eq!(burn.value, None);
        assert_eq!(cell_text(audio, &audio.cells[0]), "1.00×", "none's ratio");
        assert!(audio.verdict().starts_with("audio: 38× slower under cmd"));
        assert!((geometric_mean([2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(geometric_mean([]), None);
    }

    #[test]
    fn a_sheet_without_a_declaration_falls_back_on_its_first_headline_figure() {
        let mut run = fixture::run();
        for sheet in run.probes.values_mut() {
            sheet.figures.iter_mut().for_each(|f| f.overview = None);
        }
        let overview = of(&run);
        assert_eq!(overview.probes[0].figure, "latency mean (ms)");
        assert_eq!(overview.probes[0].worse, "worse");
        assert_eq!(overview.probes[0].share, None);
        // A sheet stored without the field still reads.
        let mut value = serde_json::to_value(fixture::run()).unwrap();
        let figures = value["probes"]["audio"]["figures"].as_array_mut().unwrap();
        figures
            .iter_mut()
            .for_each(|f| _ = f.as_object_mut().unwrap().remove("overview"));
        let old: RunDocument = serde_json::from_value(value).unwrap();
        assert_eq!(of(&old).probes[0].worse, "worse");
    }

    /// The fixture run, as made from suite `name`.
    fn in_suite(name: &str) -> RunDocument {
        let mut run = fixture::run();
        run.suite = Some(SuiteRecord {
            name: name.to_string(),
            version: 1,
            summary: String::new(),
            source: "built-in".to_string(),
            options: Vec::new(),
            root_options_left_out: Vec::new(),
            groups: Vec::new(),
            left_out: Vec::new(),
        });
        run
    }

    #[test]
    fn the_summary_is_the_geometric_mean_of_the_ratios() {
        let summary = of(&in_suite("interbench")).summary().unwrap();
        // audio: 23.51 and 38.10 (geometric mean 29.93), gaming 1.00:
        // over all three, 9.64.
        assert_eq!(
            summary,
            "geometric mean of the ratios to none, suite interbench: 9.64× (audio 29.9×, gaming 1.00×); the figures per scenario are above"
        );
        let overview = of(&fixture::run());
        assert!(overview.summary().unwrap().contains(", the run: 9.64×"));
    }

    #[test]
    fn bands_follow_the_worse_of_ratio_and_share() {
        let cell = |ratio: f64, share: Option<f64>| CellFigures {
            value: None,
            ratio: Some(ratio),
            clear: true,
            share,
            notice: None,
            judged: None,
        };
        assert_eq!(cell(1.1, None).band(), 0);
        assert_eq!(cell(1.5, Some(99.0)).band(), 0, "fine up to FINE_RATIO");
        assert_eq!(cell(1.6, Some(99.0)).band(), 1);
        assert_eq!(cell(3.0, Some(99.0)).band(), 2);
        assert_eq!(cell(5.0, None).band(), 3);
        assert_eq!(cell(1.0, Some(40.0)).band(), 3);
        assert_eq!(cell(1.0, Some(90.0)).band(), 1);
    }

    #[test]
    fn the_console_overview_has_a_row_per_probe_and_share_and_a_column_per_load() {
        let text = render(&fixture::run());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1], "=== Overview ===");
        assert!(
            lines[2].contains("figure") && lines[2].ends_with("video"),
            "{text}"
        );
        assert!(lines[3].starts_with("audio   latency mean (ms)"), "{text}");
        assert!(
            lines[3].contains("0.052") && lines[3].contains("23.5×"),
            "{text}"
        );
        assert!(lines[3].ends_with("failed"), "{text}");
        assert!(lines[4].starts_with("        deadlines met %"), "{text}");
        // Gaming's rule judges its 1 % low, which gets a row of its own.
        assert!(lines[7].starts_with("        1% low FPS"), "{text}");
        assert!(text.contains("\naudio: poor under "), "{text}");
        assert!(
            text.contains("\naudio: deadlines met % noticed below 100.0, poor below 99.0: "),
            "{text}"
        );
        assert!(
            text.contains("\ngeometric mean of the ratios to none, the run: "),
            "{text}"
        );
        let md = render_markdown(&in_suite("interbench"));
        assert!(
            md.starts_with("\n## Overview\n\n| probe | figure | none | burn |"),
            "{md}"
        );
        assert!(
            md.contains("\n| audio | latency mean (ms) | 0.052 | 23.5× |"),
            "{md}"
        );
        assert!(md.contains("\n- audio: poor under "), "{md}");
        assert!(md.contains("none, suite interbench: 9.64×"), "{md}");
    }

    /// The fixture run with audio's deadlines met at `burn_pct` under
    /// burn and 100 % elsewhere.
    fn audio_meeting(burn_pct: f64) -> RunDocument {
        let mut run = fixture::run();
        for s in run.scenarios.iter_mut().filter(|s| s.probe == "audio") {
            if let Some(result) = s.outcome.result.as_mut() {
                let met = if s.load == "burn" { burn_pct } else { 100.0 };
                result.figures.insert("deadlines_met_pct".into(), met);
            }
        }
        run.scenarios.retain(|s| s.load != "video");
        run
    }

    #[test]
    fn a_probe_is_judged_first_by_what_its_user_notices() {
        // 24× later under burn with every deadline met: nobody hears it.
        let overview = of(&audio_meeting(100.0));
        let audio = &overview.probes[0];
        let burn = audio.cells[1].figures.as_ref().unwrap();
        assert!(burn.worse(), "the ratio is still far above 1.5");
        assert_eq!(burn.notice, Some(Notice::Unnoticed));
        assert_eq!(burn.band(), 1, "not red: only worse than none");
        assert_eq!(
            audio.verdict(),
            "audio: 38× later under cmd:stress-ng --cpu 2, 24× under burn, not noticed"
        );
        assert_eq!(audio.cells[0].figures.as_ref().unwrap().band(), 0);
        // A few deadlines missed, at a ratio of 24: noticed, said with it.
        let overview = of(&audio_meeting(99.5));
        let audio = &overview.probes[0];
        assert_eq!(audio.cells[1].figures.as_ref().unwrap().band(), 2);
        assert_eq!(
            audio.verdict(),
            "audio: noticed under burn (deadlines met % 99.5, 24× later); \
             38× later under cmd:stress-ng --cpu 2, not noticed"
        );
        // 4 % missed: poor, whatever the ratio.
        let overview = of(&audio_meeting(96.0));
        let burn = overview.probes[0].cells[1].figures.as_ref().unwrap();
        assert_eq!((burn.notice, burn.band()), (Some(Notice::Poor), 3));
        // Judged without a `none` as well: the rule needs no ratio.
        let mut run = audio_meeting(96.0);
        run.scenarios.retain(|s| s.load != "none");
        let overview = of(&run);
        let audio = &overview.probes[0];
        assert!(!audio.has_reference);
        assert_eq!(
            audio.verdict(),
            "audio: poor under burn (deadlines met % 96.0); fine under cmd:stress-ng --cpu 2"
        );
        let html = crate::report::heat_map::render(&run, &["audio"]);
        assert!(html.contains("<td class=\"b3\">"), "{html}");
    }

    #[test]
    fn the_verdict_and_the_heat_map_follow_one_rule() {
        // A probe judged by ratio: "fine" in the verdict exactly when the
        // heat map colours the cell as fine (1.3× was fine and yellow).
        for ratio in [1.0, 1.3, 1.5, 1.6, 2.5, 6.0] {
            for met in [100.0, 96.0, 90.0, 60.0] {
                let mut run = by_ratio_alone();
                run.scenarios.retain(|s| s.load != "video");
                for s in run.scenarios.iter_mut().filter(|s| s.probe == "audio") {
                    let figures = &mut s.outcome.result.as_mut().unwrap().figures;
                    let mean = if s.load == "burn" { 52.5 * ratio } else { 52.5 };
                    figures.insert("latency_mean_us".into(), mean);
                    figures.insert("deadlines_met_pct".into(), met);
                }
                let overview = of(&run);
                let audio = &overview.probes[0];
                let band = audio.cells[1].figures.as_ref().unwrap().band();
                let verdict = audio.verdict();
                let fine = verdict.contains("fine under burn")
                    || verdict.ends_with("fine under every load");
                assert_eq!(fine, band == 0, "{ratio}, {met}: {verdict} (band {band})");
            }
        }
    }

    #[test]
    fn every_rule_of_what_a_user_notices_is_whole() {
        let mut judged = Vec::new();
        for def in crate::probe::PROBES {
            let sheet = def.sheet();
            let rules: Vec<&FigureDef> = sheet
                .figures
                .iter()
                .filter(|f| f.noticeable.is_some())
                .collect();
            assert!(rules.len() <= 1, "{}: one rule per probe", def.name);
            let Some(figure) = rules.first() else {
                continue;
            };
            let rule = figure.noticeable.as_ref().unwrap();
            let poor_is_worse = match figure.better {
                Better::Lower => rule.poor > rule.noticed,
                Better::Higher => rule.poor < rule.noticed,
            };
            assert!(poor_is_worse, "{}: {rule:?}", def.name);
            assert!(
                rule.source.len() > 40,
                "{}: say where it comes from",
                def.name
            );
            judged.push(def.name);
        }
        for probe in [
            "x", "audio", "video", "gaming", "fragment", "response", "command", "rtapp",
        ] {
            assert!(judged.contains(&probe), "{probe} has no rule: {judged:?}");
        }
    }
}
