//! `feelbench suite list` and `feelbench suite show`: the suites and what
//! one expands to, as options and scenarios.

use super::{Origin, Setting, Suite, SuiteError, BUILT_IN};
use std::fmt::Write as _;

/// One line per built-in suite: name, version, scenarios and summary.
pub fn list() -> Result<String, SuiteError> {
    let mut out = format!(
        "{:<12} {:>7} {:>9}  summary\n",
        "suite", "version", "scenarios"
    );
    for (name, _) in BUILT_IN {
        let suite = Suite::built_in(name)?;
        let _ = writeln!(
            out,
            "{:<12} {:>7} {:>9}  {}",
            suite.name,
            suite.version,
            scenario_count(&suite),
            suite.summary
        );
    }
    out += "\n`feelbench suite show NAME` prints what a suite runs; `feelbench run --suite NAME` runs it.\n";
    Ok(out)
}

/// Probes × loads of every group (before the command line adds or drops
/// members, and counting a scenario two groups share twice).
fn scenario_count(suite: &Suite) -> usize {
    suite
        .groups
        .iter()
        .map(|g| g.probes.len() * g.loads.len())
        .sum()
}

/// What `suite` runs: its options, root-only options, groups, and the
/// command that runs it.
pub fn show(suite: &Suite) -> String {
    let mut out = format!(
        "suite {}, version {} ({})\n{}\n\n",
        suite.name, suite.version, suite.origin, suite.summary
    );
    let options = |settings: &[Setting]| {
        let args: Vec<String> = settings.iter().flat_map(Setting::args).collect();
        match args.is_empty() {
            true => "(none)".to_string(),
            false => shell_words::join(args),
        }
    };
    let _ = writeln!(out, "options:       {}", options(&suite.settings));
    if !suite.root_settings.is_empty() {
        let _ = writeln!(
            out,
            "as root also:  {} (left out, with what needs them, otherwise)",
            options(&suite.root_settings)
        );
    }
    let commands = commands(suite);
    let _ = writeln!(
        out,
        "runs commands: {}",
        match commands.is_empty() {
            true => "none".to_string(),
            false => format!(
                "{} (as the user running feelbench, root included)",
                commands.join(", ")
            ),
        }
    );
    for (i, group) in suite.groups.iter().enumerate() {
        let repeat = group
            .repeat
            .map_or_else(String::new, |n| format!(", each measured {n} times"));
        let _ = writeln!(
            out,
            "group {}:       {} under {}{repeat}",
            i + 1,
            group.probes.join(", "),
            group.loads.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\n{} scenarios. Options given after --suite override the suite's; --probe/--load replace\nevery group's list, -W/-X and -w/-x add or drop a probe or load in every group.",
        scenario_count(suite)
    );
    let run = match &suite.origin {
        Origin::BuiltIn => format!("--suite {}", suite.name),
        Origin::File(path) => format!(
            "--suite-file {}",
            shell_words::quote(&path.display().to_string())
        ),
    };
    let _ = writeln!(out, "Run it: feelbench run {run}");
    out
}

/// The options of `run` whose value is a command it runs (`/bin/sh -c`).
const COMMAND_OPTIONS: [&str; 2] = ["command", "job"];

/// The commands `suite` runs, as arguments of `run`: the values of its
/// command options (root-only ones too) and its `cmd:` loads, each once.
fn commands(suite: &Suite) -> Vec<String> {
    let options = suite
        .settings
        .iter()
        .chain(&suite.root_settings)
        .filter(|s| COMMAND_OPTIONS.contains(&s.key.as_str()))
        .flat_map(|s| {
            let option = format!("--{}", s.key);
            s.values
                .iter()
                .map(move |value| shell_words::join([option.as_str(), value.as_str()]))
        });
    let loads = suite
        .groups
        .iter()
        .flat_map(|g| &g.loads)
        .filter(|load| load.contains("cmd:"))
        .map(|load| shell_words::join(["--load", load.as_str()]));
    let mut commands = Vec::new();
    for command in options.chain(loads) {
        if !commands.contains(&command) {
            commands.push(command);
        }
    }
    commands
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_names_every_built_in_suite() {
        let text = list().unwrap();
        for (name, _) in BUILT_IN {
            assert!(
                text.lines().any(|l| l.starts_with(name)),
                "{name} missing:\n{text}"
            );
        }
    }

    #[test]
    fn show_gives_options_groups_and_the_command() {
        let text = show(&Suite::built_in("resp1").unwrap());
        assert!(
            text.contains("options:       --file-size 5G --response-gap 20 --response-points 5"),
            "{text}"
        );
        assert!(
            text.contains("as root also:  --mem-limit 1G --swap 2G"),
            "{text}"
        );
        assert!(
            text.contains("group 1:       response under none, smallwrite"),
            "{text}"
        );
        assert!(text.contains("7 scenarios"), "{text}");
        assert!(text.contains("runs commands: none"), "{text}");
        assert!(text.contains("feelbench run --suite resp1"), "{text}");
    }

    #[test]
    fn show_names_the_commands_a_suite_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(
            &path,
            "name = \"mine\"\nversion = 1\nsummary = \"s\"\n[settings]\njob = \"make -j4\"\n\
             [root-settings]\ncommand = \"sync\"\n[[group]]\nprobes = [\"audio\"]\n\
             loads = [\"none\", \"cmd:stress-ng --cpu 2\"]\n[[group]]\nprobes = [\"x\"]\n\
             loads = [\"cmd:stress-ng --cpu 2\"]\n",
        )
        .unwrap();
        let text = show(&Suite::from_file(&path).unwrap());
        assert!(
            text.contains(
                "runs commands: --job 'make -j4', --command sync, --load 'cmd:stress-ng --cpu 2' \
                 (as the user running feelbench, root included)"
            ),
            "{text}"
        );
    }
}
