//! `feelbench compare` on real runs and on files that are not runs. The
//! end-to-end test checks the comparison's structure, never which way a
//! figure moved: how much loads at nice 19 help the probe is measured by
//! `bench/significance.sh -p nice`.

use crate::common::{feelbench, new_tag, read_json, stderr, stdout, LOOPS_PER_MS};
use crate::regressions::{run_id, write_copy, NICE0, NICE19};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A short run of the x probe under burn with the loads at `nice`.
fn run_x_under_burn(dir: &Path, nice: &str) -> PathBuf {
    let file = dir.join(format!("nice{nice}.json"));
    let output = feelbench(&new_tag(), dir)
        .args([
            "run",
            "--probe",
            "x",
            "--load",
            "burn",
            "-t",
            "1",
            "--noise-check",
            "0",
        ])
        .args(["--load-nice", nice, "-m", &format!("nice {nice}")])
        .args(["-l", LOOPS_PER_MS, "-q", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    file
}

fn compare(dir: &Path, args: &[&str]) -> std::process::Output {
    feelbench(&new_tag(), dir)
        .arg("compare")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn runs_that_differ_in_load_nice_compare_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let nice0 = run_x_under_burn(dir.path(), "0");
    // Nice 10, not 19: beside the other tests a nice-19 burn worker was
    // starved for 5 sub-windows in a row once and its load failed.
    let nice10 = run_x_under_burn(dir.path(), "10");
    let run = read_json(&nice0);
    assert!(
        run.pointer("/scenarios/0/intervals/method").is_some(),
        "a single run has batch-means intervals: {run}"
    );
    let files = [nice0.to_str().unwrap(), nice10.to_str().unwrap()];
    let output = compare(dir.path(), &[files[0], files[1], "--format", "json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let comparison: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let mean = comparison["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["figure"] == "mean")
        .expect("a mean latency row");
    assert!(mean["cells"][1]["change"].as_f64().is_some(), "{mean}");
    let verdicts = ["better", "worse", "no_difference", "below_resolution"];
    let verdict = mean["cells"][1]["verdict"].as_str().unwrap_or_default();
    assert!(verdicts.contains(&verdict), "{mean}");
    assert_eq!(comparison["differences"][0]["what"], "load nice");
    // x's frames under burn are late in both runs, so the split compares.
    let late = comparison["late"].as_array().expect("late rows");
    assert!(
        late.iter()
            .all(|r| r["cells"].as_array().unwrap().len() == 2),
        "{comparison}"
    );
    assert!(
        late.iter().any(|r| r["cause"] == "run_queue"),
        "{comparison}"
    );

    let table = compare(dir.path(), &[files[0], files[1]]);
    assert!(table.status.success());
    let text = stdout(&table);
    assert!(text.contains("baseline nice 0"), "{text}");
    assert!(text.contains("differs: load nice 0 | 10"), "{text}");
    for format in ["md", "csv"] {
        let out = compare(dir.path(), &[files[0], files[1], "--format", format]);
        assert!(out.status.success() && !out.stdout.is_empty(), "{format}");
    }
    let rows = compare(
        dir.path(),
        &[files[0], files[1], "--layout", "rows", "--name", "a,b"],
    );
    assert!(stdout(&rows).contains("--- x under burn ---"));
    let md_rows = compare(
        dir.path(),
        &[files[0], files[1], "--layout", "rows", "--format", "md"],
    );
    assert!(stdout(&md_rows).contains("## x under burn"));

    let same = compare(dir.path(), &[files[0], files[0], "--format", "json"]);
    let same: Value = serde_json::from_str(&stdout(&same)).unwrap();
    for row in same["rows"].as_array().unwrap() {
        // A relative change from 0 does not exist; every other is there, and 0.
        let from_zero = row["change_unit"] == "percent" && row["cells"][0]["value"] == 0.0;
        let expected = (!from_zero).then_some(0.0);
        assert_eq!(row["cells"][1]["change"].as_f64(), expected, "{row}");
    }
}

/// Writes `text` to `DIR/name` and returns its path as text.
fn file_with(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn files_that_are_not_runs_are_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases = [
        (file_with(d, "garbage.json", "{ not json"), "is not JSON"),
        (
            file_with(d, "foreign.json", r#"{"hello": 1}"#),
            "is not a feelbench run",
        ),
        (
            file_with(d, "new.json", r#"{"schema": "feelbench.run/9"}"#),
            "newer than this feelbench reads",
        ),
        (
            file_with(
                d,
                "damaged.json",
                r#"{"schema": "feelbench.run/1", "scenarios": 3}"#,
            ),
            "damaged feelbench run",
        ),
    ];
    for (file, message) in &cases {
        let output = compare(d, &[file, file]);
        assert_eq!(output.status.code(), Some(2), "{file}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(message),
            "{file}: {}",
            stderr(&output)
        );
        assert!(!stderr(&output).contains("panicked"));
    }
}

#[test]
fn bad_options_are_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = file_with(d, "a.json", "{}");
    for (args, message) in [
        (vec![a.as_str(), a.as_str(), "--alpha", "2"], "--alpha"),
        (
            vec![a.as_str(), a.as_str(), "--figure", "p42"],
            "unknown figure",
        ),
        (
            vec![a.as_str(), a.as_str(), "--name", "one"],
            "--name gives 1",
        ),
        (vec![a.as_str()], "required"),
        (
            vec![
                a.as_str(),
                a.as_str(),
                "--layout",
                "rows",
                "--format",
                "html",
            ],
            "--layout rows is a shape of the table and md formats",
        ),
    ] {
        let output = compare(d, &args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(message),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

/// A store in `dir` of six copies of the nice-0 run of tests/data (runs
/// 1–6, one series), each figure of copy `i` scaled by `factors[i]`: a
/// history whose run-to-run spread is as wide as the factors make it.
pub fn store_with_spread(dir: &Path, factors: [f64; 6]) -> PathBuf {
    let runs = dir.join("history");
    std::fs::create_dir_all(&runs).unwrap();
    let nice0 = read_json(Path::new(NICE0));
    for i in 1..=6 {
        write_copy(&runs, i, NICE0, &nice0);
    }
    let store = dir.join("store.sqlite");
    let _ = std::fs::remove_file(&store);
    let output = feelbench(&new_tag(), dir)
        .args(["store", "import", runs.to_str().unwrap(), "--store"])
        .arg(&store)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let db = rusqlite::Connection::open(&store).unwrap();
    for (i, factor) in factors.iter().enumerate() {
        db.execute(
            "UPDATE figure SET value = value * ?1 WHERE scenario_id IN \
             (SELECT s.id FROM scenario s JOIN run r ON r.id = s.run_id WHERE r.run_id = ?2)",
            rusqlite::params![factor, run_id(i + 1)],
        )
        .unwrap();
    }
    store
}

/// `compare BASE NEW --format json --fail-on worse ARGS --store STORE`:
/// its exit code and the cell of gaming under burn's mean.
fn gate(dir: &Path, store: &Path, files: [&Path; 2], args: &[&str]) -> (Option<i32>, Value) {
    let output = feelbench(&new_tag(), dir)
        .arg("compare")
        .args(files)
        .args(["--format", "json", "--fail-on", "worse", "--store"])
        .arg(store)
        .args(args)
        .output()
        .unwrap();
    let c: Value = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {}", stderr(&output)));
    let row = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["probe"] == "gaming" && r["load"] == "burn" && r["figure"] == "mean")
        .expect("gaming under burn's mean")
        .clone();
    (output.status.code(), row["cells"][1].clone())
}

#[test]
fn verdicts_across_runs_are_judged_against_the_stores_spread_of_the_series() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The baseline: nice 19's figures under nice 0's settings (one series
    // with the history); the new run: nice 0's, gaming under burn 95 times
    // later (0.319 ms → 30.369 ms).
    let nice0 = read_json(Path::new(NICE0));
    let compared = d.join("compared");
    std::fs::create_dir(&compared).unwrap();
    write_copy(&compared, 11, NICE19, &nice0);
    write_copy(&compared, 12, NICE0, &nice0);
    let (base, new) = (compared.join("run-11.json"), compared.join("run-12.json"));

    // Runs of the series that agree within 2 %: the change is called, and
    // fails the gate, against the store's spread.
    let store = store_with_spread(d, [1.0, 1.02, 0.98, 1.0, 1.02, 0.98]);
    let (code, cell) = gate(d, &store, [&base, &new], &[]);
    assert_eq!(code, Some(3), "{cell}");
    assert_eq!(
        (&cell["verdict"], &cell["spread"]),
        (&"worse".into(), &"history".into())
    );

    // Runs of the series that move 100-fold from one to the next: the same
    // difference is within that, and nothing fails.
    let store = store_with_spread(d, [1.0, 100.0, 0.01, 50.0, 0.02, 100.0]);
    let (code, cell) = gate(d, &store, [&base, &new], &[]);
    assert_eq!(code, Some(0), "{cell}");
    assert_eq!(
        (&cell["verdict"], &cell["spread"]),
        (&"no_difference".into(), &"history".into())
    );

    // On the runs' own within-run spread the change is marked, but as
    // within-run only, which never fails the gate.
    let (code, cell) = gate(d, &store, [&base, &new], &["--no-history"]);
    assert_eq!(code, Some(0), "{cell}");
    assert_eq!(
        (&cell["verdict"], &cell["spread"]),
        (&"worse".into(), &"within_run".into())
    );
    let table = feelbench(&new_tag(), d)
        .arg("compare")
        .args([&base, &new])
        .arg("--store")
        .arg(&store)
        .output()
        .unwrap();
    let text = stdout(&table);
    assert!(text.contains("n.s. [h]"), "{text}");
    assert!(
        text.contains("[h]: judged against the run-to-run spread"),
        "{text}"
    );
}
