//! The command line: bad input gives a clear message and exit code 2; the
//! informational commands work.

use crate::common::{run, stderr, stdout};

fn assert_usage_error(args: &[&str], expected: &str) {
    let output = run(args);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{args:?}: {}",
        stderr(&output)
    );
    let message = stderr(&output);
    assert!(message.contains(expected), "{args:?}: {message}");
    assert!(!message.contains("panicked"), "{args:?}: {message}");
}

#[test]
fn unknown_names_are_refused_with_the_valid_ones() {
    assert_usage_error(
        &["run", "--probe", "audoi"],
        "valid probes: x, audio, video, gaming, game, custom",
    );
    assert_usage_error(
        &["run", "--load", "none,brun"],
        "unknown load 'brun'; valid loads: none, burn",
    );
    assert_usage_error(&["run", "-X", "nope"], "unknown probe 'nope'");
}

#[test]
fn bad_values_are_refused() {
    assert_usage_error(&["run", "-t", "0"], "-t/--duration takes seconds");
    assert_usage_error(&["run", "-t", "five"], "invalid value 'five'");
    assert_usage_error(&["run", "--probe", "custom"], "--custom-cpu");
    assert_usage_error(
        &["run", "--load", "custom"],
        "load custom: the custom simulation needs --custom-cpu",
    );
    assert_usage_error(
        &["run", "-C", "5", "-I", "5000000"],
        "-I/--custom-interval takes 100 to 1000000",
    );
    assert_usage_error(&["run", "-C", "10"], "--custom-interval");
    assert_usage_error(&["run", "-B", "-30"], "-B/--nice takes a nice value");
    assert_usage_error(&["run", "--frobnicate"], "unexpected argument");
    assert_usage_error(&["run", "-c", "-o", "x.json"], "cannot be used with");
}

#[test]
fn report_refuses_files_that_are_not_runs() {
    let dir = tempfile::tempdir().unwrap();
    let corrupt = dir.path().join("corrupt.json");
    std::fs::write(&corrupt, "{ \"schema\": ").unwrap();
    assert_usage_error(&["report", corrupt.to_str().unwrap()], "is not JSON");
    let foreign = dir.path().join("foreign.json");
    std::fs::write(&foreign, r#"{"name": "other tool"}"#).unwrap();
    assert_usage_error(
        &["report", foreign.to_str().unwrap()],
        "is not a feelbench run",
    );
    let newer = dir.path().join("newer.json");
    std::fs::write(&newer, r#"{"schema": "feelbench.run/9"}"#).unwrap();
    assert_usage_error(
        &["report", newer.to_str().unwrap()],
        "newer than this feelbench reads",
    );
    let missing = dir.path().join("missing.json");
    let missing = missing.to_str().unwrap();
    assert_usage_error(&["report", missing], "cannot read");
    let message = stderr(&run(&["report", missing]));
    assert_eq!(
        message.trim_end(),
        format!("feelbench: cannot read {missing}: there is no such file")
    );
}

#[test]
fn each_cause_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let corrupt = dir.path().join("corrupt.json");
    std::fs::write(&corrupt, "{ \"schema\": ").unwrap();
    let message = stderr(&run(&["report", corrupt.to_str().unwrap()]));
    assert_eq!(message.lines().count(), 1, "{message}");
    assert_eq!(message.matches("EOF while parsing").count(), 1, "{message}");
}

#[test]
fn list_names_every_probe_and_load() {
    let output = run(&["list"]);
    assert!(output.status.success());
    let text = stdout(&output);
    for name in [
        "x",
        "audio",
        "video",
        "gaming",
        "custom",
        "none",
        "burn",
        "write",
        "smallwrite",
        "largewrite",
        "read",
        "compile",
    ] {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(name)),
            "{name} missing:\n{text}"
        );
    }
}

#[test]
fn calibrate_prints_loops_per_ms() {
    let output = run(&["calibrate", "--no-save"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let value: f64 = text
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no loops_per_ms in {text}"));
    assert!(value > 0.0);
}
