//! One event split from the readings of its thread: the parts of its
//! delay and the cause it is labelled with.

use super::{Cause, DelaySplit, EventTimes, Part, Parts, ThreadSnapshot};
use serde::{Deserialize, Serialize};

/// One event split: its readings' deltas and the parts of its delay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventSplit {
    /// When it was due, woke and ended (`CLOCK_MONOTONIC`, ns, the clock
    /// `perf --clockid monotonic` and `trace-cmd -C mono` stamp with); an
    /// event that was dropped at its wake-up ends when it woke.
    pub due_ns: u64,
    pub woke_ns: u64,
    pub ended_ns: u64,
    /// CPU it wanted (`None`: no set amount) and CPU it used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wanted_ns: Option<u64>,
    pub cpu_used_ns: u64,
    /// The CPU it woke on and the one it ended on.
    pub woke_cpu: u32,
    pub ended_cpu: u32,
    /// Blocking switches, preemptions and major faults during its work.
    pub voluntary: u64,
    pub involuntary: u64,
    pub major_faults: u64,
    pub parts: Parts,
    /// The share of `parts` that is the previous event's delay, carried
    /// because this event was due while that one still ran: the same wait
    /// seen from this event, so it is not added to the thread's totals.
    #[serde(default)]
    pub carried: Parts,
    /// What delay accounting says the blocked time was, where it is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<DelaySplit>,
}

impl EventSplit {
    /// Splits an event from the readings taken at the end of the previous
    /// event (`before`, whose delay split into `previous`), at its wake-up
    /// (`woke`) and at the end of its work (`ended`; `None` for an event
    /// dropped at wake-up).
    ///
    /// An event due while the previous one still ran waited for it: that
    /// wait is split as the previous event's delay was (it was late for the
    /// same reasons), and what the previous event's own delay does not
    /// cover (its wanted work ran past this one's start) is CPU overrun.
    /// Without run-queue figures (`schedstat` false, or a reading at
    /// either end of a span that failed) run-queue wait cannot be told
    /// from timer delivery nor from steal: the wake-up's own lateness, or
    /// the unblocked time off the CPU, is unexplained.
    pub fn of(
        times: EventTimes,
        before: &ThreadSnapshot,
        previous: &Parts,
        woke: &ThreadSnapshot,
        ended: Option<&ThreadSnapshot>,
        schedstat: bool,
    ) -> Self {
        let ended_reading = ended.unwrap_or(woke);
        let wake_late = woke.at_ns.saturating_sub(times.due_ns);
        let behind_previous = before.at_ns.saturating_sub(times.due_ns).min(wake_late);
        let own_wake_late = wake_late - behind_previous;
        // Run-queue wait between two readings, where both read it.
        let waited = |from: &ThreadSnapshot, to: &ThreadSnapshot| {
            let (from, to) = (from.run_delay_ns?, to.run_delay_ns?);
            schedstat.then(|| to.saturating_sub(from))
        };
        let run_queue_wake = waited(before, woke).map(|ns| ns.min(own_wake_late));
        let wall = ended_reading.at_ns.saturating_sub(woke.at_ns);
        let cpu_used = ended_reading.cpu_ns.saturating_sub(woke.cpu_ns);
        let on_cpu = cpu_used.min(wall);
        let preempted = waited(woke, ended_reading).map(|ns| ns.min(wall - on_cpu));
        let off = wall - on_cpu - preempted.unwrap_or(0);
        let voluntary = ended_reading.voluntary.saturating_sub(woke.voluntary);
        let mut parts = Parts {
            run_queue_wake_ns: run_queue_wake.unwrap_or(0),
            run_queue_preempted_ns: preempted.unwrap_or(0),
            cpu_overrun_ns: times
                .cpu_wanted_ns
                .map_or(0, |wanted| on_cpu.saturating_sub(wanted)),
            ..Parts::default()
        };
        match run_queue_wake {
            Some(waited) => parts.timer_ns = own_wake_late - waited,
            None => parts.unexplained_ns = own_wake_late,
        }
        match (preempted.is_some(), voluntary > 0) {
            (_, true) => parts.blocked_ns = off,
            (true, false) => parts.off_cpu_ns = off,
            (false, false) => parts.unexplained_ns += off,
        }
        let carried = previous.share_of(behind_previous);
        parts.add(&carried);
        Self {
            due_ns: times.due_ns,
            woke_ns: woke.at_ns,
            ended_ns: ended_reading.at_ns,
            cpu_wanted_ns: times.cpu_wanted_ns,
            cpu_used_ns: cpu_used,
            woke_cpu: woke.cpu,
            ended_cpu: ended_reading.cpu,
            voluntary,
            involuntary: ended_reading.involuntary.saturating_sub(woke.involuntary),
            major_faults: ended_reading.major_faults.saturating_sub(woke.major_faults),
            parts,
            carried,
            blocked_by: None,
        }
    }

