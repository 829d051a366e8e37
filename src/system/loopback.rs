//! TCP connections of the machine to itself over 127.0.0.1, for the probes
//! and loads that talk over the network.

use std::io;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::time::Duration;

/// A listener on 127.0.0.1, on a port the kernel chooses.
pub fn listener() -> io::Result<TcpListener> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(step("cannot listen on 127.0.0.1"))
}

/// Both ends of a new TCP connection over 127.0.0.1, the connecting one
/// first; connecting waits at most `timeout`. An error says which step
/// failed (where no loopback interface is up, the connect).
pub fn tcp_pair(timeout: Duration) -> io::Result<(TcpStream, TcpStream)> {
    let listener = listener()?;
    let address = listener
        .local_addr()
        .map_err(step("cannot read the listening address"))?;
    let ours = TcpStream::connect_timeout(&address, timeout)
        .map_err(step(&format!("cannot connect to {address}")))?;
    let (theirs, _) = listener
        .accept()
        .map_err(step(&format!("cannot accept on {address}")))?;
    Ok((ours, theirs))
}

/// The error of `what`, with the system's reason after it.
fn step(what: &str) -> impl FnOnce(io::Error) -> io::Error + '_ {
    move |error| io::Error::new(error.kind(), format!("{what}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn the_two_ends_of_a_pair_talk_to_each_other() {
        let (mut ours, mut theirs) = tcp_pair(Duration::from_secs(2)).unwrap();
        ours.write_all(b"x").unwrap();
        let mut byte = [0u8];
        theirs.read_exact(&mut byte).unwrap();
        assert_eq!(&byte, b"x");
    }
}
