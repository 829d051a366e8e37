//! The context of late events, *inferred* from the telemetry sampled over
//! the window (`system::telemetry::window`) by joining it to the events by
//! time: for each kept late event, what the samples around its span say
//! (host steal and IRQ time on its CPUs, system pressure growth, reclaim
//! and swap-in counts, throttling of the probe's cgroup), and the same over
//! all the late events' spans and over the whole window, to compare with.
//! The samples are 100 ms apart, so an event's context covers more than its
//! own span: it says what the machine went through around it, not what
//! delayed it.

use super::late::LateCauses;
use crate::system::telemetry::window::{PressureGrowth, Reclaim, WindowSample, WindowSamples};
use serde::{Deserialize, Serialize};

/// What the samples around a span of time say, in raw counts that add up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InferredContext {
    /// The time the samples around the span cover, ns.
    pub sampled_ns: u64,
    /// The CPU time of the span's CPUs over it, and of it what the host
    /// stole and IRQs and softIRQs took, in clock ticks; `None` where
    /// /proc/stat lacks the column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ticks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_ticks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq_ticks: Option<u64>,
    /// The system's pressure growth over it.
    pub pressure: PressureGrowth,
    /// Direct reclaim and compaction stalls, swap-ins and refaults over it.
    pub reclaim: Reclaim,
    /// Periods the probe's cgroup was throttled in, and for how long, ns;
    /// `None` where its group keeps no throttling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_periods: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_ns: Option<u64>,
}

/// Both present: their sum; else `None`.
fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(a? + b?)
}

/// `after - before`, when both are there and it did not go backwards.
fn grew(before: Option<u64>, after: Option<u64>) -> Option<u64> {
    after?.checked_sub(before?)
}

impl InferredContext {
    /// The context between samples `before` and `after` for `cpus`, the
    /// probe's cgroup being group `probe_group` of the samples.
    fn between(
        before: &WindowSample,
        after: &WindowSample,
        cpus: &[usize],
        probe_group: Option<usize>,
    ) -> Self {
        let mut cpu = (Some(0), Some(0), Some(0));
        for &n in cpus {
            let ticks = |s: &WindowSample| s.cpus.get(n).copied().flatten();
            let (b, a) = (ticks(before), ticks(after));
            let total = grew(b.map(|t| t.total()), a.map(|t| t.total()));
            let steal = grew(b.and_then(|t| t.steal), a.and_then(|t| t.steal));
            let irq = |t: Option<crate::system::counters::CpuTicks>| Some(t?.irq? + t?.softirq?);
            cpu = (
                add(cpu.0, total),
                add(cpu.1, steal),
                add(cpu.2, grew(irq(b), irq(a))),
            );
        }
        let throttling =
            |s: &WindowSample| s.groups.get(probe_group?).copied().flatten()?.throttling;
        let (tb, ta) = (throttling(before), throttling(after));
        let r = (before.reclaim, after.reclaim);
        Self {
            sampled_ns: after.taken_ns.saturating_sub(before.taken_ns),
            cpu_ticks: cpu.0.filter(|_| !cpus.is_empty()),
            steal_ticks: cpu.1.filter(|_| !cpus.is_empty()),
            irq_ticks: cpu.2.filter(|_| !cpus.is_empty()),
            pressure: PressureGrowth::between(&before.pressure, &after.pressure),
            reclaim: Reclaim {
                alloc_stalls: grew(r.0.alloc_stalls, r.1.alloc_stalls),
                compact_stalls: grew(r.0.compact_stalls, r.1.compact_stalls),
                swap_ins: grew(r.0.swap_ins, r.1.swap_ins),
                refaults: grew(r.0.refaults, r.1.refaults),
            },
            throttled_periods: grew(tb.map(|t| t.nr_throttled), ta.map(|t| t.nr_throttled)),
            throttled_ns: grew(tb.map(|t| t.throttled_ns), ta.map(|t| t.throttled_ns)),
        }
    }

