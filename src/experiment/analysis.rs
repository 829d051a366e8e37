//! The experiment's statistics, over rounds rather than within runs: for
//! each scenario (probe × load) and each of its probe's main figures (those
//! its sheet gives the overview or a rule of when its user notices them)
//! and each part of its load's work (the cost), every slot's value in each
//! round from its run document; each arm, and the A/A control, against the
//! baseline by the sign-flip test on the rounds' differences with the
//! Hodges–Lehmann shift and its bootstrap interval (`stats::paired`, whose
//! statistic is Wilcoxon's signed rank sum);
//! Benjamini–Hochberg over every comparison of an arm in the experiment (the
//! A/A control's are a family of their own, judged as an arm with no effect
//! would be); a verdict by
//! the figure's better direction, and for an unchanged one the smallest
//! shift the rounds could have found. The answer per probe is `ranking`.

use super::model::ExperimentDocument;
use super::ranking::{self, ProbeRanking};
use crate::document::schema::{Measurement, RunDocument, ScenarioStatus};
use crate::figures::{Better, ChangeUnit, FigureDef, Unit};
use crate::stats::fdr::benjamini_hochberg;
use crate::stats::paired::{self, PairedOptions, PairedOutcome, Verdict};
use serde::{Deserialize, Serialize};

/// The analysis of an experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Analysis {
    /// Comparisons of arms (the A/A control's apart), over which the false
    /// discovery rate is held.
    pub tests: usize,
    /// The fewest rounds in which one difference among `tests` could be
    /// called (the smallest p-value of n rounds is 2/2^n, and it must reach
    /// α/`tests`).
    pub rounds_for_one: usize,
    pub scenarios: Vec<ScenarioAnalysis>,
    /// The answer: per probe, the arms ranked.
    pub ranking: Vec<ProbeRanking>,
}

/// One probe under one load.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScenarioAnalysis {
    pub probe: String,
    pub load: String,
    pub figures: Vec<FigureAnalysis>,
}

/// One figure of a scenario, compared across the slots.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FigureAnalysis {
    /// The figure's key (`p99`), or `work:PART` for a part of the load.
    pub key: String,
    pub label: String,
    pub unit: Unit,
    pub better: Better,
    pub change: ChangeUnit,
    /// The probe's overview figure (what the answer ranks arms by).
    pub overview: bool,
    /// The load's own work: the arm's cost, not the probe's feel.
    pub cost: bool,
    /// Each slot's value in each round (`None`: no value), by slot then round.
    pub values: Vec<Vec<Option<f64>>>,
    /// Each slot but the baseline's, against it.
    pub comparisons: Vec<Comparison>,
}

/// One slot against the baseline, on one figure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Comparison {
    pub slot: usize,
    /// Rounds where both had a value.
    pub rounds: usize,
    /// Median of the baseline's values over those rounds.
    pub baseline: f64,
    /// Hodges–Lehmann shift (slot − baseline) and its 95 % interval, in
    /// the figure's stored unit.
    pub shift: f64,
    pub low: f64,
    pub high: f64,
    /// The same in % of the baseline, for a figure whose changes are
    /// relative and whose baseline is above 0.
    pub relative: Option<RelativeShift>,
    pub p: f64,
    /// `p` adjusted over every comparison (Benjamini–Hochberg).
    pub q: f64,
    pub verdict: VerdictName,
    /// The smallest shift these rounds could find (80 % power at α), in the
    /// stored unit; `None` when they cannot reach α at all.
    pub detectable: Option<f64>,
}

/// A shift in % of the baseline.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct RelativeShift {
    pub shift_pct: f64,
    pub low_pct: f64,
    pub high_pct: f64,
    pub detectable_pct: Option<f64>,
}

/// The fall in % of the baseline past which a relative change means
/// nothing: the figures whose changes are relative are on a positive scale
/// (a latency, a rate, a count), which cannot fall by more than their whole
/// value. A shift or interval bound below it (the Hodges–Lehmann shift and
/// its bootstrap interval are of the rounds' differences, which can exceed
/// the baseline's median when the rounds vary more than the figure's size)
/// is kept as computed in the document, and shown in the figure's unit, or
/// as `< -100`, by the renderings; the answer's ranking counts it as -100.
pub const FLOOR_PCT: f64 = -100.0;

