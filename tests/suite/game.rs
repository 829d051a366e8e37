//! The `game` probe on short real runs, and real games' frame logs read by
//! `feelbench import`: the figures are there and consistent with each
//! other (every missed frame has one late link, every frame one split
//! event), nothing is left behind; MangoHud's own summary of a log it made
//! of glxgears under Xvfb gives the lows and average feelbench computes
//! from the same log (within its rounding); a bad log is one line and exit
//! 2. No timing is asserted.

use crate::common::BRIEF_RUN;
use crate::common::{feelbench, new_tag, read_json, run, skip, stderr, wait_for_no_tagged};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn figure(result: &Value, key: &str) -> f64 {
    result["figures"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {}", result["figures"]))
}

fn count(result: &Value, name: &str) -> f64 {
    result["tally"]["counts"][name].as_f64().unwrap_or(0.0)
}

#[test]
fn a_game_under_burn_accounts_each_missed_frame_to_one_link() {
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let output = feelbench(&tag, dir.path())
        .args(["run", "--probe", "game", "--load", "none,burn", "-t", "2"])
        .args(["--game-refresh", "144", "--game-queue", "1"])
        .args(BRIEF_RUN)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(wait_for_no_tagged(&tag, Duration::from_secs(5)).is_empty());
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(
        run["settings"]["game"]["refresh_hz"], 144,
        "{}",
        run["settings"]
    );
    for scenario in run["scenarios"].as_array().unwrap() {
        assert_eq!(scenario["status"], "ok", "{scenario}");
        let result = &scenario["result"];
        let frames = count(result, "frames");
        let missed = count(result, "missed_refresh");
        assert!(frames > 0.0 && missed <= frames, "{frames} {missed}");
        let links: f64 = ["main", "workers", "render", "present"]
            .map(|link| count(result, &format!("late_{link}")))
            .iter()
            .sum();
        assert_eq!(links, missed, "{}", result["tally"]);
        assert!(figure(result, "fps") > 0.0);
        assert!(figure(result, "low_1pct_mean_fps") <= figure(result, "fps_frame_mean"));
        assert!(figure(result, "low_01pct_mean_fps") <= figure(result, "low_1pct_mean_fps"));
        assert!((0.0..=100.0).contains(&figure(result, "desired_cpu_pct")));
        assert!(count(result, "audio_missed") <= count(result, "audio_periods"));
        assert!(figure(result, "input_to_present_mean_us") > 0.0);
        // One split event per frame shown after the first; the late ones
        // are the missed frames, each naming its link when among the worst.
        let late = &result["late"];
        if !late.is_null() {
            assert_eq!(late["tally"]["counts"]["events"].as_f64(), Some(frames));
            assert_eq!(
                late["tally"]["counts"]["late"].as_f64().unwrap_or(0.0),
                missed
            );
            for event in late["worst"].as_array().unwrap() {
                let link = event["link"].as_str().unwrap_or_default();
                assert!(
                    ["main", "workers", "render", "present"].contains(&link),
                    "{event}"
                );
            }
        }
    }
}

/// Writes `text` as `name` in `dir` and imports it as `format`.
fn import(dir: &Path, format: &str, name: &str, text: &str) -> std::process::Output {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let out = dir.join("log-run.json");
    run(&[
        "import",
        format,
        path.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
}

#[test]
fn a_bad_log_is_one_line_naming_its_file_and_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "mangohud",
            "notes.txt",
            "just some text\n",
            "notes.txt:1: not a MangoHud log",
        ),
        (
            "mangohud",
            "empty.csv",
            "fps,frametime,elapsed\n",
            "empty.csv:1: a MangoHud log with no frames",
        ),
        (
            "mangohud",
            "cut.csv",
            "fps,frametime,elapsed\n60,16666,1\n60\n",
            "cut.csv:3: truncated row",
        ),
        (
            "mangohud",
            "zero.csv",
            "fps,frametime,elapsed\n60,0,1\n",
            "zero.csv:2: frametime 0",
        ),
        (
            "presentmon",
            "pm.csv",
            "Application,MsBetweenPresents\ng,-1\n",
            "pm.csv:2: MsBetweenPresents -1",
        ),
        (
            "presentmon",
            "mango.csv",
            "fps,frametime\n60,16666\n",
            "mango.csv:1: not a PresentMon CSV",
        ),
    ];
    for (format, name, text, message) in cases {
        let output = import(dir.path(), format, name, text);
        assert_eq!(output.status.code(), Some(2), "{name}: {}", stderr(&output));
        let err = stderr(&output);
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(message), "{name}: {err}");
    }
    assert!(!dir.path().join("log-run.json").exists());
}

