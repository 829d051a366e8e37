//! A thread's delay accounting, read over the kernel's taskstats generic
//! netlink family (`TASKSTATS`, `TASKSTATS_CMD_GET` by tid), as
//! `tools/accounting/getdelays.c` does: how long it waited for a CPU, for
//! block I/O, for swap-in, in direct reclaim, on thrashing, in compaction and
//! on copy-on-write faults. The kernel fills these only for tasks started
//! while `kernel.task_delayacct` was on (`system::delayacct`), and answers
//! only callers with CAP_NET_ADMIN.
//!
//! The protocol is small enough to write here (a netlink header, a generic
//! netlink header and type-length-value attributes), so a read builds its
//! request and parses its reply in buffers on the stack: it never allocates.
//! The layout of `struct taskstats` is that of `include/uapi/linux/taskstats.h`,
//! whose fields are only ever appended (version 13 added `wpcopy`).

use nix::sys::socket::{
    bind, recv, send, setsockopt, socket, sockopt, AddressFamily, MsgFlags, NetlinkAddr, SockFlag,
    SockProtocol, SockType,
};
use nix::sys::time::TimeVal;
use serde::{Deserialize, Serialize};
use std::os::fd::{AsRawFd as _, OwnedFd};

/// The generic netlink controller's family id (`GENL_ID_CTRL`).
const GENL_ID_CTRL: u16 = 16;
/// `CTRL_CMD_GETFAMILY`, and its attributes `CTRL_ATTR_FAMILY_ID`/`_NAME`.
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
/// `TASKSTATS_CMD_GET` and its attribute `TASKSTATS_CMD_ATTR_PID`.
const TASKSTATS_CMD_GET: u8 = 1;
const TASKSTATS_CMD_ATTR_PID: u16 = 1;
/// The reply's attributes: `TASKSTATS_TYPE_STATS` inside `_AGGR_PID`.
const TASKSTATS_TYPE_STATS: u16 = 3;
const TASKSTATS_TYPE_AGGR_PID: u16 = 4;
/// `NLMSG_ERROR`, `NLM_F_REQUEST`, and the bits of an attribute's type that
/// are flags (`NLA_F_NESTED`, `NLA_F_NET_BYTEORDER`).
const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 1;
const NLA_TYPE_MASK: u16 = 0x3fff;
/// Bytes of a netlink header, a generic netlink header, an attribute header.
const NLMSG_HDR: usize = 16;
const GENL_HDR: usize = 4;
const NLA_HDR: usize = 4;
/// Room for a reply: a `struct taskstats` is 416 bytes in version 13.
const REPLY_BYTES: usize = 2048;
/// How long a reply may take before the read fails.
const REPLY_TIMEOUT_MS: i64 = 200;

/// Byte offsets of the fields read in `struct taskstats`, and the struct
/// version that added each one appended after version 1 (the kernel's
/// `TASKSTATS_VERSION` at the commit that appended it).
mod offset {
    pub const CPU_DELAY: usize = 24;
    pub const BLKIO_DELAY: usize = 40;
    pub const SWAPIN_DELAY: usize = 56;
    pub const NVCSW: usize = 272;
    pub const FREEPAGES_DELAY: usize = 320;
    pub const THRASHING_DELAY: usize = 336;
    pub const COMPACT_DELAY: usize = 360;
    pub const WPCOPY_DELAY: usize = 408;
    pub const FREEPAGES_SINCE: u16 = 7;
    pub const THRASHING_SINCE: u16 = 9;
    pub const COMPACT_SINCE: u16 = 11;
    pub const WPCOPY_SINCE: u16 = 13;
}

/// How long a thread waited on each of the kinds of block that delay
/// accounting tells apart, ns (each the wall time of the operation:
/// reclaim, thrashing and compaction include the CPU spent in them, so they
/// label blocked time rather than add up to it). A kind the kernel's
/// `struct taskstats` is too old to have is `None`: it was never counted,
/// which is not a wait of 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelaySplit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_io_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swap_in_ns: Option<u64>,
    /// In direct reclaim (`freepages`, struct version 7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reclaim_ns: Option<u64>,
    /// Struct version 9.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thrashing_ns: Option<u64>,
    /// Struct version 11.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction_ns: Option<u64>,
    /// Struct version 13.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_copy_ns: Option<u64>,
}

