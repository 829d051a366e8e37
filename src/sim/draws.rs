//! Reproducible pseudo-random draws for the loads and probes: the file sizes of the
//! source tree, the operations of `dbench`'s clients, the bytes of the disk
//! loads' buffers. The generator is SplitMix64 (Steele, Lea and Flood),
//! written out here because what matters is that its sequence never
//! changes: the same seed gives the same tree on every machine and in every
//! version of feelbench, which the generic generators of `rand` do not
//! promise.

/// The increment of SplitMix64 (2^64 / the golden ratio).
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function: a bijection of 64-bit words that mixes
/// every input bit into every output bit. `mix(n)` for `n = 0, 1, 2, ...` is
/// a sequence of draws that can be indexed directly.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A sequence of draws from a seed.
#[derive(Debug, Clone)]
pub struct Draws {
    state: u64,
}

impl Draws {
    /// The sequence that starts from `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix(self.state)
    }

    /// A number in `0..n` (`n` at least 1); the bias of the modulo is below
    /// 2^-40 for the small `n` the loads draw from.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// A size between `min` and `min << octaves`, log-uniform by octave:
    /// each octave (`min << k` to `min << (k + 1)`) is equally likely, and
    /// sizes are uniform within it. Source files, mail and most small-file
    /// collections are spread like this: the median is `min << (octaves /
    /// 2)`, and a few large files hold much of the bytes.
    pub fn octave_size(&mut self, min: u64, octaves: u32) -> u64 {
        let low = min << self.below(u64::from(octaves.max(1)));
        low + self.below(low)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_splitmix64() {
        // The first outputs of SplitMix64 seeded with 0, as its reference
        // implementation prints them.
        let mut draws = Draws::new(0);
        assert_eq!(draws.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(draws.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(draws.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn octave_sizes_stay_in_range_with_the_median_in_the_middle() {
        let mut draws = Draws::new(7);
        let mut sizes: Vec<u64> = (0..10_000).map(|_| draws.octave_size(256, 8)).collect();
        assert!(sizes.iter().all(|s| (256..65_536).contains(s)));
        sizes.sort_unstable();
        let median = sizes[sizes.len() / 2];
        assert!((3_500..4_700).contains(&median), "median {median}");
    }

    #[test]
    fn below_covers_its_range() {
        let mut draws = Draws::new(1);
        let mut seen = [false; 5];
        (0..100).for_each(|_| seen[draws.below(5) as usize] = true);
        assert_eq!(seen, [true; 5]);
        assert_eq!(draws.below(0), 0, "an empty range gives 0");
    }
}
