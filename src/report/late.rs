//! Why a scenario's events were late, as every renderer of results shows
//! it: the dominant cause in words with the late events' count (a line
//! under the console row, a column of Markdown and CSV), the causes with
//! their shares and part distributions, and where the late time went by
//! part (each part named by what was measured, never by a cause that
//! names only some of it). Everything is read from the `LateCauses` the run stored, so it
//! knows no probe; a scenario without one (a probe that does not split its
//! events, a run older than the split) shows nothing.

use crate::document::schema::ScenarioResult;
use crate::figures::late::{LateCauses, LateEvent};
use crate::measure::late::{Cause, Part};

/// The late causes a scenario stored, when its probe split its events.
pub fn causes_of(scenario: &ScenarioResult) -> Option<&LateCauses> {
    scenario.outcome.result.as_ref()?.late.as_ref()
}

/// `run-queue wait behind burn (92 %) of 130 late`, or `none of 300
/// events late`.
pub fn summary(late: &LateCauses) -> String {
    let Some(dominant) = late.dominant() else {
        return format!("none of {} events late", late.events());
    };
    let words = match ran_behind(late, dominant.cause).first() {
        Some((task, _)) => dominant.words_behind(task),
        None => dominant.words(),
    };
    format!("{words} of {} late", late.late())
}

/// The CSV columns of the late events, in [`csv_fields`]' order.
pub const CSV_COLUMNS: [&str; 4] = [
    "events_split",
    "late_events",
    "late_cause",
    "late_cause_pct",
];

/// A scenario's late-event columns: events split, late events, the
/// dominant cause's key (`mixed` when its events hold less than half the
/// late events' delay) and that share in %; empty where it has no split.
pub fn csv_fields(late: Option<&LateCauses>) -> [String; 4] {
    let Some(late) = late else {
        return Default::default();
    };
    let (cause, pct) = match late.dominant() {
        Some(d) if d.share >= 0.5 => (d.cause.key(), format!("{:.1}", d.share * 100.0)),
        Some(d) => (Cause::Mixed.key(), format!("{:.1}", d.share * 100.0)),
        None => ("", String::new()),
    };
    [
        late.events().to_string(),
        late.late().to_string(),
        cause.to_string(),
        pct,
    ]
}

/// One cause of late events with its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct CauseRow {
    pub cause: Cause,
    /// Late events labelled with it.
    pub count: u64,
    /// Its share of the late events, %.
    pub events_pct: f64,
    /// The whole delay of the late events labelled with it (every part of
    /// each, not only the part the cause names), as a share of the delay
    /// of every late event, %: not the share of the late time spent in
    /// its part, which [`late_time_shares`] gives.
    pub delay_pct: f64,
    /// The median and 99th percentile of the part it stands for, over its
    /// events, ms; `None` when the stored distribution cannot be read.
    pub part_p50_ms: Option<f64>,
    pub part_p99_ms: Option<f64>,
}

/// The causes of `late`'s late events, the most delay first.
pub fn cause_rows(late: &LateCauses) -> Vec<CauseRow> {
    let events = late.late().max(1) as f64;
    let time: u64 = Cause::ALL.iter().map(|c| late.delay_ns(*c)).sum();
    late.causes()
        .into_iter()
        .map(|cause| {
            let histogram = late.part(cause).and_then(|s| s.decode().ok());
            let quantile_ms = |q: f64| histogram.as_ref().map(|h| h.quantile_ns(q) as f64 / 1e6);
            CauseRow {
                cause,
                count: late.count(cause),
                events_pct: 100.0 * late.count(cause) as f64 / events,
                delay_pct: match time {
                    0 => 0.0,
                    _ => 100.0 * late.delay_ns(cause) as f64 / time as f64,
                },
                part_p50_ms: quantile_ms(0.5),
                part_p99_ms: quantile_ms(0.99),
            }
        })
        .collect()
}

/// The parts of the late events' delay (timer, run queue, blocked,
/// memory stall, off CPU, CPU overrun, unexplained), each with its share
/// of their sum in %.
pub fn late_time_shares(late: &LateCauses) -> Vec<(Part, f64)> {
    let parts = late.late_parts();
    let total = parts.total_ns();
    parts
        .by_part()
        .into_iter()
        .map(|(part, ns)| {
            let pct = match total {
                0 => 0.0,
                _ => 100.0 * ns as f64 / total as f64,
            };
            (part, pct)
        })
        .collect()
}

/// The tasks that ran while `late`'s kept late events of `cause` waited on
/// a run queue, by feelbench's load name without its instance (`burn` for
/// `burn#2`) or the foreign task's name, most time first, with their time
/// in ns. Empty when no event says (a run without `--explain`).
pub fn ran_behind(late: &LateCauses, cause: Cause) -> Vec<(String, u64)> {
    let mut tasks: Vec<(String, u64)> = Vec::new();
    let ran = late
        .worst
        .iter()
        .filter(|e| e.cause == cause)
        .flat_map(|e| &e.ran_instead);
    for r in ran {
        let name = task_family(&r.task);
        match tasks.iter_mut().find(|(t, _)| t == name) {
            Some((_, ns)) => *ns += r.ns,
            None => tasks.push((name.to_string(), r.ns)),
        }
    }
    tasks.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    tasks
}

