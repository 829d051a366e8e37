//! An experiment on the console: the answer first (per probe, the arms
//! ranked with their verdict under each load, the effect and its interval,
//! the loads' work beside it, and the A/A control's line as the noise
//! floor), then a table per scenario of every figure compared.

use crate::experiment::analysis::{Comparison, FigureAnalysis, VerdictName};
use crate::experiment::model::ExperimentDocument;
use crate::experiment::ranking::{LoadOutcome, RankedArm};
use crate::figures::ChangeUnit;
use std::fmt::Write as _;

/// The experiment `doc` (analysed) as text.
pub fn render(doc: &ExperimentDocument) -> String {
    let mut out = String::new();
    let complete = doc.complete_rounds().len();
    let _ = writeln!(
        out,
        "Experiment {}: {} arms, {} of {} rounds complete, seed {}, {} order{}",
        doc.id,
        doc.arms.len(),
        complete,
        doc.rounds,
        doc.seed,
        match doc.order {
            crate::experiment::plan::OrderKind::Balanced => "balanced",
            crate::experiment::plan::OrderKind::Fixed => "fixed",
        },
        match doc.slots.iter().any(|s| s.aa) {
            true => ", A/A control",
            false => "",
        }
    );
    for arm in &doc.arms {
        let what: Vec<String> = arm
            .settings
            .iter()
            .cloned()
            .chain((!arm.spec.run.is_empty()).then(|| format!("run {}", arm.spec.run.join(" "))))
            .collect();
        let what = match what.is_empty() {
            true => "the system as it is".to_string(),
            false => what.join(", "),
        };
        let _ = writeln!(out, "  {}: {what}", arm.spec.name);
    }
    let Some(analysis) = &doc.analysis else {
        return out;
    };
    let _ = writeln!(
        out,
        "\nAnswer (each arm against {}; verdicts at a false discovery rate of {} over {} comparisons of arms, the A/A control's apart; one difference alone among them needs {} rounds or more, all in its favour):",
        doc.arms[0].spec.name, doc.alpha, analysis.tests, analysis.rounds_for_one
    );
    for probe in &analysis.ranking {
        let _ = writeln!(out, "\n{} — {}", probe.probe, probe.figure);
        for (rank, arm) in probe.arms.iter().enumerate() {
            let _ = writeln!(out, "  {}. {}", rank + 1, arm_line(arm, arm.slot == 0));
        }
        if let Some(control) = &probe.control {
            let _ = writeln!(out, "  noise floor (A/A) {}", arm_line(control, false));
        }
    }
    for scenario in &analysis.scenarios {
        let _ = writeln!(out, "\n{} under {}", scenario.probe, scenario.load);
        let _ = writeln!(
            out,
            "  {:<28} {:<12} {:>12} {:>26} {:>8} {:>8}  verdict",
            "figure", "arm", "baseline", "change [95 % interval]", "p", "q"
        );
        for figure in &scenario.figures {
            for c in &figure.comparisons {
                let _ = writeln!(out, "  {}", table_row(doc, figure, c));
            }
        }
    }
    out
}

/// One arm's line of the answer (`baseline`: the baseline's own).
fn arm_line(arm: &RankedArm, baseline: bool) -> String {
    if baseline {
        return format!("{} (baseline)", arm.name);
    }
    let loads: Vec<String> = arm.loads.iter().map(load_text).collect();
    let work = arm
        .work_pct
        .map(|w| format!("; loads' work {w:+.1} %"))
        .unwrap_or_default();
    format!(
        "{}: {}{work} [{} better, {} worse, {} unchanged]",
        arm.name,
        loads.join(", "),
        arm.better,
        arm.worse,
        arm.unchanged
    )
}

/// The overview figure under one load, its change signed as the figure
/// moved: `burn better -42.0 % [-50.0, -30.0]`, or `none unchanged (+1.0 %
/// [-2.0, +4.0], could see ±3.0 %)`.
fn load_text(l: &LoadOutcome) -> String {
    let interval = match (l.low_pct, l.high_pct) {
        (Some(low), Some(high)) => format!(" [{low:+.1}, {high:+.1}]"),
        _ => String::new(),
    };
    let gain = l
        .change_pct
        .map(|g| format!(" {g:+.1} %"))
        .unwrap_or_default();
    match l.verdict {
        VerdictName::Unchanged => {
            let seen = match l.detectable_pct {
                Some(d) => format!(", could see ±{:.1} %", d.abs()),
                None => ", too few rounds to see any".to_string(),
            };
            format!("{} unchanged ({}{interval}{seen})", l.load, gain.trim())
        }
        v => format!("{} {}{gain}{interval}", l.load, verdict_word(v)),
    }
}

/// A verdict in words.
pub fn verdict_word(v: VerdictName) -> &'static str {
    match v {
        VerdictName::Better => "better",
        VerdictName::Worse => "worse",
        VerdictName::Unchanged => "unchanged",
    }
}

/// One comparison's row of a scenario's table.
fn table_row(doc: &ExperimentDocument, f: &FigureAnalysis, c: &Comparison) -> String {
    let unit = f.unit;
    let change = match (f.change, c.relative) {
        (ChangeUnit::Percent, Some(r)) => {
            format!(
                "{:+.1} % [{:+.1}, {:+.1}]",
                r.shift_pct, r.low_pct, r.high_pct
            )
        }
        _ => format!(
            "{} [{}, {}]",
            signed(unit, c.shift),
            signed(unit, c.low),
            signed(unit, c.high)
        ),
    };
    let seen = match (c.verdict, c.detectable) {
        (VerdictName::Unchanged, Some(d)) => {
            format!(" (could see {}{})", unit.show(d.abs()), unit.suffix())
        }
        (VerdictName::Unchanged, None) => " (too few rounds)".to_string(),
        _ => String::new(),
    };
    format!(
        "{:<28} {:<12} {:>12} {:>26} {:>8.4} {:>8.4}  {}{seen}",
        f.label,
        doc.slots[c.slot].name,
        format!("{}{}", unit.show(c.baseline), unit.suffix()),
        change,
        c.p,
        c.q,
        verdict_word(c.verdict)
    )
}

/// `value` as `unit` shows it, with its sign.
pub fn signed(unit: crate::figures::Unit, value: f64) -> String {
    match value < 0.0 {
        true => unit.show(value),
        false => format!("+{}", unit.show(value)),
    }
}
