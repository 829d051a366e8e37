//! The `job` probe and the `jobload` and `cacherun` loads, on tiny jobs:
//! the job's time and CPU under no load, its inputs cold or warm, a command that fails or outlives its cap (killed
//! with everything it started, the run going on), nothing left behind, and
//! `compare` testing the job's time when runs have repeats. Structure and
//! invariants only, never timings.

use crate::common::{
    feelbench, leftovers, new_tag, read_json, stderr, stdout, tagged_processes, LOOPS_PER_MS,
};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// The built-in job at its smallest useful size: 5 steps on 2 CPUs.
const TINY: &str = "0.02";

/// `feelbench run --probe job ARGS` with quick settings, writing `run.json`
/// in `dir`, tagged with `tag`.
fn run_job(tag: &str, dir: &Path, args: &[&str]) -> Output {
    let output = feelbench(tag, dir)
        .args(["run", "--probe", "job", "--job-size", TINY])
        .args(args)
        .args(["--warmup", "0.2", "--noise-check", "0", "-l", LOOPS_PER_MS])
        .args(["-q", "-o", "run.json"])
        .output()
        .unwrap();
    assert!(!stderr(&output).contains("panicked"), "{}", stderr(&output));
    output
}

fn scenarios(dir: &Path) -> Vec<Value> {
    read_json(&dir.join("run.json"))["scenarios"]
        .as_array()
        .unwrap()
        .clone()
}

fn figure(scenario: &Value, field: &str) -> f64 {
    scenario["result"]["figures"][field]
        .as_f64()
        .unwrap_or_else(|| panic!("no {field} in {scenario}"))
}

#[test]
fn the_built_in_job_under_no_load_has_a_time_and_its_cpu() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let output = run_job(&tag, dir.path(), &["--load", "none"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let scenario = &scenarios(dir.path())[0];
    assert_eq!(scenario["status"], "ok", "{scenario}");
    assert!(figure(scenario, "job_time_us") > 0.0);
    assert!(figure(scenario, "job_cpu_pct") > 0.0);
    assert_eq!(figure(scenario, "jobs_run"), 1.0);
    // The worker announces the window once the probe has prepared, and the
    // window starts 50 ms later: a set-up done before the announcement
    // (inputs written, build made) ended at least that long before the
    // job started, and none of it is in the job's time.
    let lead_s = scenario["result"]["tally"]["counts"]["setup_lead_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("no set-up lead in {scenario}"));
    assert!(lead_s >= 0.05, "set-up ended {lead_s} s before the job");
    let table = stdout(&output);
    assert!(
        table.contains("Load        Time (s)    CPU %      Loads   LCPU %    Ratio  Load work"),
        "{table}"
    );
    // contest's columns; no load work under `none`.
    let row = table.lines().find(|l| l.starts_with("none")).unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[3..6], ["-", "-", "1.00"], "{table}");
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(run["settings"]["job"]["size"], 0.02);
    assert_eq!(tagged_processes(&tag), Vec::<u32>::new());
}

#[test]
fn a_failing_job_fails_its_scenarios_with_its_status_and_the_run_goes_on() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--load",
        "none,spawn",
        "--job",
        "echo 'no rule' >&2; exit 3",
    ];
    let output = run_job(&tag, dir.path(), &args);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let both = scenarios(dir.path());
    assert_eq!(both.len(), 2, "both scenarios ran");
    for scenario in &both {
        assert_eq!(scenario["status"], "failed", "{scenario}");
        let error = scenario["error"].as_str().unwrap();
        assert!(
            error.contains("failed (exit code 3); its stderr ended with: no rule"),
            "{error}"
        );
    }
    let missing = ["--load", "none", "--job", "no-such-build-tool -j4"];
    let output = run_job(&tag, dir.path(), &missing);
    assert_eq!(output.status.code(), Some(1));
    let error = scenarios(dir.path())[0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        error.contains("(exit code 127)") && error.contains("not found"),
        "{error}"
    );
}

