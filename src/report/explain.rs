//! `feelbench report --explain`: per scenario, why its events were late. A
//! table of causes (late events, their share of the late events and of
//! their delay, the median and 99th percentile of the part each cause
//! stands for), where the late time went by part, then, as `rtla timerlat`'s
//! auto-analysis does, the worst events broken down part by part with the
//! tasks that ran instead and their inferred context, the scenario's
//! context and cgroups (`late_context`), the notices and what the readings
//! cost.

use super::late::{self, CauseRow};
use super::late_context;
use crate::document::schema::{RunDocument, ScenarioResult, ScenarioStatus};
use crate::figures::explain::ExplainStatus;
use crate::figures::late::{LateCauses, LateEvent};

/// Worst events shown per scenario unless told otherwise.
pub const DEFAULT_WORST: usize = 5;

/// The explanation of every scenario of `run`, each with its `worst` worst
/// late events, after the run's Perfetto trace where it has one.
pub fn render(run: &RunDocument, worst: usize) -> String {
    let mut out = run
        .run
        .trace_words()
        .map_or_else(String::new, |words| format!("{words}\n"));
    for scenario in &run.scenarios {
        out.push_str(&scenario_text(scenario, worst));
    }
    if !run.scenarios.iter().any(|s| late::causes_of(s).is_some()) {
        out.push_str(
            "\nno scenario of this run split its late events: its probes do not, or the run \
             was made by a feelbench older than the split\n",
        );
    }
    out
}

/// One scenario's explanation, under its title.
fn scenario_text(scenario: &ScenarioResult, worst: usize) -> String {
    let title = format!("{} under {}", scenario.probe, scenario.load);
    if scenario.outcome.status != ScenarioStatus::Ok {
        return format!("\n--- {title}: failed, nothing to explain ---\n");
    }
    let Some(causes) = late::causes_of(scenario) else {
        return format!("\n--- {title}: late events not split ---\n");
    };
    let mut out = format!(
        "\n--- {title}: {} of {} events late ({}) ---\n",
        causes.late(),
        causes.events(),
        causes.rule
    );
    if causes.late() > 0 {
        out.push_str(&cause_table(&late::cause_rows(causes)));
        out.push_str(&format!("late time by part: {}\n", late_time_text(causes)));
        out.push_str(&worst_text(causes, worst));
    }
    out.push_str(&late_context::scenario_lines(scenario, causes));
    out.push_str(&format!("{}\n", all_events_text(causes)));
    out.push_str(&recorder_lines(causes));
    for notice in &causes.notices {
        out.push_str(&format!("notice: {notice}\n"));
    }
    let measured_s = scenario.outcome.result.as_ref().map(|r| r.measured_s());
    out.push_str(&format!("{}\n", cost_text(causes, measured_s)));
    out
}

/// The causes' table.
fn cause_table(rows: &[CauseRow]) -> String {
    let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
    let mut out = format!(
        "{:<26}{:>6}{:>10}{:>17}{:>11}{:>11}\n",
        "Cause", "Late", "% late", "% of late delay", "p50 (ms)", "p99 (ms)"
    );
    for r in rows {
        out.push_str(&format!(
            "{:<26}{:>6}{:>10.1}{:>17.1}{:>11}{:>11}\n",
            r.cause.words(),
            r.count,
            r.events_pct,
            r.delay_pct,
            ms(r.part_p50_ms),
            ms(r.part_p99_ms)
        ));
    }
    out
}