impl RelativeShift {
    /// Whether the shift or its interval falls past [`FLOOR_PCT`].
    pub fn past_floor(&self) -> bool {
        self.shift_pct < FLOOR_PCT || self.low_pct < FLOOR_PCT
    }
}

/// A verdict as the document names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictName {
    Better,
    Worse,
    Unchanged,
}

/// A figure to compare: a probe's, or a part of the load's work.
enum Measure<'a> {
    Probe(&'a FigureDef),
    Work(String),
}

impl Measure<'_> {
    fn of(&self, m: &Measurement) -> Option<f64> {
        if m.status != ScenarioStatus::Ok {
            return None;
        }
        match self {
            Measure::Probe(def) => m.result.as_ref()?.figure(def),
            Measure::Work(part) => m
                .load_work
                .iter()
                .find(|w| &w.load == part)
                .map(|w| w.rate_per_s),
        }
    }
}

/// Whether `def` is one of its probe's main figures.
fn is_main(def: &FigureDef) -> bool {
    def.overview.is_some() || def.noticeable.is_some()
}

/// Analyses `doc` with its runs that ended well (`runs`, by round and slot).
pub fn analyse(doc: &ExperimentDocument, runs: &[((u32, usize), RunDocument)]) -> Analysis {
    let run_of = |round: u32, slot: usize| {
        runs.iter()
            .find(|((r, s), _)| *r == round && *s == slot)
            .map(|(_, run)| run)
    };
    let Some(reference) = runs.iter().find(|((_, s), _)| *s == 0).map(|(_, r)| r) else {
        return Analysis {
            tests: 0,
            rounds_for_one: 0,
            scenarios: Vec::new(),
            ranking: Vec::new(),
        };
    };
    let options = PairedOptions {
        alpha: doc.alpha,
        seed: doc.seed,
        ..PairedOptions::default()
    };
    let mut scenarios = Vec::new();
    let mut outcomes = Vec::new();
    for scenario in &reference.scenarios {
        let Some(sheet) = reference.probes.get(&scenario.probe) else {
            continue;
        };
        let work_parts = scenario
            .outcome
            .load_work
            .iter()
            .map(|w| Measure::Work(w.load.clone()));
        let measures: Vec<Measure> = sheet
            .figures
            .iter()
            .filter(|d| is_main(d))
            .map(Measure::Probe)
            .chain(work_parts)
            .collect();
        let figures = measures
            .iter()
            .map(|measure| {
                let values: Vec<Vec<Option<f64>>> = (0..doc.slots.len())
                    .map(|slot| {
                        (0..doc.rounds)
                            .map(|round| {
                                let run = run_of(round, slot)?;
                                let found = run.scenarios.iter().find(|s| {
                                    s.probe == scenario.probe && s.load == scenario.load
                                })?;
                                measure.of(&found.outcome)
                            })
                            .collect()
                    })
                    .collect();
                let (figure, found) = figure_analysis(measure, values, &options);
                outcomes.extend(found);
                figure
            })
            .collect();
        scenarios.push(ScenarioAnalysis {
            probe: scenario.probe.clone(),
            load: scenario.load.clone(),
            figures,
        });
    }
    let tests = judge(
        &mut scenarios,
        &outcomes,
        &|slot| doc.slots[slot].aa,
        doc.alpha,
    );
    let ranking = ranking::rank(doc, &scenarios);
    Analysis {
        tests,
        rounds_for_one: paired::fewest_rounds(doc.alpha / tests.max(1) as f64),
        scenarios,
        ranking,
    }
}