    /// The split with what delay accounting says its work waited on
    /// (`delays`): blocked time is named by it, and the time in direct
    /// reclaim, compaction and thrashing, which delay accounting measures as
    /// wall time with the CPU spent there, becomes the memory stall part,
    /// taken from the CPU beyond what the event wanted (all its CPU when it
    /// wants no set amount), then from its blocked time.
    pub fn with_delays(mut self, delays: DelaySplit) -> Self {
        self.blocked_by = Some(delays);
        let wall = self.ended_ns - self.woke_ns;
        let mut left = delays.stall_ns().min(wall);
        let mut take = |part: &mut u64| {
            let taken = (*part).min(left);
            *part -= taken;
            left -= taken;
            taken
        };
        let mut stall = take(&mut self.parts.cpu_overrun_ns);
        if self.cpu_wanted_ns.is_none() {
            let mut own_cpu = self.cpu_used_ns.min(wall);
            stall += take(&mut own_cpu);
        }
        stall += take(&mut self.parts.blocked_ns);
        self.parts.memory_stall_ns = stall;
        self
    }

    /// The delay: the parts' sum.
    pub fn delay_ns(&self) -> u64 {
        self.parts.total_ns()
    }

    /// The part holding at least half the delay, with blocked time named
    /// by delay accounting or a major fault; `Mixed` when none does.
    pub fn cause(&self) -> Cause {
        let delay = self.delay_ns();
        if delay == 0 {
            return Cause::Unexplained;
        }
        let Some((part, _)) = self
            .parts
            .by_part()
            .into_iter()
            .find(|(_, ns)| ns * 2 >= delay)
        else {
            return Cause::Mixed;
        };
        match part {
            Part::Timer => Cause::Timer,
            Part::RunQueue => Cause::RunQueue,
            Part::Blocked => match self.blocked_by.and_then(|split| split.largest()) {
                Some(named) => named,
                None if self.major_faults > 0 => Cause::MajorFault,
                None => Cause::BlockedOther,
            },
            Part::MemoryStall => self
                .blocked_by
                .map_or(Cause::Reclaim, |split| split.largest_stall()),
            Part::OffCpu => Cause::OffCpu,
            Part::CpuOverrun => Cause::CpuOverrun,
            Part::Unexplained => Cause::Unexplained,
        }
    }

    /// The part of the delay its cause stands for (the whole delay for
    /// `Mixed`).
    pub fn part_of(&self, cause: Cause) -> u64 {
        cause
            .part()
            .map_or_else(|| self.delay_ns(), |part| self.parts.of(part))
    }
}

#[cfg(test)]
mod tests {
    use super::super::scripted::{reading, split_of, times, MS};
    use super::*;