/// `timer 1.8 %, run-queue wait 96.8 %, ...`: the parts of the late time
/// that hold any.
fn late_time_text(causes: &LateCauses) -> String {
    late::late_time_shares(causes)
        .into_iter()
        .filter(|(_, pct)| *pct > 0.0)
        .map(|(part, pct)| format!("{} {pct:.1} %", part.words()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `all events, in ms: run queue 1503.20 (at wake-up 12.01), timer 3.10,
/// ...`: the parts added up over every event, each wait once, the figure
/// to hold against an external tracer's total for the probe's thread.
fn all_events_text(causes: &LateCauses) -> String {
    let all = causes.all_parts();
    let ms = |ns: u64| format!("{:.2}", ns as f64 / 1e6);
    format!(
        "all events, in ms: run queue {} (at wake-up {}), timer {}, blocked {}, memory stall {}, \
         off-CPU {}, CPU overrun {}, unexplained {}",
        ms(all.run_queue_ns()),
        ms(all.run_queue_wake_ns),
        ms(all.timer_ns),
        ms(all.blocked_ns),
        ms(all.memory_stall_ns),
        ms(all.off_cpu_ns),
        ms(all.cpu_overrun_ns),
        ms(all.unexplained_ns),
    )
}

/// What `--explain` recorded: its status and cost, then each probe thread's
/// waits with the tasks that ran meanwhile; nothing without it.
fn recorder_lines(causes: &LateCauses) -> String {
    let Some(summary) = &causes.explain else {
        return String::new();
    };
    let cost = &summary.cost;
    let measured = cost
        .measured_cpu_pct
        .map_or("not measured".to_string(), |pct| {
            format!("measured {pct:.2} %")
        });
    let status = match summary.status {
        ExplainStatus::Recorded => "recorded",
        ExplainStatus::Stopped => "stopped part-way",
        ExplainStatus::Off => "off",
    };
    let mut out = format!(
        "recorder ({status}; {}): {} records, {} lost; cost of a CPU predicted {:.2} %, {measured}\n",
        summary.method, cost.records, cost.lost, cost.predicted_cpu_pct
    );
    for thread in &summary.threads {
        let behind: Vec<String> = thread
            .behind
            .iter()
            .map(|r| format!("{} {:.1}", r.task, r.ns as f64 / 1e6))
            .collect();
        out.push_str(&format!(
            "{} (tid {}) waited {} times, {:.2} ms in all, behind: {} ms\n",
            thread.name,
            thread.tid,
            thread.waits,
            thread.wait_ns as f64 / 1e6,
            behind.join(", ")
        ));
    }
    out
}

/// The `worst` worst late events, one line each.
fn worst_text(causes: &LateCauses, worst: usize) -> String {
    let shown = &causes.worst[..worst.min(causes.worst.len())];
    if shown.is_empty() {
        return String::new();
    }
    let mut out = format!("worst {} of {} late:\n", shown.len(), causes.late());
    for (i, event) in shown.iter().enumerate() {
        let text = event_text(event, causes.schedstat);
        out.push_str(&format!("{:>3}. {text}\n", i + 1));
        if let Some(context) = late_context::event_line(event) {
            out.push_str(&format!("     {context}\n"));
        }
    }
    out
}

/// One late event broken down, in ms, as rtla's auto-analysis does: `due
/// 806.297487 s (monotonic) on CPU 0, 27.67 ms late, run-queue wait: timer
/// 0.19 | run queue 27.46: burn#2 8.1 | on-CPU 8.81 of 8.80 wanted |
/// blocked 0 | off-CPU 0.00 | unexplained 0.00 ms`. Without `schedstat`
/// the run queue, the timer and off-CPU parts are `unavailable` (their
/// time is in the unexplained part).
pub fn event_text(event: &LateEvent, schedstat: bool) -> String {
    let ms = |ns: u64| format!("{:.2}", ns as f64 / 1e6);
    let p = &event.parts;
    let cpus = match event.woke_cpu == event.ended_cpu {
        true => format!("CPU {}", event.woke_cpu),
        false => format!("CPUs {}→{}", event.woke_cpu, event.ended_cpu),
    };
    let read = |ns: u64| match schedstat {
        true => ms(ns),
        false => "unavailable".to_string(),
    };
    let ran = late::ran_instead_text(event);
    let run_queue = match ran.is_empty() {
        true => read(p.run_queue_ns()),
        false => format!("{}: {ran}", read(p.run_queue_ns())),
    };
    let link = event
        .link
        .as_ref()
        .map_or(String::new(), |link| format!("late in {link}, "));
    format!(
        "{link}due {:.6} s (monotonic) on {cpus}, {} ms late, {}: timer {} | run queue {run_queue} | \
         on-CPU {}{} | blocked {}{}{} | off-CPU {} | unexplained {} ms",
        event.due_ns as f64 / 1e9,
        ms(event.delay_ns()),
        event.cause.words(),
        read(p.timer_ns),
        ms(event.cpu_used_ns),
        event
            .cpu_wanted_ns
            .map_or(String::new(), |wanted| format!(" of {} wanted", ms(wanted))),
        match p.blocked_ns {
            0 => "0".to_string(),
            ns => ms(ns),
        },
        blocked_text(event),
        match p.memory_stall_ns {
            0 => String::new(),
            ns => format!(" | memory stall {}", ms(ns)),
        },
        read(p.off_cpu_ns),
        ms(p.unexplained_ns),
    )
}

/// What the blocked time was, where delay accounting said (`: block I/O
/// 3.20, swap-in 1.00`), and the major faults taken.
fn blocked_text(event: &LateEvent) -> String {
    let mut kinds: Vec<String> = Vec::new();
    if let Some(d) = &event.blocked_by {
        let named = [
            ("block I/O", d.block_io_ns),
            ("swap-in", d.swap_in_ns),
            ("reclaim", d.reclaim_ns),
            ("thrashing", d.thrashing_ns),
            ("compaction", d.compaction_ns),
            ("copy-on-write", d.write_copy_ns),
        ];
        kinds.extend(
            named
                .into_iter()
                .filter_map(|(name, ns)| Some((name, ns.filter(|ns| *ns > 0)?)))
                .map(|(name, ns)| format!("{name} {:.2}", ns as f64 / 1e6)),
        );
    }
    if event.major_faults > 0 {
        kinds.push(format!("{} major faults", event.major_faults));
    }
    match kinds.is_empty() {
        true => String::new(),
        false => format!(": {}", kinds.join(", ")),
    }
}

/// `readings: 464 of 3.29 µs = 1.53 ms, 0.051 % of the 3.0 s measured`.
fn cost_text(causes: &LateCauses, measured_s: Option<f64>) -> String {
    let cost = &causes.cost;
    let share = measured_s
        .filter(|s| *s > 0.0)
        .map(|s| {
            format!(
                ", {:.3} % of the {s:.1} s measured",
                100.0 * cost.total_s() / s
            )
        })
        .unwrap_or_default();
    format!(
        "readings: {} of {:.2} µs = {:.2} ms{share}",
        cost.reads,
        cost.ns_per_read / 1e3,
        cost.total_s() * 1e3
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::late::tests::{causes, with_ran_instead, MS};

    fn run_with(causes: LateCauses) -> RunDocument {
        let mut run = crate::document::fixture::run();
        run.scenarios[1].outcome.result.as_mut().unwrap().late = Some(causes);
        run
    }

    #[test]
    fn the_recorder_says_its_status_cost_and_what_each_thread_waited_behind() {
        use crate::figures::explain::{ExplainCost, ExplainSummary, ThreadWaits};
        let mut late = with_ran_instead(causes(1, 0));
        assert_eq!(recorder_lines(&late), "");
        let mut summary = ExplainSummary::off(
            "perf_event_open",
            "too dear".into(),
            ExplainCost {
                predicted_cpu_pct: 2.5,
                ..ExplainCost::default()
            },
        );
        summary.threads = vec![ThreadWaits {
            tid: 7,
            name: "fb-probe-x".into(),
            waits: 3,
            wait_ns: 12 * MS,
            behind: late.worst[0].ran_instead.clone(),
        }];
        late.explain = Some(summary);
        assert_eq!(
            recorder_lines(&late),
            "recorder (off; perf_event_open): 0 records, 0 lost; cost of a CPU predicted 2.50 %, \
             not measured\n\
             fb-probe-x (tid 7) waited 3 times, 12.00 ms in all, behind: burn#2 5.6, burn#1 3.0, \
             kworker/1:2 0.4 ms\n"
        );
    }

    #[test]
    fn a_scenario_shows_its_causes_late_time_worst_events_and_cost() {
        let text = render(&run_with(with_ran_instead(causes(3, 1))), 2);
        assert!(
            text.contains(
                "\n--- audio under burn: 4 of 100 events late (missed its deadline) ---\n"
            ),
            "{text}"
        );
        let lines: Vec<&str> = text.lines().collect();
        let header = lines.iter().position(|l| l.starts_with("Cause")).unwrap();
        let row = |cause: &str| {
            lines[header + 1..]
                .iter()
                .find(|l| l.starts_with(cause))
                .unwrap()
        };
        let cells: Vec<&str> = row("run-queue wait").split_whitespace().collect();
        assert_eq!(cells[2..5], ["3", "75.0", "89.2"], "{text}");
        let ms = |cell: &str| cell.parse::<f64>().unwrap();
        assert!((ms(cells[5]) - 10.0).abs() < 0.05 && (ms(cells[6]) - 11.0).abs() < 0.05);
        assert!(row("blocked (other)").contains("     1      25.0             10.8"));
        assert!(lines[header].contains("% late  % of late delay"), "{text}");
        assert!(text.contains(
            "late time by part: timer/wake-up delivery 8.1 %, run-queue wait 81.1 %, blocked 10.8 %\n"
        ), "{text}");
        assert!(text.contains("worst 2 of 4 late:\n  1. due 0.010000 s (monotonic) on CPU 0, 12.00 ms late, run-queue wait: timer 1.00 | run queue 11.00: burn#2 7.6, burn#1 3.0, kworker/1:2 0.4 | on-CPU 1.00 of 1.00 wanted | blocked 0 | off-CPU 0.00 | unexplained 0.00 ms\n  2. "), "{text}");
        assert!(!text.contains("  3. "), "{text}");
        assert!(
            text.contains(
                "all events, in ms: run queue 30.00 (at wake-up 30.00), timer 3.00, blocked 4.00, "
            ),
            "{text}"
        );
        assert!(
            text.contains("readings: 300 of 2.00 µs = 0.60 ms, 0.020 % of the 3.0 s measured\n"),
            "{text}"
        );
        assert!(text.contains("--- audio under none: late events not split ---"));
        assert!(text.contains("--- audio under video: failed, nothing to explain ---"));
        assert!(!text.contains("no scenario of this run"));
    }

    #[test]
    fn blocked_time_is_named_where_delay_accounting_said() {
        let mut late = causes(0, 1);
        let event = &mut late.worst[0];
        event.blocked_by = Some(crate::measure::late::DelaySplit {
            block_io_ns: Some(3 * MS),
            swap_in_ns: Some(MS),
            ..Default::default()
        });
        event.major_faults = 2;
        assert!(event_text(event, true)
            .contains("| blocked 4.00: block I/O 3.00, swap-in 1.00, 2 major faults |"));
    }

    #[test]
    fn without_schedstat_the_parts_it_tells_apart_are_unavailable_not_zero() {
        let late = causes(1, 0);
        let text = event_text(&late.worst[0], false);
        assert!(
            text.contains(": timer unavailable | run queue unavailable | on-CPU 1.00 of 1.00 wanted | blocked 0 | off-CPU unavailable | unexplained "),
            "{text}"
        );
    }

    #[test]
    fn a_run_without_split_late_events_says_so_and_notices_are_shown() {
        let text = render(&crate::document::fixture::run(), DEFAULT_WORST);
        assert!(
            text.contains("no scenario of this run split its late events"),
            "{text}"
        );
        let mut none_late = causes(0, 0);
        none_late.notices.push("run-queue wait unavailable".into());
        let text = render(&run_with(none_late), DEFAULT_WORST);
        assert!(text.contains("0 of 100 events late"), "{text}");
        assert!(!text.contains("Cause"), "{text}");
        assert!(
            text.contains("notice: run-queue wait unavailable\nreadings: "),
            "{text}"
        );
    }

    #[test]
    fn the_inferred_context_follows_each_event_and_the_scenario() {
        use crate::figures::late_context::{InferredContext, LateContext};
        use crate::system::telemetry::window::WindowTelemetry;
        use crate::system::telemetry::ScenarioTelemetry;
        let mut late = causes(1, 0);
        let context = InferredContext {
            sampled_ns: 100 * MS,
            cpu_ticks: Some(10),
            steal_ticks: Some(1),
            ..InferredContext::default()
        };
        late.worst[0].context = Some(context.clone());
        late.context = Some(LateContext {
            basis: "inferred".into(),
            events: 1,
            during_late: context.clone(),
            window: context,
        });
        let mut run = run_with(late);
        let sample = crate::system::telemetry::TelemetrySample::default();
        let telemetry =
            ScenarioTelemetry::new(sample.clone(), sample).with_window(WindowTelemetry {
                every_ms: 100.0,
                span_ms: 1000.0,
                samples: 11,
                sampler_cpu_ms: 3.0,
                cgroups: vec![],
                errors: vec!["cannot read /x".into()],
            });
        run.scenarios[1].outcome.telemetry = Some(telemetry);
        let text = render(&run, 1);
        assert!(
            text.contains(
                " unexplained 0.00 ms\n     context (inferred): host steal 10.0 %\n\
                 context during 1 late events: host steal 10.0 % (window: host steal 10.0 %) (inferred)\n\
                 window sampled every 100 ms: 11 samples over 1.00 s, the sampler's CPU 3.0 ms (0.30 % of a CPU)\n\
                 notice: window telemetry: cannot read /x\n\
                 all events, in ms: run queue 9.00 (at wake-up 9.00), timer 1.00, "
            ),
            "{text}"
        );
    }

    #[test]
    fn an_event_of_a_chain_names_the_link_that_was_late() {
        let split = crate::measure::late::EventSplit {
            due_ns: 1_000_000_000,
            ended_ns: 1_020_000_000,
            ..Default::default()
        };
        let event = LateEvent {
            link: Some("workers".into()),
            ..LateEvent::of(&split)
        };
        let text = event_text(&event, true);
        assert!(
            text.starts_with("late in workers, due 1.000000 s"),
            "{text}"
        );
        assert!(event_text(&LateEvent::of(&split), true).starts_with("due "));
    }
}
