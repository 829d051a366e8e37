//! Why a probe's events were late, as a run document keeps it: the parts
//! of the delay added up over every event and over the late ones, the late
//! events per cause (how many, their delay, the distribution of the part
//! their cause stands for) in a [`Tally`], so that repeats and runs merge
//! by adding, the same counts per sub-window of the measurement, and the
//! worst late events whole, so a run can be analysed again.

use super::explain::ExplainSummary;
use super::late_context::{InferredContext, LateContext};
use super::tally::{Samples, Tally, TallyError};
use crate::measure::attrib::{EventSplitter, Splitting};
use crate::measure::late::{
    Cause, EventSplit, LateAccount, Parts, SubWindowCounts, ThreadEvents, WORST_KEPT,
};
use serde::{Deserialize, Serialize};

mod cost;
#[cfg(test)]
pub(crate) mod fixture;

pub use cost::ReadCost;

/// Events split.
const EVENTS: &str = "events";
/// Of them, late.
const LATE: &str = "late";
/// The prefix of the parts added up over every event.
const ALL: &str = "all.";
/// The prefix of the parts added up over the late events.
const LATE_PARTS: &str = "late.";

/// One late event whole: its split, with its cause and what was found
/// about it after the window. It reads as its split (`Deref`), whose
/// fields it carries in the run document side by side with its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LateEvent {
    #[serde(flatten)]
    pub split: EventSplit,
    pub cause: Cause,
    /// The tasks that ran on its CPU while it waited on a run queue, most
    /// time first (`--explain`; empty without it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ran_instead: Vec<RanInstead>,
    /// What the window's telemetry says about the time around it,
    /// *inferred* by joining the samples to its span (absent where the
    /// window was not sampled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<InferredContext>,
    /// For a probe whose events are chains of work on several threads (a
    /// game's frame), the link of the chain that was late and whose split
    /// this is (`main`, `workers`, `render`, `present`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

impl std::ops::Deref for LateEvent {
    type Target = EventSplit;

    fn deref(&self) -> &EventSplit {
        &self.split
    }
}

impl std::ops::DerefMut for LateEvent {
    fn deref_mut(&mut self) -> &mut EventSplit {
        &mut self.split
    }
}

/// A task that ran while a late event waited for the CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RanInstead {
    /// feelbench's name for it (`burn#2`, `hack receiver 7`), or the
    /// foreign task's command name.
    pub task: String,
    /// Its process; `None` when it ended before it could be looked up.
    pub pid: Option<i32>,
    pub tid: i32,
    /// How long it ran in the wait, ns.
    pub ns: u64,
}

impl LateEvent {
    /// The event of `split`.
    pub fn of(split: &EventSplit) -> Self {
        Self {
            split: *split,
            cause: split.cause(),
            ran_instead: Vec::new(),
            context: None,
            link: None,
        }
    }
}

/// Why a probe's events were late, for one measurement or a merge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LateCauses {
    /// The rule an event is late by, in words ("missed its deadline").
    pub rule: String,
    /// Whether run-queue wait was read (the thread's `schedstat`); without
    /// it, it is part of the unexplained time.
    pub schedstat: bool,
    /// What was unavailable or turned off, one sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// Events, late events, the parts added up (`all.*`, `late.*`) and per
    /// cause: `CAUSE.count`, `CAUSE.delay_ns` and the distribution of the
    /// part the cause stands for (`CAUSE`).
    pub tally: Tally,
    /// Events, late events and late events per cause (`CAUSE.count`, left
    /// out where 0) in each equal sub-window of the measurement, in time
    /// order, an event in the one it was due in: what a change between
    /// runs is judged against (`compare`), as late events come in bursts.
    /// A merge adds them sub-window by sub-window. Empty in documents made
    /// before they were kept, and in a merge with one of those.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batches: Vec<Tally>,
    /// The worst late events, worst first, at most [`WORST_KEPT`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worst: Vec<LateEvent>,
    pub cost: ReadCost,
    /// The tasks that ran while the probe waited (`--explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<ExplainSummary>,
    /// What the window's telemetry says about the late events, inferred
    /// (absent where the window was not sampled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<LateContext>,
    /// Every event of each probe thread, for `run --trace`: carried from
    /// the worker in its message and taken out by the orchestrator before
    /// the run document is made, so no document holds them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traced: Vec<ThreadEvents>,
}

/// The cause whose late events hold the most delay, and their share of the
/// late events' delay (their whole delay, every part).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dominant {
    pub cause: Cause,
    /// Its share of the late events' delay, 0–1.
    pub share: f64,
}

impl Dominant {
    /// In words: the cause and its share, or `mixed` (with the largest
    /// cause) when no cause's events hold half the late events' delay.
    pub fn words(&self) -> String {
        self.phrase(None)
    }

