//! `memload`: a program that needs more memory than it has (interbench's
//! Memload, without its 2.9 GB cap). It works through 110 % of the memory
//! available to it (`--mem-limit`, else MemAvailable when the run starts) in
//! at least 16 equal blocks of at most 64 MiB, mapped anonymously: the first pass fills
//! every block; later passes copy into each block from the next one (the block
//! touched longest ago), and every pass first unmaps one block and maps it
//! afresh, so memory is also freed and faulted in new. The tenth that does not
//! fit must go to swap, and since every pass visits every block, what went out
//! comes back in on the next pass: the kernel swaps out and in for as long as
//! the load runs. A block just finished is marked cold, being the one needed
//! last (see [`mark_cold`]). Its work is the MB it touches (read or written).
//!
//! It needs swap: without, it would only summon the OOM killer, so it is
//! refused, with the way to get some. It is not part of a default run: a run
//! without `--mem-limit` would push the whole machine a tenth past its memory,
//! which should be asked for, not stumbled into.

use super::{CheckError, Load, LoadDef, LoadError};
use crate::measure::clock::now_ns;
use crate::sim::WorkParams;
use memmap2::MmapMut;

/// The largest block mapped at once.
const MAX_BLOCK_BYTES: u64 = 64 << 20;
/// The fewest blocks: the one block freed each pass (at most a sixteenth of
/// 110 %) leaves the load above the memory it has, so the pressure never
/// lets up.
const MIN_BLOCKS: u64 = 16;
/// The memory touched between two looks at the clock (16 pages).
const CHUNK_BYTES: usize = 64 << 10;
/// Distance between the marks [`fill`] leaves (a page on every system).
const PAGE_MARK_STRIDE: usize = 4096;
/// Wall time of one step, checked after each chunk.
const STEP_NS: u64 = 2_000_000;

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "memload",
    summary: "memory hog: works through 110 % of its memory (--mem-limit), so it swaps; needs swap (--swap)",
    method: 1,
    unit: "MB",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check,
    processes: |_| 1,
    build: |context| MemLoad::new(context.params.mem_bytes).map(|l| Box::new(l) as Box<dyn Load>),
    default: |_| false,
    uses: &[],
    job_cache: None,
};

/// The memory memload works through: 110 % of `mem_bytes`.
fn target_bytes(mem_bytes: u64) -> u64 {
    mem_bytes + mem_bytes / 10
}

/// Refuses to run without swap for the tenth that does not fit in memory.
fn check(params: &WorkParams, _: Option<&str>) -> Result<(), CheckError> {
    super::check_swap_for(params, 10)
}

/// How many blocks of what size hold `target` bytes: at least
/// [`MIN_BLOCKS`] equal blocks of at most [`MAX_BLOCK_BYTES`], each a whole
/// number of chunks.
fn block_layout(target: u64) -> (usize, usize) {
    let blocks = target.div_ceil(MAX_BLOCK_BYTES).max(MIN_BLOCKS);
    let chunk = CHUNK_BYTES as u64;
    let block_bytes = target.div_ceil(blocks).div_ceil(chunk).max(1) * chunk;
    (blocks as usize, block_bytes as usize)
}

struct MemLoad {
    blocks: Vec<MmapMut>,
    /// The block the next chunk is in.
    block: usize,
    /// The next chunk's offset in its block.
    offset: usize,
    /// Passes over all blocks completed.
    pass: u64,
}

fn map(len: usize) -> Result<MmapMut, LoadError> {
    MmapMut::map_anon(len).map_err(|error| LoadError::Io {
        what: format!("cannot map {} MiB", len >> 20),
        error,
    })
}

impl MemLoad {
    /// Maps (but does not touch) the blocks for 110 % of `mem_bytes`.
    fn new(mem_bytes: u64) -> Result<Self, LoadError> {
        if mem_bytes == 0 {
            return Err(LoadError::NoMemorySize);
        }
        let (count, block_bytes) = block_layout(target_bytes(mem_bytes));
        Self::with_blocks(count, block_bytes)
    }

    /// Maps `count` blocks of `block_bytes` (a whole number of chunks).
    fn with_blocks(count: usize, block_bytes: usize) -> Result<Self, LoadError> {
        let blocks = (0..count)
            .map(|_| map(block_bytes))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            blocks,
            block: 0,
            offset: 0,
            pass: 0,
        })
    }

    /// Touches the next chunk; returns the bytes read and written.
    fn next_chunk(&mut self) -> usize {
        if self.block == 0 && self.offset == 0 && self.pass > 0 {
            self.renew_one_block();
        }
        let range = self.offset..self.offset + CHUNK_BYTES;
        let source = (self.block + 1) % self.blocks.len();
        let touched = if self.pass == 0 || source == self.block {
            fill(&mut self.blocks[self.block][range], self.pass);
            CHUNK_BYTES
        } else {
            let (from, to) = pair_mut(&mut self.blocks, source, self.block);
            to[range.clone()].copy_from_slice(&from[range]);
            2 * CHUNK_BYTES
        };
        self.offset += CHUNK_BYTES;
        if self.offset == self.blocks[self.block].len() {
            mark_cold(&self.blocks[self.block]);
            self.offset = 0;
            self.block = (self.block + 1) % self.blocks.len();
            self.pass += u64::from(self.block == 0);
        }
        touched
    }

    /// Unmaps one block (a different one each pass) and maps it afresh, so
    /// its memory goes back to the system and is faulted in anew. If the new
    /// mapping fails, the old one is kept.
    fn renew_one_block(&mut self) {
        let index = (self.pass % self.blocks.len() as u64) as usize;
        if let Ok(fresh) = map(self.blocks[index].len()) {
            self.blocks[index] = fresh;
        }
    }
}

