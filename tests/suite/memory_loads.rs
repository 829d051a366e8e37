//! Memory pressure end to end: the temporary swap file (`--swap`) is on
//! during the run and gone after it, also after the run was SIGKILLed (the
//! next run removes it); `memload` in a memory cgroup (`--mem-limit`) swaps
//! and leaves no cgroup; `memload` without swap, and `--swap` or
//! `--mem-limit` from another user than root, are refused. Swap is global,
//! so these tests take turns; those that change the system need root and
//! say so when they skip.

use crate::common::{
    feelbench, feelbench_as_nobody, new_tag, read_json, require_root, skip, stderr,
    tagged_processes, wait_until, LOOPS_PER_MS,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// One test at a time: each changes or depends on the system's swap.
fn take_turn() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// True when the test may change the system; says it skips otherwise.
fn can_change_the_system() -> bool {
    require_root("swapon, memory cgroups")
}

/// Active swap areas below `dir`, from /proc/swaps.
fn swaps_under(dir: &Path) -> Vec<PathBuf> {
    let dir = dir.canonicalize().unwrap();
    std::fs::read_to_string("/proc/swaps")
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next().map(PathBuf::from))
        .filter(|path| path.starts_with(&dir))
        .collect()
}

fn system_swap_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("SwapTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap()
        * 1024
}

fn vmstat(key: &str) -> u64 {
    std::fs::read_to_string("/proc/vmstat")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("{key} missing in /proc/vmstat"))
}

/// The memory cgroup a run says it made (`... in PATH (cgroup vN)`).
fn cgroup_named_in(stderr: &str) -> Option<PathBuf> {
    let line = stderr.lines().find(|l| l.contains("loads limited to"))?;
    let (_, rest) = line.split_once(" in ")?;
    Some(PathBuf::from(rest.split_once(" (cgroup")?.0))
}

/// Undoes what a failed test may leave: swap below a directory, a cgroup.
struct Undo {
    dir: PathBuf,
    cgroup: Option<PathBuf>,
}