    /// In words as [`words`](Self::words), a dominant run-queue wait named
    /// by the task it waited behind (`run-queue wait behind burn (92 %)`).
    pub fn words_behind(&self, task: &str) -> String {
        self.phrase(Some(task))
    }

    fn phrase(&self, behind: Option<&str>) -> String {
        let percent = (self.share * 100.0).round();
        if self.cause == Cause::Mixed {
            return format!("mixed ({percent} %)");
        }
        if self.share < 0.5 {
            return format!("mixed ({} {percent} %)", self.cause.words());
        }
        match behind.filter(|_| self.cause == Cause::RunQueue) {
            Some(task) => format!("{} behind {task} ({percent} %)", self.cause.words()),
            None => format!("{} ({percent} %)", self.cause.words()),
        }
    }
}

impl LateCauses {
    /// What `account` holds, late by `rule`, with run-queue wait read when
    /// `schedstat`, at `cost`.
    pub fn of(account: &LateAccount, rule: &str, schedstat: bool, cost: ReadCost) -> Self {
        let mut tally = Tally::default()
            .with_count(EVENTS, account.events as f64)
            .with_count(LATE, account.late as f64);
        for (prefix, parts) in [(ALL, &account.all), (LATE_PARTS, &account.late_parts)] {
            for (name, ns) in parts.named() {
                tally = tally.with_count(&format!("{prefix}{name}"), ns as f64);
            }
        }
        for cause in Cause::ALL {
            let of_cause = account.cause(cause);
            tally = tally
                .with_count(&format!("{}.count", cause.key()), of_cause.count as f64)
                .with_count(
                    &format!("{}.delay_ns", cause.key()),
                    of_cause.delay_ns as f64,
                )
                .with_samples(cause.key(), &of_cause.part, of_cause.part_sum_ns);
        }
        Self {
            rule: rule.to_string(),
            schedstat,
            notices: Vec::new(),
            tally,
            batches: account.sub_windows().map_or_else(Vec::new, |counts| {
                counts.iter().map(sub_window_tally).collect()
            }),
            worst: account.worst().iter().map(LateEvent::of).collect(),
            cost,
            explain: None,
            context: None,
            traced: account.logged().into_iter().cloned().collect(),
        }
    }

    /// What `splitting` accounted, late by `rule`; `None` when the run did
    /// not split.
    pub fn of_splitting(splitting: &Splitting, rule: &str) -> Option<Self> {
        splitting
            .splitter()
            .map(|splitter| Self::of_splitter(splitter, rule))
    }

    /// What `splitter` accounted, late by `rule`, with its cost.
    fn of_splitter(splitter: &EventSplitter, rule: &str) -> Self {
        let (reads, ns_per_read) = splitter.cost();
        let (taskstats_reads, ns_per_taskstats_read) = splitter.delays().cost();
        let mut late = Self::of(
            &splitter.account,
            rule,
            splitter.has_schedstat(),
            ReadCost {
                reads,
                ns_per_read,
                taskstats_reads,
                ns_per_taskstats_read,
            },
        );
        late.notices
            .extend(splitter.delays().notice().map(str::to_string));
        if splitter.delays().cut() > 0 {
            late.notices.push(format!(
                "in {} of its readings delay accounting gave a wait longer than the time \
                 since the reading before (a wait whose start the kernel did not stamp); \
                 each was cut to that time",
                splitter.delays().cut()
            ));
        }
        if !late.schedstat {
            late.notices.push(
                "run-queue wait unavailable: the thread's schedstat cannot be read \
                 (a kernel without CONFIG_SCHED_INFO); it is counted as unexplained"
                    .to_string(),
            );
        }
        late
    }

    /// Events split.
    pub fn events(&self) -> u64 {
        self.tally.count(EVENTS) as u64
    }

    /// Late events.
    pub fn late(&self) -> u64 {
        self.tally.count(LATE) as u64
    }

    /// The parts added up over every event.
    pub fn all_parts(&self) -> Parts {
        self.parts(ALL)
    }

    /// The parts added up over the late events.
    pub fn late_parts(&self) -> Parts {
        self.parts(LATE_PARTS)
    }

    fn parts(&self, prefix: &str) -> Parts {
        Parts::from_named(|name| self.tally.count(&format!("{prefix}{name}")) as u64)
    }

    /// Late events labelled `cause`.
    pub fn count(&self, cause: Cause) -> u64 {
        self.tally.count(&format!("{}.count", cause.key())) as u64
    }

    /// Per sub-window of the measurement, in time order: the late events
    /// labelled `cause` and the events split. Empty where the document
    /// does not keep them.
    pub fn sub_window_counts(&self, cause: Cause) -> Vec<(u64, u64)> {
        let key = format!("{}.count", cause.key());
        self.batches
            .iter()
            .map(|b| (b.count(&key) as u64, b.count(EVENTS) as u64))
            .collect()
    }

