//! Helpers shared by the integration tests: running the built binary with a
//! tag in its environment (inherited by every worker), finding tagged
//! processes, reading run files, and skipping a test visibly.
#![allow(dead_code)] // each test file uses a different subset

pub mod full_disk;
pub mod perfetto;
pub mod postgres_server;

use serde_json::Value;
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A fixed work-loop rate, so tests neither calibrate nor touch a cache.
pub const LOOPS_PER_MS: &str = "200000";

/// The options of a brief run writing `run.json`: a 0.2 s warm-up, the
/// fixed calibration, quiet.
pub const BRIEF_RUN: [&str; 7] = [
    "--warmup",
    "0.2",
    "-l",
    LOOPS_PER_MS,
    "-q",
    "-o",
    "run.json",
];

/// The environment variable that marks a test's processes.
const TAG_VAR: &str = "FEELBENCH_TEST_TAG";

/// A tag unique to this test process and call.
pub fn new_tag() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The built feelbench binary.
const BINARY: &str = env!("CARGO_BIN_EXE_feelbench");

/// The feelbench binary, tagged, with `dir` as its cache directory and its
/// working directory (so its private work directory goes there too).
pub fn feelbench(tag: &str, dir: &Path) -> Command {
    tagged(Command::new(BINARY), tag, dir)
}

/// [`feelbench`] started through `nice -n NICE`, as a user would.
pub fn feelbench_niced(nice: i32, tag: &str, dir: &Path) -> Command {
    niced(nice, Path::new(BINARY), tag, dir)
}

/// [`feelbench`] with `args` on a pseudo-terminal of 30 rows and 120
/// columns, made by util-linux's script(1), whose stdout is what the
/// terminal showed and whose stdin is typed at it; `None` (said as a skip)
/// where script is not installed.
pub fn feelbench_on_a_terminal(tag: &str, dir: &Path, args: &[&str]) -> Option<Command> {
    if Command::new("script").arg("--version").output().is_err() {
        skip("util-linux's script is not installed: no pseudo-terminal");
        return None;
    }
    let line = shell_words::join(std::iter::once(BINARY).chain(args.iter().copied()));
    let mut command = Command::new("script");
    command
        .args(["-q", "-f", "-e", "-c"])
        .arg(format!("stty rows 30 cols 120; exec {line}"))
        .arg("/dev/null");
    Some(tagged(command, tag, dir))
}

/// [`feelbench`] run as the user nobody (by root), with `dir` (the work
/// directory of the run) opened to it: how root tests what feelbench refuses
/// to others.
pub fn feelbench_as_nobody(tag: &str, dir: &Path) -> Command {
    let mut command = tagged(Command::new(binary_for_nobody(dir)), tag, dir);
    command.uid(NOBODY).gid(NOBODY);
    command
}

/// [`feelbench_as_nobody`] started through `nice -n NICE`.
pub fn feelbench_niced_as_nobody(nice: i32, tag: &str, dir: &Path) -> Command {
    let mut command = niced(nice, &binary_for_nobody(dir), tag, dir);
    command.uid(NOBODY).gid(NOBODY);
    command
}

/// `binary` started through `nice -n NICE`, tagged.
fn niced(nice: i32, binary: &Path, tag: &str, dir: &Path) -> Command {
    let mut command = Command::new("nice");
    command.args(["-n", &nice.to_string()]).arg(binary);
    tagged(command, tag, dir)
}

/// The name of the binary's copy for nobody.
const NOBODY_BINARY: &str = "feelbench-for-nobody";

