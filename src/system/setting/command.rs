//! A setting's shell command (`sh -c`), run to its end: a non-zero exit is
//! an error with the end of what it said on stderr.

use super::SettingError;
use std::process::{Command, Stdio};

/// The most of a failing command's stderr an error quotes.
const QUOTED_BYTES: usize = 400;

/// Runs `command` with `sh -c`, for `setting`.
pub fn run(setting: &str, command: &str) -> Result<(), SettingError> {
    let failed = |what: String| SettingError::Command {
        setting: setting.to_string(),
        what: format!("`{command}` {what}"),
    };
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| failed(format!("could not start: {e}")))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stderr = stderr.trim();
    let from = stderr.len().saturating_sub(QUOTED_BYTES);
    let tail = &stderr[(from..=stderr.len())
        .find(|&i| stderr.is_char_boundary(i))
        .unwrap_or(0)..];
    Err(failed(match tail.is_empty() {
        true => format!("failed ({})", output.status),
        false => format!("failed ({}): {}", output.status, tail.replace('\n', " / ")),
    }))
}
