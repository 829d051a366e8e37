//! The disk loads on short real runs with small files: their work reaches
//! the device (writes in the device accounting, reads not from the page
//! cache, and the device's own counters show the reads), `compile` runs its three parts, a file too large for the disk is
//! refused before anything runs, and no work directory is left behind.

use crate::common::{feelbench, leftovers, new_tag, read_json, skip, stderr, LOOPS_PER_MS};
use nix::sys::statfs::{statfs, TMPFS_MAGIC};
use serde_json::Value;
use std::path::Path;
use std::process::Output;

/// `feelbench run --probe audio --load LOADS` for 1 s on files of `file_size`,
/// working in `dir` and writing `dir/run.json`.
fn disk_run(dir: &Path, loads: &str, file_size: &str) -> Output {
    feelbench(&new_tag(), dir)
        .args(["run", "--probe", "audio", "--load", loads])
        .args(["-t", "1", "--warmup", "0.2", "--file-size", file_size])
        .args(["-l", LOOPS_PER_MS, "-q", "-o", "run.json"])
        .output()
        .unwrap()
}

/// The load work of every scenario of a successful run in `dir`.
fn load_work(dir: &Path, loads: &str) -> Vec<Vec<Value>> {
    let output = disk_run(dir, loads, "64M");
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.join("run.json"));
    run["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["status"], "ok", "{s}");
            s["load_work"].as_array().unwrap().clone()
        })
        .collect()
}

fn f(value: &Value, key: &str) -> f64 {
    value[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {value}"))
}

#[test]
fn write_reaches_the_device_and_leaves_no_work_directory() {
    let dir = tempfile::tempdir().unwrap();
    let work = load_work(dir.path(), "write");
    let write = &work[0][0];
    assert_eq!(write["load"], "write");
    assert_eq!(write["unit"], "MB");
    assert!(f(write, "amount") > 0.0, "{write}");
    assert!(f(write, "device_write_mb_s") > 0.0, "{write}");
    let (files, _) = leftovers(dir.path());
    assert!(
        !files.iter().any(|name| name.starts_with("feelbench-")),
        "work directory left behind: {files:?}"
    );
}

#[test]
fn write_variants_do_their_work() {
    let dir = tempfile::tempdir().unwrap();
    let work = load_work(dir.path(), "smallwrite,largewrite");
    let names: Vec<&Value> = work.iter().map(|w| &w[0]["load"]).collect();
    assert_eq!(names, ["smallwrite", "largewrite"]);
    for w in &work {
        assert!(f(&w[0], "amount") > 0.0, "{}", w[0]);
    }
}

#[test]
fn read_comes_from_the_device_not_the_page_cache() {
    let dir = tempfile::tempdir().unwrap();
    if statfs(dir.path()).unwrap().filesystem_type() == TMPFS_MAGIC {
        skip(&format!(
            "{} is on tmpfs, which has no device to read from",
            dir.path().display()
        ));
        return;
    }
    let work = load_work(dir.path(), "read");
    let read = &work[0][0];
    assert_eq!(read["unit"], "MB");
    let (device, rate) = (f(read, "device_read_mb_s"), f(read, "rate_per_s"));
    assert!(device > 0.0 && device >= rate / 2.0, "{read}");
    // The work directory's device itself read while the probe measured.
    let run = read_json(&dir.path().join("run.json"));
    let own = &run["scenarios"][0]["telemetry"]["figures"]["device"];
    assert!(f(own, "read_mb_s") > 0.0, "{own}");
    assert!((0.0..=100.0).contains(&f(own, "busy_pct")), "{own}");
}

#[test]
fn compile_runs_burn_write_and_read_together() {
    let dir = tempfile::tempdir().unwrap();
    let work = load_work(dir.path(), "compile");
    let names: Vec<&Value> = work[0].iter().map(|w| &w["load"]).collect();
    assert_eq!(names, ["burn", "write", "read"]);
    for w in &work[0] {
        assert!(f(w, "amount") > 0.0, "{w}");
    }
}

#[test]
fn a_file_size_beyond_the_free_space_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let output = disk_run(dir.path(), "write", "100T");
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.contains("free") && message.contains("--file-size"),
        "{message}"
    );
}
