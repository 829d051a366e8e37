//! The `cmd:` load: an external command's whole process tree is accounted
//! (its CPU % included, daemons too) and stopped, even what left the
//! process group; a command that ends early, or stops working part-way,
//! fails its scenario.

use crate::common::{
    feelbench, feelbench_as_nobody, new_tag, read_json, require_root, stderr, tagged_processes,
    BRIEF_RUN,
};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn run_cmd(tag: &str, dir: &Path, command: &str) -> Value {
    run_cmd_with(feelbench(tag, dir), dir, command, "1.5")
}

/// Runs `feelbench` measuring audio under `command` for `seconds`, and reads the run.
fn run_cmd_with(mut feelbench: Command, dir: &Path, command: &str, seconds: &str) -> Value {
    let output = feelbench
        .args(["run", "--probe", "audio", "--load", command, "-t", seconds])
        .args(BRIEF_RUN)
        .output()
        .unwrap();
    assert!(!stderr(&output).contains("panicked"), "{}", stderr(&output));
    read_json(&dir.join("run.json"))
}

/// The load work of `command`, run to the end of a scenario that must
/// pass, after which nothing of the command may be left.
fn work_of(command: &str) -> Value {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let run = run_cmd(&tag, dir.path(), command);
    let scenario = &run["scenarios"][0];
    assert_eq!(scenario["status"], "ok", "{scenario}");
    assert_eq!(tagged_processes(&tag), Vec::<u32>::new());
    scenario["load_work"][0].clone()
}

/// The load's CPU %.
fn cpu_pct(work: &Value) -> f64 {
    work["cpu_pct"].as_f64().unwrap()
}

/// Asserts the load's CPU % is the command's: some, and the same as its
/// work, the command's CPU-s per second (how much a CPU the command gets
/// depends on what else runs; left uncounted, it read about 1 % while its
/// work read 1.5 CPU-s/s).
fn assert_cpu_is_the_commands(work: &Value) {
    assert!(cpu_pct(work) > 0.0, "{work}");
    let cpu_s_per_s = work["rate_per_s"].as_f64().unwrap();
    assert!((cpu_s_per_s * 100.0 - cpu_pct(work)).abs() < 10.0, "{work}");
}

#[test]
fn a_command_tree_is_accounted_and_nothing_of_it_survives() {
    let work = work_of("cmd:sh -c 'yes >/dev/null & setsid yes >/dev/null & wait'");
    assert_eq!(work["unit"], "CPU-s");
    assert_cpu_is_the_commands(&work);
}

#[test]
fn a_daemon_the_command_double_forks_is_counted() {
    // The subshell forks the daemon and exits: the daemon is an orphan in
    // a session of its own, and the command itself only sleeps.
    let work = work_of("cmd:sh -c '(setsid yes >/dev/null &); exec sleep 60'");
    assert_cpu_is_the_commands(&work);
}

#[test]
fn without_a_cgroup_the_cpu_is_a_lower_bound_and_shown_as_one() {
    // nobody can make no cgroup; a user other than root may, in a cgroup
    // delegated to them, so only root can be sure to test this.
    if !require_root("to run as nobody, who can make no cgroup") {
        return;
    }
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let run = run_cmd_with(
        feelbench_as_nobody(&tag, dir.path()),
        dir.path(),
        "cmd:sh -c 'exec yes >/dev/null'",
        "1.5",
    );
    let work = &run["scenarios"][0]["load_work"][0];
    assert_eq!(work["cpu_pct_lower_bound"], true, "{work}");
    assert_cpu_is_the_commands(work);
    let report = feelbench(&tag, dir.path())
        .args(["report", "run.json"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&report.stdout);
    assert!(table.contains("% CPU") && table.contains("≥ "), "{table}");
    assert_eq!(tagged_processes(&tag), Vec::<u32>::new());
}

#[test]
fn a_command_that_stops_working_part_way_fails_with_when() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    // Busy for 1.2 s from its start, then idle: the window begins before
    // that even when six tests start at once on a loaded machine (0.6 s
    // was once all spent before it), and at least its last 1.8 s of 3 s
    // are idle, room for a stretch of idle sub-windows where a dying
    // program's last CPU can still land after it.
    let run = run_cmd_with(
        feelbench(&tag, dir.path()),
        dir.path(),
        "cmd:sh -c 'timeout 1.2 yes >/dev/null; exec sleep 60'",
        "3",
    );
    let scenario = &run["scenarios"][0];
    assert_eq!(scenario["status"], "failed", "{scenario}");
    let error = scenario["error"].as_str().unwrap();
    assert!(
        error.starts_with("load cmd (process 1 of 1) stopped working at ")
            && error.contains(" s of the measurement"),
        "{error}"
    );
    assert_eq!(tagged_processes(&tag), Vec::<u32>::new());
}

#[test]
fn a_command_that_ends_early_fails_its_scenario() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let run = run_cmd(&tag, dir.path(), "cmd:sleep 0.1");
    let scenario = &run["scenarios"][0];
    assert_eq!(scenario["status"], "failed");
    let error = scenario["error"].as_str().unwrap();
    assert!(error.contains("the command ended"), "{error}");
}

#[test]
fn a_command_that_cannot_start_fails_with_its_name() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let run = run_cmd(&tag, dir.path(), "cmd:/nonexistent/tool --flag");
    let error = run["scenarios"][0]["error"].as_str().unwrap().to_string();
    assert!(error.contains("cannot start /nonexistent/tool"), "{error}");
}
