//! The `rtapp` probe and load on short real runs of small rt-app files: a
//! 10 ms / 2 ms periodic task and a three-task resume chain give
//! activations about one per period, figures consistent with each other
//! and per task; the load runs a file and does work; a workload that never
//! waits, and a file that cannot be read, are refused (exit 2) before
//! anything runs; nothing is left behind. No timing is asserted.

use crate::common::{
    assert_load_did_work, feelbench, leftovers, new_tag, read_json, stderr, wait_for_no_tagged,
    BRIEF_RUN,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// One task: 2 ms of work every 10 ms on its own timer.
const PERIODIC: &str = r#"{
  "tasks": {
    "task0": { "loop": -1, "run": 2000, "timer": { "ref": "unique", "period": 10000 } }
  },
  "global": { "duration": -1, "default_policy": "SCHED_OTHER" }
}"#;

/// Three tasks woken one after the other each 10 ms period.
const CHAIN: &str = r#"{
  "tasks": {
    "first": { "loop": -1, "run": 1000, "resume": "second", "timer": { "ref": "tick", "period": 10000 } },
    "second": { "loop": -1, "suspend": "second", "run": 1000, "resume": "third" },
    "third": { "loop": -1, "suspend": "third", "run": 1000 }
  }
}"#;

/// One task of two phases: 20 loops of 1 ms every 10 ms, then 20 of
/// 0.5 ms every 5 ms.
const TWO_PHASES: &str = r#"{
  "tasks": {
    "pulse": { "loop": -1, "phases": {
      "slow": { "loop": 20, "run": 1000, "timer": { "ref": "unique", "period": 10000 } },
      "fast": { "loop": 20, "run": 500, "timer": { "ref": "unique", "period": 5000 } }
    } }
  }
}"#;

/// A task that never waits: as a probe it would spin.
const SPINNING: &str = r#"{ "tasks": { "hog": { "loop": -1, "run": 1000 } } }"#;

/// `text` written as `name` in `dir`.
fn workload_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `feelbench run --probe PROBE --load LOAD -t SECONDS` working in `dir`,
/// writing `dir/run.json`; checks that no process is left.
fn rtapp_run(dir: &Path, probe: &str, load: &str, seconds: &str) -> Output {
    let tag = new_tag();
    let output = feelbench(&tag, dir)
        .args(["run", "--probe", probe, "--load", load, "-t", seconds])
        .args(BRIEF_RUN)
        .output()
        .unwrap();
    let left = wait_for_no_tagged(&tag, Duration::from_secs(5));
    assert!(left.is_empty(), "processes left: {left:?}");
    output
}

/// A successful 2 s run of `text` (written as `name`) as the probe under
/// no load: its run document, the file's path and the directory the run
/// left (checked for leftovers by whoever wants).
fn probe_run(name: &str, text: &str) -> (Value, PathBuf, tempfile::TempDir) {
    let files = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = workload_file(files.path(), name, text);
    let output = rtapp_run(
        dir.path(),
        &format!("rtapp:{}", path.display()),
        "none",
        "2",
    );
    assert!(output.status.success(), "{}", stderr(&output));
    (read_json(&dir.path().join("run.json")), path, dir)
}

