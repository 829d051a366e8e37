//! feelbench: measures how a Linux system feels under load.
//!
//! The orchestrator parses the command line, turns it into a task with
//! validated settings (`cli`), carries it out (`commands`) and maps the
//! outcome to an exit code (`exit`); measuring happens in worker processes
//! (`feelbench worker SPEC`) started by the engine, and the built-in job's
//! steps in processes of their own (`feelbench job-step SPEC`).

/// Says one line on stderr, after `feelbench: `, as `eprintln!` would, but
/// a closed stderr (`2>&1 | head -1`) is not a reason to stop: the run goes
/// on and cleans up.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "feelbench: {}", format_args!($($arg)*));
    }};
}

mod cli;
mod commands;
mod compare;
mod document;
mod engine;
mod exit;
mod experiment;
mod figures;
mod history;
mod load;
mod measure;
mod probe;
mod progress;
mod regression;
mod report;
mod sim;
mod stats;
mod store;
mod system;
mod trace;

use cli::{Command, Machine, UserCommand};
use exit::ExitCode;
use std::path::Path;

fn main() {
    let code = match cli::parse_command_line().command {
        Command::Worker { spec } => engine::worker::run(&spec),
        Command::JobStep { spec } => sim::job::step::run(&spec),
        Command::User(command) => exit::finish(dispatch(command)) as i32,
    };
    std::process::exit(code);
}

/// Describes the machine, settles `command` into a task for it, and
/// carries the task out.
fn dispatch(command: UserCommand) -> anyhow::Result<ExitCode> {
    let proc_root = Path::new("/proc");
    let system = system::describe(proc_root);
    let machine = Machine {
        cpus: system.cpus,
        free_swap_bytes: system::procfs::read_meminfo(proc_root)
            .ok()
            .and_then(|m| m.get("SwapFree"))
            .unwrap_or(0),
        online_cpus: system::cpulist::online(Path::new("/sys")).ok(),
    };
    let command = cli::resolve(command, std::env::args_os().collect(), &machine)?;
    let task = command.into_task(&machine)?;
    commands::execute(task, system)
}