impl Drop for Undo {
    fn drop(&mut self) {
        for path in swaps_under(&self.dir) {
            let c_path = CString::new(path.as_os_str().as_bytes()).unwrap();
            // SAFETY: swapoff takes a NUL-terminated path that lives across the call.
            unsafe { libc::swapoff(c_path.as_ptr()) };
        }
        if let Some(cgroup) = &self.cgroup {
            for _ in 0..100 {
                if std::fs::remove_dir(cgroup).is_ok() || !cgroup.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// Starts `feelbench run ARGS` in `dir`, its stderr going to `dir/stderr`.
fn start(tag: &str, dir: &Path, args: &[&str]) -> Child {
    feelbench(tag, dir)
        .arg("run")
        .args(args)
        .args([
            "-l",
            LOOPS_PER_MS,
            "-q",
            "--warmup",
            "0.2",
            "-o",
            "run.json",
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        .spawn()
        .unwrap()
}

fn read_stderr(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("stderr")).unwrap_or_default()
}

#[test]
fn the_swap_file_is_on_during_the_run_and_gone_after() {
    let _turn = take_turn();
    if !can_change_the_system() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let _undo = Undo {
        dir: dir.path().to_path_buf(),
        cgroup: None,
    };
    let args = [
        "--swap", "256M", "--probe", "audio", "--load", "none", "-t", "2",
    ];
    let mut child = start(&new_tag(), dir.path(), &args);
    wait_until("the swap file to be on", || {
        swaps_under(dir.path()).len() == 1
    });
    let swap_file = swaps_under(dir.path()).remove(0);
    let meta = std::fs::metadata(&swap_file).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.len(), 256 << 20);
    assert!(
        child.wait().unwrap().success(),
        "{}",
        read_stderr(dir.path())
    );
    assert_eq!(swaps_under(dir.path()), Vec::<PathBuf>::new());
    assert!(!swap_file.exists(), "{} is left", swap_file.display());
    assert!(
        !swap_file.parent().unwrap().exists(),
        "the work directory is left"
    );
}

#[test]
fn memload_under_a_memory_limit_swaps_and_leaves_no_cgroup() {
    let _turn = take_turn();
    if !can_change_the_system() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let swapped_out_before = vmstat("pswpout");
    let output = feelbench(&new_tag(), dir.path())
        .args(["run", "--mem-limit", "128M", "--swap", "512M"])
        .args(["--load", "memload", "--probe", "audio", "-t", "2"])
        .args(["-l", LOOPS_PER_MS, "-q", "-o", "run.json"])
        .output()
        .unwrap();
    let _undo = Undo {
        dir: dir.path().to_path_buf(),
        cgroup: cgroup_named_in(&stderr(&output)),
    };
    assert!(output.status.success(), "{}", stderr(&output));
    let swapped_out = vmstat("pswpout") - swapped_out_before;
    let run = read_json(&dir.path().join("run.json"));
    let scenario = &run["scenarios"][0];
    assert_eq!(scenario["status"], "ok", "{scenario}");
    let work = &scenario["load_work"][0];
    assert_eq!(work["unit"], "MB");
    assert!(work["amount"].as_f64().unwrap() > 0.0, "{work}");
    assert!(swapped_out > 0, "no page was swapped out");
    let cgroup = cgroup_named_in(&stderr(&output)).expect("the run names its cgroup");
    assert!(!cgroup.exists(), "{} is left", cgroup.display());
    assert_eq!(swaps_under(dir.path()), Vec::<PathBuf>::new());
}

#[test]
fn memload_without_swap_is_refused_with_the_way_to_get_some() {
    let _turn = take_turn();
    if system_swap_bytes() > 0 {
        skip("this system has swap");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let output = feelbench(&new_tag(), dir.path())
        .args([
            "run", "--load", "memload", "--probe", "audio", "-t", "1", "-c",
        ])
        .args(["-l", LOOPS_PER_MS])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    assert!(
        text.contains("load memload: needs swap") && text.contains("--swap SIZE"),
        "{text}"
    );
}

#[test]
fn swap_and_cgroup_left_by_a_killed_run_are_removed_by_the_next_run() {
    let _turn = take_turn();
    if !can_change_the_system() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut undo = Undo {
        dir: dir.path().to_path_buf(),
        cgroup: None,
    };
    let tag = new_tag();
    let args = [
        "--swap",
        "256M",
        "--mem-limit",
        "64M",
        "--load",
        "memload",
        "--probe",
        "audio",
        "-t",
        "30",
    ];
    let mut child = start(&tag, dir.path(), &args);
    wait_until("the probe to start", || tagged_processes(&tag).len() >= 3);
    let cgroup = cgroup_named_in(&read_stderr(dir.path())).expect("the run names its cgroup");
    undo.cgroup = Some(cgroup.clone());
    let swap_file = swaps_under(dir.path()).pop().expect("the swap file is on");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).unwrap();
    child.wait().unwrap();
    wait_until("the workers to die", || tagged_processes(&tag).is_empty());
    assert!(
        swaps_under(dir.path()).contains(&swap_file),
        "a SIGKILL leaves the swap on"
    );
    assert!(cgroup.exists());

    let output = feelbench(&new_tag(), dir.path())
        .args([
            "run", "--probe", "audio", "--load", "none", "-t", "0.2", "-c", "-q",
        ])
        .args(["-l", LOOPS_PER_MS])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stderr(&output);
    assert!(
        text.contains(&format!("removed swap file {}", swap_file.display())),
        "{text}"
    );
    assert!(
        text.contains(&format!("removed cgroup {}", cgroup.display())),
        "{text}"
    );
    assert_eq!(swaps_under(dir.path()), Vec::<PathBuf>::new());
    assert!(!swap_file.exists());
    assert!(!cgroup.exists());
}

#[test]
fn changing_the_system_is_refused_to_others_than_root() {
    if !require_root("to run feelbench as nobody") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (option, what) in [("--swap", "swap file"), ("--mem-limit", "memory cgroup")] {
        let output = feelbench_as_nobody(&new_tag(), dir.path())
            .args([
                "run", option, "256M", "--probe", "audio", "--load", "none", "-c",
            ])
            .args(["-l", LOOPS_PER_MS])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        let text = stderr(&output);
        assert!(
            text.contains(&format!("{option} needs root")) && text.contains(what),
            "{text}"
        );
    }
}
