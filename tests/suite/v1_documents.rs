//! Runs written by the previous release (schema `feelbench.run/1`, in
//! `tests/data/`, with what that release printed for them) still render,
//! compare and merge: the table, Markdown and comparison are the same text,
//! and the CSV has the same value in every column it had.

use crate::common::{feelbench, new_tag, stdout};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap()
}

/// feelbench run with `args`, from a scratch directory; its stdout.
fn output(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = feelbench(&new_tag(), dir.path())
        .args(args)
        .current_dir(data(""))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout(&out)
}

#[test]
fn an_old_run_renders_as_its_release_printed_it() {
    for format in ["table", "md"] {
        let now = output(&["report", "v1-run.json", "--format", format]);
        assert!(
            now.contains("mean ≤0.000–4.499 ms, deadlines ≤0.0–≥100.0 %"),
            "{format}: the bounds cut at a limit are marked: {now}"
        );
        // Its sheets (from this release: schema 1 stored none) declare the
        // overview and what x's user notices; x's ratio under burn is
        // within the intervals.
        assert!(
            now.contains("x: poor under burn (deadlines met % 47.0, 21×° later)\n"),
            "{format}: the overview comes first: {now}"
        );
        assert_eq!(
            as_the_previous_release(&now),
            expected(&format!("v1-run.report-{format}.txt")),
            "{format}"
        );
    }
}

#[test]
fn an_old_run_has_no_late_events_to_explain_and_says_so() {
    let explained = output(&["report", "v1-run.json", "--explain"]);
    assert!(
        explained.contains("no scenario of this run split its late events"),
        "{explained}"
    );
    assert!(
        explained.contains(": late events not split ---"),
        "{explained}"
    );
    let csv = output(&["report", "v1-run.json", "--format", "csv"]);
    assert!(!csv.contains("late_cause"), "{csv}");
}

/// `text` less what this release adds to an old run's table and Markdown:
/// the overview before the tables (from its title to the end of its
/// legend and its probes' rules, a blank line), the marks of interval bounds cut at a limit (`≤`, `≥`), the line
/// that explains them, and Markdown's lists of intervals under its tables.
fn as_the_previous_release(text: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let (mut in_overview, mut in_legend) = (false, false);
    for line in text.lines() {
        if line == "=== Overview ===" || line == "## Overview" {
            in_overview = true;
        }
        in_legend |= in_overview && line.trim_start_matches("- ").starts_with("°:");
        if in_overview && !(in_legend && line.is_empty()) {
            continue;
        }
        (in_overview, in_legend) = (false, false);
        let added = line.trim_start().starts_with("≤ or ≥ before a bound:")
            || (line.starts_with("- ") && line.contains("% CI "));
        let second_blank = line.is_empty() && lines.last().is_some_and(|l| l.is_empty());
        if !added && !second_blank {
            lines.push(line.replace(['≤', '≥'], ""));
        }
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n") + "\n"
}

/// The records of a CSV text, each as column name → value.
fn records(csv: &str) -> Vec<HashMap<String, String>> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|line| {
            let fields = line.split(',');
            header
                .iter()
                .map(|h| h.to_string())
                .zip(fields.map(String::from))
                .collect()
        })
        .collect()
}

#[test]
fn an_old_runs_csv_keeps_every_column_and_value() {
    let now = records(&output(&["report", "v1-run.json", "--format", "csv"]));
    let then = records(&expected("v1-run.report-csv.txt"));
    assert_eq!(now.len(), then.len());
    for (now, then) in now.iter().zip(&then) {
        for (column, value) in then {
            assert_eq!(now.get(column), Some(value), "{column} of {then:?}");
        }
    }
}

#[test]
fn old_runs_compare_as_their_release_compared_them() {
    let now = output(&["compare", "v1-run.json", "v1-nice19.json"]);
    assert_eq!(now, expected("v1.compare.txt"));
}

#[test]
fn old_runs_merge_into_a_current_run() {
    let dir = tempfile::tempdir().unwrap();
    let merged = dir.path().join("merged.json");
    let status = feelbench(&new_tag(), dir.path())
        .args(["merge", "--output"])
        .arg(&merged)
        .arg(data("v1-run.json"))
        .arg(data("v1-run.json"))
        .status()
        .unwrap();
    assert!(status.success());
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(run["schema"], "feelbench.run/2");
    let x_none = &run["scenarios"][0];
    let once: Value = serde_json::from_str(&expected("v1-run.json")).unwrap();
    let executed = once["scenarios"][0]["result"]["frames"]["executed"]
        .as_f64()
        .unwrap();
    assert_eq!(
        x_none["result"]["figures"]["frames_executed"].as_f64(),
        Some(2.0 * executed)
    );
    assert_eq!(x_none["repeats"].as_array().unwrap().len(), 2);
    assert!(run["probes"]["gaming"]["figures"].is_array());
    let table = output(&["report", merged.to_str().unwrap()]);
    assert!(table.contains("--- gaming: "), "{table}");
}