/// A copy of the built binary in `dir`, which is opened to everyone: the
/// build may sit where nobody cannot enter (a checkout in root's home, mode
/// 0700), and the copy re-executes itself as the run's workers.
fn binary_for_nobody(dir: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let copy = dir.join(NOBODY_BINARY);
    if !copy.exists() {
        std::fs::copy(BINARY, &copy).expect("cannot copy the binary for nobody");
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
        wait_until_executable(&copy);
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    copy
}

/// Waits until `binary`, just written, can be executed: a test forking at
/// the same time gives its child a copy of the writing descriptor until the
/// child executes, and meanwhile the kernel refuses to run the file ("text
/// file busy").
fn wait_until_executable(binary: &Path) {
    let busy = Some(nix::libc::ETXTBSY);
    for _ in 0..100 {
        match Command::new(binary).arg("--version").output() {
            Err(error) if error.raw_os_error() == busy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => return,
        }
    }
}

/// `command` with the tag in its environment, `dir` as its cache directory,
/// its data directory (where the store of runs goes) and its working
/// directory.
fn tagged(mut command: Command, tag: &str, dir: &Path) -> Command {
    command
        .env(TAG_VAR, tag)
        .env("XDG_CACHE_HOME", dir)
        .env("XDG_DATA_HOME", dir)
        .env_remove("FEELBENCH_STORE")
        .current_dir(dir);
    command
}

/// Entries of `dir` other than feelbench's cache directory (and the test's
/// copy of the binary for nobody), and the state
/// records left in that cache (both empty after a clean ending).
pub fn leftovers(dir: &Path) -> (Vec<String>, Vec<String>) {
    let names = |d: &Path| -> Vec<String> {
        std::fs::read_dir(d)
            .map(|entries| {
                entries
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let files = names(dir)
        .into_iter()
        .filter(|n| n != "feelbench" && n != NOBODY_BINARY)
        .collect();
    (files, names(&dir.join("feelbench/runs")))
}

/// Runs `feelbench ARGS` and returns its output.
pub fn run(args: &[&str]) -> Output {
    let cache = tempfile::tempdir().unwrap();
    feelbench(&new_tag(), cache.path())
        .args(args)
        .output()
        .unwrap()
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// PIDs of live processes whose environment carries `tag` (zombies have no
/// environment and are not counted).
pub fn tagged_processes(tag: &str) -> Vec<u32> {
    let needle = format!("{TAG_VAR}={tag}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == needle.as_bytes()))
        })
        .collect()
}

/// Waits up to `limit` for every tagged process to be gone; returns those left.
pub fn wait_for_no_tagged(tag: &str, limit: Duration) -> Vec<u32> {
    let deadline = Instant::now() + limit;
    loop {
        let left = tagged_processes(tag);
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The command line of a process.
pub fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// Reads a run file as JSON.
pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Prints `SKIPPED <test>: <reason>` for the running test. It goes to the
/// stderr handle itself: the test harness hides what `eprintln!` prints in a
/// passing test, so a skip said that way is never seen.
/// The line is written in one piece so CI can collect it (`.ci/run` lists
/// every skip at the end of its output).
pub fn skip(reason: &str) {
    // The harness names each test's thread after the test.
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let line = format!("SKIPPED {test}: {reason}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// True when the tests run as root; otherwise says the running test is
/// skipped because `what` needs root.
pub fn require_root(what: &str) -> bool {
    let root = nix::unistd::geteuid().is_root();
    if !root {
        skip(&format!("needs root ({what})"));
    }
    root
}

/// The exit code of `child` once it exits, within `limit` (killed and
/// failed otherwise); `None` when a signal ended it.
pub fn exit_code_within(child: &mut std::process::Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("feelbench did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Asserts that `scenario` of a run document ran, and that its one load,
/// `load`, did work in `unit` with `processes` processes and some CPU.
pub fn assert_load_did_work(scenario: &Value, load: &str, unit: &str, processes: u64) {
    assert_eq!(scenario["status"], "ok", "{scenario}");
    let work = &scenario["load_work"][0];
    assert_eq!(work["load"], load);
    assert_eq!(work["unit"], unit, "{work}");
    assert_eq!(work["processes"], processes, "{work}");
    assert!(work["amount"].as_f64().unwrap() > 0.0, "{work}");
    assert!(work["cpu_pct"].as_f64().unwrap() > 0.0, "{work}");
}

/// The uid and gid of nobody.
const NOBODY: u32 = 65534;

/// What a test notes about a run while it goes (its processes, the
/// resources they made), so it can check afterwards that none is left.
pub trait Watch {
    /// Notes what the run with `tag` has now.
    fn look(&mut self, tag: &str);
}

/// Looks at the run every 20 ms until it exits (within 60 s); returns its
/// exit code.
pub fn watch_until_exit(
    child: &mut std::process::Child,
    tag: &str,
    seen: &mut impl Watch,
) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        seen.look(tag);
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(Instant::now() < deadline, "feelbench did not exit");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Looks at the run every 20 ms until processes of it are named `name`
/// (within 20 s); returns them.
pub fn wait_for_named(tag: &str, name: &str, seen: &mut impl Watch) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        seen.look(tag);
        let named: Vec<u32> = tagged_processes(tag)
            .into_iter()
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|comm| comm.trim() == name)
            })
            .collect();
        if !named.is_empty() {
            return named;
        }
        assert!(
            Instant::now() < deadline,
            "no process named {name} appeared"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `condition` holds, panicking after 30 s.
pub fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Asserts the run exits with `code` (`None`: killed by a signal) within
/// 30 s and leaves no process of `tag` behind.
pub fn assert_ends_clean(child: &mut std::process::Child, code: Option<i32>, tag: &str) {
    assert_eq!(exit_code_within(child, Duration::from_secs(30)), code);
    assert_eq!(
        wait_for_no_tagged(tag, Duration::from_secs(3)),
        Vec::<u32>::new()
    );
}
