//! The process loads (`hack`, `spawn`, `ctxmem8`, `ctxmem2`) on short real
//! runs: each does work in its own unit, and nothing of theirs outlives the
//! run, neither the processes they fork nor ctxmem's SysV message queue,
//! after a normal end, a SIGINT, or a helper that died.

use crate::common::{
    assert_load_did_work, feelbench, new_tag, read_json, require_root, stderr, tagged_processes,
    wait_for_named, watch_until_exit, Watch, LOOPS_PER_MS,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Stdio};

/// The ctxmem rings walk 120 % of their memory: a small cgroup with swap
/// behind it (root only) gives them real pressure safely.
const RING_MEMORY: [&str; 4] = ["--mem-limit", "256M", "--swap", "512M"];

/// Starts `feelbench run` measuring audio under `loads` for `seconds`, with
/// the `extra` options.
fn start(tag: &str, dir: &Path, loads: &str, seconds: &str, extra: &[&str]) -> Child {
    feelbench(tag, dir)
        .args(["run", "--probe", "audio", "--load", loads, "-t", seconds])
        .args(["--warmup", "0.2", "-l", LOOPS_PER_MS, "-q"])
        .args(extra)
        .arg("-o")
        .arg(dir.join("run.json"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// SysV message queues (their ids) whose key says feelbench made them in
/// one of `pids`: the key is 0xFB in the top byte, the maker's pid below.
fn queues_made_by(pids: &BTreeSet<u32>) -> BTreeSet<i32> {
    let text = std::fs::read_to_string("/proc/sysvipc/msg").unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let key = fields.next()?.parse::<i32>().ok()? as u32;
            let id = fields.next()?.parse().ok()?;
            (key >> 24 == 0xFB && pids.contains(&(key & 0xFF_FFFF))).then_some(id)
        })
        .collect()
}

/// What was seen of a run's processes while it ran.
#[derive(Default)]
struct Seen {
    pids: BTreeSet<u32>,
    queues: BTreeSet<i32>,
}

impl Watch for Seen {
    fn look(&mut self, tag: &str) {
        self.pids.extend(tagged_processes(tag));
        self.queues.extend(queues_made_by(&self.pids));
    }
}

/// Asserts nothing of the run is left: no process, no message queue.
fn assert_nothing_left(tag: &str, seen: &Seen) {
    assert_eq!(tagged_processes(tag), Vec::<u32>::new(), "processes left");
    assert_eq!(queues_made_by(&seen.pids), BTreeSet::new(), "queues left");
}

/// Runs `loads` (a list) for 1 s with the `extra` options and checks each
/// scenario against `expected` (load, unit, processes; 0 processes: one per
/// CPU), and that nothing is left.
fn each_works_in_its_unit(loads: &str, extra: &[&str], expected: &[(&str, &str, u64)]) -> Seen {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(&tag, dir.path(), loads, "1", extra);
    let mut seen = Seen::default();
    let code = watch_until_exit(&mut child, &tag, &mut seen);
    let output = child.wait_with_output().unwrap();
    assert_eq!(code, Some(0), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    let cpus = run["system"]["cpus"].as_u64().unwrap();
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), expected.len());
    for (scenario, &(load, unit, processes)) in scenarios.iter().zip(expected) {
        let processes = if processes == 0 { cpus } else { processes };
        assert_load_did_work(scenario, load, unit, processes);
    }
    assert_nothing_left(&tag, &seen);
    seen
}

#[test]
fn hack_and_spawn_work_in_their_units_as_any_user() {
    each_works_in_its_unit(
        "hack,spawn",
        &[],
        &[("hack", "messages", 1), ("spawn", "spawns", 0)],
    );
}

#[test]
fn the_rings_work_in_their_unit_and_leave_no_queue() {
    if !require_root("--mem-limit and --swap") {
        return;
    }
    let seen = each_works_in_its_unit(
        "ctxmem8,ctxmem2",
        &RING_MEMORY,
        &[("ctxmem8", "trips", 1), ("ctxmem2", "trips", 1)],
    );
    assert!(
        seen.queues.len() >= 2,
        "each ctxmem scenario ran its ring over a queue: {:?}",
        seen.queues
    );
}

#[test]
fn sigint_under_hack_and_ctxmem_leaves_no_process_and_no_queue() {
    if !require_root("--mem-limit and --swap") {
        return;
    }
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(&tag, dir.path(), "hack+ctxmem8", "30", &RING_MEMORY);
    let mut seen = Seen::default();
    wait_for_named(&tag, "fb-hack-send", &mut seen);
    wait_for_named(&tag, "fb-ctxmem", &mut seen);
    seen.look(&tag);
    assert_eq!(
        seen.queues.len(),
        1,
        "the ring's queue exists while it runs"
    );
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    assert_eq!(watch_until_exit(&mut child, &tag, &mut seen), Some(130));
    assert_nothing_left(&tag, &seen);
}

#[test]
fn a_helper_that_dies_fails_its_load_with_the_reason() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(&tag, dir.path(), "hack", "30", &[]);
    let mut seen = Seen::default();
    let receivers = wait_for_named(&tag, "fb-hack-recv", &mut seen);
    kill(Pid::from_raw(receivers[0] as i32), Signal::SIGKILL).unwrap();
    assert_eq!(watch_until_exit(&mut child, &tag, &mut seen), Some(1));
    let error = read_json(&dir.path().join("run.json"))["scenarios"][0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        error.contains("load hack") && error.contains("helper process ended (killed by SIGKILL)"),
        "{error}"
    );
    assert_nothing_left(&tag, &seen);
}