    /// The context of two spans together.
    pub fn add(&self, other: &Self) -> Self {
        let (a, b) = (&self.reclaim, &other.reclaim);
        Self {
            sampled_ns: self.sampled_ns + other.sampled_ns,
            cpu_ticks: add(self.cpu_ticks, other.cpu_ticks),
            steal_ticks: add(self.steal_ticks, other.steal_ticks),
            irq_ticks: add(self.irq_ticks, other.irq_ticks),
            pressure: self.pressure.add(&other.pressure),
            reclaim: Reclaim {
                alloc_stalls: add(a.alloc_stalls, b.alloc_stalls),
                compact_stalls: add(a.compact_stalls, b.compact_stalls),
                swap_ins: add(a.swap_ins, b.swap_ins),
                refaults: add(a.refaults, b.refaults),
            },
            throttled_periods: add(self.throttled_periods, other.throttled_periods),
            throttled_ns: add(self.throttled_ns, other.throttled_ns),
        }
    }

    /// The host's steal as % of the CPU time of its CPUs.
    pub fn steal_pct(&self) -> Option<f64> {
        share(self.steal_ticks?, self.cpu_ticks?)
    }

    /// IRQ and softIRQ time as % of the CPU time of its CPUs.
    pub fn irq_pct(&self) -> Option<f64> {
        share(self.irq_ticks?, self.cpu_ticks?)
    }

    /// Pressure stall time `us` as % of the sampled time (PSI's own
    /// measure: the share of wall time some or all tasks stalled).
    pub fn pressure_pct(&self, us: u64) -> Option<f64> {
        (self.sampled_ns > 0).then(|| (us as f64 * 1e5 / self.sampled_ns as f64).min(100.0))
    }

    /// In words, what there is to say: `host steal 4.1 %, IRQ 0.3 %,
    /// memory pressure some 12.0 % full 3.0 %, 4 alloc stalls, 120
    /// swap-ins, throttled 2 periods (5.0 ms)`; a quiet span says
    /// `nothing seen`.
    pub fn words(&self) -> String {
        let mut said: Vec<String> = Vec::new();
        if let Some(pct) = self.steal_pct() {
            said.push(format!("host steal {pct:.1} %"));
        }
        if let Some(pct) = self.irq_pct().filter(|p| *p > 0.0) {
            said.push(format!("IRQ {pct:.1} %"));
        }
        for resource in ["cpu", "memory", "io"] {
            let kinds: Vec<String> = self
                .pressure
                .lines()
                .into_iter()
                .filter(|(r, _, _)| *r == resource)
                .filter_map(|(_, kind, us)| Some((kind, self.pressure_pct(us)?)))
                .filter(|(_, pct)| *pct >= 0.05)
                .map(|(kind, pct)| format!("{kind} {pct:.1} %"))
                .collect();
            if !kinds.is_empty() {
                said.push(format!("{resource} pressure {}", kinds.join(" ")));
            }
        }
        let r = &self.reclaim;
        for (count, what) in [
            (r.alloc_stalls, "alloc stalls"),
            (r.compact_stalls, "compaction stalls"),
            (r.swap_ins, "swap-ins"),
            (r.refaults, "refaults"),
        ] {
            if let Some(n) = count.filter(|n| *n > 0) {
                said.push(format!("{n} {what}"));
            }
        }
        if let Some(n) = self.throttled_periods.filter(|n| *n > 0) {
            let ms = self.throttled_ns.unwrap_or(0) as f64 / 1e6;
            said.push(format!("probe's cgroup throttled {n} periods ({ms:.1} ms)"));
        }
        match said.is_empty() {
            true => "nothing seen".to_string(),
            false => said.join(", "),
        }
    }
}

fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| (100.0 * part as f64 / whole as f64).min(100.0))
}

/// What the window's samples say about a scenario's late events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LateContext {
    /// How it was found: `inferred`, from what and how often.
    pub basis: String,
    /// Late events given a context (the kept worst events whose span the
    /// samples cover).
    pub events: u64,
    /// Over the sample intervals any of them overlaps, each on the CPUs
    /// late events ran on in it.
    pub during_late: InferredContext,
    /// Over the whole window, on every CPU.
    pub window: InferredContext,
}

impl LateContext {
    /// `host steal 4.1 % of CPUs 1 during late events vs 1.0 % over the
    /// window, ...`: during the late events, with the window's steal to
    /// compare, labelled inferred.
    pub fn words(&self) -> String {
        let window_steal = self.window.steal_pct().map_or(String::new(), |pct| {
            format!(" (window: host steal {pct:.1} %)")
        });
        format!(
            "during {} late events: {}{window_steal} (inferred)",
            self.events,
            self.during_late.words()
        )
    }

