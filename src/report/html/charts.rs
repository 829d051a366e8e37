//! The page's SVG charts of one probe: histograms and CDFs of its latency
//! samples, its compared figures with their intervals, its latency over
//! time.

use super::*;

/// The charts of one probe over `drawn` (one series each), in a `div`:
/// histogram and CDF of each set of its latency samples, each compared figure with its
/// intervals, and the latency over time of each scenario that recorded it.
pub fn charts(title: &str, sheet: &ProbeSheet, drawn: &[Drawn]) -> Result<String> {
    let mut svgs = Vec::new();
    let sets = sample_sets(sheet);
    for samples in &sets {
        let distributions = distributions(samples, drawn)?;
        if !distributions.is_empty() {
            let subject = subject(title, &sets, samples);
            svgs.push(histogram(&subject, &distributions)?);
            svgs.push(cdf(&subject, &distributions)?);
        }
    }
    for def in sheet.figures.iter().filter(|f| f.compared) {
        svgs.extend(figure_intervals(title, def, drawn).transpose()?);
    }
    for d in drawn {
        svgs.extend(over_time(title, d).transpose()?);
    }
    Ok(format!(
        "<div class=\"charts\">\n{}</div>\n",
        svgs.join("\n")
    ))
}

/// Figure `def` of each drawn scenario with its interval, `None` when no
/// scenario has it.
pub(super) fn figure_intervals(
    title: &str,
    def: &FigureDef,
    drawn: &[Drawn],
) -> Option<Result<String>> {
    let figure = Figure::Probe(def.clone());
    let values: Vec<Ranged> = drawn
        .iter()
        .filter_map(|d| {
            let found = estimate(d.scenario, &figure)?;
            let computed = found.uncertainty.map(|(e, _)| e.interval(RUN_LEVEL));
            let (low, high) = computed
                .map(|c| figure.within_range(c))
                .unwrap_or((found.value, found.value));
            let cut = computed.is_some_and(|c| Cut::between(c, (low, high)).any());
            let shown = |value| def.unit.shown(value);
            Some(Ranged {
                name: match cut {
                    true => format!("{} (interval cut)", d.name),
                    false => d.name.clone(),
                },
                value: shown(found.value),
                low: shown(low),
                high: shown(high),
            })
        })
        .collect();
    if values.is_empty() {
        return None;
    }
    let title = format!("{title}: {} ({}% interval)", def.label, RUN_LEVEL * 100.0);
    let labels = Labels {
        title: &title,
        x: "",
        y: &def.label,
    };
    Some(chart::intervals(labels, &values))
}

/// The latency series a scenario recorded, if any.
pub(super) fn series_of<'a>(d: &Drawn<'a>) -> Option<&'a LatencySeries> {
    d.scenario.outcome.result.as_ref()?.series.as_ref()
}

/// The latency over time of one drawn scenario with its ideal line, `None`
/// when it recorded none.
pub(super) fn over_time(title: &str, d: &Drawn) -> Option<Result<String>> {
    let series = series_of(d)?;
    let line = |name: &str, of: fn(&SeriesPoint) -> f64| Line {
        name: name.to_string(),
        points: series
            .points
            .iter()
            .map(|p| (p.t_s, of(p) / 1000.0))
            .collect(),
    };
    let title = format!("{title} under {}: latency over time", d.name);
    let labels = Labels {
        title: &title,
        x: "time (s)",
        y: "latency (ms)",
    };
    // Until the series was merged each point is one sample: its max is its mean.
    let lines = match series.points.iter().any(|p| p.count > 1) {
        true => vec![line("max", |p| p.max_us), line("mean", |p| p.mean_us)],
        false => vec![line("latency", |p| p.mean_us)],
    };
    Some(chart::over_time(
        labels,
        &lines,
        series.ideal_us.map(|us| us / 1000.0),
    ))
}

