//! The `fragment` probe and the `procread` and `copy` loads on short real
//! runs: the figures are there and consistent with each other and with the
//! number of fragments the device can play, the loads do their work, a
//! tighter buffer is accepted and recorded, bad buffer settings are refused
//! before anything runs, and nothing is left behind. No timing is asserted.

use crate::common::{
    assert_load_did_work, feelbench, leftovers, new_tag, read_json, stderr, wait_for_no_tagged,
    LOOPS_PER_MS,
};
use serde_json::Value;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// `feelbench run --probe fragment --load LOADS ARGS` for 1 s, working in
/// `dir` and writing `dir/run.json`; checks that no process is left.
fn fragment_run(dir: &Path, loads: &str, args: &[&str]) -> Output {
    let tag = new_tag();
    let output = feelbench(&tag, dir)
        .args(["run", "--probe", "fragment", "--load", loads])
        .args(["-t", "1", "--warmup", "0.2", "--file-size", "64M"])
        .args(["-l", LOOPS_PER_MS, "-q", "-o", "run.json"])
        .args(args)
        .output()
        .unwrap();
    let left = wait_for_no_tagged(&tag, Duration::from_secs(5));
    assert!(left.is_empty(), "processes left: {left:?}");
    output
}

fn figure(scenario: &Value, key: &str) -> f64 {
    scenario["result"]["figures"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {}", scenario["result"]["figures"]))
}

/// Asserts the figures of a scenario whose fragments play `fragment_ms`
/// for about 1 s are there and consistent.
fn assert_consistent(scenario: &Value, fragment_ms: f64) {
    assert_eq!(scenario["status"], "ok", "{scenario}");
    let f = |key| figure(scenario, key);
    assert!(f("latency_min_us") <= f("latency_mean_us"));
    assert!(f("latency_mean_us") <= f("latency_max_us"));
    assert!(f("latency_p99_us") <= f("latency_max_us"));
    let (writes, underruns) = (f("writes"), f("underruns"));
    assert!(underruns <= writes, "{underruns} of {writes}");
    assert_eq!(f("samples"), writes);
    assert!((0.0..=100.0).contains(&f("on_time_pct")));
    assert_eq!(f("longest_dropout_us") == 0.0, underruns == 0.0);
    // The device plays at most one fragment per fragment time; stalls and
    // underruns only make it fewer (how many fewer depends on the machine's
    // load, so only "some" is asserted below the maximum).
    let most = 1000.0 / fragment_ms;
    assert!(writes >= 1.0 && writes <= most + 1.0, "{writes} writes");
}

#[test]
fn fragment_under_procread_and_copy_has_consistent_figures() {
    let dir = tempfile::tempdir().unwrap();
    let output = fragment_run(dir.path(), "none,procread,copy", &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    let fragment = &run["settings"]["fragment"];
    assert_eq!(
        (
            fragment["fragments"].as_u64(),
            fragment["fragment_bytes"].as_u64()
        ),
        (Some(3), Some(256))
    );
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 3);
    for scenario in scenarios {
        assert_consistent(scenario, 256.0 / 4.0 / 44.1);
    }
    assert_load_did_work(&scenarios[1], "procread", "files", 1);
    assert_load_did_work(&scenarios[2], "copy", "MB", 1);
    assert!(
        scenarios[2]["load_work"][0]["device_write_mb_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let (files, states) = leftovers(dir.path());
    assert_eq!(files, ["run.json"], "left behind: {files:?}");
    assert!(states.is_empty(), "{states:?}");
}

#[test]
fn a_tighter_buffer_is_accepted_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--fragments",
        "2",
        "--fragment-bytes",
        "128",
        "--fragment-cpu",
        "20",
    ];
    let output = fragment_run(dir.path(), "none", &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    let fragment = &run["settings"]["fragment"];
    assert_eq!(fragment["fragments"], 2);
    assert_eq!(fragment["fragment_bytes"], 128);
    assert_eq!(fragment["cpu_pct"], 20.0);
    assert_consistent(&run["scenarios"][0], 128.0 / 4.0 / 44.1);
}

#[test]
fn bad_buffer_settings_are_refused_before_anything_runs() {
    for (args, message) in [
        (["--fragments", "1"], "--fragments takes 2 to 64"),
        (
            ["--fragment-bytes", "250"],
            "--fragment-bytes takes a multiple of 4",
        ),
        (["--sample-rate", "0"], "--sample-rate takes 8000 to 384000"),
        (
            ["--fragment-cpu", "150"],
            "--fragment-cpu takes a percentage",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let output = fragment_run(dir.path(), "none", &args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(stderr(&output).contains(message), "{}", stderr(&output));
        let (files, _) = leftovers(dir.path());
        assert!(files.is_empty(), "left behind: {files:?}");
    }
}
