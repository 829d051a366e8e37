//! How a figure is computed from a [`Tally`]: a small closed set of
//! formulas over its named distributions, counts and maxima. Formulas are
//! data, so a run document can carry them and any feelbench renders,
//! merges and compares a probe it does not know.

use super::tally::Tally;
use crate::measure::latency::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A figure as a function of a tally. Durations come out in µs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "of")]
pub enum Formula {
    /// How many samples the distribution holds.
    SampleCount { samples: String },
    /// Exact mean of the distribution (µs).
    Mean { samples: String },
    /// Population standard deviation of the distribution (µs).
    Sd { samples: String },
    /// Value at quantile `q` (0–1) of the distribution (µs).
    Quantile { samples: String, q: f64 },
    /// Value at quantile `q` (0–1) of signed values kept as two
    /// distributions, histograms holding no negative value: `negative` the
    /// magnitudes of the values below 0, `positive` the others (µs,
    /// negative below 0; rt-app's slack, late activations below 0).
    SignedQuantile {
        negative: String,
        positive: String,
        q: f64,
    },
    /// Largest sample of the distribution (µs).
    Max { samples: String },
    /// Smallest sample of the distribution (µs).
    Min { samples: String },
    /// Mean of the samples within one standard deviation of the median
    /// (µs): resp1's "1sdavg", which leaves out the rare very slow or very
    /// fast sample.
    MeanNearMedian { samples: String },
    /// `scale` over the value at quantile `q` in ns: a rate from a
    /// duration, such as the frames per second of the slowest 1 % of frames.
    InverseQuantile { samples: String, q: f64, scale: f64 },
    /// `scale` over the exact mean in ns: a rate from durations, such as
    /// the average frames per second of frame times (frames over the time
    /// they took).
    InverseMean { samples: String, scale: f64 },
    /// The mean of `scale` over each of the slowest ⌈`fraction` · n⌉
    /// samples in ns: the mean frames per second of the slowest frames
    /// (MangoHud's "1% Min FPS" with `fraction` 0.01; with 1, the mean of
    /// every frame's own rate, MangoHud's average FPS).
    SlowestMeanRate {
        samples: String,
        fraction: f64,
        scale: f64,
    },
    /// A count as it is.
    Total { count: String },
    /// `scale · num / den` of two counts; none when `den` is 0 or either
    /// was never counted (a sub-window that does not count `num` has no
    /// value, not 0).
    Ratio {
        num: String,
        den: String,
        scale: f64,
    },
    /// A maximum as it is.
    Largest { maximum: String },
    /// How much `value` exceeds `less` (a time less an overhead, as
    /// LMbench's lat_ctx subtracts its token passing); none when it does
    /// not: what is left is then no time at all.
    Excess {
        value: Box<Formula>,
        less: Box<Formula>,
    },
}

/// A tally whose histograms are decoded once, when a formula first needs
/// them.
pub struct Evaluator<'a> {
    tally: &'a Tally,
    decoded: BTreeMap<String, Option<LatencyHistogram>>,
}

impl<'a> Evaluator<'a> {
    /// An evaluator of formulas over `tally`.
    pub fn new(tally: &'a Tally) -> Self {
        Self {
            tally,
            decoded: BTreeMap::new(),
        }
    }

    /// The distribution `name`, decoded; `None` when it is absent, empty
    /// or damaged.
    fn histogram(&mut self, name: &str) -> Option<&LatencyHistogram> {
        let tally = self.tally;
        self.decoded
            .entry(name.to_string())
            .or_insert_with(|| tally.samples.get(name)?.decode().ok())
            .as_ref()
            .filter(|h| !h.is_empty())
    }

