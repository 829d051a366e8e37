//! Local communication with a partner process, as LMbench's lat_ctx,
//! lat_pipe, lat_unix, lat_udp, lat_tcp and lat_connect do it: the worker
//! sends a message (1 byte; lat_udp's 4) and waits for the partner to send
//! it back (a round trip, with both processes summing a working set of
//! their own per pass for the context switches), or connects to a partner
//! that accepts and closes. Each timed instance (one round trip, or
//! LMbench's loop of them) follows an untimed round trip, as LMbench's
//! loops start after one: it measures the round trip itself, not the
//! wake-up of a CPU left idle since the last slot (the periodic probes
//! measure that). A context switch is timed as lat_ctx times it: half the
//! round trip, with what each half costs besides the switch (writing the
//! token, reading it, a pass over the working set) timed just before in the
//! worker alone on a pipe of its own, as many times as the instance's
//! round trips ([`Overhead`]), which its figures subtract. Everything is
//! made before the partner is forked. A partner that is gone closes its
//! end, which fails the worker's next read (pipes, AF_UNIX and TCP read no
//! more), except over UDP, where the worker's reads time out instead (as
//! lat_udp's alarm does); LMbench's stream reads wait without a timeout,
//! and so do these, whose timer would be armed at each wait.

use super::ops::{OpError, Operation, Timed};
use super::partner::Partner;
use crate::measure::clock::now_ns;
use crate::system::loopback;
use std::hint::black_box;
use std::io::{self, PipeReader, PipeWriter, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream, UdpSocket};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// Bytes of each message over a stream (LMbench's lat_pipe, lat_unix and
/// lat_tcp send 1).
const MESSAGE_BYTES: usize = 1;

/// Bytes of each datagram (lat_udp's default, its least: a sequence
/// number).
const DATAGRAM_BYTES: usize = 4;

/// Bytes of the largest message.
const MOST_MESSAGE_BYTES: usize = DATAGRAM_BYTES;

/// How long the worker waits for a datagram's reply before the operation
/// fails, and TCP for its connection.
const REPLY_TIMEOUT: Duration = Duration::from_secs(2);

/// Loopback, port chosen by the kernel.
const LOOPBACK: (Ipv4Addr, u16) = (Ipv4Addr::LOCALHOST, 0);

/// One end of a conversation: sends and receives whole messages.
trait Channel {
    fn send(&mut self, message: &[u8]) -> io::Result<()>;
    fn receive(&mut self, message: &mut [u8]) -> io::Result<()>;
}

/// A byte stream read from one descriptor and written to another (a pair
/// of pipes, or two handles of one socket).
struct Stream<R, W> {
    rx: R,
    tx: W,
}

impl<R: Read, W: Write> Channel for Stream<R, W> {
    fn send(&mut self, message: &[u8]) -> io::Result<()> {
        self.tx.write_all(message)
    }

    fn receive(&mut self, message: &mut [u8]) -> io::Result<()> {
        self.rx.read_exact(message)
    }
}

impl Channel for UdpSocket {
    fn send(&mut self, message: &[u8]) -> io::Result<()> {
        UdpSocket::send(self, message).map(drop)
    }

    fn receive(&mut self, message: &mut [u8]) -> io::Result<()> {
        self.recv(message).map(drop)
    }
}

/// Memory a process sums once per pass (lat_ctx's array), filled so that
/// it is backed by pages of its own (untouched memory would all read the
/// one zero page).
struct WorkingSet(Vec<u8>);

impl WorkingSet {
    fn new(bytes: usize) -> Self {
        Self(vec![1; bytes])
    }

    fn pass(&self) {
        black_box(self.0.iter().fold(0_u64, |sum, &b| sum + u64::from(b)));
    }
}

/// Context switches in a round trip: there and back.
const SWITCHES_PER_ROUND_TRIP: u64 = 2;

/// lat_ctx's overhead: what each half of a round trip costs besides the
/// switch (a pass over the working set, writing the token, reading it),
/// timed in the worker alone on a pipe to itself, warm (after an untimed
/// one) and in a loop as lat_ctx's loop of them runs.
struct Overhead {
    rx: PipeReader,
    tx: PipeWriter,
}

impl Overhead {
    fn new() -> Result<Self, OpError> {
        let (rx, tx) = io::pipe().map_err(OpError::of("cannot make a pipe"))?;
        Ok(Self { rx, tx })
    }

    /// The overhead with `working_set`, each of `n` passes in a loop, in
    /// ns.
    fn timed_ns(&mut self, working_set: &WorkingSet, n: u64) -> Result<u64, OpError> {
        self.pass(working_set)?;
        let started_ns = now_ns();
        for _ in 0..n {
            self.pass(working_set)?;
        }
        Ok((now_ns() - started_ns) / n.max(1))
    }

