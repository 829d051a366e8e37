//! `feelbench history` over real short runs stored into a test's own
//! store, and `compare` reading runs from a store and gating with
//! `--fail-on worse`. Nothing here depends on which way a figure moved:
//! the exit-3 test compares fixed run documents of tests/data.

use crate::common::{feelbench, new_tag, stderr, stdout, LOOPS_PER_MS};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// `feelbench ARGS --store STORE` in `dir`.
fn with_store(dir: &Path, store: &Path, args: &[&str]) -> Output {
    feelbench(&new_tag(), dir)
        .args(args)
        .arg("--store")
        .arg(store)
        .output()
        .unwrap()
}

/// A 1 s run of x under no load (no load processes: a busy machine cannot starve one out of the window) with the loads at `nice`, stored in `store`.
fn stored_run(dir: &Path, store: &Path, nice: &str) {
    let comment = format!("nice {nice}");
    let output = with_store(
        dir,
        store,
        &[
            "run",
            "--probe",
            "x",
            "--load",
            "none",
            "-t",
            "1",
            "--noise-check",
            "0",
            "--load-nice",
            nice,
            "-m",
            &comment,
            "-l",
            LOOPS_PER_MS,
            "-q",
            "-o",
            &format!("{}/run-{}.json", dir.display(), new_tag()),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
}

/// The store's runs as `runs --format json` lists them.
fn listed(dir: &Path, store: &Path) -> Vec<Value> {
    let output = with_store(dir, store, &["runs", "--format", "json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str::<Value>(&stdout(&output))
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn json(output: &Output) -> Value {
    assert!(output.status.success(), "{}", stderr(output));
    serde_json::from_str(&stdout(output)).unwrap()
}

#[test]
fn history_of_stored_runs_keeps_series_apart_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    for nice in ["0", "0", "19"] {
        stored_run(dir.path(), &store, nice);
    }
    let runs = listed(dir.path(), &store);
    assert_eq!(runs.len(), 3);
    let nice0 = runs.iter().find(|r| r["comment"] == "nice 0").unwrap();
    let series = nice0["series"].as_str().unwrap();
    let history = |extra: &[&str]| {
        let mut args = vec![
            "history", "--probe", "x", "--load", "none", "--figure", "p99",
        ];
        args.extend_from_slice(extra);
        with_store(dir.path(), &store, &args)
    };

    // Two series (nice 0 and nice 19 are other settings): named, not mixed.
    let mixed = history(&[]);
    assert_eq!(mixed.status.code(), Some(2), "{}", stderr(&mixed));
    let said = stderr(&mixed);
    // Named without their method versions, which they share.
    let base = series.split('-').next().unwrap();
    assert!(said.contains("2 series") && said.contains(base), "{said}");
    assert_eq!(said.trim().lines().count(), 1, "{said}");

    let one = json(&history(&["--series", series, "--format", "json"]));
    assert_eq!(one["points"].as_array().unwrap().len(), 2, "{one}");
    assert_eq!(one["label"], "latency p99 (ms)");
    assert_eq!(one["series"][0]["runs"], 2);
    for point in one["points"].as_array().unwrap() {
        assert_eq!(point["series"], series);
        assert!(point["value"].as_f64().unwrap() > 0.0, "{point}");
    }
    let all = json(&history(&[
        "--any-series",
        "--by",
        "kernel",
        "--format",
        "json",
    ]));
    assert_eq!(all["points"].as_array().unwrap().len(), 3, "{all}");
    assert_eq!(all["kernels"][0]["runs"], 3, "{all}");
    let last = json(&history(&[
        "--series", series, "--last", "1", "--format", "json",
    ]));
    assert_eq!(last["points"].as_array().unwrap().len(), 1, "{last}");

    let first = nice0["run_id"].as_str().unwrap();
    let annotated = with_store(
        dir.path(),
        &store,
        &["store", "annotate", first, "BIOS update"],
    );
    assert!(annotated.status.success(), "{}", stderr(&annotated));
    let table = history(&["--series", series]);
    let table = stdout(&table);
    assert!(
        table.starts_with("x under none: latency p99 (ms), lower is better\n"),
        "{table}"
    );
    assert!(
        table.contains(first) && table.contains("BIOS update"),
        "{table}"
    );
    let csv = stdout(&history(&["--series", series, "--format", "csv"]));
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.starts_with("run,run_id,started,kernel,"), "{csv}");
    let svg = stdout(&history(&["--series", series, "--format", "svg"]));
    assert!(
        svg.starts_with("<svg") && svg.contains("BIOS update"),
        "{svg}"
    );
    let page = dir.path().join("history.html");
    let written = history(&[
        "--series",
        series,
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(written.status.success(), "{}", stderr(&written));
    let page = std::fs::read_to_string(page).unwrap();
    assert!(
        page.starts_with("<!DOCTYPE html>") && page.contains("<svg"),
        "{page}"
    );
    assert!(!page.contains("<script src") && !page.contains("<link"));

    let unknown = with_store(
        dir.path(),
        &store,
        &[
            "history", "--probe", "x", "--load", "none", "--figure", "p98",
        ],
    );
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("they have: ") && stderr(&unknown).contains("p99"));

    // compare by id and by query: the two nice-0 runs merge into one column.
    let compared = json(&with_store(
        dir.path(),
        &store,
        &["compare", "comment=nice 0", first, "--format", "json"],
    ));
    let columns = compared["runs"].as_array().unwrap();
    assert_eq!(columns[0]["name"], "comment=nice 0");
    assert_eq!(columns[0]["file"], "store:comment=nice 0 (2 run(s))");
    assert_eq!(columns[0]["repeats"], 2, "{compared}");
    assert!(columns[1]["file"].as_str().unwrap().contains(first));
    let itself = with_store(
        dir.path(),
        &store,
        &["compare", first, first, "--fail-on", "worse"],
    );
    assert_eq!(itself.status.code(), Some(0), "{}", stderr(&itself));
}

/// The run documents of tests/data: the same machine with its loads at
/// nice 0 and at nice 19, where gaming under burn is far worse at nice 0.
const NICE0: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v1-run.json");
const NICE19: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v1-nice19.json");

#[test]
fn fail_on_worse_exits_3_with_the_report_and_0_when_nothing_got_worse() {
    let dir = tempfile::tempdir().unwrap();
    // The gate judges against a spread between runs: the store's runs of
    // the series, which agree within 2 % here.
    let store = crate::compare::store_with_spread(dir.path(), [1.0, 1.02, 0.98, 1.0, 1.02, 0.98]);
    let store = store.to_str().unwrap();
    let compare = |args: &[&str]| {
        feelbench(&new_tag(), dir.path())
            .arg("compare")
            .args(args)
            .args(["--store", store])
            .output()
            .unwrap()
    };
    let worse = compare(&[NICE19, NICE0, "--fail-on", "worse", "--format", "json"]);
    assert_eq!(worse.status.code(), Some(3), "{}", stderr(&worse));
    let report: Value = serde_json::from_str(&stdout(&worse)).unwrap();
    assert_eq!(report["runs"].as_array().unwrap().len(), 2);
    let said = stderr(&worse);
    assert!(
        said.contains("worse: gaming/burn mean: 0.319 ms → 30.369 ms"),
        "{said}"
    );
    let unchanged = compare(&[NICE0, NICE0, "--fail-on", "worse"]);
    assert_eq!(unchanged.status.code(), Some(0), "{}", stderr(&unchanged));
    // The probe's latency got better (the loads' work, tested against the
    // store's spread too, got worse: they run at nice 19).
    let better = compare(&[NICE0, NICE19, "--fail-on", "worse", "--figure", "mean"]);
    assert_eq!(better.status.code(), Some(0), "{}", stderr(&better));
    let without = compare(&[NICE19, NICE0]);
    assert_eq!(without.status.code(), Some(0), "{}", stderr(&without));
}

#[test]
fn compare_reads_the_store_and_says_what_it_cannot_use() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let imported = with_store(dir.path(), &store, &["store", "import", NICE0, NICE19]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    let compare = |args: &[&str]| {
        let mut all = vec!["compare"];
        all.extend_from_slice(args);
        with_store(dir.path(), &store, &all)
    };
    // The store holds no other run of their series: the verdicts are on the
    // spread within each run alone, marked so, and cannot fail the gate.
    let by_id = compare(&["20261123-114804", "20261123-114752", "--fail-on", "worse"]);
    assert_eq!(by_id.status.code(), Some(0), "{}", stderr(&by_id));
    assert!(stdout(&by_id).contains("store:20261123-114752-14877@vm"));
    assert!(stdout(&by_id).contains("worse [w]"), "{}", stdout(&by_id));
    for (args, says) in [
        (vec!["kernel=6.18", NICE0], "do not merge"),
        (vec!["kernel=2.6", NICE0], "matches no finished run"),
        (vec!["colour=red", NICE0], "unknown key \"colour\""),
        (vec!["20261123", NICE0], "names 2 runs"),
        (vec!["nope", NICE0], "no run nope"),
    ] {
        let output = compare(&args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            stderr(&output)
        );
        let said = stderr(&output);
        assert!(
            said.contains(says) && said.trim().lines().count() == 1,
            "{said}"
        );
    }
}
