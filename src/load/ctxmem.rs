//! `ctxmem8` and `ctxmem2`: resp1's 8ctx-mem and 2ctx-mem. CPUs + 2
//! processes stand in a ring and pass as many tokens as there are CPUs round
//! it over a SysV message queue, so they context-switch all the time; on every
//! trip (a token arriving) a process also moves on through its share of 120 %
//! of the memory the memory loads may use, reaching a new page every 8 trips
//! (`ctxmem8`) or every 2 (`ctxmem2`), and starting over at the end. Pages are
//! touched only as the walk reaches them, so memory fills at the ring's pace.
//!
//! The worker makes the queue, forks the ring and sends the tokens off. It
//! removes the queue when it is dropped, after the ring is killed and reaped;
//! when the scenario's processes are SIGKILLed first (an interruption, a
//! failure, a killed orchestrator), the queue is left and
//! [`crate::load::remove_leftovers`] removes it.

use super::helpers::Helpers;
use super::{Load, LoadContext, LoadDef, LoadError};
use crate::measure::window::CpuTime;
use crate::sim::WorkParams;
use crate::system::msgqueue::MessageQueue;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

/// `ctxmem8`.
pub const CTXMEM8: LoadDef = LoadDef {
    name: "ctxmem8",
    summary:
        "resp1's 8ctx-mem: CPUs+2 processes pass tokens round a ring, a new page every 8 trips",
    method: 1,
    unit: "trips",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: |params, _| super::check_swap_for(params, 20),
    processes: |_| 1,
    build: |context| build(context, 8),
    default: |_| false,
    uses: &[],
    job_cache: None,
};

/// `ctxmem2`.
pub const CTXMEM2: LoadDef = LoadDef {
    name: "ctxmem2",
    summary: "resp1's 2ctx-mem: as ctxmem8, with a new page every 2 trips",
    method: 1,
    unit: "trips",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: |params, _| super::check_swap_for(params, 20),
    processes: |_| 1,
    build: |context| build(context, 2),
    default: |_| false,
    uses: &[],
    job_cache: None,
};

/// The ring's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ring {
    /// Processes in the ring.
    members: usize,
    /// Tokens going round.
    tokens: usize,
    /// Memory each process walks through, a whole number of pages.
    member_bytes: usize,
}

impl Ring {
    /// CPUs + 2 processes, CPUs tokens, 120 % of the memory budget shared out.
    fn new(params: &WorkParams, page_bytes: usize) -> Self {
        let members = params.cpus + 2;
        let total = params.mem_bytes / 5 * 6;
        let member_pages = total / members as u64 / page_bytes as u64;
        Self {
            members,
            tokens: params.cpus.max(1),
            member_bytes: usize::try_from(member_pages.max(1)).unwrap_or(usize::MAX) * page_bytes,
        }
    }

    /// The message type member `index` receives its tokens as (types start at 1).
    fn token_type(&self, index: usize) -> libc::c_long {
        (index % self.members + 1) as libc::c_long
    }

    /// The members the tokens start at, spread evenly round the ring.
    fn starts(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.tokens).map(|k| k * self.members / self.tokens)
    }
}

/// A member's way through its memory: `page_bytes / trips_per_page` bytes on
/// at every trip, so a new page every `trips_per_page` trips; at the end it
/// starts over.
#[derive(Debug, Clone)]
struct Walk {
    stride: usize,
    len: usize,
    offset: usize,
}

impl Walk {
    fn new(page_bytes: usize, trips_per_page: usize, len: usize) -> Self {
        Self {
            stride: (page_bytes / trips_per_page).max(1),
            len,
            offset: 0,
        }
    }

    /// The byte to touch on this trip.
    fn next_offset(&mut self) -> usize {
        let at = self.offset;
        self.offset = (self.offset + self.stride) % self.len;
        at
    }
}

/// The worker's side of the load. The fields drop in order: the ring is
/// killed and reaped before its queue is removed.
struct CtxMem {
    ring: Helpers,
    _queue: MessageQueue,
}

