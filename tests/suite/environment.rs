//! The environment in the run document, `--expect` refusing on a mismatch
//! or an unknown key (exit code 2, before measuring), and `report --env`.

use crate::common::{feelbench, new_tag, read_json, stderr, stdout, LOOPS_PER_MS};

/// The short run every test here makes, writing `DIR/run.json`.
fn run_args(dir: &std::path::Path) -> Vec<String> {
    let file = dir.join("run.json").display().to_string();
    [
        "run",
        "-l",
        LOOPS_PER_MS,
        "-q",
        "-t",
        "0.5",
        "--warmup",
        "0",
        "--probe",
        "audio",
        "--load",
        "none",
        "-o",
        &file,
    ]
    .map(String::from)
    .to_vec()
}

fn release() -> String {
    nix::sys::utsname::uname()
        .unwrap()
        .release()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn the_run_records_the_environment_and_report_env_prints_it() {
    let dir = tempfile::tempdir().unwrap();
    let output = feelbench(&new_tag(), dir.path())
        .args(run_args(dir.path()))
        .args(["--expect", &format!("kernel_release={}", release())])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    let env = &run["environment"];
    assert_eq!(env["kernel_release"], release().as_str());
    assert_eq!(env["feelbench_version"], env!("CARGO_PKG_VERSION"));
    assert!(env["cpus"].as_u64().unwrap() >= 1, "{env}");
    assert!(env["workdir_fs"].is_string(), "{env}");
    // Opened by the run itself: permitted or not, never unknown.
    assert!(env["task_clock"].is_boolean(), "{env}");

    let report = feelbench(&new_tag(), dir.path())
        .args(["report", "--env"])
        .arg(dir.path().join("run.json"))
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", stderr(&report));
    let text = stdout(&report);
    let line = text
        .lines()
        .find(|l| l.starts_with("kernel_release:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(line.split_whitespace().nth(1), Some(release().as_str()));
    assert!(
        text.lines().any(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words == ["task_clock:", "yes"] || words == ["task_clock:", "no"]
        }),
        "{text}"
    );
}

#[test]
fn a_mismatched_expectation_refuses_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let output = feelbench(&new_tag(), dir.path())
        .args(run_args(dir.path()))
        .args(["--expect", "cpus=9999", "--expect", "sched_ext=enabled"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(
        err.contains("--expect cpus=9999: this system has cpus="),
        "{err}"
    );
    assert!(err.contains("--expect sched_ext=enabled"), "{err}");
    assert!(!dir.path().join("run.json").exists(), "nothing measured");
}

#[test]
fn an_unknown_key_exits_2_listing_the_keys() {
    let dir = tempfile::tempdir().unwrap();
    let output = feelbench(&new_tag(), dir.path())
        .args(run_args(dir.path()))
        .args(["--expect", "nosuchkey=1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let err = stderr(&output);
    assert!(err.contains("nosuchkey"), "{err}");
    assert!(
        err.contains("governor") && err.contains("io_scheduler"),
        "{err}"
    );
}

#[test]
fn a_busy_machine_is_named_and_strict_refuses() {
    let dir = tempfile::tempdir().unwrap();
    // Other tests' loads share the CPUs: as root the busy loop runs at
    // nice -20, so it stays among the busiest processes named.
    let nice = if nix::unistd::geteuid().is_root() {
        "-20"
    } else {
        "0"
    };
    let mut busy = std::process::Command::new("nice")
        .args(["-n", nice, "sh", "-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let output = feelbench(&new_tag(), dir.path())
        .args(run_args(dir.path()))
        .args(["--noise-check", "0.5", "--strict"])
        .output()
        .unwrap();
    busy.kill().unwrap();
    busy.wait().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let err = stderr(&output);
    assert!(err.contains("--strict: the machine was not quiet"), "{err}");
    assert!(err.contains(&format!("sh ({})", busy.id())), "{err}");
    assert!(!dir.path().join("run.json").exists(), "nothing measured");
}
