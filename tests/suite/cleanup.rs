//! Nothing is left behind: no worker survives a normal end, SIGINT, a second
//! SIGINT, a SIGKILL of the orchestrator or a dead load, and an interrupted
//! run keeps the scenarios that finished. A second SIGINT ends the run at
//! once, without the cleanup the first one started; the next run removes
//! what that left, keeps the record of what it could not remove yet (and
//! says how to remove it by hand), and never takes a live run for a dead one.

use crate::common::{
    assert_ends_clean, cmdline, exit_code_within, feelbench, leftovers, new_tag, read_json,
    require_root, skip, stderr, tagged_processes, wait_for_no_tagged, wait_until, LOOPS_PER_MS,
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

    let next = next_run(dir);
    let message = stderr(&next);
    assert!(
        message.contains("ended without cleaning up") && message.contains("removed"),
        "{message}"
    );
    let (files, records) = leftovers(dir);
    assert_eq!(files, ["run.json"], "the private directory is gone");
    assert_eq!(records, Vec::<String>::new());
}

/// A short run in `dir`, which first cleans up what runs recorded in its
/// cache left; it must succeed.
fn next_run(dir: &Path) -> std::process::Output {
    let next = feelbench(&new_tag(), dir)
        .args([
            "run", "--probe", "audio", "--load", "none", "-t", "0.2", "--warmup", "0",
        ])
        .args(["-l", LOOPS_PER_MS, "-q", "-c"])
        .output()
        .unwrap();
    assert!(next.status.success(), "{}", stderr(&next));
    next
}

/// Writes a state record in `dir`'s cache, as a run of `pid` started at
/// `start_ticks` (0: an earlier feelbench could not read it) would have.
fn write_record(dir: &Path, pid: u32, start_ticks: u64, marker: &str, fields: serde_json::Value) {
    let records = dir.join("feelbench/runs");
    std::fs::create_dir_all(&records).unwrap();
    let mut record = serde_json::json!({
        "pid": pid,
        "start_ticks": start_ticks,
        "marker": marker,
        "swap_file": null,
    });
    record
        .as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    std::fs::write(records.join(format!("{pid}.json")), record.to_string()).unwrap();
}

/// A run's private directory `feelbench-NAME`, made in `dir`.
fn private_dir(dir: &Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(format!("feelbench-{name}"));
    std::fs::create_dir(&path).unwrap();
    path
}

/// Sets (`+i`) or clears (`-i`) the immutable attribute of `path`; false
/// when the file system cannot.
fn chattr(flag: &str, path: &Path) -> bool {
    std::process::Command::new("chattr")
        .arg(flag)
        .arg(path)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_live_run_whose_start_time_is_unknown_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("live-{}", new_tag());
    // The live run: one of its processes, carrying its marker.
    let mut live = std::process::Command::new("sleep")
        .arg("60")
        .env("FEELBENCH_RUN", &marker)
        .spawn()
        .unwrap();
    let private = private_dir(dir.path(), "live");
    write_record(
        dir.path(),
        live.id(),
        0,
        &marker,
        serde_json::json!({ "dir": private }),
    );
    let next = next_run(dir.path());
    let alive = live.try_wait().unwrap().is_none();
    let _ = live.kill();
    let _ = live.wait();
    assert!(alive, "the live run was killed: {}", stderr(&next));
    assert!(private.exists(), "the live run's directory was removed");
    assert_eq!(leftovers(dir.path()).1.len(), 1, "its record stays");
}

#[test]
fn what_cannot_be_removed_yet_is_kept_said_and_removed_at_a_later_start() {
    if !require_root("chattr +i makes a file that cannot be removed") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let private = private_dir(dir.path(), "dead");
    let swap = private.join("swapfile");
    let stuck = private.join("stuck");
    std::fs::write(&swap, b"not really swap").unwrap();
    std::fs::write(&stuck, b"x").unwrap();
    if !(chattr("+i", &swap) && chattr("+i", &stuck)) {
        chattr("-i", &swap);
        skip(&format!(
            "chattr +i does not work in {}",
            dir.path().display()
        ));
        return;
    }
    // A dead run: the pid of a process that has ended.
    let mut ended = std::process::Command::new("true").spawn().unwrap();
    ended.wait().unwrap();
    write_record(
        dir.path(),
        ended.id(),
        1,
        &format!("dead-{}", new_tag()),
        serde_json::json!({ "dir": private, "swap_file": swap }),
    );

    let first = stderr(&next_run(dir.path()));
    let kept = leftovers(dir.path()).1;
    let private_stayed = private.exists();
    for path in [&swap, &stuck] {
        chattr("-i", path);
    }
    for hint in [
        format!("could not remove swap file {}", swap.display()),
        format!("swapoff {0} && rm {0}", swap.display()),
        format!("could not remove directory {}", private.display()),
        format!("rm -rf {}", private.display()),
    ] {
        assert!(first.contains(&hint), "{hint:?} not in: {first}");
    }
    assert_eq!(kept.len(), 1, "the record stays for a later start: {first}");
    assert!(private_stayed);

    let second = stderr(&next_run(dir.path()));
    assert!(
        second.contains(&format!("removed swap file {}", swap.display())),
        "{second}"
    );
    let (files, records) = leftovers(dir.path());
    assert_eq!(files, Vec::<String>::new(), "{second}");
    assert_eq!(records, Vec::<String>::new(), "{second}");
}

/// A tmpfs of `size` mounted at `path` for a test, unmounted when dropped
/// (after the files in `immutable` are made removable again).
struct SmallDisk {
    path: std::path::PathBuf,
    immutable: Vec<std::path::PathBuf>,
}

