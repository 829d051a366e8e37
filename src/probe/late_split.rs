//! A probe's split of its events into the causes of their delay, when the
//! run takes the readings for it (not with `--no-late-split`): the account
//! allocated when the probe is built ([`LateSplit`]), the readings taken by
//! the thread that waits and works (`measure::attrib::Splitting`), and the
//! rule an event is late by. Without the split the probe reads only the clock, as it
//! would without this module, and its result has no `late`.

use crate::measure::attrib::Splitting;
use crate::measure::late::LateAccount;
use crate::measure::window::Window;
use crate::sim::io::show_threshold;
use crate::sim::WorkParams;

/// The account a probe splits its events into, allocated when it is built
/// (before its memory is locked); `None` when the run does not split.
#[derive(Debug)]
pub struct LateSplit {
    account: Option<LateAccount>,
}

impl LateSplit {
    /// The account for a run of `params`, with a log of every event when
    /// the run writes a trace.
    pub fn new(params: &WorkParams) -> Self {
        Self {
            account: account(params),
        }
    }

    /// No account: a probe whose events are not split whatever the run
    /// asks.
    pub fn off() -> Self {
        Self { account: None }
    }

    /// Starts splitting on the calling thread, which must be the one that
    /// waits for and does the events, counting them per sub-window of
    /// `window` too.
    pub fn open(self, window: Window) -> Splitting {
        let mut splitting = self.open_before_window();
        splitting.set_window(window);
        splitting
    }

    /// Starts splitting as [`LateSplit::open`] does, before the window is
    /// known (on a thread started when the probe is prepared): the events
    /// are counted per sub-window only once the probe gives the window
    /// ([`Splitting::set_window`]).
    pub fn open_before_window(self) -> Splitting {
        Splitting::open(self.account)
    }

    /// Starts splitting as [`LateSplit::open_before_window`] does, reading
    /// the thread's CPU time from its CPU clock: for a probe that times the
    /// thread's own context switches, which a perf counter on the thread
    /// would slow.
    pub fn open_on_cpu_clock(self) -> Splitting {
        Splitting::open_on_cpu_clock(self.account)
    }
}

/// The account a run of `params` splits a thread's events into, with a log
/// of every event when the run writes a trace; `None` when it does not
/// split. For a probe that accounts events outside a [`Splitting`] (the
/// game's display thread accounts each frame by its late link's split).
pub fn account(params: &WorkParams) -> Option<LateAccount> {
    params.late_split.then(|| match params.trace_events {
        0 => LateAccount::new(),
        capacity => LateAccount::new().with_log(capacity),
    })
}

/// A rule "ended more than `threshold_ns` after it was due", in words
/// (`a request done more than 100ms after it was due`), the threshold
/// shown as the `--io-thresholds` labels show theirs.
pub fn threshold_rule(event: &str, threshold_ns: u64) -> String {
    format!(
        "{event} done more than {} after it was due",
        show_threshold(threshold_ns)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::LateCauses;
    use crate::measure::late::EventTimes;

    #[test]
    fn without_the_split_there_is_no_account_and_no_causes() {
        let params = WorkParams {
            late_split: false,
            ..WorkParams::for_tests()
        };
        let mut off = LateSplit::new(&params).open(Window::ms(0, 1));
        let woke = off.woke();
        let times = EventTimes {
            due_ns: woke,
            cpu_wanted_ns: None,
        };
        assert!(off.ended_by(times, woke) >= woke);
        assert!(LateCauses::of_splitting(&off, "rule").is_none());
    }

    #[test]
    fn with_the_split_each_event_is_accounted_by_its_deadline() {
        let mut on = LateSplit::new(&WorkParams::for_tests()).open_before_window();
        for deadline_offset_ns in [u64::MAX / 4, 0] {
            let due_ns = on.woke();
            let times = EventTimes {
                due_ns,
                cpu_wanted_ns: None,
            };
            std::thread::sleep(std::time::Duration::from_millis(1));
            on.ended_by(times, due_ns.saturating_add(deadline_offset_ns));
        }
        let late = LateCauses::of_splitting(&on, "a test event done late").unwrap();
        assert_eq!((late.events(), late.late()), (2, 1));
        assert_eq!(late.rule, "a test event done late");
        assert_eq!(late.worst.len(), 1);
        assert_eq!(late.worst[0].delay_ns(), late.late_parts().total_ns());
    }

    #[test]
    fn threshold_rules_say_their_threshold() {
        assert_eq!(
            threshold_rule("a request", 100_000_000),
            "a request done more than 100ms after it was due"
        );
        assert_eq!(
            threshold_rule("an operation", 2_500_000),
            "an operation done more than 2ms 500us after it was due"
        );
        assert_eq!(
            threshold_rule("x", 500_000),
            "x done more than 500us after it was due"
        );
    }
}
