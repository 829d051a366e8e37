//! `run --precision`: a short adaptive run, checked for its structure (when
//! it stopped, how many measurements it kept, what it recorded and
//! printed). Whether the figures reached the goal depends on the machine, so
//! both endings are accepted, each checked for what it must then hold.

mod common;
use common::{feelbench, new_tag, read_json, stderr, stdout, LOOPS_PER_MS};
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

#[test]
fn precision_measures_until_precise_or_capped_and_says_how_many_times() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    let output = feelbench(&new_tag(), dir.path())
        .args(["run", "--probe", "audio", "--load", "none", "-t", "1"])
        .args(["--precision", "50", "--max-time", "3"])
        .args([
            "--warmup",
            "0",
            "--noise-check",
            "0",
            "-l",
            LOOPS_PER_MS,
            "-q",
        ])
        .arg("-o")
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&file);
    assert_eq!(run["settings"]["precision_pct"], 50.0);
    assert_eq!(run["settings"]["max_time_s"], 3.0);
    assert_eq!(run["settings"]["repeats"], 1);
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 1);
    let scenario = &scenarios[0];
    assert_eq!(scenario["status"], "ok");
    let measurements = scenario["repeats"].as_array().map_or(1, Vec::len);
    assert!(
        (1..=3).contains(&measurements),
        "{measurements} measurements"
    );

    let table = stdout(&output);
    assert!(
        table.contains("1 s per measurement until ±50 % (at most 3 s per scenario)"),
        "{table}"
    );
    let note = format!("{measurements} × 1 s");
    let row = table
        .lines()
        .find(|l| l.contains(&note))
        .unwrap_or_else(|| panic!("no line with {note:?}: {table}"));
    // Stopped early only when precise: then every headline figure has an
    // interval and the row names none as imprecise. At the cap it may not.
    if measurements < 3 {
        assert_eq!(interval_keys(scenario), ["mean", "p99", "deadlines"]);
        assert!(!row.contains("not within"), "{row}");
    }
    let report = feelbench(&new_tag(), dir.path())
        .arg("report")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(stdout(&report), table, "report must reproduce run's table");
}

#[test]
fn precision_with_repeat_is_refused() {
    let output = common::run(&["run", "--precision", "5", "--repeat", "3"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("cannot be used with"));
}
