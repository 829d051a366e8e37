//! Latency histograms (HdrHistogram, nanosecond values) and the summary figures
//! derived from them. Every figure comes from the histogram, so summaries of
//! merged histograms are computed the same way as single ones.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;

/// Largest value a histogram can hold (one hour, in ns); larger ones are
/// recorded as this value.
const MAX_TRACKABLE_NS: u64 = 3_600 * 1_000_000_000;
/// Significant decimal digits kept for every value (0.1 % resolution).
const SIGNIFICANT_DIGITS: u8 = 3;

/// A histogram of latencies in nanoseconds.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    histogram: Histogram<u64>,
}

/// A stored histogram that cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum HistogramDecodeError {
    #[error("not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("not an HdrHistogram V2 serialisation: {0}")]
    Format(#[from] hdrhistogram::serialization::DeserializeError),
    #[error("values beyond the range feelbench records: {0}")]
    Range(#[from] hdrhistogram::AdditionError),
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram covering 1 ns to one hour at 3 significant digits.
    /// Its whole storage is allocated here, so recording never allocates.
    pub fn new() -> Self {
        Self::with_precision(SIGNIFICANT_DIGITS)
    }

    /// An empty histogram covering 1 ns to one hour, keeping
    /// `significant_digits` (0–5) decimal digits of every value; each digit
    /// less takes about an eighth of the memory. Allocated whole, like [`new`].
    ///
    /// [`new`]: Self::new
    pub fn with_precision(significant_digits: u8) -> Self {
        let histogram = Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, significant_digits)
            .expect("histogram bounds and precision are valid");
        Self { histogram }
    }

    /// Writes every count of its storage, leaving it empty: its pages are
    /// then resident before a measurement whose memory is not locked (a
    /// probe that shares its memory), which would otherwise fault them in
    /// on first use.
    pub fn touch(&mut self) {
        self.histogram.reset();
    }

    /// Records one latency; values beyond one hour are stored as one hour.
    pub fn record_ns(&mut self, latency_ns: u64) {
        self.histogram.saturating_record(latency_ns);
    }

    /// Number of values recorded.
    pub fn len(&self) -> u64 {
        self.histogram.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.histogram.is_empty()
    }

    /// Value at `quantile` (0.0–1.0), in nanoseconds.
    pub fn quantile_ns(&self, quantile: f64) -> u64 {
        self.histogram.value_at_quantile(quantile)
    }

    /// Population standard deviation of the values, in nanoseconds.
    pub fn stdev_ns(&self) -> f64 {
        self.histogram.stdev()
    }

    /// Largest value recorded, in nanoseconds (0 when empty).
    pub fn max_ns(&self) -> u64 {
        self.histogram.max()
    }

    /// Smallest value recorded, in nanoseconds (0 when empty).
    pub fn min_ns(&self) -> u64 {
        self.histogram.min()
    }

    /// Mean of the values within one standard deviation of the median
    /// (resp1's "1sdavg"), in nanoseconds; `None` when empty. Each value
    /// counts as the middle of its bucket, as in the histogram's own mean
    /// and standard deviation, the median too.
    pub fn mean_near_median_ns(&self) -> Option<f64> {
        let h = &self.histogram;
        let middle = |value: u64| h.median_equivalent(value) as f64;
        let median = middle(h.value_at_quantile(0.5));
        let radius = h.stdev();
        let (sum, count) = h
            .iter_recorded()
            .map(|v| (middle(v.value_iterated_to()), v.count_at_value() as f64))
            .filter(|(value, _)| (value - median).abs() <= radius)
            .fold((0.0, 0.0), |(sum, n), (value, count)| {
                (sum + value * count, n + count)
            });
        (count > 0.0).then(|| sum / count)
    }

    /// The mean of `scale / value` over the slowest ⌈`fraction` · n⌉
    /// values (`fraction` in (0, 1]); `None` when empty. With values as
    /// frame times in ns and `scale` 1e9, the mean frames per second of the
    /// slowest frames: MangoHud's "1% Min FPS" with `fraction` 0.01, its
    /// average FPS with 1. Each value counts as the middle of its bucket.
    pub fn slowest_mean_rate(&self, fraction: f64, scale: f64) -> Option<f64> {
        let h = &self.histogram;
        let wanted = (h.len() as f64 * fraction).ceil().max(1.0) as u64;
        if h.is_empty() {
            return None;
        }
        let buckets: Vec<(u64, u64)> = self.recorded();
        let (mut left, mut sum) = (wanted, 0.0);
        for &(value, count) in buckets.iter().rev() {
            let taken = count.min(left);
            let middle = h.median_equivalent(value).max(1) as f64;
            sum += taken as f64 * scale / middle;
            left -= taken;
            if left == 0 {
                break;
            }
        }
        Some(sum / wanted as f64)
    }

    /// Every recorded bucket in increasing order: the highest value it
    /// holds (ns) and how many values it holds.
    pub fn recorded(&self) -> Vec<(u64, u64)> {
        self.histogram
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }

    /// The histogram as base64 of its HdrHistogram V2 serialisation.
    pub fn to_base64(&self) -> String {
        let mut bytes = Vec::new();
        V2Serializer::new()
            .serialize(&self.histogram, &mut bytes)
            .expect("serialising into memory cannot fail");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Reads back a histogram written by [`Self::to_base64`], into the
    /// usual bounds (so any two decoded histograms can be added).
    pub fn from_base64(text: &str) -> Result<Self, HistogramDecodeError> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(text)?;
        let stored: Histogram<u64> = Deserializer::new().deserialize(&mut bytes.as_slice())?;
        let mut histogram = Self::new();
        histogram.histogram.add(&stored)?;
        Ok(histogram)
    }

    /// Adds every value recorded in `other`.
    pub fn add(&mut self, other: &Self) {
        self.histogram
            .add(&other.histogram)
            .expect("histograms of the same bounds always add");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram_of(values_ns: &[u64]) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for &v in values_ns {
            h.record_ns(v);
        }
        h
    }

    #[test]
    fn sd_is_the_standard_deviation_not_the_rms() {
        // Values 2,4,4,4,5,5,7,9 µs: mean 5, population SD exactly 2, RMS ≈ 5.39.
        let h = histogram_of(&[2000, 4000, 4000, 4000, 5000, 5000, 7000, 9000]);
        assert!((h.stdev_ns() - 2_000.0).abs() < 10.0, "sd {}", h.stdev_ns());
        assert!(
            (h.max_ns() as f64 - 9_000.0).abs() < 10.0,
            "max {}",
            h.max_ns()
        );
        assert_eq!(h.len(), 8);
    }

    #[test]
    fn the_mean_near_the_median_keeps_the_values_within_one_sd() {
        // Median 120 µs, SD ≈ 354 µs: 1000 µs is left out.
        let h = histogram_of(&[100_000, 110_000, 120_000, 130_000, 1_000_000]);
        assert!((h.min_ns() as f64 - 100_000.0).abs() <= 100.0);
        let near = h.mean_near_median_ns().unwrap();
        assert!((near - 115_000.0).abs() <= 115.0, "{near}");
        // Equal values are all within an SD of 0.
        let equal = histogram_of(&[7_000_000; 4]).mean_near_median_ns().unwrap();
        assert!((equal - 7_000_000.0).abs() <= 7_000.0, "{equal}");
        assert_eq!(LatencyHistogram::new().mean_near_median_ns(), None);
    }

    #[test]
    fn percentiles_are_ordered() {
        let values: Vec<u64> = (1..=10_000).map(|i| i * 1_000).collect();
        let h = histogram_of(&values);
        let q = |q: f64| h.quantile_ns(q) as f64;
        assert!(q(0.5) <= q(0.9) && q(0.9) <= q(0.99));
        assert!(q(0.99) <= q(0.999) && q(0.999) <= h.max_ns() as f64);
        assert!((q(0.5) - 5_000_000.0).abs() / 5_000_000.0 < 0.002);
        assert!((q(0.99) - 9_900_000.0).abs() / 9_900_000.0 < 0.002);
    }

    #[test]
    fn recorded_buckets_hold_every_value_in_order() {
        let h = histogram_of(&[1_000, 1_000, 5_000_000]);
        let buckets = h.recorded();
        assert_eq!(buckets.iter().map(|(_, n)| n).sum::<u64>(), 3);
        assert_eq!(buckets[0], (1_000, 2));
        assert!(buckets[1].0 >= 5_000_000);
    }

    #[test]
    fn empty_histogram_is_empty() {
        let h = LatencyHistogram::new();
        assert!(h.is_empty() && h.max_ns() == 0);
    }

    #[test]
    fn base64_is_a_standard_v2_histogram_with_every_value() {
        let values = [1, 50_000, 70_000, 3_000_000_000];
        let h = histogram_of(&values);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(h.to_base64())
            .unwrap();
        let back: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .unwrap();
        assert_eq!(back.len(), 4);
        for v in values {
            assert_eq!(back.count_at(v), 1, "value {v}");
        }
    }

    #[test]
    fn base64_reads_back_and_histograms_add() {
        let mut a = histogram_of(&[1_000, 2_000, 3_000]);
        let b = LatencyHistogram::from_base64(&histogram_of(&[4_000, 9_000]).to_base64()).unwrap();
        a.add(&b);
        assert_eq!(a.len(), 5);
        assert!((a.max_ns() as f64 - 9_000.0).abs() < 10.0);
        assert!((a.quantile_ns(0.5) as f64 - 3_000.0).abs() < 5.0);
        let empty = LatencyHistogram::from_base64(&LatencyHistogram::new().to_base64()).unwrap();
        assert!(empty.is_empty());
    }

    #[test]
    fn damaged_base64_is_an_error_not_a_panic() {
        for text in [
            "%%%",
            "",
            "AAAA",
            &base64::engine::general_purpose::STANDARD.encode([0x1c, 0x84, 0x93, 0x13, 0, 0]),
        ] {
            assert!(LatencyHistogram::from_base64(text).is_err(), "{text:?}");
        }
    }

    /// MangoHud's lows of 1 000 frames: 990 of 10 ms and 10 of 20, 25,
    /// ..., 65 ms. The slowest 1 % is those 10 frames, whose mean rate is
    /// the mean of 1000/ms over them; the slowest 0.1 % is the 65 ms one;
    /// all of them, the mean of every frame's rate.
    #[test]
    fn the_mean_rate_of_the_slowest_values_counts_ceil_of_their_share() {
        let slow: Vec<u64> = (0..10).map(|k| (20 + 5 * k) * 1_000_000).collect();
        let mut values = vec![10_000_000; 990];
        values.extend(&slow);
        let h = histogram_of(&values);
        let expected = slow.iter().map(|&ns| 1e9 / ns as f64).sum::<f64>() / 10.0;
        let low1 = h.slowest_mean_rate(0.01, 1e9).unwrap();
        assert!(
            (low1 - expected).abs() < expected * 5e-4,
            "{low1} {expected}"
        );
        let low01 = h.slowest_mean_rate(0.001, 1e9).unwrap();
        assert!((low01 - 1e3 / 65.0).abs() < 0.01, "{low01}");
        let all = h.slowest_mean_rate(1.0, 1e9).unwrap();
        let mean = (990.0 * 100.0 + 10.0 * expected) / 1000.0;
        assert!((all - mean).abs() < mean * 5e-4, "{all} {mean}");
        // ⌈0.01 · 5⌉ = 1: the slowest one of five.
        let few = histogram_of(&[10_000_000, 10_000_000, 10_000_000, 10_000_000, 50_000_000]);
        assert!((few.slowest_mean_rate(0.01, 1e9).unwrap() - 20.0).abs() < 0.01);
        assert_eq!(LatencyHistogram::new().slowest_mean_rate(0.01, 1e9), None);
    }
}