/// The names of the latency distributions the sheet's quantiles are taken
/// of, in the order of its figures (`latency`; micro's `fork`, `exec`, ...).
pub(super) fn sample_sets(sheet: &ProbeSheet) -> Vec<&str> {
    let mut sets: Vec<&str> = Vec::new();
    for samples in sheet.figures.iter().filter_map(quantile_of) {
        if !sets.contains(&samples) {
            sets.push(samples);
        }
    }
    sets
}

/// The distribution figure `def` is a quantile of, if it is one.
pub(super) fn quantile_of(def: &FigureDef) -> Option<&str> {
    match &def.formula {
        Formula::Quantile { samples, .. } => Some(samples.as_str()),
        _ => None,
    }
}

/// What a chart of distribution `samples` is titled after: `title`, with
/// the distribution's name when the probe has several (`micro (fork)`).
pub(super) fn subject(title: &str, sets: &[&str], samples: &str) -> String {
    match sets.len() {
        0 | 1 => title.to_string(),
        _ => format!("{title} ({samples})"),
    }
}

/// A scenario's latency distribution as its histogram's buckets.
pub(super) struct Distribution {
    /// The series' name.
    name: String,
    /// Each bucket's highest latency (ms) and its count, in order.
    buckets: Vec<(f64, u64)>,
}

/// Each drawn scenario's buckets (ms, count) of distribution `name`,
/// named; scenarios without it (a failed scenario, an operation left out)
/// are left out.
pub(super) fn distributions(name: &str, drawn: &[Drawn]) -> Result<Vec<Distribution>> {
    let mut out = Vec::new();
    for d in drawn {
        let Some(samples) = d
            .scenario
            .outcome
            .result
            .as_ref()
            .and_then(|r| r.tally.samples.get(name))
        else {
            continue;
        };
        let histogram: LatencyHistogram = samples
            .decode()
            .with_context(|| format!("the {name:?} histogram of {} is damaged", d.name))?;
        let buckets = histogram
            .recorded()
            .into_iter()
            .map(|(ns, n)| (ns as f64 / 1e6, n))
            .collect();
        out.push(Distribution {
            name: d.name.clone(),
            buckets,
        });
    }
    Ok(out)
}

/// The latency histogram: the buckets re-binned into bins of equal width
/// on a log scale, from the smallest latency to the largest (a linear axis
/// puts nearly every sample in its first bins when the largest is ten
/// times the median).
pub(super) fn histogram(title: &str, distributions: &[Distribution]) -> Result<String> {
    let title = format!("{title}: latency histogram");
    chart::histogram(
        Labels {
            title: &title,
            x: "latency (ms)",
            y: "samples",
        },
        &log_bins(distributions),
    )
}

/// Each distribution as log-spaced bins between the smallest and the
/// largest latency of all: a point per bin at its geometric middle, with
/// its count. Twice the square root of the largest sample count bins,
/// within [`HISTOGRAM_BINS`], so that a few dozen samples do not make a
/// comb.
fn log_bins(distributions: &[Distribution]) -> Vec<Line> {
    let (bottom, top) = latency_range(distributions);
    let samples = distributions
        .iter()
        .map(|d| d.buckets.iter().map(|b| b.1).sum::<u64>())
        .max()
        .unwrap_or(0);
    let (fewest, most) = HISTOGRAM_BINS;
    let count = ((2.0 * (samples as f64).sqrt()) as usize).clamp(fewest, most);
    let per_bin = (top / bottom).ln() / count as f64;
    distributions
        .iter()
        .map(|Distribution { name, buckets }| {
            let mut bins = vec![0u64; count];
            for &(ms, n) in buckets {
                let at = ((ms.max(bottom) / bottom).ln() / per_bin) as usize;
                bins[at.min(count - 1)] += n;
            }
            let points = bins
                .iter()
                .enumerate()
                .map(|(i, &n)| (bottom * ((i as f64 + 0.5) * per_bin).exp(), n as f64))
                .collect();
            Line {
                name: name.clone(),
                points,
            }
        })
        .collect()
}

