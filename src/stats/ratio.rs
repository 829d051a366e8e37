//! A share of a run's events (those late with one cause, of the events
//! split) estimated with the run's sub-windows as clusters: the share is
//! all hits over all events (a ratio estimator), its standard error comes
//! from how far each sub-window's hits stray from the share times its
//! events. Events that come in bursts (a wait behind a burst of load
//! delays several frames) stray together, so a burst counts as one
//! sub-window's worth of evidence, not as that many independent events;
//! events that are independent give back about the binomial error.

use super::batch_means::{decorrelate, pair_neighbours, MIN_BATCHES};
use super::Estimate;

/// The share `Σ hits / Σ events` of `sub_windows` (each `(hits, events)`,
/// in time order), with its standard error over the sub-windows that hold
/// events: neighbours still correlated merged as batch means merges them,
/// then `√(k/(k−1) · Σ (hits − share · events)²) / Σ events` over the `k`
/// left, with `k − 1` degrees of freedom; never below the binomial error
/// `√(share · (1 − share) / Σ events)`, which independent events would
/// give (fewer sub-windows than that can show). `None` with fewer than
/// [`MIN_BATCHES`] sub-windows holding events.
pub fn share(sub_windows: &[(u64, u64)]) -> Option<Estimate> {
    let mut kept: Vec<(f64, f64)> = sub_windows
        .iter()
        .filter(|(_, events)| *events > 0)
        .map(|&(hits, events)| (hits as f64, events as f64))
        .collect();
    if kept.len() < MIN_BATCHES {
        return None;
    }
    let hits: f64 = kept.iter().map(|(h, _)| h).sum();
    let events: f64 = kept.iter().map(|(_, n)| n).sum();
    let share = hits / events;
    let strays =
        |kept: &[(f64, f64)]| -> Vec<f64> { kept.iter().map(|(h, n)| h - share * n).collect() };
    let clusters = decorrelate(&strays(&kept)).len();
    while kept.len() > clusters {
        kept = pair_neighbours(&kept, |a, b| (a.0 + b.0, a.1 + b.1));
    }
    let k = kept.len() as f64;
    let squares: f64 = strays(&kept).iter().map(|s| s * s).sum();
    let clustered = k / (k - 1.0) * squares / (events * events);
    let binomial = share * (1.0 - share) / events;
    Some(Estimate {
        value: share,
        se: clustered.max(binomial).sqrt(),
        df: k - 1.0,
        samples: kept.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_events_give_about_the_binomial_error() {
        // 2 of 100 in every sub-window: no sub-window strays, so the
        // binomial error is the floor.
        let even = share(&[(2, 100); 20]).unwrap();
        assert!((even.value - 0.02).abs() < 1e-12);
        let binomial = (0.02f64 * 0.98 / 2000.0).sqrt();
        assert!((even.se - binomial).abs() < 1e-12, "{even:?}");
        assert_eq!((even.df, even.samples), (19.0, 20));
    }

    #[test]
    fn a_burst_counts_as_one_sub_window_not_as_its_events() {
        // 40 of 2000 late, all in one sub-window: as sure as 1 of 20
        // sub-windows can make it, far less than 40 independent events.
        let mut burst = [(0, 100); 20];
        burst[7] = (40, 100);
        let burst = share(&burst).unwrap();
        assert!((burst.value - 0.02).abs() < 1e-12);
        let binomial = (0.02f64 * 0.98 / 2000.0).sqrt();
        assert!(burst.se > 3.0 * binomial, "{burst:?}");
        assert!((burst.se - 0.02).abs() < 1e-3, "{burst:?}");
    }

    #[test]
    fn correlated_neighbours_are_merged_and_empty_sub_windows_left_out() {
        // Bursts spanning four sub-windows at a time: halved once, to 10.
        let spans: Vec<(u64, u64)> = (0..20)
            .map(|k| (if (k / 4) % 2 == 0 { 9 } else { 1 }, 100))
            .collect();
        assert_eq!(share(&spans).unwrap().samples, 10);
        let mut few = [(0, 0); 20];
        few[..4].fill((1, 10));
        assert!(share(&few).is_none());
        few[4] = (1, 10);
        assert_eq!(share(&few).unwrap().samples, 5);
    }
}
