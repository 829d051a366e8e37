//! `run --trace` and `report --format perfetto`: every trace the tests
//! write is decoded with Perfetto's own message definitions (PyPI's
//! `perfetto` package, by `tests/perfetto/trace_counts.py`), and holds a
//! slice per probe event (as many as the run document counts), the track of
//! the time each was allowed, the late events' causes, the loads' threads by
//! their names and, with `--explain` as root, the burn workers' scheduling
//! events. An unwritable path is one line and exit 2; a full disk (root: a
//! tiny tmpfs) one line and exit 1, with no partial trace and the run's
//! document written. No timing is asserted.

use crate::common::full_disk::FullDisk;
use crate::common::perfetto::{count, decoded};
use crate::common::{feelbench, new_tag, read_json, require_root, skip, stderr, LOOPS_PER_MS};
use std::path::Path;
use std::process::Command;

/// `feelbench run` of `probe` under burn for `seconds` into `dir`, with
/// `--trace` to `trace`.
fn traced_run(dir: &Path, trace: &Path, probe: &str, seconds: &str, explain: bool) -> Command {
    let mut command = feelbench(&new_tag(), dir);
    command
        .args(["run", "--probe", probe, "--load", "burn", "-t", seconds])
        .args(["--warmup", "0.3", "--noise-check", "0", "--no-store"])
        .args(["-l", LOOPS_PER_MS, "-q", "-o"])
        .arg(dir.join("run.json"))
        .arg("--trace")
        .arg(trace);
    if explain {
        command.arg("--explain");
    }
    command
}

#[test]
fn a_trace_holds_each_event_beside_its_allowed_time_with_the_late_ones_causes() {
    let dir = tempfile::tempdir().unwrap();
    let trace_path = dir.path().join("run.pftrace");
    let output = traced_run(dir.path(), &trace_path, "x", "2", false)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(said.contains("ui.perfetto.dev"), "{said}");
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(run["run"]["trace"], trace_path.display().to_string());
    let late = &run["scenarios"][0]["result"]["late"];
    assert!(
        late.get("traced").is_none(),
        "the events went into the document"
    );
    let events = late["tally"]["counts"]["events"].as_f64().unwrap() as u64;
    let late_events = late["tally"]["counts"]["late"].as_f64().unwrap() as u64;
    let Some(trace) = decoded(&trace_path) else {
        return;
    };
    assert!(events > 0, "{late}");
    assert_eq!(count(&trace["slices"]["event"]), events, "{trace}");
    assert_eq!(count(&trace["slices"]["scenario"]), 1, "{trace}");
    // Every frame of x, dropped ones too, had a deadline.
    assert_eq!(count(&trace["slices"]["expected"]), events, "{trace}");
    let tracks = trace["track_names"].to_string();
    assert!(tracks.contains(": expected"), "{tracks}");
    assert!(tracks.contains("burn work"), "{tracks}");
    assert!(count(&trace["counter_values"]) > 0, "{trace}");
    let threads = trace["thread_names"].to_string();
    assert!(threads.contains("\"burn#1\""), "{threads}");
    // Each late event carries its cause, the document's causes.
    let causes = trace["late_causes"].as_object().unwrap();
    assert_eq!(
        causes.values().map(count).sum::<u64>(),
        late_events,
        "{trace}"
    );
    for (cause, n) in causes {
        let counted = late["tally"]["counts"][format!("{cause}.count")].as_f64();
        assert_eq!(counted, Some(count(n) as f64), "{cause}: {trace}");
    }
    // The reports name the trace and how to open it.
    let explained = feelbench(&new_tag(), dir.path())
        .args(["report", "--explain"])
        .arg(dir.path().join("run.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&explained.stdout);
    assert!(text.starts_with("Perfetto trace of this run: "), "{text}");
    assert!(
        text.lines().next().unwrap().contains("ui.perfetto.dev"),
        "{text}"
    );
    let page = feelbench(&new_tag(), dir.path())
        .args(["report", "--format", "html"])
        .arg(dir.path().join("run.json"))
        .output()
        .unwrap();
    let page = String::from_utf8_lossy(&page.stdout);
    assert!(
        page.contains("Perfetto trace of this run: "),
        "no trace named"
    );
    // The stored run as a trace: its worst late events.
    let stored_path = dir.path().join("stored.pftrace");
    let stored = feelbench(&new_tag(), dir.path())
        .args(["report", "--format", "perfetto", "-o"])
        .arg(&stored_path)
        .arg(dir.path().join("run.json"))
        .output()
        .unwrap();
    assert!(stored.status.success(), "{}", stderr(&stored));
    let worst = late["worst"].as_array().map_or(0, Vec::len) as u64;
    // A run without late events split has nothing to trace: bad input.
    let old = feelbench(&new_tag(), dir.path())
        .args(["report", "--format", "perfetto", "-o"])
        .arg(dir.path().join("old.pftrace"))
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/v1-run.json"
        ))
        .output()
        .unwrap();
    assert_eq!(old.status.code(), Some(2), "{}", stderr(&old));
    assert!(
        stderr(&old).contains("keeps no late events"),
        "{}",
        stderr(&old)
    );
    assert!(!dir.path().join("old.pftrace").exists());
    let stored = decoded(&stored_path).unwrap();
    assert_eq!(count(&stored["slices"]["event"]), worst, "{stored}");
}

