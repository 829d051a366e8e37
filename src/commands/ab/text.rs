//! An experiment on the console: the answer first (per probe, the arms
//! ranked with their verdict under each load, the effect and its interval,
//! the loads' work beside it, and the A/A control's line as the noise
//! floor), then a table per scenario of every figure compared.

use crate::experiment::analysis::{Comparison, FigureAnalysis, VerdictName, FLOOR_PCT};
use crate::experiment::model::ExperimentDocument;
use crate::experiment::ranking::{LoadOutcome, RankedArm};
use crate::figures::ChangeUnit;
use crate::report::table::aligned;
use std::fmt::Write as _;

/// Marks a change shown in the figure's unit because in % of the baseline
/// it falls past [`FLOOR_PCT`].
const PAST_FLOOR_MARK: &str = " *";

/// The note under a table with a [`PAST_FLOOR_MARK`].
const PAST_FLOOR_NOTE: &str = "  * in the figure's unit: in % of the baseline, its change or interval falls below -100 %, which this figure cannot (the rounds vary more than its whole value)";

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
            .changes()
            .into_iter()
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
        // Columns as wide as their widest cell: arm names and labels have
        // no bound.
        let header = [
            "figure",
            "arm",
            "baseline",
            "change [95 % interval]",
            "p",
            "q",
            "verdict",
        ];
        let rows: Vec<Vec<String>> =
            std::iter::once(header.map(str::to_string).to_vec())
                .chain(scenario.figures.iter().flat_map(|figure| {
                    figure.comparisons.iter().map(|c| table_row(doc, figure, c))
                }))
                .collect();
        if rows.len() == 1 {
            let _ = writeln!(out, "  (no figure to compare)");
            continue;
        }
        for line in aligned(&rows).lines() {
            let _ = writeln!(out, "  {line}");
        }
        if rows.iter().any(|r| r[3].ends_with(PAST_FLOOR_MARK)) {
            let _ = writeln!(out, "{PAST_FLOOR_NOTE}");
        }
    }
    out
}

