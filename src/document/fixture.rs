//! A fixed synthetic run for renderer tests (never live numbers).

use super::schema::*;
use crate::figures::{ProbeResult, Tally};
use crate::measure::sched::SchedApplied;
use crate::system::environment::Environment;
use crate::system::SystemInfo;

/// Figures of a frame-based probe whose mean latency is `mean_us`, as a
/// run stores them (the tally holds only the counts: renderers read the
/// figures).
fn result(mean_us: f64, gaming: bool) -> ProbeResult {
    let mut figures = vec![
        ("samples", 300.0),
        ("latency_mean_us", mean_us),
        ("latency_sd_us", mean_us / 2.0),
        ("latency_max_us", mean_us * 20.0),
        ("latency_p50_us", mean_us * 0.9),
        ("latency_p90_us", mean_us * 1.5),
        ("latency_p99_us", mean_us * 4.0),
        ("latency_p999_us", mean_us * 10.0),
        ("frames_executed", 290.0),
        ("frames_dropped", 10.0),
        ("desired_cpu_pct", 93.33),
        ("work_ratio", 0.99),
    ];
    if gaming {
        figures.extend([("fps", 58.25), ("low_1pct_fps", 41.5)]);
    } else {
        figures.extend([
            ("deadlines_total", 300.0),
            ("deadlines_met", 270.0),
            ("deadlines_met_pct", 90.0),
            ("late_max_us", 9000.0),
            ("late_mean_us", 1500.0),
        ]);
    }
    ProbeResult {
        figures: figures
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        tally: Tally::default()
            .with_count("measured_s", 3.0)
            .with_count("executed", 290.0),
        sched: SchedApplied::for_tests(),
        usage: None,
        batches: vec![],
        series: None,
        left_out: Vec::new(),
        late: None,
    }
}

fn scenario(probe: &str, load: &str, mean_us: f64) -> ScenarioResult {
    ScenarioResult {
        probe: probe.into(),
        load: load.into(),
        outcome: Measurement {
            status: ScenarioStatus::Ok,
            error: None,
            result: Some(result(mean_us, probe == "gaming")),
            load_work: match load {
                "none" => vec![],
                _ => vec![LoadWork {
                    load: load.into(),
                    unit: "Mloop".into(),
                    amount: 2700.0,
                    rate_per_s: 900.0,
                    cpu_pct: 165.4,
                    cpu_pct_lower_bound: false,
                    device_read_mb_s: Some(0.0),
                    device_write_mb_s: Some(0.0),
                    processes: 4,
                    usage: vec![],
                    cpus: None,
                    requests: None,
                    batch_units: vec![],
                    tasks: vec![],
                }],
            },
            telemetry: None,
        },
        repeats: vec![],
        intervals: None,
    }
}

/// A run with audio and gaming under none and burn, and one failed scenario.
pub fn run() -> RunDocument {
    let failed = ScenarioResult {
        probe: "audio".into(),
        load: "video".into(),
        outcome: Measurement {
            status: ScenarioStatus::Failed,
            error: Some(
                "load video (process 1 of 1) ended before its work was done (exit code 1)".into(),
            ),
            result: None,
            load_work: vec![],
            telemetry: None,
        },
        repeats: vec![],
        intervals: None,
    };
    RunDocument {
        schema: SCHEMA.into(),
        tool: ToolInfo {
            name: "feelbench".into(),
            version: "0.1.0".into(),
            commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        },
        run: RunInfo {
            id: "20261123-120000-42".into(),
            started: "2026-11-23T12:00:00Z".into(),
            finished: Some("2026-11-23T12:00:20Z".into()),
            interrupted: false,
            comment: Some("fixture, with a | pipe".into()),
            command_line: vec!["feelbench".into(), "run".into()],
            trace: None,
        },
        system: SystemInfo {
            kernel_release: "6.18.0-test".into(),
            kernel_version: "#1 SMP".into(),
            hostname: "testhost".into(),
            cpu_model: Some("Test CPU".into()),
            cpus: 2,
            mem_bytes: Some(1 << 34),
            swap_bytes: Some(0),
        },
        environment: Environment::default(),
        settings: RunSettingsRecord {
            warmup_s: 0.5,
            loops_per_ms: 500_000.0,
            burn_processes: 4,
            file_bytes: 1 << 30,
            mem_bytes: 1 << 33,
            job: Default::default(),
            fragment: Default::default(),
            io: Default::default(),
            late_split: true,
            ..RunSettingsRecord::unchosen(3.0, 1)
        },
        suite: None,
        methods: Some(super::methods::Methods {
            probes: [("audio".into(), 1), ("gaming".into(), 1)].into(),
            loads: ["burn", "cmd", "none", "video"]
                .map(|l| (l.to_string(), 1))
                .into(),
        }),
        probes: ["audio", "gaming"]
            .map(|p| (p.to_string(), crate::probe::sheet_of(p).unwrap()))
            .into(),
        warnings: vec![],
        scenarios: vec![
            scenario("audio", "none", 52.5),
            scenario("audio", "burn", 1234.5),
            scenario("audio", "cmd:stress-ng --cpu 2", 2000.0),
            failed,
            scenario("gaming", "none", 8.0),
            scenario("gaming", "burn", 24_601.0),
        ],
    }
}