    /// A pass over `working_set`, and the token through the pipe.
    fn pass(&mut self, working_set: &WorkingSet) -> Result<(), OpError> {
        let mut message = [1_u8; MESSAGE_BYTES];
        working_set.pass();
        self.tx
            .write_all(&message)
            .and_then(|()| self.rx.read_exact(&mut message))
            .map_err(OpError::of("cannot pass a token through a pipe to itself"))
    }
}

/// Round trips of a message to a partner that sends it back; with an
/// overhead, timed as lat_ctx's context switches. Fields drop in order: the
/// worker's end closes before the partner is killed.
struct RoundTrip<C> {
    channel: C,
    message_bytes: usize,
    working_set: WorkingSet,
    overhead: Option<Overhead>,
    _partner: Partner,
}

impl<C: Channel> Operation for RoundTrip<C> {
    /// One round trip untimed, so that the timed ones find both processes
    /// and their CPUs awake, as back-to-back round trips do.
    fn prepare(&mut self, _n: u64) -> Result<(), OpError> {
        self.run()
    }

    /// `n` round trips; as context switches, after their overhead.
    fn timed(&mut self, n: u64) -> Result<Timed, OpError> {
        let overhead_ns = match &mut self.overhead {
            Some(overhead) => Some(overhead.timed_ns(&self.working_set, n)?),
            None => None,
        };
        let started_ns = now_ns();
        for _ in 0..n {
            self.run()?;
        }
        let timed = Timed::of(now_ns() - started_ns, n);
        Ok(match overhead_ns {
            Some(overhead_ns) => Timed {
                ops: n * SWITCHES_PER_ROUND_TRIP,
                overhead_ns: Some(overhead_ns),
                ..timed
            },
            None => timed,
        })
    }

    fn run(&mut self) -> Result<(), OpError> {
        let mut buffer = [1_u8; MOST_MESSAGE_BYTES];
        let message = &mut buffer[..self.message_bytes];
        self.working_set.pass();
        self.channel
            .send(message)
            .map_err(OpError::of("cannot send to the partner process"))?;
        self.channel
            .receive(message)
            .map_err(OpError::of("no reply from the partner process"))
    }
}

/// The partner's side: sends every message of `message_bytes` back, after
/// a pass over its working set, until the worker's end is gone.
fn echo(mut channel: impl Channel, message_bytes: usize, working_set: WorkingSet) {
    let mut buffer = [0_u8; MOST_MESSAGE_BYTES];
    let message = &mut buffer[..message_bytes];
    while channel.receive(message).is_ok() {
        working_set.pass();
        if channel.send(message).is_err() {
            return;
        }
    }
}

/// What a conversation with a partner is made of, besides its channel.
struct Conversation {
    /// The partner's name (at most 15 bytes show).
    name: &'static std::ffi::CStr,
    message_bytes: usize,
    /// Bytes each process sums per pass.
    working_bytes: usize,
    overhead: Option<Overhead>,
}

impl Conversation {
    /// Messages of [`MESSAGE_BYTES`], no working set, no overhead.
    fn plain(name: &'static std::ffi::CStr) -> Self {
        Self {
            name,
            message_bytes: MESSAGE_BYTES,
            working_bytes: 0,
            overhead: None,
        }
    }
}

/// Round trips of `ours`, the worker's end, to a partner forked to answer
/// on `theirs`, as `conversation` says.
fn with_partner<C: Channel + 'static>(
    ours: C,
    theirs: impl Channel,
    conversation: Conversation,
) -> Result<Box<dyn Operation>, OpError> {
    let Conversation {
        name,
        message_bytes,
        working_bytes,
        overhead,
    } = conversation;
    let partner = Partner::start(name, || {
        echo(theirs, message_bytes, WorkingSet::new(working_bytes))
    })?;
    Ok(Box::new(RoundTrip {
        channel: ours,
        message_bytes,
        working_set: WorkingSet::new(working_bytes),
        overhead,
        _partner: partner,
    }))
}

/// Round trips over two pipes (lat_pipe).
pub fn pipes() -> Result<Box<dyn Operation>, OpError> {
    pipe_pair(Conversation::plain(c"fb-micro-pipe"))
}

/// Context switches as lat_ctx times them with two processes, each
/// summing `working_bytes` per pass.
pub fn switches(working_bytes: usize) -> Result<Box<dyn Operation>, OpError> {
    pipe_pair(Conversation {
        working_bytes,
        overhead: Some(Overhead::new()?),
        ..Conversation::plain(c"fb-micro-pipe")
    })
}

