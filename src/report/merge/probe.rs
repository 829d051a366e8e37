//! Merging the probe figures of repeats: histograms added, counts summed,
//! and every derived figure computed again from the totals.

use super::{Finished, MergeError, MergeProblem};
use crate::measure::latency::LatencyHistogram;
use crate::measure::sched::SchedApplied;
use crate::report::schema::{CpuFigures, Deadlines, FrameCounts, GamingFigures, ProbeResult};

/// The merge of the figures of `finished` (at least one).
pub(super) fn merge_results(finished: &[Finished]) -> Result<ProbeResult, MergeError> {
    let latency = add_histograms(finished, "latency", |r| Some(&r.histogram))?
        .expect("every result has a latency histogram");
    let frame_time = add_histograms(finished, "frame-time", |r| r.frame_histogram.as_ref())?;
    let frames = FrameCounts {
        executed: finished.iter().map(|f| f.result.frames.executed).sum(),
        dropped: finished.iter().map(|f| f.result.frames.dropped).sum(),
    };
    let measured_s = finished.iter().map(|f| f.result.measured_s).sum();
    Ok(ProbeResult {
        measured_s,
        latency_us: latency.summary(),
        histogram: latency.to_base64(),
        frames,
        deadlines: merge_deadlines(finished)?,
        cpu: merge_cpu(finished),
        gaming: merge_gaming(finished, frame_time.as_ref(), frames.executed, measured_s)?,
        frame_histogram: frame_time.as_ref().map(LatencyHistogram::to_base64),
        sched: merge_sched(finished)?,
        usage: None,
        batches: Vec::new(),
    })
}

/// The sum of one histogram of every repeat; `None` when none has it. A
/// repeat that has it when the first has not, or the other way round, is
/// refused.
fn add_histograms(
    finished: &[Finished],
    which: &'static str,
    histogram: fn(&ProbeResult) -> Option<&String>,
) -> Result<Option<LatencyHistogram>, MergeError> {
    let first_has = histogram(finished[0].result).is_some();
    let mut sum = first_has.then(LatencyHistogram::new);
    for f in finished {
        match (histogram(f.result), &mut sum) {
            (Some(text), Some(sum)) => {
                let decoded = LatencyHistogram::from_base64(text).map_err(|error| MergeError {
                    repeat: f.repeat,
                    problem: MergeProblem::Histogram { which, error },
                })?;
                sum.add(&decoded);
            }
            (None, None) => {}
            (mine, _) => {
                let (it, first) = if mine.is_some() {
                    ("a", "none")
                } else {
                    ("no", "one")
                };
                return Err(MergeError::disagrees(
                    f.repeat,
                    format!("it has {it} {which} histogram and the first repeat has {first}"),
                ));
            }
        }
    }
    Ok(sum)
}

/// Deadline counts summed; the share met and the mean lateness (weighted
/// by the frames that were late) computed again.
fn merge_deadlines(finished: &[Finished]) -> Result<Option<Deadlines>, MergeError> {
    let first_has = finished[0].result.deadlines.is_some();
    if let Some(odd) = finished
        .iter()
        .find(|f| f.result.deadlines.is_some() != first_has)
    {
        return Err(MergeError::disagrees(
            odd.repeat,
            "it counts deadlines and the first repeat does not, or the other way round".into(),
        ));
    }
    let mut total = 0;
    let mut met = 0;
    let mut late_frames = 0;
    let mut late_sum_us = 0.0;
    let mut late_max_us: f64 = 0.0;
    for f in finished {
        let Some(d) = f.result.deadlines else {
            return Ok(None);
        };
        let late = f.result.frames.executed.saturating_sub(d.met);
        total += d.total;
        met += d.met;
        late_frames += late;
        late_sum_us += d.late_mean_us.unwrap_or(0.0) * late as f64;
        late_max_us = late_max_us.max(d.late_max_us);
    }
    Ok(Some(Deadlines {
        total,
        met,
        met_pct: if total == 0 {
            0.0
        } else {
            100.0 * met as f64 / total as f64
        },
        late_mean_us: (late_frames > 0).then(|| late_sum_us / late_frames as f64),
        late_max_us,
    }))
}

