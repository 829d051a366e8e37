//! Nothing is left behind: no worker survives a normal end, SIGINT, a second
//! SIGINT, a SIGKILL of the orchestrator or a dead load, and an interrupted
//! run keeps the scenarios that finished. A second SIGINT ends the run at
//! once, without the cleanup the first one started; the next run removes
//! what that left.

mod common;
use common::{
    assert_ends_clean, cmdline, exit_code_within, feelbench, leftovers, new_tag, read_json,
    tagged_processes, wait_for_no_tagged, wait_until, LOOPS_PER_MS,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Processes of the burn load, set so the tests need not know the machine's CPUs.
const BURN_PROCESSES: usize = 4;

fn start(tag: &str, dir: &Path, loads: &str, seconds: &str) -> Child {
    feelbench(tag, dir)
        .args([
            "run", "--probe", "audio", "--load", loads, "-t", seconds, "--warmup", "0.2",
        ])
        .args(["-L", &BURN_PROCESSES.to_string()])
        .args(["-l", LOOPS_PER_MS, "-q", "-o"])
        .arg(dir.join("run.json"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Starts audio under burn for `seconds` and waits for the loads to start.
fn start_under_burn(tag: &str, dir: &Path, seconds: &str) -> Child {
    let child = start(tag, dir, "burn", seconds);
    wait_until("the burn load to start", || {
        load_workers(tag).len() == BURN_PROCESSES
    });
    child
}

fn load_workers(tag: &str) -> Vec<u32> {
    tagged_processes(tag)
        .into_iter()
        .filter(|&pid| cmdline(pid).contains(r#""role":"load""#))
        .collect()
}

fn finished_scenarios(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("run.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["scenarios"].as_array().map(Vec::len))
        .unwrap_or(0)
}

fn signal(child: &Child, signal: Signal) {
    kill(Pid::from_raw(child.id() as i32), signal).unwrap();
}

/// Whether a SIGINT sent to the process `pid` is still pending: not yet
/// delivered to any of its threads (bit 2 of `ShdPnd` in its status).
fn sigint_pending(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let bit = 1u64 << (Signal::SIGINT as u64 - 1);
    status
        .lines()
        .filter_map(|line| line.strip_prefix("ShdPnd:"))
        .any(|mask| u64::from_str_radix(mask.trim(), 16).is_ok_and(|mask| mask & bit != 0))
}

/// Asserts that a run in `dir` ended without its cleanup (its private
/// directory and state record are there), and that the next run removes
/// both and says so.
fn assert_the_next_run_removes_the_leftovers(dir: &Path) {
    let (files, records) = leftovers(dir);
    assert!(
        files.iter().any(|f| f.starts_with("feelbench-")),
        "{files:?}"
    );
    assert_eq!(records.len(), 1, "the ended run's state record");

    let next = feelbench(&new_tag(), dir)
        .args([
            "run", "--probe", "audio", "--load", "none", "-t", "0.2", "--warmup", "0",
        ])
        .args(["-l", LOOPS_PER_MS, "-q", "-c"])
        .output()
        .unwrap();
    assert!(next.status.success());
    let message = String::from_utf8_lossy(&next.stderr);
    assert!(
        message.contains("ended without cleaning up") && message.contains("removed"),
        "{message}"
    );
    let (files, records) = leftovers(dir);
    assert_eq!(files, ["run.json"], "the private directory is gone");
    assert_eq!(records, Vec::<String>::new());
}

#[test]
fn no_worker_is_left_after_a_normal_end() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(&tag, dir.path(), "burn", "1");
    assert_eq!(
        exit_code_within(&mut child, Duration::from_secs(30)),
        Some(0)
    );
    assert_eq!(
        tagged_processes(&tag),
        Vec::<u32>::new(),
        "reaped before exit"
    );
}

#[test]
fn sigint_stops_reaps_and_keeps_finished_scenarios() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(&tag, dir.path(), "none,burn", "2");
    wait_until("the first scenario to finish", || {
        finished_scenarios(dir.path()) == 1
    });
    wait_until("the burn load to start", || !load_workers(&tag).is_empty());
    signal(&child, Signal::SIGINT);
    assert_ends_clean(&mut child, Some(130), &tag);
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(run["run"]["interrupted"], true);
    assert_eq!(run["scenarios"].as_array().unwrap().len(), 1);
    assert_eq!(run["scenarios"][0]["status"], "ok");
    let (files, records) = leftovers(dir.path());
    assert_eq!(files, ["run.json"], "no temporary file is left");
    assert_eq!(records, Vec::<String>::new(), "no state record is left");
}

#[test]
fn sigterm_is_handled_like_sigint() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_under_burn(&tag, dir.path(), "30");
    signal(&child, Signal::SIGTERM);
    assert_ends_clean(&mut child, Some(130), &tag);
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(run["run"]["interrupted"], true);
    assert!(run["run"]["finished"].is_string());
    assert_eq!(run["scenarios"].as_array().unwrap().len(), 0);
}

#[test]
fn a_second_sigint_exits_at_once_and_workers_die_with_the_orchestrator() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_under_burn(&tag, dir.path(), "30");
    signal(&child, Signal::SIGINT);
    // Two SIGINTs sent back to back merge into one while pending: the second
    // is sent once the first has reached a handler, looked for without a
    // pause, before the orderly stop the first one started can end the run.
    let deadline = Instant::now() + Duration::from_secs(20);
    while sigint_pending(child.id()) {
        assert!(
            Instant::now() < deadline,
            "the first SIGINT is never delivered"
        );
    }
    assert_eq!(
        child.try_wait().unwrap(),
        None,
        "the first SIGINT ended the run before the second was sent"
    );
    signal(&child, Signal::SIGINT);
    assert_eq!(
        exit_code_within(&mut child, Duration::from_secs(30)),
        Some(130)
    );
    // The second SIGINT exits from its handler, whatever the orchestrator is
    // doing; the run file shows that this came before the orderly stop (no
    // timing is asserted: a loaded machine may take long to deliver it).
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(
        (&run["run"]["interrupted"], &run["run"]["finished"]),
        (&false.into(), &serde_json::Value::Null),
        "the orderly stop marked the run interrupted and finished: the second SIGINT did not end it at once"
    );
    assert_eq!(
        wait_for_no_tagged(&tag, Duration::from_secs(3)),
        Vec::<u32>::new(),
        "the workers die with the orchestrator"
    );
    assert_the_next_run_removes_the_leftovers(dir.path());
}

#[test]
fn sigkill_of_the_orchestrator_takes_every_worker_along() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_under_burn(&tag, dir.path(), "30");
    // The orchestrator, the burn workers and the probe.
    wait_until("the probe to start", || {
        tagged_processes(&tag).len() > BURN_PROCESSES + 1
    });
    signal(&child, Signal::SIGKILL);
    assert_ends_clean(&mut child, None, &tag);
}

#[test]
fn a_load_that_dies_fails_its_scenario_with_the_reason() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_under_burn(&tag, dir.path(), "5");
    let victim = load_workers(&tag)[0];
    kill(Pid::from_raw(victim as i32), Signal::SIGKILL).unwrap();
    assert_ends_clean(&mut child, Some(1), &tag);
    let scenario = &read_json(&dir.path().join("run.json"))["scenarios"][0];
    assert_eq!(scenario["status"], "failed");
    let error = scenario["error"].as_str().unwrap();
    assert!(
        error.contains("load burn") && error.contains("signal 9"),
        "{error}"
    );
    assert!(
        scenario["result"].is_null(),
        "no figures under a dead load's name"
    );
}

#[test]
fn the_next_run_removes_what_a_sigkilled_run_left() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_under_burn(&tag, dir.path(), "30");
    signal(&child, Signal::SIGKILL);
    assert_ends_clean(&mut child, None, &tag);
    assert_the_next_run_removes_the_leftovers(dir.path());
}
