//! `feelbench rtapp check|list`: rt-app's own example files accepted or
//! refused with a one-line reason naming a key and a line, malformed files
//! refused with exit 2, a key rt-app ignores named with its line (refused
//! with `--strict`), and the shipped workloads understood by feelbench and
//! run by the real rt-app.

use crate::common::{self, run, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where Debian's rt-app package puts rt-app's example files.
const EXAMPLES: &str = "/usr/share/doc/rt-app/examples";

/// The example files the research note's Tier 1 and Tier 2 name: the
/// grammar feelbench runs, so each must be accepted.
const MUST_ACCEPT: [&str; 17] = [
    "template.json",
    "spreading-tasks.json",
    "cpufreq_governor_efficiency/dvfs.json",
    "tutorial/example1.json",
    "tutorial/example2.json",
    "tutorial/example3.json",
    "tutorial/example7.json",
    "tutorial/example8.json",
    "tutorial/example4.json",
    "tutorial/example5.json",
    "tutorial/example6.json",
    "mp3-short.json",
    "mp3-long.json",
    "video-short.json",
    "video-long.json",
    "browser-short.json",
    "browser-long.json",
];

/// The shipped workloads' names.
const SHIPPED: [&str; 4] = ["periodic", "audio-chain", "compositor", "browser-tab"];

fn json_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            json_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "json") {
            found.push(path);
        }
    }
}

/// Whether a refusal is one line `FILE:LINE: ...: KEY: reason`.
fn names_key_and_line(message: &str, file: &str) -> bool {
    let Some(rest) = message.trim_end().split_once(&format!("{file}:")) else {
        return false;
    };
    let line_ok = rest
        .1
        .split(':')
        .next()
        .is_some_and(|n| n.parse::<usize>().is_ok_and(|n| n >= 1));
    !message.trim_end().contains('\n') && line_ok && rest.1.matches(": ").count() >= 3
}

#[test]
fn rt_apps_examples_are_accepted_or_refused_with_key_and_line() {
    if !Path::new(EXAMPLES).is_dir() {
        common::skip(&format!("{EXAMPLES} is missing (apt-get install rt-app)"));
        return;
    }
    let mut files = Vec::new();
    json_files(Path::new(EXAMPLES), &mut files);
    files.sort();
    assert!(files.len() >= 10, "{files:?}");
    let mut accepted = Vec::new();
    for file in &files {
        let name = file.to_str().unwrap();
        let output = run(&["rtapp", "check", name]);
        match output.status.code() {
            Some(0) => {
                let out = stdout(&output);
                assert!(
                    out.contains("as a probe: ") && out.contains("as a load: "),
                    "{out}"
                );
                accepted.push(
                    file.strip_prefix(EXAMPLES)
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .to_string(),
                );
            }
            Some(2) => {
                let message = stderr(&output);
                assert!(names_key_and_line(&message, name), "{name}: {message}");
            }
            code => panic!("{name}: exit {code:?}: {}", stderr(&output)),
        }
    }
    for must in MUST_ACCEPT {
        let present = files.iter().any(|f| f.ends_with(must));
        assert!(
            !present || accepted.iter().any(|a| a.ends_with(must)),
            "{must} refused"
        );
    }
}

#[test]
fn malformed_files_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("broken.json", "{\n\"tasks\": {\n\"t\": {\"run\": 1\n"),
        (
            "unknown.json",
            "{\"tasks\": {\"t\": {\n\"run\": 1,\n\"frobnicate\": 5}}}",
        ),
        (
            "deadline.json",
            "{\"tasks\": {\"t\": {\n\"policy\": \"SCHED_DEADLINE\",\n\"run\": 1}}}",
        ),
        ("notasks.json", "{\"global\": {\"duration\": 1}}"),
    ];
    for (file, text) in cases {
        let path = dir.path().join(file);
        std::fs::write(&path, text).unwrap();
        let name = path.to_str().unwrap();
        let output = run(&["rtapp", "check", "--strict", name]);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{file}: {message}");
        assert!(stdout(&output).is_empty(), "{file}");
        assert_eq!(message.trim_end().lines().count(), 1, "{file}: {message}");
        assert!(message.contains(&format!("{name}:")), "{file}: {message}");
    }
    // Without --strict, the key rt-app ignores is named and left out.
    let unknown = dir.path().join("unknown.json");
    let name = unknown.to_str().unwrap();
    let output = run(&["rtapp", "check", name]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(
        out.contains(&format!("{name}:3: task t: frobnicate: unknown event")),
        "{out}"
    );
    let missing = run(&["rtapp", "check", "/nonexistent/w.json"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("audio-chain"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn a_task_that_would_spin_is_a_load_not_a_probe() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spin.json");
    std::fs::write(
        &path,
        "{\"tasks\": {\"hog\": {\"loop\": -1, \"run\": 1000}}}",
    )
    .unwrap();
    let output = run(&["rtapp", "check", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.contains("as a probe: no: "), "{out}");
    assert!(out.contains("as a load:  yes"), "{out}");
}

#[test]
fn shipped_workloads_are_listed_and_understood() {
    let list = stdout(&run(&["rtapp", "list"]));
    for name in SHIPPED {
        assert!(list.lines().any(|l| l.starts_with(name)), "{list}");
        let output = run(&["rtapp", "check", name]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let out = stdout(&output);
        assert!(out.contains("as a probe: yes"), "{name}: {out}");
        assert!(out.contains("timer"), "{name}: {out}");
    }
}

#[test]
fn real_rt_app_runs_the_shipped_workloads() {
    if Command::new("rt-app").arg("--help").output().is_err() {
        common::skip("rt-app is not installed (apt-get install rt-app)");
        return;
    }
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/rtapp");
    for name in SHIPPED {
        let dir = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(shipped.join(format!("{name}.json"))).unwrap();
        // One second, and a fixed ns per loop: rt-app's calibration takes
        // seconds and the grammar is what is checked here.
        let short = text
            .replace("\"duration\" : 10", "\"duration\" : 1")
            .replace("\"calibration\" : \"CPU0\"", "\"calibration\" : 100");
        assert_eq!(
            short.matches(": 100,").count(),
            1,
            "{name}: no CPU0 calibration"
        );
        assert!(
            short.contains("\"duration\" : 1,"),
            "{name}: its duration is not 10 s"
        );
        let file = dir.path().join("w.json");
        std::fs::write(&file, short).unwrap();
        let output = Command::new("rt-app")
            .arg(&file)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        let mut logs = 0;
        for entry in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let log = entry.path();
            if log.extension().is_some_and(|e| e == "log") {
                let lines = std::fs::read_to_string(&log).unwrap().lines().count();
                assert!(lines > 2, "{name}: {} has {lines} lines", log.display());
                logs += 1;
            }
        }
        assert!(logs >= 1, "{name}: rt-app wrote no log");
    }
}