impl SmallDisk {
    /// `None` when it cannot be mounted.
    fn mount(path: &Path, size: &str) -> Option<Self> {
        std::fs::create_dir(path).unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(path)
            .status()
            .is_ok_and(|s| s.success());
        mounted.then(|| Self {
            path: path.to_path_buf(),
            immutable: Vec::new(),
        })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        for path in &self.immutable {
            chattr("-i", path);
        }
        let unmounted = std::process::Command::new("umount")
            .arg(&self.path)
            .status()
            .is_ok_and(|s| s.success());
        assert!(unmounted, "cannot unmount {}", self.path.display());
    }
}

#[test]
fn files_left_by_a_scenario_are_a_warning_and_the_next_that_needs_disk_checks_its_room() {
    if !require_root("mounts a small tmpfs and makes a file unremovable with chattr +i") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(mut disk) = SmallDisk::mount(&dir.path().join("work"), "600m") else {
        skip("cannot mount a tmpfs");
        return;
    };
    // The write load needs 16 MiB and 512 MiB to spare: the 600 MiB the
    // run finds free at its start are enough.
    let tag = new_tag();
    let child = feelbench(&tag, dir.path())
        .args(["run", "--probe", "audio", "--load", "none,write"])
        .args(["--file-size", "16M", "-t", "2", "--warmup", "0.2"])
        .arg("--workdir")
        .arg(&disk.path)
        .args(["--noise-check", "0", "-l", LOOPS_PER_MS, "-q", "-o"])
        .arg(dir.path().join("run.json"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While the first scenario runs, 100 MiB that cannot be removed appear
    // in its directory.
    let mut scenario_dir = None;
    wait_until("the first scenario's directory", || {
        scenario_dir = std::fs::read_dir(&disk.path)
            .unwrap()
            .map(|e| e.unwrap().path().join("scenario-0"))
            .find(|p| p.exists());
        scenario_dir.is_some()
    });
    let stuck = scenario_dir.unwrap().join("stuck");
    std::fs::write(&stuck, vec![1u8; 100 << 20]).unwrap();
    assert!(chattr("+i", &stuck));
    disk.immutable.push(stuck);
    let output = child.wait_with_output().unwrap();
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{message}");

    let run = read_json(&dir.path().join("run.json"));
    let warnings = run["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w["code"] == "cleanup_failed"
            && w["message"].as_str().unwrap().contains("scenario-0")),
        "{warnings:?}"
    );
    assert_eq!(run["scenarios"][0]["status"], "ok");
    let refused = &run["scenarios"][1];
    assert_eq!(refused["status"], "failed");
    let error = refused["error"].as_str().unwrap();
    assert!(
        error.starts_with("not measured: the disk loads need 16 MiB"),
        "{error}"
    );
    assert!(
        message.contains("the next feelbench run removes it; or by hand: rm -rf"),
        "the private directory is left, and said: {message}"
    );
    assert_eq!(leftovers(dir.path()).1.len(), 1, "its record stays");
    assert_eq!(
        wait_for_no_tagged(&tag, Duration::from_secs(3)),
        Vec::<u32>::new()
    );
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
    // The orderly stop the first SIGINT starts takes 0.2–0.5 s beside the
    // other tests; a test thread that waits that long between seeing the
    // first delivered and sending the second (seen once in CI) sees the
    // orderly stop end the run. That attempt proves nothing about the
    // second SIGINT, so it is tried again, up to three times.
    for _ in 0..3 {
        if second_sigint_came_before_the_orderly_stop() {
            return;
        }
    }
    panic!("three times the orderly stop marked the run interrupted and finished before the second SIGINT ended it");
}

/// Sends two SIGINTs to a run under burn, one after the other, and checks
/// that it exits 130 and its workers die with it; whether the second one
/// ended it before the orderly stop the first one started had written the
/// run (if so, it checks that the next run removes what it left).
fn second_sigint_came_before_the_orderly_stop() -> bool {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_under_burn(&tag, dir.path(), "30");
    signal(&child, Signal::SIGINT);
    // Two SIGINTs sent back to back merge into one while pending: the second
    // is sent once the first has reached a handler, looked for without a
    // pause.
    let deadline = Instant::now() + Duration::from_secs(20);
    while sigint_pending(child.id()) {
        assert!(
            Instant::now() < deadline,
            "the first SIGINT is never delivered"
        );
    }
    let still_running = child.try_wait().unwrap().is_none();
    if still_running {
        signal(&child, Signal::SIGINT);
    }
    assert_eq!(
        exit_code_within(&mut child, Duration::from_secs(30)),
        Some(130)
    );
    assert_eq!(
        wait_for_no_tagged(&tag, Duration::from_secs(3)),
        Vec::<u32>::new(),
        "the workers die with the orchestrator"
    );
    // The second SIGINT exits from its handler, whatever the orchestrator is
    // doing; the run file shows whether this came before the orderly stop
    // (no timing is asserted: a loaded machine may take long to deliver it).
    let run = read_json(&dir.path().join("run.json"));
    let orderly_stop_wrote =
        run["run"]["interrupted"] == true && run["run"]["finished"].is_string();
    if !still_running || orderly_stop_wrote {
        return false;
    }
    assert_eq!(
        (&run["run"]["interrupted"], &run["run"]["finished"]),
        (&false.into(), &serde_json::Value::Null),
        "the run file is the one written at the start"
    );
    assert_the_next_run_removes_the_leftovers(dir.path());
    true
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
