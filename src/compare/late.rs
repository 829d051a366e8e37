//! How the split of late events changed between runs. The compared
//! quantity is, per scenario and cause, the share of the probe's events
//! that were late with that cause: late events labelled with it over the
//! events split (both stored exact in `LateCauses`, for the whole
//! measurement and per sub-window, and merged by adding, so a merge or
//! `--repeat` compares the union). A run is tested against the baseline by
//! Welch's test on:
//!
//! - each repeat's share (`[r]`), where both runs have 3 or more repeats
//!   that split their events: spread over the run, bursts included;
//! - else each run's share over its sub-windows as clusters (`[s]`,
//!   `stats::ratio`), where both keep counts per sub-window: a burst of
//!   late events strays one sub-window, not as many independent events;
//! - else (documents made before the counts per sub-window were kept) the
//!   two-proportion z test on the whole-run counts (`[w]`,
//!   `stats::proportions`), which treats events as independent trials and
//!   so overstates significance; the legend says so.
//!
//! Sub-windows as clusters (a ratio estimator's error), rather than a
//! permutation test or a block bootstrap over the sub-windows: it is
//! deterministic and cheap, and its p-value has no floor (with Holm's
//! correction over 50 rows at 0.01, a p-value from draws needs more than
//! 5 000 draws per row before it can reach α/m at all); it weighs each
//! sub-window by its events as the run's share does (a plain mean of the
//! sub-windows' shares would weigh 3 events as much as 300); and it is the
//! batch-means argument the rest of `compare` makes: neighbouring
//! sub-windows still correlated are merged first, and the error never
//! falls below the binomial one. None of these sees drift from one run to
//! the next: `[s]`, like `[w]`, is the spread within each run.
//!
//! Whichever test, the p-values of every cause and scenario of a run are
//! corrected together (Holm's): up to 14 causes per scenario are tested at
//! once. No late row counts for `--fail-on`: the shares say why events
//! were late, the figures (deadlines met, latency percentiles) say how
//! late, and those are what it judges; and `[s]` is spread within each
//! run, which `--fail-on` leaves out of the figures' verdicts too (`[w]`).

mod render;

pub use render::{legend, table};

use super::{scenario_keys, Spread, Untested, Verdict};
use crate::document::estimate::MIN_REPEATS;
use crate::document::schema::{RunDocument, ScenarioResult, ScenarioStatus};
use crate::figures::late::LateCauses;
use crate::measure::late::Cause;
use crate::report::late::causes_of;
use crate::stats::{holm, proportions, ratio, welch, Estimate};
use serde::Serialize;

/// One run's share of events late with a row's cause.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LateCell {
    /// Events split, and of them late with the row's cause.
    pub events: u64,
    pub late: u64,
    /// `late` in % of `events`.
    pub pct_of_events: f64,
    /// Change of `pct_of_events` against the baseline, in %; `None` in the
    /// baseline, or when the baseline had none.
    pub change: Option<f64>,
    /// The test's two-sided p-value, before correction.
    pub p: Option<f64>,
    /// `p` corrected for every cause and scenario tested in this run
    /// (Holm's): what the verdict is decided by.
    pub p_adjusted: Option<f64>,
    pub verdict: Verdict,
    /// The spread the test judged against: the repeats' ([`Spread::Repeats`]),
    /// the sub-windows' ([`Spread::SubWindows`]) or none but chance over
    /// independent events ([`Spread::WithinRun`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub untested: Option<Untested>,
}

/// One scenario × cause of late events.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LateRow {
    pub probe: String,
    pub load: String,
    pub cause: Cause,
    /// One per run; `None` where the run has not split the scenario's
    /// late events.
    pub cells: Vec<Option<LateCell>>,
}

/// One run's counts of a row's cause: late with it and events split, each
/// repeat's share in % when the run has enough repeats that split, and
/// both counts per sub-window where the run keeps them.
#[derive(Debug, Clone)]
struct Counts {
    late: u64,
    events: u64,
    shares: Option<Vec<f64>>,
    sub_windows: Vec<(u64, u64)>,
}

