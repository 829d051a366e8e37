//! `feelbench watch`: its canaries' events and incidents in the lines and
//! the JSON, an injected stall named (root), bad input, the end on SIGINT
//! and SIGTERM with nothing left, nothing left either when killed at a
//! random moment by a random signal, and its metrics scraped by a real
//! Prometheus server and queried with the README's PromQL.

use crate::common::{
    exit_code_within, feelbench, feelbench_as_nobody, new_tag, read_json, require_root, skip,
    stderr, stdout, wait_for_no_tagged, LOOPS_PER_MS,
};
use nix::sys::signal::Signal;
use rand::{Rng as _, SeedableRng as _};
use serde_json::Value;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The flight recorder's tracefs mounts this process can see.
fn tracefs_mounts() -> usize {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter(|line| line.split_whitespace().nth(2) == Some("tracefs"))
        .count()
}

/// `feelbench watch ARGS` with the fixed calibration, in `dir`.
pub fn watch(tag: &str, dir: &Path, args: &[&str]) -> Command {
    let mut command = feelbench(tag, dir);
    command.args(["watch", "-l", LOOPS_PER_MS]).args(args);
    command
}

/// A watch with `args` that ended well: what it said, and `--output`'s
/// document.
fn watched(args: &[&str]) -> (Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let output = watch(&new_tag(), dir.path(), args)
        .args(["-o", "w.json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    (output, read_json(&dir.path().join("w.json")))
}

#[test]
fn canaries_count_events_and_late_ones_are_incidents_in_lines_and_json() {
    // Every frame is later than 1 µs: each one is an incident.
    let (output, doc) = watched(&["-t", "2", "--threshold", "frame=1us", "--keep", "5"]);
    assert_eq!(doc["schema"], "feelbench.watch/1");
    let canaries = doc["canaries"].as_array().unwrap();
    let names: Vec<&str> = canaries
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["timer", "frame"]);
    for c in canaries {
        assert!(c["events"].as_u64().unwrap() > 10, "{c}");
        let (p50, p99, max) = (
            c["p50_ms"].as_f64().unwrap(),
            c["p99_ms"].as_f64().unwrap(),
            c["max_ms"].as_f64().unwrap(),
        );
        assert!(p50 <= p99 && p99 <= max, "{c}");
    }
    let frame = &canaries[1];
    assert_eq!(frame["threshold_ms"], 0.001);
    assert_eq!(frame["incidents"], frame["events"], "{frame}");
    let incidents = doc["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 5, "--keep 5");
    let latencies: Vec<f64> = incidents
        .iter()
        .map(|i| i["latency_ms"].as_f64().unwrap())
        .collect();
    assert!(
        latencies.windows(2).all(|w| w[0] >= w[1]),
        "worst first: {latencies:?}"
    );
    for incident in incidents {
        for field in [
            "canary",
            "at",
            "latency_ms",
            "threshold_ms",
            "cause",
            "split",
            "recorded",
        ] {
            assert!(!incident[field].is_null(), "{field} in {incident}");
        }
        assert!(incident["split"]["ended_ns"].as_u64() >= incident["split"]["due_ns"].as_u64());
    }
    let state = doc["recorder"]["state"].as_str().unwrap();
    match nix::unistd::geteuid().is_root() {
        true => assert!(
            ["recording", "stopped"].contains(&state),
            "{}",
            doc["recorder"]
        ),
        false => {
            assert_eq!(state, "off");
            assert!(stderr(&output).contains("not root: no flight recorder"));
        }
    }
    let text = stdout(&output);
    let lines = text
        .lines()
        .filter(|l| l.contains(" frame ") && l.contains("ms late (threshold 0.0 ms)"));
    assert!(
        lines.count() as u64 >= frame["incidents"].as_u64().unwrap() / 2,
        "{text}"
    );
    assert!(
        text.contains("watched ") && text.contains(" s: canary, events"),
        "{text}"
    );
}

/// The canaries of `doc` by name.
fn canaries_by_name(doc: &Value) -> Vec<(&str, &Value)> {
    doc["canaries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c))
        .collect()
}

#[test]
fn each_timed_task_of_an_rtapp_workload_is_a_canary_with_its_incidents() {
    // Every activation of either task is later than 1 µs: an incident.
    let (output, doc) = watched(&[
        "-t",
        "2",
        "--canary",
        "timer,rtapp:compositor",
        "--threshold",
        "rtapp:compositor=1us",
        "--keep",
        "5",
    ]);
    let canaries = canaries_by_name(&doc);
    let names: Vec<&str> = canaries.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "timer",
            "rtapp:compositor/client",
            "rtapp:compositor/compositor"
        ]
    );
    assert_eq!(
        canaries[0].1["threshold_ms"], 2.0,
        "the timer keeps its own"
    );
    let text = stdout(&output);
    // 60 activations a second for 2 s (longer on a busy machine slow to
    // make each tick's incidents), and the first; a busy machine skips
    // some.
    let most = (doc["seconds"].as_f64().unwrap() * 60.0).ceil() as u64 + 2;
    for (name, c) in &canaries[1..] {
        let events = c["events"].as_u64().unwrap();
        assert!((10..=most).contains(&events), "{c}, at most {most}");
        assert_eq!(c["period_ms"], 16.667, "{c}");
        assert_eq!(c["threshold_ms"], 0.001, "{c}");
        assert_eq!(c["incidents"], c["events"], "{c}");
        let (p50, p99, max) = (
            c["p50_ms"].as_f64().unwrap(),
            c["p99_ms"].as_f64().unwrap(),
            c["max_ms"].as_f64().unwrap(),
        );
        assert!(0.0 < p50 && p50 <= p99 && p99 <= max, "{c}");
        let lines = text.lines().filter(|l| {
            l.contains(&format!(" {name} ")) && l.contains(" ms late (threshold 0.0 ms)")
        });
        assert!(lines.count() as u64 >= events / 2, "{name}: {text}");
        assert!(
            text.contains(&format!("\n  {name} ")),
            "its summary line: {text}"
        );
    }
    let incidents = doc["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 5, "--keep 5");
    for incident in incidents {
        let canary = incident["canary"].as_str().unwrap();
        assert!(canary.starts_with("rtapp:compositor/"), "{incident}");
        let split = &incident["split"];
        assert!(split["ended_ns"].as_u64() >= split["woke_ns"].as_u64());
        assert!(split["woke_ns"].as_u64() >= split["due_ns"].as_u64());
        // The work each activation asked for: the task's run (5 or 2 ms).
        let wanted = split["cpu_wanted_ns"].as_u64().unwrap();
        assert!([5_000_000, 2_000_000].contains(&wanted), "{incident}");
    }
}

/// A 1.5 s watch of `canary` alone: its summary in `--output`'s document,
/// and most events it can have had at `per_s` a second over the time it
/// ran (which a busy machine, slow to make the incidents of each tick,
/// makes longer than asked).
fn watched_alone(canary: &str, per_s: f64) -> (Value, u64) {
    let (_, doc) = watched(&["-t", "1.5", "--canary", canary]);
    let canaries = doc["canaries"].as_array().unwrap();
    assert_eq!(canaries.len(), 1, "{doc}");
    assert_eq!(canaries[0]["name"], canary);
    let seconds = doc["seconds"].as_f64().unwrap();
    (canaries[0].clone(), (seconds * per_s).ceil() as u64 + 3)
}

#[test]
fn a_custom_canary_runs_the_shape_it_is_given() {
    let (c, most) = watched_alone("custom:20@5ms", 200.0);
    assert_eq!(
        (c["period_ms"].as_f64(), c["threshold_ms"].as_f64()),
        (Some(5.0), Some(2.5))
    );
    // 200 periods a second for 1.5 s; a busy machine skips some.
    let events = c["events"].as_u64().unwrap();
    assert!((20..=most).contains(&events), "{c}, at most {most}");
}

#[test]
fn a_fragment_canary_writes_as_its_buffer_frees() {
    let (c, most) = watched_alone("fragment", 1e3 / 1.451247);
    // latencytest's 1.45 ms fragments; the buffer's margin is two of them.
    assert_eq!(c["period_ms"], 1.451247, "{c}");
    assert_eq!(c["threshold_ms"], 2.902494, "{c}");
    // A write per fragment played (1,034 in 1.5 s) and the 3 the buffer
    // held, at most; a busy machine writes fewer.
    let events = c["events"].as_u64().unwrap();
    assert!((50..=most).contains(&events), "{c}, at most {most}");
}

#[test]
fn its_minutes_go_to_the_store_and_history_lists_them() {
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let output = watch(&tag, dir.path(), &["-t", "2", "--threshold", "frame=1us"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let history = feelbench(&tag, dir.path())
        .args(["history", "--watch"])
        .output()
        .unwrap();
    let text = stdout(&history);
    assert_eq!(history.status.code(), Some(0), "{}", stderr(&history));
    assert!(text.starts_with("minute (UTC)"), "{text}");
    for canary in ["timer", "frame"] {
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| l.split_whitespace().nth(3) == Some(canary))
            .collect();
        assert!(!rows.is_empty() && rows.len() <= 2, "{canary}: {text}");
        let events: u64 = rows
            .iter()
            .map(|r| r.split_whitespace().nth(4).unwrap().parse::<u64>().unwrap())
            .sum();
        assert!(events > 10, "{canary}: {text}");
    }
    let other = feelbench(&tag, dir.path())
        .args(["history", "--watch", "--machine", "no-such-host"])
        .output()
        .unwrap();
    assert!(
        stdout(&other).starts_with("no minutes"),
        "{}",
        stdout(&other)
    );
}

/// A separate process named `fb-test-stall`, SCHED_FIFO on CPU `cpu`, busy
/// 40 ms every 0.6 s.
fn staller(cpu: &str) -> Option<Child> {
    let script = r#"$0 = "fb-test-stall"; use Time::HiRes qw(time sleep);
        while (1) { my $t = time; while (time - $t < 0.04) {} sleep(0.6); }"#;
    Command::new("chrt")
        .args(["-f", "10", "taskset", "-c", cpu, "perl", "-e", script])
        .spawn()
        .ok()
}

/// What a watch of a stall said and wrote, and the stalling process.
pub struct StalledWatch {
    pub output: Output,
    pub doc: Value,
    pub stall_pid: u32,
}

/// A 3 s watch of the timer canary kept on CPU 0 while [`staller`] stalls
/// that CPU, with `args` besides, writing `w.json` into `dir`; `None` (said
/// as a skip) when not root or without the tools the stall needs.
pub fn watch_a_stall(dir: &Path, args: &[&str]) -> Option<StalledWatch> {
    if !require_root("the flight recorder and SCHED_FIFO") {
        return None;
    }
    let Some(mut stall) = staller("0") else {
        skip("chrt, taskset or perl is missing");
        return None;
    };
    let output = watch(&new_tag(), dir, &["-t", "3", "--cpus", "0"])
        .args(["--canary", "timer", "-o", "w.json"])
        .args(args)
        .output()
        .unwrap();
    let _ = stall.kill();
    let _ = stall.wait();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    Some(StalledWatch {
        doc: read_json(&dir.join("w.json")),
        output,
        stall_pid: stall.id(),
    })
}

#[test]
fn an_injected_stall_is_an_incident_naming_the_stalling_process() {
    let dir = tempfile::tempdir().unwrap();
    let Some(StalledWatch {
        output,
        doc,
        stall_pid,
    }) = watch_a_stall(dir.path(), &[])
    else {
        return;
    };
    let incidents = doc["incidents"].as_array().unwrap();
    let named = incidents.iter().filter(|i| {
        i["ran_instead"].as_array().is_some_and(|r| {
            r.iter().any(|c| {
                c["thread"] == "fb-test-stall"
                    && c["pid"].as_i64() == Some(stall_pid as i64)
                    && c["cgroup"].is_string()
            })
        })
    });
    // Four or five stalls of 40 ms in 3 s; one named is enough on a busy machine.
    assert!(
        named.count() >= 1,
        "{}",
        serde_json::to_string_pretty(incidents).unwrap()
    );
    assert!(
        stdout(&output).contains("fb-test-stall["),
        "{}",
        stdout(&output)
    );
}

#[test]
fn the_recorder_stopped_over_its_budget_starts_again_after_its_cooldown() {
    if !require_root("the flight recorder") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A budget every recording passes, judged after 1 s, and a 1 s first
    // cool-down: it stops about 1 s in, starts again about 1 s later, stops
    // again 1 s after that and waits 2 s.
    let output = watch(&new_tag(), dir.path(), &["-t", "6", "--canary", "timer"])
        .args(["--recorder-budget", "0.0001", "--recorder-cooldown", "1"])
        .args(["-o", "w.json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let err = stderr(&output);
    let said = |what: &str| err.lines().filter(|l| l.contains(what)).count() as u64;
    let stops = said("the flight recorder stopped itself: it cost ");
    let restarts = said("the flight recorder started again after its cool-down");
    assert!(restarts >= 1 && stops >= restarts, "{err}");
    assert!(stops <= restarts + 1, "each stop is said once: {err}");
    let recorder = &read_json(&dir.path().join("w.json"))["recorder"];
    assert_eq!(recorder["stops"], stops, "{recorder}");
    assert_eq!(recorder["restarts"], restarts, "{recorder}");
    assert!(recorder["records"].as_u64().unwrap() > 0, "{recorder}");
    assert!(
        stdout(&output).contains(&format!(
            "stopped itself {stops} times over its budget, started again {restarts} times"
        )),
        "{}",
        stdout(&output)
    );
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_addr = taken.local_addr().unwrap().to_string();
    for (args, says) in [
        (vec!["--threshold", "timer=fast"], "--threshold timer=fast"),
        (
            vec!["--threshold", "mouse=2ms"],
            "\"mouse\" is not a canary this watch runs",
        ),
        (
            vec!["--threshold", "audio=2ms"],
            "not a canary this watch runs",
        ),
        (vec!["--canary", "mouse"], "unknown canary \"mouse\""),
        (
            vec!["--canary", "rtapp:/nonexistent/w.json"],
            "--canary rtapp:/nonexistent/w.json: ",
        ),
        (
            vec!["--canary", "rtapp:no-such"],
            "--canary rtapp:no-such: ",
        ),
        (vec!["--canary", "custom:30"], "--canary custom:30: "),
        (
            vec![
                "--canary",
                "rtapp:periodic",
                "--threshold",
                "rtapp:periodic/t=1ms",
            ],
            "not a canary this watch runs",
        ),
        (vec!["--listen", "nowhere"], "--listen takes an address"),
        (vec!["--listen", &taken_addr], "--listen 127.0.0.1:"),
        (vec!["--cpus", "4096"], "--cpus"),
        (vec!["-t", "0"], "-t/--duration"),
        (vec!["--recorder-budget", "0"], "--recorder-budget takes"),
        (
            vec!["--trace", "/nonexistent/feelbench-traces"],
            "cannot write traces into",
        ),
        (vec!["--trace", ".", "--keep", "0"], "--keep 0 keeps none"),
        (
            vec!["--store", "postgres://127.0.0.1:1/none"],
            "cannot reach the store",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let output = watch(&new_tag(), dir.path(), &args).output().unwrap();
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// The holds on delay accounting of process `pid`.
fn delayacct_holds(pid: u32) -> usize {
    std::fs::read_dir("/run/feelbench/delayacct")
        .map(|entries| {
            entries
                .filter(|e| {
                    e.as_ref().is_ok_and(|e| {
                        e.file_name()
                            .to_string_lossy()
                            .starts_with(&format!("{pid}-"))
                    })
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn sigint_and_sigterm_end_it_clean_with_its_summary() {
    let mounted_before = tracefs_mounts();
    for signal in [nix::sys::signal::SIGINT, nix::sys::signal::SIGTERM] {
        let dir = tempfile::tempdir().unwrap();
        let tag = new_tag();
        let mut child = watch(&tag, dir.path(), &["-o", "w.json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        let pid = child.id();
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "watch did not end on {signal}");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut out = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(status.code(), Some(0), "{signal}: {out}");
        assert!(out.contains("watched "), "{signal}: {out}");
        assert!(read_json(&dir.path().join("w.json"))["canaries"].is_array());
        assert_eq!(
            wait_for_no_tagged(&tag, Duration::from_secs(3)),
            Vec::<u32>::new()
        );
        assert_eq!(
            delayacct_holds(pid),
            0,
            "{signal}: its hold on delay accounting is gone"
        );
        let files: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "feelbench" && n != "w.json")
            .collect();
        assert!(files.is_empty(), "{signal}: left {files:?}");
    }
    assert_eq!(
        tracefs_mounts(),
        mounted_before,
        "the recorder left tracefs mounted"
    );
}

/// Files a watch writes on the side and must not leave behind: atomic
/// writes' temporary files and SQLite's journal, WAL and shared memory
/// (which go when the store is closed), anywhere below `dir`.
fn temporary_files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            found.extend(temporary_files(&path));
        } else if [".tmp", "-journal", "-wal", "-shm"]
            .iter()
            .any(|end| name.ends_with(end))
        {
            found.push(path.display().to_string());
        }
    }
    found
}

/// The tracefs instances, where tracefs is mounted.
fn tracefs_instances() -> Vec<String> {
    std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn killed_at_a_random_moment_by_a_random_signal_it_leaves_nothing_behind() {
    let seed: u64 = std::env::var("FEELBENCH_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::rng().random());
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let root = nix::unistd::geteuid().is_root();
    let (mounted_before, instances_before) = (tracefs_mounts(), tracefs_instances());
    for round in 0..6 {
        let dir = tempfile::tempdir().unwrap();
        let tag = new_tag();
        let addr = format!("127.0.0.1:{}", free_port());
        let args = [
            "--listen",
            &addr,
            "--threshold",
            "frame=1us",
            "--trace",
            ".",
            "--keep",
            "3",
            "-o",
            "w.json",
        ];
        // As root, every other round is a plain user's watch: no recorder
        // and no hold on delay accounting.
        let as_root = root && round % 2 == 0;
        let mut command = match as_root || !root {
            true => feelbench(&tag, dir.path()),
            false => feelbench_as_nobody(&tag, dir.path()),
        };
        let mut child = command
            .args(["watch", "-l", LOOPS_PER_MS])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        let after = Duration::from_millis(rng.random_range(200..=1500));
        let signal = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGKILL][rng.random_range(0..3)];
        let what = format!("seed {seed} (FEELBENCH_TEST_SEED), round {round}: {signal} after {after:?}, as root: {as_root}");
        std::thread::sleep(after);
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
        let code = exit_code_within(&mut child, Duration::from_secs(20));
        let expected = match signal {
            Signal::SIGKILL => None,
            _ => Some(0),
        };
        assert_eq!(code, expected, "{what}: exit code");
        assert_eq!(
            wait_for_no_tagged(&tag, Duration::from_secs(3)),
            Vec::<u32>::new(),
            "{what}: processes left"
        );
        assert_eq!(tracefs_mounts(), mounted_before, "{what}: tracefs mounts");
        assert_eq!(
            tracefs_instances(),
            instances_before,
            "{what}: tracefs instances"
        );
        assert!(
            TcpListener::bind(&addr).is_ok(),
            "{what}: {addr} is still taken"
        );
        if signal == Signal::SIGKILL {
            // What the killed watch could not let go of, the next one does.
            let held = delayacct_holds(pid);
            assert_eq!(
                held,
                usize::from(as_root),
                "{what}: holds on delay accounting"
            );
            let next = watch(
                &new_tag(),
                dir.path(),
                &["-t", "0.5", "--trace", ".", "--keep", "1", "-o", "w.json"],
            )
            .output()
            .unwrap();
            assert_eq!(next.status.code(), Some(0), "{what}: {}", stderr(&next));
            if as_root {
                assert!(
                    stderr(&next).contains(&format!("run {pid} (ended without cleaning up)")),
                    "{what}: {}",
                    stderr(&next)
                );
            }
        }
        assert_eq!(
            delayacct_holds(pid),
            0,
            "{what}: its hold on delay accounting"
        );
        assert_eq!(temporary_files(dir.path()), Vec::<String>::new(), "{what}");
        let traces = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".pftrace"))
            })
            .count();
        // A killed watch may have written a trace and not yet removed the
        // one it pushed out; the next keeps one.
        let most = match signal {
            Signal::SIGKILL => 3 + 1 + 1,
            _ => 3,
        };
        assert!(traces <= most, "{what}: {traces} traces kept");
    }
}

/// A port free on loopback now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Prometheus's answer to the instant query `promql`, through its HTTP API
/// on `port`: the `data.result` array, or `None` when it did not answer.
fn query(port: u16, promql: &str) -> Option<Vec<Value>> {
    let encoded = percent_encoding::utf8_percent_encode(promql, percent_encoding::NON_ALPHANUMERIC);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET /api/v1/query?query={encoded} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let body = text.split_once("\r\n\r\n")?.1;
    let answer: Value = serde_json::from_str(body).ok()?;
    (answer["status"] == "success").then(|| answer["data"]["result"].as_array().cloned())?
}

/// Ends `child` with SIGTERM when dropped (SIGKILL after 20 s), and reaps it.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.0.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(20);
        while matches!(self.0.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_real_prometheus_scrapes_watch_and_answers_the_readmes_queries() {
    if Command::new("prometheus")
        .arg("--version")
        .output()
        .is_err()
    {
        skip("prometheus is not installed (.ci/run installs Debian's as root)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (metrics_port, prometheus_port) = (free_port(), free_port());
    let listen = format!("127.0.0.1:{metrics_port}");
    let _watch = Reaped(
        watch(
            &new_tag(),
            dir.path(),
            &["-t", "60", "--listen", &listen, "--threshold", "frame=1us"],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap(),
    );
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: feelbench\n    static_configs:\n      - targets: ['{listen}']\n"),
    )
    .unwrap();
    let _prometheus = Reaped(
        Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{prometheus_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // The README's dashboard queries, each with what it must answer.
    let p99 = "histogram_quantile(0.99, sum by (le, canary) (rate(feelbench_watch_latency_seconds_bucket[1m])))";
    let by_cause = "sum by (cause) (rate(feelbench_watch_incidents_total[1m])) > 0";
    let recorder = "feelbench_watch_recorder_state == 1";
    // Names culprits only with the recorder (root): answered, maybe empty.
    let culprits = "topk(5, rate(feelbench_watch_culprit_incidents_total[1h]))";
    let deadline = Instant::now() + Duration::from_secs(40);
    let answered = loop {
        let answers: Vec<Option<Vec<Value>>> = [p99, by_cause, recorder]
            .iter()
            .map(|q| query(prometheus_port, q))
            .collect();
        let whole = answers
            .iter()
            .all(|a| a.as_ref().is_some_and(|r| !r.is_empty()));
        let p99_has_both = answers[0].as_ref().is_some_and(|r| r.len() == 2);
        if whole && p99_has_both {
            break answers;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus never answered the queries: {answers:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(query(prometheus_port, culprits).is_some(), "{culprits}");
    for series in answered[0].as_ref().unwrap() {
        let canary = series["metric"]["canary"].as_str().unwrap();
        assert!(["timer", "frame"].contains(&canary), "{series}");
        let value: f64 = series["value"][1].as_str().unwrap().parse().unwrap();
        assert!(value.is_finite() && value >= 0.0, "{series}");
    }
    let causes: Vec<&str> = answered[1]
        .as_ref()
        .unwrap()
        .iter()
        .map(|s| s["metric"]["cause"].as_str().unwrap())
        .collect();
    assert!(!causes.is_empty(), "every frame is an incident at 1 µs");
    let state = answered[2].as_ref().unwrap()[0]["metric"]["state"]
        .as_str()
        .unwrap()
        .to_string();
    let expected: &[&str] = match nix::unistd::geteuid().is_root() {
        true => &["recording", "stopped"],
        false => &["off"],
    };
    assert!(expected.contains(&state.as_str()), "{state}");
}
