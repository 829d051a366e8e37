//! CPU placement end to end: `--probe-cpus` and `--load-cpus` put the
//! workers, and what a load starts, on the CPUs asked for and the run
//! records where each ran; `--load-cpu-weight` puts the loads (not the
//! probe) in a CPU cgroup, alone or beside the memory cgroup of
//! `--mem-limit`, and no cgroup is left after a normal end or a SIGINT;
//! `--probe-session` starts the probe in a session apart from the loads'.
//! The cgroup tests need root and say so when they skip.

use crate::common::{
    assert_ends_clean, feelbench, leftovers, new_tag, read_json, require_root, skip, stderr,
    wait_for_no_tagged, wait_until, BRIEF_RUN, LOOPS_PER_MS,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A `cmd:` load that writes the named /proc/self file of the process it
/// starts (a child of the load worker) to `file`, then burns CPU.
fn reporting_load(what: &str, file: &Path) -> String {
    format!(
        "cmd:sh -c 'cat /proc/self/{what} > {}; exec yes > /dev/null'",
        file.display()
    )
}

/// `feelbench run` of audio under `load` in `dir`, with `args`, briefly.
fn run_in(dir: &Path, load: &str, seconds: &str, args: &[&str]) -> Command {
    let mut command = feelbench(&new_tag(), dir);
    command
        .args(["run", "--probe", "audio", "--load", load, "-t", seconds])
        .args(BRIEF_RUN)
        .args(args);
    command
}

/// Whether CPUs 0 and 1 are both online and allowed to this process.
fn two_cpus() -> bool {
    let allowed = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("Cpus_allowed_list:")
                .map(|v| v.trim().to_string())
        })
        .unwrap_or_default();
    let ok = allowed.starts_with("0-") || allowed.starts_with("0,1");
    if !ok {
        skip(&format!("needs CPUs 0 and 1 (allowed: {allowed:?})"));
    }
    ok
}

#[test]
fn probe_and_loads_run_where_they_are_put_and_the_run_says_so() {
    if !two_cpus() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let status_file = dir.path().join("load-status");
    let load = reporting_load("status", &status_file);
    let output = run_in(
        dir.path(),
        &load,
        "1",
        &["--probe-cpus", "0", "--load-cpus", "1"],
    )
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(run["settings"]["probe_cpus"], "0");
    assert_eq!(run["settings"]["load_cpus"], "1");
    assert_eq!(run["settings"]["load_cpu_weight"], serde_json::Value::Null);
    let scenario = &run["scenarios"][0];
    assert_eq!(scenario["status"], "ok", "{scenario}");
    assert_eq!(
        scenario["result"]["sched"]["cpus"], "0",
        "the probe's own record"
    );
    assert_eq!(
        scenario["load_work"][0]["cpus"], "1",
        "the load worker's record"
    );
    let status = std::fs::read_to_string(&status_file).unwrap();
    assert!(
        status.lines().any(|l| l == "Cpus_allowed_list:\t1"),
        "what the load started inherits its CPUs: {status}"
    );
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        table.contains("probe on CPUs 0, loads on CPUs 1"),
        "{table}"
    );
}

/// The session id in a /proc/PID/stat file or a copy of one (its sixth
/// field).
fn session_in(stat_file: &Path) -> u32 {
    let stat = std::fs::read_to_string(stat_file).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    after_name.split(' ').nth(3).unwrap().parse().unwrap()
}

#[test]
fn a_probe_in_its_own_session_runs_apart_from_the_loads_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let load_stat = dir.path().join("load-stat");
    let probe_stat = dir.path().join("probe-stat");
    let tag = new_tag();
    let output = feelbench(&tag, dir.path())
        .args(["run", "--probe", "command", "--probe-session"])
        .args(["--load", &reporting_load("stat", &load_stat)])
        .arg("--command")
        .arg(format!("cat /proc/self/stat > {}", probe_stat.display()))
        .args(["--response-gap", "0.2", "--response-points", "2"])
        .args(BRIEF_RUN)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(run["settings"]["probe_session"], true);
    assert_eq!(run["scenarios"][0]["status"], "ok");
    let (probe, load) = (session_in(&probe_stat), session_in(&load_stat));
    let tests_session = session_in(Path::new("/proc/self/stat"));
    assert_ne!(probe, load, "the probe's command shares the loads' session");
    assert_eq!(load, tests_session, "the loads left the run's session");
    assert_eq!(
        wait_for_no_tagged(&tag, Duration::from_secs(5)),
        Vec::<u32>::new(),
        "processes left"
    );
}

