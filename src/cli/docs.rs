//! Text generated from the command line's own definition and from the
//! registries: the long help of `--probe` and `--load` (every probe and load
//! with its summary), the closing words of `feelbench --help`, the manual
//! page (`feelbench man`, with clap_mangen) and shell completions
//! (`feelbench completions SHELL`, with clap_complete).

use super::{Cli, UserCommand};
use crate::commands::list;
use crate::exit::EXIT_STATUS_HELP;
use clap::{CommandFactory as _, Subcommand as _};
use clap_complete::Shell;
use clap_mangen::roff::{roman, Roff};
use clap_mangen::Man;
use std::io::Write;

/// Short help of `--probe`.
pub const PROBE_HELP: &str = "Probes to measure, comma-separated (without it, --load, -W and -w: the default suite; with --load only: the periodic probes)";
/// Short help of `--load`.
pub const LOAD_HELP: &str =
    "Loads to measure under, comma-separated (with --probe only: interbench's standard set)";

/// Long help of `--probe`: its short help, then every probe.
pub fn probe_option_help() -> String {
    format!(
        "{PROBE_HELP}, from:\n{}",
        list::render_lines(&list::probes()).trim_end()
    )
}

/// Long help of `--load`: its short help, then every load and mix.
pub fn load_option_help() -> String {
    format!(
        "{LOAD_HELP}, from these (combined with +, e.g. burn+write):\n{}",
        list::render_lines(&list::loads()).trim_end()
    )
}

/// How to install the manual page and the completions.
const INSTALL_HELP: &str = "The manual page and shell completions: feelbench man > /usr/local/share/man/man1/feelbench.1; feelbench completions bash > /etc/bash_completion.d/feelbench (or zsh, fish, elvish, powershell).";

/// The closing words of `feelbench --help`: the exit status and how to
/// install the manual page and the completions.
pub fn after_long_help() -> String {
    format!("{EXIT_STATUS_HELP}\n\n{INSTALL_HELP}")
}

/// The manual page, in roff: the program, then one section per command
/// with its synopsis, description and options, then the exit status.
pub fn man_page() -> String {
    // Commands have their sections here: clap's `help` command has none.
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    let man = Man::new(command.clone());
    let mut out = Vec::new();
    let mut write = || -> std::io::Result<()> {
        man.render_title(&mut out)?;
        man.render_name_section(&mut out)?;
        man.render_synopsis_section(&mut out)?;
        man.render_description_section(&mut out)?;
        man.render_options_section(&mut out)?;
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
            render_command(sub, &mut out)?;
        }
        Roff::new()
            .control("SH", ["EXIT STATUS"])
            .text([roman(EXIT_STATUS_HELP)])
            .control("SH", ["MANUAL AND COMPLETIONS"])
            .text([roman(INSTALL_HELP)])
            .to_writer(&mut out)?;
        man.render_version_section(&mut out)
    };
    write().expect("writing to memory does not fail");
    String::from_utf8(out).expect("roff is UTF-8")
}

/// One command's section: its name as the heading, and its synopsis,
/// description and option groups as subsections.
fn render_command(sub: &clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    let name = sub.get_bin_name().unwrap_or(sub.get_name()).to_uppercase();
    Roff::new().control("SH", [name.as_str()]).to_writer(out)?;
    let man = Man::new(sub.clone());
    let mut part = Vec::new();
    man.render_synopsis_section(&mut part)?;
    man.render_description_section(&mut part)?;
    man.render_options_section(&mut part)?;
    let part = String::from_utf8_lossy(&part);
    for line in part.lines() {
        // A section of the command's own page is a subsection of this one.
        // Text lines never start with a dot: roff escapes them.
        let line = match line.strip_prefix(".SH ") {
            Some(heading) => format!(".SS {heading}"),
            None => line.to_string(),
        };
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The completion script for `shell`, for the commands a user types (the
/// shells' generators would offer the hidden worker too).
pub fn completions(shell: Shell) -> String {
    let mut command = UserCommand::augment_subcommands(clap::Command::new("feelbench"))
        .version(env!("CARGO_PKG_VERSION"))
        .propagate_version(true);
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "feelbench", &mut out);
    String::from_utf8(out).expect("completion scripts are UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The commands a user types (not the internal worker).
    fn commands() -> Vec<String> {
        Cli::command()
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name().to_string())
            .collect()
    }

    #[test]
    fn the_manual_page_has_a_section_for_every_command() {
        let page = man_page();
        assert!(page.contains("\n.TH feelbench 1 "), "no title in {page}");
        let names = commands();
        assert!(names.len() >= 6, "{names:?}");
        for name in names {
            let heading = format!(".SH \"FEELBENCH {}\"", name.to_uppercase());
            assert!(page.contains(&heading), "no {heading} in the page");
        }
        for text in [
            ".SH \"EXIT STATUS\"",
            "\\-\\-rt\\-priority",
            "feelbench man",
        ] {
            assert!(page.contains(text), "no {text} in the page");
        }
    }

    #[test]
    fn the_options_of_probes_and_loads_list_every_entry() {
        let probes = probe_option_help();
        for entry in list::probes() {
            assert!(probes.contains(&entry.summary), "{}", entry.name);
        }
        let loads = load_option_help();
        for entry in list::loads() {
            assert!(loads.contains(&entry.summary), "{}", entry.name);
        }
    }

    #[test]
    fn completions_cover_the_commands_in_each_shell() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let script = completions(shell);
            for name in commands() {
                assert!(script.contains(&name), "{shell}: no {name}");
            }
            assert!(script.contains("rt-priority"), "{shell}");
            assert!(!script.contains("worker"), "{shell}");
        }
    }
}
