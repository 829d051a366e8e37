//! The probes that answer after an idle gap (`response`, `command`), end to
//! end with a short gap and three points: resp1's figures and ratio columns,
//! memory left unlocked on purpose without a warning, a failing or missing
//! command failing its scenario while the run goes on, cold starts (root
//! only), and the probe in the loads' memory cgroup under `--mem-limit`.
//! No test asserts a delay.

use crate::common::{
    cmdline, feelbench, feelbench_as_nobody, new_tag, read_json, require_root, stderr, stdout,
    tagged_processes, LOOPS_PER_MS,
};
use serde_json::Value;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// A short gap, three points and a small resident array (4 MiB rather
/// than up to 64 MiB, which an unoptimised build takes long to fill and
/// scan; the default's size is `cli`'s unit tests').
const SHORT: [&str; 6] = [
    "--response-gap",
    "0.2",
    "--response-points",
    "3",
    "--response-resident",
    "4M",
];

/// `feelbench run ARGS` with a short gap and three points, writing
/// `DIR/run.json`; returns its output and the run document.
fn measure(dir: &Path, args: &[&str]) -> (Output, Value) {
    let file = dir.join("run.json");
    let output = feelbench(&new_tag(), dir)
        .arg("run")
        .args(SHORT)
        .args(args)
        .args(["--warmup", "0.2", "-l", LOOPS_PER_MS, "-q", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    (output, read_json(&file))
}

fn figure(scenario: &Value, field: &str) -> f64 {
    scenario["result"]["figures"][field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} missing in {scenario}"))
}

fn scenario<'a>(run: &'a Value, probe: &str, load: &str) -> &'a Value {
    run["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["probe"] == probe && s["load"] == load)
        .unwrap_or_else(|| panic!("no {probe} under {load}"))
}

/// The row of `load` in the table of `probe` in `table`, split in cells.
fn row<'a>(table: &'a str, probe: &str, load: &str) -> Vec<&'a str> {
    let title = format!("--- {probe}: ");
    table
        .lines()
        .skip_while(|l| !l.starts_with(&title))
        .find(|l| l.split_whitespace().next() == Some(load))
        .unwrap_or_else(|| panic!("no {load} row for {probe} in\n{table}"))
        .split_whitespace()
        .collect()
}

