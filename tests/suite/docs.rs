//! Generated documentation: the README's probe and load tables are what
//! `feelbench list --format md` writes from the registries, the manual page
//! renders and has a section for every command, and the shells' completion
//! scripts are produced.

use crate::common::{run, skip, stderr, stdout};
use std::path::Path;
use std::process::{Command, Stdio};

const BEGIN: &str = "<!-- begin: feelbench list --format md -->\n";
const END: &str = "<!-- end: feelbench list --format md -->";

/// `args`' standard output, after checking that it succeeded.
fn output_of(args: &[&str]) -> String {
    let output = run(args);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    stdout(&output)
}

#[test]
fn readme_tables_are_what_the_registries_generate() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md is readable");
    let start = readme.find(BEGIN).expect("README marks the tables' start") + BEGIN.len();
    let end = readme.find(END).expect("README marks the tables' end");
    let generated = output_of(&["list", "--format", "md"]);
    assert_eq!(
        readme[start..end],
        generated,
        "README's tables differ from the registries: replace them with `feelbench list --format md`"
    );
}

/// The commands `feelbench --help` lists, but `help`.
fn commands() -> Vec<String> {
    let help = output_of(&["--help"]);
    let listed = help
        .split("Commands:\n")
        .nth(1)
        .expect("--help lists the commands");
    listed
        .lines()
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn the_manual_page_renders_with_a_section_per_command() {
    let page = output_of(&["man"]);
    let commands = commands();
    assert!(commands.len() >= 6, "{commands:?}");
    for name in &commands {
        let heading = format!(".SH \"FEELBENCH {}\"", name.to_uppercase());
        assert!(page.contains(&heading), "no {heading} in the page");
    }
    let Ok(mut groff) = Command::new("groff")
        .args(["-k", "-man", "-Tutf8", "-ww", "-z"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        skip("groff is not installed: the manual page was not rendered");
        return;
    };
    use std::io::Write as _;
    groff
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let rendered = groff.wait_with_output().unwrap();
    assert!(rendered.status.success());
    let warnings = String::from_utf8_lossy(&rendered.stderr);
    assert!(warnings.is_empty(), "groff warns: {warnings}");
}

#[test]
fn completions_are_produced_for_bash_zsh_and_fish() {
    let commands = commands();
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef feelbench"),
        ("fish", "complete -c feelbench"),
    ] {
        let script = output_of(&["completions", shell]);
        assert!(script.contains(marker), "{shell}: no {marker}");
        for name in &commands {
            assert!(script.contains(name.as_str()), "{shell}: no {name}");
        }
    }
    let script = output_of(&["completions", "bash"]);
    match Command::new("bash").args(["-n", "-c", &script]).output() {
        Ok(checked) => assert!(checked.status.success(), "{}", stderr(&checked)),
        Err(_) => skip("no bash: the bash script's syntax was not checked"),
    }
}