    /// The delay of the late events labelled `cause`, added up, ns.
    pub fn delay_ns(&self, cause: Cause) -> u64 {
        self.tally.count(&format!("{}.delay_ns", cause.key())) as u64
    }

    /// The distribution of the part `cause` stands for, over its events.
    pub fn part(&self, cause: Cause) -> Option<&Samples> {
        self.tally.samples.get(cause.key())
    }

    /// The causes of late events, the most delay first, with none left
    /// out that has an event.
    pub fn causes(&self) -> Vec<Cause> {
        let mut causes: Vec<Cause> = Cause::ALL
            .into_iter()
            .filter(|c| self.count(*c) > 0)
            .collect();
        causes.sort_by_key(|c| std::cmp::Reverse(self.delay_ns(*c)));
        causes
    }

    /// The cause whose events hold the most delay; `None` without late
    /// events.
    pub fn dominant(&self) -> Option<Dominant> {
        let total: u64 = Cause::ALL.iter().map(|c| self.delay_ns(*c)).sum();
        let cause = *self.causes().first()?;
        Some(Dominant {
            cause,
            share: if total == 0 {
                0.0
            } else {
                self.delay_ns(cause) as f64 / total as f64
            },
        })
    }

    /// The merge of `all` (at least one): tallies added, sub-window by
    /// sub-window too where every one keeps as many, the worst events of
    /// all kept, notices joined, run-queue wait read only if read in every
    /// one, the inferred contexts added up where every one has one.
    pub fn merged(all: &[&LateCauses]) -> Result<Self, TallyError> {
        let tally = Tally::merge(all.iter().map(|l| &l.tally))?;
        let sub_windows = all[0].batches.len();
        let batches = match all.iter().all(|l| l.batches.len() == sub_windows) {
            true => (0..sub_windows)
                .map(|k| Tally::merge(all.iter().map(|l| &l.batches[k])))
                .collect::<Result<_, _>>()?,
            false => Vec::new(),
        };
        let mut worst: Vec<LateEvent> = all.iter().flat_map(|l| l.worst.clone()).collect();
        worst.sort_by_key(|e| std::cmp::Reverse(e.delay_ns()));
        worst.truncate(WORST_KEPT);
        let mut notices: Vec<String> = Vec::new();
        for notice in all.iter().flat_map(|l| &l.notices) {
            if !notices.contains(notice) {
                notices.push(notice.clone());
            }
        }
        let explained: Vec<&ExplainSummary> =
            all.iter().filter_map(|l| l.explain.as_ref()).collect();
        Ok(Self {
            explain: (!explained.is_empty()).then(|| ExplainSummary::merged(&explained)),
            rule: all[0].rule.clone(),
            schedstat: all.iter().all(|l| l.schedstat),
            notices,
            tally,
            batches,
            worst,
            cost: ReadCost::sum(all.iter().map(|l| l.cost)),
            context: all
                .iter()
                .map(|l| l.context.clone())
                .reduce(|a, b| Some(a?.add(&b?)))
                .flatten(),
            traced: all.iter().flat_map(|l| l.traced.clone()).collect(),
        })
    }
}

/// The counts of one sub-window as a tally: events, late events and the
/// late events of each cause that has one.
fn sub_window_tally(counts: &SubWindowCounts) -> Tally {
    let tally = Tally::default()
        .with_count(EVENTS, counts.events as f64)
        .with_count(LATE, counts.late as f64);
    Cause::ALL
        .into_iter()
        .filter(|c| counts.count(*c) > 0)
        .fold(tally, |tally, cause| {
            tally.with_count(
                &format!("{}.count", cause.key()),
                counts.count(cause) as f64,
            )
        })
}

#[cfg(test)]
mod tests {
    use super::fixture::causes;
    use super::*;

    const MS: u64 = 1_000_000;

    /// `late` at `cost`, its run-queue wait read when `schedstat`.
    fn with(mut late: LateCauses, schedstat: bool) -> LateCauses {
        late.schedstat = schedstat;
        late.cost = cost();
        late
    }

    fn cost() -> ReadCost {
        ReadCost {
            reads: 10,
            ns_per_read: 2_000.0,
            taskstats_reads: 2,
            ns_per_taskstats_read: 10_000.0,
        }
    }

