//! Method versions end to end: the build names its commit, and runs that
//! differ only in a method version (one real short run, its copy as
//! feelbench 0.1.0 wrote it, without versions, and a copy with x's method
//! raised) are one series cut twice by `history` and `regressions`, listed
//! apart by `compare`, and refused by `merge`.

use crate::common::{feelbench, new_tag, skip, stderr, stdout, LOOPS_PER_MS};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Built in a git checkout, feelbench names the commit checked out (unless
/// the build was given `FEELBENCH_COMMIT`, which cargo also gives the tests,
/// so they cannot tell).
#[test]
fn the_build_names_the_commit_checked_out() {
    let head = std::process::Command::new("git")
        .arg("-C")
        .arg(env!("CARGO_MANIFEST_DIR"))
        .args(["rev-parse", "HEAD"])
        .output();
    match head {
        Ok(out) if out.status.success() => {
            assert_eq!(env!("FEELBENCH_COMMIT"), stdout(&out).trim());
        }
        _ => skip("not built from a git checkout"),
    }
}

/// `feelbench ARGS` in `dir`, with its own store there.
fn feelbench_in(dir: &Path, args: &[&str]) -> Output {
    feelbench(&new_tag(), dir)
        .args(args)
        .arg("--store")
        .arg(dir.join("store.sqlite"))
        .output()
        .unwrap()
}

/// `feelbench ARGS` in `dir`, without a store.
fn plain(dir: &Path, args: &[&str]) -> Output {
    feelbench(&new_tag(), dir).args(args).output().unwrap()
}

/// A 1 s run of x under no load, written to `dir/new.json` and not stored.
fn measured(dir: &Path) -> Value {
    let file = dir.join("new.json");
    let out = feelbench(&new_tag(), dir)
        .args(["run", "--probe", "x", "--load", "none", "-t", "1"])
        .args(["--noise-check", "0", "-l", LOOPS_PER_MS, "-q", "--no-store"])
        .arg("-o")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// `run` as run `id` started at `started`, written to `dir/NAME.json`.
fn copy(dir: &Path, run: &Value, name: &str, id: &str, started: &str) -> PathBuf {
    let mut run = run.clone();
    run["run"]["id"] = id.into();
    run["run"]["started"] = started.into();
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string(&run).unwrap()).unwrap();
    path
}

#[test]
fn a_change_of_method_version_cuts_the_series_and_is_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let mut new = measured(dir);
    let x = new["methods"]["probes"]["x"].as_u64();
    assert!(x >= Some(1), "{}", new["methods"]);
    // Versions 1 and 2 of x, whatever this build's is.
    new["methods"]["probes"]["x"] = 1.into();
    let mut old = new.clone();
    old.as_object_mut().unwrap().remove("methods");
    let mut raised = new.clone();
    raised["methods"]["probes"]["x"] = 2.into();
    let files = [
        copy(
            dir,
            &old,
            "old1",
            "20261101-000000-1",
            "2026-11-01T00:00:00Z",
        ),
        copy(
            dir,
            &old,
            "old2",
            "20261102-000000-1",
            "2026-11-02T00:00:00Z",
        ),
        copy(
            dir,
            &new,
            "new1",
            "20261103-000000-1",
            "2026-11-03T00:00:00Z",
        ),
        copy(
            dir,
            &new,
            "new2",
            "20261104-000000-1",
            "2026-11-04T00:00:00Z",
        ),
        copy(
            dir,
            &raised,
            "raised",
            "20261105-000000-1",
            "2026-11-05T00:00:00Z",
        ),
    ];
    let names: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    let out = feelbench_in(dir, &[&["store", "import"][..], &names].concat());
    assert!(out.status.success(), "{}", stderr(&out));

    let out = feelbench_in(
        dir,
        &[
            "history", "--probe", "x", "--load", "none", "--figure", "mean",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let history = stdout(&out);
    assert_eq!(history.matches("\nseries ").count(), 1, "{history}");
    assert!(
        history.contains("5 run(s), 3 sets of method versions)"),
        "{history}"
    );
    for run in ["20261103-000000-1@", "20261105-000000-1@"] {
        assert!(
            history.contains(&format!("new method versions from run {run}")),
            "{history}"
        );
    }

    let out = feelbench_in(dir, &["regressions", "--probe", "x", "--figure", "mean"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let regressions = stdout(&out);
    assert!(
        regressions.contains(
            "in 1 series of figures (3 part(s) once annotations and 2 change(s) of method version cut them)"
        ),
        "{regressions}"
    );
    let out = feelbench_in(
        dir,
        &[
            "regressions",
            "--probe",
            "x",
            "--figure",
            "mean",
            "--any-series",
        ],
    );
    assert!(
        stdout(&out).contains(" and 2 change(s) of method version cut them"),
        "{}",
        stdout(&out)
    );

    let out = plain(dir, &["compare", names[0], names[4]]);
    assert!(out.status.success(), "{}", stderr(&out));
    let compared = stdout(&out);
    assert!(
        compared.contains("differs: method of probe x 0 | 2"),
        "{compared}"
    );
    assert!(
        compared.contains("differs: method of load none 0 | 1"),
        "{compared}"
    );

    let out = plain(dir, &["merge", names[2], names[4], "-o", "merged.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "method version differs (probe x version 1 in the first, probe x version 2 in the second)"
        ),
        "{}",
        stderr(&out)
    );
    let out = plain(dir, &["merge", names[2], names[3], "-o", "merged.json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("merged.json")).unwrap()).unwrap();
    assert_eq!(merged["methods"], new["methods"]);
}
