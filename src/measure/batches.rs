//! Sub-windows ("batches") of a measurement: which one a moment falls in and
//! the latency figures kept for each, the raw material of batch-means
//! confidence intervals.

use super::latency::LatencyHistogram;
use super::window::Window;

/// Number of equal sub-windows a measurement is cut into.
pub const BATCHES: usize = 20;

/// Significant digits of the per-batch histograms: 1 % resolution in 36 KiB
/// each, against 264 KiB for the 3 digits of the main histogram. A probe
/// locks all of them in memory.
const BATCH_SIGNIFICANT_DIGITS: u8 = 2;

/// The sub-window of `window` that `at_ns` falls in. Sub-window `k` covers
/// `[start + k·len/BATCHES, start + (k+1)·len/BATCHES)` exactly (integer
/// arithmetic, no rounding); moments before the window count in the first,
/// moments at or after its end in the last.
pub fn batch_of(window: Window, at_ns: u64) -> usize {
    let length = u128::from(window.end_ns.saturating_sub(window.start_ns).max(1));
    let offset = u128::from(at_ns.saturating_sub(window.start_ns));
    let batch = offset * BATCHES as u128 / length;
    (batch as usize).min(BATCHES - 1)
}

/// Length of each sub-window of `window`, in seconds.
pub fn batch_seconds(window: Window) -> f64 {
    window.end_ns.saturating_sub(window.start_ns) as f64 / 1e9 / BATCHES as f64
}

/// Latencies recorded in one sub-window: their exact sum, and a histogram
/// smaller than the main one. All storage is allocated on
/// creation, so recording never allocates.
#[derive(Debug, Clone)]
pub struct BatchLatency {
    histogram: LatencyHistogram,
    sum_ns: u64,
}

impl Default for BatchLatency {
    fn default() -> Self {
        Self {
            histogram: LatencyHistogram::with_precision(BATCH_SIGNIFICANT_DIGITS),
            sum_ns: 0,
        }
    }
}

impl BatchLatency {
    /// Makes its storage resident, as [`LatencyHistogram::touch`].
    pub fn touch(&mut self) {
        self.histogram.touch();
    }

    /// Records one latency.
    pub fn record_ns(&mut self, latency_ns: u64) {
        self.histogram.record_ns(latency_ns);
        self.sum_ns += latency_ns;
    }

    /// The sub-window's histogram.
    pub fn histogram(&self) -> &LatencyHistogram {
        &self.histogram
    }

    /// Exact sum of the recorded latencies.
    pub fn sum_ns(&self) -> u64 {
        self.sum_ns
    }

    /// Number of latencies recorded.
    pub fn count(&self) -> u64 {
        self.histogram.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: Window = Window {
        start_ns: 1_000,
        end_ns: 1_000 + 2_000,
    };

    #[test]
    fn sub_windows_are_equal_slices_of_the_window() {
        // 2 000 ns in 20 slices of 100 ns.
        assert_eq!(batch_of(WINDOW, 1_000), 0);
        assert_eq!(batch_of(WINDOW, 1_099), 0);
        assert_eq!(batch_of(WINDOW, 1_100), 1);
        assert_eq!(batch_of(WINDOW, 2_950), 19);
        assert_eq!(batch_of(WINDOW, 2_999), 19);
        assert_eq!(batch_seconds(WINDOW), 100e-9);
    }

    #[test]
    fn uneven_windows_are_cut_exactly() {
        // 1 990 ns: slice k starts at k·99.5 ns.
        let window = Window {
            end_ns: 1_000 + 1_990,
            ..WINDOW
        };
        assert_eq!(batch_of(window, 1_000 + 99), 0);
        assert_eq!(batch_of(window, 1_000 + 100), 1);
        assert_eq!(batch_of(window, 1_000 + 199), 2);
        assert_eq!(batch_of(window, 1_000 + 1_990 - 1), 19);
    }

    #[test]
    fn moments_outside_the_window_go_to_the_first_or_last_slice() {
        assert_eq!(batch_of(WINDOW, 0), 0);
        assert_eq!(batch_of(WINDOW, 3_000), BATCHES - 1);
        assert_eq!(batch_of(WINDOW, u64::MAX), BATCHES - 1);
        let empty = Window {
            start_ns: 5,
            end_ns: 5,
        };
        assert_eq!(batch_of(empty, 5), 0);
    }

    #[test]
    fn mean_is_exact_and_p99_within_one_percent() {
        let mut batch = BatchLatency::default();
        for ns in [1_001, 1_002, 1_003, 1_000_000] {
            batch.record_ns(ns);
        }
        assert_eq!(batch.count(), 4);
        assert_eq!(batch.sum_ns(), 1_003_006);
        let p99 = batch.histogram().quantile_ns(0.99) as f64;
        assert!((p99 - 1_000_000.0).abs() <= 10_000.0, "p99 {p99}");
    }

    #[test]
    fn an_empty_batch_has_no_latency() {
        let batch = BatchLatency::default();
        assert_eq!((batch.count(), batch.sum_ns()), (0, 0));
        assert!(batch.histogram().is_empty());
    }
}