#[test]
fn a_games_trace_holds_a_slice_for_each_frame_it_split() {
    let dir = tempfile::tempdir().unwrap();
    let trace_path = dir.path().join("game.pftrace");
    let output = traced_run(dir.path(), &trace_path, "game", "1", false)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    let late = &run["scenarios"][0]["result"]["late"];
    let events = late["tally"]["counts"]["events"].as_f64().unwrap() as u64;
    let Some(trace) = decoded(&trace_path) else {
        return;
    };
    assert!(events > 0, "{late}");
    assert_eq!(count(&trace["slices"]["event"]), events, "{trace}");
    let tracks = trace["track_names"].to_string();
    // The display thread's (named when the trace found its name, by its id
    // when the thread had gone).
    assert!(tracks.contains(": events"), "{tracks}");
}

#[test]
fn under_explain_the_trace_holds_the_burn_workers_scheduling() {
    if !require_root("perf events on every task of a CPU") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace_path = dir.path().join("run.pftrace");
    let output = traced_run(dir.path(), &trace_path, "x", "2", true)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    let summary = &run["scenarios"][0]["result"]["late"]["explain"];
    if summary["status"] == "off" {
        // Other runs on this shared machine can switch fast enough to put
        // the recorder's predicted cost above its budget.
        skip(&format!("the recorder was off: {}", summary["notice"]));
        return;
    }
    let Some(trace) = decoded(&trace_path) else {
        return;
    };
    assert!(count(&trace["sched"]["sched_switch"]) > 0, "{trace}");
    assert!(count(&trace["sched"]["sched_wakeup"]) > 0, "{trace}");
    let comms = trace["switch_comms"].to_string();
    assert!(comms.contains("\"burn#1\""), "{comms}");
    // A flow from each late event to each task that ran instead ends on a
    // slice of that task.
    assert_eq!(trace["flows_started"], trace["flows_ended"], "{trace}");
}

#[test]
fn an_unwritable_trace_path_is_one_line_and_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let output = feelbench(&new_tag(), dir.path())
        .args(["run", "--probe", "x", "--load", "none", "-t", "1"])
        .args(["--noise-check", "0", "-l", LOOPS_PER_MS, "-q", "-c"])
        .arg("--trace")
        .arg(dir.path().join("no/such/dir/run.pftrace"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let said = stderr(&output);
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    assert!(said.contains("cannot write the trace to"), "{said}");
}

#[test]
fn a_full_disk_is_one_line_and_the_run_is_still_written() {
    let dir = tempfile::tempdir().unwrap();
    let Some(full) = FullDisk::mount(dir.path()) else {
        return;
    };
    let output = traced_run(dir.path(), &full.0.join("run.pftrace"), "x", "1", false)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    FullDisk::the_one_line_about_the_trace(&stderr(&output));
    assert_eq!(
        std::fs::read_dir(&full.0).unwrap().count(),
        1,
        "a partial trace was left"
    );
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(run["scenarios"][0]["status"], "ok", "{run}");
    assert!(run["run"].get("trace").is_none(), "{run}");
}