/// The figure `measure` with each slot's `values`, each slot compared with
/// the baseline (verdicts come later, over every comparison), and the
/// comparisons' outcomes.
fn figure_analysis(
    measure: &Measure,
    values: Vec<Vec<Option<f64>>>,
    options: &PairedOptions,
) -> (FigureAnalysis, Vec<PairedOutcome>) {
    let (key, label, unit, better, change, overview, cost) = match measure {
        Measure::Probe(def) => (
            def.key.clone(),
            def.label.clone(),
            def.unit,
            def.better,
            def.change,
            matches!(
                def.overview,
                Some(crate::figures::OverviewRole::Ratio { .. })
            ),
            false,
        ),
        Measure::Work(part) => (
            format!("work:{part}"),
            format!("{part} work /s"),
            Unit::Rate,
            Better::Higher,
            ChangeUnit::Percent,
            false,
            true,
        ),
    };
    let (comparisons, outcomes) = (1..values.len())
        .filter_map(|slot| compare(&values[0], &values[slot], slot, change, options))
        .unzip();
    let figure = FigureAnalysis {
        key,
        label,
        unit,
        better,
        change,
        overview,
        cost,
        values,
        comparisons,
    };
    (figure, outcomes)
}

/// `slot`'s values against the baseline's over the rounds both have.
fn compare(
    base: &[Option<f64>],
    other: &[Option<f64>],
    slot: usize,
    change: ChangeUnit,
    options: &PairedOptions,
) -> Option<(Comparison, PairedOutcome)> {
    let (b, o): (Vec<f64>, Vec<f64>) = base
        .iter()
        .zip(other)
        .filter_map(|(b, o)| Some(((*b)?, (*o)?)))
        .unzip();
    let outcome = paired::compare(&b, &o, options)?;
    let relative = match change {
        ChangeUnit::Percent => outcome.relative().map(|r| RelativeShift {
            shift_pct: r.shift_pct,
            low_pct: r.low_pct,
            high_pct: r.high_pct,
            detectable_pct: r.detectable_pct,
        }),
        ChangeUnit::Points => None,
    };
    let comparison = Comparison {
        slot,
        rounds: outcome.rounds,
        baseline: outcome.baseline_median,
        shift: outcome.shift,
        low: outcome.shift_low,
        high: outcome.shift_high,
        relative,
        p: outcome.p,
        q: outcome.p,
        verdict: VerdictName::Unchanged,
        detectable: outcome.detectable,
    };
    Some((comparison, outcome))
}

/// Adjusts the comparisons' p-values (`outcomes`, in the order of the
/// comparisons) in two families, the arms' and the A/A control's (slots
/// where `is_control`), so that the control is judged as an arm with no
/// effect would be and does not dilute the arms' tests; gives each its
/// verdict at `alpha`. Returns how many comparisons of arms there are.
fn judge(
    scenarios: &mut [ScenarioAnalysis],
    outcomes: &[PairedOutcome],
    is_control: &dyn Fn(usize) -> bool,
    alpha: f64,
) -> usize {
    let slots: Vec<usize> = scenarios
        .iter()
        .flat_map(|s| &s.figures)
        .flat_map(|f| f.comparisons.iter().map(|c| c.slot))
        .collect();
    let mut q = vec![1.0; outcomes.len()];
    for control in [false, true] {
        let family: Vec<usize> = (0..outcomes.len())
            .filter(|&i| is_control(slots[i]) == control)
            .collect();
        let p: Vec<f64> = family.iter().map(|&i| outcomes[i].p).collect();
        for (&i, adjusted) in family.iter().zip(benjamini_hochberg(&p)) {
            q[i] = adjusted;
        }
    }
    let mut judged = outcomes.iter().zip(q);
    for figure in scenarios.iter_mut().flat_map(|s| s.figures.iter_mut()) {
        let higher_is_better = figure.better == Better::Higher;
        for c in &mut figure.comparisons {
            let (outcome, q) = judged.next().expect("one outcome per comparison");
            c.q = q;
            c.verdict = match outcome.verdict(q, alpha, higher_is_better) {
                Verdict::Better => VerdictName::Better,
                Verdict::Worse => VerdictName::Worse,
                Verdict::Unchanged => VerdictName::Unchanged,
            };
        }
    }
    slots.iter().filter(|&&slot| !is_control(slot)).count()
}
