//! Suites: `suite list` and `suite show`, a run from a suite file recording
//! the suite and its expansion, options that override a suite's and add or
//! drop its members, and bad suites refused with their file and line before
//! anything runs.

use crate::common::{feelbench, new_tag, read_json, run, stderr, stdout, LOOPS_PER_MS};
use std::path::Path;

/// A suite of two groups, short enough for a test.
const TWO_GROUPS: &str = r#"# a test suite
name = "pair"
version = 3
summary = "audio and x, briefly"

[settings]
duration = 5
warmup = 0.1

[[group]]
probes = ["audio"]
loads = ["none", "burn"]

[[group]]
probes = ["x"]
loads = ["none"]
"#;

fn write_suite(dir: &Path, text: &str) -> String {
    let path = dir.join("suite.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn suite_list_and_show_print_every_suite_and_its_expansion() {
    let output = run(&["suite", "list"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let list = stdout(&output);
    for name in [
        "default",
        "interbench",
        "resp1",
        "contest",
        "latencytest",
        "lmbench",
        "irman",
        "tiobench",
        "game",
        "all",
    ] {
        assert!(list.lines().any(|l| l.starts_with(name)), "{name}:\n{list}");
    }
    let output = run(&["suite", "show", "interbench"]);
    let show = stdout(&output);
    assert!(
        show.contains(
            "x, audio, video, gaming under none, burn, video, x, write, read, hack, spawn"
        ),
        "{show}"
    );
    let output = run(&["suite", "show", "lmbench", "--toml"]);
    assert!(stdout(&output).contains("name = \"lmbench\""));
}

#[test]
fn a_suite_file_runs_its_groups_with_the_users_options_on_top_and_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_suite(dir.path(), TWO_GROUPS);
    let output = feelbench(&new_tag(), dir.path())
        .args(["run", "--suite-file", &file, "-t", "1", "-x", "burn"])
        .args([
            "-l",
            LOOPS_PER_MS,
            "-q",
            "--noise-check",
            "0",
            "-o",
            "run.json",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    let scenarios: Vec<(String, String)> = run["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["probe"].as_str().unwrap().into(),
                s["load"].as_str().unwrap().into(),
            )
        })
        .collect();
    let expected = [("audio", "none"), ("x", "none")].map(|(p, l)| (p.to_string(), l.to_string()));
    assert_eq!(scenarios, expected, "-x burn drops burn from every group");
    assert_eq!(
        run["settings"]["duration_s"], 1.0,
        "-t after the suite wins"
    );
    assert_eq!(
        run["settings"]["warmup_s"], 0.1,
        "the suite's own setting holds"
    );
    let suite = &run["suite"];
    assert_eq!(
        (suite["name"].as_str(), suite["version"].as_u64()),
        (Some("pair"), Some(3))
    );
    assert_eq!(suite["source"], file.as_str());
    assert_eq!(
        suite["options"],
        serde_json::json!(["--duration", "5", "--warmup", "0.1"])
    );
    assert_eq!(suite["groups"][1]["probes"], serde_json::json!(["x"]));
}

#[test]
fn a_suite_member_that_cannot_run_here_is_named_and_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let text = TWO_GROUPS.replace(r#"loads = ["none"]"#, r#"loads = ["none", "memload"]"#);
    let file = write_suite(dir.path(), &text);
    let output = feelbench(&new_tag(), dir.path())
        .args([
            "run",
            "--suite-file",
            &file,
            "-t",
            "0.3",
            "-x",
            "burn",
            "-X",
            "audio",
        ])
        .args(["-l", LOOPS_PER_MS, "-q", "--noise-check", "0", "-c"])
        .output()
        .unwrap();
    if stdout(&output).contains("memload") {
        // Swap is on here, so memload can run: nothing to leave out.
        crate::common::skip("the machine has swap, so memload is not left out");
        return;
    }
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    assert!(
        said.contains("suite pair: left out here: load memload"),
        "{said}"
    );
}

/// Runs `feelbench run ARGS` and asserts it refused before measuring:
/// exit 2, `expected` said, no table printed.
fn assert_refused(dir: &Path, args: &[&str], expected: &str) {
    let output = feelbench(&new_tag(), dir)
        .arg("run")
        .args(args)
        .args(["-c", "-q"])
        .output()
        .unwrap();
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {said}");
    assert!(said.contains(expected), "{args:?}: {said}");
    assert!(!said.contains("panicked"), "{said}");
    assert!(
        stdout(&output).is_empty(),
        "nothing runs: {}",
        stdout(&output)
    );
}

#[test]
fn bad_suites_are_refused_with_the_file_and_line_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_refused(
        d,
        &["--suite", "nosuch"],
        "unknown suite 'nosuch'; suites: default, interbench",
    );
    let file = write_suite(d, &TWO_GROUPS.replace(r#"["x"]"#, r#"["x", "mouse"]"#));
    assert_refused(
        d,
        &["--suite-file", &file],
        &format!("{file}:15: unknown probe 'mouse'"),
    );
    let file = write_suite(
        d,
        &TWO_GROUPS.replace("duration = 5", "duration = \"soon\""),
    );
    assert_refused(
        d,
        &["--suite-file", &file],
        &format!("{file}:7: duration: invalid value 'soon'"),
    );
    let file = write_suite(d, &TWO_GROUPS.replace("duration = 5", "duration = 0"));
    assert_refused(
        d,
        &["--suite-file", &file],
        &format!("{file}:7: duration: -t/--duration takes"),
    );
    let file = write_suite(d, &TWO_GROUPS.replace("version = 3", "version = 3x"));
    assert_refused(d, &["--suite-file", &file], &format!("{file}:3: "));
    let missing = d.join("missing.toml").display().to_string();
    assert_refused(d, &["--suite-file", &missing], "cannot read suite file");
}

#[test]
fn a_suite_cannot_choose_the_store_and_shows_the_commands_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (setting, line) in [
        (
            "store = \"postgres://lab:Kw7x-secret@db.example/fb\"",
            "store",
        ),
        ("no-store = true", "no-store"),
    ] {
        let file = write_suite(
            d,
            &TWO_GROUPS.replace("duration = 5", &format!("duration = 5\n{setting}")),
        );
        let output = feelbench(&new_tag(), d)
            .args(["run", "--suite-file", &file, "-c", "-q"])
            .output()
            .unwrap();
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{said}");
        assert!(
            said.contains(&format!("{file}:8: {line}: a suite cannot set --{line}")),
            "{said}"
        );
        assert!(!said.contains("Kw7x-secret"), "{said}");
    }
    let file = write_suite(
        d,
        &TWO_GROUPS
            .replace("duration = 5", "duration = 5\njob = \"make -j4\"")
            .replace(
                r#"["none", "burn"]"#,
                r#"["none", "cmd:stress-ng --cpu 2"]"#,
            ),
    );
    let shown = run(&["suite", "show", &file]);
    assert!(
        stdout(&shown).contains("runs commands: --job 'make -j4', --load 'cmd:stress-ng --cpu 2'"),
        "{}",
        stdout(&shown)
    );
}
