//! The analysis on synthetic runs (the document's fixture): an arm that
//! halves audio's latency under burn every round is called better and
//! ranked first; the A/A control, a per cent off either way, is not.

use super::analysis::{self, VerdictName};
use super::fixture::{self, document, run_with, ROUNDS};

#[test]
fn a_consistent_arm_is_better_and_the_aa_control_is_not() {
    let doc = document(&["base", "n19"]);
    let analysis = analysis::analyse(&doc, &fixture::runs());
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
    let analysis = analysis::analyse(&document(&["base", "n19"]), &[((0, 1), run_with(1.0))]);
    assert_eq!(analysis.tests, 0);
    assert!(analysis.scenarios.is_empty());
}

#[test]
fn a_fall_past_the_whole_baseline_counts_as_minus_100_in_the_ranking() {
    let mut doc = fixture::analysed("n19");
    let mut scenarios = doc.analysis.take().unwrap().scenarios;
    let burn = scenarios
        .iter_mut()
        .find(|s| s.probe == "audio" && s.load == "burn")
        .unwrap();
    let mean = burn.figures.iter_mut().find(|f| f.overview).unwrap();
    let arm = mean.comparisons.iter_mut().find(|c| c.slot == 1).unwrap();
    arm.relative.as_mut().unwrap().shift_pct = -250.0;
    let ranking = super::ranking::rank(&doc, &scenarios);
    let audio = ranking.iter().find(|r| r.probe == "audio").unwrap();
    let under_burn = audio.arms[0]
        .loads
        .iter()
        .find(|l| l.load == "burn")
        .unwrap();
    assert_eq!(under_burn.gain_pct, Some(100.0));
    assert_eq!(under_burn.change_pct, Some(-250.0), "kept as computed");
}