/// The latency CDF at log-spaced latencies from the smallest to the largest.
pub(super) fn cdf(title: &str, distributions: &[Distribution]) -> Result<String> {
    let (bottom, top) = latency_range(distributions);
    let steps = (CDF_POINTS - 1) as f64;
    let lines: Vec<Line> = distributions
        .iter()
        .map(|Distribution { name, buckets }| {
            let total = buckets.iter().map(|b| b.1).sum::<u64>().max(1) as f64;
            let points = (0..CDF_POINTS)
                .map(|i| {
                    let at = bottom * (top / bottom).powf(i as f64 / steps);
                    let below: u64 = buckets
                        .iter()
                        .filter(|b| b.0 <= at * (1.0 + 1e-9))
                        .map(|b| b.1)
                        .sum();
                    (at, below as f64 / total)
                })
                .collect();
            Line {
                name: name.clone(),
                points,
            }
        })
        .collect();
    let title = format!("{title}: latency CDF");
    chart::cdf(
        Labels {
            title: &title,
            x: "latency (ms)",
            y: "share of samples at or below",
        },
        &lines,
    )
}

/// The smallest and the largest latency of all distributions (ms), for a
/// log axis: the largest at least 1 µs, the smallest above 0, at most a
/// millionth of the largest below it, and below the largest (a tenth of
/// it when every sample is the same).
fn latency_range(distributions: &[Distribution]) -> (f64, f64) {
    let top = distributions
        .iter()
        .filter_map(|d| d.buckets.last().map(|(ms, _)| *ms))
        .fold(1e-3, f64::max);
    let bottom = distributions
        .iter()
        .filter_map(|d| d.buckets.first().map(|(ms, _)| *ms))
        .fold(top, f64::min)
        .max(top * 1e-6)
        .max(1e-6);
    match bottom < top {
        true => (bottom, top),
        false => (top / 10.0, top),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ms` latencies as a histogram's buckets, named `name`.
    fn distribution(name: &str, ms: impl Iterator<Item = f64>) -> Distribution {
        let mut h = LatencyHistogram::new();
        ms.for_each(|ms| h.record_ns((ms * 1e6) as u64));
        let buckets = h.recorded().into_iter().map(|(ns, n)| (ns as f64 / 1e6, n));
        Distribution {
            name: name.into(),
            buckets: buckets.collect(),
        }
    }

    #[test]
    fn a_long_tailed_distribution_spreads_over_many_log_bins() {
        // 298 samples from 0.05 to 0.3 ms and two at 2.7 ms: on a linear
        // axis from 0 they fill the first 11 % of it.
        let bulk = (0..298).map(|i| 0.05 + 0.25 * f64::from(i) / 297.0);
        let long = distribution("x", bulk.chain([2.7, 2.7]));
        let lines = log_bins(std::slice::from_ref(&long));
        let counts: Vec<f64> = lines[0].points.iter().map(|p| p.1).collect();
        // Twice the square root of 300.
        assert_eq!(counts.len(), 34);
        assert_eq!(counts.iter().sum::<f64>(), 300.0);
        let used = counts.iter().filter(|&&n| n > 0.0).count();
        assert!(used >= 34 * 4 / 10, "{used} bins hold samples: {counts:?}");
        assert_eq!(counts[33], 2.0, "the tail in the last bin");
        let xs: Vec<f64> = lines[0].points.iter().map(|p| p.0).collect();
        assert!(xs[0] >= 0.04 && xs[33] <= 2.8, "{xs:?}");
        // Equal steps on a log scale.
        let step = |i: usize| xs[i + 1] / xs[i];
        assert!((step(0) - step(30)).abs() < 1e-9);
        // One value only: a finite range below it, the fewest bins.
        let same = distribution("y", [1.0, 1.0].into_iter());
        let lines = log_bins(&[same]);
        assert!(lines[0].points.iter().all(|p| p.0.is_finite() && p.0 > 0.0));
        assert_eq!(lines[0].points.len(), HISTOGRAM_BINS.0);
        assert_eq!(lines[0].points[HISTOGRAM_BINS.0 - 1].1, 2.0);
    }
}