#[test]
fn both_probes_give_resp1s_figures_and_ratios_to_no_load() {
    let dir = tempfile::tempdir().unwrap();
    let (output, run) = measure(
        dir.path(),
        &["--probe", "response,command", "--load", "none,burn"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let settings = &run["settings"]["response"];
    assert_eq!(
        (settings["gap_ns"].as_u64(), settings["points"].as_u64()),
        (Some(200_000_000), Some(3))
    );
    assert_eq!(settings["resident_bytes"].as_u64(), Some(4 << 20));
    assert_eq!(settings["command"], Value::Null);
    assert!(
        run["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["code"] != "memory_not_locked"),
        "{}",
        run["warnings"]
    );
    for probe in ["response", "command"] {
        for load in ["none", "burn"] {
            let s = scenario(&run, probe, load);
            assert_eq!(s["status"], "ok", "{s}");
            assert_eq!((figure(s, "points"), figure(s, "points_cut")), (3.0, 0.0));
            let [low, median, high] =
                ["min", "median", "max"].map(|k| figure(s, &format!("delay_{k}_us")));
            assert!(0.0 < low && low <= median && median <= high, "{s}");
            for k in ["mean", "avg1sd"] {
                let v = figure(s, &format!("delay_{k}_us"));
                assert!(low * 0.99 <= v && v <= high * 1.01, "{k} {v} in {s}");
            }
            assert_eq!(s["result"]["batches"].as_array().unwrap().len(), 3);
            let sched = &s["result"]["sched"];
            assert_eq!(
                (&sched["memory"], &sched["memory_locked"]),
                (&Value::from("shared"), &Value::from(false))
            );
        }
    }

    let report = feelbench(&new_tag(), dir.path())
        .args(["report", "run.json"])
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", stderr(&report));
    let table = stdout(&report);
    assert_eq!(table, stdout(&output), "report reproduces the run's table");
    assert!(table.contains("Ratio avg  Ratio 1sd"), "{table}");
    for probe in ["response", "command"] {
        // Load, low, high, median, average, S.D., the two ratios, points.
        let none = row(&table, probe, "none");
        assert_eq!(&none[6..9], ["1.00", "1.00", "3"], "{table}");
        let burn = row(&table, probe, "burn");
        assert!(burn[6].parse::<f64>().unwrap() > 0.0, "{table}");
    }
}

#[test]
fn a_failing_command_fails_its_scenario_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (output, run) = measure(
        dir.path(),
        &[
            "--probe",
            "response,command",
            "--load",
            "none",
            "--command",
            "echo broken >&2; false",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(scenario(&run, "response", "none")["status"], "ok");
    let failed = scenario(&run, "command", "none");
    assert_eq!(failed["status"], "failed");
    let error = failed["error"].as_str().unwrap();
    assert!(
        error.contains("the command `echo broken >&2; false` failed (exit status: 1): broken"),
        "{error}"
    );
    assert!(stdout(&output).contains("FAILED: "), "{}", stdout(&output));
}

#[test]
fn a_command_that_is_not_found_fails_with_the_shells_status() {
    let dir = tempfile::tempdir().unwrap();
    let (output, run) = measure(
        dir.path(),
        &[
            "--probe",
            "command",
            "--load",
            "none",
            "--command",
            "feelbench-no-such-program",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let error = scenario(&run, "command", "none")["error"].as_str().unwrap();
    assert!(
        error.contains("(exit status: 127)") && error.contains("not found"),
        "{error}"
    );
}

#[test]
fn options_out_of_range_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (args, said) in [
        (
            ["--response-points", "0"],
            "--response-points takes 1 to 1000, not 0",
        ),
        (["--command", " "], "--command needs a command"),
        (["--response-gap", "1e6"], "--response-gap"),
    ] {
        let output = feelbench(&new_tag(), dir.path())
            .args(["run", "--probe", "response", "--load", "none", "-c"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).contains(said), "{}", stderr(&output));
    }
}

#[test]
fn cold_starts_drop_the_page_cache_before_each_point() {
    if !require_root("dropping the page cache") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (output, run) = measure(
        dir.path(),
        &["--probe", "command", "--load", "none", "--command-cold"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(run["settings"]["response"]["cold"], true);
    assert_eq!(figure(scenario(&run, "command", "none"), "points"), 3.0);
}

#[test]
fn cold_starts_are_refused_to_others_than_root() {
    if !require_root("to run feelbench as nobody") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let output = feelbench_as_nobody(&new_tag(), dir.path())
        .args([
            "run",
            "--probe",
            "command",
            "--load",
            "none",
            "-c",
            "--command-cold",
        ])
        .args(["-l", LOOPS_PER_MS])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(
        text.contains("--command-cold drops the page cache") && text.contains("needs root"),
        "{text}"
    );
}

/// The memory cgroup line of `/proc/PID/cgroup` (v2's only line, or v1's
/// `memory` hierarchy).
fn memory_cgroup_of(pid: u32) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .find(|l| {
            l.split(':')
                .nth(1)
                .is_some_and(|c| c.split(',').any(|c| c == "memory"))
        })
        .or_else(|| lines.iter().find(|l| l.starts_with("0::")))
        .map(|l| l.to_string())
}

#[test]
fn with_a_memory_limit_the_probe_runs_in_the_loads_memory_cgroup() {
    if !require_root("memory cgroups") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let child = feelbench(&tag, dir.path())
        .args(["run", "--probe", "response", "--load", "none", "-c", "-q"])
        .args([
            "--response-gap",
            "1",
            "--response-points",
            "3",
            "--mem-limit",
            "256M",
        ])
        .args(["-l", LOOPS_PER_MS])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The probe worker joins the cgroup first thing; look until it has.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut joined = None;
    while joined.is_none() && Instant::now() < deadline {
        joined = tagged_processes(&tag)
            .into_iter()
            .filter(|&pid| cmdline(pid).contains(r#""role":"probe""#))
            .filter_map(memory_cgroup_of)
            .find(|cgroup| cgroup.contains("/feelbench-"));
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        joined.is_some(),
        "the probe worker was never seen in the run's memory cgroup"
    );
}