/// A task's name without its instance number: `burn#2` and `hack
/// receiver 7` are `burn` and `hack receiver`; other names are kept.
fn task_family(task: &str) -> &str {
    let numbered = |sep: char| {
        let (family, number) = task.rsplit_once(sep)?;
        (!family.is_empty() && !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
            .then_some(family)
    };
    numbered('#').or_else(|| numbered(' ')).unwrap_or(task)
}

/// The tasks that ran instead of `event`, each with its time in ms:
/// `burn#2 8.1, kworker/1:2 0.4`; empty without `--explain`.
pub fn ran_instead_text(event: &LateEvent) -> String {
    event
        .ran_instead
        .iter()
        .map(|r| format!("{} {:.1}", r.task, r.ns as f64 / 1e6))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    pub use crate::figures::late::fixture::causes;
    use crate::figures::late::RanInstead;

    pub const MS: u64 = 1_000_000;

    /// `late` with every run-queue event's wait spent behind `burn#1` (3
    /// ms), `burn#2` (the rest) and `kworker/1:2` (0.4 ms).
    pub fn with_ran_instead(mut late: LateCauses) -> LateCauses {
        for event in late.worst.iter_mut().filter(|e| e.cause == Cause::RunQueue) {
            let wait = event.parts.run_queue_ns();
            let task = |task: &str, tid, ns| RanInstead {
                task: task.into(),
                pid: Some(tid),
                tid,
                ns,
            };
            event.ran_instead = vec![
                task("burn#2", 12, wait - 3 * MS - 400_000),
                task("burn#1", 11, 3 * MS),
                task("kworker/1:2", 80, 400_000),
            ];
        }
        late
    }

    #[test]
    fn the_summary_names_the_dominant_cause_and_the_late_events() {
        let late = causes(3, 1);
        assert_eq!(summary(&late), "run-queue wait (89 %) of 4 late");
        assert_eq!(
            summary(&with_ran_instead(late)),
            "run-queue wait behind burn (89 %) of 4 late"
        );
        assert_eq!(summary(&causes(0, 0)), "none of 100 events late");
        assert_eq!(summary(&causes(1, 3)), "blocked (other) (55 %) of 4 late");
    }

    #[test]
    fn csv_fields_give_the_key_and_share_of_the_dominant_cause() {
        assert_eq!(
            csv_fields(Some(&causes(3, 1))),
            ["100", "4", "run_queue", "89.2"].map(String::from)
        );
        assert_eq!(
            csv_fields(Some(&causes(1, 3))),
            ["100", "4", "blocked_other", "54.5"].map(String::from)
        );
        assert_eq!(
            csv_fields(Some(&causes(0, 0))),
            ["100", "0", "", ""].map(String::from)
        );
        assert_eq!(csv_fields(None), <[String; 4]>::default());
    }

    #[test]
    fn cause_rows_share_the_late_events_and_time() {
        let rows = cause_rows(&causes(3, 1));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].cause, Cause::RunQueue);
        assert_eq!(rows[0].count, 3);
        assert_eq!(rows[0].events_pct, 75.0);
        assert!((rows[0].delay_pct - 100.0 * 33.0 / 37.0).abs() < 1e-9);
        // The run-queue parts are 9, 10 and 11 ms.
        let p50 = rows[0].part_p50_ms.unwrap();
        assert!((p50 - 10.0).abs() < 0.05, "{p50}");
        assert!((rows[0].part_p99_ms.unwrap() - 11.0).abs() < 0.05);
        assert_eq!(rows[1].cause, Cause::BlockedOther);
        let total: f64 = rows.iter().map(|r| r.delay_pct).sum();
        assert!((total - 100.0).abs() < 1e-9);
    }

    #[test]
    fn late_time_shares_add_up_to_the_whole() {
        let shares = late_time_shares(&causes(3, 1));
        let total: f64 = shares.iter().map(|(_, pct)| pct).sum();
        assert!((total - 100.0).abs() < 1e-9, "{shares:?}");
        let run_queue = shares.iter().find(|(p, _)| *p == Part::RunQueue).unwrap();
        assert!((run_queue.1 - 100.0 * 30.0 / 37.0).abs() < 1e-9);
        // The run-queue events hold 89 % of the delay, and 81 % of the
        // late time is run-queue wait: two figures, two names.
        let rows = cause_rows(&causes(3, 1));
        assert!(rows[0].delay_pct > run_queue.1);
        let named: Vec<&str> = shares.iter().map(|(p, _)| p.words()).collect();
        assert!(named.contains(&"blocked"), "{named:?}");
        assert!(named.contains(&"memory stall"), "{named:?}");
        assert!(!named
            .iter()
            .any(|n| n.contains("other") || n.contains("reclaim")));
        assert!(late_time_shares(&causes(0, 0))
            .iter()
            .all(|(_, p)| *p == 0.0));
    }

    #[test]
    fn tasks_that_ran_instead_are_grouped_by_load() {
        let late = with_ran_instead(causes(2, 1));
        let behind = ran_behind(&late, Cause::RunQueue);
        let names: Vec<&str> = behind.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(names, ["burn", "kworker/1:2"]);
        // The waits are 9 and 10 ms.
        assert_eq!(behind[0].1, 19 * MS - 800_000);
        assert!(ran_behind(&late, Cause::BlockedOther).is_empty());
        assert_eq!(task_family("hack receiver 7"), "hack receiver");
        assert_eq!(task_family("kworker/1:2"), "kworker/1:2");
        assert_eq!(task_family("#3"), "#3");
        assert_eq!(
            ran_instead_text(&late.worst[0]),
            "burn#2 6.6, burn#1 3.0, kworker/1:2 0.4"
        );
    }
}
