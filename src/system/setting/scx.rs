//! A sched_ext scheduler: its program started, waited for until the
//! kernel's `state` says `enabled` and `root/ops` names it, watched for
//! being ejected (the kernel falls back to its own scheduler when a BPF
//! scheduler misbehaves), and stopped (SIGINT, which the schedulers take
//! as the order to unregister; SIGKILL after a grace) until the state
//! says `disabled`. The kernel's files are under a root directory
//! (`/sys/kernel/sched_ext`), so tests can stand a script in for both.

use super::SettingError;
use crate::system::procfs;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::io::{Read as _, Seek as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The kernel's sched_ext directory.
pub const ROOT: &str = "/sys/kernel/sched_ext";

/// How long a scheduler may take to be enabled, or to go.
const WAIT: Duration = Duration::from_secs(10);

/// How often the state is read while waiting.
const POLL: Duration = Duration::from_millis(20);

/// A scheduler started for a setting.
#[derive(Debug)]
pub struct Running {
    child: Child,
    root: PathBuf,
    /// The name the kernel gave its ops.
    ops: String,
}

/// The kernel's sched_ext state (`enabled`, `disabled`, `enabling`, ...),
/// `None` when it has no sched_ext.
fn state(root: &Path) -> Option<String> {
    Some(
        std::fs::read_to_string(root.join("state"))
            .ok()?
            .trim()
            .to_string(),
    )
}

/// The name of the running scheduler's ops.
fn ops(root: &Path) -> String {
    std::fs::read_to_string(root.join("root/ops"))
        .map(|t| t.trim().to_string())
        .unwrap_or_default()
}

/// Whether `ops` names the scheduler of `program` (`scx_lavd` runs as
/// `lavd`, possibly with a suffix).
fn names(ops: &str, program: &str) -> bool {
    let stem = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(program);
    let stem = stem.strip_prefix("scx_").unwrap_or(stem);
    !ops.is_empty() && (ops.starts_with(stem) || stem.starts_with(ops))
}

/// Starts `argv`'s scheduler for `setting`, calls `started` with its pid
/// and start time (to journal it), and waits until the kernel runs it.
pub fn start(
    setting: &str,
    argv: &[String],
    root: &Path,
    started: impl FnOnce(u32, Option<u64>) -> Result<(), SettingError>,
) -> Result<Running, SettingError> {
    let error = |what: String| SettingError::Scheduler {
        setting: setting.to_string(),
        what,
    };
    match state(root).as_deref() {
        None => {
            return Err(error(format!(
                "this kernel has no sched_ext (no {}: built without CONFIG_SCHED_CLASS_EXT)",
                root.display()
            )))
        }
        Some("disabled") => {}
        Some(other) => {
            return Err(error(format!(
                "sched_ext is {other} already (ops {:?}): stop that scheduler first",
                ops(root)
            )))
        }
    }
    let mut stderr = tempfile::tempfile()
        .map_err(|e| error(format!("cannot make a file for its stderr: {e}")))?;
    let child = Command::new(&argv[0])
        .args(&argv[1..])
        // Its own process group, so that a Ctrl-C at the terminal or a
        // kill of feelbench's group does not end it before `stop` does.
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr.try_clone().map_err(|e| error(e.to_string()))?)
        .spawn()
        .map_err(|e| error(format!("cannot start {}: {e}", argv[0])))?;
    let pid = child.id();
    let ticks = procfs::read_process_stat(Path::new("/proc"), pid)
        .ok()
        .map(|s| s.start_ticks);
    let mut running = Running {
        child,
        root: root.to_path_buf(),
        ops: String::new(),
    };
    if let Err(e) = started(pid, ticks) {
        let _ = running.stop(setting);
        return Err(e);
    }
    let deadline = Instant::now() + WAIT;
    loop {
        if let Ok(Some(status)) = running.child.try_wait() {
            let mut said = String::new();
            let _ = stderr
                .rewind()
                .and_then(|_| stderr.read_to_string(&mut said));
            let said = said.trim().lines().last().unwrap_or("").to_string();
            return Err(error(format!(
                "{} ended ({status}) before sched_ext was enabled: {said}",
                argv[0]
            )));
        }
        if state(root).as_deref() == Some("enabled") {
            running.ops = ops(root);
            if names(&running.ops, &argv[0]) {
                return Ok(running);
            }
            let what = format!("sched_ext runs ops {:?}, not {}", running.ops, argv[0]);
            let _ = running.stop(setting);
            return Err(error(what));
        }
        if Instant::now() > deadline {
            let _ = running.stop(setting);
            return Err(error(format!(
                "sched_ext was not enabled {} s after {} started",
                WAIT.as_secs(),
                argv[0]
            )));
        }
        std::thread::sleep(POLL);
    }
}

impl Running {
    /// An error when the scheduler is no longer the kernel's (ejected, or
    /// its process ended).
    pub fn check(&self, setting: &str) -> Result<(), SettingError> {
        let gone = |what: String| SettingError::NotHolding {
            setting: setting.to_string(),
            what,
        };
        let alive = procfs::read_process_stat(Path::new("/proc"), self.child.id())
            .is_ok_and(|s| s.state != 'Z' && s.state != 'X');
        if !alive {
            return Err(gone(format!("its process {} ended", self.child.id())));
        }
        let state = state(&self.root).unwrap_or_default();
        let ops = ops(&self.root);
        if state != "enabled" || ops != self.ops {
            return Err(gone(format!(
                "sched_ext is {state} with ops {ops:?}, not {:?}: the kernel ejected it",
                self.ops
            )));
        }
        Ok(())
    }

