//! `run --explain`: the scheduler flight recorder names the tasks that ran
//! while the probe waited. As root, x under burn: its late events name the
//! burn workers of the run, whose threads the document lists, and nothing
//! stays mounted. Without root: a notice, and the run goes on. No timing is
//! asserted.

use crate::common::{
    feelbench, feelbench_as_nobody, new_tag, read_json, require_root, skip, stderr, LOOPS_PER_MS,
};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `feelbench run` of `probe` under `load` for `seconds` with `--explain`.
fn explained_run(
    mut command: Command,
    dir: &Path,
    probe: &str,
    load: &str,
    seconds: &str,
) -> Command {
    command
        .args(["run", "--probe", probe, "--load", load, "-t", seconds])
        .args(["--warmup", "0.3", "--noise-check", "0", "--explain"])
        .args(["-l", LOOPS_PER_MS, "-q", "-o"])
        .arg(dir.join("run.json"));
    command
}

fn tracefs_mounts() -> usize {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .lines()
        .filter(|line| line.split_whitespace().nth(2) == Some("tracefs"))
        .count()
}

/// The tasks a late event's `ran_instead` names.
fn ran_instead(event: &Value) -> Vec<&Value> {
    event["ran_instead"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

#[test]
fn under_burn_late_frames_name_the_burn_workers() {
    if !require_root("perf events on every task of a CPU") {
        return;
    }
    let mounted_before = tracefs_mounts();
    let dir = tempfile::tempdir().unwrap();
    // Twice as many CPU hogs as this machine has CPUs, given explicitly so
    // that the count asserted below does not rest on `-L`'s default.
    let hogs = 2 * std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut command = explained_run(
        feelbench(&new_tag(), dir.path()),
        dir.path(),
        "x",
        "burn",
        "2",
    );
    let output = command.args(["-L", &hogs.to_string()]).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        tracefs_mounts(),
        mounted_before,
        "the recorder left tracefs mounted"
    );
    let run = read_json(&dir.path().join("run.json"));
    let scenario = &run["scenarios"][0];
    let late = &scenario["result"]["late"];
    let summary = &late["explain"];
    if summary["status"] == "off" {
        // Another run's loads on this shared machine can switch fast enough
        // to put the predicted cost above its budget.
        skip(&format!("the recorder was off: {}", summary["notice"]));
        return;
    }
    assert!(
        summary["cost"]["records"].as_u64().unwrap() > 0,
        "{summary}"
    );
    assert!(
        summary["cost"]["measured_cpu_pct"].as_f64().is_some(),
        "{summary}"
    );
    assert!(
        summary["cost"]["predicted_cpu_pct"].as_f64().is_some(),
        "{summary}"
    );
    // The document names each burn worker and its threads.
    let tasks = scenario["load_work"][0]["tasks"].as_array().unwrap();
    let burn_pids: Vec<u64> = tasks
        .iter()
        .filter(|t| t["name"].as_str().unwrap().starts_with("burn#") && t["pid"] == t["tid"])
        .map(|t| t["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(burn_pids.len(), hogs, "{tasks:?}");
    // Twice as many CPU hogs as CPUs: the probe waits behind them. The late
    // frames that waited on a run queue name them, by the run's names and
    // pids.
    let worst = late["worst"].as_array().expect("late frames under burn");
    let waited: Vec<&Value> = worst
        .iter()
        .filter(|e| e["cause"].as_str().unwrap().starts_with("run_queue"))
        .collect();
    assert!(
        !waited.is_empty(),
        "no late frame waited on a run queue: {worst:?}"
    );
    let behind_burn = waited
        .iter()
        .filter(|e| {
            ran_instead(e).iter().any(|r| {
                r["task"].as_str().unwrap().starts_with("burn#")
                    && burn_pids.contains(&r["pid"].as_u64().unwrap_or(0))
            })
        })
        .count();
    // Other tests' runs share the CPUs, so how many is no bound to hold;
    // that they name burn at all, and by its own pids, is.
    assert!(
        behind_burn > 0,
        "none of {} run-queue-bound late frames names a burn worker",
        waited.len()
    );
    for event in &waited {
        for ran in ran_instead(event) {
            assert!(ran["ns"].as_u64().unwrap() > 0, "{ran}");
            if ran["task"].as_str().unwrap().starts_with("burn#") {
                assert!(burn_pids.contains(&ran["pid"].as_u64().unwrap()), "{ran}");
            }
        }
    }
    // The probe thread's waits over the window, named.
    let threads = summary["threads"].as_array().unwrap();
    assert!(!threads.is_empty(), "{summary}");
    assert!(threads[0]["wait_ns"].as_u64().unwrap() > 0, "{summary}");
}

#[test]
fn without_root_explain_is_a_notice_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    // Root runs the binary as nobody, who may not open the events.
    let user = if nix::unistd::geteuid().is_root() {
        feelbench_as_nobody(&new_tag(), dir.path())
    } else {
        feelbench(&new_tag(), dir.path())
    };
    let output = explained_run(user, dir.path(), "x", "none", "1")
        .output()
        .unwrap();
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    let notices: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("--explain needs root"))
        .collect();
    assert_eq!(notices.len(), 1, "{err}");
    let run = read_json(&dir.path().join("run.json"));
    let summary = &run["scenarios"][0]["result"]["late"]["explain"];
    assert_eq!(summary["status"], "off", "{summary}");
    assert!(run["scenarios"][0]["result"]["tally"].is_object());
}
