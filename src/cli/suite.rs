//! Applying a suite to `feelbench run`: which suite the options ask for
//! (`--suite`, `--suite-file`, or the `default` suite when no probe or
//! load is named), each of its settings checked against `run`'s options
//! with its file and line, and the command line parsed again with the
//! suite's options first, so that the user's own options, which come
//! after, override them.

use super::run::{AppliedSuite, RunArgs};
use super::{Cli, Command, Machine, UserCommand};
use crate::commands::suite::{FileError, Setting, Suite};
use crate::exit::UsageError;
use clap::{CommandFactory, Parser};
use std::ffi::OsString;

/// The suite the run's options ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Choice {
    Named(String),
    File(std::path::PathBuf),
}

/// The name of the suite a run with no probes or loads named runs.
const DEFAULT_SUITE: &str = "default";

/// Options a suite cannot give: the groups choose probes and loads, and
/// what a run writes, prints and where it is stored are the user's.
const NOT_FOR_SUITES: [&str; 15] = [
    "probe",
    "load",
    "with-probe",
    "without-probe",
    "with-load",
    "without-load",
    "suite",
    "suite-file",
    "full",
    "output",
    "console-only",
    "comment",
    "quiet",
    "store",
    "no-store",
];

impl RunArgs {
    /// The suite these options ask for, if any.
    fn suite_choice(&self) -> Option<Choice> {
        let s = &self.selection;
        if let Some(name) = &s.suite {
            return Some(Choice::Named(name.clone()));
        }
        if let Some(path) = &s.suite_file {
            return Some(Choice::File(path.clone()));
        }
        let named = s.probes.is_some()
            || s.loads.is_some()
            || !s.with_probes.is_empty()
            || !s.with_loads.is_empty();
        (!named && !self.timing.full).then(|| Choice::Named(DEFAULT_SUITE.to_string()))
    }
}

/// `command` with the suite its options ask for applied: `argv` (the
/// process's arguments, `command` parsed from them) parsed again with the
/// suite's settings before the user's options.
pub fn resolve(
    command: UserCommand,
    argv: Vec<OsString>,
    machine: &Machine,
) -> Result<UserCommand, UsageError> {
    let UserCommand::Run(args) = &command else {
        return Ok(command);
    };
    let Some(choice) = args.suite_choice() else {
        return Ok(command);
    };
    let suite = match &choice {
        Choice::Named(name) => Suite::built_in(name),
        Choice::File(path) => Suite::from_file(path),
    }
    .map_err(UsageError::input)?;
    for setting in suite.settings.iter().chain(&suite.root_settings) {
        check_setting(setting, machine).map_err(UsageError::input)?;
    }
    let root = nix::unistd::geteuid().is_root();
    let args_of =
        |settings: &[Setting]| -> Vec<String> { settings.iter().flat_map(Setting::args).collect() };
    let mut options = args_of(&suite.settings);
    let root_options = args_of(&suite.root_settings);
    let root_left_out = match root {
        true => {
            options.extend(root_options);
            Vec::new()
        }
        false => root_options,
    };
    let Command::User(UserCommand::Run(mut args)) = Cli::parse_from(splice(argv, &options)).command
    else {
        unreachable!("the arguments parsed as `run` before the suite's were put in");
    };
    args.applied_suite = Some(AppliedSuite {
        suite,
        options,
        root_left_out,
    });
    Ok(UserCommand::Run(args))
}

/// `argv` (`feelbench run ...`) with `options` put right after `run`.
fn splice(argv: Vec<OsString>, options: &[String]) -> Vec<OsString> {
    let at = argv
        .iter()
        .position(|a| a == "run")
        .map_or(argv.len(), |i| i + 1);
    let mut spliced = argv;
    let tail = spliced.split_off(at);
    spliced.extend(options.iter().map(OsString::from));
    spliced.extend(tail);
    spliced
}