#[test]
fn a_job_past_its_timeout_is_killed_with_everything_it_started() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    // A background child, a daemon that left the session, and the shell.
    let command = "sleep 100 & setsid sleep 100 & sleep 100; echo never";
    let args = ["--load", "none", "--job", command, "--job-timeout", "1"];
    let output = run_job(&tag, dir.path(), &args);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let error = scenarios(dir.path())[0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        error.contains("did not end within 1 s (--job-timeout)"),
        "{error}"
    );
    // The shell and its three sleeps, all found by the probe itself.
    let killed: usize = error
        .rsplit(": ")
        .next()
        .and_then(|n| n.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no count in {error}"));
    assert!(killed >= 3, "{error}");
    let left: Vec<String> = tagged_processes(&tag)
        .into_iter()
        .map(crate::common::cmdline)
        .collect();
    assert!(left.is_empty(), "still running: {left:?}");
}

#[test]
fn nothing_of_the_job_is_left_in_the_work_directory() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("work");
    std::fs::create_dir(&workdir).unwrap();
    let args = ["--load", "none,jobload", "--workdir", "work"];
    let output = run_job(&tag, dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let (files, records) = leftovers(&workdir);
    assert!(
        files.is_empty() && records.is_empty(),
        "{files:?} {records:?}"
    );
    let failing = [
        "--load",
        "none",
        "--workdir",
        "work",
        "--job",
        "touch made; exit 1",
    ];
    let output = run_job(&tag, dir.path(), &failing);
    assert_eq!(output.status.code(), Some(1));
    assert!(leftovers(&workdir).0.is_empty());
}

#[test]
fn a_command_is_timed_under_jobload_which_counts_job_steps() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let args = ["--load", "jobload", "--job", "sleep 1"];
    let output = run_job(&tag, dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let scenario = &scenarios(dir.path())[0];
    assert_eq!(scenario["status"], "ok", "{scenario}");
    assert!(figure(scenario, "job_time_us") >= 1e6, "{scenario}");
    let work = &scenario["load_work"][0];
    assert_eq!(work["load"], "jobload");
    assert_eq!(work["unit"], "job steps");
    assert!(work["amount"].as_f64().unwrap() > 0.0, "{work}");
    assert!(work["cpu_pct"].as_f64().unwrap() > 0.0, "{work}");
    assert_eq!(tagged_processes(&tag), Vec::<u32>::new());
}

#[test]
fn cacherun_is_a_row_without_load_and_the_cold_setting_is_recorded() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let workdir = dir.path().join("work");
    std::fs::create_dir(&workdir).unwrap();
    let args = [
        "--load",
        "none,cacherun",
        "--job-cache",
        "cold",
        "--workdir",
        "work",
    ];
    let output = run_job(&tag, dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(
        run["settings"]["job"]["cache"], "cold",
        "{}",
        run["settings"]
    );
    let scenarios = scenarios(dir.path());
    let loads: Vec<&str> = scenarios
        .iter()
        .map(|s| s["load"].as_str().unwrap())
        .collect();
    assert_eq!(loads, ["none", "cacherun"]);
    for scenario in &scenarios {
        assert_eq!(scenario["status"], "ok", "{scenario}");
        assert!(figure(scenario, "job_time_us") > 0.0, "{scenario}");
        // What the job read from the device is known (its amount is the
        // cache's and the device's business, not asserted).
        figure(scenario, "job_read_mb");
        let work = scenario["load_work"].as_array().unwrap();
        assert!(work.is_empty(), "no background work: {scenario}");
    }
    assert!(leftovers(&workdir).0.is_empty());
    assert_eq!(tagged_processes(&tag), Vec::<u32>::new());
}

#[test]
fn compare_finds_a_job_three_times_as_long_worse() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    // Jobs that wait, whatever the machine does: 0.2 s against 0.6 s, of
    // which a noisy machine can lengthen each by milliseconds, not by 0.4 s.
    for seconds in ["0.2", "0.6"] {
        let file = format!("sleep{seconds}.json");
        let job = format!("sleep {seconds}");
        let args = ["--load", "none", "--job", &job, "--repeat", "3"];
        let output = feelbench(&new_tag(), dir.path())
            .args(["run", "--probe", "job", "--job-size", TINY])
            .args(args)
            .args(["--warmup", "0.2", "--noise-check", "0", "-l", LOOPS_PER_MS])
            .args(["-q", "-o", &file])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        files.push(file);
    }
    let output = feelbench(&new_tag(), dir.path())
        .args(["compare", &files[0], &files[1], "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let comparison: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let time = comparison["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["probe"] == "job" && r["figure"] == "time")
        .expect("a job time row")
        .clone();
    let cell = &time["cells"][1];
    assert_eq!(cell["method"], "repeats", "{time}");
    assert_eq!(cell["verdict"], "worse", "{time}");
}
