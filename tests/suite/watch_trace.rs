//! `watch --trace DIR`: an injected stall (root) leaves a Perfetto trace of
//! each incident among the `--keep` worst and no other, each named by the
//! document and its line, decoded with Perfetto's own message definitions:
//! the late event's slice with its cause, the time it was allowed and the
//! scheduler's events of its time by name. A full disk (root: a tiny tmpfs)
//! is said once and the watch goes on. No timing is asserted.

use crate::common::full_disk::FullDisk;
use crate::common::perfetto::{count, decoded};
use crate::common::{new_tag, skip, stderr, stdout};
use crate::watch::{watch, watch_a_stall, StalledWatch};
use serde_json::Value;
use std::collections::BTreeSet;

#[test]
fn each_kept_incident_of_an_injected_stall_is_a_perfetto_trace() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("traces");
    std::fs::create_dir(&traces).unwrap();
    let args = ["--keep", "2", "--trace", traces.to_str().unwrap()];
    let Some(StalledWatch { output, doc, .. }) = watch_a_stall(dir.path(), &args) else {
        return;
    };
    if doc["recorder"]["state"] == "off" {
        skip(&format!("the recorder was off: {}", stderr(&output)));
        return;
    }
    let incidents = doc["incidents"].as_array().unwrap();
    assert!(!incidents.is_empty(), "a 40 ms stall of the timer's CPU");
    // The directory holds the kept incidents' traces, and nothing else.
    let named: BTreeSet<String> = incidents
        .iter()
        .map(|i| i["trace"].as_str().unwrap().to_string())
        .collect();
    let written: BTreeSet<String> = std::fs::read_dir(&traces)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    assert_eq!(named, written);
    assert!(written.len() <= 2, "--keep 2: {written:?}");
    assert!(written.iter().all(|p| p.ends_with("-timer.pftrace")));
    let text = stdout(&output);
    for path in &named {
        assert!(text.contains(&format!("; trace {path}")), "{text}");
    }
    for incident in incidents {
        let path = std::path::Path::new(incident["trace"].as_str().unwrap());
        let Some(trace) = decoded(path) else {
            return;
        };
        check_incident_trace(incident, &trace);
    }
}

/// What the trace of `incident` must hold: its one late event with its
/// cause beside the time it was allowed, the scheduler's events of its
/// time with the canary's thread by name, a flow to each task that ran
/// instead, the stall by name when it was one.
fn check_incident_trace(incident: &Value, trace: &Value) {
    assert_eq!(count(&trace["slices"]["event"]), 1, "{trace}");
    assert_eq!(count(&trace["slices"]["expected"]), 1, "{trace}");
    assert_eq!(count(&trace["slices"]["scenario"]), 1, "{trace}");
    let cause = incident["cause"].as_str().unwrap();
    assert_eq!(count(&trace["late_causes"][cause]), 1, "{cause}: {trace}");
    assert!(count(&trace["sched"]["sched_switch"]) > 0, "{trace}");
    assert!(count(&trace["sched"]["sched_wakeup"]) > 0, "{trace}");
    let comms = trace["switch_comms"].to_string();
    assert!(comms.contains("\"fb-canary-timer\""), "{comms}");
    assert_eq!(trace["flows_started"], trace["flows_ended"], "{trace}");
    let stalled = incident["ran_instead"]
        .as_array()
        .is_some_and(|r| r.iter().any(|c| c["thread"] == "fb-test-stall"));
    if stalled {
        assert!(comms.contains("\"fb-test-stall\""), "{comms}");
        assert!(count(&trace["flows_started"]) > 0, "{trace}");
    }
}

#[test]
fn a_full_disk_is_said_once_and_the_watch_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let Some(full) = FullDisk::mount(dir.path()) else {
        return;
    };
    // Every frame is an incident: each of the first three asks for a trace.
    let output = watch(
        &new_tag(),
        dir.path(),
        &["-t", "2", "--threshold", "frame=1us"],
    )
    .args(["--keep", "3", "--trace"])
    .arg(&full.0)
    .output()
    .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let said = stderr(&output);
    let warning = FullDisk::the_one_line_about_the_trace(&said);
    assert!(warning.contains("the watch goes on"), "{said}");
    let text = stdout(&output);
    assert!(!text.contains("; trace "), "{text}");
    assert!(text.contains("watched "), "{text}");
    let left: Vec<_> = std::fs::read_dir(&full.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["filler"], "a partial trace was left");
}
