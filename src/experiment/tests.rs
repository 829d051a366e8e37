//! The analysis on synthetic runs (the document's fixture): an arm that
//! halves audio's latency under burn every round is called better and
//! ranked first; the A/A control, a per cent off either way, is not.

use super::analysis::{self, VerdictName};
use super::model::{ExperimentDocument, SCHEMA};
use super::plan::{self, OrderKind};
use crate::document::fixture;
use crate::document::schema::RunDocument;

/// Enough for a p-value of 2/2^12 to pass Benjamini–Hochberg over the
/// fixture's comparisons.
const ROUNDS: u32 = 12;

/// An experiment of `base` and `n19` with the A/A control, before its runs.
fn document() -> ExperimentDocument {
    let names = ["base".to_string(), "n19".to_string()];
    let slots = plan::slots(&names, true);
    ExperimentDocument {
        schema: SCHEMA.to_string(),
        id: "ab-test".to_string(),
        started: "2026-11-29T03:00:00Z".to_string(),
        finished: None,
        interrupted: false,
        command_line: Vec::new(),
        seed: 1,
        order: OrderKind::Fixed,
        rounds: ROUNDS,
        alpha: 0.05,
        arms: Vec::new(),
        orders: plan::orders(OrderKind::Fixed, slots.len(), ROUNDS, 1),
        slots,
        runs: Vec::new(),
        analysis: None,
    }
}

/// The fixture run with audio's latency under burn scaled by `factor`.
fn run_with(factor: f64) -> RunDocument {
    let mut run = fixture::run();
    let scenario = run
        .scenarios
        .iter_mut()
        .find(|s| s.probe == "audio" && s.load == "burn")
        .unwrap();
    let figures = &mut scenario.outcome.result.as_mut().unwrap().figures;
    for (key, value) in figures.iter_mut() {
        if key.starts_with("latency_") {
            *value *= factor;
        }
    }
    run
}

#[test]
fn a_consistent_arm_is_better_and_the_aa_control_is_not() {
    let doc = document();
    let mut runs = Vec::new();
    for round in 0..ROUNDS {
        // The machine drifts from round to round; each arm moves with it.
        let drift = 1.0 + 0.1 * f64::from(round % 3) + 0.01 * f64::from(round);
        let aa = if round % 2 == 0 { 1.01 } else { 0.99 };
        runs.push(((round, 0), run_with(drift)));
        runs.push(((round, 1), run_with(drift * 0.5)));
        runs.push(((round, 2), run_with(drift * aa)));
    }
    let analysis = analysis::analyse(&doc, &runs);
    let burn = analysis
        .scenarios
        .iter()
        .find(|s| s.probe == "audio" && s.load == "burn")
        .unwrap();
    let mean = burn.figures.iter().find(|f| f.key == "mean").unwrap();
    assert!(mean.overview);
    assert_eq!(mean.values.len(), 3);
    let arm = mean.comparisons.iter().find(|c| c.slot == 1).unwrap();
    assert_eq!(
        arm.verdict,
        VerdictName::Better,
        "{arm:?} of {} tests",
        analysis.tests
    );
    assert_eq!(arm.rounds, ROUNDS as usize);
    let relative = arm.relative.unwrap();
    assert!((relative.shift_pct + 50.0).abs() < 5.0, "{relative:?}");
    let control = mean.comparisons.iter().find(|c| c.slot == 2).unwrap();
    assert_eq!(control.verdict, VerdictName::Unchanged);
    assert!(control.detectable.is_some());
    // Nothing else moved: no other verdict but the arm's on audio under burn.
    for s in &analysis.scenarios {
        for f in &s.figures {
            for c in &f.comparisons {
                let moved = s.load == "burn" && s.probe == "audio" && c.slot == 1;
                if !moved {
                    assert_eq!(
                        c.verdict,
                        VerdictName::Unchanged,
                        "{} {} {}",
                        s.probe,
                        s.load,
                        f.key
                    );
                }
                assert!(c.q >= c.p);
            }
        }
    }
    let audio = analysis
        .ranking
        .iter()
        .find(|r| r.probe == "audio")
        .unwrap();
    assert_eq!(audio.arms[0].name, "n19");
    // Its mean over audio's loads: 50 % under burn, 0 under the others.
    assert!(audio.arms[0].gain_pct.unwrap() > 10.0);
    assert_eq!(audio.control.as_ref().unwrap().name, "base-aa");
}

#[test]
fn no_baseline_run_is_an_empty_analysis() {
    let analysis = analysis::analyse(&document(), &[((0, 1), run_with(1.0))]);
    assert_eq!(analysis.tests, 0);
    assert!(analysis.scenarios.is_empty());
}
