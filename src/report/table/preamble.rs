//! What the console prints around a run's tables: before them, what ran
//! where and how long; after them, what the CI lines mean.

use super::*;

/// The lines printed before any table: what ran where.
pub fn render_preamble(run: &RunDocument) -> String {
    let s = &run.settings;
    let policy = match (s.probe_sched.fifo_priority, s.probe_sched.slice_ns) {
        (Some(p), _) => format!("SCHED_FIFO {p}"),
        (None, Some(ns)) => format!("SCHED_OTHER slice {} ms", ns as f64 / 1e6),
        (None, None) => "SCHED_OTHER".to_string(),
    };
    let timing = match (s.precision_pct, s.max_time_s) {
        (Some(pct), Some(max_s)) => format!(
            "{} until ±{pct} % (at most {max_s} s per scenario)",
            measuring_time(run, "measurement")
        ),
        _ if s.repeats > 1 => format!(
            "{} × {} repeats",
            measuring_time(run, "scenario"),
            s.repeats
        ),
        _ => measuring_time(run, "scenario"),
    };
    let pm_qos = s
        .cpu_dma_latency_us
        .map(|us| format!(", PM QoS held at {us} µs"))
        .unwrap_or_default();
    let mut out = format!(
        "feelbench {} on {} ({} CPUs), kernel {}\n{timing}, loops_per_ms {:.0}, probe {} nice {}, loads nice {}{}{pm_qos}\n",
        run.tool.version,
        run.system.hostname,
        run.system.cpus,
        run.system.kernel_release,
        s.loops_per_ms,
        policy,
        s.probe_sched.nice,
        s.load_nice,
        placement(s),
    );
    if let Some(suite) = &run.suite {
        out.push_str(&format!(
            "suite {} version {}: {}\n",
            suite.name, suite.version, suite.summary
        ));
    }
    if let Some(response) = &s.response {
        out.push_str(&response_line(response));
    }
    if let Some(comment) = &run.run.comment {
        out.push_str(&format!("comment: {comment}\n"));
    }
    out
}

/// How long each `unit` (scenario, measurement) measures: `-t`, and for
/// the probes of the run that set their own pace, until their work is done.
fn measuring_time(run: &RunDocument, unit: &str) -> String {
    let (own, timed): (Vec<_>, Vec<_>) = run.probes.iter().partition(|(_, sheet)| sheet.own_pace);
    let own: Vec<&str> = own.into_iter().map(|(name, _)| name.as_str()).collect();
    let duration = format!("{} s per {unit}", run.settings.duration_s);
    match (own.is_empty(), timed.is_empty()) {
        (true, _) => duration,
        (false, true) => format!("each {unit} until its probe's work is done"),
        (false, false) => format!("{duration} ({}: until done)", own.join(", ")),
    }
}

/// How the probes that answer after an idle gap worked, as resp1 said it
/// ("minimum 5 data points at 20 sec intervals").
fn response_line(p: &ResponseParams) -> String {
    let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
    format!(
        "response/command: {} points after {} s idle gaps; arrays {:.0} MiB kept + {:.0} MiB fresh; command {}{}\n",
        p.points,
        p.gap_ns as f64 / 1e9,
        mib(p.resident_bytes),
        mib(p.fresh_bytes),
        p.command.as_deref().unwrap_or("ls -l /usr/bin"),
        if p.cold { ", cold (page cache dropped before each)" } else { "" }
    )
}

/// Where the probe and the loads ran, when the run chose it: `, probe on
/// CPUs 0, loads on CPUs 1, loads at CPU weight 10`.
fn placement(s: &RunSettingsRecord) -> String {
    let parts = [
        s.probe_cpus.as_ref().map(|c| format!("probe on CPUs {c}")),
        s.probe_session
            .then(|| "probe in a session of its own".to_string()),
        s.load_cpus.as_ref().map(|c| format!("loads on CPUs {c}")),
        s.load_cpu_weight
            .map(|w| format!("loads at CPU weight {w}")),
    ];
    parts
        .into_iter()
        .flatten()
        .map(|p| format!(", {p}"))
        .collect()
}

/// What the CI lines mean, for the end of a run's tables; empty when no
/// scenario has intervals.
pub fn render_legend(run: &RunDocument) -> String {
    let mut methods: Vec<IntervalMethod> = run
        .scenarios
        .iter()
        .filter_map(|s| s.intervals.as_ref().map(|i| i.method))
        .collect();
    methods.dedup();
    if methods.is_empty() {
        return String::new();
    }
    let mut out =
        String::from("\nCI: two-sided confidence intervals (Student t) of the headline figures;\n");
    if methods.contains(&IntervalMethod::BatchMeans) {
        out.push_str(&format!("  batch means: from the figures of {BATCHES} sub-windows of each measurement, neighbours merged while\n  correlated; they hold the spread within the run, not the drift between runs (use --repeat 3+)\n"));
        if run.settings.response.is_some() {
            out.push_str("  (response and command: one sub-window per point)\n");
        }
    }
    if methods.contains(&IntervalMethod::Repeats) {
        out.push_str("  repeats: from the spread of the figure across the scenario's repeats\n");
    }
    if has_cut_interval(&run.scenarios) {
        out.push_str(&format!("  {CUT_LEGEND}\n"));
    }
    out
}