fn build(context: &LoadContext, trips_per_page: usize) -> Result<Box<dyn Load>, LoadError> {
    let page_bytes = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .map_or(4096, |p| p as usize);
    let shape = Ring::new(&context.params, page_bytes);
    let queue = MessageQueue::create().map_err(|error| LoadError::Queue {
        what: "ctxmem",
        error,
    })?;
    let mut ring = Helpers::new("ctxmem ring", shape.members)?;
    for index in 0..shape.members {
        let walk = Walk::new(page_bytes, trips_per_page, shape.member_bytes);
        ring.fork("fb-ctxmem", |trips| {
            pass_tokens(&queue, shape, index, walk, trips)
        })?;
    }
    for start in shape.starts() {
        queue
            .send(shape.token_type(start))
            .map_err(LoadError::io("ctxmem: cannot send a token round the ring"))?;
    }
    Ok(Box::new(CtxMem {
        ring,
        _queue: queue,
    }))
}

/// A member of the ring: takes a token, touches the next byte of its walk,
/// counts the trip, passes the token on, forever.
fn pass_tokens(
    queue: &MessageQueue,
    ring: Ring,
    index: usize,
    mut walk: Walk,
    trips: &AtomicU64,
) -> String {
    // Zeroed memory comes from fresh pages the kernel provides only when
    // touched, so this allocates address space, not memory.
    let mut memory = vec![0_u8; ring.member_bytes];
    let (mine, next) = (ring.token_type(index), ring.token_type(index + 1));
    loop {
        if let Err(e) = queue.receive(mine) {
            return format!("cannot take a token: {e}");
        }
        // black_box: the compiler must not drop a write nobody reads.
        let byte = black_box(&mut memory[walk.next_offset()]);
        *byte = byte.wrapping_add(1);
        trips.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = queue.send(next) {
            return format!("cannot pass a token on: {e}");
        }
    }
}

impl Load for CtxMem {
    fn step(&mut self) -> Result<f64, LoadError> {
        self.ring.step()
    }

    fn cpu(&self, worker: CpuTime) -> CpuTime {
        self.ring.cpu(worker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: usize = 4096;

    #[test]
    fn the_ring_shares_out_120_percent_of_the_budget() {
        let ring = Ring::new(&WorkParams::for_tests_sized(2, 256 << 20), PAGE);
        assert_eq!((ring.members, ring.tokens), (4, 2));
        assert_eq!(ring.member_bytes % PAGE, 0);
        let total = (ring.member_bytes * ring.members) as f64;
        let wanted = 1.2 * (256 << 20) as f64;
        assert!(total <= wanted && total > wanted - (ring.members * PAGE) as f64);
        assert_eq!(
            Ring::new(&WorkParams::for_tests_sized(2, 1), PAGE).member_bytes,
            PAGE,
            "at least a page"
        );
    }

    #[test]
    fn tokens_start_spread_and_go_round() {
        let ring = Ring::new(&WorkParams::for_tests_sized(2, 1 << 30), PAGE);
        assert_eq!(ring.starts().collect::<Vec<_>>(), [0, 2]);
        let types: Vec<_> = (0..=4).map(|i| ring.token_type(i)).collect();
        assert_eq!(
            types,
            [1, 2, 3, 4, 1],
            "the last member passes to the first"
        );
        let wide = Ring::new(&WorkParams::for_tests_sized(8, 1 << 30), PAGE);
        assert_eq!(wide.starts().collect::<Vec<_>>(), [0, 1, 2, 3, 5, 6, 7, 8]);
    }

    /// Pages a walk reaches in `trips` trips.
    fn pages_after(trips_per_page: usize, len: usize, trips: usize) -> usize {
        let mut walk = Walk::new(PAGE, trips_per_page, len);
        let mut pages: Vec<usize> = (0..trips).map(|_| walk.next_offset() / PAGE).collect();
        pages.dedup();
        pages.sort_unstable();
        pages.dedup();
        pages.len()
    }

    #[test]
    fn a_new_page_every_8_or_2_trips_then_over_again() {
        assert_eq!(pages_after(8, 100 * PAGE, 80), 10);
        assert_eq!(pages_after(8, 100 * PAGE, 81), 11);
        assert_eq!(pages_after(2, 100 * PAGE, 80), 40);
        // 3 pages: after 6 trips of 2, the walk is back at the start.
        let mut walk = Walk::new(PAGE, 2, 3 * PAGE);
        let offsets: Vec<usize> = (0..7).map(|_| walk.next_offset()).collect();
        assert_eq!(offsets, [0, 2048, 4096, 6144, 8192, 10240, 0]);
    }
}