/// CPU wanted and received summed; the shares computed again. The CPU the
/// frames that ran wanted is not stored, so it is taken back from each
/// repeat's received CPU and work ratio.
fn merge_cpu(finished: &[Finished]) -> CpuFigures {
    let wanted_ms: f64 = finished.iter().map(|f| f.result.cpu.wanted_ms).sum();
    let received_ms: f64 = finished.iter().map(|f| f.result.cpu.received_ms).sum();
    let (ran_received_ms, ran_wanted_ms) = finished
        .iter()
        .filter_map(|f| {
            let cpu = f.result.cpu;
            let ratio = cpu.work_ratio.filter(|r| *r > 0.0)?;
            Some((cpu.received_ms, cpu.received_ms / ratio))
        })
        .fold((0.0, 0.0), |(r, w), (ri, wi)| (r + ri, w + wi));
    CpuFigures {
        wanted_ms,
        received_ms,
        desired_pct: (wanted_ms > 0.0).then(|| 100.0 * received_ms / wanted_ms),
        work_ratio: (ran_wanted_ms > 0.0).then(|| ran_received_ms / ran_wanted_ms),
    }
}

/// Frame rate over the whole measured time, and the 1 % low of the merged
/// frame times (frame-rate probes only).
fn merge_gaming(
    finished: &[Finished],
    frame_time: Option<&LatencyHistogram>,
    frames: u64,
    measured_s: f64,
) -> Result<Option<GamingFigures>, MergeError> {
    if let Some(old) = finished
        .iter()
        .find(|f| f.result.gaming.is_some() && f.result.frame_histogram.is_none())
    {
        return Err(MergeError::disagrees(
            old.repeat,
            "it has frame rates but no frame-time histogram (an older feelbench wrote it), so its 1 % low cannot be merged".into(),
        ));
    }
    Ok(frame_time
        .filter(|_| frames > 0)
        .map(|histogram| GamingFigures {
            fps: frames as f64 / measured_s,
            low_1pct_fps: 1e9 / histogram.quantile_ns(0.99).max(1) as f64,
        }))
}

