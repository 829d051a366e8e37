//! Merging the probe figures of repeats: tallies added (histograms and
//! counts summed, maxima kept) and every figure derived again from the
//! totals by the probe's sheet.

use super::{Finished, MergeError, MergeProblem};
use crate::figures::{ProbeResult, ProbeSheet};
use crate::measure::sched::SchedApplied;

/// The merge of the figures of `finished` (at least one), which must hold
/// the same kinds of figures and share their scheduling.
pub(super) fn merge_results(
    finished: &[Finished],
    sheet: &ProbeSheet,
) -> Result<ProbeResult, MergeError> {
    let first = finished[0].result;
    if let Some(odd) = finished
        .iter()
        .find(|f| !f.result.tally.same_names(&first.tally))
    {
        return Err(MergeError::disagrees(
            odd.repeat,
            format!(
                "it counts {} where the first repeat counts {}",
                odd.result.tally.names(),
                first.tally.names()
            ),
        ));
    }
    check_sched(finished)?;
    let results: Vec<&ProbeResult> = finished.iter().map(|f| f.result).collect();
    ProbeResult::merged(sheet, &results).map_err(|error| {
        let damaged = |f: &&Finished| f.result.tally.samples.values().any(|s| s.decode().is_err());
        let repeat = finished.iter().find(damaged).map_or(0, |f| f.repeat);
        MergeError {
            repeat,
            problem: MergeProblem::Histogram(error),
        }
    })
}