fn figure(scenario: &Value, key: &str) -> f64 {
    scenario["result"]["figures"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {}", scenario["result"]["figures"]))
}

/// Asserts a scenario of `seconds` whose timer ticks every 10 ms has about
/// one activation per period and consistent figures.
fn assert_activations(scenario: &Value, seconds: f64) {
    assert_eq!(scenario["status"], "ok", "{scenario}");
    let f = |key| figure(scenario, key);
    let periods = seconds * 100.0;
    let activations = f("activations");
    // A thread late by whole periods (absolute timer) still has one
    // activation per period; a loaded machine only makes them fewer.
    assert!(
        activations >= periods / 4.0 && activations <= periods + 2.0,
        "{activations} activations in {seconds} s of 10 ms periods"
    );
    assert_eq!(f("samples"), activations);
    assert!(f("wakeup_p50_us") <= f("wakeup_p99_us"));
    assert!(f("wakeup_p99_us") <= f("wakeup_max_us"));
    assert!((0.0..=100.0).contains(&f("negative_slack_pct")));
    // Slack is at most the period (each expiry is a period after the one
    // the thread woke from, the first a period after the start), so LISA's
    // index is at most period / (period − run): 1.25 for 10 ms with 2 ms of
    // run, whatever the CPU's speed (work that ends early puts it above 1).
    assert!(
        f("perf_index") <= 1.25,
        "slack cannot exceed the period: {}",
        f("perf_index")
    );
    assert!(f("slack_p50_us") <= 10_000.0 + 20.0);
    assert!(f("start_delay_mean_us") >= f("wakeup_mean_us"));
    assert!(
        f("period_mean_us") >= 9_000.0,
        "a period is ~10 ms or longer"
    );
}

#[test]
fn a_periodic_task_has_an_activation_per_period_and_its_own_figures() {
    let (run, path, dir) = probe_run("periodic.json", PERIODIC);
    let recorded = &run["settings"]["rtapp"]["probe"];
    assert_eq!(recorded["source"], path.display().to_string());
    assert_eq!(recorded["tasks"][0]["name"], "task0");
    let scenario = &run["scenarios"][0];
    assert_eq!(scenario["probe"], "rtapp");
    assert_activations(scenario, 2.0);
    assert_eq!(
        figure(scenario, "task0.activations"),
        figure(scenario, "activations")
    );
    assert!(
        run["probes"]["rtapp"]["figures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["key"] == "task0.wakeup_p99"),
        "the stored sheet declares the task's figures"
    );
    assert_eq!(
        leftovers(dir.path()),
        (vec!["run.json".to_string()], vec![])
    );
}

#[test]
fn a_task_of_two_phases_has_figures_per_phase_and_its_late_work_split() {
    let (run, _, _) = probe_run("phases.json", TWO_PHASES);
    let scenario = &run["scenarios"][0];
    let f = |key| figure(scenario, key);
    let (slow, fast) = (f("pulse.slow.activations"), f("pulse.fast.activations"));
    assert!(slow > 0.0 && fast > 0.0, "{slow} and {fast} activations");
    assert_eq!(slow + fast, f("pulse.activations"));
    assert!(f("pulse.slow.period_mean_us") > f("pulse.fast.period_mean_us"));
    // Each activation's work is one event, ended by the next timer event
    // (the last one's perhaps by none), late exactly when that one's slack
    // is negative (the task waits only at its timer); the first activation
    // ends no event, and on a busy machine its slack too can be negative
    // (its grid starts with the window).
    let late = &scenario["result"]["late"];
    assert!(late["rule"].as_str().unwrap().contains("negative slack"));
    let count = |key: &str| late["tally"]["counts"][key].as_f64().unwrap();
    let activations = f("activations");
    assert!(count("events") <= activations && count("events") >= activations - 1.0);
    let negative = (f("negative_slack_pct") * activations / 100.0).round();
    assert!(
        count("late") <= negative && count("late") >= negative - 1.0,
        "{} late events, {negative} activations with negative slack",
        count("late")
    );
    // Counted per sub-window of the measurement too, each event in one.
    let batches = late["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 20);
    let split: f64 = batches
        .iter()
        .map(|b| b["counts"]["events"].as_f64().unwrap())
        .sum();
    assert_eq!(split, count("events"));
    let threads = scenario["result"]["sched"]["tasks"].as_array().unwrap();
    assert!(
        threads.iter().any(|t| t["name"] == "pulse"),
        "the task's thread is named as the task: {threads:?}"
    );
}

#[test]
fn a_resume_chain_measures_the_timer_task_and_runs_every_task() {
    let (run, _, _) = probe_run("chain.json", CHAIN);
    let scenario = &run["scenarios"][0];
    assert_activations(scenario, 2.0);
    // Only `first` waits on a timer; every task runs a loop per period.
    assert_eq!(
        figure(scenario, "first.activations"),
        figure(scenario, "activations")
    );
    assert_eq!(figure(scenario, "third.activations"), 0.0);
    let loops = figure(scenario, "phase_loops");
    assert!(
        loops >= 2.0 * figure(scenario, "activations"),
        "{loops} phase loops: the woken tasks loop too"
    );
}

#[test]
fn the_rtapp_load_runs_a_file_as_work() {
    let files = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = workload_file(files.path(), "periodic.json", PERIODIC);
    let load = format!("rtapp:{}", path.display());
    let output = rtapp_run(dir.path(), "gaming", &load, "1");
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    assert!(run["settings"]["rtapp"]["load"]["tasks"].is_array());
    assert_load_did_work(&run["scenarios"][0], "rtapp", "phase loops", 1);
}

#[test]
fn workloads_that_cannot_be_measured_are_refused_before_anything_runs() {
    let files = tempfile::tempdir().unwrap();
    let spinning = workload_file(files.path(), "spin.json", SPINNING);
    let broken = workload_file(files.path(), "broken.json", "{ \"tasks\": ");
    let missing = files.path().join("missing.json");
    for (path, says) in [
        (&spinning, "no task waits on a timer"),
        (&broken, "broken.json"),
        (&missing, "missing.json"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let output = rtapp_run(
            dir.path(),
            &format!("rtapp:{}", path.display()),
            "none",
            "1",
        );
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        let err = stderr(&output);
        assert!(err.contains(says), "{err}");
        assert_eq!(
            err.lines().filter(|l| !l.is_empty()).count(),
            1,
            "one line: {err}"
        );
        assert!(!dir.path().join("run.json").exists());
    }
}