impl DelaySplit {
    /// The kinds in field order.
    fn kinds(&self) -> [Option<u64>; 6] {
        [
            self.block_io_ns,
            self.swap_in_ns,
            self.reclaim_ns,
            self.thrashing_ns,
            self.compaction_ns,
            self.write_copy_ns,
        ]
    }

    /// The split of `kinds`, in field order.
    fn of_kinds(kinds: [Option<u64>; 6]) -> Self {
        let [block_io_ns, swap_in_ns, reclaim_ns, thrashing_ns, compaction_ns, write_copy_ns] =
            kinds;
        Self {
            block_io_ns,
            swap_in_ns,
            reclaim_ns,
            thrashing_ns,
            compaction_ns,
            write_copy_ns,
        }
    }

    /// What changed from `earlier` to these totals, kind by kind (a kind
    /// that went backwards gives 0; one that either lacks is `None`).
    pub fn since(&self, earlier: &DelaySplit) -> DelaySplit {
        let (now, before) = (self.kinds(), earlier.kinds());
        Self::of_kinds(std::array::from_fn(|kind| {
            Some(now[kind]?.saturating_sub(before[kind]?))
        }))
    }

    /// Each kind cut to `span_ns`, the time these waits happened in (no
    /// wait can be longer; this kernel's block I/O total now and then grows
    /// by hours at once, a wait whose start it never stamped), and whether
    /// any was cut.
    pub fn cut_to(&self, span_ns: u64) -> (DelaySplit, bool) {
        let cut = self.kinds().iter().flatten().any(|ns| *ns > span_ns);
        let kinds = self.kinds().map(|ns| ns.map(|ns| ns.min(span_ns)));
        (Self::of_kinds(kinds), cut)
    }

    /// Time in direct reclaim, compaction and thrashing, of those the
    /// kernel counts.
    pub fn stall_ns(&self) -> u64 {
        [self.reclaim_ns, self.compaction_ns, self.thrashing_ns]
            .into_iter()
            .flatten()
            .sum()
    }
}

/// One reading of a thread's delay totals, ns since it started; a kind the
/// kernel's `struct taskstats` is too old to have is `None` in `waits`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delays {
    /// Waiting runnable for a CPU (the same figure as schedstat's).
    pub cpu_ns: u64,
    /// Blocked, by kind.
    pub waits: DelaySplit,
    /// Voluntary context switches (`nvcsw`).
    pub voluntary: u64,
    /// The `struct taskstats` version the kernel sent.
    pub version: u16,
}

/// Why taskstats cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TaskstatsError {
    #[error("cannot open a generic netlink socket: {0}")]
    Socket(nix::Error),
    #[error("the kernel has no TASKSTATS netlink family (built without CONFIG_TASKSTATS)")]
    NoFamily,
    #[error("not permitted: taskstats needs CAP_NET_ADMIN (root)")]
    NotPermitted,
    #[error("taskstats request failed: {0}")]
    Io(nix::Error),
    #[error("the kernel answered with error {0}")]
    Kernel(nix::Error),
    #[error("malformed taskstats reply: {0}")]
    Malformed(&'static str),
}

/// A netlink socket talking to the kernel's taskstats family.
#[derive(Debug)]
pub struct TaskstatsSocket {
    fd: OwnedFd,
    family: u16,
    seq: u32,
}

