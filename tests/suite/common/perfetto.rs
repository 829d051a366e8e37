//! Decoding a trace feelbench wrote with Perfetto's own message
//! definitions (PyPI's `perfetto` package, by `tests/perfetto/trace_counts.py`),
//! shared by the tests of `run --trace` and `watch --trace`.

use super::{skip, stderr};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The checker that decodes a trace with Perfetto's protos.
const CHECKER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/perfetto/trace_counts.py"
);

/// What the checker counts in the trace at `path`; `None` (said as a
/// skip) without Python's `perfetto` package.
pub fn decoded(path: &Path) -> Option<Value> {
    let output = Command::new("python3").arg(CHECKER).arg(path).output();
    let output = match output {
        Ok(output) if output.status.code() == Some(3) => {
            skip(&format!(
                "Python's perfetto package is not installed (python3 -m pip install perfetto): {}",
                stderr(&output).trim()
            ));
            return None;
        }
        Ok(output) => output,
        Err(e) => {
            skip(&format!("python3 cannot be started: {e}"));
            return None;
        }
    };
    assert!(output.status.success(), "{}", stderr(&output));
    Some(serde_json::from_slice(&output.stdout).unwrap())
}

/// A count in the checker's answer (0 when missing).
pub fn count(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}
