//! CapFrameX's stutter rule: a frame is a stutter when it took longer than
//! [`STUTTER_FACTOR`] times the moving average of the frame times up to it
//! (itself included). CapFrameX's moving average
//! (`FrametimeStatisticProvider.GetMovingAverage` over
//! `SampleBasedMovingAverage`, CXWorld/CapFrameX) is over the last
//! ⌊10 · √(mean frame time in ms)⌉ frames, fewer at the start: 41 frames at
//! 60 frames/s, 26 at 144. A log knows its mean once read whole
//! ([`count_stutters`]); a probe counting as it goes sizes the window from
//! the frame time it aims at ([`StutterDetector::new`]).

/// How many times the moving average a stutter takes (CapFrameX's
/// `StutteringFactor` default, 2.5).
pub const STUTTER_FACTOR: f64 = 2.5;

/// CapFrameX's window for frames of `mean_frame_ms` on average:
/// 10 · √ms, rounded half to even as .NET's `Convert.ToInt32` rounds, and
/// at least one frame.
pub fn capframex_window(mean_frame_ms: f64) -> usize {
    (mean_frame_ms.max(0.0).sqrt() * 10.0)
        .round_ties_even()
        .max(1.0) as usize
}

/// The moving average of the last frames, kept in storage allocated when
/// it is made, so that a measuring loop can count stutters without
/// allocating.
#[derive(Debug, Clone)]
pub struct StutterDetector {
    recent_ns: Vec<u64>,
    next: usize,
    filled: usize,
    sum_ns: u64,
}

impl StutterDetector {
    /// A detector over CapFrameX's window for frames of `frame_ns`.
    pub fn new(frame_ns: u64) -> Self {
        let window = capframex_window(frame_ns as f64 / 1e6);
        Self {
            recent_ns: vec![0; window],
            next: 0,
            filled: 0,
            sum_ns: 0,
        }
    }

    /// Accounts the next frame, of `frame_ns`; true when it is a stutter.
    pub fn is_stutter(&mut self, frame_ns: u64) -> bool {
        let oldest = std::mem::replace(&mut self.recent_ns[self.next], frame_ns);
        self.sum_ns = self.sum_ns - oldest + frame_ns;
        self.next = (self.next + 1) % self.recent_ns.len();
        self.filled = (self.filled + 1).min(self.recent_ns.len());
        let average_ns = self.sum_ns as f64 / self.filled as f64;
        frame_ns as f64 > STUTTER_FACTOR * average_ns
    }
}

/// Whether each of `frames_ns` (frame times in order) is a stutter,
/// CapFrameX's window sized by their mean.
pub fn stutters_of(frames_ns: &[u64]) -> Vec<bool> {
    let mean_ns = frames_ns.iter().sum::<u64>() / (frames_ns.len() as u64).max(1);
    let mut detector = StutterDetector::new(mean_ns);
    frames_ns
        .iter()
        .map(|&ns| detector.is_stutter(ns))
        .collect()
}

/// How many of `frames_ns` are stutters (see [`stutters_of`]).
#[cfg(test)]
pub fn count_stutters(frames_ns: &[u64]) -> u64 {
    stutters_of(frames_ns).iter().filter(|&&s| s).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn capframex_window_is_ten_times_the_root_of_the_mean_in_ms() {
        assert_eq!(capframex_window(1000.0 / 60.0), 41);
        assert_eq!(capframex_window(1000.0 / 144.0), 26);
        assert_eq!(capframex_window(6.25), 25);
        assert_eq!(capframex_window(0.0), 1);
    }

    /// 10 ms frames with a 40 ms one (2.5 × its window's average of
    /// (31 · 10 + 40) / 32 ms is 27.3 ms: a stutter) and a 25 ms one
    /// (2.5 × 10.5 ms is 26.2: not one).
    #[test]
    fn a_frame_longer_than_two_and_a_half_moving_averages_is_a_stutter() {
        let mut frames = vec![10 * MS; 200];
        frames[100] = 40 * MS;
        frames[150] = 25 * MS;
        assert_eq!(count_stutters(&frames), 1);
        let mut detector = StutterDetector::new(10 * MS);
        let flagged: Vec<usize> = (0..frames.len())
            .filter(|&k| detector.is_stutter(frames[k]))
            .collect();
        assert_eq!(flagged, vec![100]);
    }

    /// The average includes the frame itself, so neither of the first two
    /// frames is ever a stutter (x > 2.5 · (10 + x) / 2 has no solution),
    /// and a third after two 10 ms ones is one from over 100 ms
    /// (x > 2.5 · (20 + x) / 3).
    #[test]
    fn the_first_frames_average_over_fewer_frames() {
        let third = |ms: u64| {
            let mut detector = StutterDetector::new(10 * MS);
            assert!(!detector.is_stutter(10 * MS));
            assert!(!detector.is_stutter(10_000 * MS));
            let mut detector = StutterDetector::new(10 * MS);
            detector.is_stutter(10 * MS);
            detector.is_stutter(10 * MS);
            detector.is_stutter(ms * MS)
        };
        assert!(third(101));
        assert!(!third(99));
        assert_eq!(count_stutters(&[]), 0);
    }
}