impl Counts {
    fn of(scenario: &ScenarioResult, causes: &LateCauses, cause: Cause) -> Self {
        Self {
            late: causes.count(cause),
            events: causes.events(),
            shares: repeat_shares(scenario, cause),
            sub_windows: causes.sub_window_counts(cause),
        }
    }
}

/// Each repeat's share of events late with `cause`, in %: `None` with
/// fewer than [`MIN_REPEATS`] repeats or one that did not split events.
fn repeat_shares(scenario: &ScenarioResult, cause: Cause) -> Option<Vec<f64>> {
    let ok: Vec<_> = scenario
        .measurements()
        .iter()
        .filter(|m| m.status == ScenarioStatus::Ok)
        .collect();
    if scenario.repeats.len() < MIN_REPEATS || ok.len() < MIN_REPEATS {
        return None;
    }
    ok.iter()
        .map(|m| {
            let late = m.result.as_ref()?.late.as_ref()?;
            (late.events() > 0).then(|| pct(late.count(cause), late.events()))
        })
        .collect()
}

/// `late` in % of `events` (0 without events).
fn pct(late: u64, events: u64) -> f64 {
    match events {
        0 => 0.0,
        _ => 100.0 * late as f64 / events as f64,
    }
}

/// The rows of `runs` (the first the baseline): every scenario whose late
/// events some run split, every cause some run has a late event of; each
/// run's verdicts decided by its p-values corrected together.
pub fn rows(runs: &[RunDocument], alpha: f64) -> Vec<LateRow> {
    let mut rows = Vec::new();
    for (probe, load) in scenario_keys(runs) {
        let split: Vec<Option<(&ScenarioResult, &LateCauses)>> = runs
            .iter()
            .map(|run| {
                let s = run
                    .scenarios
                    .iter()
                    .find(|s| s.probe == probe && s.load == load)?;
                Some((s, causes_of(s)?))
            })
            .collect();
        for cause in Cause::ALL {
            if !split.iter().flatten().any(|(_, c)| c.count(cause) > 0) {
                continue;
            }
            let counts: Vec<Option<Counts>> = split
                .iter()
                .map(|c| c.map(|(s, c)| Counts::of(s, c, cause)))
                .collect();
            let cells = counts
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    c.as_ref()
                        .map(|c| cell(c, counts[0].as_ref().filter(|_| i > 0), i == 0))
                })
                .collect();
            rows.push(LateRow {
                probe: probe.clone(),
                load: load.clone(),
                cause,
                cells,
            });
        }
    }
    for run in 1..runs.len() {
        judge(&mut rows, run, alpha);
    }
    rows
}

/// Corrects the p-values of run `run`'s cells together and decides their
/// verdicts at `alpha`.
fn judge(rows: &mut [LateRow], run: usize, alpha: f64) {
    let tested: Vec<(usize, f64)> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, r.cells.get(run)?.as_ref()?.p?)))
        .collect();
    let adjusted = holm(&tested.iter().map(|(_, p)| *p).collect::<Vec<_>>());
    for ((i, _), p) in tested.into_iter().zip(adjusted) {
        let cell = rows[i].cells[run].as_mut().expect("tested above");
        cell.p_adjusted = Some(p);
        let up = cell.verdict == Verdict::Worse;
        cell.verdict = match (p < alpha, up) {
            (false, _) => Verdict::NoDifference,
            (true, false) => Verdict::Better,
            (true, true) => Verdict::Worse,
        };
    }
}

