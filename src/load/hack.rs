//! `hack`: hackbench's message storm (interbench's Hack load ran
//! `hackbench 50`). Groups of sender processes each write small messages to
//! every receiver of their group over Unix stream sockets, and the receivers
//! read them: a crowd of processes that wake each other all the time. The
//! worker forks them and counts the messages sent.
//!
//! Sizing: hackbench's group is 20 senders and 20 receivers and
//! `hackbench 50` ran 50 groups (2000 processes), which often ran small
//! machines out of memory; here a group is half hackbench's (10 and 10) and
//! there is one group per CPU, so every CPU has 20 processes to juggle
//! whatever the machine's size, and no more groups than fit in a tenth of the
//! memory budget at [`PROCESS_BYTES`] a process.

use super::helpers::Helpers;
use super::{LoadDef, LoadError};
use crate::sim::WorkParams;
use std::io::{ErrorKind, Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};

/// Senders in a group.
const SENDERS: usize = 10;
/// Receivers in a group.
const RECEIVERS: usize = 10;
/// Bytes in a message (hackbench's `DATASIZE`).
const MESSAGE_BYTES: usize = 100;
/// Memory one process of the load is reckoned to cost: its own pages, page
/// tables, kernel stack and the messages queued in its socket (measured at
/// about a quarter of a MiB on x86-64: 95 KiB of pages, 56 KiB of page
/// tables, 16 KiB of stack, 70 KiB of queued messages), rounded up to 1 MiB.
const PROCESS_BYTES: u64 = 1 << 20;
/// The load takes at most this fraction (1/N) of the memory budget.
const MEMORY_SHARE: u64 = 10;

/// Registry entry.
pub const DEF: LoadDef = LoadDef {
    name: "hack",
    summary: "hackbench's message storm: per CPU, 10 senders writing to 10 receivers",
    method: 1,
    unit: "messages",
    takes_arg: false,
    disk_bytes: super::no_disk,
    check: super::no_check,
    processes: |_| 1,
    build: |context| {
        let groups = groups(&context.params);
        let mut helpers = Helpers::new("hack", groups * (SENDERS + RECEIVERS))?;
        for _ in 0..groups {
            start_group(&mut helpers)?;
        }
        Ok(Box::new(helpers))
    },
    default: super::always,
    uses: &[],
    job_cache: None,
};

/// Groups to run: one per CPU, as many as fit in the memory share, at least one.
fn groups(params: &WorkParams) -> usize {
    let group_bytes = (SENDERS + RECEIVERS) as u64 * PROCESS_BYTES;
    let affordable = params.mem_bytes / MEMORY_SHARE / group_bytes;
    params
        .cpus
        .min(usize::try_from(affordable).unwrap_or(usize::MAX))
        .max(1)
}

/// Forks one group: a socket pair per receiver, which every sender writes
/// to. The worker's copies of the sockets close when this returns.
fn start_group(helpers: &mut Helpers) -> Result<(), LoadError> {
    let pairs = (0..RECEIVERS)
        .map(|_| UnixStream::pair())
        .collect::<Result<Vec<_>, _>>()
        .map_err(LoadError::io("hack: cannot make a socket pair"))?;
    for (_, input) in &pairs {
        helpers.fork("fb-hack-recv", |_| receive(input))?;
    }
    for _ in 0..SENDERS {
        helpers.fork("fb-hack-send", |sent| send(&pairs, sent))?;
    }
    Ok(())
}

/// A sender: a message to each receiver in turn, forever; counts them.
fn send(pairs: &[(UnixStream, UnixStream)], sent: &AtomicU64) -> String {
    let message = [0x5a_u8; MESSAGE_BYTES];
    loop {
        for mut output in pairs.iter().map(|(output, _)| output) {
            if let Err(e) = output.write_all(&message) {
                return format!("cannot send a message: {e}");
            }
            sent.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A receiver: reads messages as they come, forever.
fn receive(mut input: &UnixStream) -> String {
    let mut buffer = [0_u8; MESSAGE_BYTES];
    loop {
        match input.read(&mut buffer) {
            Ok(0) => return "every sender is gone".to_string(),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return format!("cannot receive a message: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_group_per_cpu_within_a_tenth_of_the_memory() {
        assert_eq!(groups(&WorkParams::for_tests_sized(2, 24 << 30)), 2);
        assert_eq!(groups(&WorkParams::for_tests_sized(64, 24 << 30)), 64);
        // 1 GiB: a tenth is 102 MiB, room for 5 groups of 20 MiB.
        assert_eq!(groups(&WorkParams::for_tests_sized(64, 1 << 30)), 5);
        assert_eq!(
            groups(&WorkParams::for_tests_sized(8, 64 << 20)),
            1,
            "always at least one"
        );
    }
}
