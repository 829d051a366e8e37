//! The shape of latencytest's audio player (`--fragments`,
//! `--fragment-bytes`, `--sample-rate`, `--fragment-cpu`): a buffer of N
//! fragments of B bytes of 16-bit stereo samples, and the CPU work the
//! player does per fragment. Fixed for the whole run, carried to the
//! workers and recorded in the run document. The sound device the player
//! writes to, modelled from the clock (`Device`), is the `fragment`
//! probe's and `watch`'s fragment canary's.

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
    fn default() -> Self {
        Self::LATENCYTEST
    }
}

impl FragmentSettings {
    /// latencytest's `3 256` at 44.1 kHz; the player's work is a tenth of a
    /// fragment's time.
    pub const LATENCYTEST: Self = Self {
        fragments: 3,
        fragment_bytes: 256,
        sample_rate_hz: 44_100,
        cpu_pct: 10.0,
    };

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

/// The emulated sound device, from the clock: what it has been given and
/// when it will have played all of it.
#[derive(Debug, Clone, Copy)]
pub struct Device {
    fragments: u64,
    fragment_ns: u64,
    /// When the device will have played every fragment written so far: it
    /// plays without a break until then.
    pub drained_ns: u64,
}

/// What one write meant to the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOutcome {
    /// From the moment the slot was free to the write.
    pub latency_ns: u64,
    /// How long the device had been silent before it (0: no underrun).
    pub dropout_ns: u64,
}

impl Device {
    /// A device whose full buffer starts playing at `start_ns`.
    pub fn started(settings: &FragmentSettings, start_ns: u64) -> Self {
        let fragments = u64::from(settings.fragments);
        let fragment_ns = settings.fragment_ns();
        Self {
            fragments,
            fragment_ns,
            drained_ns: start_ns + fragments * fragment_ns,
        }
    }

    /// When a slot of the buffer is free for the next fragment: once at
    /// most N − 1 fragments (counting the one playing) are left to play.
    pub fn free_at_ns(&self) -> u64 {
        self.drained_ns - (self.fragments - 1) * self.fragment_ns
    }

    /// Writes a fragment at `at_ns` (not before [`Device::free_at_ns`]).
    pub fn write(&mut self, at_ns: u64) -> WriteOutcome {
        let latency_ns = at_ns.saturating_sub(self.free_at_ns());
        let dropout_ns = at_ns.saturating_sub(self.drained_ns);
        // A silent device plays the fragment from the moment it arrives.
        self.drained_ns = self.drained_ns.max(at_ns) + self.fragment_ns;
        WriteOutcome {
            latency_ns,
            dropout_ns,
        }
    }
}

#[cfg(test)]
impl FragmentSettings {
    /// 3 fragments of 1 ms (176 bytes at 44 kHz), 10 % CPU.
    pub fn for_tests() -> Self {
        Self {
            fragments: 3,
            fragment_bytes: 176,
            sample_rate_hz: 44_000,
            cpu_pct: 10.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    fn settings() -> FragmentSettings {
        FragmentSettings::for_tests()
    }

    #[test]
    fn a_slot_frees_as_each_fragment_finishes_playing() {
        let mut device = Device::started(&settings(), 10 * MS);
        // Full at 10 ms; the first fragment has played at 11 ms.
        assert_eq!(device.free_at_ns(), 11 * MS);
        let outcome = device.write(11 * MS + 100 * US);
        assert_eq!(outcome.latency_ns, 100 * US);
        assert_eq!(outcome.dropout_ns, 0);
        // The next slot frees at 12 ms whenever the write came.
        assert_eq!(device.free_at_ns(), 12 * MS);
    }

    #[test]
    fn a_late_write_underruns_and_playback_resumes_from_it() {
        let mut device = Device::started(&settings(), 0);
        device.write(MS); // plays until 4 ms
                          // Nothing written until 6.5 ms: silent from 4 ms.
        let late = device.write(6 * MS + 500 * US);
        assert_eq!(late.dropout_ns, 2_500 * US);
        assert_eq!(late.latency_ns, 4_500 * US, "free since 2 ms");
        // It plays from 6.5 ms to 7.5 ms: the buffer is empty but for it,
        // so the next slot is free at once.
        assert_eq!(device.free_at_ns(), 5_500 * US);
        let next = device.write(6_600 * US);
        assert_eq!(
            next,
            WriteOutcome {
                latency_ns: 1_100 * US,
                dropout_ns: 0
            }
        );
        // A write exactly when the device drains is in time.
        let mut device = Device::started(&settings(), 0);
        assert_eq!(device.write(3 * MS).dropout_ns, 0);
    }

    #[test]
    fn latencytests_fragment_plays_about_a_millisecond_and_a_half() {
        let settings = FragmentSettings::default();
        assert_eq!(settings.fragment_ns(), 1_451_247);
        assert_eq!(settings.cpu_ns(), 145_124);
        assert_eq!(settings.describe(), "3 x 256 bytes at 44100 Hz, 10 % CPU");
    }
}