    #[test]
    fn the_dominant_cause_is_the_one_with_most_late_time() {
        let late = with(causes(3, 1), true);
        assert_eq!(late.late(), 4);
        assert_eq!(late.count(Cause::RunQueue), 3);
        assert_eq!(late.count(Cause::BlockedOther), 1);
        let dominant = late.dominant().unwrap();
        assert_eq!(dominant.cause, Cause::RunQueue);
        // Frames late by 10, 11 and 12 ms (1 ms timer each), then 4 ms
        // blocked: the run-queue-bound ones hold 33 of 37 ms.
        assert!((dominant.share - 33.0 / 37.0).abs() < 1e-9, "{dominant:?}");
        assert_eq!(dominant.words(), "run-queue wait (89 %)");
        assert_eq!(late.worst.len(), 4);
        assert_eq!(late.worst[0].cause, Cause::RunQueue);
        assert_eq!(late.late_parts().run_queue_ns(), 30 * MS);
    }

    #[test]
    fn merging_adds_counts_and_keeps_the_worst_events_of_all() {
        let one = with(causes(3, 1), true);
        let mut two = with(causes(1, 1), false);
        two.cost.taskstats_reads = 0;
        let merged = LateCauses::merged(&[&one, &two]).unwrap();
        assert_eq!(merged.late(), 6);
        assert_eq!(merged.count(Cause::RunQueue), 4);
        assert_eq!(merged.part(Cause::RunQueue).unwrap().count, 4);
        assert!(!merged.schedstat);
        assert_eq!(merged.cost.reads, 20);
        assert_eq!(merged.cost.taskstats_reads, 2);
        assert_eq!(merged.cost.ns_per_taskstats_read, 10_000.0);
        assert!((merged.cost.total_s() - 60e-6).abs() < 1e-12);
        let older: ReadCost = serde_json::from_str(r#"{"reads":1,"ns_per_read":5.0}"#).unwrap();
        assert_eq!(older.taskstats_reads, 0);
        assert_eq!(merged.worst.len(), 6);
        assert!(merged
            .worst
            .windows(2)
            .all(|w| w[0].delay_ns() >= w[1].delay_ns()));
        let json = serde_json::to_string(&merged).unwrap();
        let back: LateCauses = serde_json::from_str(&json).unwrap();
        assert_eq!(back, merged);
    }

    #[test]
    fn the_document_keeps_counts_per_sub_window_and_a_merge_adds_them() {
        use super::fixture::in_sub_windows;
        use crate::measure::batches::BATCHES;
        let mut bursts = [0; BATCHES];
        bursts[3] = 6;
        bursts[4] = 2;
        let one = in_sub_windows(&bursts, 10);
        assert_eq!((one.events(), one.count(Cause::RunQueue)), (200, 8));
        let counts = one.sub_window_counts(Cause::RunQueue);
        assert_eq!(counts.len(), BATCHES);
        assert_eq!(
            (counts[3], counts[4], counts[5]),
            ((6, 10), (2, 10), (0, 10))
        );
        assert_eq!(one.sub_window_counts(Cause::BlockedOther)[3], (0, 10));
        let json = serde_json::to_string(&one).unwrap();
        let back: LateCauses = serde_json::from_str(&json).unwrap();
        assert_eq!(back, one);
        let two = in_sub_windows(&[1; BATCHES], 10);
        let merged = LateCauses::merged(&[&one, &two]).unwrap();
        let counts = merged.sub_window_counts(Cause::RunQueue);
        assert_eq!((counts[3], counts[5]), ((7, 20), (1, 20)));
        assert_eq!(merged.late(), 28);
        // A document made before the counts were kept reads without them,
        // and a merge with it keeps none.
        let mut older: serde_json::Value = serde_json::from_str(&json).unwrap();
        older.as_object_mut().unwrap().remove("batches");
        let older: LateCauses = serde_json::from_value(older).unwrap();
        assert!(older.sub_window_counts(Cause::RunQueue).is_empty());
        let mixed = LateCauses::merged(&[&one, &older]).unwrap();
        assert!(mixed.batches.is_empty());
        assert_eq!(mixed.late(), 16);
    }

    #[test]
    fn no_cause_holding_half_the_late_time_is_mixed() {
        let dominant = Dominant {
            cause: Cause::RunQueue,
            share: 0.4,
        };
        assert_eq!(dominant.words(), "mixed (run-queue wait 40 %)");
        let mixed = Dominant {
            cause: Cause::Mixed,
            share: 0.62,
        };
        assert_eq!(mixed.words(), "mixed (62 %)");
        assert_eq!(dominant.words_behind("burn"), "mixed (run-queue wait 40 %)");
        let run_queue = Dominant {
            share: 0.92,
            ..dominant
        };
        assert_eq!(
            run_queue.words_behind("burn"),
            "run-queue wait behind burn (92 %)"
        );
        let timer = Dominant {
            cause: Cause::Timer,
            ..run_queue
        };
        assert_eq!(timer.words_behind("burn"), "timer/wake-up delivery (92 %)");
    }
}
