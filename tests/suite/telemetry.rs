//! Per-scenario telemetry in a real run: every scenario carries raw samples
//! and figures, every worker its resource usage, and CPU pressure shows under burn.

use crate::common::{feelbench, new_tag, read_json, skip, stderr, LOOPS_PER_MS};
use serde_json::Value;

fn figure(scenario: &Value, path: &str) -> Option<f64> {
    scenario["telemetry"]["figures"].pointer(path)?.as_f64()
}

#[test]
fn scenarios_carry_telemetry_and_cpu_pressure_under_burn() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    let output = feelbench(&new_tag(), dir.path())
        .args([
            "run",
            "--probe",
            "audio",
            "--load",
            "none,burn",
            "-t",
            "1.5",
        ])
        .args(["-l", LOOPS_PER_MS, "-q", "-v", "--warmup", "0.2", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let report = feelbench(&new_tag(), dir.path())
        .args(["report", "-v"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&report.stdout),
        String::from_utf8_lossy(&output.stdout),
        "report -v reproduces run -v, telemetry lines included"
    );
    assert!(String::from_utf8_lossy(&report.stdout).contains("psi some cpu"));
    let run = read_json(&file);
    let scenarios = run["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2);
    for s in scenarios {
        let t = &s["telemetry"];
        assert!(t["before"]["stat"]["ctxt"].as_u64().is_some(), "{t}");
        assert!(t["after"]["taken_ns"].as_u64() > t["before"]["taken_ns"].as_u64());
        let interval = figure(s, "/interval_ms").unwrap();
        assert!(interval >= 1000.0, "samples 1.5 s apart, not {interval} ms");
        let ctxt = figure(s, "/context_switches_per_s").unwrap();
        assert!(ctxt > 0.0, "{ctxt}");
        assert!(figure(s, "/cpu/idle_pct").is_some());
        assert!(t["figures"]["foreign"]["cpu_pct"].as_f64().is_some());
    }
    let probe_usage = &scenarios[1]["result"]["usage"];
    // The user/system split is sampled at ticks (a timer-woken probe's ticks
    // may all land in the kernel): only their sum is checked.
    let probe_cpu_ms = probe_usage["user_cpu_ms"].as_f64().unwrap()
        + probe_usage["system_cpu_ms"].as_f64().unwrap();
    assert!(probe_cpu_ms > 0.0, "{probe_usage}");
    assert!(probe_usage["max_rss_bytes"].as_u64().unwrap() > 0);
    let burn_work = &scenarios[1]["load_work"][0];
    let usage = burn_work["usage"].as_array().unwrap();
    assert_eq!(usage.len() as u64, burn_work["processes"].as_u64().unwrap());
    for u in usage {
        let cpu_ms = u["user_cpu_ms"].as_f64().unwrap() + u["system_cpu_ms"].as_f64().unwrap();
        assert!(cpu_ms > 0.0, "{u}");
        assert!(u["voluntary_switches"].as_u64().is_some());
        assert!(u["involuntary_switches"].as_u64().is_some());
    }
    if !std::path::Path::new("/proc/pressure/cpu").exists() {
        skip("no /proc/pressure/cpu here: PSI not checked");
        assert!(figure(&scenarios[1], "/psi/cpu/some_pct").is_none());
        return;
    }
    // How much pressure there is depends on the machine's other work; that
    // there is some under burn does not: its hogs fill both CPUs, so the
    // probe waits behind one at every wake-up.
    for s in scenarios {
        let some = figure(s, "/psi/cpu/some_pct").unwrap();
        assert!((0.0..=100.0).contains(&some), "cpu some {some} %");
    }
    let burn = figure(&scenarios[1], "/psi/cpu/some_pct").unwrap();
    assert!(burn > 0.0, "cpu some under burn: {burn} %");
}