/// Refuses repeats whose probe ran with other scheduling settings than the
/// first's (whether memory was locked may differ).
fn check_sched(finished: &[Finished]) -> Result<(), MergeError> {
    let key = |s: &SchedApplied| {
        format!(
            "{}{}, nice {}, timer slack {}",
            s.policy,
            s.fifo_priority.map(|p| format!(" {p}")).unwrap_or_default(),
            s.nice,
            s.timer_slack_ns
                .map_or("unknown".to_string(), |ns| format!("{ns} ns"))
        )
    };
    let first = &finished[0].result.sched;
    match finished.iter().find(|f| key(&f.result.sched) != key(first)) {
        Some(odd) => Err(MergeError::disagrees(
            odd.repeat,
            format!(
                "its probe ran with {}, the first repeat's with {}",
                key(&odd.result.sched),
                key(first)
            ),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{histogram, merge, ok, periodic, sheet};
    use crate::document::schema::Measurement;
    use crate::figures::{ProbeResult, Tally};
    use crate::measure::sched::SchedApplied;

    fn merged(results: Vec<ProbeResult>) -> ProbeResult {
        let measurements: Vec<Measurement> = results.into_iter().map(|r| ok(r, vec![])).collect();
        merge(&measurements).unwrap().result.unwrap()
    }

    #[test]
    fn p99_is_the_p99_of_the_union_not_the_mean_of_p99s() {
        // 100 fast frames (1 µs) and 100 frames of which 10 are slow (10 ms):
        // the p99 of each alone is 1 µs and 10 ms, their mean ≈ 5 ms; of the
        // 200 frames together, the 198th value is 10 ms.
        let fast: Vec<u64> = vec![1; 100];
        let mut mixed: Vec<u64> = vec![1; 90];
        mixed.extend([10_000; 10]);
        let a = periodic(1.0, &fast, 0, 100);
        let b = periodic(1.0, &mixed, 0, 90);
        let mean_of_p99s = (a.figures["latency_p99_us"] + b.figures["latency_p99_us"]) / 2.0;
        let merged = merged(vec![a, b]);
        let p99 = merged.figures["latency_p99_us"];
        assert!((p99 - 10_000.0).abs() < 10.0, "{p99}");
        assert!((p99 - mean_of_p99s).abs() > 4_000.0);
        assert_eq!(merged.figures["samples"], 200.0);
        let mean = merged.figures["latency_mean_us"];
        assert_eq!(mean, (100.0 + 90.0 + 100_000.0) / 200.0);
        let union: Vec<u64> = fast.iter().chain(&mixed).copied().collect();
        let stored = merged.tally.samples["latency"].decode().unwrap();
        assert_eq!(
            stored.quantile_ns(0.99),
            histogram(&union).quantile_ns(0.99)
        );
    }

    #[test]
    fn counts_sum_and_shares_are_computed_again() {
        let a = periodic(1.0, &[10, 20, 30], 1, 2); // 4 periods, 1 late frame
        let mut b = periodic(2.0, &[10; 6], 2, 3); // 8 periods, 3 late frames
        b.tally.maxima.insert("late_max_us".into(), 900.0);
        let merged = merged(vec![a, b]);
        let f = &merged.figures;
        assert_eq!(merged.measured_s(), 3.0);
        assert_eq!((f["frames_executed"], f["frames_dropped"]), (9.0, 3.0));
        assert_eq!((f["deadlines_total"], f["deadlines_met"]), (12.0, 5.0));
        assert!((f["deadlines_met_pct"] - 500.0 / 12.0).abs() < 1e-9);
        assert_eq!(f["late_mean_us"], 100.0);
        assert_eq!(f["late_max_us"], 900.0);
        assert_eq!(f["desired_cpu_pct"], 75.0);
        assert_eq!(f["work_ratio"], 1.0);
        assert!(merged.usage.is_none() && merged.batches.is_empty());
    }

    #[test]
    fn what_any_repeat_left_out_is_kept_once() {
        let left_out = |reasons: &[&str]| ProbeResult {
            left_out: reasons.iter().map(|r| r.to_string()).collect(),
            ..periodic(1.0, &[10], 0, 1)
        };
        let merged = merged(vec![
            left_out(&["udp: no loopback"]),
            left_out(&[]),
            left_out(&["udp: no loopback", "tcp: no loopback"]),
        ]);
        assert_eq!(merged.left_out, ["udp: no loopback", "tcp: no loopback"]);
    }

    #[test]
    fn no_late_frames_means_no_mean_lateness() {
        let merged = merged(vec![periodic(1.0, &[10], 0, 1), periodic(1.0, &[10], 0, 1)]);
        assert!(!merged.figures.contains_key("late_mean_us"));
        assert_eq!(merged.figures["deadlines_met_pct"], 100.0);
    }

    /// A game's figures: frames taking `frame_ms` each, back to back.
    fn gaming(frame_ms: &[u64]) -> ProbeResult {
        let frame_us: Vec<u64> = frame_ms.iter().map(|ms| ms * 1_000).collect();
        let measured_s = frame_ms.iter().sum::<u64>() as f64 / 1e3;
        let frames = frame_ms.len() as f64;
        let tally = Tally::default()
            .with_samples("latency", &histogram(&vec![5; frame_ms.len()]), 0)
            .with_samples(
                "frame_time",
                &histogram(&frame_us),
                (measured_s * 1e9) as u64,
            )
            .with_count("measured_s", measured_s)
            .with_count("executed", frames)
            .with_count("dropped", 0.0)
            .with_count("cpu_wanted_ms", measured_s * 1e3)
            .with_count("cpu_received_ms", measured_s * 1e3)
            .with_count("cpu_wanted_run_ms", measured_s * 1e3);
        let sheet = crate::probe::sheet_of("gaming").unwrap();
        ProbeResult::new(&sheet, tally, Vec::new(), SchedApplied::for_tests())
    }

    #[test]
    fn gaming_rates_come_from_the_totals_and_the_merged_frame_times() {
        // 100 frames of 10 ms, then 100 frames of which 2 take 100 ms.
        let mut slow = vec![10; 98];
        slow.extend([100, 100]);
        let measurements = [ok(gaming(&[10; 100]), vec![]), ok(gaming(&slow), vec![])];
        let sheet = crate::probe::sheet_of("gaming").unwrap();
        let merged = super::super::merge_measurements(&measurements, &sheet).unwrap();
        let f = merged.result.unwrap().figures;
        assert!((f["fps"] - 200.0 / 2.18).abs() < 1e-9, "{f:?}");
        // The 198th of 200 frame times is 10 ms: the 1 % low is 100 fps,
        // where the mean of the two 1 % lows would be (100 + 10) / 2.
        assert!((f["low_1pct_fps"] - 100.0).abs() < 0.2, "{f:?}");
        assert!(!f.contains_key("deadlines_met_pct"));
    }

    #[test]
    fn damaged_histogram_is_an_error() {
        let mut bad = periodic(1.0, &[10], 0, 1);
        bad.tally.samples.get_mut("latency").unwrap().histogram = "not base64!".into();
        let measurements = [ok(periodic(1.0, &[10], 0, 1), vec![]), ok(bad, vec![])];
        let err = merge(&measurements).unwrap_err().to_string();
        assert!(
            err.starts_with("repeat 2: its latency histogram is damaged: not base64"),
            "{err}"
        );
    }

    #[test]
    fn scheduling_must_agree_and_memory_is_locked_only_if_always() {
        let a = periodic(1.0, &[10], 0, 1);
        let mut b = periodic(1.0, &[10], 0, 1);
        b.sched.memory_locked = false;
        assert!(!merged(vec![a.clone(), b.clone()]).sched.memory_locked);
        b.sched.nice = 5;
        let measurements = [ok(a, vec![]), ok(b, vec![])];
        let err = merge(&measurements).unwrap_err().to_string();
        assert_eq!(
            err,
            "repeat 2: its probe ran with SCHED_OTHER, nice 5, timer slack 1 ns, the first repeat's with SCHED_OTHER, nice 0, timer slack 1 ns"
        );
    }

    #[test]
    fn a_timer_slack_the_kernel_did_not_give_is_shown_as_unknown() {
        let a = periodic(1.0, &[10], 0, 1);
        let mut b = a.clone();
        b.sched.timer_slack_ns = None;
        let err = merge(&[ok(a, vec![]), ok(b, vec![])])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("nice 0, timer slack unknown, the first"),
            "{err}"
        );
    }

    #[test]
    fn deadlines_and_frame_rates_do_not_mix() {
        let measurements = [
            ok(periodic(1.0, &[10], 0, 1), vec![]),
            ok(gaming(&[10; 10]), vec![]),
        ];
        let err = merge(&measurements).unwrap_err().to_string();
        assert!(err.starts_with("repeat 2: it counts "), "{err}");
        let _ = sheet();
    }
}