/// Tells the kernel that `block`, just finished for this pass, is the block
/// needed last (`MADV_COLD`), so reclaim takes its pages first. Without the
/// hint every page swapped back in is seen as part of the working set, and
/// reclaim in a small cgroup-v1 limit can find nothing to take and call the
/// OOM killer (measured with `--mem-limit 128M`, 2 s runs: 2 of 8 killed
/// without the hint, none of 20 with it). A kernel older than 5.4 lacks the
/// advice and refuses it; memload works on without.
fn mark_cold(block: &MmapMut) {
    // SAFETY: the range is exactly this live mapping; MADV_COLD only moves
    // its pages on the kernel's lists and never changes their contents.
    unsafe {
        libc::madvise(
            block.as_ptr() as *mut libc::c_void,
            block.len(),
            libc::MADV_COLD,
        )
    };
}

/// Fills `chunk` with the pass's byte, then marks each page with its offset,
/// so no page is one repeated byte (those could be kept without swap I/O).
fn fill(chunk: &mut [u8], pass: u64) {
    chunk.fill(pass as u8);
    for (index, page) in chunk.chunks_mut(PAGE_MARK_STRIDE).enumerate() {
        page[..8].copy_from_slice(&(index as u64 + 1).to_ne_bytes());
    }
}

/// Two different blocks, the first to read and the second to write.
fn pair_mut(blocks: &mut [MmapMut], read: usize, write: usize) -> (&MmapMut, &mut MmapMut) {
    if read < write {
        let (low, high) = blocks.split_at_mut(write);
        (&low[read], &mut high[0])
    } else {
        let (low, high) = blocks.split_at_mut(read);
        (&high[0], &mut low[write])
    }
}

impl Load for MemLoad {
    fn step(&mut self) -> Result<f64, LoadError> {
        let start_ns = now_ns();
        let mut bytes = 0;
        while now_ns() - start_ns < STEP_NS {
            bytes += self.next_chunk();
        }
        Ok(bytes as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(mem_bytes: u64, swap_bytes: u64) -> WorkParams {
        WorkParams {
            mem_bytes,
            swap_bytes,
            ..WorkParams::for_tests()
        }
    }

    #[test]
    fn blocks_are_equal_whole_chunks_of_at_most_64_mib_covering_110_pct() {
        for mem_bytes in [1 << 20, 128 << 20, 1 << 30, 22 << 30, (5 << 30) + 12345] {
            let target = target_bytes(mem_bytes);
            let (count, size) = block_layout(target);
            assert!(size as u64 <= MAX_BLOCK_BYTES && size.is_multiple_of(CHUNK_BYTES));
            let total = (count * size) as u64;
            assert!(count as u64 >= MIN_BLOCKS);
            assert!(total >= target && total < target + (count * CHUNK_BYTES) as u64);
        }
        assert_eq!(
            block_layout(target_bytes(128 << 20)),
            (16, 141 * CHUNK_BYTES)
        );
        assert_eq!(block_layout(target_bytes(22 << 30)).0, 388);
    }

    #[test]
    fn swap_is_required_and_must_hold_the_overflow() {
        let err = check(&params(0, 0), None).unwrap_err().to_string();
        assert!(err.contains("--swap SIZE"), "{err}");
        assert!(check(&params(0, 1), None).is_ok());
        let err = check(&params(10 << 30, 512 << 20), None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("needs 1024 MiB of swap"), "{err}");
        assert!(check(&params(10 << 30, 1 << 30), None).is_ok());
    }

    #[test]
    fn passes_fill_then_copy_and_renew_blocks() {
        let size = 4 * CHUNK_BYTES;
        let mut load = MemLoad::with_blocks(1, size).unwrap();
        let chunks = size / CHUNK_BYTES;
        let first: usize = (0..chunks).map(|_| load.next_chunk()).sum();
        assert_eq!((first, load.pass), (size, 1));
        assert!(load.blocks[0].iter().any(|&b| b != 0));
        // One block: no other block to copy from, so it is filled again.
        assert_eq!(load.next_chunk(), CHUNK_BYTES);

        let mut load = MemLoad::with_blocks(2, size).unwrap();
        let per_pass = 2 * size / CHUNK_BYTES;
        (0..per_pass).for_each(|_| {
            load.next_chunk();
        });
        let written = load.blocks[1][..CHUNK_BYTES].to_vec();
        // Pass 1 renews block 1, then copies block 1 (fresh: zeros) into block 0.
        assert_eq!(load.next_chunk(), 2 * CHUNK_BYTES);
        assert!(load.blocks[0][..CHUNK_BYTES].iter().all(|&b| b == 0));
        assert!(load.blocks[1][..CHUNK_BYTES].iter().all(|&b| b == 0));
        assert_ne!(written, load.blocks[1][..CHUNK_BYTES]);
    }

    #[test]
    fn a_step_reports_megabytes_touched() {
        let mut load = MemLoad::new(4 << 20).unwrap();
        assert_eq!(load.blocks.len(), MIN_BLOCKS as usize);
        assert!(MemLoad::new(0).is_err());
        let mb = load.step().unwrap();
        assert!(
            mb > 0.0 && ((mb * 1e6).round() as usize).is_multiple_of(CHUNK_BYTES),
            "{mb}"
        );
    }
}
