//! Every run is added to the store when it ends: the store in the user's
//! data directory by default, `--store` elsewhere, none with `--no-store`
//! or `-c`; a store that cannot be used costs a one-line warning, not the
//! run. `store import` adds files written before.

use crate::common::{feelbench, new_tag, stderr, stdout};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;

/// `feelbench runs --format json` in `dir`'s default store (and any extra
/// arguments), parsed.
fn stored_runs(dir: &Path, extra: &[&str]) -> Vec<Value> {
    let output = feelbench(&new_tag(), dir)
        .args(["runs", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str::<Vec<Value>>(&stdout(&output)).unwrap()
}

/// A one-second run of x under no load in `dir`, with `extra` options.
fn short_run(dir: &Path, file: &str, extra: &[&str]) -> std::process::Output {
    feelbench(&new_tag(), dir)
        .args([
            "run", "--probe", "x", "--load", "none", "-t", "1", "-o", file,
        ])
        .args(extra)
        .output()
        .unwrap()
}

fn sha256_of(path: &Path) -> String {
    Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_run_is_stored_whole_in_the_data_directory_and_importing_it_again_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let output = short_run(dir.path(), "r.json", &["-m", "first"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("run stored in"),
        "{}",
        stderr(&output)
    );
    let runs = stored_runs(dir.path(), &[]);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["comment"], "first");
    assert_eq!(runs[0]["doc_sha256"], sha256_of(&dir.path().join("r.json")));
    assert!(dir.path().join("feelbench/store.sqlite").is_file());

    let again = feelbench(&new_tag(), dir.path())
        .args(["store", "import", "r.json"])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stdout(&again).starts_with("0 run(s) added"),
        "{}",
        stdout(&again)
    );
    assert_eq!(stored_runs(dir.path(), &["--comment", "first"]).len(), 1);
    assert!(stored_runs(dir.path(), &["--comment", "other"]).is_empty());
}

#[test]
fn no_store_and_console_only_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for extra in [&["--no-store"][..], &["-c"][..]] {
        let args: Vec<&str> = ["run", "--probe", "x", "--load", "none", "-t", "1"]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        let output = feelbench(&new_tag(), dir.path())
            .args(&args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
    }
    assert!(stored_runs(dir.path(), &[]).is_empty());
}

#[test]
fn a_store_that_cannot_be_used_warns_in_one_line_and_the_run_file_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("not-a-store"), vec![b'x'; 8192]).unwrap();
    let output = short_run(dir.path(), "r.json", &["--store", "not-a-store"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    let warnings: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("run not stored"))
        .collect();
    assert_eq!(warnings.len(), 1, "{said}");
    assert!(warnings[0].contains("not a store"), "{}", warnings[0]);
    crate::common::read_json(&dir.path().join("r.json"));
}

#[test]
fn importing_a_file_that_is_not_a_run_adds_the_others_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    let output = short_run(dir.path(), "runs/r.json", &["--no-store"]);
    assert!(output.status.success(), "{}", stderr(&output));
    std::fs::write(runs.join("broken.json"), "{").unwrap();
    let import = feelbench(&new_tag(), dir.path())
        .args(["store", "import", "runs"])
        .output()
        .unwrap();
    assert_eq!(import.status.code(), Some(2), "{}", stderr(&import));
    assert!(
        stderr(&import).contains("1 run(s) added"),
        "{}",
        stderr(&import)
    );
    assert!(
        stderr(&import).contains("broken.json"),
        "{}",
        stderr(&import)
    );
    assert_eq!(stored_runs(dir.path(), &[]).len(), 1);
}