    #[test]
    fn a_frame_that_waited_behind_another_task_is_run_queue_wait() {
        // Due at 100, woke at 109 of which 8 ms on a run queue; 6 ms of work
        // in 8 ms with 2 ms preempted.
        let before = reading(90, 10, 50, 3);
        let woke = reading(109, 10, 58, 4);
        let ended = reading(117, 16, 60, 4);
        let split = split_of(times(100, 6), &before, &woke, &ended);
        assert_eq!(split.parts.timer_ns, MS);
        assert_eq!(split.parts.run_queue_wake_ns, 8 * MS);
        assert_eq!(split.parts.run_queue_preempted_ns, 2 * MS);
        assert_eq!(split.parts.off_cpu_ns, 0);
        assert_eq!(split.delay_ns(), 11 * MS);
        assert_eq!(split.cause(), Cause::RunQueue);
    }

    #[test]
    fn off_cpu_time_is_blocked_when_the_thread_switched_voluntarily_else_steal() {
        let before = reading(0, 0, 0, 0);
        let woke = reading(10, 0, 0, 1);
        let blocked_end = reading(30, 2, 0, 2);
        let split = split_of(times(10, 2), &before, &woke, &blocked_end);
        assert_eq!(split.parts.blocked_ns, 18 * MS);
        assert_eq!(split.cause(), Cause::BlockedOther);
        let mut with_swap = split;
        with_swap.blocked_by = Some(DelaySplit {
            swap_in_ns: Some(15 * MS),
            block_io_ns: Some(MS),
            ..DelaySplit::default()
        });
        assert_eq!(with_swap.cause(), Cause::SwapIn);
        let stolen_end = reading(30, 2, 0, 1);
        let stolen = split_of(times(10, 2), &before, &woke, &stolen_end);
        assert_eq!(stolen.parts.off_cpu_ns, 18 * MS);
        assert_eq!(stolen.cause(), Cause::OffCpu);
    }

    #[test]
    fn the_parts_add_up_to_the_time_past_due_less_the_cpu_wanted_and_got() {
        let before = reading(0, 0, 0, 0);
        let woke = reading(13, 0, 4, 1);
        let ended = reading(40, 20, 9, 2);
        let split = split_of(times(10, 5), &before, &woke, &ended);
        assert_eq!(split.delay_ns(), (40 - 10 - 5) * MS);
        assert_eq!(split.parts.cpu_overrun_ns, 15 * MS);
        assert_eq!(split.cause(), Cause::CpuOverrun);
    }

    #[test]
    fn without_schedstat_run_queue_wait_is_not_claimed() {
        let before = reading(0, 0, 0, 0);
        let woke = reading(19, 0, 0, 1);
        let ended = reading(30, 5, 0, 1);
        let split = EventSplit::of(
            times(10, 5),
            &before,
            &Parts::default(),
            &woke,
            Some(&ended),
            false,
        );
        assert_eq!(split.parts.run_queue_ns(), 0);
        assert_eq!(split.parts.timer_ns, 0);
        assert_eq!(split.parts.unexplained_ns, 15 * MS);
        assert_eq!(split.cause(), Cause::Unexplained);
    }

    #[test]
    fn a_failed_schedstat_reading_leaves_its_spans_unexplained() {
        // As the run-queue test above, with the reading at wake-up failed:
        // neither the wake-up's lateness nor the time off the CPU during
        // the work can be told apart, and nothing is called run-queue wait
        // (a reading of 0 made the next span's wait the thread's whole
        // run delay since it started).
        let before = reading(90, 10, 50, 3);
        let woke = ThreadSnapshot {
            run_delay_ns: None,
            ..reading(109, 10, 58, 4)
        };
        let ended = reading(117, 16, 60, 4);
        let split = split_of(times(100, 6), &before, &woke, &ended);
        assert_eq!(split.parts.run_queue_ns(), 0);
        assert_eq!(split.parts.timer_ns, 0);
        assert_eq!(split.parts.unexplained_ns, 11 * MS);
        assert_eq!(split.delay_ns(), 11 * MS);
        assert_eq!(split.cause(), Cause::Unexplained);
        // The next event's readings both worked: its wait is its own.
        let next_woke = reading(125, 16, 63, 5);
        let next_ended = reading(127, 18, 63, 5);
        let next = split_of(times(120, 2), &ended, &next_woke, &next_ended);
        assert_eq!(next.parts.run_queue_wake_ns, 3 * MS);
        assert_eq!(next.parts.timer_ns, 2 * MS);
    }

