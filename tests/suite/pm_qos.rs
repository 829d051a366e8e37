//! `--cpu-dma-latency`: a run holds PM QoS through /dev/cpu_dma_latency
//! while it measures, records the limit, and leaves the device unheld when
//! it ends, normally or killed; without root it is refused with exit code 2
//! before anything is measured. No timing is asserted.

use crate::common::{
    feelbench, feelbench_as_nobody, new_tag, read_json, require_root, stderr, wait_for_no_tagged,
    LOOPS_PER_MS,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The PM QoS device.
const DEVICE: &str = "/dev/cpu_dma_latency";

/// The tests here take turns: each checks that no feelbench holds the
/// device once its own run is over, which another test's run would spoil.
static DEVICE_USERS: Mutex<()> = Mutex::new(());

/// `feelbench run` of the no-work 1 ms probe for `seconds`, holding PM QoS
/// at 0, its processes tagged `tag`.
fn run_holding_zero(mut command: Command, dir: &Path, seconds: &str) -> Command {
    command
        .args(["run", "--probe", "custom", "-C", "0", "-I", "1000"])
        .args(["--load", "none", "-t", seconds, "--warmup", "0"])
        .args(["--noise-check", "0", "--cpu-dma-latency", "0"])
        .args(["-l", LOOPS_PER_MS, "-q", "-o"])
        .arg(dir.join("run.json"));
    command
}

/// PIDs of processes of this build's feelbench with the device open.
fn holders() -> Vec<u32> {
    let binary = Path::new(env!("CARGO_BIN_EXE_feelbench"));
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| e == binary))
        .filter(|pid| holds_device(*pid))
        .collect()
}

/// Whether process `pid` has the device open.
fn holds_device(pid: u32) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .any(|target| target == Path::new(DEVICE))
}

/// The CPU latency limit in force, as the device reports it (an s32).
fn limit_in_force() -> i32 {
    let bytes = std::fs::read(DEVICE).unwrap();
    i32::from_ne_bytes(bytes[..4].try_into().unwrap())
}

/// Waits until `child` holds the device; panics if it ends first or after 20 s.
fn wait_until_held(child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !holds_device(child.id()) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it held {DEVICE}"
        );
        assert!(Instant::now() < deadline, "{DEVICE} never held");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_run_holds_the_limit_records_it_and_lets_it_go() {
    if !require_root("opening /dev/cpu_dma_latency") {
        return;
    }
    let _turn = DEVICE_USERS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut child = run_holding_zero(feelbench(&new_tag(), dir.path()), dir.path(), "2")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_held(&mut child);
    assert_eq!(limit_in_force(), 0);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("PM QoS held at 0 µs"),
        "{}",
        stderr(&output)
    );
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(
        run["settings"]["cpu_dma_latency_us"], 0,
        "{}",
        run["settings"]
    );
    assert_eq!(holders(), Vec::<u32>::new());
}

#[test]
fn a_killed_run_leaves_the_limit_to_no_one() {
    if !require_root("opening /dev/cpu_dma_latency") {
        return;
    }
    let _turn = DEVICE_USERS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let mut child = run_holding_zero(feelbench(&tag, dir.path()), dir.path(), "60")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until_held(&mut child);
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    assert_eq!(
        wait_for_no_tagged(&tag, Duration::from_secs(5)),
        Vec::<u32>::new()
    );
    assert_eq!(holders(), Vec::<u32>::new());
}

#[test]
fn without_root_the_limit_is_refused_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    // Root runs the binary as nobody, who may not open the device.
    let user = if nix::unistd::geteuid().is_root() {
        feelbench_as_nobody(&new_tag(), dir.path())
    } else {
        feelbench(&new_tag(), dir.path())
    };
    let mut command = run_holding_zero(user, dir.path(), "1");
    let output = command.output().unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(err.contains("--cpu-dma-latency"), "{err}");
    assert!(err.contains(DEVICE) && err.contains("needs root"), "{err}");
    assert!(!dir.path().join("run.json").exists(), "nothing is measured");
}
