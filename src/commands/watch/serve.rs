//! `--listen ADDR`: the metrics served over HTTP to a scraper (Prometheus,
//! every 15 s or so), from std's `TcpListener` on a thread of its own.
//! One answer to one request per connection, `GET /metrics` (or `/`),
//! needs no HTTP library: a crate (hyper, tiny_http) would bring an async
//! runtime or a pool of threads and their dependencies for what is a
//! dozen lines here. The listener is bound before the canaries start, so
//! an address in use is said at once.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// OpenMetrics' content type, which Prometheus parses as such.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// How long a client may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Request header lines read at most.
const MAX_HEADER_LINES: usize = 100;

/// A bound address, not yet serving.
#[derive(Debug)]
pub struct Bound {
    listener: TcpListener,
}

/// Why the address cannot be served.
#[derive(Debug, thiserror::Error)]
#[error("--listen {addr}: {error}")]
pub struct ListenError {
    addr: SocketAddr,
    error: std::io::Error,
}

impl Bound {
    /// Binds `addr`.
    pub fn bind(addr: SocketAddr) -> Result<Self, ListenError> {
        let listener = TcpListener::bind(addr).map_err(|error| ListenError { addr, error })?;
        Ok(Self { listener })
    }

    /// Serves `render()`'s text to every request until the server is
    /// dropped.
    pub fn serve(self, render: impl Fn() -> String + Send + 'static) -> std::io::Result<Server> {
        let addr = self.listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("fb-metrics".into())
            .spawn(move || {
                for stream in self.listener.incoming() {
                    if flag.load(Ordering::Acquire) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        let _ = answer(stream, &render);
                    }
                }
            })?;
        Ok(Server {
            addr,
            stop,
            thread: Some(thread),
        })
    }
}

/// The serving thread; dropped, it stops.
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wakes the accepting thread, which then sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads one request from `stream` and answers it.
fn answer(stream: TcpStream, render: &impl Fn() -> String) -> std::io::Result<()> {
    stream.set_read_timeout(Some(READ_TIMEOUT))?;
    let mut reader = BufReader::new(&stream);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    let mut line = String::new();
    for _ in 0..MAX_HEADER_LINES {
        line.clear();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
    }
    let mut words = request.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let (status, kind, body) = match (method, path) {
        ("GET", "/metrics" | "/") => ("200 OK", CONTENT_TYPE, render()),
        ("GET", _) => ("404 Not Found", "text/plain", "try /metrics\n".to_string()),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "GET only\n".to_string(),
        ),
    };
    let mut out = &stream;
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    fn get(addr: SocketAddr, path: &str) -> String {
        let mut stream = TcpStream::connect(addr).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text
    }

    #[test]
    fn serves_the_text_on_metrics_and_refuses_a_taken_address() {
        let bound = Bound::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = bound.listener.local_addr().unwrap();
        let taken = Bound::bind(addr).expect_err("the address is in use");
        assert!(
            taken.to_string().starts_with(&format!("--listen {addr}: ")),
            "{taken}"
        );
        let server = bound.serve(|| "a 1\n# EOF\n".to_string()).unwrap();
        let ok = get(addr, "/metrics");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(
            ok.contains(CONTENT_TYPE) && ok.ends_with("\r\n\r\na 1\n# EOF\n"),
            "{ok}"
        );
        assert!(get(addr, "/nope").starts_with("HTTP/1.1 404"));
        drop(server);
        assert!(TcpStream::connect(addr).is_err(), "the listener is closed");
    }
}