    /// The context of two measurements together.
    pub fn add(&self, other: &Self) -> Self {
        Self {
            basis: self.basis.clone(),
            events: self.events + other.events,
            during_late: self.during_late.add(&other.during_late),
            window: self.window.add(&other.window),
        }
    }
}

/// Gives each kept late event of `late` the context of the samples its span
/// (due to end) overlaps, and `late` the context of all of them and of the
/// window. The probe's cgroup for throttling is the first group of the
/// samples whose roles hold `probe` and that keeps throttling. Fewer than
/// two samples give nothing.
pub fn join(samples: &WindowSamples, late: &mut LateCauses) {
    let s = &samples.samples;
    if s.len() < 2 {
        return;
    }
    let probe_group = samples.groups.iter().enumerate().position(|(i, g)| {
        g.roles.iter().any(|r| r == "probe")
            && s.iter().all(|x| {
                x.groups
                    .get(i)
                    .copied()
                    .flatten()
                    .is_some_and(|c| c.throttling.is_some())
            })
    });
    // The CPUs late events ran on in each interval between samples.
    let mut interval_cpus: Vec<Vec<usize>> = vec![Vec::new(); s.len() - 1];
    let mut events = 0;
    for event in &mut late.worst {
        let Some((first, last)) = around(s, event.due_ns, event.ended_ns) else {
            continue;
        };
        let mut cpus = vec![event.woke_cpu as usize, event.ended_cpu as usize];
        cpus.dedup();
        event.context = Some(InferredContext::between(
            &s[first],
            &s[last],
            &cpus,
            probe_group,
        ));
        events += 1;
        for seen in &mut interval_cpus[first..last] {
            for &cpu in &cpus {
                if !seen.contains(&cpu) {
                    seen.push(cpu);
                }
            }
        }
    }
    let during_late = interval_cpus
        .iter()
        .enumerate()
        .filter(|(_, cpus)| !cpus.is_empty())
        .map(|(i, cpus)| InferredContext::between(&s[i], &s[i + 1], cpus, probe_group))
        .reduce(|a, b| a.add(&b))
        .unwrap_or_default();
    let every_cpu: Vec<usize> = (0..s[0].cpus.len()).collect();
    let window = InferredContext::between(&s[0], &s[s.len() - 1], &every_cpu, probe_group);
    late.context = Some(LateContext {
        basis: format!(
            "inferred: the window's telemetry, sampled every {} ms, joined to each late event by time",
            samples.every_ns / 1_000_000
        ),
        events,
        during_late,
        window,
    });
}

/// What `samples` (in time order) say about the span `from_ns..to_ns` on
/// `cpus`, as a kept late event's context says it (no cgroup throttling);
/// `None` when fewer than two samples are given or the span lies outside
/// them.
pub fn of_span(
    samples: &[WindowSample],
    from_ns: u64,
    to_ns: u64,
    cpus: &[usize],
) -> Option<InferredContext> {
    if samples.len() < 2 {
        return None;
    }
    let (first, last) = around(samples, from_ns, to_ns)?;
    Some(InferredContext::between(
        &samples[first],
        &samples[last],
        cpus,
        None,
    ))
}

