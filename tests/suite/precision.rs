//! `run --precision`: short adaptive runs, checked for their structure
//! (when they stopped, how many measurements they kept, what they recorded
//! and printed). One goal no measurement can meet runs to the cap; one that
//! a thousand frames a second meet at once stops early.

use crate::common::{feelbench, new_tag, read_json, stderr, stdout, LOOPS_PER_MS};
use serde_json::Value;

/// The keys of the headline figures with an interval in `scenario`.
fn interval_keys(scenario: &Value) -> Vec<&str> {
    scenario["intervals"]["figures"]
        .as_array()
        .map(|figures| {
            figures
                .iter()
                .filter_map(|f| f["figure"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

/// What an adaptive run of `probe` (1 s measurements) to `goal` % with at
/// most `max_s` seconds wrote and printed: the run, its one scenario's number
/// of measurements, and the table's row that says how many.
fn adaptive_run(probe: &[&str], goal: &str, max_s: &str) -> (Value, usize, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    let output = feelbench(&new_tag(), dir.path())
        .args(["run", "--probe"])
        .args(probe)
        .args(["--load", "none", "-t", "1"])
        .args(["--precision", goal, "--max-time", max_s])
        .args(["--warmup", "0", "--noise-check", "0"])
        .args(["-l", LOOPS_PER_MS, "-q", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&file);
    assert_eq!(run["settings"]["max_time_s"], max_s.parse::<f64>().unwrap());
    assert_eq!(run["settings"]["repeats"], 1);
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 1);
    assert_eq!(scenarios[0]["status"], "ok");
    let measurements = scenarios[0]["repeats"].as_array().map_or(1, Vec::len);

    let table = stdout(&output);
    let header = format!("1 s per measurement until ±{goal} % (at most {max_s} s per scenario)");
    assert!(table.contains(&header), "{table}");
    let note = format!("{measurements} × 1 s");
    let row = table
        .lines()
        .find(|l| l.contains(&note))
        .unwrap_or_else(|| panic!("no line with {note:?}: {table}"))
        .to_string();
    let report = feelbench(&new_tag(), dir.path())
        .arg("report")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(stdout(&report), table, "report must reproduce run's table");
    (run, measurements, row)
}

#[test]
fn a_goal_out_of_reach_measures_to_the_cap_and_names_the_imprecise_figures() {
    let (run, measurements, row) = adaptive_run(&["audio"], "0.01", "3");
    assert_eq!(run["settings"]["precision_pct"], 0.01);
    assert_eq!(measurements, 3, "{row}");
    assert!(row.contains("not within ±0.01: mean"), "{row}");
}

#[test]
fn a_goal_reached_stops_before_the_cap() {
    // 1000 frames a second: on a quiet machine the first or second second
    // gives every headline figure an interval far inside ±100 %. Beside the
    // other tests the load comes and goes between measurements, and their
    // means can then differ too much for any number of them to be within
    // (seen in CI once: 6 measurements, mean ≤0.000–1.339 ms). So a run that
    // reaches the cap must say which figure kept it there, and one of three
    // runs must reach the goal.
    let probe = ["custom", "-C", "10", "-I", "1000"];
    let mut capped = Vec::new();
    for _ in 0..3 {
        let (run, measurements, row) = adaptive_run(&probe, "100", "6");
        assert_eq!(run["settings"]["precision_pct"], 100.0);
        if measurements == 6 {
            assert!(row.contains("not within ±100: "), "{row}");
            capped.push(row);
            continue;
        }
        assert!(measurements < 6, "{measurements} measurements: {row}");
        assert_eq!(
            interval_keys(&run["scenarios"][0]),
            ["mean", "p99", "deadlines"]
        );
        assert!(!row.contains("not within"), "{row}");
        return;
    }
    panic!("three runs measured to the cap:\n{}", capped.join("\n"));
}

#[test]
fn precision_with_repeat_is_refused() {
    let output = crate::common::run(&["run", "--precision", "5", "--repeat", "3"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("cannot be used with"));
}