/// The first repeat's scheduling settings, which every repeat must share;
/// memory counts as locked only when every repeat locked it.
fn merge_sched(finished: &[Finished]) -> Result<SchedApplied, MergeError> {
    let key = |s: &SchedApplied| {
        format!(
            "{}{}, nice {}, timer slack {} ns",
            s.policy,
            s.fifo_priority.map(|p| format!(" {p}")).unwrap_or_default(),
            s.nice,
            s.timer_slack_ns
        )
    };
    let first = &finished[0].result.sched;
    if let Some(odd) = finished.iter().find(|f| key(&f.result.sched) != key(first)) {
        return Err(MergeError::disagrees(
            odd.repeat,
            format!(
                "its probe ran with {}, the first repeat's with {}",
                key(&odd.result.sched),
                key(first)
            ),
        ));
    }
    Ok(SchedApplied {
        memory_locked: finished.iter().all(|f| f.result.sched.memory_locked),
        ..first.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::super::merge_measurements;
    use super::super::tests::{histogram, ok, periodic};
    use crate::measure::latency::LatencyHistogram;
    use crate::report::schema::{GamingFigures, Measurement, ProbeResult};

    fn merge(results: Vec<ProbeResult>) -> ProbeResult {
        let measurements: Vec<Measurement> = results.into_iter().map(|r| ok(r, vec![])).collect();
        merge_measurements(&measurements).unwrap().result.unwrap()
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
        let mean_of_p99s = (a.latency_us.unwrap().p99_us + b.latency_us.unwrap().p99_us) / 2.0;
        let merged = merge(vec![a, b]);
        let union: Vec<u64> = fast.iter().chain(&mixed).copied().collect();
        let expected = histogram(&union).summary().unwrap();
        let latency = merged.latency_us.unwrap();
        assert_eq!(latency, expected);
        assert!((latency.p99_us - 10_000.0).abs() < 10.0, "{latency:?}");
        assert!((latency.p99_us - mean_of_p99s).abs() > 4_000.0);
        assert_eq!(latency.samples, 200);
        assert!((latency.mean_us - (100.0 + 90.0 + 100_000.0) / 200.0).abs() < 1.0);
        let stored = LatencyHistogram::from_base64(&merged.histogram).unwrap();
        assert_eq!(stored.summary().unwrap(), expected);
    }

    #[test]
    fn counts_sum_and_shares_are_computed_again() {
        let mut a = periodic(1.0, &[10, 20, 30], 1, 2); // 4 periods, 1 late frame
        let mut b = periodic(2.0, &[10; 6], 2, 3); // 8 periods, 3 late frames
        a.deadlines.as_mut().unwrap().late_mean_us = Some(400.0);
        a.deadlines.as_mut().unwrap().late_max_us = 900.0;
        b.deadlines.as_mut().unwrap().late_mean_us = Some(200.0);
        b.deadlines.as_mut().unwrap().late_max_us = 300.0;
        a.cpu.work_ratio = Some(0.5); // received 3 ms for 6 ms wanted by frames run
        let merged = merge(vec![a, b]);
        assert_eq!(merged.measured_s, 3.0);
        assert_eq!(merged.frames.executed, 9);
        assert_eq!(merged.frames.dropped, 3);
        let d = merged.deadlines.unwrap();
        assert_eq!((d.total, d.met), (12, 5));
        assert!((d.met_pct - 500.0 / 12.0).abs() < 1e-9);
        assert_eq!(d.late_mean_us, Some((400.0 + 3.0 * 200.0) / 4.0));
        assert_eq!(d.late_max_us, 900.0);
        assert_eq!(merged.cpu.wanted_ms, 12.0);
        assert_eq!(merged.cpu.received_ms, 9.0);
        assert_eq!(merged.cpu.desired_pct, Some(75.0));
        assert_eq!(merged.cpu.work_ratio, Some(9.0 / 12.0));
        assert!(merged.usage.is_none() && merged.batches.is_empty());
    }

    #[test]
    fn no_late_frames_means_no_mean_lateness() {
        let merged = merge(vec![periodic(1.0, &[10], 0, 1), periodic(1.0, &[10], 0, 1)]);
        let d = merged.deadlines.unwrap();
        assert_eq!(d.late_mean_us, None);
        assert_eq!(d.met_pct, 100.0);
    }

    /// Gaming figures of frames taking `frame_ms` each over their total.
    fn gaming(frame_ms: &[u64]) -> ProbeResult {
        let frame_time = histogram(&frame_ms.iter().map(|ms| ms * 1_000).collect::<Vec<_>>());
        let measured_s = frame_ms.iter().sum::<u64>() as f64 / 1e3;
        let mut result = periodic(measured_s, &vec![5; frame_ms.len()], 0, 0);
        result.deadlines = None;
        result.frame_histogram = Some(frame_time.to_base64());
        result.gaming = Some(GamingFigures {
            fps: frame_ms.len() as f64 / measured_s,
            low_1pct_fps: 1e9 / frame_time.quantile_ns(0.99) as f64,
        });
        result
    }

    #[test]
    fn gaming_rates_come_from_the_totals_and_the_merged_frame_times() {
        // 100 frames of 10 ms, then 100 frames of which 2 take 100 ms.
        let a = gaming(&[10; 100]);
        let mut slow = vec![10; 98];
        slow.extend([100, 100]);
        let b = gaming(&slow);
        let merged = merge(vec![a, b]);
        let g = merged.gaming.unwrap();
        assert!((g.fps - 200.0 / 2.18).abs() < 1e-9, "{g:?}");
        // The 198th of 200 frame times is 10 ms: the 1 % low is 100 fps,
        // where the mean of the two 1 % lows would be (100 + 10) / 2.
        assert!((g.low_1pct_fps - 100.0).abs() < 0.2, "{g:?}");
        assert!(merged.deadlines.is_none());
        let frames = LatencyHistogram::from_base64(merged.frame_histogram.as_ref().unwrap());
        assert_eq!(frames.unwrap().len(), 200);
    }

    #[test]
    fn gaming_without_frame_histogram_is_refused() {
        let mut old = gaming(&[10; 10]);
        old.frame_histogram = None;
        let measurements = [ok(gaming(&[10; 10]), vec![]), ok(old, vec![])];
        let err = merge_measurements(&measurements).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "repeat 2: it has no frame-time histogram and the first repeat has one"
            ),
            "{err}"
        );
    }

    #[test]
    fn damaged_histogram_is_an_error() {
        let mut bad = periodic(1.0, &[10], 0, 1);
        bad.histogram = "not base64!".into();
        let measurements = [ok(periodic(1.0, &[10], 0, 1), vec![]), ok(bad, vec![])];
        let err = merge_measurements(&measurements).unwrap_err().to_string();
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
        assert!(!merge(vec![a.clone(), b.clone()]).sched.memory_locked);
        b.sched.nice = 5;
        let measurements = [ok(a, vec![]), ok(b, vec![])];
        let err = merge_measurements(&measurements).unwrap_err().to_string();
        assert_eq!(
            err,
            "repeat 2: its probe ran with SCHED_OTHER, nice 5, timer slack 1 ns, the first repeat's with SCHED_OTHER, nice 0, timer slack 1 ns"
        );
    }

    #[test]
    fn deadlines_and_frame_rates_do_not_mix() {
        let measurements = [
            ok(periodic(1.0, &[10], 0, 1), vec![]),
            ok(gaming(&[10; 10]), vec![]),
        ];
        assert!(merge_measurements(&measurements).is_err());
    }
}