impl TaskstatsSocket {
    /// Opens the socket and resolves the `TASKSTATS` family.
    pub fn open() -> Result<Self, TaskstatsError> {
        let fd = socket(
            AddressFamily::Netlink,
            SockType::Raw,
            SockFlag::SOCK_CLOEXEC,
            SockProtocol::NetlinkGeneric,
        )
        .map_err(TaskstatsError::Socket)?;
        bind(fd.as_raw_fd(), &NetlinkAddr::new(0, 0)).map_err(TaskstatsError::Socket)?;
        let timeout = TimeVal::new(0, REPLY_TIMEOUT_MS * 1000);
        setsockopt(&fd, sockopt::ReceiveTimeout, &timeout).map_err(TaskstatsError::Socket)?;
        let mut socket = Self {
            fd,
            family: 0,
            seq: 0,
        };
        let mut request = [0u8; 64];
        let length = socket.request(
            &mut request,
            GENL_ID_CTRL,
            CTRL_CMD_GETFAMILY,
            CTRL_ATTR_FAMILY_NAME,
            b"TASKSTATS\0",
        );
        let mut reply = [0u8; REPLY_BYTES];
        let received = socket.exchange(&request[..length], &mut reply)?;
        socket.family = match parse_family(&reply[..received]) {
            Err(TaskstatsError::Kernel(nix::Error::ENOENT)) => Err(TaskstatsError::NoFamily),
            other => other,
        }?;
        Ok(socket)
    }

    /// The delay totals of thread `tid`. Allocates nothing.
    pub fn read(&mut self, tid: u32) -> Result<Delays, TaskstatsError> {
        let mut request = [0u8; 64];
        let length = self.request(
            &mut request,
            self.family,
            TASKSTATS_CMD_GET,
            TASKSTATS_CMD_ATTR_PID,
            &tid.to_ne_bytes(),
        );
        let mut reply = [0u8; REPLY_BYTES];
        let received = self.exchange(&request[..length], &mut reply)?;
        parse_stats(&reply[..received])
    }

    /// Writes into `buffer` a request of `family` for `command` with one
    /// attribute; returns its length.
    fn request(
        &mut self,
        buffer: &mut [u8; 64],
        family: u16,
        command: u8,
        attribute: u16,
        value: &[u8],
    ) -> usize {
        self.seq = self.seq.wrapping_add(1);
        let attribute_length = NLA_HDR + value.len();
        let length = NLMSG_HDR + GENL_HDR + align(attribute_length);
        buffer[0..4].copy_from_slice(&(length as u32).to_ne_bytes());
        buffer[4..6].copy_from_slice(&family.to_ne_bytes());
        buffer[6..8].copy_from_slice(&NLM_F_REQUEST.to_ne_bytes());
        buffer[8..12].copy_from_slice(&self.seq.to_ne_bytes());
        buffer[12..16].fill(0);
        // The generic header: command, version 1, reserved.
        buffer[16] = command;
        buffer[17] = 1;
        buffer[18..20].fill(0);
        let at = NLMSG_HDR + GENL_HDR;
        buffer[at..at + 2].copy_from_slice(&(attribute_length as u16).to_ne_bytes());
        buffer[at + 2..at + 4].copy_from_slice(&attribute.to_ne_bytes());
        buffer[at + 4..at + attribute_length].copy_from_slice(value);
        buffer[at + attribute_length..length].fill(0);
        length
    }

    /// Sends `request` and receives the reply into `reply`; its length.
    fn exchange(&self, request: &[u8], reply: &mut [u8]) -> Result<usize, TaskstatsError> {
        send(self.fd.as_raw_fd(), request, MsgFlags::empty()).map_err(TaskstatsError::Io)?;
        recv(self.fd.as_raw_fd(), reply, MsgFlags::empty()).map_err(TaskstatsError::Io)
    }
}

/// `length` rounded up to netlink's 4-byte alignment.
fn align(length: usize) -> usize {
    (length + 3) & !3
}

/// A native-endian `u16`/`u32`/`u64` at `at` in `bytes`, if it is there.
fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// The attributes of one generic netlink reply message (after its
/// headers), or the kernel's error; `Malformed` when it is neither.
fn reply_attributes(reply: &[u8]) -> Result<&[u8], TaskstatsError> {
    let length = u32_at(reply, 0).ok_or(TaskstatsError::Malformed("short header"))? as usize;
    let kind = u16_at(reply, 4).ok_or(TaskstatsError::Malformed("short header"))?;
    if length < NLMSG_HDR || length > reply.len() {
        return Err(TaskstatsError::Malformed("message length"));
    }
    if kind == NLMSG_ERROR {
        let code = u32_at(reply, NLMSG_HDR).ok_or(TaskstatsError::Malformed("short error"))? as i32;
        return Err(match -code {
            libc::EPERM | libc::EACCES => TaskstatsError::NotPermitted,
            errno => TaskstatsError::Kernel(nix::Error::from_raw(errno)),
        });
    }
    reply
        .get(NLMSG_HDR + GENL_HDR..length)
        .ok_or(TaskstatsError::Malformed("no generic header"))
}

