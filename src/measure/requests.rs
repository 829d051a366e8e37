//! Request latencies of a load, kept as counts (tiobench's figures): how
//! many requests, their exact sum and largest, and how many took longer
//! than each threshold. Counts merge by adding, so the requests of a
//! load's processes and of a scenario's repeats merge exactly.

use serde::{Deserialize, Serialize};

/// The requests a load made, against thresholds fixed for the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestLatencies {
    /// Requests counted.
    pub count: u64,
    /// Exact sum of their durations.
    pub sum_ns: u64,
    /// The longest.
    pub max_ns: u64,
    /// The thresholds, ascending.
    pub thresholds_ns: Vec<u64>,
    /// Requests longer than each threshold, in the same order.
    pub over: Vec<u64>,
}

/// Request latencies counted against other thresholds cannot merge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("request latencies counted over different thresholds ({a:?} and {b:?} ns)")]
pub struct ThresholdsDiffer {
    a: Vec<u64>,
    b: Vec<u64>,
}

impl RequestLatencies {
    /// No requests yet, to be counted over `thresholds_ns`.
    pub fn new(thresholds_ns: &[u64]) -> Self {
        Self {
            count: 0,
            sum_ns: 0,
            max_ns: 0,
            thresholds_ns: thresholds_ns.to_vec(),
            over: vec![0; thresholds_ns.len()],
        }
    }

    /// Counts one request that took `ns`.
    pub fn record(&mut self, ns: u64) {
        self.count += 1;
        self.sum_ns += ns;
        self.max_ns = self.max_ns.max(ns);
        for (threshold, over) in self.thresholds_ns.iter().zip(&mut self.over) {
            *over += u64::from(ns > *threshold);
        }
    }

    /// Adds `other`'s requests to these.
    pub fn add(&mut self, other: &RequestLatencies) -> Result<(), ThresholdsDiffer> {
        if other.thresholds_ns != self.thresholds_ns {
            return Err(ThresholdsDiffer {
                a: self.thresholds_ns.clone(),
                b: other.thresholds_ns.clone(),
            });
        }
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.max_ns = self.max_ns.max(other.max_ns);
        self.over
            .iter_mut()
            .zip(&other.over)
            .for_each(|(a, b)| *a += b);
        Ok(())
    }

    /// The union of `all` (none: `None`).
    pub fn merge<'a>(
        mut all: impl Iterator<Item = &'a RequestLatencies>,
    ) -> Result<Option<RequestLatencies>, ThresholdsDiffer> {
        let Some(first) = all.next() else {
            return Ok(None);
        };
        let mut merged = first.clone();
        all.try_for_each(|other| merged.add(other))?;
        Ok(Some(merged))
    }

    /// Mean duration in µs; `None` without requests.
    pub fn mean_us(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64 / 1e3)
    }

    /// Each threshold with the % of requests longer than it; none without
    /// requests.
    pub fn over_pct(&self) -> Vec<(u64, f64)> {
        if self.count == 0 {
            return Vec::new();
        }
        let pct = |over: u64| 100.0 * over as f64 / self.count as f64;
        self.thresholds_ns
            .iter()
            .zip(&self.over)
            .map(|(&t, &over)| (t, pct(over)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn counted(durations_ms: &[u64]) -> RequestLatencies {
        let mut r = RequestLatencies::new(&[100 * MS, 2_000 * MS]);
        durations_ms.iter().for_each(|&d| r.record(d * MS));
        r
    }

    #[test]
    fn requests_count_over_each_threshold_they_exceed() {
        let r = counted(&[1, 100, 150, 2_500]);
        assert_eq!((r.count, r.sum_ns, r.max_ns), (4, 2_751 * MS, 2_500 * MS));
        // 100 ms is not over 100 ms.
        assert_eq!(r.over, [2, 1]);
        assert_eq!(r.mean_us(), Some(687_750.0));
        assert_eq!(r.over_pct(), [(100 * MS, 50.0), (2_000 * MS, 25.0)]);
    }

    #[test]
    fn merging_adds_counts_and_keeps_the_longest() {
        let (a, b) = (counted(&[1, 150]), counted(&[3_000]));
        let merged = RequestLatencies::merge([&a, &b].into_iter())
            .unwrap()
            .unwrap();
        assert_eq!(merged, counted(&[1, 150, 3_000]));
        assert_eq!(RequestLatencies::merge(std::iter::empty()), Ok(None));
    }

    #[test]
    fn other_thresholds_do_not_merge_and_no_requests_have_no_figures() {
        let other = RequestLatencies::new(&[MS]);
        let err = counted(&[1]).add(&other).unwrap_err().to_string();
        assert!(
            err.starts_with("request latencies counted over different thresholds"),
            "{err}"
        );
        assert_eq!(other.mean_us(), None);
        assert!(other.over_pct().is_empty());
    }
}
