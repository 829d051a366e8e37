//! One arm-round: `feelbench run` as a child of this process (our own
//! binary, the arm's options, its file in the experiment's directory, its
//! stderr in a log beside it), waited for while the progress bar moves; a
//! signal that reached only this process is passed on, so the run stops as
//! after Ctrl-C and keeps what it finished.

use crate::engine::interrupt::Interrupt;
use crate::experiment::model::RunStatus;
use crate::progress::Progress;
use crate::system::process_tree;
use anyhow::Context as _;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How often the wait looks at the child and the signal flag.
const POLL: Duration = Duration::from_millis(100);
/// Exit code of a run given bad input (or refused by `--strict`).
const USAGE: i32 = crate::exit::ExitCode::Usage as i32;

/// How a run ended.
#[derive(Debug, Clone)]
pub struct Ended {
    pub status: RunStatus,
    /// The last lines of its stderr when it did not end well.
    pub said: Option<String>,
    /// It refused its input (exit 2): the experiment cannot go on.
    pub refused: bool,
}

/// One run of `feelbench run OPTIONS`, writing `file` (its stderr in
/// `log`), its comment `comment`.
pub struct ArmRun<'a> {
    pub options: &'a [String],
    pub file: &'a Path,
    pub log: &'a Path,
    pub comment: &'a str,
}

impl ArmRun<'_> {
    /// Runs it to its end.
    pub fn run(&self, interrupt: &Interrupt, progress: &Progress) -> anyhow::Result<Ended> {
        let binary = std::env::current_exe().context("finding feelbench's own binary")?;
        let log = std::fs::File::create(self.log)
            .with_context(|| format!("cannot write {}", self.log.display()))?;
        let mut command = Command::new(binary);
        command
            .arg("run")
            .args(self.options)
            .args(["-q", "-o"])
            .arg(self.file)
            .args(["-m", self.comment])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        process_tree::die_with_this_process(&mut command);
        let mut child = command.spawn().with_context(|| {
            format!(
                "starting {} run (was it rebuilt or removed during the experiment?)",
                command.get_program().to_string_lossy()
            )
        })?;
        let mut passed_on = false;
        let status = loop {
            if let Some(status) = child.try_wait().context("waiting for feelbench run")? {
                break status;
            }
            if interrupt.check().is_err() && !passed_on {
                // Ctrl-C reached the run too (one process group); a signal
                // sent to this process alone did not.
                let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGINT);
                passed_on = true;
            }
            progress.tick();
            std::thread::sleep(POLL);
        };
        let code = status.code();
        let run_status = match code {
            Some(0) => RunStatus::Ok,
            Some(crate::engine::interrupt::INTERRUPTED_EXIT_CODE) => RunStatus::Interrupted,
            None if interrupt.check().is_err() => RunStatus::Interrupted,
            _ => RunStatus::Failed,
        };
        let said = (run_status != RunStatus::Ok).then(|| tail(self.log));
        Ok(Ended {
            status: run_status,
            said,
            refused: code == Some(USAGE),
        })
    }
}

/// What the log at `path` says went wrong: its lines that say `failed` or
/// `error`, else its last line.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let wrong: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.contains(" failed") || l.contains("error"))
        .collect();
    match wrong.is_empty() {
        true => lines.last().copied().unwrap_or("").to_string(),
        false => wrong.join(" / "),
    }
}
