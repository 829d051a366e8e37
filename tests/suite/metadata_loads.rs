//! resp1's and contest's CPU and file-system loads (`cpuload`, `list`,
//! `ctar`, `xtar`, `dbench`) on short real runs: each does work in its own
//! unit with the processes it claims, leaves neither process nor work
//! directory behind, and is refused before anything runs when the work
//! directory has no room for its files.

use crate::common::{
    assert_load_did_work, feelbench, leftovers, new_tag, read_json, require_root, stderr,
    wait_for_no_tagged, LOOPS_PER_MS,
};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const LOADS: &str = "cpuload,list,ctar,xtar,dbench";

/// `feelbench run --probe audio --load LOADS` for 1 s each, working in
/// `workdir`, writing `dir/run.json`.
fn run_in(tag: &str, dir: &Path, workdir: &Path) -> Output {
    feelbench(tag, dir)
        .args(["run", "--probe", "audio", "--load", LOADS])
        .args(["-t", "1", "--warmup", "0.2", "-l", LOOPS_PER_MS, "-q"])
        .arg("--workdir")
        .arg(workdir)
        .arg("-o")
        .arg(dir.join("run.json"))
        .output()
        .unwrap()
}

/// A work directory on a tmpfs (/dev/shm) where there is one. The loads'
/// trees take seconds to make on a disk file system that has just freed
/// many inodes (see `load::tree`), which the suite's other tests keep
/// doing: on the 2-CPU VM this test took 16.5 s alone in /tmp and its run
/// 7.8 s on /dev/shm. What these loads do to a disk is `disk_loads`' test.
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("feelbench-test-")
        .tempdir_in("/dev/shm")
        .unwrap_or_else(|_| tempfile::tempdir().unwrap())
}

#[test]
fn each_load_works_in_its_unit_and_leaves_nothing_behind() {
    let tag = new_tag();
    let dir = scratch();
    let output = run_in(&tag, dir.path(), dir.path());
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    let cpus = run["system"]["cpus"].as_u64().unwrap();
    let expected = [
        ("cpuload", "Mflop", cpus + 1),
        ("list", "entries", 1),
        ("ctar", "files", 1),
        ("xtar", "files", 1),
        ("dbench", "ops", 4 * cpus),
    ];
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), expected.len());
    for (scenario, (load, unit, processes)) in scenarios.iter().zip(expected) {
        assert_load_did_work(scenario, load, unit, processes);
    }
    assert_eq!(
        wait_for_no_tagged(&tag, Duration::from_secs(5)),
        Vec::<u32>::new(),
        "processes left"
    );
    let (files, records) = leftovers(dir.path());
    assert_eq!(files, ["run.json"], "work directory left behind");
    assert!(records.is_empty(), "state records left: {records:?}");
}

#[test]
fn a_work_directory_without_room_for_their_files_is_refused() {
    if !require_root("mounting a small tmpfs") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8m", "feelbench-test"])
        .arg(&small)
        .status()
        .unwrap();
    assert!(mounted.success(), "cannot mount a tmpfs");
    let output = run_in(&new_tag(), dir.path(), &small);
    let unmounted = Command::new("umount").arg(&small).status().unwrap();
    assert!(unmounted.success(), "cannot unmount {}", small.display());
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("the disk loads need") && message.contains("free"),
        "{message}"
    );
}
