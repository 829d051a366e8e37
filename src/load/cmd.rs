//! `cmd:COMMAND`: any external command as a load (`--load 'cmd:stress-ng
//! --cpu 2'`). The command is split like a shell would split it but run
//! without a shell. Its work is the CPU time its whole process tree used;
//! the tree is stopped with the scenario's process group, and anything that
//! left the group is found by the run's marker and killed too.

use super::{CheckError, Load, LoadDef, LoadError};
use crate::system::procfs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long one step waits before looking at the command again.
const STEP: Duration = Duration::from_millis(100);

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "cmd",
    summary: "any command as a load: --load 'cmd:stress-ng --cpu 2' (no shell)",
    unit: "CPU-s",
    takes_arg: true,
    disk_bytes: super::no_disk,
    check: |_, arg| parse(arg.unwrap_or_default()).map(drop),
    processes: |_| 1,
    build: |context| {
        let argv = parse(context.arg.as_deref().unwrap_or_default())?;
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(&context.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(LoadError::io(format!("cannot start {}", argv[0])))?;
        Ok(Box::new(CommandLoad {
            root: child.id(),
            child,
            cpu_ticks: 0,
        }))
    },
    default: |_| false,
    uses: &[],
};

/// Splits the command into arguments; an empty command is an error.
fn parse(command: &str) -> Result<Vec<String>, CheckError> {
    let argv = shell_words::split(command).map_err(CheckError::UnparsableCommand)?;
    if argv.is_empty() {
        return Err(CheckError::NoCommand);
    }
    Ok(argv)
}

struct CommandLoad {
    child: Child,
    root: u32,
    /// CPU ticks of the tree seen at the last step.
    cpu_ticks: u64,
}

impl Load for CommandLoad {
    fn step(&mut self) -> Result<f64, LoadError> {
        std::thread::sleep(STEP);
        if let Ok(Some(status)) = self.child.try_wait() {
            return Err(LoadError::CommandEnded(status));
        }
        let ticks = procfs::tree_cpu_ticks(Path::new("/proc"), self.root);
        let done = ticks.saturating_sub(self.cpu_ticks);
        self.cpu_ticks = self.cpu_ticks.max(ticks);
        Ok(done as f64 / procfs::clock_ticks_per_s() as f64)
    }
}

impl Drop for CommandLoad {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_like_a_shell_without_one() {
        assert_eq!(
            parse("stress-ng --cpu 2").unwrap(),
            ["stress-ng", "--cpu", "2"]
        );
        assert_eq!(parse("sh -c 'a b'").unwrap(), ["sh", "-c", "a b"]);
        assert!(parse("  ").is_err());
        assert!(parse("unterminated 'quote").is_err());
    }
}
