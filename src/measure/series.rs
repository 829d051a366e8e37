//! Latency over time, recorded while measuring into a buffer of a fixed
//! number of points allocated up front: every sample is a point of its own
//! until the buffer is full; then neighbouring pairs are merged in place
//! (their count, minimum, sum and maximum), halving the resolution, so each
//! point covers twice as many samples as before. The series stays bounded
//! however long the run, and recording never allocates.

/// Points a probe's series holds at most: 1,024. A chart is about a
/// thousand pixels wide, so more points could not be seen, and the minimum
/// and maximum of each merged point keep every spike visible. Once merging,
/// a series holds 512 to 1,024 points whatever the run's length: about
/// 190 bytes each in a (pretty-printed) run document, so at most ≈ 200 KB
/// per scenario and ≈ 6 MB for the 32 scenarios of a default run of any
/// length.
pub const SERIES_POINTS: usize = 1024;

/// The samples of one point: one sample, or the neighbours merged into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeriesBucket {
    /// When its first sample was taken, from the measurement's start.
    pub offset_ns: u64,
    /// Samples in it.
    pub count: u64,
    /// Their smallest latency.
    pub min_ns: u64,
    /// Their largest latency.
    pub max_ns: u64,
    /// Their latencies added up.
    pub sum_ns: u64,
}

impl SeriesBucket {
    /// A bucket of one sample.
    fn single(offset_ns: u64, latency_ns: u64) -> Self {
        Self {
            offset_ns,
            count: 1,
            min_ns: latency_ns,
            max_ns: latency_ns,
            sum_ns: latency_ns,
        }
    }

    /// Adds a later sample.
    fn add(&mut self, latency_ns: u64) {
        self.count += 1;
        self.min_ns = self.min_ns.min(latency_ns);
        self.max_ns = self.max_ns.max(latency_ns);
        self.sum_ns += latency_ns;
    }

    /// This bucket and the one after it, as one.
    fn merged_with(self, later: Self) -> Self {
        Self {
            offset_ns: self.offset_ns,
            count: self.count + later.count,
            min_ns: self.min_ns.min(later.min_ns),
            max_ns: self.max_ns.max(later.max_ns),
            sum_ns: self.sum_ns + later.sum_ns,
        }
    }
}

/// A bounded series of latencies in time order (see the module's doc).
#[derive(Debug, Clone)]
pub struct SeriesRecorder {
    buckets: Vec<SeriesBucket>,
    capacity: usize,
    /// Samples a point covers at the current resolution.
    per_point: u64,
}

impl SeriesRecorder {
    /// An empty series of at most `points` points (rounded up to an even
    /// number, at least 2), allocated now.
    pub fn with_points(points: usize) -> Self {
        let capacity = points.max(2).next_multiple_of(2);
        Self {
            buckets: Vec::with_capacity(capacity),
            capacity,
            per_point: 1,
        }
    }

    /// Records a sample of `latency_ns` taken `offset_ns` after the
    /// measurement's start (samples come in time order). Never allocates.
    pub fn record(&mut self, offset_ns: u64, latency_ns: u64) {
        match self.buckets.last_mut() {
            Some(last) if last.count < self.per_point => last.add(latency_ns),
            _ => {
                if self.buckets.len() == self.capacity {
                    self.halve();
                }
                self.buckets
                    .push(SeriesBucket::single(offset_ns, latency_ns));
            }
        }
    }

    /// Merges neighbouring pairs of a full buffer in place.
    fn halve(&mut self) {
        let half = self.capacity / 2;
        for i in 0..half {
            self.buckets[i] = self.buckets[2 * i].merged_with(self.buckets[2 * i + 1]);
        }
        self.buckets.truncate(half);
        self.per_point *= 2;
    }

    /// The points so far, in time order.
    pub fn points(&self) -> &[SeriesBucket] {
        &self.buckets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorder of `points` fed samples `0..samples`, sample `i` taken at
    /// `10 i` ns with a latency of `i` ns.
    fn fed(points: usize, samples: u64) -> SeriesRecorder {
        let mut series = SeriesRecorder::with_points(points);
        (0..samples).for_each(|i| series.record(10 * i, i));
        series
    }

    #[test]
    fn every_sample_is_a_point_until_the_buffer_is_full() {
        let series = fed(8, 8);
        let points = series.points();
        assert_eq!(points.len(), 8);
        for (i, p) in points.iter().enumerate() {
            let i = i as u64;
            assert_eq!(*p, SeriesBucket::single(10 * i, i));
        }
    }

    #[test]
    fn a_full_buffer_merges_neighbouring_pairs() {
        let series = fed(8, 9);
        let points = series.points();
        // 8 samples merged into 4 pairs, then the ninth starts a new point.
        assert_eq!(points.len(), 5);
        assert_eq!(
            points[1],
            SeriesBucket {
                offset_ns: 20,
                count: 2,
                min_ns: 2,
                max_ns: 3,
                sum_ns: 5,
            }
        );
        assert_eq!(points[4], SeriesBucket::single(80, 8));
    }

    #[test]
    fn merged_points_keep_order_counts_and_extremes() {
        // Latencies with spikes, so merged minima and maxima are not the
        // first and last samples of their points.
        let latency = |i: u64| (i * 7919) % 1000;
        let mut series = SeriesRecorder::with_points(16);
        let samples = 1000;
        (0..samples).for_each(|i| series.record(10 * i, latency(i)));
        let points = series.points();
        assert!(points.len() <= 16 && points.len() > 8);
        assert!(points.windows(2).all(|w| w[0].offset_ns < w[1].offset_ns));
        assert_eq!(points.iter().map(|p| p.count).sum::<u64>(), samples);
        let mut first = 0;
        for p in points {
            assert_eq!(p.offset_ns, 10 * first);
            let covered: Vec<u64> = (first..first + p.count).map(latency).collect();
            assert_eq!(p.min_ns, *covered.iter().min().unwrap());
            assert_eq!(p.max_ns, *covered.iter().max().unwrap());
            assert_eq!(p.sum_ns, covered.iter().sum::<u64>());
            first += p.count;
        }
    }

    #[test]
    fn the_series_stays_bounded_and_never_reallocates() {
        let mut series = SeriesRecorder::with_points(SERIES_POINTS);
        let allocated = series.buckets.capacity();
        for i in 0..1_000_000 {
            series.record(i, i % 97);
            assert!(series.points().len() <= SERIES_POINTS);
        }
        assert_eq!(series.buckets.capacity(), allocated);
        assert!(series.points().len() > SERIES_POINTS / 2);
    }

    #[test]
    fn odd_or_tiny_sizes_are_rounded_up_to_even() {
        assert_eq!(SeriesRecorder::with_points(0).capacity, 2);
        assert_eq!(SeriesRecorder::with_points(7).capacity, 8);
        let series = fed(1, 5);
        assert_eq!(series.points().iter().map(|p| p.count).sum::<u64>(), 5);
        assert!(series.points().len() <= 2);
    }
}
