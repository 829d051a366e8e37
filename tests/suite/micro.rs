//! The micro probes end to end on 1 s scenarios: every operation of
//! `micro` has samples and ordered figures, `micro:pipe` runs alone, the
//! table is LMbench's (one median column per operation), LMbench's mode
//! (`--micro-mode lmbench`) gives lat_ctx's switches and a fault per page
//! and is recorded, the spawner that forks is small, and nothing is left
//! behind — no partner process, no file — after a normal end or a SIGKILL
//! of the orchestrator. No test asserts a latency.

use crate::common::{
    feelbench, leftovers, new_tag, read_json, require_root, stderr, stdout, tagged_processes,
    wait_for_no_tagged, wait_until, LOOPS_PER_MS,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// The operations of `micro`, in LMbench's order.
const OPS: [&str; 18] = [
    "fork",
    "exec",
    "sh",
    "ctx0",
    "ctx64",
    "pipe",
    "unix",
    "udp",
    "tcp",
    "connect",
    "create0",
    "delete0",
    "create1k",
    "delete1k",
    "create10k",
    "delete10k",
    "mmap",
    "fault",
];

/// The operations whose figures `--micro-mode lmbench` names otherwise,
/// their timed unit not being LMbench's (README, "micro"), and those names.
const RENAMED_IN_LMBENCH_MODE: [(&str, &str); 5] = [
    ("connect", "handshake"),
    ("create0", "newfile0"),
    ("create1k", "newfile1k"),
    ("create10k", "newfile10k"),
    ("fault", "minflt"),
];

/// What `op`'s figures are called in `mode`.
fn figure_name<'a>(op: &'a str, mode: &str) -> &'a str {
    RENAMED_IN_LMBENCH_MODE
        .iter()
        .find(|(renamed, _)| mode == "lmbench" && *renamed == op)
        .map_or(op, |(_, name)| name)
}

