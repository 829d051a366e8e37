//! The split of late events (`result.late`) on short real runs of each kind
//! of probe that has events: every event is split, and counted in one
//! sub-window, no more are late than there are, each late event kept whole has parts that add up to its
//! delay and a cause, the rule is stated, and `--no-late-split` leaves the
//! split out and records that it did. No timing and no cause is asserted:
//! which events are late, and why, depends on the machine.

use crate::common::{feelbench, new_tag, read_json, stderr, wait_for_no_tagged, LOOPS_PER_MS};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// The parts of a late event, as the run document names them.
const PARTS: [&str; 8] = [
    "timer_ns",
    "run_queue_wake_ns",
    "run_queue_preempted_ns",
    "blocked_ns",
    "memory_stall_ns",
    "off_cpu_ns",
    "cpu_overrun_ns",
    "unexplained_ns",
];

/// `feelbench run --probe PROBES --load none` for 1 s with short response
/// points and a small fileio file, plus `args`; returns the run document.
fn run(dir: &Path, probes: &str, args: &[&str]) -> Value {
    let tag = new_tag();
    let output = feelbench(&tag, dir)
        .args(["run", "--probe", probes, "--load", "none"])
        .args(["-t", "1", "--warmup", "0.2", "-l", LOOPS_PER_MS, "-q"])
        .args(["--response-gap", "0.2", "--response-points", "3"])
        .args(["--fileio-size", "8M", "-o", "run.json"])
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let left = wait_for_no_tagged(&tag, Duration::from_secs(5));
    assert!(left.is_empty(), "processes left: {left:?}");
    read_json(&dir.join("run.json"))
}

fn count(late: &Value, name: &str) -> u64 {
    let tally = late.get("tally").unwrap_or(late);
    tally["counts"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no count {name} in {late}")) as u64
}

/// Asserts that the one scenario of `probe` in `run` has its events split.
fn assert_split(run: &Value, probe: &str) {
    let scenario = run["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["probe"] == probe)
        .unwrap_or_else(|| panic!("no {probe} scenario"));
    assert_eq!(scenario["status"], "ok", "{scenario}");
    let late = &scenario["result"]["late"];
    assert!(late.is_object(), "{probe}: no result.late in {scenario}");
    assert!(
        !late["rule"].as_str().unwrap().is_empty(),
        "{probe}: no rule"
    );
    let (events, late_events) = (count(late, "events"), count(late, "late"));
    assert!(events > 0, "{probe}: no event split");
    assert!(late_events <= events, "{probe}: {late_events} of {events}");
    let worst = late["worst"].as_array().map_or(&[][..], Vec::as_slice);
    assert_eq!(worst.len() as u64, late_events.min(1000), "{probe}");
    for event in worst {
        let parts: u64 = PARTS
            .iter()
            .map(|p| event["parts"][p].as_u64().unwrap())
            .sum();
        let at = |key: &str| event[key].as_u64().unwrap();
        // The delay: from due to the end, less the CPU it wanted and got
        // (all the CPU it got, for an event that wants no set amount), but
        // for what of that CPU delay accounting saw spent in reclaim.
        let on_cpu = at("cpu_used_ns").min(at("ended_ns") - at("woke_ns"));
        let wanted = event["cpu_wanted_ns"].as_u64().unwrap_or(u64::MAX);
        let delay = at("ended_ns") - at("due_ns") - on_cpu.min(wanted);
        let stall = event["parts"]["memory_stall_ns"].as_u64().unwrap();
        assert!((delay..=delay + stall).contains(&parts), "{probe}: {event}");
        assert!(event["cause"].is_string(), "{probe}: {event}");
    }
    // Counted per sub-window too, each event in one.
    let batches = late["batches"]
        .as_array()
        .unwrap_or_else(|| panic!("{probe}: no batches"));
    assert_eq!(batches.len(), 20, "{probe}");
    let sum = |name: &str| -> u64 { batches.iter().map(|b| count(b, name)).sum() };
    assert_eq!(
        (sum("events"), sum("late")),
        (events, late_events),
        "{probe}"
    );
    let cost = &late["cost"];
    assert!(cost["reads"].as_u64().unwrap() >= events, "{probe}: {cost}");
    assert!(
        cost["ns_per_read"].as_f64().unwrap() > 0.0,
        "{probe}: {cost}"
    );
}

#[test]
fn frames_of_gaming_and_fragment_are_split() {
    let dir = tempfile::tempdir().unwrap();
    let run = run(dir.path(), "gaming,fragment", &[]);
    assert_eq!(run["settings"]["late_split"], true);
    for probe in ["gaming", "fragment"] {
        assert_split(&run, probe);
    }
}

#[test]
fn fileio_requests_are_split_by_the_request_thread() {
    let dir = tempfile::tempdir().unwrap();
    let run = run(dir.path(), "fileio", &[]);
    assert_split(&run, "fileio");
    let rule = run["scenarios"][0]["result"]["late"]["rule"]
        .as_str()
        .unwrap();
    assert_eq!(rule, "a request done more than 100ms after it was due");
}

#[test]
fn micro_instances_and_response_points_are_split() {
    let dir = tempfile::tempdir().unwrap();
    let run = run(dir.path(), "micro:pipe,response", &[]);
    for probe in ["micro:pipe", "response"] {
        assert_split(&run, probe);
    }
}

#[test]
fn no_late_split_leaves_the_split_out_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let run = run(
        dir.path(),
        "x,gaming,fragment,fileio,micro:pipe,response",
        &["--no-late-split"],
    );
    assert_eq!(run["settings"]["late_split"], false);
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 6);
    for scenario in scenarios {
        assert_eq!(scenario["status"], "ok", "{scenario}");
        assert!(
            scenario["result"].get("late").is_none(),
            "{}: split anyway",
            scenario["probe"]
        );
    }
}