/// The samples around the span `from_ns..to_ns`: the last taken at or
/// before its start and the first at or after its end (or the first and
/// last samples where the span runs past them); `None` when the span lies
/// outside the samples.
fn around(samples: &[WindowSample], from_ns: u64, to_ns: u64) -> Option<(usize, usize)> {
    let (first_ns, last_ns) = (samples[0].taken_ns, samples[samples.len() - 1].taken_ns);
    if to_ns < first_ns || from_ns > last_ns {
        return None;
    }
    let first = samples
        .partition_point(|x| x.taken_ns <= from_ns)
        .saturating_sub(1);
    let last = samples
        .partition_point(|x| x.taken_ns < to_ns)
        .min(samples.len() - 1)
        .max(first + 1);
    Some((first, last))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::late::ReadCost;
    use crate::measure::late::{EventSplit, EventTimes, LateAccount, Parts, ThreadSnapshot};
    use crate::system::cgroup::watch::{GroupCounters, Throttling, WatchedGroup};
    use crate::system::counters::{CpuTicks, Pressure, PressureLine};
    use crate::system::telemetry::window::SystemPressure;

    const MS: u64 = 1_000_000;

    /// CPU ticks with `busy` user, `steal` and `irq` ticks of 10 per tick
    /// of the sample's clock.
    fn ticks(busy: u64, steal: u64, irq: u64) -> Option<CpuTicks> {
        Some(CpuTicks {
            user: busy,
            nice: 0,
            system: 0,
            idle: 0,
            iowait: Some(0),
            irq: Some(irq),
            softirq: Some(0),
            steal: Some(steal),
        })
    }

    fn memory_pressure(some_us: u64) -> SystemPressure {
        let line = PressureLine {
            avg10_pct: 0.0,
            avg60_pct: 0.0,
            avg300_pct: 0.0,
            total_us: some_us,
        };
        SystemPressure {
            memory: Some(Pressure {
                some: Some(line),
                full: None,
            }),
            ..SystemPressure::default()
        }
    }

    /// Samples every 100 ms from 1 s: CPU 0 busy, CPU 1 stolen from in the
    /// second interval (5 of 10 ticks) only; memory pressure grows 20 ms in
    /// the third interval, with 3 swap-ins; the probe's group is throttled
    /// once, in the first.
    fn samples() -> WindowSamples {
        let at = |k: u64, cpu1: Option<CpuTicks>, memory_us: u64, swap_ins: u64, throttled: u64| {
            WindowSample {
                taken_ns: 1000 * MS + k * 100 * MS,
                cpus: vec![ticks(10 * k, 0, 0), cpu1],
                pressure: memory_pressure(memory_us),
                reclaim: Reclaim {
                    swap_ins: Some(swap_ins),
                    ..Reclaim::default()
                },
                groups: vec![Some(GroupCounters {
                    throttling: Some(Throttling {
                        nr_periods: 10 * k,
                        nr_throttled: throttled,
                        throttled_ns: throttled * 4 * MS,
                    }),
                    ..GroupCounters::default()
                })],
            }
        };
        WindowSamples {
            every_ns: 100 * MS,
            groups: vec![WatchedGroup {
                hierarchy: "cgroup v1 cpu".into(),
                path: "/cg/cpu".into(),
                roles: vec!["probe".into(), "loads".into()],
            }],
            samples: vec![
                at(0, ticks(0, 0, 0), 0, 0, 0),
                at(1, ticks(10, 0, 1), 0, 0, 1),
                at(2, ticks(15, 5, 1), 0, 0, 1),
                at(3, ticks(25, 5, 1), 20_000, 3, 1),
            ],
            cpu_ns: MS,
            errors: vec![],
        }
    }

    /// Late causes with events spanning `spans` (ms since 1 s) on `cpus`.
    fn late_with(spans: &[(u64, u64, u32)]) -> LateCauses {
        let mut account = LateAccount::new();
        let before = ThreadSnapshot {
            run_delay_ns: Some(0),
            ..ThreadSnapshot::default()
        };
        for _ in spans {
            let woke = ThreadSnapshot {
                at_ns: 20 * MS,
                run_delay_ns: Some(9 * MS),
                ..before
            };
            let ended = ThreadSnapshot {
                at_ns: 21 * MS,
                cpu_ns: MS,
                ..woke
            };
            let times = EventTimes {
                due_ns: 10 * MS,
                cpu_wanted_ns: Some(MS),
            };
            let split =
                EventSplit::of(times, &before, &Parts::default(), &woke, Some(&ended), true);
            account.record(&split, true);
        }
        let mut late = LateCauses::of(&account, "missed its deadline", true, ReadCost::default());
        for (event, &(from, to, cpu)) in late.worst.iter_mut().zip(spans) {
            event.due_ns = 1000 * MS + from * MS;
            event.woke_ns = event.due_ns;
            event.ended_ns = 1000 * MS + to * MS;
            event.woke_cpu = cpu;
            event.ended_cpu = cpu;
        }
        late
    }

    #[test]
    fn an_event_gets_the_samples_around_its_span_on_its_cpu() {
        let mut late = late_with(&[(150, 160, 1), (120, 250, 0), (350, 360, 1)]);
        join(&samples(), &mut late);
        let steal_event = late.worst[0].context.as_ref().unwrap();
        assert_eq!(steal_event.sampled_ns, 100 * MS);
        assert_eq!(
            (steal_event.cpu_ticks, steal_event.steal_ticks),
            (Some(10), Some(5))
        );
        assert_eq!(steal_event.steal_pct(), Some(50.0));
        assert_eq!(steal_event.reclaim.swap_ins, Some(0));
        assert_eq!(steal_event.throttled_periods, Some(0));
        assert_eq!(steal_event.words(), "host steal 50.0 %");
        // 120..250 ms: the samples at 100 and 300 ms, on CPU 0 (no steal);
        // the memory pressure of the third interval is in it.
        let long = late.worst[1].context.as_ref().unwrap();
        assert_eq!(long.sampled_ns, 200 * MS);
        assert_eq!(long.steal_pct(), Some(0.0));
        assert_eq!(long.pressure.memory_some_us, Some(20_000));
        assert_eq!(long.pressure_pct(20_000), Some(10.0));
        assert_eq!(long.reclaim.swap_ins, Some(3));
        assert_eq!(
            long.words(),
            "host steal 0.0 %, memory pressure some 10.0 %, 3 swap-ins"
        );
        assert_eq!(late.worst[2].context, None, "past the last sample");
        let summary = late.context.as_ref().unwrap();
        assert_eq!(summary.events, 2);
        // Intervals 2 (CPUs 1 and 0) and 3 (CPU 0): 10 + 10 + 10 ticks.
        assert_eq!(summary.during_late.sampled_ns, 200 * MS);
        assert_eq!(summary.during_late.cpu_ticks, Some(30));
        assert_eq!(summary.during_late.steal_ticks, Some(5));
        assert_eq!(summary.window.throttled_periods, Some(1));
        assert_eq!(summary.window.throttled_ns, Some(4 * MS));
        assert_eq!(summary.window.irq_ticks, Some(1));
        assert!(summary.basis.starts_with("inferred") && summary.basis.contains("100 ms"));
        assert_eq!(
            summary.words(),
            "during 2 late events: host steal 16.7 %, memory pressure some 10.0 %, 3 swap-ins \
             (window: host steal 8.2 %) (inferred)"
        );
    }

    #[test]
    fn shares_stay_within_0_and_100_and_absent_counters_stay_absent() {
        let mut samples = samples();
        for s in &mut samples.samples {
            s.cpus[1] = s.cpus[1].map(|t| CpuTicks { steal: None, ..t });
            s.reclaim = Reclaim::default();
            s.groups = vec![None];
        }
        let mut late = late_with(&[(0, 300, 1)]);
        join(&samples, &mut late);
        let c = late.worst[0].context.as_ref().unwrap();
        assert_eq!((c.steal_ticks, c.steal_pct()), (None, None));
        assert_eq!(c.reclaim, Reclaim::default());
        assert_eq!((c.throttled_periods, c.throttled_ns), (None, None));
        assert!(c.irq_pct().is_some_and(|p| (0.0..=100.0).contains(&p)));
        assert_eq!(c.pressure_pct(u64::MAX / 1000), Some(100.0));
        let mut one = samples.clone();
        one.samples.truncate(1);
        let mut late = late_with(&[(0, 10, 0)]);
        join(&one, &mut late);
        assert_eq!((late.context, late.worst[0].context.clone()), (None, None));
    }

    #[test]
    fn contexts_of_repeats_add_up_and_round_trip() {
        let mut late = late_with(&[(150, 160, 1)]);
        join(&samples(), &mut late);
        let summary = late.context.clone().unwrap();
        let twice = summary.add(&summary);
        assert_eq!(twice.events, 2);
        assert_eq!(
            twice.during_late.steal_pct(),
            summary.during_late.steal_pct()
        );
        assert_eq!(twice.window.sampled_ns, 600 * MS);
        let json = serde_json::to_string(&late).unwrap();
        assert!(json.contains(r#""context":{"sampled_ns""#), "{json}");
        assert_eq!(serde_json::from_str::<LateCauses>(&json).unwrap(), late);
    }
}
