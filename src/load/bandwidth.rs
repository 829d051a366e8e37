//! `pipebw`, `unixbw` and `tcpbw`: LMbench's bw_pipe, bw_unix and bw_tcp as
//! background work. Each load process is the writer of one pair: it forks its
//! reader (a helper, see `helpers.rs`) and writes 64 KiB chunks (LMbench's
//! transfer size) to it, as fast as the reader takes them, through a pipe, a
//! Unix stream socket pair or a TCP connection over the loopback interface.
//! There is one pair per CPU (LMbench runs one), so the load keeps every CPU
//! busy copying as `burn` keeps it busy looping. The work is the MB written
//! (10^6 bytes); the load's CPU is the writers' and the readers' together.
//!
//! The reader is killed before the writer's end closes (so it never sees the
//! end of the stream and says so), and both TCP ends close with a reset
//! (`SO_LINGER` 0), so no connection lingers in TIME_WAIT after the run.

use super::disk::mb;
use super::helpers::Helpers;
use super::{Load, LoadContext, LoadDef, LoadError};
use crate::measure::window::CpuTime;
use crate::sim::WorkParams;
use crate::system::loopback;
use nix::sys::socket::{setsockopt, sockopt::Linger};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// Bytes written at a time, and read at most at a time (LMbench's `XFER`).
const CHUNK_BYTES: usize = 64 << 10;
/// How long the TCP connection may take to open on the loopback interface.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// `pipebw`.
pub const PIPEBW: LoadDef = stream(
    "pipebw",
    "LMbench's bw_pipe: per CPU, a writer streams 64 KiB chunks to a reader through a pipe",
    |_| {
        let (reader, writer) =
            std::io::pipe().map_err(LoadError::io("pipebw: cannot make a pipe"))?;
        start("pipebw", writer, reader)
    },
);

/// `unixbw`.
pub const UNIXBW: LoadDef = stream(
    "unixbw",
    "LMbench's bw_unix: as pipebw, through a Unix stream socket pair",
    |_| {
        let (writer, reader) =
            UnixStream::pair().map_err(LoadError::io("unixbw: cannot make a socket pair"))?;
        start("unixbw", writer, reader)
    },
);

/// `tcpbw`.
pub const TCPBW: LoadDef = stream(
    "tcpbw",
    "LMbench's bw_tcp: as pipebw, through a TCP connection on 127.0.0.1",
    |_| {
        let (writer, reader) = loopback_connection()?;
        start("tcpbw", writer, reader)
    },
);

/// A streaming load's registry entry: the three differ in name, summary
/// and the channel `build` makes.
const fn stream(
    name: &'static str,
    summary: &'static str,
    build: fn(&LoadContext) -> Result<Box<dyn Load>, LoadError>,
) -> LoadDef {
    LoadDef {
        name,
        summary,
        method: 1,
        unit: "MB",
        takes_arg: false,
        processes: pairs,
        disk_bytes: super::no_disk,
        check: super::no_check,
        build,
        default: |_| false,
        uses: &[],
        job_cache: None,
    }
}

/// Writer–reader pairs: one per CPU.
fn pairs(params: &WorkParams) -> usize {
    params.cpus.max(1)
}

/// A TCP connection to itself over 127.0.0.1, both ends set to close with
/// a reset. Fails, saying so, where there is no loopback interface up.
fn loopback_connection() -> Result<(TcpStream, TcpStream), LoadError> {
    let (writer, reader) = loopback::tcp_pair(CONNECT_TIMEOUT)
        .map_err(LoadError::io("tcpbw: no TCP over the loopback interface"))?;
    for end in [&writer, &reader] {
        reset_on_close(end)?;
    }
    Ok((writer, reader))
}

/// Makes closing `socket` send a reset rather than a FIN, so the connection
/// is gone at once instead of waiting a minute in TIME_WAIT.
fn reset_on_close(socket: &impl AsFd) -> Result<(), LoadError> {
    let abort = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    setsockopt(socket, Linger, &abort).map_err(|errno| LoadError::Sys {
        what: "tcpbw: cannot set SO_LINGER".into(),
        errno,
    })
}

/// Forks the reader of `reader`, closes the worker's copy of it, and gives
/// the writer's side of the load.
fn start<W: Write + 'static>(
    what: &'static str,
    writer: W,
    mut reader: impl Read,
) -> Result<Box<dyn Load>, LoadError> {
    let mut helpers = Helpers::new(what, 1)?;
    helpers.fork(&format!("fb-{what}-read"), |_| drain(&mut reader))?;
    // Only the reader holds its end now: once it is gone, a write fails
    // (EPIPE) instead of blocking on a full buffer.
    drop(reader);
    Ok(Box::new(Stream {
        reader: helpers,
        what,
        writer,
        chunk: vec![0x5a; CHUNK_BYTES],
    }))
}

/// The reader: takes what comes, forever.
fn drain(reader: &mut impl Read) -> String {
    let mut buffer = vec![0_u8; CHUNK_BYTES];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => return "the writer closed its end".to_string(),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return format!("cannot read: {e}"),
        }
    }
}

/// The worker's side of a pair. The fields drop in order: the reader is
/// killed and reaped before the writer's end closes.
struct Stream<W> {
    reader: Helpers,
    what: &'static str,
    writer: W,
    chunk: Vec<u8>,
}

impl<W: Write> Load for Stream<W> {
    /// Writes one chunk; fails once the reader is gone.
    fn step(&mut self) -> Result<f64, LoadError> {
        match self.writer.write_all(&self.chunk) {
            Ok(()) => Ok(mb(CHUNK_BYTES)),
            Err(error) => {
                // Usually the reader ended: say how.
                self.reader.check_helpers()?;
                Err(LoadError::Io {
                    what: format!("{}: cannot write to its reader", self.what),
                    error,
                })
            }
        }
    }

    fn cpu(&self, worker: CpuTime) -> CpuTime {
        self.reader.cpu(worker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_pair_per_cpu() {
        assert_eq!(pairs(&WorkParams::for_tests_sized(2, 1 << 30)), 2);
        assert_eq!(pairs(&WorkParams::for_tests_sized(0, 1 << 30)), 1);
    }

    #[test]
    fn the_loopback_connection_carries_a_chunk() {
        let (mut writer, mut reader) = loopback_connection().unwrap();
        writer.write_all(&[7; CHUNK_BYTES]).unwrap();
        let mut got = vec![0; CHUNK_BYTES];
        reader.read_exact(&mut got).unwrap();
        assert!(got.iter().all(|b| *b == 7));
        let linger = nix::sys::socket::getsockopt(&writer, Linger).unwrap();
        assert_eq!((linger.l_onoff, linger.l_linger), (1, 0));
    }

    #[test]
    fn the_reader_reports_the_end_of_the_stream() {
        let (mut writer, mut reader) = UnixStream::pair().unwrap();
        writer.write_all(&[1; 100]).unwrap();
        drop(writer);
        assert_eq!(drain(&mut reader), "the writer closed its end");
    }
}