/// One arm's line of the answer (`baseline`: the baseline's own).
fn arm_line(arm: &RankedArm, baseline: bool) -> String {
    if baseline {
        return format!("{} (baseline)", arm.name);
    }
    let loads: Vec<String> = match arm.loads.is_empty() {
        // Every run of it left out (its settings stopped holding, or it
        // failed), or none shared a round with the baseline's.
        true => vec!["nothing compared (no round with its run and the baseline's)".to_string()],
        false => arm.loads.iter().map(load_text).collect(),
    };
    let work = arm
        .work_pct
        .map(|w| format!("; loads' work {w:+.1} %"))
        .unwrap_or_default();
    // The counts are the probe's figures' (the loads' work is not among
    // them), so they come before the loads' work, not after it.
    format!(
        "{}: {}; its figures {} better, {} worse, {} unchanged{work}",
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
        (Some(low), Some(high)) => format!(" [{}, {}]", pct(low), pct(high)),
        _ => String::new(),
    };
    let gain = l
        .change_pct
        .map(|g| format!(" {} %", pct(g)))
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

/// A change in % of the baseline, signed; one past [`FLOOR_PCT`] as
/// `< -100` (its value has no meaning, see there).
pub fn pct(value: f64) -> String {
    match value < FLOOR_PCT {
        true => format!("< {FLOOR_PCT:.0}"),
        false => format!("{value:+.1}"),
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

/// One comparison's row of a scenario's table, by column.
fn table_row(doc: &ExperimentDocument, f: &FigureAnalysis, c: &Comparison) -> Vec<String> {
    let unit = f.unit;
    let change = match (f.change, c.relative) {
        (ChangeUnit::Percent, Some(r)) if !r.past_floor() => {
            format!(
                "{:+.1} % [{:+.1}, {:+.1}]",
                r.shift_pct, r.low_pct, r.high_pct
            )
        }
        (_, relative) => format!(
            "{} [{}, {}]{}",
            signed(unit, c.shift),
            signed(unit, c.low),
            signed(unit, c.high),
            match relative.is_some_and(|r| r.past_floor()) {
                true => PAST_FLOOR_MARK,
                false => "",
            }
        ),
    };
    let seen = match (c.verdict, c.detectable) {
        (VerdictName::Unchanged, Some(d)) => {
            format!(" (could see {}{})", unit.show(d.abs()), unit.suffix())
        }
        (VerdictName::Unchanged, None) => " (too few rounds)".to_string(),
        _ => String::new(),
    };
    vec![
        f.label.clone(),
        doc.slots[c.slot].name.clone(),
        format!("{}{}", unit.show(c.baseline), unit.suffix()),
        change,
        format!("{:.4}", c.p),
        format!("{:.4}", c.q),
        format!("{}{seen}", verdict_word(c.verdict)),
    ]
}

/// `value` as `unit` shows it, with its sign.
pub fn signed(unit: crate::figures::Unit, value: f64) -> String {
    match value < 0.0 {
        true => unit.show(value),
        false => format!("+{}", unit.show(value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::fixture;

    /// The lines of the table of audio under burn, its header first.
    fn burn_table(text: &str) -> Vec<&str> {
        text.lines()
            .skip_while(|l| *l != "audio under burn")
            .skip(1)
            .take_while(|l| !l.is_empty())
            .collect()
    }

    #[test]
    fn a_long_arm_name_keeps_the_columns_aligned() {
        let long = "swappiness-ten-with-a-very-long-name";
        let text = render(&fixture::analysed(long));
        let table = burn_table(&text);
        assert!(table.len() > 2, "{text}");
        assert!(table.iter().any(|l| l.contains(long)), "{text}");
        assert!(table.iter().any(|l| l.contains("base-aa")), "{text}");
        // Every row's p column starts where the header's does.
        let p = table[0].find("  p  ").unwrap() + 2;
        for row in &table[1..] {
            let (before, after) = row.split_at(p);
            assert!(before.ends_with("  "), "{row}");
            assert!(after.starts_with("0.") || after.starts_with("1."), "{row}");
        }
    }

    #[test]
    fn a_fall_past_the_whole_baseline_is_shown_in_the_figures_unit() {
        let mut doc = fixture::analysed("n19");
        let mut analysis = doc.analysis.take().unwrap();
        let burn = analysis
            .scenarios
            .iter_mut()
            .find(|s| s.probe == "audio" && s.load == "burn")
            .unwrap();
        let mean = burn.figures.iter_mut().find(|f| f.overview).unwrap();
        let unit = mean.unit;
        let arm = mean.comparisons.iter_mut().find(|c| c.slot == 1).unwrap();
        // Rounds that vary more than the figure: the interval's low end
        // is 1.3 baselines below it.
        arm.low = -1.3 * arm.baseline;
        arm.relative.as_mut().unwrap().low_pct = -130.0;
        let low = signed(unit, arm.low);
        analysis.ranking = crate::experiment::ranking::rank(&doc, &analysis.scenarios);
        doc.analysis = Some(analysis);
        let text = render(&doc);
        assert!(!text.contains("-130"), "{text}");
        let row = burn_table(&text)
            .into_iter()
            .find(|l| l.contains(" n19 ") && l.contains("latency mean"))
            .unwrap();
        assert!(row.contains(&format!("[{low}, ")), "{row}");
        assert!(row.contains(PAST_FLOOR_MARK), "{row}");
        assert!(text.contains(PAST_FLOOR_NOTE), "{text}");
        // The answer's line clamps it.
        assert!(text.contains("[< -100, "), "{text}");
    }

    #[test]
    fn the_answer_counts_the_probes_figures_before_the_loads_work() {
        let text = render(&fixture::analysed("n19"));
        let line = text
            .lines()
            .find(|l| {
                l.trim_start().starts_with("1. n19:") || l.trim_start().starts_with("2. n19:")
            })
            .unwrap_or_else(|| panic!("no answer line for n19: {text}"));
        let counts = line.find("; its figures ").expect(line);
        let work = line.find("; loads' work ").expect(line);
        assert!(counts < work, "{line}");
        assert!(!line.ends_with(']'), "{line}");
    }

    #[test]
    fn an_arm_with_no_run_compared_says_so() {
        let mut doc = fixture::document(&["base", "gone"]);
        let runs: Vec<_> = fixture::runs()
            .into_iter()
            .filter(|((_, slot), _)| *slot != 1)
            .collect();
        doc.analysis = Some(crate::experiment::analysis::analyse(&doc, &runs));
        let text = render(&doc);
        assert!(text.contains("gone: nothing compared"), "{text}");
    }

    #[test]
    fn the_arms_show_what_their_settings_replaced() {
        let text = render(&fixture::analysed("s10"));
        assert!(text.contains("  s10: vm.swappiness 60 → 10\n"), "{text}");
        assert!(text.contains("  base: the system as it is\n"), "{text}");
        let json = serde_json::to_value(fixture::analysed("s10")).unwrap();
        assert_eq!(json["arms"][1]["originals"]["vm.swappiness=10"], "60");
        assert!(json["arms"][0].get("originals").is_none());
        let page = super::super::html::render(&fixture::analysed("s10"));
        assert!(page.contains("s10: vm.swappiness 60 → 10"));
    }
}