/// `feelbench run --probe PROBES --load none -t 1 --micro-mode MODE`,
/// writing `DIR/run.json`; checks the mode is recorded, every operation of
/// `micro` is sane, none was left out and no process is left.
fn micro_run(tag: &str, dir: &Path, probes: &str, mode: &str) -> (Output, Value) {
    let file = dir.join("run.json");
    let output = feelbench(tag, dir)
        .args(["run", "--probe", probes, "--load", "none", "-t", "1"])
        .args(["--micro-mode", mode])
        .args(["--warmup", "0.2", "-l", LOOPS_PER_MS, "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stderr(&output).contains("left out"), "{}", stderr(&output));
    assert_eq!(wait_for_no_tagged(tag, Duration::from_secs(2)), [0_u32; 0]);
    let run = read_json(&file);
    assert_eq!(run["settings"]["micro"], mode);
    let micro = scenario(&run, "micro");
    for op in OPS {
        assert_sane(micro, op, figure_name(op, mode));
    }
    (output, run)
}

fn scenario<'a>(run: &'a Value, probe: &str) -> &'a Value {
    run["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["probe"] == probe)
        .unwrap_or_else(|| panic!("no {probe} scenario in {run}"))
}

/// Asserts `op` has samples and ordered figures, called `name`, in
/// `scenario`. A switch's figures are lat_ctx's, its time less an
/// overhead, and its median may be nothing left (absent): its median as
/// timed is checked.
fn assert_sane(scenario: &Value, op: &str, name: &str) {
    let figures = &scenario["result"]["figures"];
    let optional = |what: &str| figures[format!("{name}_{what}")].as_f64();
    let figure =
        |what: &str| optional(what).unwrap_or_else(|| panic!("{name}_{what} missing in {figures}"));
    let samples = figure("samples");
    let (p99, max) = (figure("p99_us"), figure("max_us"));
    let (p50, timed_p50) = match op.starts_with("ctx") {
        true => (optional("p50_us").unwrap_or(0.0), figure("raw_p50_us")),
        false => (figure("p50_us"), figure("p50_us")),
    };
    assert!(samples > 0.0, "{op}: no samples");
    assert!(timed_p50 > 0.0, "{op}: p50 as timed {timed_p50}");
    assert!(
        0.0 <= p50 && p50 <= p99 && p99 <= max,
        "{op}: p50 {p50} p99 {p99} max {max}"
    );
    let tally = &scenario["result"]["tally"]["samples"][op];
    assert_eq!(tally["count"].as_f64(), Some(samples), "{op}");
    assert!(tally["sum_ns"].as_f64().unwrap() >= samples * timed_p50 * 1e3 / 2.0);
}

#[test]
fn every_operation_has_samples_and_micro_pipe_runs_alone() {
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let (output, run) = micro_run(&tag, dir.path(), "micro,micro:pipe", "paced");
    let pipe = scenario(&run, "micro:pipe");
    assert_sane(pipe, "pipe", "pipe");
    let fields: Vec<&String> = pipe["result"]["figures"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert!(fields.iter().all(|f| f.starts_with("pipe_")), "{fields:?}");
    let (files, states) = leftovers(dir.path());
    assert_eq!(files, ["run.json"], "left behind: {files:?}");
    assert!(states.is_empty(), "{states:?}");
    let table = stdout(&output);
    let header = table
        .lines()
        .skip_while(|l| !l.starts_with("--- micro: "))
        .find(|l| l.starts_with("Load"))
        .unwrap_or_else(|| panic!("no micro table in\n{table}"));
    let columns: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(&columns[1..=OPS.len()], OPS, "{header}");
}

#[test]
fn lmbench_mode_gives_lat_ctx_switches_and_a_fault_per_page() {
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let (_, run) = micro_run(&tag, dir.path(), "micro", "lmbench");
    let micro = scenario(&run, "micro");
    let figures = &micro["result"]["figures"];
    let figure = |name: &str| figures[name].as_f64();
    let (lat_ctx, raw) = (figure("ctx0_p50_us"), figure("ctx0_raw_p50_us"));
    assert!(
        lat_ctx.unwrap() < raw.unwrap(),
        "ctx0 {lat_ctx:?} µs, as timed {raw:?} µs"
    );
    assert!(figure("ctx0_overhead_p50_us").unwrap() > 0.0);
    // A 64 KiB pass of a debug build takes far longer than a switch, so
    // lat_ctx's difference may be nothing: then the figure is absent.
    let raw = figure("ctx64_raw_p50_us").unwrap();
    if let Some(lat_ctx) = figure("ctx64_p50_us") {
        assert!(lat_ctx < raw, "ctx64 {lat_ctx} µs, as timed {raw} µs");
    }
    let label = run["probes"]["micro"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["key"] == "minflt_p50")
        .map(|f| f["label"].as_str().unwrap().to_string());
    assert_eq!(label.as_deref(), Some("minflt per page median (µs)"));
    for (op, _) in RENAMED_IN_LMBENCH_MODE {
        assert!(
            figures[format!("{op}_p50_us")].is_null(),
            "{op} in {figures}"
        );
    }
}

#[test]
fn an_unknown_micro_mode_is_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let output = feelbench(&new_tag(), dir.path())
        .args(["run", "--probe", "micro:pipe", "--micro-mode", "fast"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("paced or lmbench"),
        "{}",
        stderr(&output)
    );
}

/// The PIDs of the tagged processes called `name`.
fn named(tag: &str, name: &str) -> Vec<u32> {
    tagged_processes(tag)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == name)
        })
        .collect()
}

