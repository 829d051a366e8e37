//! Latency over time in a real short run's document: a series per periodic
//! and gaming result, in time order, bounded, its counts adding up to the
//! frames that woke (those run, and those dropped for waking after their
//! period). No test asserts a latency.

use crate::common::{feelbench, new_tag, read_json, stderr, LOOPS_PER_MS};
use serde_json::Value;

/// Points a series holds at most (`measure::series::SERIES_POINTS`).
const SERIES_POINTS: usize = 1024;

fn number(value: &Value, key: &str) -> f64 {
    value[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {value}"))
}

#[test]
fn every_frame_probe_keeps_a_bounded_series_of_the_frames_it_ran() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    // custom's 0.5 ms periods run 3,000 frames in 1.5 s: more than the cap,
    // so its series has been merged (1 ms periods left too few past the cap
    // once a busy machine's late wake-ups had skipped some).
    let output = feelbench(&new_tag(), dir.path())
        .args(["run", "--probe", "x,audio,gaming,custom", "-C", "0", "-I"])
        .args(["500", "--load", "none", "-t", "1.5", "--warmup", "0.2"])
        .args(["-l", LOOPS_PER_MS, "-q", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&file);
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 4);
    for scenario in scenarios {
        let probe = scenario["probe"].as_str().unwrap();
        let result = &scenario["result"];
        let series = &result["series"];
        assert!(series.get("ideal_us").is_none(), "{probe}: ideal is 0");
        let points = series["points"].as_array().unwrap();
        assert!(
            !points.is_empty() && points.len() <= SERIES_POINTS,
            "{probe}: {} points",
            points.len()
        );
        let counts: f64 = points.iter().map(|p| number(p, "count")).sum();
        let woke_late = match probe {
            "gaming" => 0.0,
            _ => number(&result["tally"]["counts"], "woke_late"),
        };
        assert_eq!(
            counts,
            number(&result["figures"], "frames_executed") + woke_late,
            "{probe}"
        );
        let times: Vec<f64> = points.iter().map(|p| number(p, "t_s")).collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]), "{probe}: {times:?}");
        assert!(times[0] >= 0.0 && times[times.len() - 1] < 1.5, "{probe}");
        for p in points {
            let (min, mean, max) = (
                number(p, "min_us"),
                number(p, "mean_us"),
                number(p, "max_us"),
            );
            assert!(0.0 <= min && min <= mean && mean <= max, "{probe}: {p}");
        }
        if probe == "custom" {
            assert!(points.len() < counts as usize, "merged past the cap");
        }
    }
}