    /// Stops the scheduler and waits until sched_ext is disabled.
    pub fn stop(&mut self, setting: &str) -> Result<(), SettingError> {
        let pid = Pid::from_raw(self.child.id() as i32);
        let _ = kill(pid, Signal::SIGINT);
        let deadline = Instant::now() + WAIT;
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        wait_disabled(setting, &self.root)
    }
}

/// Waits until sched_ext says it is disabled (or is not there).
fn wait_disabled(setting: &str, root: &Path) -> Result<(), SettingError> {
    let deadline = Instant::now() + WAIT;
    loop {
        match state(root).as_deref() {
            None | Some("disabled") => return Ok(()),
            Some(other) if Instant::now() > deadline => {
                return Err(SettingError::Restore {
                    setting: setting.to_string(),
                    what: format!(
                        "sched_ext is still {other} {} s after its scheduler ended",
                        WAIT.as_secs()
                    ),
                })
            }
            Some(_) => std::thread::sleep(POLL),
        }
    }
}

/// Stops the scheduler a dead process left running: process `pid`, if it
/// still is the one started at `start_ticks`.
pub fn stop_leftover(
    setting: &str,
    pid: u32,
    start_ticks: Option<u64>,
    root: &Path,
) -> Result<(), SettingError> {
    let same = || {
        procfs::read_process_stat(Path::new("/proc"), pid)
            .is_ok_and(|s| start_ticks.is_none_or(|t| t == s.start_ticks) && s.state != 'Z')
    };
    if same() {
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGINT);
        let deadline = Instant::now() + WAIT;
        while same() && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        if same() {
            let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
        }
    }
    wait_disabled(setting, root)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for a scheduler and the kernel both: a script named
    /// `scx_fake` that writes `ops` and `enabled` (or runs `early`)
    /// under the sched_ext directory it is given, and `disabled` when
    /// told to stop.
    fn fake(ops: &str, early: &str) -> (tempfile::TempDir, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("root")).unwrap();
        std::fs::write(dir.path().join("state"), "disabled\n").unwrap();
        let script = dir.path().join("scx_fake");
        let text = format!(
            "#!/bin/sh\n{early}\nroot=\"$1\"\ntrap 'echo disabled > \"$root/state\"; exit 0' INT TERM\necho {ops} > \"$root/root/ops\"\necho enabled > \"$root/state\"\nwhile :; do sleep 0.02; done\n"
        );
        std::fs::write(&script, text).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let argv = vec![
            script.display().to_string(),
            dir.path().display().to_string(),
        ];
        (dir, argv)
    }

    fn state_of(dir: &tempfile::TempDir) -> String {
        state(dir.path()).unwrap()
    }

    /// The fake scheduler started, and the pid and start time journaled.
    fn started(dir: &tempfile::TempDir, argv: &[String]) -> (Running, (u32, Option<u64>)) {
        let mut journaled = None;
        let running = start("scx=fake", argv, dir.path(), |pid, ticks| {
            journaled = Some((pid, ticks));
            Ok(())
        })
        .unwrap();
        (running, journaled.unwrap())
    }

    #[test]
    fn a_scheduler_is_waited_for_watched_for_ejection_and_stopped() {
        let (dir, argv) = fake("fake_1", "");
        let (mut running, (pid, _)) = started(&dir, &argv);
        assert_eq!(pid, running.child.id());
        assert_eq!(state_of(&dir), "enabled");
        running.check("scx=fake").unwrap();
        // The kernel ejects it: sched_ext falls back, the process lives on.
        std::fs::write(dir.path().join("state"), "disabled\n").unwrap();
        let e = running.check("scx=fake").unwrap_err().to_string();
        assert!(e.contains("the kernel ejected it"), "{e}");
        std::fs::write(dir.path().join("state"), "enabled\n").unwrap();
        running.stop("scx=fake").unwrap();
        assert_eq!(state_of(&dir), "disabled");
        let e = running.check("scx=fake").unwrap_err().to_string();
        assert!(e.contains("ended"), "{e}");
    }

    #[test]
    fn a_scheduler_that_fails_or_is_not_the_one_running_is_refused() {
        let (dir, argv) = fake("fake", "echo cannot load the BPF program >&2; exit 1");
        let e = start("scx=fake", &argv, dir.path(), |_, _| Ok(())).unwrap_err();
        assert!(e.is_bad_input());
        assert!(e.to_string().contains("cannot load the BPF program"), "{e}");
        let (dir, argv) = fake("other", "");
        let e = start("scx=fake", &argv, dir.path(), |_, _| Ok(())).unwrap_err();
        assert!(e.to_string().contains("runs ops \"other\""), "{e}");
        assert_eq!(state_of(&dir), "disabled", "stopped");
        std::fs::write(dir.path().join("state"), "enabled\n").unwrap();
        let e = start("scx=fake", &argv, dir.path(), |_, _| Ok(())).unwrap_err();
        assert!(e.to_string().contains("stop that scheduler first"), "{e}");
    }

    #[test]
    fn a_dead_process_s_scheduler_is_stopped_by_its_journal() {
        let (dir, argv) = fake("fake", "");
        let (mut running, (pid, ticks)) = started(&dir, &argv);
        stop_leftover("scx=fake", pid, ticks, dir.path()).unwrap();
        assert_eq!(state_of(&dir), "disabled");
        running.child.wait().unwrap();
    }

    #[test]
    fn ops_name_their_scheduler_program() {
        assert!(names("lavd", "/usr/bin/scx_lavd"));
        assert!(names("bpfland_1.0", "scx_bpfland"));
        assert!(!names("rusty", "/usr/bin/scx_lavd"));
        assert!(!names("", "/usr/bin/scx_lavd"));
    }
}
