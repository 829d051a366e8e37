//! How the split of late events changed between runs. The compared
//! quantity is, per scenario and cause, the share of the probe's events
//! that were late with that cause: late events labelled with it over the
//! events split (both stored exact in `LateCauses`, and merged by adding,
//! so a merge or `--repeat` compares the union). A run is tested against
//! the baseline with the two-proportion z test on those counts
//! (`stats::proportions`): the run document keeps no per-sub-window
//! values of the split, so Welch's test on a spread is not possible, and
//! counts of events are what it keeps exactly. The test treats events as
//! independent trials; late events that come in bursts (a wait behind a
//! burst of load delays several frames) are not, which makes it
//! overstate significance somewhat: the legend says so.

use super::{scenario_keys, Comparison, Untested, Verdict};
use crate::measure::late::Cause;
use crate::report::late::causes_of;
use crate::report::schema::RunDocument;
use crate::stats::proportions;
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
    /// The two-proportion test's two-sided p-value.
    pub p: Option<f64>,
    pub verdict: Verdict,
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

/// The rows of `runs` (the first the baseline): every scenario whose late
/// events some run split, every cause some run has a late event of.
pub fn rows(runs: &[RunDocument], alpha: f64) -> Vec<LateRow> {
    let mut rows = Vec::new();
    for (probe, load) in scenario_keys(runs) {
        let split: Vec<Option<_>> = runs
            .iter()
            .map(|run| {
                run.scenarios
                    .iter()
                    .find(|s| s.probe == probe && s.load == load)
                    .and_then(causes_of)
            })
            .collect();
        for cause in Cause::ALL {
            if !split.iter().flatten().any(|c| c.count(cause) > 0) {
                continue;
            }
            let counts: Vec<Option<(u64, u64)>> = split
                .iter()
                .map(|c| c.map(|c| (c.count(cause), c.events())))
                .collect();
            let cells = counts
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    c.map(|(late, events)| {
                        cell(late, events, counts[0].filter(|_| i > 0), i == 0, alpha)
                    })
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
    rows
}

/// One run's cell, tested against `base` (late, events).
fn cell(
    late: u64,
    events: u64,
    base: Option<(u64, u64)>,
    is_baseline: bool,
    alpha: f64,
) -> LateCell {
    let pct = |late: u64, events: u64| match events {
        0 => 0.0,
        _ => 100.0 * late as f64 / events as f64,
    };
    let mut cell = LateCell {
        events,
        late,
        pct_of_events: pct(late, events),
        change: None,
        p: None,
        verdict: Verdict::Baseline,
        untested: None,
    };
    if is_baseline {
        return cell;
    }
    let Some((base_late, base_events)) = base else {
        cell.verdict = Verdict::Untested;
        cell.untested = Some(Untested::MissingBaseline);
        return cell;
    };
    let base_pct = pct(base_late, base_events);
    cell.change = (base_pct > 0.0).then(|| 100.0 * (cell.pct_of_events / base_pct - 1.0));
    let Some(test) = proportions::test(base_late, base_events, late, events) else {
        cell.verdict = Verdict::Untested;
        cell.untested = Some(Untested::WithoutSpread);
        return cell;
    };
    cell.p = Some(test.p);
    cell.verdict = match (test.p < alpha, test.z < 0.0) {
        (false, _) => Verdict::NoDifference,
        (true, true) => Verdict::Better,
        (true, false) => Verdict::Worse,
    };
    cell
}

/// A cell as text: `11.2 % −80 % better`.
fn cell_text(cell: Option<&LateCell>) -> String {
    let Some(cell) = cell else {
        return super::text::MISSING.to_string();
    };
    let mut parts = vec![format!("{:.1} %", cell.pct_of_events)];
    parts.extend(cell.change.map(|c| format!("{c:+.0} %")));
    parts.push(super::text::verdict_text(cell.verdict).to_string());
    parts.retain(|p| !p.is_empty());
    parts.join(" ")
}

/// The late rows as a table: a header (`probe`, `load`, `late for`, the
/// runs' names), then a line per row; empty without rows.
pub fn table(c: &Comparison) -> Vec<Vec<String>> {
    if c.late.is_empty() {
        return Vec::new();
    }
    let header = ["probe", "load", "late for"]
        .map(String::from)
        .into_iter()
        .chain(c.runs.iter().map(|r| r.name.clone()))
        .collect();
    let lines = c.late.iter().map(|row| {
        [
            row.probe.clone(),
            row.load.clone(),
            row.cause.words().to_string(),
        ]
        .into_iter()
        .chain(row.cells.iter().map(|cell| cell_text(cell.as_ref())))
        .collect()
    });
    std::iter::once(header).chain(lines).collect()
}

/// What the late rows show and how they were tested; empty without rows.
pub fn legend(c: &Comparison) -> Vec<String> {
    if c.late.is_empty() {
        return Vec::new();
    }
    let tests = c
        .late
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .filter(|cell| cell.p.is_some())
        .count();
    vec![format!(
        "late for: the % of the probe's events that were late with that cause (late events labelled with it / events split), its change against {} in %, better / worse: significant at alpha {} by a two-proportion z test on those counts ({tests} tests); it treats events as independent, and late events that come in bursts are not, so it overstates significance somewhat",
        c.runs[0].name, c.alpha
    )]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::late::tests::causes;

    /// The fixture run with `causes` as audio's split under burn.
    fn run_with(causes: Option<crate::figures::late::LateCauses>) -> RunDocument {
        let mut run = crate::report::fixture::run();
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

    #[test]
    fn every_format_shows_the_change_and_says_how_it_was_tested() {
        let runs = [run_with(Some(causes(40, 2))), run_with(Some(causes(8, 2)))];
        let names = vec!["base".to_string(), "nice".to_string()];
        let files = vec!["a.json".to_string(), "b.json".to_string()];
        let options = crate::compare::CompareOptions {
            alpha: 0.01,
            figures: vec!["mean".into()],
        };
        let c = Comparison::build(&runs, names, files, &options);
        let text = crate::compare::text::render(&c, crate::compare::Layout::Columns);
        assert!(
            text.contains("Why late: % of events late for each cause\nprobe  load  late for         base    nice\naudio  burn  run-queue wait   40.0 %  8.0 % -80 % better\naudio  burn  blocked (other)  2.0 %   2.0 % +0 % n.s.\n"),
            "{text}"
        );
        assert!(
            text.contains("two-proportion z test on those counts (2 tests)"),
            "{text}"
        );
        let md = crate::compare::markdown::render(&c, crate::compare::Layout::Columns);
        assert!(
            md.contains("| audio | burn | run-queue wait | 40.0 % | 8.0 % -80 % better |"),
            "{md}"
        );
        let csv = crate::compare::csv::render(&c);
        assert!(
            csv.contains("\naudio,burn,late:run_queue,base,40,,,,percent,,baseline,\n"),
            "{csv}"
        );
        assert!(
            csv.contains("\naudio,burn,late:run_queue,nice,8,,,-80,percent,"),
            "{csv}"
        );
        let html = crate::compare::html::render(&c, &runs).unwrap();
        assert!(
            html.contains("<td>run-queue wait</td><td>40.0 %</td><td class=\"better\">8.0 % -80 % better</td>"),
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
}
