//! A load's work in each sub-window of the measurement (the probe's
//! [`BATCHES`]), and the rule that tells a load that stopped part-way: a
//! stretch of [`IDLE_BATCHES`] observed sub-windows with no work.
//!
//! A load reports its work as each step ends, and some steps are long (a
//! command looked at every 100 ms, a job step, an archive member). Each
//! step's units are therefore spread evenly over the time the step took, so
//! the sub-windows a long step spanned show its work rather than none: a
//! sub-window has no work only when no step that did work overlapped it.

use super::batches::BATCHES;
use super::window::Window;

/// Consecutive sub-windows without work after which a load counts as
/// stopped: a quarter of the measurement.
pub const IDLE_BATCHES: usize = BATCHES / 4;

/// Units done in each sub-window of a window, and how much of each the
/// steps seen covered.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadBatches {
    window: Window,
    units: [f64; BATCHES],
    covered_ns: [u64; BATCHES],
}

impl LoadBatches {
    /// Nothing counted yet in `window`.
    pub fn new(window: Window) -> Self {
        Self {
            window,
            units: [0.0; BATCHES],
            covered_ns: [0; BATCHES],
        }
    }

    /// Counts `units` done from `from_ns` to `to_ns`, spread evenly over
    /// that time; the part outside the window is left out.
    pub fn add(&mut self, from_ns: u64, to_ns: u64, units: f64) {
        let span_ns = to_ns.saturating_sub(from_ns).max(1);
        for (k, (done, covered)) in self.units.iter_mut().zip(&mut self.covered_ns).enumerate() {
            let (start, end) = bounds(self.window, k);
            let overlap = to_ns
                .max(from_ns + 1)
                .min(end)
                .saturating_sub(from_ns.max(start));
            if overlap > 0 {
                *done += units * overlap as f64 / span_ns as f64;
                *covered += overlap;
            }
        }
    }

    /// The units of each sub-window, in time order; `None` for one no step
    /// covered (before the load's first look inside the window, after it
    /// stopped looking).
    pub fn units(&self) -> Vec<Option<f64>> {
        self.units
            .iter()
            .zip(&self.covered_ns)
            .map(|(&units, &covered)| (covered > 0).then_some(units))
            .collect()
    }
}

/// Sub-window `k` of `window`: `[start + k·len/BATCHES, start + (k+1)·len/BATCHES)`
/// in whole nanoseconds (bounds rounded up), the same cut as
/// `batches::batch_of`.
fn bounds(window: Window, k: usize) -> (u64, u64) {
    let length = u128::from(window.end_ns.saturating_sub(window.start_ns));
    let at = |k: usize| window.start_ns + (length * k as u128).div_ceil(BATCHES as u128) as u64;
    (at(k), at(k + 1))
}

/// The first sub-window of a stretch of at least [`IDLE_BATCHES`]
/// observed sub-windows without work in `units` (as [`LoadBatches::units`]
/// gives them), if there is one.
pub fn first_idle_stretch(units: &[Option<f64>]) -> Option<usize> {
    let mut run_start = None;
    for (k, units) in units.iter().enumerate() {
        match units {
            Some(u) if *u <= 0.0 => {
                let start = *run_start.get_or_insert(k);
                if k + 1 - start >= IDLE_BATCHES {
                    return Some(start);
                }
            }
            _ => run_start = None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 000 ns in 20 sub-windows of 100 ns.
    const WINDOW: Window = Window {
        start_ns: 1_000,
        end_ns: 3_000,
    };

    #[test]
    fn a_step_is_spread_over_the_sub_windows_it_spanned() {
        let mut batches = LoadBatches::new(WINDOW);
        // 400 ns from the start of sub-window 1 to the start of 5.
        batches.add(1_100, 1_500, 8.0);
        let units = batches.units();
        assert_eq!(units[0], None);
        assert_eq!(&units[1..5], [Some(2.0); 4]);
        assert_eq!(units[5], None);
        // Half of a step before the window is left out.
        let mut batches = LoadBatches::new(WINDOW);
        batches.add(900, 1_100, 4.0);
        assert_eq!(batches.units()[0], Some(2.0));
        // A step ending past the window counts up to its end.
        batches.add(2_950, 3_050, 4.0);
        assert_eq!(batches.units()[19], Some(2.0));
        // A step that took no time still counts where it happened.
        batches.add(1_250, 1_250, 3.0);
        assert_eq!(batches.units()[2], Some(3.0));
    }

    #[test]
    fn sub_windows_are_cut_like_the_probes() {
        let window = Window {
            start_ns: 1_000,
            end_ns: 1_000 + 1_990,
        };
        for k in 0..BATCHES {
            let (start, end) = bounds(window, k);
            assert_eq!(super::super::batches::batch_of(window, start), k);
            assert_eq!(super::super::batches::batch_of(window, end - 1), k);
        }
    }

    #[test]
    fn a_quarter_of_the_window_without_work_is_a_stop() {
        let worked = |k: usize| Some(if (8..14).contains(&k) { 0.0 } else { 1.0 });
        let units: Vec<Option<f64>> = (0..BATCHES).map(worked).collect();
        assert_eq!(first_idle_stretch(&units), Some(8));
        // Four idle sub-windows, then work again: not a stop.
        let units: Vec<Option<f64>> = (0..BATCHES)
            .map(|k| Some(if (8..12).contains(&k) { 0.0 } else { 1.0 }))
            .collect();
        assert_eq!(first_idle_stretch(&units), None);
        // Sub-windows not observed are neither work nor idleness.
        let mut units = vec![None; 6];
        units.extend([Some(0.0), Some(0.0), None, Some(0.0), Some(0.0), Some(0.0)]);
        assert_eq!(first_idle_stretch(&units), None);
        units.extend([Some(0.0), Some(0.0)]);
        assert_eq!(first_idle_stretch(&units), Some(9));
        assert_eq!(first_idle_stretch(&[]), None);
        // A little work is work: a slow step spread thin.
        let units: Vec<Option<f64>> = (0..BATCHES)
            .map(|k| Some(if k < 10 { 1.0 } else { 0.001 }))
            .collect();
        assert_eq!(first_idle_stretch(&units), None);
    }
}
