//! The bandwidth loads (`pipebw`, `unixbw`, `tcpbw`) on short real runs:
//! each streams MB with one writer–reader pair per CPU, and nothing of
//! theirs outlives the run — no reader process, no TCP connection (not even
//! in TIME_WAIT) — after a normal end, a SIGINT, or a writer SIGKILLed.

use crate::common::{
    assert_load_did_work, exit_code_within, feelbench, new_tag, read_json, require_root, stderr,
    tagged_processes, wait_for_named, watch_until_exit, Watch, LOOPS_PER_MS,
};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `feelbench run` measuring x (a cheap probe) under `loads` for `seconds`.
fn run_command(tag: &str, dir: &Path, loads: &str, seconds: &str) -> Command {
    let mut command = feelbench(tag, dir);
    command
        .args(["run", "--probe", "x", "--load", loads, "-t", seconds])
        .args(["--warmup", "0.2", "-l", LOOPS_PER_MS, "-q", "-o"])
        .arg(dir.join("run.json"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

fn start(tag: &str, dir: &Path, loads: &str, seconds: &str) -> Child {
    run_command(tag, dir, loads, seconds).spawn().unwrap()
}

/// Socket inodes held by process `pid`.
fn socket_inodes(pid: u32) -> Vec<u64> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.filter_map(|fd| {
        let link = std::fs::read_link(fd.ok()?.path()).ok()?;
        let link = link.to_str()?;
        link.strip_prefix("socket:[")?
            .strip_suffix(']')?
            .parse()
            .ok()
    })
    .collect()
}

/// IPv4 TCP sockets of the system: (local port, remote port, inode); a
/// connection in TIME_WAIT has inode 0.
fn tcp_sockets() -> Vec<(u16, u16, u64)> {
    let text = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let port = |address: &str| u16::from_str_radix(address.split_once(':')?.1, 16).ok();
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            Some((port(fields[1])?, port(fields[2])?, fields[9].parse().ok()?))
        })
        .collect()
}

/// What was seen of a run while it ran: its processes, and the (local,
/// remote) ports of the TCP sockets they held (both ports, so another
/// test's connection that reuses one of them later is not taken for its).
#[derive(Default)]
struct Seen {
    pids: BTreeSet<u32>,
    connections: BTreeSet<(u16, u16)>,
}

impl Watch for Seen {
    fn look(&mut self, tag: &str) {
        let pids = tagged_processes(tag);
        let inodes: BTreeSet<u64> = pids.iter().flat_map(|pid| socket_inodes(*pid)).collect();
        let connections = tcp_sockets()
            .into_iter()
            .filter(|(_, _, inode)| inodes.contains(inode))
            .map(|(local, remote, _)| (local, remote));
        self.connections.extend(connections);
        self.pids.extend(pids);
    }
}

/// Asserts nothing of the run is left: no process, no TCP socket of a
/// connection its processes held (either end), in any state.
fn assert_nothing_left(tag: &str, seen: &Seen) {
    assert_eq!(tagged_processes(tag), Vec::<u32>::new(), "processes left");
    let left: Vec<_> = tcp_sockets()
        .into_iter()
        .filter(|(local, remote, _)| {
            seen.connections.contains(&(*local, *remote))
                || seen.connections.contains(&(*remote, *local))
        })
        .collect();
    assert_eq!(left, [], "TCP sockets left of {:?}", seen.connections);
}

#[test]
fn each_bandwidth_load_streams_megabytes_and_leaves_nothing_behind() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(&tag, dir.path(), "pipebw,unixbw,tcpbw", "1");
    let mut seen = Seen::default();
    let code = watch_until_exit(&mut child, &tag, &mut seen);
    let output = child.wait_with_output().unwrap();
    assert_eq!(code, Some(0), "{}", stderr(&output));
    let run = read_json(&dir.path().join("run.json"));
    let pairs = run["system"]["cpus"].as_u64().unwrap();
    let scenarios = run["scenarios"].as_array().unwrap();
    let loads = ["pipebw", "unixbw", "tcpbw"];
    assert_eq!(scenarios.len(), loads.len());
    for (scenario, load) in scenarios.iter().zip(loads) {
        assert_load_did_work(scenario, load, "MB", pairs);
        assert!(scenario["load_work"][0]["rate_per_s"].as_f64().unwrap() > 0.0);
    }
    // 2 sockets per pair, seen at least once while tcpbw ran.
    assert!(
        seen.connections.len() >= 2,
        "tcpbw's sockets: {:?}",
        seen.connections
    );
    assert_nothing_left(&tag, &seen);
}

#[test]
fn sigint_under_unixbw_and_tcpbw_leaves_no_process_and_no_socket() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(&tag, dir.path(), "unixbw+tcpbw", "30");
    let mut seen = Seen::default();
    wait_for_named(&tag, "fb-unixbw-read", &mut seen);
    wait_for_named(&tag, "fb-tcpbw-read", &mut seen);
    seen.look(&tag);
    assert!(
        !seen.connections.is_empty(),
        "tcpbw's connections exist while it runs"
    );
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    assert_eq!(watch_until_exit(&mut child, &tag, &mut seen), Some(130));
    assert_nothing_left(&tag, &seen);
}

#[test]
fn a_writer_killed_fails_its_load_and_its_reader_goes_too() {
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start(&tag, dir.path(), "pipebw", "30");
    let mut seen = Seen::default();
    wait_for_named(&tag, "fb-pipebw-read", &mut seen);
    let writers = wait_for_named(&tag, "fb-load-pipebw", &mut seen);
    kill(Pid::from_raw(writers[0] as i32), Signal::SIGKILL).unwrap();
    assert_eq!(watch_until_exit(&mut child, &tag, &mut seen), Some(1));
    let error = read_json(&dir.path().join("run.json"))["scenarios"][0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(error.contains("pipebw"), "{error}");
    assert_nothing_left(&tag, &seen);
}

#[test]
fn tcpbw_without_a_loopback_interface_fails_with_the_reason() {
    if !require_root("a network namespace of its own (unshare -n)") {
        return;
    }
    let tag = new_tag();
    let dir = tempfile::tempdir().unwrap();
    let run = run_command(&tag, dir.path(), "tcpbw", "1");
    // A new network namespace has its loopback interface down.
    let mut unshared = Command::new("unshare");
    unshared
        .arg("-n")
        .arg(run.get_program())
        .args(run.get_args())
        .envs(run.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = match unshared.spawn() {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return crate::common::skip("needs unshare (util-linux)");
        }
        Err(e) => panic!("cannot run unshare: {e}"),
    };
    assert_eq!(
        exit_code_within(&mut child, Duration::from_secs(30)),
        Some(1)
    );
    let scenario = &read_json(&dir.path().join("run.json"))["scenarios"][0];
    assert_eq!(scenario["status"], "failed", "{scenario}");
    let error = scenario["error"].as_str().unwrap();
    assert!(
        error.contains("tcpbw: no TCP over the loopback interface"),
        "{error}"
    );
    assert_eq!(tagged_processes(&tag), Vec::<u32>::new(), "processes left");
}
