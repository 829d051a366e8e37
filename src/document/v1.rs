//! Reading `feelbench.run/1` documents. Version 1 stored the figures of the
//! frame-based probes (periodic and `gaming`) in fixed fields; version 2
//! stores every probe's tally and figures by name, with the probes'
//! declarations beside them. A version 1 document is upgraded as JSON: each
//! probe result is rewritten in the version 2 shape, keeping every figure
//! it showed, and the probes' declarations are looked up by name.

use crate::figures::{ProbeResult, ProbeSheet, Samples, Tally};
use crate::measure::latency::LatencyHistogram;
use crate::measure::sched::SchedApplied;
use crate::system::telemetry::ProcessUsage;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Finds the declarations of a probe by name (the registry's).
pub type SheetLookup<'a> = &'a dyn Fn(&str) -> Option<ProbeSheet>;

/// Summary figures of a latency distribution, in µs, as version 1 stored them.
#[derive(Deserialize)]
struct LatencySummary {
    samples: u64,
    mean_us: f64,
    sd_us: f64,
    max_us: f64,
    p50_us: f64,
    p90_us: f64,
    p99_us: f64,
    p999_us: f64,
}

/// A probe result as version 1 wrote it.
#[derive(Deserialize)]
struct ResultV1 {
    measured_s: f64,
    latency_us: Option<LatencySummary>,
    histogram: String,
    frames: FramesV1,
    deadlines: Option<DeadlinesV1>,
    cpu: CpuV1,
    gaming: Option<GamingV1>,
    #[serde(default)]
    frame_histogram: Option<String>,
    sched: SchedApplied,
    #[serde(default)]
    usage: Option<ProcessUsage>,
    #[serde(default)]
    batches: Vec<BatchV1>,
}

#[derive(Deserialize)]
struct FramesV1 {
    executed: u64,
    dropped: u64,
}

#[derive(Deserialize)]
struct DeadlinesV1 {
    total: u64,
    met: u64,
    met_pct: f64,
    late_mean_us: Option<f64>,
    late_max_us: f64,
}

#[derive(Deserialize)]
struct CpuV1 {
    wanted_ms: f64,
    received_ms: f64,
    desired_pct: Option<f64>,
    work_ratio: Option<f64>,
}

#[derive(Deserialize)]
struct GamingV1 {
    fps: f64,
    low_1pct_fps: f64,
}

#[derive(Deserialize)]
struct BatchV1 {
    seconds: f64,
    frames: u64,
    mean_us: Option<f64>,
    #[serde(default)]
    histogram: Option<String>,
    periods: u64,
    met: u64,
    cpu_wanted_ms: f64,
    cpu_received_ms: f64,
}

/// Rewrites the version 1 document `doc` in the version 2 shape; fails
/// when a result in it is not a version 1 result (the document is damaged).
pub fn upgrade(mut doc: Value, sheets: SheetLookup) -> Result<Value, serde_json::Error> {
    let mut probes = BTreeMap::new();
    if let Some(scenarios) = doc.get_mut("scenarios").and_then(Value::as_array_mut) {
        for scenario in scenarios {
            if let Some(name) = scenario.get("probe").and_then(Value::as_str) {
                if let Some(sheet) = sheets(name) {
                    probes.insert(name.to_string(), sheet);
                }
            }
            upgrade_result(scenario)?;
            if let Some(repeats) = scenario.get_mut("repeats").and_then(Value::as_array_mut) {
                repeats.iter_mut().try_for_each(upgrade_result)?;
            }
        }
    }
    doc["probes"] = serde_json::to_value(probes)?;
    Ok(doc)
}

/// Rewrites the `result` of one measurement, when it has one.
fn upgrade_result(measurement: &mut Value) -> Result<(), serde_json::Error> {
    let Some(result) = measurement.get_mut("result").filter(|r| !r.is_null()) else {
        return Ok(());
    };
    let old: ResultV1 = serde_json::from_value(result.take())?;
    *result = serde_json::to_value(convert(old))?;
    Ok(())
}

/// Samples of `count` values of mean `mean_us` in `histogram` (base64).
fn samples(count: u64, mean_us: Option<f64>, histogram: Option<String>) -> Samples {
    Samples {
        count,
        sum_ns: (mean_us.unwrap_or(0.0) * count as f64 * 1e3).round() as u64,
        histogram: histogram.unwrap_or_else(|| LatencyHistogram::new().to_base64()),
    }
}

fn convert(old: ResultV1) -> ProbeResult {
    let mut tally = Tally::default()
        .with_count("measured_s", old.measured_s)
        .with_count("executed", old.frames.executed as f64)
        .with_count("dropped", old.frames.dropped as f64)
        .with_count("cpu_wanted_ms", old.cpu.wanted_ms)
        .with_count("cpu_received_ms", old.cpu.received_ms);
    let executed = old.frames.executed;
    let latency = samples(
        executed,
        old.latency_us.as_ref().map(|l| l.mean_us),
        Some(old.histogram),
    );
    tally.samples.insert("latency".into(), latency);
    if let Some(ratio) = old.cpu.work_ratio.filter(|r| *r > 0.0) {
        tally = tally.with_count("cpu_wanted_run_ms", old.cpu.received_ms / ratio);
    }
    if let Some(frame_time) = old.frame_histogram {
        let mean_us = (executed > 0).then(|| old.measured_s * 1e6 / executed as f64);
        tally.samples.insert(
            "frame_time".into(),
            samples(executed, mean_us, Some(frame_time)),
        );
    }
    if let Some(d) = &old.deadlines {
        let late = executed.saturating_sub(d.met) as f64;
        tally = tally
            .with_count("periods", d.total as f64)
            .with_count("met", d.met as f64)
            .with_count("late_frames", late)
            .with_count("late_sum_us", d.late_mean_us.unwrap_or(0.0) * late)
            .with_maximum("late_max_us", d.late_max_us);
    }
    let batches = old
        .batches
        .into_iter()
        .map(|b| convert_batch(b, old.deadlines.is_some()))
        .collect();
    ProbeResult {
        figures: figures(
            &old.latency_us,
            &old.frames,
            &old.deadlines,
            &old.cpu,
            &old.gaming,
        ),
        tally,
        sched: old.sched,
        usage: old.usage,
        batches,
        series: None,
        left_out: Vec::new(),
        late: None,
    }
}

fn convert_batch(b: BatchV1, deadlines: bool) -> Tally {
    let mut tally = Tally::default()
        .with_count("measured_s", b.seconds)
        .with_count("executed", b.frames as f64)
        .with_count("cpu_wanted_ms", b.cpu_wanted_ms)
        .with_count("cpu_received_ms", b.cpu_received_ms);
    tally
        .samples
        .insert("latency".into(), samples(b.frames, b.mean_us, b.histogram));
    if deadlines {
        tally = tally
            .with_count("periods", b.periods as f64)
            .with_count("met", b.met as f64);
    }
    tally
}

/// The figures version 1 stored, under their version 2 field names.
fn figures(
    latency: &Option<LatencySummary>,
    frames: &FramesV1,
    deadlines: &Option<DeadlinesV1>,
    cpu: &CpuV1,
    gaming: &Option<GamingV1>,
) -> BTreeMap<String, f64> {
    let mut figures: Vec<(&str, Option<f64>)> = vec![
        ("frames_executed", Some(frames.executed as f64)),
        ("frames_dropped", Some(frames.dropped as f64)),
    ];
    if let Some(l) = latency {
        figures.extend([
            ("samples", Some(l.samples as f64)),
            ("latency_mean_us", Some(l.mean_us)),
            ("latency_sd_us", Some(l.sd_us)),
            ("latency_p50_us", Some(l.p50_us)),
            ("latency_p90_us", Some(l.p90_us)),
            ("latency_p99_us", Some(l.p99_us)),
            ("latency_p999_us", Some(l.p999_us)),
            ("latency_max_us", Some(l.max_us)),
        ]);
    }
    if let Some(d) = deadlines {
        figures.extend([
            ("deadlines_total", Some(d.total as f64)),
            ("deadlines_met", Some(d.met as f64)),
            ("deadlines_met_pct", Some(d.met_pct)),
            ("late_max_us", Some(d.late_max_us)),
            ("late_mean_us", d.late_mean_us),
        ]);
    }
    figures.extend([
        ("desired_cpu_pct", cpu.desired_pct),
        ("work_ratio", cpu.work_ratio),
    ]);
    if let Some(g) = gaming {
        figures.extend([("fps", Some(g.fps)), ("low_1pct_fps", Some(g.low_1pct_fps))]);
    }
    figures
        .into_iter()
        .filter_map(|(field, value)| Some((field.to_string(), value?)))
        .collect()
}
