//! Delay accounting in real runs: a run as root switches
//! `kernel.task_delayacct` on before its workers start and lets go of it at
//! its end (its hold in /run/feelbench/delayacct is gone; the switch is off
//! again unless another live run still holds it); a SIGKILLed run's hold is
//! removed, and the switch put back, by the next run; a run that cannot read
//! taskstats says why in the probe's late-event notices.

use crate::common::{
    feelbench, feelbench_as_nobody, new_tag, read_json, require_root, skip, stderr, wait_until,
    LOOPS_PER_MS,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const HOLDERS: &str = "/run/feelbench/delayacct";
const SYSCTL: &str = "/proc/sys/kernel/task_delayacct";

/// A short run of audio under `load` in `dir`, writing `run.json`.
fn run_args(command: &mut Command, dir: &Path, load: &str, seconds: &str) {
    command
        .args(["run", "--probe", "audio", "--load", load, "-t", seconds])
        .args([
            "--warmup",
            "0.2",
            "--noise-check",
            "0",
            "-l",
            LOOPS_PER_MS,
            "-q",
            "-o",
        ])
        .arg(dir.join("run.json"));
}

/// The holds recorded for the run of `pid`.
fn holds_of(pid: u32) -> Vec<PathBuf> {
    let prefix = format!("{pid}-");
    std::fs::read_dir(HOLDERS)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether any run holds delay accounting (a hold of a live or dead run).
fn any_hold() -> bool {
    std::fs::read_dir(HOLDERS).is_ok_and(|mut entries| entries.next().is_some())
}

fn switch_is_on() -> bool {
    std::fs::read_to_string(SYSCTL).is_ok_and(|t| t.trim() == "1")
}

/// True when this machine can be switched by a run; otherwise says why
/// the test is skipped.
fn switchable() -> bool {
    if !require_root("switching kernel.task_delayacct") {
        return false;
    }
    if !Path::new(SYSCTL).exists() {
        skip("this kernel has no kernel.task_delayacct");
        return false;
    }
    if switch_is_on() && !any_hold() {
        skip("delay accounting was switched on outside feelbench, which leaves it alone");
        return false;
    }
    true
}

fn late_of(run: &Value) -> &Value {
    &run["scenarios"][0]["result"]["late"]
}

#[test]
fn a_run_as_root_holds_delay_accounting_for_its_workers_and_lets_go() {
    if !switchable() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut command = feelbench(&new_tag(), dir.path());
    run_args(&mut command, dir.path(), "none", "1");
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let output = child.wait_with_output().unwrap();
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(
        said.contains("kernel switches in force: delay accounting on ("),
        "{said}"
    );
    assert!(holds_of(pid).is_empty(), "the run let go of its hold");
    if !any_hold() {
        assert!(!switch_is_on(), "no run holds it: switched back off");
    }
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(run["environment"]["delayacct"], Value::Bool(true));
    let late = late_of(&run);
    let notices = late["notices"].as_array().cloned().unwrap_or_default();
    assert!(
        notices
            .iter()
            .all(|n| !n.as_str().unwrap().contains("blocked time split")),
        "taskstats was readable: {notices:?}"
    );
    assert!(late["cost"]["ns_per_taskstats_read"].as_f64().unwrap() > 0.0);
}

#[test]
fn the_next_run_switches_off_what_a_sigkilled_run_held() {
    if !switchable() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let mut command = feelbench(&tag, dir.path());
    run_args(&mut command, dir.path(), "none", "30");
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_until("the run to hold delay accounting", || {
        !holds_of(pid).is_empty()
    });
    assert!(switch_is_on());
    kill(Pid::from_raw(pid as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    assert_eq!(holds_of(pid).len(), 1, "a killed run cannot let go");
    let mut next = feelbench(&new_tag(), dir.path());
    run_args(&mut next, dir.path(), "none", "1");
    let output = next.output().unwrap();
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(holds_of(pid).is_empty(), "{said}");
    // The holds are the whole system's: another test's run starting
    // meanwhile may have removed this one first, and said so itself.
    let cleaned = format!("run {pid} (ended without cleaning up)");
    if let Some(line) = said
        .lines()
        .find(|l| l.contains(&cleaned) && l.contains("delay accounting"))
    {
        assert!(
            line.ends_with("switched delay accounting (kernel.task_delayacct) back off")
                || line.ends_with("left on for a live run that holds it"),
            "{line}"
        );
    }
    if !any_hold() {
        assert!(!switch_is_on(), "no run holds it: switched back off");
    }
}

#[test]
fn a_run_that_cannot_read_taskstats_says_so_and_names_no_block() {
    if !require_root("running as nobody") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut command = feelbench_as_nobody(&new_tag(), dir.path());
    run_args(&mut command, dir.path(), "none", "1");
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    let late = late_of(&run);
    let notices: Vec<&str> = late["notices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let notice = notices
        .iter()
        .find(|n| n.starts_with("blocked time split unavailable: "))
        .unwrap_or_else(|| panic!("{notices:?}"));
    assert!(
        notice.ends_with("not root (taskstats needs CAP_NET_ADMIN)")
            || notice.contains("delay accounting is off"),
        "{notice}"
    );
    let worst = late["worst"].as_array().cloned().unwrap_or_default();
    assert!(worst.iter().all(|e| e.get("blocked_by").is_none()));
    assert_eq!(late["cost"]["taskstats_reads"], 0);
}
