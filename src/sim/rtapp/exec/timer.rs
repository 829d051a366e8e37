//! rt-app's timer rules (src/rt-app.c, `rtapp_timer`), pure over the times
//! given: a grid starts at the origin of the thread that first uses it
//! (rt-app's `t_first`: the common start plus the task's `delay`, so the
//! first expiry is one period after it, whatever ran before); every timer event
//! moves the expiry one period on; slack = expiry − the time the event
//! began; a thread that is early sleeps to the expiry and its wake-up
//! latency is wake − expiry; one that is late does not sleep, its wake-up
//! latency is 0, and in relative mode the grid is re-based to that moment
//! (absolute mode keeps it, so lateness cascades until it is caught up).

use crate::sim::rtapp::model::TimerMode;

/// One timer's grid; shared by every thread that names it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TimerGrid {
    /// The last expiry handed out (the origin, at the first use); `None`
    /// before the first use.
    last_ns: Option<u64>,
}

/// What one timer event is to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Activation {
    /// When the timer expires for this event.
    pub expiry_ns: u64,
    /// Expiry − the event's beginning, in ns (negative when late).
    pub slack_ns: i64,
}

impl Activation {
    /// Whether the thread sleeps until the expiry (it is early).
    pub fn sleeps(&self) -> bool {
        self.slack_ns > 0
    }

    /// The wake-up latency of a thread that woke at `woke_ns`: 0 when it
    /// did not sleep, as rt-app counts it.
    pub fn wakeup_ns(&self, woke_ns: u64) -> u64 {
        match self.sleeps() {
            true => woke_ns.saturating_sub(self.expiry_ns),
            false => 0,
        }
    }
}

impl TimerGrid {
    /// The timer event of period `period_ns` beginning at `now_ns`, of a
    /// thread whose origin is `origin_ns`: moves the grid one period on
    /// from its last expiry, or from `origin_ns` at its first use
    /// (re-basing it, in relative mode, when this event began at or after
    /// its expiry).
    pub fn begin(
        &mut self,
        origin_ns: u64,
        now_ns: u64,
        period_ns: u64,
        mode: TimerMode,
    ) -> Activation {
        let base = self.last_ns.unwrap_or(origin_ns);
        let expiry_ns = base + period_ns;
        let slack_ns = expiry_ns as i64 - now_ns as i64;
        self.last_ns = Some(match (slack_ns > 0, mode) {
            (false, TimerMode::Relative) => now_ns,
            _ => expiry_ns,
        });
        Activation {
            expiry_ns,
            slack_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// rt-app's `t_first`: the first expiry is one period after the
    /// thread's origin, not after the event: 2 ms of work before it leave
    /// 8 ms of slack.
    #[test]
    fn the_grid_starts_one_period_after_the_origin() {
        let mut grid = TimerGrid::default();
        let a = grid.begin(100 * MS, 102 * MS, 10 * MS, TimerMode::Absolute);
        assert_eq!(a.expiry_ns, 110 * MS);
        assert_eq!(a.slack_ns, 8 * MS as i64);
        assert!(a.sleeps());
        assert_eq!(a.wakeup_ns(110 * MS + 50_000), 50_000);
        let next = grid.begin(0, 112 * MS, 10 * MS, TimerMode::Absolute);
        assert_eq!(next.expiry_ns, 120 * MS, "the origin only starts it");
    }

    /// A 10 ms grid from 0; the event of the second period begins 25 ms
    /// late (at 35 ms, its expiry 20 ms).
    fn late_by_25ms(mode: TimerMode) -> Vec<Activation> {
        let mut grid = TimerGrid::default();
        let mut out = vec![grid.begin(0, 0, 10 * MS, mode)];
        out.push(grid.begin(0, 35 * MS, 10 * MS, mode));
        out.push(grid.begin(0, 36 * MS, 10 * MS, mode));
        out.push(grid.begin(0, 37 * MS, 10 * MS, mode));
        out
    }

    #[test]
    fn absolute_mode_keeps_the_grid_and_misses_cascade() {
        let a = late_by_25ms(TimerMode::Absolute);
        let expiries: Vec<u64> = a.iter().map(|a| a.expiry_ns / MS).collect();
        assert_eq!(expiries, [10, 20, 30, 40]);
        let slacks: Vec<i64> = a.iter().map(|a| a.slack_ns / MS as i64).collect();
        assert_eq!(slacks, [10, -15, -6, 3]);
        assert!(!a[1].sleeps() && !a[2].sleeps() && a[3].sleeps());
        assert_eq!(a[1].wakeup_ns(99 * MS), 0, "no sleep, no wake-up latency");
    }

    #[test]
    fn relative_mode_rebases_on_an_overrun() {
        let a = late_by_25ms(TimerMode::Relative);
        let expiries: Vec<u64> = a.iter().map(|a| a.expiry_ns / MS).collect();
        // Late at 35: the grid restarts there; the next expiry is 45.
        assert_eq!(expiries, [10, 20, 45, 55]);
        assert!(!a[1].sleeps() && a[2].sleeps() && a[3].sleeps());
    }

    #[test]
    fn a_shared_grid_moves_a_period_per_event_of_any_thread() {
        // Two threads naming one timer: each event moves it on, as rt-app's
        // one `t_next` per timer resource.
        let mut shared = TimerGrid::default();
        let first = shared.begin(0, 0, 10 * MS, TimerMode::Absolute);
        let second = shared.begin(5 * MS, MS, 10 * MS, TimerMode::Absolute);
        assert_eq!((first.expiry_ns, second.expiry_ns), (10 * MS, 20 * MS));
        // A thread's own (`unique`) grid starts at its own origin.
        let mut own = TimerGrid::default();
        assert_eq!(
            own.begin(5 * MS, 6 * MS, 10 * MS, TimerMode::Absolute)
                .expiry_ns,
            15 * MS
        );
    }
}