/// The attribute of `kind` among `attributes`, its value.
fn attribute(attributes: &[u8], kind: u16) -> Option<&[u8]> {
    let mut rest = attributes;
    while rest.len() >= NLA_HDR {
        let length = usize::from(u16_at(rest, 0)?);
        if length < NLA_HDR || length > rest.len() {
            return None;
        }
        if u16_at(rest, 2)? & NLA_TYPE_MASK == kind {
            return Some(&rest[NLA_HDR..length]);
        }
        rest = rest.get(align(length)..)?;
    }
    None
}

/// The family id in a reply to `CTRL_CMD_GETFAMILY`.
fn parse_family(reply: &[u8]) -> Result<u16, TaskstatsError> {
    let attributes = reply_attributes(reply)?;
    attribute(attributes, CTRL_ATTR_FAMILY_ID)
        .and_then(|value| u16_at(value, 0))
        .ok_or(TaskstatsError::Malformed("no family id"))
}

/// The delays in a reply to `TASKSTATS_CMD_GET`.
fn parse_stats(reply: &[u8]) -> Result<Delays, TaskstatsError> {
    let attributes = reply_attributes(reply)?;
    let stats = attribute(attributes, TASKSTATS_TYPE_AGGR_PID)
        .and_then(|aggregate| attribute(aggregate, TASKSTATS_TYPE_STATS))
        .ok_or(TaskstatsError::Malformed("no stats"))?;
    let version = u16_at(stats, 0).ok_or(TaskstatsError::Malformed("no version"))?;
    let field = |at| u64_at(stats, at).ok_or(TaskstatsError::Malformed("stats too short"));
    // A field appended in a later version than the kernel's, or past the
    // struct it sent, was never counted.
    let since = |added: u16, at| (version >= added).then(|| u64_at(stats, at)).flatten();
    Ok(Delays {
        cpu_ns: field(offset::CPU_DELAY)?,
        waits: DelaySplit {
            block_io_ns: Some(field(offset::BLKIO_DELAY)?),
            swap_in_ns: Some(field(offset::SWAPIN_DELAY)?),
            reclaim_ns: since(offset::FREEPAGES_SINCE, offset::FREEPAGES_DELAY),
            thrashing_ns: since(offset::THRASHING_SINCE, offset::THRASHING_DELAY),
            compaction_ns: since(offset::COMPACT_SINCE, offset::COMPACT_DELAY),
            write_copy_ns: since(offset::WPCOPY_SINCE, offset::WPCOPY_DELAY),
        },
        voluntary: field(offset::NVCSW)?,
        version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply message of `kind` carrying `attributes` after the headers.
    fn message(kind: u16, attributes: &[u8]) -> Vec<u8> {
        let length = NLMSG_HDR + GENL_HDR + attributes.len();
        let mut bytes = Vec::new();
        bytes.extend((length as u32).to_ne_bytes());
        bytes.extend(kind.to_ne_bytes());
        bytes.extend([0u8; 10]);
        bytes.extend([1, 1, 0, 0]);
        bytes.extend(attributes);
        bytes
    }

    fn attr(kind: u16, value: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend(((NLA_HDR + value.len()) as u16).to_ne_bytes());
        bytes.extend(kind.to_ne_bytes());
        bytes.extend(value);
        bytes.resize(align(bytes.len()), 0);
        bytes
    }

    /// A `struct taskstats` of `length` bytes and `version`.
    fn stats_of(version: u16, length: usize) -> Vec<u8> {
        let mut stats = vec![0u8; length];
        stats[0..2].copy_from_slice(&version.to_ne_bytes());
        for (at, value) in [
            (offset::CPU_DELAY, 1u64),
            (offset::BLKIO_DELAY, 2),
            (offset::SWAPIN_DELAY, 3),
            (offset::NVCSW, 4),
            (offset::FREEPAGES_DELAY, 5),
            (offset::THRASHING_DELAY, 6),
            (offset::COMPACT_DELAY, 7),
            (offset::WPCOPY_DELAY, 8),
        ] {
            if at + 8 <= length {
                stats[at..at + 8].copy_from_slice(&value.to_ne_bytes());
            }
        }
        stats
    }

    fn stats(length: usize) -> Vec<u8> {
        stats_of(13, length)
    }

    /// A reply carrying `stats`.
    fn reply_of(stats: &[u8]) -> Vec<u8> {
        message(
            27,
            &attr(TASKSTATS_TYPE_AGGR_PID, &attr(TASKSTATS_TYPE_STATS, stats)),
        )
    }

    #[test]
    fn a_reply_holds_the_stats_inside_the_aggregate() {
        let mut nested = attr(1, &42u32.to_ne_bytes());
        nested.extend(attr(TASKSTATS_TYPE_STATS, &stats(416)));
        let reply = message(27, &attr(TASKSTATS_TYPE_AGGR_PID | 0x8000, &nested));
        let delays = parse_stats(&reply).unwrap();
        assert_eq!(
            delays,
            Delays {
                cpu_ns: 1,
                waits: DelaySplit {
                    block_io_ns: Some(2),
                    swap_in_ns: Some(3),
                    reclaim_ns: Some(5),
                    thrashing_ns: Some(6),
                    compaction_ns: Some(7),
                    write_copy_ns: Some(8),
                },
                voluntary: 4,
                version: 13,
            }
        );
    }

    #[test]
    fn a_kind_the_kernel_does_not_count_is_absent_not_zero() {
        // A struct cut before `wpcopy`: what it lacks was never counted.
        let short = parse_stats(&reply_of(&stats(400))).unwrap().waits;
        assert_eq!(short.write_copy_ns, None);
        assert_eq!(short.compaction_ns, Some(7));
        // A version 10 kernel (no compaction nor copy-on-write fields),
        // whatever bytes follow the fields it has.
        let v10 = parse_stats(&reply_of(&stats_of(10, 416))).unwrap().waits;
        assert_eq!((v10.compaction_ns, v10.write_copy_ns), (None, None));
        assert_eq!((v10.reclaim_ns, v10.thrashing_ns), (Some(5), Some(6)));
        let v8 = parse_stats(&reply_of(&stats_of(8, 416))).unwrap().waits;
        assert_eq!(v8.thrashing_ns, None);
        // Deltas and stalls keep it absent, and count only what was
        // counted.
        let later = DelaySplit {
            reclaim_ns: Some(9),
            ..v8
        };
        let delta = later.since(&v8);
        assert_eq!(delta.reclaim_ns, Some(4));
        assert_eq!(delta.thrashing_ns, None);
        assert_eq!(delta.stall_ns(), 4);
        let serialized = serde_json::to_value(delta).unwrap();
        assert!(serialized.get("thrashing_ns").is_none(), "{serialized}");
        let read: DelaySplit = serde_json::from_value(serialized).unwrap();
        assert_eq!(read, delta);
    }

    #[test]
    fn errors_and_malformed_replies_are_told_apart() {
        let mut denied = message(NLMSG_ERROR, &[]);
        denied.truncate(NLMSG_HDR);
        denied.extend((-libc::EPERM).to_ne_bytes());
        let length = denied.len() as u32;
        denied[0..4].copy_from_slice(&length.to_ne_bytes());
        assert!(matches!(
            parse_stats(&denied),
            Err(TaskstatsError::NotPermitted)
        ));
        let mut gone = denied.clone();
        gone[16..20].copy_from_slice(&(-libc::ESRCH).to_ne_bytes());
        assert!(matches!(
            parse_stats(&gone),
            Err(TaskstatsError::Kernel(nix::Error::ESRCH))
        ));
        assert!(matches!(
            parse_stats(&message(27, &[])),
            Err(TaskstatsError::Malformed("no stats"))
        ));
        assert!(matches!(
            parse_stats(&[1, 2, 3]),
            Err(TaskstatsError::Malformed(_))
        ));
        let short = message(
            27,
            &attr(
                TASKSTATS_TYPE_AGGR_PID,
                &attr(TASKSTATS_TYPE_STATS, &stats(64)),
            ),
        );
        assert!(matches!(
            parse_stats(&short),
            Err(TaskstatsError::Malformed("stats too short"))
        ));
        let family = message(16, &attr(CTRL_ATTR_FAMILY_ID, &25u16.to_ne_bytes()));
        assert_eq!(parse_family(&family).unwrap(), 25);
    }

    #[test]
    fn deltas_never_go_below_zero() {
        let earlier = DelaySplit {
            block_io_ns: Some(10),
            swap_in_ns: Some(5),
            ..DelaySplit::default()
        };
        let later = DelaySplit {
            block_io_ns: Some(25),
            swap_in_ns: Some(4),
            ..DelaySplit::default()
        };
        let delta = later.since(&earlier);
        assert_eq!((delta.block_io_ns, delta.swap_in_ns), (Some(15), Some(0)));
    }

    #[test]
    fn a_wait_longer_than_the_time_between_readings_is_cut_to_it() {
        let delta = DelaySplit {
            block_io_ns: Some(25_000 * 1_000_000_000),
            swap_in_ns: Some(3_000_000),
            ..DelaySplit::default()
        };
        let (split, cut) = delta.cut_to(180_000_000);
        assert!(cut);
        assert_eq!(
            (split.block_io_ns, split.swap_in_ns),
            (Some(180_000_000), Some(3_000_000))
        );
        assert!(!delta.cut_to(u64::MAX).1);
    }

    /// Against this kernel: the CPU wait taskstats gives for this thread is
    /// schedstat's run-queue wait (the kernel copies it), read between two
    /// readings of it, and its voluntary switches are getrusage's.
    #[test]
    fn this_kernel_answers_for_this_thread() {
        if !nix::unistd::geteuid().is_root() {
            skip("needs root (taskstats asks for CAP_NET_ADMIN)");
            return;
        }
        let mut socket = match TaskstatsSocket::open() {
            Err(TaskstatsError::NoFamily) => {
                skip("this kernel has no TASKSTATS family");
                return;
            }
            other => other.unwrap(),
        };
        let tid = nix::unistd::gettid().as_raw() as u32;
        let run_delay = || {
            let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
            text.split_whitespace()
                .nth(1)
                .unwrap()
                .parse::<u64>()
                .unwrap()
        };
        let voluntary = || {
            nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_THREAD)
                .unwrap()
                .voluntary_context_switches() as u64
        };
        std::thread::sleep(std::time::Duration::from_millis(2));
        let (delay_before, switches_before) = (run_delay(), voluntary());
        let delays = socket.read(tid).unwrap();
        let (delay_after, switches_after) = (run_delay(), voluntary());
        assert!(delays.version >= 8, "{delays:?}");
        assert!(
            (delay_before..=delay_after).contains(&delays.cpu_ns),
            "{delay_before} <= {} <= {delay_after}",
            delays.cpu_ns
        );
        assert!(
            (switches_before..=switches_after).contains(&delays.voluntary),
            "{switches_before} <= {} <= {switches_after}",
            delays.voluntary
        );
        assert!(matches!(
            socket.read(u32::MAX >> 2),
            Err(TaskstatsError::Kernel(nix::Error::ESRCH))
        ));
    }

    /// Says `SKIPPED <test>: <reason>` past the harness's capture, as
    /// tests/suite/common's `skip` does (CI lists them).
    fn skip(reason: &str) {
        use std::io::Write as _;
        let test = std::thread::current();
        let line = format!("SKIPPED {}: {reason}\n", test.name().unwrap_or_default());
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}
