//! `perf_event_open(2)`: the attribute structure and the call, shared by
//! the scheduler flight recorder (`sched_trace`) and the thread's own task
//! clock (`task_clock`).

use std::os::fd::{FromRawFd as _, OwnedFd};

/// `struct perf_event_attr` up to `config3` (`PERF_ATTR_SIZE_VER8`), its
/// fields named as in the kernel's header (`type` is `kind`).
#[repr(C)]
#[derive(Default)]
pub struct Attr {
    pub kind: u32,
    pub size: u32,
    pub config: u64,
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    pub flags: u64,
    pub wakeup_events: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved_2: u16,
    pub aux_sample_size: u32,
    pub reserved_3: u32,
    pub sig_data: u64,
    pub config3: u64,
}

/// Opens the event `attr` for thread `pid` (0: the caller; −1: every
/// task) on `cpu` (−1: any), close-on-exec, in no group.
pub fn open(attr: &Attr, pid: libc::pid_t, cpu: libc::c_int) -> std::io::Result<OwnedFd> {
    // SAFETY: perf_event_open reads `attr`, which lives across the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const Attr,
            pid,
            cpu,
            -1 as libc::c_int,
            libc::c_ulong::from(8u32), // PERF_FLAG_FD_CLOEXEC
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just returned, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}