    #[test]
    fn a_frame_due_while_the_previous_one_ran_carries_its_causes() {
        // The previous frame ended at 30, 20 ms past its due time, 15 of
        // them on a run queue. This one was due at 20: 10 ms behind it.
        let previous = Parts {
            run_queue_wake_ns: 15 * MS,
            timer_ns: 5 * MS,
            ..Parts::default()
        };
        let before = reading(30, 10, 40, 2);
        let woke = reading(30, 10, 40, 2);
        let ended = reading(31, 11, 40, 2);
        let split = EventSplit::of(times(20, 1), &before, &previous, &woke, Some(&ended), true);
        assert_eq!(split.parts.run_queue_wake_ns, 7_500_000);
        assert_eq!(split.parts.timer_ns, 2_500_000);
        assert_eq!(split.delay_ns(), 10 * MS);
        assert_eq!(split.cause(), Cause::RunQueue);
        assert_eq!(split.parts.less(&split.carried), Parts::default());
        // A previous frame with no delay of its own that still ran past
        // this one's start wanted more CPU than a period: overrun.
        let overran = split_of(times(20, 1), &before, &woke, &ended);
        assert_eq!(overran.parts.cpu_overrun_ns, 10 * MS);
    }

    #[test]
    fn reclaim_is_taken_from_the_cpu_an_event_did_not_want_then_from_its_blocked_time() {
        // A response wanting no set CPU: woke on time, 30 ms of CPU and 10
        // ms blocked; delay accounting saw 35 ms of direct reclaim.
        let before = reading(0, 0, 0, 0);
        let woke = reading(10, 0, 0, 1);
        let ended = reading(50, 30, 0, 2);
        let times = EventTimes {
            due_ns: 10 * MS,
            cpu_wanted_ns: None,
        };
        let split = split_of(times, &before, &woke, &ended);
        assert_eq!(split.delay_ns(), 10 * MS);
        let reclaimed = split.with_delays(DelaySplit {
            reclaim_ns: Some(35 * MS),
            ..DelaySplit::default()
        });
        assert_eq!(reclaimed.parts.memory_stall_ns, 35 * MS);
        assert_eq!(reclaimed.parts.blocked_ns, 5 * MS);
        assert_eq!(reclaimed.delay_ns(), 40 * MS);
        assert_eq!(reclaimed.cause(), Cause::Reclaim);
        // A frame wanting 30 ms: only its overrun and blocked time can be
        // reclaim's; compaction, the larger, names it.
        let frame_times = EventTimes {
            cpu_wanted_ns: Some(25 * MS),
            ..times
        };
        let frame = split_of(frame_times, &before, &woke, &ended).with_delays(DelaySplit {
            reclaim_ns: Some(4 * MS),
            compaction_ns: Some(20 * MS),
            ..DelaySplit::default()
        });
        assert_eq!(frame.parts.memory_stall_ns, 15 * MS);
        assert_eq!(frame.parts.cpu_overrun_ns, 0);
        assert_eq!(frame.parts.blocked_ns, 0);
        assert_eq!(frame.cause(), Cause::Compaction);
    }

    #[test]
    fn a_frame_dropped_at_wake_up_has_only_its_wake_parts() {
        let before = reading(0, 0, 0, 0);
        let woke = reading(40, 0, 25, 1);
        let split = EventSplit::of(times(10, 5), &before, &Parts::default(), &woke, None, true);
        assert_eq!(split.parts.run_queue_wake_ns, 25 * MS);
        assert_eq!(split.parts.timer_ns, 5 * MS);
        assert_eq!(split.ended_ns, split.woke_ns);
        assert_eq!(split.cause(), Cause::RunQueue);
    }
}
