//! The file-I/O work's settings (`--fileio-size`, `--fileio-period`,
//! `--io-thresholds`, `--io-threads`): the `fileio` probe's file and
//! rhythm, the thresholds its requests and the `io*` loads' requests are
//! counted over, and the `io*` loads' number of processes. Fixed for the
//! whole run, carried to the workers and recorded in the run document.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Most thresholds a run counts requests over (the `fileio` probe has a
/// figure per threshold, with fixed keys).
pub const MAX_THRESHOLDS: usize = 3;

/// The file-I/O work of the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoSettings {
    /// Size of the file the `fileio` probe reads and writes at random.
    pub probe_file_bytes: u64,
    /// Time between the starts of the `fileio` probe's requests.
    pub period_ns: u64,
    /// Requests longer than each of these are counted, ascending (IRMAN
    /// and tiobench: 2 s and 10 s).
    pub thresholds_ns: Vec<u64>,
    /// Processes of each `io*` load (tiobench's threads).
    pub threads: usize,
}

impl Default for IoSettings {
    /// A 256 MiB file (far more than IRMAN's megabyte of page cache), a
    /// request every 20 ms (500 in a 10 s scenario), thresholds of 100 ms,
    /// 2 s and 10 s, and tiobench's 4 threads.
    fn default() -> Self {
        Self {
            probe_file_bytes: 256 << 20,
            period_ns: 20_000_000,
            thresholds_ns: vec![100_000_000, 2_000_000_000, 10_000_000_000],
            threads: 4,
        }
    }
}

impl IoSettings {
    /// The settings in a few words, for the lists of settings that differ.
    pub fn describe(&self) -> String {
        let thresholds: Vec<String> = self
            .thresholds_ns
            .iter()
            .map(|&t| show_threshold(t))
            .collect();
        format!(
            "fileio {} MiB every {}, over {}, {} io threads",
            self.probe_file_bytes >> 20,
            show_threshold(self.period_ns),
            thresholds.join("/"),
            self.threads
        )
    }
}

/// `ns` as a label shows it (`100ms`, `2s`, `1s 500ms`).
pub fn show_threshold(ns: u64) -> String {
    humantime::format_duration(Duration::from_nanos(ns)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_show_as_durations() {
        let shown: Vec<String> = IoSettings::default()
            .thresholds_ns
            .into_iter()
            .map(show_threshold)
            .collect();
        assert_eq!(shown, ["100ms", "2s", "10s"]);
        assert_eq!(
            IoSettings::default().describe(),
            "fileio 256 MiB every 20ms, over 100ms/2s/10s, 4 io threads"
        );
    }
}