/// Whether `setting` is an option of `run` a suite may give, with a value
/// it takes: checked alone, as `feelbench run --KEY VALUE`, by the same
/// parser and checks as the command line.
fn check_setting(setting: &Setting, machine: &Machine) -> Result<(), FileError> {
    let key = setting.key.as_str();
    if NOT_FOR_SUITES.contains(&key) {
        return Err(setting.error(format!(
            "{key}: a suite cannot set --{key} (its [[group]]s choose probes and loads; output and the store are the user's)"
        )));
    }
    let command = Cli::command();
    let run = command
        .find_subcommand("run")
        .expect("feelbench has a run subcommand");
    let Some(option) = run.get_arguments().find(|a| a.get_long() == Some(key)) else {
        return Err(setting.error(format!("{key}: feelbench run has no option --{key}")));
    };
    let is_switch = !option.get_action().takes_values();
    if is_switch != setting.switch {
        return Err(setting.error(match is_switch {
            true => format!("{key}: --{key} is a switch: true or false"),
            false => format!("{key}: --{key} takes a value, not true or false"),
        }));
    }
    let argv = ["feelbench", "run"]
        .into_iter()
        .map(String::from)
        .chain(setting.args());
    let parsed = Cli::try_parse_from(argv).map_err(|e| {
        let message = e.to_string();
        let first = message.lines().next().unwrap_or_default();
        setting.error(format!("{key}: {}", first.trim_start_matches("error: ")))
    })?;
    let Command::User(UserCommand::Run(args)) = parsed.command else {
        unreachable!("parsed as run");
    };
    args.into_config(machine)
        .map(drop)
        .map_err(|e| setting.error(format!("{key}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        Machine {
            cpus: 2,
            free_swap_bytes: 0,
            online_cpus: None,
        }
    }

    fn setting(key: &str, values: &[&str], switch: bool) -> Setting {
        Setting {
            key: key.to_string(),
            values: values.iter().map(|v| v.to_string()).collect(),
            switch,
            file: "s.toml".to_string(),
            line: 9,
        }
    }

    fn choice(args: &[&str]) -> Option<Choice> {
        let argv = ["feelbench", "run"].iter().chain(args);
        let Command::User(UserCommand::Run(run)) = Cli::try_parse_from(argv).unwrap().command
        else {
            panic!("not a run");
        };
        run.suite_choice()
    }

    #[test]
    fn the_default_suite_runs_unless_probes_loads_or_a_suite_are_named() {
        let default = Some(Choice::Named(DEFAULT_SUITE.into()));
        assert_eq!(choice(&[]), default);
        assert_eq!(choice(&["-t", "3", "-X", "job", "-x", "burn"]), default);
        assert_eq!(choice(&["--probe", "x"]), None);
        assert_eq!(choice(&["-w", "burn"]), None);
        assert_eq!(choice(&["--full"]), None);
        assert_eq!(
            choice(&["--suite", "resp1"]),
            Some(Choice::Named("resp1".into()))
        );
        assert_eq!(
            choice(&["--suite-file", "a.toml"]),
            Some(Choice::File("a.toml".into()))
        );
    }

    #[test]
    fn the_suites_options_go_right_after_run() {
        let argv = ["feelbench", "run", "--suite", "x", "-t", "2"]
            .map(OsString::from)
            .to_vec();
        let spliced = splice(argv, &["-t".into(), "4".into()]);
        assert_eq!(
            spliced,
            ["feelbench", "run", "-t", "4", "--suite", "x", "-t", "2"].map(OsString::from)
        );
    }

    #[test]
    fn a_setting_is_checked_as_the_command_line_would() {
        assert_eq!(
            check_setting(&setting("duration", &["4"], false), &machine()),
            Ok(())
        );
        let bad = check_setting(&setting("file-size", &["lots"], false), &machine()).unwrap_err();
        assert!(
            bad.to_string()
                .starts_with("s.toml:9: file-size: invalid value 'lots'"),
            "{bad}"
        );
        let range = check_setting(&setting("job-size", &["500"], false), &machine()).unwrap_err();
        assert!(range.to_string().contains("--job-size takes"), "{range}");
        let unknown = check_setting(&setting("colour", &["red"], false), &machine()).unwrap_err();
        assert!(
            unknown.to_string().contains("no option --colour"),
            "{unknown}"
        );
        let group = check_setting(&setting("load", &["burn"], false), &machine()).unwrap_err();
        assert!(group.to_string().contains("cannot set --load"), "{group}");
        for (key, values, switch) in [
            ("store", &["postgres://lab:s3cret@db/fb"][..], false),
            ("no-store", &["true"][..], true),
        ] {
            let store = check_setting(&setting(key, values, switch), &machine()).unwrap_err();
            assert!(
                store.to_string().contains("the store are the user's"),
                "{store}"
            );
            assert!(!store.to_string().contains("s3cret"), "{store}");
        }
        let switch = check_setting(&setting("rt", &["1"], false), &machine()).unwrap_err();
        assert!(switch.to_string().contains("is a switch"), "{switch}");
    }

    #[test]
    fn every_built_in_suites_settings_are_options_run_takes() {
        for (name, _) in crate::commands::suite::BUILT_IN {
            let suite = Suite::built_in(name).unwrap();
            for s in suite.settings.iter().chain(&suite.root_settings) {
                check_setting(s, &machine()).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
    }
}
