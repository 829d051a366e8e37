//! A thread's custom slice under EEVDF (Linux 6.12 and later): how long
//! the fair scheduler lets it run before another runnable task of its
//! queue may take the CPU, and how early it is picked when it wakes (a
//! shorter slice means an earlier virtual deadline). Set with
//! `sched_setattr` as SCHED_OTHER's `sched_runtime`, read back with
//! `sched_getattr`. An older kernel takes the call and ignores the value,
//! so reading it back is how support is told. Neither call is in `nix` or
//! glibc's headers, so they are made here through `libc::syscall`.

use super::sched::SchedError;
use std::io;

/// The shortest and longest slice the kernel keeps (it clamps others to
/// these: `NSEC_PER_MSEC / 10` and `NSEC_PER_MSEC * 100` in
/// `kernel/sched/syscalls.c`).
pub const RANGE_NS: std::ops::RangeInclusive<u64> = 100_000..=100_000_000;

/// The kernel's `struct sched_attr` (include/uapi/linux/sched/types.h) in
/// its first version, `SCHED_ATTR_SIZE_VER0`: 48 bytes, without the
/// utilisation clamps that later versions add after `sched_period`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    /// SCHED_OTHER, SCHED_BATCH: the nice value.
    sched_nice: i32,
    /// SCHED_FIFO, SCHED_RR.
    sched_priority: u32,
    /// SCHED_DEADLINE's runtime; for the fair policies, the slice (6.12+).
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
}

/// `SCHED_ATTR_SIZE_VER0`.
const ATTR_SIZE: u32 = std::mem::size_of::<SchedAttr>() as u32;
const _: () = assert!(ATTR_SIZE == 48);

/// The scheduling attributes of thread `tid` (0: the caller).
fn get(tid: libc::pid_t) -> io::Result<SchedAttr> {
    let mut attr = SchedAttr::default();
    // SAFETY: `attr` is a writable `struct sched_attr` of ATTR_SIZE bytes
    // (the size passed), which outlives the call; flags must be 0.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            tid,
            &mut attr as *mut SchedAttr,
            ATTR_SIZE,
            0u32,
        )
    };
    match ret {
        -1 => Err(io::Error::last_os_error()),
        _ => Ok(attr),
    }
}

/// Sets the scheduling attributes of thread `tid` (0: the caller).
fn set(tid: libc::pid_t, attr: &SchedAttr) -> io::Result<()> {
    // SAFETY: `attr` is a readable `struct sched_attr` whose `size` field
    // says ATTR_SIZE, and outlives the call; flags must be 0.
    let ret =
        unsafe { libc::syscall(libc::SYS_sched_setattr, tid, attr as *const SchedAttr, 0u32) };
    match ret {
        -1 => Err(io::Error::last_os_error()),
        _ => Ok(()),
    }
}

/// Whether `policy` is one of the fair scheduler's, which slices apply to.
fn is_fair(policy: u32) -> bool {
    [libc::SCHED_OTHER, libc::SCHED_BATCH, libc::SCHED_IDLE].contains(&(policy as i32))
}

/// The slice of thread `tid` (0: the caller) in ns: its custom one, else
/// the kernel's base slice; `None` when it is not under the fair
/// scheduler, the kernel does not say (before 6.12 it reports 0) or the
/// thread is gone.
pub fn slice_of(tid: libc::pid_t) -> Option<u64> {
    let attr = get(tid).ok()?;
    (is_fair(attr.sched_policy) && attr.sched_runtime > 0).then_some(attr.sched_runtime)
}

/// Gives thread `tid` (0: the caller) a custom slice of `slice_ns`, its
/// policy and nice value kept, and reads it back: a kernel that shows
/// another value (one before 6.12 ignores it) is an error.
pub fn set_slice_of(tid: libc::pid_t, slice_ns: u64) -> Result<(), SchedError> {
    let failed = |error| SchedError::Slice { slice_ns, error };
    let mut attr = get(tid).map_err(failed)?;
    attr.size = ATTR_SIZE;
    attr.sched_runtime = slice_ns;
    // Keeps SCHED_FLAG_RESET_ON_FORK as the kernel reported it; drops
    // what getattr reports that setattr would take as a request.
    attr.sched_flags &= libc::SCHED_FLAG_RESET_ON_FORK as u64;
    set(tid, &attr).map_err(failed)?;
    match slice_of(tid) {
        Some(shown) if shown == slice_ns => Ok(()),
        shown => Err(SchedError::SliceIgnored {
            slice_ns,
            shown: shown.unwrap_or(0),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|r| r.trim().to_string())
                .unwrap_or_default(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_is_set_and_read_back_with_the_nice_value_kept() {
        // A throwaway thread, so the harness's threads keep their own.
        std::thread::spawn(|| {
            if slice_of(0).is_none() {
                crate::system::skip("this kernel has no custom slices (Linux 6.12+)");
                return;
            }
            super::super::sched::set_nice(3).unwrap();
            set_slice_of(0, 3_000_000).unwrap();
            assert_eq!(slice_of(0), Some(3_000_000));
            assert_eq!(super::super::sched::current_nice(), 3);
            assert_eq!(super::super::sched::current_policy(), "SCHED_OTHER");
            set_slice_of(0, *RANGE_NS.start()).unwrap();
            assert_eq!(slice_of(0), Some(100_000));
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_gone_thread_has_no_slice() {
        assert_eq!(slice_of(i32::MAX), None);
        let e = set_slice_of(i32::MAX, 1_000_000).unwrap_err();
        assert!(matches!(e, SchedError::Slice { .. }), "{e}");
    }
}
