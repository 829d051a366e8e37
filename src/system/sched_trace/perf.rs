//! Per-CPU tracepoint events of `perf_event_open`, each CPU's events
//! writing into one ring buffer of its own, and the reading of that
//! buffer. Only the system calls and the shared ring are here; what a
//! record means is `record`'s business.

use crate::system::perf_event::{self, Attr};
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::sync::atomic::{fence, Ordering};

/// `PERF_TYPE_TRACEPOINT`.
const TYPE_TRACEPOINT: u32 = 2;
/// `PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW`.
const SAMPLE_TYPE: u64 = (1 << 2) | (1 << 7) | (1 << 10);
/// Attribute flags: `disabled` (bit 0), `use_clockid` (bit 25).
const FLAGS: u64 = 1 | (1 << 25);
/// `PERF_EVENT_IOC_ENABLE`, `_DISABLE`, `_SET_OUTPUT`.
const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;
const IOC_SET_OUTPUT: libc::c_ulong = 0x2405;
/// `PERF_RECORD_LOST`, `PERF_RECORD_SAMPLE`.
pub const RECORD_LOST: u32 = 2;
pub const RECORD_SAMPLE: u32 = 9;

/// The offsets of `data_head`, `data_tail`, `data_offset` and `data_size`
/// in `struct perf_event_mmap_page`.
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;
const DATA_OFFSET: usize = 1040;
const DATA_SIZE: usize = 1048;

/// One CPU's tracepoint events and the ring buffer they write to.
pub struct CpuRing {
    /// The first event owns the buffer; the others write into it.
    events: Vec<OwnedFd>,
    map: *mut u8,
    map_len: usize,
    data_offset: usize,
    data_size: usize,
}

// SAFETY: the mapping belongs to this value alone; it is read and its tail
// written by whichever one thread holds the value.
unsafe impl Send for CpuRing {}

impl CpuRing {
    /// Opens (disabled) the tracepoints `ids` on `cpu`, all writing into one
    /// buffer of `data_pages` pages (a power of two), stamped with
    /// `CLOCK_MONOTONIC`.
    pub fn open(cpu: u32, ids: &[u16], data_pages: usize) -> std::io::Result<Self> {
        let mut events = Vec::with_capacity(ids.len());
        for &id in ids {
            events.push(open_event(cpu, id)?);
        }
        // SAFETY: sysconf takes a constant.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let map_len = page * (1 + data_pages);
        // SAFETY: a new shared read-write mapping of the first event's
        // buffer; the kernel checks the length.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                events[0].as_raw_fd(),
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let mut ring = Self {
            events,
            map: map as *mut u8,
            map_len,
            data_offset: page,
            data_size: page * data_pages,
        };
        let (offset, size) = (ring.header(DATA_OFFSET), ring.header(DATA_SIZE));
        if offset != 0 && size != 0 {
            (ring.data_offset, ring.data_size) = (offset as usize, size as usize);
        }
        for other in &ring.events[1..] {
            // SAFETY: ioctl between two perf descriptors we own.
            let ret = unsafe {
                libc::ioctl(
                    other.as_raw_fd(),
                    IOC_SET_OUTPUT,
                    ring.events[0].as_raw_fd(),
                )
            };
            if ret != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(ring)
    }

    /// Starts (`true`) or stops the events.
    pub fn enable(&self, on: bool) -> std::io::Result<()> {
        for event in &self.events {
            // SAFETY: ioctl on a perf descriptor we own, no argument.
            let ret = unsafe {
                libc::ioctl(
                    event.as_raw_fd(),
                    if on { IOC_ENABLE } else { IOC_DISABLE },
                    0,
                )
            };
            if ret != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }

    fn header(&self, offset: usize) -> u64 {
        // SAFETY: an aligned u64 inside the first page of our mapping,
        // written by the kernel, hence read volatile.
        unsafe { std::ptr::read_volatile(self.map.add(offset) as *const u64) }
    }

    /// Hands every record written since the last call to `each` (its type
    /// and its bytes after the header), then frees their room.
    pub fn drain(&mut self, scratch: &mut Vec<u8>, mut each: impl FnMut(u32, &[u8])) {
        let head = self.header(DATA_HEAD);
        fence(Ordering::Acquire);
        let mut tail = self.header(DATA_TAIL);
        while tail + 8 <= head {
            let mut header = [0u8; 8];
            self.copy(tail, &mut header);
            let kind = u32::from_ne_bytes(header[0..4].try_into().expect("4 bytes"));
            let size = u16::from_ne_bytes(header[6..8].try_into().expect("2 bytes")) as u64;
            if size < 8 || tail + size > head {
                break;
            }
            scratch.resize(size as usize - 8, 0);
            self.copy(tail + 8, scratch);
            each(kind, scratch);
            tail += size;
        }
        fence(Ordering::Release);
        // SAFETY: the aligned u64 `data_tail` of our mapping, which the
        // reader owns; written volatile for the kernel to see.
        unsafe { std::ptr::write_volatile(self.map.add(DATA_TAIL) as *mut u64, tail) };
    }

    /// Copies the bytes at ring position `at` into `out`, across the end.
    fn copy(&self, at: u64, out: &mut [u8]) {
        let start = at as usize % self.data_size;
        let first = out.len().min(self.data_size - start);
        // SAFETY: both ranges lie within the data area of our mapping (the
        // second wraps to its start), which the kernel does not write
        // between `data_tail` and `data_head`; `out` is ours.
        unsafe {
            let data = self.map.add(self.data_offset);
            std::ptr::copy_nonoverlapping(data.add(start), out.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(data, out.as_mut_ptr().add(first), out.len() - first);
        }
    }
}

impl Drop for CpuRing {
    fn drop(&mut self) {
        let _ = self.enable(false);
        // SAFETY: the mapping made in `open`, unmapped once.
        unsafe { libc::munmap(self.map as *mut libc::c_void, self.map_len) };
    }
}

fn open_event(cpu: u32, id: u16) -> std::io::Result<OwnedFd> {
    let attr = Attr {
        kind: TYPE_TRACEPOINT,
        size: std::mem::size_of::<Attr>() as u32,
        config: id as u64,
        sample_period: 1,
        sample_type: SAMPLE_TYPE,
        flags: FLAGS,
        wakeup_events: 0,
        clockid: libc::CLOCK_MONOTONIC,
        ..Attr::default()
    };
    // pid -1 with a CPU: every task on that CPU.
    perf_event::open(&attr, -1, cpu as libc::c_int)
}