/// Round trips over two pipes, as `conversation` says.
fn pipe_pair(conversation: Conversation) -> Result<Box<dyn Operation>, OpError> {
    let (from_partner, to_worker) = io::pipe().map_err(OpError::of("cannot make a pipe"))?;
    let (from_worker, to_partner) = io::pipe().map_err(OpError::of("cannot make a pipe"))?;
    let ours = Stream {
        rx: from_partner,
        tx: to_partner,
    };
    let theirs = Stream {
        rx: from_worker,
        tx: to_worker,
    };
    with_partner(ours, theirs, conversation)
}

/// Round trips over an AF_UNIX stream socket pair (lat_unix).
pub fn unix() -> Result<Box<dyn Operation>, OpError> {
    let (ours, theirs) =
        UnixStream::pair().map_err(OpError::of("cannot make an AF_UNIX socket pair"))?;
    let split = |s: UnixStream| -> Result<_, OpError> {
        let rx = s
            .try_clone()
            .map_err(OpError::of("cannot duplicate a socket"))?;
        Ok(Stream { rx, tx: s })
    };
    with_partner(
        split(ours)?,
        split(theirs)?,
        Conversation::plain(c"fb-micro-unix"),
    )
}

/// Round trips over a TCP connection on loopback, without Nagle's delay
/// (lat_tcp).
pub fn tcp() -> Result<Box<dyn Operation>, OpError> {
    let (ours, theirs) =
        loopback::tcp_pair(REPLY_TIMEOUT).map_err(OpError::of("no TCP over 127.0.0.1"))?;
    let split = |s: TcpStream| -> Result<_, OpError> {
        s.set_nodelay(true)
            .map_err(OpError::of("cannot set TCP_NODELAY"))?;
        let rx = s
            .try_clone()
            .map_err(OpError::of("cannot duplicate a socket"))?;
        Ok(Stream { rx, tx: s })
    };
    with_partner(
        split(ours)?,
        split(theirs)?,
        Conversation::plain(c"fb-micro-tcp"),
    )
}

/// Round trips of datagrams between two connected UDP sockets on
/// loopback (lat_udp).
pub fn udp() -> Result<Box<dyn Operation>, OpError> {
    let bind = || UdpSocket::bind(LOOPBACK).map_err(OpError::of("cannot bind on 127.0.0.1"));
    let (ours, theirs) = (bind()?, bind()?);
    let address = |s: &UdpSocket| {
        s.local_addr()
            .map_err(OpError::of("cannot read a socket's address"))
    };
    let (our_address, their_address) = (address(&ours)?, address(&theirs)?);
    ours.connect(their_address)
        .and_then(|()| theirs.connect(our_address))
        .map_err(OpError::of("cannot connect UDP sockets on 127.0.0.1"))?;
    ours.set_read_timeout(Some(REPLY_TIMEOUT))
        .map_err(OpError::of("cannot set a socket's timeout"))?;
    with_partner(
        ours,
        theirs,
        Conversation {
            message_bytes: DATAGRAM_BYTES,
            ..Conversation::plain(c"fb-micro-udp")
        },
    )
}

/// TCP connections to a partner that accepts and closes them (lat_connect).
pub struct Connect {
    address: SocketAddr,
    _partner: Partner,
}

impl Connect {
    /// Listens on loopback and forks the partner that accepts.
    pub fn start() -> Result<Self, OpError> {
        let listener = loopback::listener().map_err(OpError::of("no TCP over 127.0.0.1"))?;
        let address = listener
            .local_addr()
            .map_err(OpError::of("cannot read a socket's address"))?;
        let partner = Partner::start(c"fb-micro-accept", move || {
            while let Ok((connection, _)) = listener.accept() {
                drop(connection);
            }
        })?;
        Ok(Self {
            address,
            _partner: partner,
        })
    }
}

impl Operation for Connect {
    fn run(&mut self) -> Result<(), OpError> {
        let connection =
            TcpStream::connect(self.address).map_err(OpError::of("cannot connect on 127.0.0.1"))?;
        drop(connection);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An instance holds as many round trips as it is given, each two
    /// switches with an overhead for lat_ctx's; a datagram carries
    /// lat_udp's 4 bytes.
    #[test]
    fn an_instance_is_a_loop_of_round_trips() {
        let mut pipe = pipes().unwrap();
        pipe.prepare(5).unwrap();
        let timed = pipe.timed(5).unwrap();
        assert_eq!((timed.ops, timed.overhead_ns), (5, None));
        let mut switch = switches(1 << 10).unwrap();
        switch.prepare(3).unwrap();
        let timed = switch.timed(3).unwrap();
        assert_eq!(timed.ops, 3 * SWITCHES_PER_ROUND_TRIP);
        assert!(timed.overhead_ns.unwrap() > 0);
        let mut udp = udp().unwrap();
        udp.prepare(2).unwrap();
        assert_eq!(udp.timed(2).unwrap().ops, 2);
        assert_eq!(DATAGRAM_BYTES, 4);
    }
}
