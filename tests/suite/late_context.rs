//! The context of late events on a short real run as root: x under burn
//! with the loads in a CPU cgroup of their own (`--load-cpu-weight`). The
//! window was sampled and what it cost is recorded; the probe's and the
//! loads' cgroups are found, the loads' one with its throttling; every
//! kept late event with a context has shares within 0–100 % and counts
//! within the window's; `report --explain` shows it labelled inferred. No
//! figure is asserted: what the machine went through depends on it.

use crate::common::{
    feelbench, new_tag, read_json, require_root, stderr, stdout, wait_for_no_tagged, LOOPS_PER_MS,
};
use serde_json::Value;
use std::time::Duration;

/// The numbers of `context` that add up over time, by their path.
const COUNTS: [&str; 12] = [
    "/cpu_ticks",
    "/steal_ticks",
    "/irq_ticks",
    "/pressure/cpu_some_us",
    "/pressure/memory_some_us",
    "/pressure/memory_full_us",
    "/pressure/io_some_us",
    "/reclaim/alloc_stalls",
    "/reclaim/swap_ins",
    "/reclaim/refaults",
    "/throttled_periods",
    "/throttled_ns",
];

/// `context[path]`, which must be a number where present.
fn count(context: &Value, path: &str) -> Option<u64> {
    let value = context.pointer(path)?;
    Some(
        value
            .as_u64()
            .unwrap_or_else(|| panic!("{path} is not a count: {context}")),
    )
}

/// Asserts the shares of `context` are within 0–100 %: what the host stole
/// and IRQs took is part of the CPU time, a pressure stall at most the
/// time sampled (plus the few µs between a sample's clock and its read).
fn assert_shares(context: &Value) {
    let sampled_ns = count(context, "/sampled_ns").unwrap();
    assert!(sampled_ns > 0, "{context}");
    if let Some(cpu) = count(context, "/cpu_ticks") {
        for part in ["/steal_ticks", "/irq_ticks"] {
            assert!(
                count(context, part).unwrap_or(0) <= cpu,
                "{part}: {context}"
            );
        }
    }
    for (resource, us) in context["pressure"].as_object().unwrap() {
        let us = us.as_u64().unwrap();
        assert!(
            us * 1000 <= sampled_ns + sampled_ns / 20,
            "{resource}: {context}"
        );
    }
}

#[test]
fn late_events_under_burn_have_a_consistent_context_and_the_cgroups_are_found() {
    if !require_root("a CPU cgroup for the loads") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let output = feelbench(&tag, dir.path())
        .args(["run", "--probe", "x", "--load", "burn", "-t", "2"])
        .args(["--warmup", "0.2", "-l", LOOPS_PER_MS, "-q"])
        .args(["--load-cpu-weight", "50", "-o", "run.json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(wait_for_no_tagged(&tag, Duration::from_secs(5)).is_empty());
    let run = read_json(&dir.path().join("run.json"));
    let scenario = &run["scenarios"][0];
    assert_eq!(scenario["status"], "ok", "{scenario}");
    let window = &scenario["telemetry"]["window"];
    assert!(window["samples"].as_u64().unwrap() >= 2, "{window}");
    assert!(window["sampler_cpu_ms"].as_f64().unwrap() > 0.0, "{window}");
    let groups = window["cgroups"].as_array().unwrap();
    let has = |role: &str| {
        groups
            .iter()
            .any(|g| g["roles"].as_array().unwrap().iter().any(|r| r == role))
    };
    assert!(has("probe") && has("loads"), "{window}");
    // The loads' own group, made for --load-cpu-weight, keeps throttling
    // (v1 cpu and cgroup2 groups with the cpu controller have cpu.stat).
    let loads_cpu = groups
        .iter()
        .find(|g| g["roles"] == serde_json::json!(["loads"]))
        .unwrap_or_else(|| panic!("no group of the loads alone: {window}"));
    assert!(loads_cpu["nr_throttled"].is_u64(), "{loads_cpu}");

    let late = &scenario["result"]["late"];
    let summary = &late["context"];
    assert!(
        summary["basis"].as_str().unwrap().starts_with("inferred"),
        "{summary}"
    );
    let whole = &summary["window"];
    assert_shares(whole);
    if summary["events"].as_u64().unwrap() > 0 {
        assert_shares(&summary["during_late"]);
    }
    let worst = late["worst"].as_array().map_or(&[][..], Vec::as_slice);
    let with_context: Vec<&Value> = worst
        .iter()
        .map(|e| &e["context"])
        .filter(|c| c.is_object())
        .collect();
    assert_eq!(
        summary["events"].as_u64().unwrap(),
        with_context.len() as u64,
        "{summary}"
    );
    for context in with_context {
        assert_shares(context);
        assert!(
            count(context, "/sampled_ns") <= count(whole, "/sampled_ns"),
            "{context}"
        );
        for path in COUNTS {
            if let (Some(event), Some(all)) = (count(context, path), count(whole, path)) {
                assert!(event <= all, "{path}: event {context}, window {whole}");
            }
        }
    }

    let explained = feelbench(&new_tag(), dir.path())
        .args(["report", "run.json", "--explain"])
        .output()
        .unwrap();
    assert!(explained.status.success(), "{}", stderr(&explained));
    let text = stdout(&explained);
    assert!(text.contains("window sampled every 100 ms: "), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("context during ") && l.ends_with("(inferred)")),
        "{text}"
    );
    assert!(text.contains("(loads): throttled "), "{text}");
}