    /// The value of `formula`; `None` when the tally lacks what it needs.
    pub fn value(&mut self, formula: &Formula) -> Option<f64> {
        let us = |ns: u64| ns as f64 / 1e3;
        match formula {
            Formula::SampleCount { samples } => {
                Some(self.tally.samples.get(samples.as_str())?.count as f64)
            }
            Formula::Mean { samples } => self.tally.samples.get(samples.as_str())?.mean_us(),
            Formula::Sd { samples } => Some(self.histogram(samples)?.stdev_ns() / 1e3),
            Formula::Quantile { samples, q } => Some(us(self.histogram(samples)?.quantile_ns(*q))),
            Formula::SignedQuantile {
                negative,
                positive,
                q,
            } => {
                let below = self.count_of(negative) as f64;
                let above = self.count_of(positive) as f64;
                if below + above == 0.0 {
                    return None;
                }
                let rank = q * (below + above);
                if rank < below {
                    // The most negative value is the smallest: counted from
                    // the largest magnitude down.
                    let magnitude = self.histogram(negative)?.quantile_ns(1.0 - rank / below);
                    Some(-us(magnitude))
                } else {
                    let q = ((rank - below) / above).min(1.0);
                    Some(us(self.histogram(positive)?.quantile_ns(q)))
                }
            }
            Formula::Max { samples } => Some(us(self.histogram(samples)?.max_ns())),
            Formula::Min { samples } => Some(us(self.histogram(samples)?.min_ns())),
            Formula::MeanNearMedian { samples } => {
                Some(self.histogram(samples)?.mean_near_median_ns()? / 1e3)
            }
            Formula::InverseQuantile { samples, q, scale } => {
                let ns = self.histogram(samples)?.quantile_ns(*q).max(1);
                Some(scale / ns as f64)
            }
            Formula::InverseMean { samples, scale } => {
                let samples = self.tally.samples.get(samples.as_str())?;
                (samples.sum_ns > 0).then(|| scale * samples.count as f64 / samples.sum_ns as f64)
            }
            Formula::SlowestMeanRate {
                samples,
                fraction,
                scale,
            } => self
                .histogram(samples)?
                .slowest_mean_rate(*fraction, *scale),
            Formula::Total { count } => self.tally.counts.get(count.as_str()).copied(),
            Formula::Ratio { num, den, scale } => {
                let num = self.tally.counts.get(num.as_str())?;
                let den = self.tally.counts.get(den.as_str())?;
                (*den != 0.0).then(|| scale * num / den)
            }
            Formula::Largest { maximum } => self.tally.maxima.get(maximum.as_str()).copied(),
            Formula::Excess { value, less } => {
                let excess = self.value(value)? - self.value(less)?;
                (excess > 0.0).then_some(excess)
            }
        }
    }

    /// The number of samples of the distribution `formula` reads; `None`
    /// for formulas over counts or maxima.
    pub fn samples_of(&self, formula: &Formula) -> Option<u64> {
        let name = match formula {
            Formula::SampleCount { samples }
            | Formula::Mean { samples }
            | Formula::Sd { samples }
            | Formula::Quantile { samples, .. }
            | Formula::Max { samples }
            | Formula::Min { samples }
            | Formula::MeanNearMedian { samples }
            | Formula::InverseQuantile { samples, .. }
            | Formula::InverseMean { samples, .. }
            | Formula::SlowestMeanRate { samples, .. } => samples,
            Formula::Excess { value, .. } => return self.samples_of(value),
            Formula::SignedQuantile {
                negative, positive, ..
            } => return Some(self.count_of(negative) + self.count_of(positive)),
            _ => return None,
        };
        Some(self.count_of(name))
    }