/// The tools the MangoHud check needs, or why it cannot run.
fn mangohud_tools() -> Result<(), String> {
    for tool in ["mangohud", "glxgears", "xvfb-run", "xauth"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            return Err(format!(
                "{tool} is not installed (apt-get install mangohud mesa-utils xvfb xauth; .ci/run does)"
            ));
        }
    }
    Ok(())
}

/// Run inside Xvfb: glxgears under MangoHud until MangoHud has written its
/// log and summary into the folder `$1` (or 60 s have passed), then
/// stopped.
const UNTIL_LOGGED: &str = "mangohud glxgears >/dev/null 2>&1 & game=$!
i=0
while [ $i -lt 300 ] && [ \"$(ls \"$1\" | wc -l)\" -lt 2 ]; do sleep 0.2; i=$((i + 1)); done
sleep 0.5
kill $game
wait $game";

/// MangoHud's log of 2 s of glxgears under Xvfb (software rendering),
/// with `busy` shell loops beside it; the log and MangoHud's summary of it.
fn mangohud_log(dir: &Path, busy: usize) -> (PathBuf, PathBuf) {
    let folder = dir.join(format!("logs-{busy}"));
    std::fs::create_dir(&folder).unwrap();
    let hogs: Vec<std::process::Child> = (0..busy)
        .map(|_| {
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .unwrap()
        })
        .collect();
    let config = format!(
        "output_folder={},autostart_log=1,log_duration=2,log_interval=0",
        folder.display()
    );
    let status = Command::new("xvfb-run")
        .args(["-a", "sh", "-c", UNTIL_LOGGED, "sh"])
        .arg(&folder)
        .env("MANGOHUD_CONFIG", config)
        .current_dir(dir)
        .output()
        .unwrap();
    for mut hog in hogs {
        let _ = hog.kill();
        let _ = hog.wait();
    }
    let files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let summary = files
        .iter()
        .find(|p| p.to_string_lossy().ends_with("_summary.csv"))
        .unwrap_or_else(|| panic!("no summary in {files:?}: {}", stderr(&status)))
        .clone();
    let log = files.iter().find(|p| **p != summary).unwrap().clone();
    (log, summary)
}

/// MangoHud's summary: its 0.1 % and 1 % lows and its average, by name.
fn summary_values(path: &Path) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let names = lines.next().unwrap().split(',');
    let values = lines.next().unwrap().split(',');
    names
        .zip(values)
        .map(|(n, v)| (n.to_string(), v.parse().unwrap()))
        .collect()
}

#[test]
fn mangohuds_own_summary_of_a_real_log_matches_feelbenchs_figures() {
    if let Err(reason) = mangohud_tools() {
        skip(&reason);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for busy in [0, 2] {
        let (log, summary) = mangohud_log(dir.path(), busy);
        let out = dir.path().join(format!("run-{busy}.json"));
        let output = run(&[
            "import",
            "mangohud",
            log.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(output.status.success(), "{}", stderr(&output));
        let run = read_json(&out);
        let result = &run["scenarios"][0]["result"];
        let ours = [
            ("0.1% Min FPS", "low_01pct_mean_fps"),
            ("1% Min FPS", "low_1pct_mean_fps"),
            ("Average FPS", "fps_frame_mean"),
        ];
        let theirs = summary_values(&summary);
        for (name, key) in ours {
            let (_, expected) = theirs.iter().find(|(n, _)| n == name).unwrap();
            let value = figure(result, key);
            // MangoHud prints one decimal; feelbench's histogram keeps
            // three significant digits.
            let tolerance = 0.05 + value * 1e-3;
            assert!(
                (value - expected).abs() <= tolerance,
                "{busy} busy loops: {name} {expected} by MangoHud, {value} by feelbench"
            );
        }
    }
}
