//! The answer of an experiment: for each probe, the arms ranked by how much
//! better its overview figure got against the baseline across its loads
//! (the mean of the relative shifts, signed so that above 0 is better),
//! each with its verdict under each load and what the loads' own work did;
//! the A/A control apart, as the noise floor.

use super::analysis::{Comparison, FigureAnalysis, ScenarioAnalysis, VerdictName, FLOOR_PCT};
use super::model::ExperimentDocument;
use crate::figures::Better;
use serde::{Deserialize, Serialize};

/// One probe's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeRanking {
    pub probe: String,
    /// The figure the arms are ranked by (its label).
    pub figure: String,
    /// The arms, best first; the baseline among them (gain 0).
    pub arms: Vec<RankedArm>,
    /// The A/A control: the baseline against itself.
    pub control: Option<RankedArm>,
}

/// An arm (a slot) on one probe.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankedArm {
    pub slot: usize,
    pub name: String,
    /// Mean over the loads of the overview figure's improvement in % of
    /// the baseline (above 0: better); `None` for the baseline's own row
    /// or when no load had one.
    pub gain_pct: Option<f64>,
    /// Under each load: the overview figure's comparison.
    pub loads: Vec<LoadOutcome>,
    /// Verdicts over every main figure of the probe under every load.
    pub better: usize,
    pub worse: usize,
    pub unchanged: usize,
    /// Mean change of the loads' work in % (above 0: more work done).
    pub work_pct: Option<f64>,
}

/// The overview figure of one scenario for one slot.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoadOutcome {
    pub load: String,
    pub verdict: VerdictName,
    /// The change and its interval in % of the baseline, signed as the
    /// figure moved.
    pub change_pct: Option<f64>,
    pub low_pct: Option<f64>,
    pub high_pct: Option<f64>,
    /// The change as an improvement (above 0: better), what arms are
    /// ranked by.
    pub gain_pct: Option<f64>,
    /// The smallest change these rounds could see, in %.
    pub detectable_pct: Option<f64>,
}

/// The answer for each probe of `scenarios`.
pub fn rank(doc: &ExperimentDocument, scenarios: &[ScenarioAnalysis]) -> Vec<ProbeRanking> {
    let mut probes: Vec<&str> = scenarios.iter().map(|s| s.probe.as_str()).collect();
    probes.dedup();
    probes
        .into_iter()
        .map(|probe| {
            let of_probe: Vec<&ScenarioAnalysis> =
                scenarios.iter().filter(|s| s.probe == probe).collect();
            let figure = of_probe
                .iter()
                .flat_map(|s| &s.figures)
                .find(|f| f.overview)
                .or_else(|| of_probe.iter().flat_map(|s| &s.figures).find(|f| !f.cost))
                .map(|f| f.label.clone())
                .unwrap_or_default();
            let ranked = |slot: usize| ranked_arm(doc, slot, &of_probe);
            let mut arms: Vec<RankedArm> = (0..doc.slots.len())
                .filter(|&slot| !doc.slots[slot].aa)
                .map(ranked)
                .collect();
            arms.sort_by(|a, b| {
                let gain = |r: &RankedArm| r.gain_pct.unwrap_or(0.0);
                gain(b).total_cmp(&gain(a))
            });
            ProbeRanking {
                probe: probe.to_string(),
                figure,
                arms,
                control: doc.slots.iter().position(|s| s.aa).map(ranked),
            }
        })
        .collect()
}

/// `slot` on the scenarios of one probe.
fn ranked_arm(doc: &ExperimentDocument, slot: usize, scenarios: &[&ScenarioAnalysis]) -> RankedArm {
    let of = |f: &'_ FigureAnalysis| -> Option<Comparison> {
        f.comparisons.iter().find(|c| c.slot == slot).cloned()
    };
    let loads: Vec<LoadOutcome> = scenarios
        .iter()
        .filter_map(|s| {
            let figure = s.figures.iter().find(|f| f.overview)?;
            let c = of(figure)?;
            Some(load_outcome(&s.load, figure, &c))
        })
        .collect();
    let verdicts: Vec<VerdictName> = scenarios
        .iter()
        .flat_map(|s| s.figures.iter().filter(|f| !f.cost))
        .filter_map(|f| of(f).map(|c| c.verdict))
        .collect();
    let count = |v: VerdictName| verdicts.iter().filter(|&&x| x == v).count();
    let work: Vec<f64> = scenarios
        .iter()
        .flat_map(|s| s.figures.iter().filter(|f| f.cost))
        .filter_map(|f| of(f)?.relative.map(|r| r.shift_pct.max(FLOOR_PCT)))
        .collect();
    RankedArm {
        slot,
        name: doc.slots[slot].name.clone(),
        gain_pct: mean(loads.iter().filter_map(|l| l.gain_pct)),
        loads,
        better: count(VerdictName::Better),
        worse: count(VerdictName::Worse),
        unchanged: count(VerdictName::Unchanged),
        work_pct: mean(work.iter().copied()),
    }
}

/// The overview figure's outcome under `load`.
fn load_outcome(load: &str, figure: &FigureAnalysis, c: &Comparison) -> LoadOutcome {
    let sign = match figure.better {
        Better::Higher => 1.0,
        Better::Lower => -1.0,
    };
    let relative = c.relative;
    LoadOutcome {
        load: load.to_string(),
        verdict: c.verdict,
        change_pct: relative.map(|r| r.shift_pct),
        low_pct: relative.map(|r| r.low_pct),
        high_pct: relative.map(|r| r.high_pct),
        // A fall past the whole baseline is the rounds' spread, not more
        // than all of the figure gone: it counts as -100 %.
        gain_pct: relative.map(|r| sign * r.shift_pct.max(FLOOR_PCT)),
        detectable_pct: relative.and_then(|r| r.detectable_pct),
    }
}

/// The mean of `values`, `None` when there are none.
fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}
