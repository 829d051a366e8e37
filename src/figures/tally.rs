//! The raw material of a measurement: named sample distributions (a
//! histogram with the exact count and sum), named counts and named maxima.
//! Tallies merge by adding distributions and counts and keeping the larger
//! maxima, so every figure of a merge is computed from the union of the
//! data, never averaged from figures.

use crate::measure::latency::{HistogramDecodeError, LatencyHistogram};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A distribution of durations: how many, their exact sum, and their
/// histogram (base64 HdrHistogram V2, decoded only when a percentile is
/// asked for, so a run document with many sub-windows stays cheap to load).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Samples {
    pub count: u64,
    /// Exact sum of the durations, for the mean.
    pub sum_ns: u64,
    pub histogram: String,
}

impl Samples {
    /// The samples of `histogram`, whose durations add up to `sum_ns`.
    pub fn new(histogram: &LatencyHistogram, sum_ns: u64) -> Self {
        Self {
            count: histogram.len(),
            sum_ns,
            histogram: histogram.to_base64(),
        }
    }

    /// The histogram, read back.
    pub fn decode(&self) -> Result<LatencyHistogram, HistogramDecodeError> {
        LatencyHistogram::from_base64(&self.histogram)
    }

    /// Exact mean in µs; `None` without samples.
    pub fn mean_us(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64 / 1e3)
    }
}

/// A histogram of a tally that cannot be read back.
#[derive(Debug, thiserror::Error)]
#[error("its {name} histogram is damaged: {error}")]
pub struct TallyError {
    pub name: String,
    pub error: Box<HistogramDecodeError>,
}

/// Named distributions, counts and maxima of one measurement or of one of
/// its sub-windows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub samples: BTreeMap<String, Samples>,
    /// Added up on a merge.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counts: BTreeMap<String, f64>,
    /// The largest is kept on a merge.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub maxima: BTreeMap<String, f64>,
}

impl Tally {
    /// Adds the distribution `name`.
    pub fn with_samples(mut self, name: &str, histogram: &LatencyHistogram, sum_ns: u64) -> Self {
        self.samples
            .insert(name.to_string(), Samples::new(histogram, sum_ns));
        self
    }

    /// Adds the count `name`.
    pub fn with_count(mut self, name: &str, value: f64) -> Self {
        self.counts.insert(name.to_string(), value);
        self
    }

    /// Adds the maximum `name`.
    pub fn with_maximum(mut self, name: &str, value: f64) -> Self {
        self.maxima.insert(name.to_string(), value);
        self
    }

    /// The count `name`, 0 when it was never counted.
    pub fn count(&self, name: &str) -> f64 {
        self.counts.get(name).copied().unwrap_or(0.0)
    }

    /// True when the two tallies hold the same names, so they can merge.
    pub fn same_names(&self, other: &Tally) -> bool {
        self.samples.keys().eq(other.samples.keys())
            && self.counts.keys().eq(other.counts.keys())
            && self.maxima.keys().eq(other.maxima.keys())
    }

    /// The names the tally holds, for messages.
    pub fn names(&self) -> String {
        let names: Vec<&str> = self
            .samples
            .keys()
            .chain(self.counts.keys())
            .chain(self.maxima.keys())
            .map(String::as_str)
            .collect();
        names.join(", ")
    }

    /// The union of `tallies`: distributions and counts added, maxima kept.
    /// Names missing from some tallies count as empty there.
    pub fn merge<'a>(tallies: impl IntoIterator<Item = &'a Tally>) -> Result<Tally, TallyError> {
        let mut histograms: BTreeMap<String, (LatencyHistogram, u64)> = BTreeMap::new();
        let mut merged = Tally::default();
        for tally in tallies {
            for (name, samples) in &tally.samples {
                let decoded = samples.decode().map_err(|error| TallyError {
                    name: name.clone(),
                    error: Box::new(error),
                })?;
                let entry = histograms.entry(name.clone()).or_default();
                entry.0.add(&decoded);
                entry.1 += samples.sum_ns;
            }
            for (name, value) in &tally.counts {
                *merged.counts.entry(name.clone()).or_default() += value;
            }
            for (name, value) in &tally.maxima {
                let max = merged.maxima.entry(name.clone()).or_insert(*value);
                *max = max.max(*value);
            }
        }
        merged.samples = histograms
            .into_iter()
            .map(|(name, (h, sum_ns))| (name, Samples::new(&h, sum_ns)))
            .collect();
        Ok(merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(values_ns: &[u64]) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        values_ns.iter().for_each(|&v| h.record_ns(v));
        h
    }

    #[test]
    fn merging_adds_samples_and_counts_and_keeps_the_largest_maximum() {
        let a = Tally::default()
            .with_samples("latency", &histogram(&[1_000, 3_000]), 4_000)
            .with_count("met", 2.0)
            .with_maximum("late_max_us", 5.0);
        let b = Tally::default()
            .with_samples("latency", &histogram(&[2_000]), 2_000)
            .with_count("met", 1.0)
            .with_maximum("late_max_us", 9.0);
        let merged = Tally::merge([&a, &b]).unwrap();
        let latency = &merged.samples["latency"];
        assert_eq!((latency.count, latency.sum_ns), (3, 6_000));
        assert_eq!(latency.mean_us(), Some(2.0));
        assert_eq!(latency.decode().unwrap().len(), 3);
        assert_eq!(merged.count("met"), 3.0);
        assert_eq!(merged.maxima["late_max_us"], 9.0);
        assert!(merged.same_names(&a));
    }

    #[test]
    fn a_damaged_histogram_names_itself() {
        let mut bad = Tally::default().with_samples("latency", &histogram(&[1]), 1);
        bad.samples.get_mut("latency").unwrap().histogram = "not base64!".into();
        let err = Tally::merge([&bad]).unwrap_err().to_string();
        assert!(
            err.starts_with("its latency histogram is damaged: not base64"),
            "{err}"
        );
    }

    #[test]
    fn empty_samples_have_no_mean() {
        let empty = Samples::new(&LatencyHistogram::new(), 0);
        assert_eq!(empty.mean_us(), None);
        assert_eq!(Tally::default().count("anything"), 0.0);
    }
}