    /// The samples of distribution `name` (0 when it is absent).
    fn count_of(&self, name: &str) -> u64 {
        self.tally.samples.get(name).map_or(0, |s| s.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally() -> Tally {
        let mut h = LatencyHistogram::new();
        for ns in [1_000, 2_000, 3_000, 10_000] {
            h.record_ns(ns);
        }
        Tally::default()
            .with_samples("latency", &h, 16_000)
            .with_count("met", 3.0)
            .with_count("periods", 4.0)
            .with_maximum("late_max_us", 7.5)
    }

    #[test]
    fn formulas_read_the_tally() {
        let t = tally();
        let mut e = Evaluator::new(&t);
        let samples = || "latency".to_string();
        assert_eq!(e.value(&Formula::Mean { samples: samples() }), Some(4.0));
        assert_eq!(
            e.value(&Formula::SampleCount { samples: samples() }),
            Some(4.0)
        );
        let max = e.value(&Formula::Max { samples: samples() }).unwrap();
        assert!((max - 10.0).abs() < 0.01, "{max}");
        let p50 = e
            .value(&Formula::Quantile {
                samples: samples(),
                q: 0.5,
            })
            .unwrap();
        assert!((p50 - 2.0).abs() < 0.01, "{p50}");
        let per_s = Formula::InverseQuantile {
            samples: samples(),
            q: 1.0,
            scale: 1e9,
        };
        assert!((e.value(&per_s).unwrap() - 100_000.0).abs() < 100.0);
        let ratio = Formula::Ratio {
            num: "met".into(),
            den: "periods".into(),
            scale: 100.0,
        };
        assert_eq!(e.value(&ratio), Some(75.0));
        assert_eq!(
            e.value(&Formula::Largest {
                maximum: "late_max_us".into()
            }),
            Some(7.5)
        );
        assert_eq!(e.samples_of(&Formula::Mean { samples: samples() }), Some(4));
    }

    /// Frame times of 10, 10, 10 and 30 ms: 4 frames in 60 ms are 66.7
    /// frames/s; the slowest quarter runs at 33.3; the mean of the frames'
    /// own rates is (3 · 100 + 33.3) / 4 = 83.3.
    #[test]
    fn rates_come_from_the_mean_and_from_the_slowest_frames() {
        let mut h = LatencyHistogram::new();
        [10, 10, 10, 30]
            .iter()
            .for_each(|ms| h.record_ns(ms * 1_000_000));
        let t = Tally::default().with_samples("frame_time", &h, 60_000_000);
        let mut e = Evaluator::new(&t);
        let average = Formula::InverseMean {
            samples: "frame_time".into(),
            scale: 1e9,
        };
        assert!((e.value(&average).unwrap() - 200.0 / 3.0).abs() < 1e-9);
        let slowest = |fraction: f64| Formula::SlowestMeanRate {
            samples: "frame_time".into(),
            fraction,
            scale: 1e9,
        };
        let low = e.value(&slowest(0.25)).unwrap();
        assert!((low - 100.0 / 3.0).abs() < 0.02, "{low}");
        let mean = e.value(&slowest(1.0)).unwrap();
        assert!((mean - 250.0 / 3.0).abs() < 0.05, "{mean}");
        assert_eq!(e.samples_of(&slowest(0.01)), Some(4));
        assert_eq!(Evaluator::new(&Tally::default()).value(&average), None);
    }

    #[test]
    fn a_signed_quantile_counts_the_negative_values_first_most_negative_first() {
        let histogram = |ns: &[u64]| {
            let mut h = LatencyHistogram::new();
            ns.iter().for_each(|&ns| h.record_ns(ns));
            h
        };
        // −5, −1, then 2, 3, 4, 6, 7, 8, 9, 10 µs.
        let positive = [2, 3, 4, 6, 7, 8, 9, 10].map(|us| us * 1_000);
        let t = Tally::default()
            .with_samples("late", &histogram(&[5_000, 1_000]), 6_000)
            .with_samples("early", &histogram(&positive), 49_000);
        let mut e = Evaluator::new(&t);
        let mut at = |q: f64| {
            e.value(&Formula::SignedQuantile {
                negative: "late".into(),
                positive: "early".into(),
                q,
            })
            .unwrap()
        };
        assert!((at(0.05) + 5.0).abs() < 0.01);
        assert!((at(0.15) + 1.0).abs() < 0.01);
        assert!((3.9..=6.1).contains(&at(0.5)), "{}", at(0.5));
        assert!((at(1.0) - 10.0).abs() < 0.01);
        let only_late = Tally::default().with_samples("late", &histogram(&[1_000]), 1_000);
        let formula = Formula::SignedQuantile {
            negative: "late".into(),
            positive: "early".into(),
            q: 0.5,
        };
        let mut e = Evaluator::new(&only_late);
        assert!((e.value(&formula).unwrap() + 1.0).abs() < 0.01);
        assert_eq!(e.samples_of(&formula), Some(1));
        assert_eq!(Evaluator::new(&Tally::default()).value(&formula), None);
    }

    #[test]
    fn an_excess_is_a_value_less_another_and_none_when_not_more() {
        let t = tally();
        let mut e = Evaluator::new(&t);
        let max = || {
            Box::new(Formula::Max {
                samples: "latency".into(),
            })
        };
        let min = || {
            Box::new(Formula::Min {
                samples: "latency".into(),
            })
        };
        let excess = Formula::Excess {
            value: max(),
            less: min(),
        };
        let value = e.value(&excess).unwrap();
        assert!((value - 9.0).abs() < 0.02, "{value}");
        assert_eq!(e.samples_of(&excess), Some(4));
        let backwards = Formula::Excess {
            value: min(),
            less: max(),
        };
        assert_eq!(e.value(&backwards), None);
        let missing = Formula::Excess {
            value: max(),
            less: Box::new(Formula::Max {
                samples: "absent".into(),
            }),
        };
        assert_eq!(e.value(&missing), None);
        let json = serde_json::to_string(&excess).unwrap();
        assert_eq!(serde_json::from_str::<Formula>(&json).unwrap(), excess);
    }

    /// resp1's 1sdavg of scripted delays of 100, 110, 120, 130 and 1000 ms:
    /// median 120, mean 292, SD ≈ 354.1, so the 1000 ms point (880 from
    /// the median) is left out and the rest average 115.
    #[test]
    fn the_mean_near_the_median_leaves_out_what_is_more_than_one_sd_away() {
        let mut h = LatencyHistogram::new();
        let ms = [100, 110, 120, 130, 1000];
        ms.iter().for_each(|&v| h.record_ns(v * 1_000_000));
        let t = Tally::default().with_samples("delay", &h, 1_460_000_000);
        let mut e = Evaluator::new(&t);
        let samples = || "delay".to_string();
        let near = e
            .value(&Formula::MeanNearMedian { samples: samples() })
            .unwrap();
        assert!((near - 115_000.0).abs() <= 115.0, "{near}");
        assert_eq!(
            e.value(&Formula::Mean { samples: samples() }),
            Some(292_000.0)
        );
        let sd = e.value(&Formula::Sd { samples: samples() }).unwrap();
        assert!((sd - 354_140.0).abs() <= 400.0, "{sd}");
        let min = e.value(&Formula::Min { samples: samples() }).unwrap();
        assert!((min - 100_000.0).abs() <= 100.0, "{min}");
        assert_eq!(
            e.samples_of(&Formula::MeanNearMedian { samples: samples() }),
            Some(5)
        );
    }

    #[test]
    fn equal_samples_are_all_near_their_median() {
        let mut h = LatencyHistogram::new();
        (0..4).for_each(|_| h.record_ns(5_000_000));
        let t = Tally::default().with_samples("delay", &h, 20_000_000);
        let near = Evaluator::new(&t)
            .value(&Formula::MeanNearMedian {
                samples: "delay".into(),
            })
            .unwrap();
        assert!((near - 5_000.0).abs() <= 5.0, "{near}");
    }

    #[test]
    fn what_the_tally_lacks_has_no_value() {
        let t = Tally::default();
        let mut e = Evaluator::new(&t);
        assert_eq!(
            e.value(&Formula::Mean {
                samples: "latency".into()
            }),
            None
        );
        assert_eq!(
            e.value(&Formula::Sd {
                samples: "latency".into()
            }),
            None
        );
        assert_eq!(
            e.value(&Formula::MeanNearMedian {
                samples: "latency".into()
            }),
            None
        );
        let ratio = Formula::Ratio {
            num: "met".into(),
            den: "periods".into(),
            scale: 1.0,
        };
        assert_eq!(e.value(&ratio), None);
        let without_num = Tally::default().with_count("periods", 4.0);
        assert_eq!(
            Evaluator::new(&without_num).value(&ratio),
            None,
            "a numerator never counted is no value, not 0"
        );
        assert_eq!(
            e.value(&Formula::Total {
                count: "met".into()
            }),
            None
        );
    }
}
