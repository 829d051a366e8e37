//! What the probes that answer after an idle gap (`response`, `command`)
//! are made of: the gap, the number of points, the sizes of the `response`
//! probe's two arrays and the program the `command` probe starts.
//!
//! resp1 scanned arrays of fixed sizes chosen for the 96 MB machines of
//! 2003. Here each array is a share of the memory the memory loads work
//! through (`--mem-limit`, else the memory available when the run starts):
//! [`ARRAY_SHARE`] of it, between [`MIN_ARRAY_BYTES`] and
//! [`MAX_ARRAY_BYTES`]. Both arrays together stay a small part of that
//! memory, so the probe does not make the pressure itself, while the
//! memory loads, which walk through 110–120 % of it, do push the resident
//! array out during the gap whatever its size: what is left idle goes
//! first. The bounds keep a response a small interaction: with two arrays
//! of 64 MiB it took about 50 ms on an idle 2-core VM of 2026 (25 ms with
//! 32 MiB ones), a fifth of what resp1's took on its own machine.

use serde::{Deserialize, Serialize};

/// Each array is this fraction of the memory the memory loads work through.
pub const ARRAY_SHARE: u64 = 32;
/// The smallest default array: 1 MiB.
pub const MIN_ARRAY_BYTES: u64 = 1 << 20;
/// The largest default array: 64 MiB.
pub const MAX_ARRAY_BYTES: u64 = 64 << 20;

/// How the probes that answer after an idle gap work, for a whole run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseParams {
    /// The idle gap before each point (resp1: 20 s).
    pub gap_ns: u64,
    /// Points measured per scenario (resp1: at least 5).
    pub points: u32,
    /// Size of the `response` probe's array allocated at the start, which
    /// the kernel may swap out while the probe sleeps.
    pub resident_bytes: u64,
    /// Size of the array it allocates afresh at each point, which needs
    /// free pages.
    pub fresh_bytes: u64,
    /// The command the `command` probe times (through `/bin/sh -c`);
    /// `None` for its default program.
    pub command: Option<String>,
    /// Whether the `command` probe drops the page cache before each point.
    pub cold: bool,
}

/// The default size of each array for loads that work through `mem_bytes`.
pub fn default_array_bytes(mem_bytes: u64) -> u64 {
    (mem_bytes / ARRAY_SHARE).clamp(MIN_ARRAY_BYTES, MAX_ARRAY_BYTES)
}

#[cfg(test)]
impl ResponseParams {
    /// A short gap and few points over small arrays, for unit tests.
    pub fn for_tests() -> Self {
        Self {
            gap_ns: 1_000_000,
            points: 3,
            resident_bytes: 1 << 20,
            fresh_bytes: 1 << 20,
            command: None,
            cold: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_a_share_of_the_memory_within_bounds() {
        assert_eq!(default_array_bytes(1 << 30), 32 << 20);
        assert_eq!(default_array_bytes(256 << 20), 8 << 20);
        assert_eq!(default_array_bytes(96 << 20), 3 << 20);
        assert_eq!(default_array_bytes(24 << 30), MAX_ARRAY_BYTES);
        assert_eq!(default_array_bytes(0), MIN_ARRAY_BYTES);
    }
}