#[test]
fn cpus_that_are_not_online_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let output = run_in(dir.path(), "none", "1", &["--load-cpus", "1023"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(
        text.contains("--load-cpus: CPU 1023 is not online (the online CPUs are"),
        "{text}"
    );
    assert!(!dir.path().join("run.json").exists());
}

/// The cgroups a run says it made (`feelbench: loads ... in PATH (cgroup vN)`).
fn cgroups_named_in(stderr: &str) -> Vec<PathBuf> {
    stderr
        .lines()
        .filter_map(|line| line.strip_prefix("feelbench: loads "))
        .filter_map(|rest| {
            Some(PathBuf::from(
                rest.split_once(" in ")?.1.split_once(" (cgroup")?.0,
            ))
        })
        .collect()
}

/// Removes, when a failed test leaves them, the cgroups it names.
struct Undo(Vec<PathBuf>);

impl Drop for Undo {
    fn drop(&mut self) {
        for cgroup in &self.0 {
            for _ in 0..100 {
                if std::fs::remove_dir(cgroup).is_ok() || !cgroup.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

#[test]
fn a_cpu_weight_with_a_memory_limit_leaves_no_cgroup_after_the_run() {
    if !require_root("CPU and memory cgroups") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cgroup_file = dir.path().join("load-cgroup");
    let load = reporting_load("cgroup", &cgroup_file);
    let args = ["--load-cpu-weight", "10", "--mem-limit", "256M"];
    // 3 s: a load at weight 10 beside six tests at once can wait over a
    // second for its first step, and then never sees a 1 s window.
    let output = run_in(dir.path(), &load, "3", &args).output().unwrap();
    let text = stderr(&output);
    let cgroups = cgroups_named_in(&text);
    let _undo = Undo(cgroups.clone());
    assert!(output.status.success(), "{text}");
    assert!(text.contains("at CPU weight 10 ("), "{text}");
    assert!(!cgroups.is_empty(), "the run names its cgroups: {text}");
    for cgroup in &cgroups {
        assert!(!cgroup.exists(), "{} is left", cgroup.display());
    }
    let name = cgroups[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let joined = std::fs::read_to_string(&cgroup_file).unwrap();
    assert!(
        joined.contains(&format!("/{name}\n")),
        "what the load started is in the loads' cgroup: {joined}"
    );
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(run["settings"]["load_cpu_weight"], 10);
    assert_eq!(run["scenarios"][0]["status"], "ok");
    assert_eq!(
        leftovers(dir.path()).1,
        Vec::<String>::new(),
        "state records"
    );
}

/// Whether the cgroup at `path` has a process in it.
fn has_members(path: &Path) -> bool {
    std::fs::read_to_string(path.join("cgroup.procs")).is_ok_and(|t| !t.trim().is_empty())
}

/// Starts a 30 s run of audio under burn at CPU weight 10 in `dir` with
/// `output` options, and waits until its loads are in their cgroup; returns
/// the run, its cgroups and a reader of what it said on stderr.
fn start_weighted(
    dir: &Path,
    tag: &str,
    output: &[&str],
) -> (std::process::Child, Vec<PathBuf>, impl Fn() -> String) {
    let stderr_file = dir.join("stderr");
    let child = feelbench(tag, dir)
        .args(["run", "--probe", "audio", "--load", "burn", "-t", "30"])
        .args(["--warmup", "0.2", "-l", LOOPS_PER_MS, "-q"])
        .args(output)
        .args(["--load-cpu-weight", "10"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_file).unwrap())
        .spawn()
        .unwrap();
    let said = move || std::fs::read_to_string(&stderr_file).unwrap_or_default();
    wait_until("the run to make its cgroup", || {
        !cgroups_named_in(&said()).is_empty()
    });
    let cgroups = cgroups_named_in(&said());
    wait_until("the loads to join the cgroup", || has_members(&cgroups[0]));
    (child, cgroups, said)
}

#[test]
fn sigint_under_a_cpu_weight_leaves_no_cgroup() {
    if !require_root("a CPU cgroup") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let (mut child, cgroups, said) = start_weighted(dir.path(), &tag, &["-o", "run.json"]);
    let _undo = Undo(cgroups.clone());
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    assert_ends_clean(&mut child, Some(130), &tag);
    for cgroup in &cgroups {
        assert!(!cgroup.exists(), "{} is left: {}", cgroup.display(), said());
    }
    assert_eq!(
        leftovers(dir.path()).1,
        Vec::<String>::new(),
        "state records"
    );
}

#[test]
fn a_cpu_cgroup_left_by_a_killed_run_is_removed_by_the_next_run() {
    if !require_root("a CPU cgroup") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let (mut child, cgroups, _) = start_weighted(dir.path(), &tag, &["-c"]);
    let _undo = Undo(cgroups.clone());
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    assert_eq!(
        wait_for_no_tagged(&tag, Duration::from_secs(5)),
        Vec::<u32>::new()
    );
    assert!(cgroups[0].exists(), "a SIGKILL leaves the cgroup");

    let next = run_in(dir.path(), "none", "0.2", &[]).output().unwrap();
    let text = stderr(&next);
    assert!(next.status.success(), "{text}");
    for cgroup in &cgroups {
        assert!(
            text.contains(&format!("removed cgroup {}", cgroup.display())),
            "{text}"
        );
        assert!(!cgroup.exists(), "{} is left", cgroup.display());
    }
}