/// One run's cell, tested against `base`; its verdict holds only the
/// direction (`Worse` for a larger share) until [`judge`] decides.
fn cell(this: &Counts, base: Option<&Counts>, is_baseline: bool) -> LateCell {
    let mut cell = LateCell {
        events: this.events,
        late: this.late,
        pct_of_events: pct(this.late, this.events),
        change: None,
        p: None,
        p_adjusted: None,
        verdict: Verdict::Baseline,
        spread: None,
        untested: None,
    };
    if is_baseline {
        return cell;
    }
    let Some(base) = base else {
        cell.verdict = Verdict::Untested;
        cell.untested = Some(Untested::MissingBaseline);
        return cell;
    };
    let base_pct = pct(base.late, base.events);
    cell.change = (base_pct > 0.0).then(|| 100.0 * (cell.pct_of_events / base_pct - 1.0));
    let across_repeats = base
        .shares
        .as_deref()
        .zip(this.shares.as_deref())
        .and_then(|(b, t)| welch::test(&Estimate::of_samples(b)?, &Estimate::of_samples(t)?))
        .map(|t| (Spread::Repeats, t.p, t.t));
    let over_sub_windows = ratio::share(&base.sub_windows).zip(ratio::share(&this.sub_windows));
    let test = match (across_repeats, over_sub_windows) {
        (Some(test), _) => Some(test),
        (None, Some((b, t))) => welch::test(&b, &t).map(|t| (Spread::SubWindows, t.p, t.t)),
        (None, None) => proportions::test(base.late, base.events, this.late, this.events)
            .map(|t| (Spread::WithinRun, t.p, t.z)),
    };
    let Some((spread, p, direction)) = test else {
        cell.verdict = Verdict::Untested;
        cell.untested = Some(Untested::WithoutSpread);
        return cell;
    };
    cell.p = Some(p);
    cell.spread = Some(spread);
    cell.verdict = match direction > 0.0 {
        true => Verdict::Worse,
        false => Verdict::Better,
    };
    cell
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Comparison;
    use crate::report::late::tests::causes;

    /// The fixture run with `causes` as audio's split under burn.
    fn run_with(causes: Option<crate::figures::late::LateCauses>) -> RunDocument {
        let mut run = crate::document::fixture::run();
        run.scenarios[1].outcome.result.as_mut().unwrap().late = causes;
        run
    }

    #[test]
    fn the_share_of_events_late_for_each_cause_is_tested_against_the_baseline() {
        let runs = [
            run_with(Some(causes(40, 2))),
            run_with(Some(causes(8, 2))),
            run_with(None),
        ];
        let rows = rows(&runs, 0.01);
        let causes: Vec<Cause> = rows.iter().map(|r| r.cause).collect();
        assert_eq!(causes, [Cause::RunQueue, Cause::BlockedOther]);
        let run_queue = &rows[0];
        assert_eq!(
            (run_queue.probe.as_str(), run_queue.load.as_str()),
            ("audio", "burn")
        );
        let base = run_queue.cells[0].as_ref().unwrap();
        assert_eq!(
            (base.late, base.events, base.pct_of_events),
            (40, 100, 40.0)
        );
        assert_eq!(base.verdict, Verdict::Baseline);
        let other = run_queue.cells[1].as_ref().unwrap();
        assert_eq!(other.pct_of_events, 8.0);
        assert!((other.change.unwrap() + 80.0).abs() < 1e-9);
        assert_eq!(other.verdict, Verdict::Better);
        assert!(other.p.unwrap() < 1e-6);
        assert_eq!(run_queue.cells[2], None);
        let blocked = rows[1].cells[1].as_ref().unwrap();
        assert_eq!(
            (blocked.change, blocked.verdict),
            (Some(0.0), Verdict::NoDifference)
        );
    }

    /// The comparison at alpha 0.01 of `runs`, `base` and `name`.
    fn compared(runs: &[RunDocument; 2], name: &str) -> Comparison {
        let names = vec!["base".to_string(), name.to_string()];
        let files = vec!["a.json".to_string(), "b.json".to_string()];
        let options = crate::compare::CompareOptions {
            alpha: 0.01,
            figures: vec!["mean".into()],
        };
        Comparison::build(runs, names, files, &options)
    }

    #[test]
    fn every_format_shows_the_change_and_says_how_it_was_tested() {
        let runs = [run_with(Some(causes(40, 2))), run_with(Some(causes(8, 2)))];
        let c = compared(&runs, "nice");
        let text = crate::compare::text::render(&c, crate::compare::Layout::Columns);
        assert!(
            text.contains("Why late: % of events late for each cause\nprobe  load  late for         base    nice\naudio  burn  run-queue wait   40.0 %  8.0 % -80 % better [w]\naudio  burn  blocked (other)  2.0 %   2.0 % +0 % n.s. [w]\n"),
            "{text}"
        );
        assert!(
            text.contains("once the 2 tests of each run are corrected together (Holm's)"),
            "{text}"
        );
        assert!(
            text.contains("late for [w]: 2 test(s) by a two-proportion z test"),
            "{text}"
        );
        let md = crate::compare::markdown::render(&c, crate::compare::Layout::Columns);
        assert!(
            md.contains("| audio | burn | run-queue wait | 40.0 % | 8.0 % -80 % better [w] |"),
            "{md}"
        );
        let csv = crate::compare::csv::render(&c);
        assert!(
            csv.contains("\naudio,burn,late:run_queue,base,40,,,,percent,,baseline,,\n"),
            "{csv}"
        );
        assert!(
            csv.contains("\naudio,burn,late:run_queue,nice,8,,,-80,percent,"),
            "{csv}"
        );
        let html = crate::compare::html::render(&c, &runs).unwrap();
        assert!(
            html.contains("<td>run-queue wait</td><td>40.0 %</td><td class=\"better\">8.0 % -80 % better [w]</td>"),
            "{html}"
        );
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["late"][0]["cause"], "run_queue");
    }

    #[test]
    fn runs_without_a_split_have_no_rows() {
        assert!(rows(&[run_with(None), run_with(None)], 0.01).is_empty());
        let rows = rows(&[run_with(None), run_with(Some(causes(2, 0)))], 0.01);
        let cell = rows[0].cells[1].as_ref().unwrap();
        assert_eq!(cell.untested, Some(Untested::MissingBaseline));
    }

    #[test]
    fn causes_are_corrected_together() {
        // 40 → 22 of 100 late for the run queue (p about 0.006) and 20 → 7
        // blocked (about 0.007): each alone passes 0.01, the two together
        // do not (Holm: 0.012 for the smaller).
        let runs = [
            run_with(Some(causes(40, 20))),
            run_with(Some(causes(22, 7))),
        ];
        let rows = rows(&runs, 0.01);
        assert_eq!(rows.len(), 2);
        for row in &rows {
            let cell = row.cells[1].as_ref().unwrap();
            assert!(cell.p.unwrap() < 0.01, "{cell:?}");
            assert!(cell.p_adjusted.unwrap() >= 0.01, "{cell:?}");
            assert_eq!(cell.verdict, Verdict::NoDifference, "{cell:?}");
            assert_eq!(cell.spread, Some(Spread::WithinRun));
        }
    }

    /// The fixture run whose audio under burn has three repeats, `late[i]`
    /// of 100 events late for the run queue in repeat `i`.
    fn run_with_repeats(late: [u64; 3]) -> RunDocument {
        let mut run = run_with(Some(causes(late.iter().sum::<u64>() / 3, 0)));
        let scenario = &mut run.scenarios[1];
        scenario.repeats = late
            .iter()
            .map(|&n| {
                let mut m = scenario.outcome.clone();
                m.result.as_mut().unwrap().late = Some(causes(n, 0));
                m
            })
            .collect();
        run
    }

    #[test]
    fn repeats_are_tested_by_their_spread() {
        let runs = [
            run_with_repeats([40, 42, 38]),
            run_with_repeats([22, 25, 20]),
        ];
        let called = rows(&runs, 0.01);
        let cell = called[0].cells[1].as_ref().unwrap();
        assert_eq!(cell.spread, Some(Spread::Repeats), "{cell:?}");
        assert_eq!(cell.verdict, Verdict::Better, "{cell:?}");
        // Repeats that scatter as widely as they differ are not called.
        let runs = [
            run_with_repeats([10, 70, 13]),
            run_with_repeats([40, 6, 20]),
        ];
        let scattered = rows(&runs, 0.01);
        let cell = scattered[0].cells[1].as_ref().unwrap();
        assert_eq!(
            (cell.spread, cell.verdict),
            (Some(Spread::Repeats), Verdict::NoDifference)
        );
    }

    /// Runs whose audio under burn splits 100 frames in each sub-window,
    /// `late[k]` of them late for the run queue in sub-window `k`.
    fn runs_in_sub_windows(base: &[u64], other: &[u64]) -> [RunDocument; 2] {
        use crate::figures::late::fixture::in_sub_windows;
        [
            run_with(Some(in_sub_windows(base, 100))),
            run_with(Some(in_sub_windows(other, 100))),
        ]
    }

    /// `late` frames late in each of `bursts` sub-windows, none in the rest.
    fn bursts(at: &[usize], late: u64) -> Vec<u64> {
        let mut each = vec![0; crate::measure::batches::BATCHES];
        at.iter().for_each(|&k| each[k] = late);
        each
    }

    #[test]
    fn bursts_are_judged_by_their_sub_windows_not_as_independent_events() {
        // 20 of 2000 frames late in one burst against 60 in three: the
        // two-proportion test on the counts calls it (p about 1e-5); over
        // the sub-windows it is one burst against three, which chance
        // gives.
        let runs = runs_in_sub_windows(&bursts(&[5], 20), &bursts(&[2, 9, 15], 20));
        let counts = proportions::test(20, 2000, 60, 2000).unwrap();
        assert!(counts.p < 1e-4, "{counts:?}");
        let rows = rows(&runs, 0.01);
        assert_eq!(rows.len(), 1);
        let cell = rows[0].cells[1].as_ref().unwrap();
        assert_eq!((cell.late, cell.events), (60, 2000));
        assert_eq!(cell.spread, Some(Spread::SubWindows), "{cell:?}");
        assert!(cell.p.unwrap() > 0.1, "{cell:?}");
        assert_eq!(cell.verdict, Verdict::NoDifference, "{cell:?}");
        // The same runs without their counts per sub-window (documents
        // made before they were kept) fall back to the counts' test.
        let mut older = runs.clone();
        for run in &mut older {
            let result = run.scenarios[1].outcome.result.as_mut().unwrap();
            result.late.as_mut().unwrap().batches.clear();
        }
        let rows = super::rows(&older, 0.01);
        let cell = rows[0].cells[1].as_ref().unwrap();
        assert_eq!(
            (cell.spread, cell.verdict),
            (Some(Spread::WithinRun), Verdict::Worse)
        );
    }

    #[test]
    fn a_change_in_every_sub_window_is_called_and_marked_but_fails_nothing() {
        let runs = runs_in_sub_windows(&[1; 20], &[5; 20]);
        let c = compared(&runs, "new");
        let cell = c.late[0].cells[1].as_ref().unwrap();
        assert_eq!(
            (cell.spread, cell.verdict),
            (Some(Spread::SubWindows), Verdict::Worse),
            "{cell:?}"
        );
        assert!(cell.p_adjusted.unwrap() < 1e-4, "{cell:?}");
        let text = crate::compare::text::render(&c, crate::compare::Layout::Columns);
        assert!(
            text.contains("audio  burn  run-queue wait  1.0 %  5.0 % +400 % worse [s]"),
            "{text}"
        );
        assert!(
            text.contains("late for [s]: 1 test(s) by Welch's t-test on each run's share with its spread over the run's 20 sub-windows"),
            "{text}"
        );
        assert!(
            text.contains("no verdict here counts for --fail-on"),
            "{text}"
        );
        assert_eq!(c.worse().count(), 0);
        let csv = crate::compare::csv::render(&c);
        assert!(csv.contains(",worse,,sub_windows\n"), "{csv}");
    }
}
