//! feelbench: measures how a Linux system feels under load.
//!
//! The orchestrator parses the command line and dispatches; measuring happens
//! in worker processes (`feelbench worker SPEC`) started by the engine.

mod cli;
mod commands;
mod compare;
mod engine;
mod figures;
mod load;
mod measure;
mod probe;
mod progress;
mod report;
mod sim;
mod stats;
mod system;

use clap::Parser as _;
use cli::{Cli, Command, UsageError};
use commands::ExitCode;
use std::io::Write as _;
use std::path::Path;

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Worker { spec } => engine::worker::run(&spec),
        command => match dispatch(command) {
            Ok(status) => status as i32,
            Err(error) => {
                eprintln!("feelbench: {error:#}");
                exit_status_of(&error) as i32
            }
        },
    };
    std::process::exit(code);
}

fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    let system = system::describe(Path::new("/proc"));
    match command {
        Command::Run(args) => {
            let free_swap_bytes = system::procfs::read_meminfo(Path::new("/proc"))
                .ok()
                .and_then(|m| m.get("SwapFree"))
                .unwrap_or(0);
            let config = (*args).into_config(system.cpus, free_swap_bytes)?;
            commands::run::run(config, system)
        }
        Command::List => print(&commands::list::render()),
        Command::Calibrate(args) => {
            commands::calibrate::run(&system, args.no_save)?;
            Ok(ExitCode::Success)
        }
        Command::Report(args) if args.env => print(&commands::report::render_env(&args.file)?),
        Command::Report(args) => print(&commands::report::render(
            &args.file,
            args.format,
            args.verbose,
        )?),
        Command::Compare(args) => print(&commands::compare::render(&args)?),
        Command::Merge(args) => commands::merge::run(&args.files, &args.output),
        Command::Worker { .. } => unreachable!("workers are dispatched in main"),
    }
}

/// Prints to stdout; a closed stdout (`| head`) is not an error.
fn print(text: &str) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(ExitCode::Success),
    }
}

/// Bad input (options, names, files that are not runs) exits 2, anything else 1.
fn exit_status_of(error: &anyhow::Error) -> ExitCode {
    let bad_input = error.downcast_ref::<UsageError>().is_some()
        || error
            .downcast_ref::<report::file::RunFileError>()
            .is_some_and(|e| !matches!(e, report::file::RunFileError::Read { .. }));
    if bad_input {
        ExitCode::Usage
    } else {
        ExitCode::Failure
    }
}
