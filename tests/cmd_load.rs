//! The `cmd:` load: an external command's whole process tree is accounted
//! and stopped, even what left the process group; a command that ends early
//! fails its scenario.

mod common;
use common::{feelbench, new_tag, read_json, stderr, tagged_processes, LOOPS_PER_MS};

fn run_cmd(tag: &str, dir: &std::path::Path, command: &str) -> serde_json::Value {
    let output = feelbench(tag, dir)
        .args(["run", "--probe", "audio", "--load", command, "-t", "1.5"])
        .args([
            "--warmup",
            "0.2",
            "-l",
            LOOPS_PER_MS,
            "-q",
            "-o",
            "run.json",
        ])
        .output()
        .unwrap();
    assert!(!stderr(&output).contains("panicked"), "{}", stderr(&output));
    read_json(&dir.join("run.json"))
}

#[test]
fn a_command_tree_is_accounted_and_nothing_of_it_survives() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let run = run_cmd(
        &tag,
        dir.path(),
        "cmd:sh -c 'yes >/dev/null & setsid yes >/dev/null & wait'",
    );
    let scenario = &run["scenarios"][0];
    assert_eq!(scenario["status"], "ok", "{scenario}");
    let work = &scenario["load_work"][0];
    assert_eq!(work["unit"], "CPU-s");
    assert!(work["rate_per_s"].as_f64().unwrap() > 0.1, "{work}");
    assert_eq!(tagged_processes(&tag), Vec::<u32>::new());
}

#[test]
fn a_command_that_ends_early_fails_its_scenario() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let run = run_cmd(&tag, dir.path(), "cmd:sleep 0.1");
    let scenario = &run["scenarios"][0];
    assert_eq!(scenario["status"], "failed");
    let error = scenario["error"].as_str().unwrap();
    assert!(error.contains("the command ended"), "{error}");
}

#[test]
fn a_command_that_cannot_start_fails_with_its_name() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let run = run_cmd(&tag, dir.path(), "cmd:/nonexistent/tool --flag");
    let error = run["scenarios"][0]["error"].as_str().unwrap().to_string();
    assert!(error.contains("cannot start /nonexistent/tool"), "{error}");
}
