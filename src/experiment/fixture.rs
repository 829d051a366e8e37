//! Experiments for unit tests: the document of arms named as asked before
//! its runs, the document's fixture run with audio's latency under burn
//! scaled, and an experiment analysed over such runs.

use super::analysis;
use super::arms::ArmSpec;
use super::model::{ArmRecord, ExperimentDocument, SCHEMA};
use super::plan::{self, OrderKind};
use crate::document::fixture;
use crate::document::schema::RunDocument;

/// Enough for a p-value of 2/2^12 to pass Benjamini–Hochberg over the
/// fixture's comparisons.
pub const ROUNDS: u32 = 12;

/// An experiment of arms named `names` (the first the baseline) with the
/// A/A control, before its runs; each arm but the baseline sets
/// `vm.swappiness=10` over 60.
pub fn document(names: &[&str]) -> ExperimentDocument {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let slots = plan::slots(&names, true);
    let arms = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let settings: Vec<String> = match i {
                0 => Vec::new(),
                _ => vec!["vm.swappiness=10".to_string()],
            };
            ArmRecord {
                spec: ArmSpec {
                    name: name.clone(),
                    system: settings.clone(),
                    commands: Vec::new(),
                    run: Vec::new(),
                },
                originals: settings.iter().map(|s| (s.clone(), "60".into())).collect(),
                settings,
                run_options: Vec::new(),
            }
        })
        .collect();
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
        arms,
        orders: plan::orders(OrderKind::Fixed, slots.len(), ROUNDS, 1),
        slots,
        runs: Vec::new(),
        analysis: None,
    }
}

/// The fixture run with audio's latency under burn scaled by `factor`.
pub fn run_with(factor: f64) -> RunDocument {
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

/// Each round's runs of a `base`-and-one-arm experiment: the machine
/// drifts from round to round and each slot moves with it; the arm halves
/// audio's latency under burn, the A/A control is a per cent off either
/// way.
pub fn runs() -> Vec<((u32, usize), RunDocument)> {
    let mut runs = Vec::new();
    for round in 0..ROUNDS {
        let drift = 1.0 + 0.1 * f64::from(round % 3) + 0.01 * f64::from(round);
        let aa = if round % 2 == 0 { 1.01 } else { 0.99 };
        runs.push(((round, 0), run_with(drift)));
        runs.push(((round, 1), run_with(drift * 0.5)));
        runs.push(((round, 2), run_with(drift * aa)));
    }
    runs
}

/// The experiment of `base` and `arm` (named so) analysed over [`runs`].
pub fn analysed(arm: &str) -> ExperimentDocument {
    let mut doc = document(&["base", arm]);
    doc.analysis = Some(analysis::analyse(&doc, &runs()));
    doc
}
