//! The shape of latencytest's audio player (`--fragments`,
//! `--fragment-bytes`, `--sample-rate`, `--fragment-cpu`): a buffer of N
//! fragments of B bytes of 16-bit stereo samples, and the CPU work the
//! player does per fragment. Fixed for the whole run, carried to the
//! workers and recorded in the run document.

use serde::{Deserialize, Serialize};

/// Bytes of one sample frame: 16-bit stereo.
const BYTES_PER_FRAME: u64 = 4;

/// The buffer and the player's work, for the whole run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FragmentSettings {
    /// Fragments in the device's buffer (latencytest's 3).
    pub fragments: u32,
    /// Bytes of each fragment (latencytest's 256).
    pub fragment_bytes: u32,
    /// Samples per second (44100).
    pub sample_rate_hz: u32,
    /// CPU work per fragment, in % of the time one fragment plays.
    pub cpu_pct: f64,
}

impl Default for FragmentSettings {
    /// latencytest's `3 256` at 44.1 kHz; the player's work is a tenth of a
    /// fragment's time.
    fn default() -> Self {
        Self {
            fragments: 3,
            fragment_bytes: 256,
            sample_rate_hz: 44_100,
            cpu_pct: 10.0,
        }
    }
}

impl FragmentSettings {
    /// How long one fragment plays (256 bytes at 44.1 kHz: about 1.45 ms).
    pub fn fragment_ns(&self) -> u64 {
        let frames = u64::from(self.fragment_bytes) / BYTES_PER_FRAME;
        (frames * 1_000_000_000 / u64::from(self.sample_rate_hz).max(1)).max(1)
    }

    /// CPU work the player does per fragment.
    pub fn cpu_ns(&self) -> u64 {
        (self.fragment_ns() as f64 * self.cpu_pct / 100.0) as u64
    }

    /// The settings in words (`3 x 256 bytes at 44100 Hz, 10 % CPU`), for
    /// listing differences between runs.
    pub fn describe(&self) -> String {
        format!(
            "{} x {} bytes at {} Hz, {} % CPU",
            self.fragments, self.fragment_bytes, self.sample_rate_hz, self.cpu_pct
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencytests_fragment_plays_about_a_millisecond_and_a_half() {
        let settings = FragmentSettings::default();
        assert_eq!(settings.fragment_ns(), 1_451_247);
        assert_eq!(settings.cpu_ns(), 145_124);
        assert_eq!(settings.describe(), "3 x 256 bytes at 44100 Hz, 10 % CPU");
    }
}
