//! `feelbench ab`: an experiment of short runs gives its document with the
//! rounds, balanced orders, the A/A control and every arm's runs, and `ab
//! report` renders its analysis again from its directory; bad arms
//! are refused (exit 2) before anything runs; as root, a sysctl arm is in
//! force during its runs only, and put back after the end, after Ctrl-C,
//! and after a SIGKILL by the next start; a plain user asking for one is
//! refused rather than given half an experiment.

use crate::common::{self, feelbench, feelbench_as_nobody, read_json, stderr, LOOPS_PER_MS};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The sysctl the root tests change: recorded by every run's environment
/// (`dirty_background_ratio`), harmless to move by one for a few seconds,
/// and written by no other test.
const SYSCTL: &str = "/proc/sys/vm/dirty_background_ratio";

/// The options of a short experiment on `x` writing into `exp`.
fn short(loads: &str, seconds: &str) -> Vec<String> {
    [
        "ab",
        "--probe",
        "x",
        "--load",
        loads,
        "-t",
        seconds,
        "--warmup",
        "0.2",
        "-l",
        LOOPS_PER_MS,
        "--noise-check",
        "0",
        "--rounds",
        "2",
        "--dir",
        "exp",
        "--seed",
        "7",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// `feelbench` as a plain user: nobody when the tests run as root.
fn as_plain_user(tag: &str, dir: &Path) -> Command {
    match nix::unistd::geteuid().is_root() {
        true => {
            // nobody's own home, not root's, which it cannot enter.
            let mut command = feelbench_as_nobody(tag, dir);
            command.env("HOME", dir).env_remove("XDG_RUNTIME_DIR");
            command
        }
        false => feelbench(tag, dir),
    }
}

#[test]
fn a_nice_arm_runs_in_balanced_rounds_beside_the_aa_control() {
    let dir = tempfile::tempdir().unwrap();
    let tag = common::new_tag();
    let output = as_plain_user(&tag, dir.path())
        .args(short("none,burn", "0.3"))
        .args([
            "--arm",
            "base",
            "--arm",
            "n19:--load-nice=19",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let exp = read_json(&dir.path().join("exp/experiment.json"));
    assert_eq!(printed["id"], exp["id"]);
    assert_eq!(exp["schema"], "feelbench.ab/1");
    assert_eq!(exp["rounds"], 2);
    assert_eq!(exp["seed"], 7);
    let slots: Vec<&str> = exp["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(slots, ["base", "n19", "base-aa"]);
    assert_eq!(exp["slots"][2]["aa"], true);
    // Each round runs every slot once; no slot takes a position twice.
    let orders = exp["orders"].as_array().unwrap();
    assert_eq!(orders.len(), 2);
    for order in orders {
        let mut sorted: Vec<u64> = order
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        sorted.sort();
        assert_eq!(sorted, [0, 1, 2]);
    }
    for position in 0..3 {
        assert_ne!(orders[0][position], orders[1][position], "{orders:?}");
    }
    let runs = exp["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    let id = exp["id"].as_str().unwrap();
    for run in runs {
        // A load at nice 19 may starve on a busy machine and fail its
        // scenario; the run is still the arm's, its other scenarios kept.
        assert!(
            ["ok", "failed"].contains(&run["status"].as_str().unwrap()),
            "{run}"
        );
        let slot = run["slot"].as_u64().unwrap() as usize;
        let doc = read_json(&dir.path().join("exp").join(run["file"].as_str().unwrap()));
        assert_eq!(doc["run"]["id"], run["run_id"]);
        let comment = doc["run"]["comment"].as_str().unwrap();
        assert!(
            comment.contains(&format!("[ab {id} arm {}]", slots[slot])),
            "{comment}"
        );
        let nice = doc["settings"]["load_nice"].as_i64().unwrap();
        assert_eq!(
            nice == 19,
            slots[slot] == "n19",
            "{}: loads at nice {nice}",
            slots[slot]
        );
        assert_eq!(doc["scenarios"].as_array().unwrap().len(), 2);
    }
    for round in 0..2 {
        for slot in 0..3 {
            let made = runs
                .iter()
                .filter(|r| r["round"] == round && r["slot"] == slot);
            assert_eq!(made.count(), 1, "round {round} slot {slot}");
        }
    }
    let analysis = &exp["analysis"];
    let scenarios = analysis["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2);
    let burn = scenarios.iter().find(|s| s["load"] == "burn").unwrap();
    let work = burn["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["cost"] == true)
        .expect("burn's work is compared as the cost");
    // Each slot's value in each round, where its run measured the scenario.
    let values = work["values"].as_array().unwrap();
    assert_eq!(values.len(), 3);
    assert!(values.iter().all(|v| v.as_array().unwrap().len() == 2));
    for c in work["comparisons"].as_array().unwrap() {
        assert!([1, 2].contains(&c["slot"].as_u64().unwrap()), "{c}");
        assert!(c["q"].as_f64().unwrap() >= c["p"].as_f64().unwrap());
    }
    assert!(analysis["tests"].as_u64().unwrap() > 0);
    let ranking = &analysis["ranking"][0];
    assert_eq!(ranking["probe"], "x");
    assert_eq!(ranking["arms"].as_array().unwrap().len(), 2);
    assert_eq!(ranking["control"]["name"], "base-aa");
    assert!(dir.path().join("exp/experiment.html").exists());

    // Rendered again from its directory, nothing run: the same analysis.
    let again = as_plain_user(&tag, dir.path())
        .args(["ab", "report", "exp", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["analysis"], exp["analysis"]);
}

#[test]
fn ab_report_of_a_directory_without_an_experiment_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let tag = common::new_tag();
    for target in ["no-such-dir", "."] {
        let output = feelbench(&tag, dir.path())
            .args(["ab", "report", target])
            .output()
            .unwrap();
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{target}: {said}");
        assert_eq!(said.trim().lines().count(), 1, "{target}: {said}");
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn bad_arms_are_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("arms.toml"),
        "[[arm]]\nname = \"base\"\n[[arm]]\nname = \"fails\"\nset = \"false\"\nrestore = \"true\"\n",
    )
    .unwrap();
    let cases: [&[&str]; 8] = [
        &["--arm", "base", "--arm", "x:vm.no_such_sysctl=1"],
        &["--arm", "base", "--arm", "x:/etc/hostname=x"],
        &["--arm", "base", "--arms", "arms.toml"],
        &["--arm", "base", "--arm", "base:--load-nice=19"],
        &["--arm", "base"],
        &["--arm", "base", "--arm", "x:--load-nice=99"],
        &["--arm", "base", "--arm", "x:--no-such-option"],
        // Refused by its runs as by `run`: now at the rehearsal.
        &["--arm", "base", "--arm", "x:--nice=-5"],
    ];
    for case in cases {
        let tag = common::new_tag();
        let output = as_plain_user(&tag, dir.path())
            .args(short("none", "1"))
            .args(case)
            .output()
            .unwrap();
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{case:?}: {said}");
        assert_eq!(said.trim().lines().count(), 1, "{case:?}: {said}");
        assert!(
            !dir.path().join("exp").exists(),
            "{case:?} made the experiment"
        );
    }
}

#[test]
fn a_plain_user_asking_for_a_sysctl_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let tag = common::new_tag();
    let before = sysctl();
    let output = as_plain_user(&tag, dir.path())
        .args(short("none", "1"))
        .args([
            "--arm",
            "base",
            "--arm",
            &format!("d:vm.dirty_background_ratio={}", other(before)),
        ])
        .output()
        .unwrap();
    let said = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(said.contains("root"), "{said}");
    assert!(!dir.path().join("exp").exists());
    assert_eq!(sysctl(), before);
}

/// The sysctl's value now.
fn sysctl() -> u32 {
    std::fs::read_to_string(SYSCTL)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// A value of the sysctl one away from `value`.
fn other(value: u32) -> u32 {
    if value > 1 {
        value - 1
    } else {
        value + 1
    }
}

/// Starts, as root, an experiment whose second arm sets the sysctl to
/// `value` (its runs `seconds` long).
fn start_sysctl_experiment(
    tag: &str,
    dir: &Path,
    value: u32,
    seconds: &str,
) -> std::process::Child {
    feelbench(tag, dir)
        .args(short("none", seconds))
        .args(["--no-aa", "--no-store", "--arm", "base"])
        .arg(format!("--arm=d:vm.dirty_background_ratio={value}"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the sysctl reads `value` (the arm is applied).
fn wait_for_sysctl(value: u32) {
    common::wait_until("the arm's sysctl to be applied", || sysctl() == value);
}

// One test for the three ways an experiment ends, in turn: each changes the
// one sysctl, and two experiments changing it at once would take each
// other's value for the original.
#[test]
fn a_sysctl_arm_is_put_back_after_the_end_ctrl_c_and_a_sigkill() {
    if !common::require_root("writes a sysctl") {
        return;
    }
    let before = sysctl();
    let changed = other(before);

    // The end: in force during the arm's runs only, put back after.
    let dir = tempfile::tempdir().unwrap();
    let tag = common::new_tag();
    let mut child = start_sysctl_experiment(&tag, dir.path(), changed, "0.3");
    let code = common::exit_code_within(&mut child, Duration::from_secs(120));
    assert_eq!(code, Some(0));
    assert_eq!(sysctl(), before);
    let exp = read_json(&dir.path().join("exp/experiment.json"));
    for run in exp["runs"].as_array().unwrap() {
        let doc = read_json(&dir.path().join("exp").join(run["file"].as_str().unwrap()));
        let seen = doc["environment"]["dirty_background_ratio"]
            .as_u64()
            .unwrap() as u32;
        let expected = if run["slot"] == 1 { changed } else { before };
        assert_eq!(seen, expected, "{run}");
    }

    // Ctrl-C (to the experiment alone) while the arm runs.
    let dir = tempfile::tempdir().unwrap();
    let tag = common::new_tag();
    let mut child = start_sysctl_experiment(&tag, dir.path(), changed, "3");
    wait_for_sysctl(changed);
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let code = common::exit_code_within(&mut child, Duration::from_secs(60));
    assert_eq!(code, Some(130));
    assert_eq!(sysctl(), before);
    let exp = read_json(&dir.path().join("exp/experiment.json"));
    assert_eq!(exp["interrupted"], true);
    assert!(common::wait_for_no_tagged(&tag, Duration::from_secs(10)).is_empty());

    // SIGKILL: left changed, put back by the next start. Every start of
    // feelbench puts such a leftover back, so another test's run may do it
    // between the kill and this test's next start: then it is tried again.
    for attempt in 1..=3 {
        let dir = tempfile::tempdir().unwrap();
        let tag = common::new_tag();
        let mut child = start_sysctl_experiment(&tag, dir.path(), changed, "3");
        wait_for_sysctl(changed);
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(common::wait_for_no_tagged(&tag, Duration::from_secs(10)).is_empty());
        let left_changed = sysctl() == changed;
        std::fs::remove_dir_all(dir.path().join("exp")).unwrap();
        let output = feelbench(&tag, dir.path())
            .args(short("none", "0.3"))
            .args(["--no-aa", "--no-store", "--arm", "a", "--arm", "b"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(sysctl(), before);
        if left_changed && stderr(&output).contains("put back") {
            return;
        }
        assert!(
            attempt < 3,
            "left changed {left_changed}, then never said put back: {}",
            stderr(&output)
        );
    }
}
