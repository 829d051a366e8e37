//! Repeated measurements: `run --repeat` and `merge` of separate runs, with
//! short real runs. No test asserts a latency or speed figure, only how the
//! repeats add up.

use crate::common::{feelbench, new_tag, read_json, stderr, stdout, LOOPS_PER_MS};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// `feelbench run` of audio under `loads` with `args`, writing `DIR/NAME`;
/// asserts it succeeded and returns its output and file.
fn measure(dir: &Path, name: &str, loads: &str, args: &[&str]) -> (Output, PathBuf) {
    let file = dir.join(name);
    let output = feelbench(&new_tag(), dir)
        .args(["run", "--probe", "audio", "--load", loads])
        .args([
            "--warmup",
            "0",
            "--noise-check",
            "0",
            "-l",
            LOOPS_PER_MS,
            "-q",
        ])
        .args(args)
        .arg("-o")
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    (output, file)
}

/// `feelbench merge FILES... -o OUTPUT` run in `dir`.
fn merge(dir: &Path, files: &[&Path], output: &Path) -> Output {
    feelbench(&new_tag(), dir)
        .arg("merge")
        .args(files)
        .arg("-o")
        .arg(output)
        .output()
        .unwrap()
}

fn count(value: &Value, path: &str) -> u64 {
    value
        .pointer(path)
        .and_then(Value::as_f64)
        .map(|v| v as u64)
        .unwrap_or_else(|| panic!("{path} missing in {value}"))
}

/// Asserts that `scenario`'s outcome adds up the frames and periods of its
/// `repeats` repeats.
fn assert_merge_of_repeats(scenario: &Value, repeats: usize) {
    let each = scenario["repeats"].as_array().expect("repeats");
    assert_eq!(each.len(), repeats, "{scenario}");
    for path in [
        "/result/figures/frames_executed",
        "/result/figures/frames_dropped",
        "/result/figures/deadlines_total",
        "/result/figures/deadlines_met",
        "/result/figures/samples",
    ] {
        let sum: u64 = each.iter().map(|r| count(r, path)).sum();
        assert_eq!(count(scenario, path), sum, "{path} of {scenario}");
    }
    assert_eq!(
        count(scenario, "/result/figures/deadlines_total"),
        20 * repeats as u64
    );
    assert_eq!(scenario["status"], "ok");
    assert!(scenario.get("telemetry").is_none(), "the merge has none");
    assert!(each.iter().all(|r| r["telemetry"].is_object()));
}

fn assert_usage_error(output: &Output, expected: &str) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains(expected), "{message}");
    assert!(!message.contains("panicked"), "{message}");
}

#[test]
fn run_repeat_measures_every_scenario_in_rounds_and_merges_them() {
    let dir = tempfile::tempdir().unwrap();
    let (output, file) = measure(
        dir.path(),
        "run.json",
        "none,burn",
        &["-t", "1", "--repeat", "2"],
    );
    let run = read_json(&file);
    assert_eq!(run["settings"]["repeats"], 2);
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2);
    for scenario in scenarios {
        assert_merge_of_repeats(scenario, 2);
    }
    let burn = &scenarios[1];
    let amount: f64 = burn["repeats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["load_work"][0]["amount"].as_f64().unwrap())
        .sum();
    assert!((burn["load_work"][0]["amount"].as_f64().unwrap() - amount).abs() < 1e-6 * amount);
    let table = stdout(&output);
    assert!(table.contains("1 s per scenario × 2 repeats"), "{table}");
    assert_eq!(
        table.matches("\nnone ").count(),
        1,
        "one row per scenario: {table}"
    );
    let report = feelbench(&new_tag(), dir.path())
        .arg("report")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(stdout(&report), table, "report must reproduce run's table");
}

#[test]
fn repeat_zero_is_refused() {
    let output = crate::common::run(&["run", "--repeat", "0"]);
    assert_usage_error(&output, "--repeat takes 1 to 1000, not 0");
}

#[test]
fn merge_gathers_separate_runs_and_refuses_mismatched_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (_, a) = measure(dir.path(), "a.json", "none", &["-t", "1", "-m", "first"]);
    let (_, b) = measure(dir.path(), "b.json", "none", &["-t", "1", "-m", "second"]);
    let ab = dir.path().join("ab.json");
    let output = merge(dir.path(), &[&a, &b], &ab);
    assert!(output.status.success(), "{}", stderr(&output));
    let merged = read_json(&ab);
    assert_eq!(merged["settings"]["repeats"], 2);
    assert_eq!(merged["run"]["comment"], "first; second");
    assert_eq!(merged["scenarios"].as_array().unwrap().len(), 1);
    let scenario = &merged["scenarios"][0];
    assert_merge_of_repeats(scenario, 2);
    let mut first = read_json(&a)["scenarios"][0].clone();
    let first = first.as_object_mut().unwrap();
    for field in ["probe", "load", "intervals"] {
        first.remove(field);
    }
    assert_eq!(scenario["repeats"][0], Value::Object(first.clone()));
    let report = feelbench(&new_tag(), dir.path())
        .arg("report")
        .arg(&ab)
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", stderr(&report));

    let (_, short) = measure(dir.path(), "short.json", "none", &["-t", "0.5"]);
    let refused = dir.path().join("refused.json");
    let output = merge(dir.path(), &[&a, &short], &refused);
    assert_usage_error(
        &output,
        "duration per scenario differs (1 s in the first, 0.5 s in the second)",
    );
    assert!(!refused.exists());

    let output = merge(dir.path(), &[&a, &b], &b);
    assert_usage_error(&output, "is the input");
    assert_eq!(read_json(&b)["run"]["comment"], "second", "input untouched");
}

#[test]
fn merge_refuses_files_that_are_not_runs() {
    let dir = tempfile::tempdir().unwrap();
    let corrupt = dir.path().join("corrupt.json");
    std::fs::write(&corrupt, "{ \"schema\": ").unwrap();
    let foreign = dir.path().join("foreign.json");
    std::fs::write(&foreign, r#"{"name": "other tool"}"#).unwrap();
    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, r#"{"schema": "feelbench.run/9"}"#).unwrap();
    let out = dir.path().join("out.json");
    for (file, expected) in [
        (&corrupt, "corrupt.json is not JSON"),
        (&foreign, "foreign.json is not a feelbench run"),
        (&newer, "newer than this feelbench reads"),
    ] {
        assert_usage_error(&merge(dir.path(), &[file, file], &out), expected);
    }
    assert_usage_error(&merge(dir.path(), &[&corrupt], &out), "2 values required");
    assert!(!out.exists());
}