/// Starts a 20 s run of `probe` under no load, its output thrown away,
/// for a test to look at its processes and kill it.
fn start_long_run(tag: &str, dir: &Path, probe: &str) -> Child {
    feelbench(tag, dir)
        .args(["run", "--probe", probe, "--load", "none", "-t", "20"])
        .args(["--warmup", "0.2", "-l", LOOPS_PER_MS, "-q"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn sigkill_of_the_orchestrator_takes_the_partners_along() {
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let mut child = start_long_run(&tag, dir.path(), "micro");
    let deadline = Instant::now() + Duration::from_secs(15);
    while named(&tag, "fb-micro-tcp").is_empty() {
        assert!(Instant::now() < deadline, "no partner started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let partners = [
        "fb-micro-spawn",
        "fb-micro-pipe",
        "fb-micro-unix",
        "fb-micro-udp",
        "fb-micro-accept",
    ];
    assert!(partners.iter().all(|p| !named(&tag, p).is_empty()));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    let left = wait_for_no_tagged(&tag, Duration::from_secs(5));
    assert!(left.is_empty(), "left running: {left:?}");
}

/// The anonymous memory of process `pid`, KiB (`smaps_rollup`).
fn anonymous_kib(pid: u32) -> Option<u64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    rollup
        .lines()
        .find_map(|line| line.strip_prefix("Anonymous:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// A fork copies the forking process's page tables and the child's exit
/// takes them down, so the spawner that forks must be small, as LMbench's
/// lat_proc is: it was forked after the late split's account had been
/// allocated, 4.3 MiB of anonymous memory in every fork.
#[test]
fn the_spawner_forks_without_the_probes_accounts() {
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let mut child = start_long_run(&tag, dir.path(), "micro:fork");
    wait_until("the spawner", || !named(&tag, "fb-micro-spawn").is_empty());
    let spawner = named(&tag, "fb-micro-spawn")[0];
    // Once the account would have been allocated: the window is open.
    std::thread::sleep(Duration::from_secs(2));
    let anonymous = anonymous_kib(spawner);
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    assert!(wait_for_no_tagged(&tag, Duration::from_secs(5)).is_empty());
    let anonymous = anonymous.expect("the spawner's smaps_rollup");
    assert!(
        anonymous < 2048,
        "the spawner has {anonymous} KiB anonymous"
    );
}

#[test]
fn without_loopback_the_network_operations_fail_alone_with_their_reason() {
    if !require_root("a network namespace of its own, without loopback") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    // `unshare --net` puts the run in a new network namespace, whose
    // loopback is down.
    let output = std::process::Command::new("unshare")
        .arg("--net")
        .arg(env!("CARGO_BIN_EXE_feelbench"))
        .args([
            "run",
            "--probe",
            "micro,micro:udp",
            "--load",
            "none",
            "-t",
            "1",
        ])
        .args(["--warmup", "0.2", "-l", LOOPS_PER_MS, "-o"])
        .arg(&file)
        // Its cache and store in the test's directory, not the user's.
        .env("XDG_CACHE_HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path())
        .env_remove("FEELBENCH_STORE")
        .current_dir(dir.path())
        .output()
        .unwrap();
    // micro:udp fails, so the run says a scenario failed.
    assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));
    let errors = stderr(&output);
    let run = read_json(&file);
    let micro = scenario(&run, "micro");
    assert_eq!(micro["status"], "ok");
    let warnings = run["warnings"].to_string();
    for op in ["udp", "tcp", "connect"] {
        let left_out = format!("micro under none: left out {op}: ");
        assert!(warnings.contains(&left_out), "{warnings} {errors}");
        assert!(micro["result"]["figures"][format!("{op}_p50_us")].is_null());
        assert_eq!(
            micro["result"]["tally"]["counts"][format!("{op}_failed")],
            1.0
        );
    }
    for op in ["fork", "pipe", "unix", "fault"] {
        assert_sane(micro, op, op);
    }
    let udp = scenario(&run, "micro:udp");
    assert_eq!(udp["status"], "failed");
    let error = udp["error"].as_str().unwrap();
    assert!(error.contains("udp: cannot"), "{error}");
}
