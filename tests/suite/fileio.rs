//! The `fileio` probe and the `io*` loads on short real runs with small
//! files: the probe times reads and writes of both kinds under no load and
//! under an io load, its figures hold together (min ≤ avg ≤ max, shares
//! within 0–100 %), its labels name the thresholds, every io load reports
//! its request latency as load work, bad thresholds and a file too large
//! for the disk are refused, and the work directory is left empty, also
//! after Ctrl-C.

use crate::common::{
    assert_ends_clean, cmdline, feelbench, leftovers, new_tag, read_json, require_root, stderr,
    tagged_processes, wait_until, LOOPS_PER_MS,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

/// `feelbench run --probe fileio --load LOADS` for 1 s with small files
/// and two io processes, in `dir`, writing `dir/run.json`; `extra` adds
/// options (the probe's file is 8 MiB unless they give --fileio-size).
fn fileio_run(dir: &Path, loads: &str, extra: &[&str]) -> Output {
    feelbench(&new_tag(), dir)
        .args(["run", "--probe", "fileio", "--load", loads])
        .args(["-t", "1", "--warmup", "0.2", "--file-size", "16M"])
        .args(["--io-threads", "2"])
        .args(["-l", LOOPS_PER_MS, "-q", "-o", "run.json"])
        .args(extra)
        .args(match extra.contains(&"--fileio-size") {
            true => &[][..],
            false => &["--fileio-size", "8M"][..],
        })
        .output()
        .unwrap()
}

/// The run written in `dir` by a successful `fileio_run`.
fn successful_run(dir: &Path, loads: &str, extra: &[&str]) -> Value {
    let output = fileio_run(dir, loads, extra);
    assert!(output.status.success(), "{}", stderr(&output));
    read_json(&dir.join("run.json"))
}

fn f(value: &Value, key: &str) -> f64 {
    value[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {value}"))
}

fn assert_left_nothing(dir: &Path) {
    let (files, records) = leftovers(dir);
    assert_eq!(files, ["run.json"], "work directory left behind");
    assert!(records.is_empty(), "{records:?}");
}

/// The figures of both kinds of request hold together.
fn assert_sane_figures(scenario: &Value) {
    assert_eq!(scenario["status"], "ok", "{scenario}");
    let figures = &scenario["result"]["figures"];
    for kind in ["read", "write"] {
        assert!(f(figures, &format!("{kind}s")) > 0.0, "{figures}");
        let (min, mean, max) = (
            f(figures, &format!("{kind}_min_us")),
            f(figures, &format!("{kind}_mean_us")),
            f(figures, &format!("{kind}_max_us")),
        );
        // The histogram's min and max are within 0.1 % of the exact values.
        assert!(
            min <= mean * 1.001 && mean <= max * 1.001,
            "{kind}: {min} {mean} {max}"
        );
        assert!(f(figures, &format!("{kind}_p99_us")) <= max * 1.001);
        for k in 1..=3 {
            let pct = f(figures, &format!("{kind}_over{k}_pct"));
            assert!((0.0..=100.0).contains(&pct), "{kind}_over{k}: {pct}");
        }
    }
    assert!((0.0..=100.0).contains(&f(figures, "direct_pct")));
    assert!(figures.get("requests_unfinished").is_some(), "{figures}");
}

#[test]
fn fileio_times_reads_and_writes_under_no_load_and_under_an_io_load() {
    let dir = tempfile::tempdir().unwrap();
    let run = successful_run(dir.path(), "none,ioseqwrite", &[]);
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2);
    scenarios.iter().for_each(assert_sane_figures);
    assert!(scenarios[0]["load_work"].as_array().unwrap().is_empty());
    let work = &scenarios[1]["load_work"][0];
    assert_eq!(
        (&work["load"], work["processes"].as_u64()),
        (&"ioseqwrite".into(), Some(2))
    );
    let requests = &work["requests"];
    assert!(f(requests, "count") > 0.0, "{work}");
    assert!(f(requests, "max_ns") * f(requests, "count") >= f(requests, "sum_ns"));
    assert_eq!(requests["over"].as_array().unwrap().len(), 3);
    let label = &run["probes"]["fileio"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["key"] == "read_over1")
        .unwrap()["label"];
    assert_eq!(label, "% reads over 100ms");
    assert_eq!(run["settings"]["io"]["threads"], 2);
    // tiobench's table follows the probe's, a row for the load.
    let path = dir.path().join("run.json");
    let report = crate::common::run(&["report", path.to_str().unwrap()]);
    let table = crate::common::stdout(&report);
    let title = table
        .lines()
        .position(|l| l.contains("(tiobench's table)"))
        .unwrap_or_else(|| panic!("no requests table: {table}"));
    let lines: Vec<&str> = table.lines().collect();
    let header: Vec<&str> = lines[title + 1]
        .split("  ")
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(header.len(), 10, "{table}");
    assert!(
        lines[title + 2].trim_start().starts_with("ioseqwrite"),
        "{table}"
    );
    assert_left_nothing(dir.path());
}

#[test]
fn under_rt_the_thread_timing_requests_runs_sched_fifo_as_read_back() {
    if !require_root("SCHED_FIFO") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = successful_run(dir.path(), "none", &["--rt", "-B", "-3"]);
    let sched = &run["scenarios"][0]["result"]["sched"];
    let tasks = sched["tasks"].as_array().expect("the tasks read back");
    let names: Vec<&str> = tasks.iter().filter_map(|t| t["name"].as_str()).collect();
    // The thread that times the requests, and the one that hands them over.
    for name in ["fb-fileio-io", "fb-probe-fileio"] {
        assert!(names.contains(&name), "{name} not in {names:?}");
    }
    for task in tasks {
        assert_eq!(task["policy"], "SCHED_FIFO", "{task}");
        assert_eq!(task["priority"], 80, "{task}");
        assert_eq!(task["nice"], -3, "{task}");
        assert_eq!(task["cpus"], sched["cpus"], "{task}");
    }
    assert_left_nothing(dir.path());
}

#[test]
fn every_io_load_reports_its_request_latency() {
    let dir = tempfile::tempdir().unwrap();
    let run = successful_run(dir.path(), "ioseqread,iorandwrite,iorandread", &[]);
    for scenario in run["scenarios"].as_array().unwrap() {
        assert_sane_figures(scenario);
        let work = &scenario["load_work"][0];
        assert!(f(work, "amount") > 0.0, "{work}");
        assert!(f(&work["requests"], "count") > 0.0, "{work}");
    }
    assert_left_nothing(dir.path());
}

#[test]
fn thresholds_name_the_labels_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = successful_run(dir.path(), "none", &["--io-thresholds", "50ms,1s"]);
    let figures = &run["scenarios"][0]["result"]["figures"];
    assert!(figures.get("write_over2_pct").is_some(), "{figures}");
    assert!(figures.get("write_over3_pct").is_none(), "{figures}");
    let labels: Vec<&str> = run["probes"]["fileio"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["label"].as_str())
        .filter(|l| l.starts_with("% writes over"))
        .collect();
    assert_eq!(labels, ["% writes over 50ms", "% writes over 1s"]);
    for bad in ["2s,1s", "1ms,2ms,3ms,4ms", "soon"] {
        let output = fileio_run(dir.path(), "none", &["--io-thresholds", bad]);
        assert_eq!(output.status.code(), Some(2), "{bad}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("--io-thresholds"),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn a_probe_file_beyond_the_free_space_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let output = fileio_run(dir.path(), "none", &["--fileio-size", "100T"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("free") && message.contains("--fileio-size"),
        "{message}"
    );
}

#[test]
fn ctrl_c_while_the_probe_and_an_io_load_work_leaves_no_file_and_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let mut child = feelbench(&tag, dir.path())
        .args([
            "run",
            "--probe",
            "fileio",
            "--load",
            "ioseqwrite",
            "-t",
            "30",
        ])
        .args(["--warmup", "0", "--file-size", "16M", "--fileio-size", "8M"])
        .args([
            "--io-threads",
            "2",
            "-l",
            LOOPS_PER_MS,
            "-q",
            "-o",
            "run.json",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The probe and both io processes are working, their files open.
    wait_until("the probe and the io processes to start", || {
        tagged_processes(&tag)
            .into_iter()
            .filter(|&pid| cmdline(pid).contains(r#""role":"#))
            .count()
            >= 3
    });
    std::thread::sleep(Duration::from_millis(500));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    assert_ends_clean(&mut child, Some(130), &tag);
    let (files, records) = leftovers(dir.path());
    let files: Vec<&String> = files.iter().filter(|f| *f != "run.json").collect();
    assert!(files.is_empty(), "left behind: {files:?}");
    assert!(records.is_empty(), "{records:?}");
}
