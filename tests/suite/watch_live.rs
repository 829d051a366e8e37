//! `feelbench watch` on a terminal (a pseudo-terminal made by script(1)):
//! its live view takes the alternate screen and draws each canary's row,
//! `q` ends the watch before its `-t`, and the terminal is given back before
//! the summary is printed on it.

use crate::common::{feelbench_on_a_terminal, new_tag, wait_for_no_tagged, LOOPS_PER_MS};
use std::io::{Read as _, Write as _};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The alternate screen's start and end (what ratatui's terminal takes and
/// gives back).
const ENTER: &str = "\x1b[?1049h";
const LEAVE: &str = "\x1b[?1049l";

#[test]
fn the_live_view_draws_each_canary_and_q_ends_the_watch() {
    let dir = tempfile::tempdir().unwrap();
    let tag = new_tag();
    let args = [
        "watch",
        "-l",
        LOOPS_PER_MS,
        "-t",
        "60",
        "--no-store",
        "--no-recorder",
    ];
    let Some(mut command) = feelbench_on_a_terminal(&tag, dir.path(), &args) else {
        return;
    };
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    child.stdin.as_mut().unwrap().write_all(b"q").unwrap();
    let mut shown = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut shown)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{shown}");
    assert!(
        started.elapsed() < Duration::from_secs(45),
        "q did not end the 60 s watch"
    );
    let (Some(entered), Some(left)) = (shown.find(ENTER), shown.rfind(LEAVE)) else {
        panic!("no alternate screen taken and given back: {shown:?}");
    };
    assert!(entered < left, "{shown:?}");
    let view = words(&shown[entered..left]);
    assert!(view.contains("feelbench watch: the last"), "{view:?}");
    for canary in ["timer", "frame"] {
        assert!(view.contains(canary), "{canary}: {view:?}");
    }
    // The summary comes after the terminal is given back, as plain lines.
    let after = &shown[left..];
    assert!(
        after.contains("watched ") && after.contains(" events "),
        "{after:?}"
    );
    assert!(wait_for_no_tagged(&tag, Duration::from_secs(5)).is_empty());
}

/// What the terminal was sent, its control sequences (ratatui moves the
/// cursor between words) made spaces and runs of spaces one.
fn words(sent: &str) -> String {
    let mut text = String::new();
    let mut chars = sent.chars();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                // A control sequence: ESC [ parameters, then a letter.
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
                text.push(' ');
            }
            c => text.push(c),
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
