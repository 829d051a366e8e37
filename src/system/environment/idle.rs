//! CPU idle states: the cpuidle driver and governor, and CPU 0's idle
//! states (name, exit latency, disabled or not), shallowest first. A kernel
//! without cpuidle, or a CPU without idle states, gives absent values.

use super::reader::Reader;
use super::Environment;
use crate::system::procfs::ProcError;
use serde::{Deserialize, Serialize};

/// Where cpuidle's global settings are, below /sys.
const CPUIDLE: &str = "devices/system/cpu/cpuidle";
/// Where CPU 0's idle states are, below /sys.
const CPU0_STATES: &str = "devices/system/cpu/cpu0/cpuidle";

/// One idle state of a CPU, as cpuidle lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdleState {
    /// The state's name (`POLL`, `C1E`, `haltpoll idle`).
    pub name: String,
    /// Time to leave the state, in µs (the driver's figure).
    pub exit_latency_us: u64,
    /// Whether the state is turned off (its `disable` file is not 0).
    pub disabled: bool,
}

/// Fills the idle fields of `env`.
pub(super) fn read_idle(r: &mut Reader, env: &mut Environment) {
    env.cpuidle_driver = r.sys(&format!("{CPUIDLE}/current_driver"));
    // current_governor is writable (and listed) only on kernels that let
    // the governor be switched; the others have current_governor_ro.
    env.cpuidle_governor = r
        .sys(&format!("{CPUIDLE}/current_governor"))
        .or_else(|| r.sys(&format!("{CPUIDLE}/current_governor_ro")));
    env.idle_states = read_states(r);
}

/// CPU 0's idle states in their order; `None` when it has no cpuidle
/// directory or a state's files are missing or malformed (noted).
fn read_states(r: &mut Reader) -> Option<Vec<IdleState>> {
    let dir = r.roots.sys_root.join(CPU0_STATES);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(error) => {
            let read = ProcError::Read { path: dir, error };
            r.unreadable.push(read.to_string());
            return None;
        }
    };
    let mut numbers: Vec<u32> = entries
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_prefix("state")?
                .parse()
                .ok()
        })
        .collect();
    numbers.sort_unstable();
    numbers
        .into_iter()
        .map(|n| read_state(r, &format!("{CPU0_STATES}/state{n}")))
        .collect()
}

/// The idle state in the directory `rel` (below /sys).
fn read_state(r: &mut Reader, rel: &str) -> Option<IdleState> {
    Some(IdleState {
        name: required(r, &format!("{rel}/name"))?,
        exit_latency_us: required_number(r, &format!("{rel}/latency"))?,
        disabled: required_number::<u64>(r, &format!("{rel}/disable"))? != 0,
    })
}

/// The trimmed text of the /sys file `rel`, which an idle state must have;
/// `None` (noted) when it is missing or unreadable.
fn required(r: &mut Reader, rel: &str) -> Option<String> {
    let noted = r.unreadable.len();
    let text = r.sys(rel);
    if text.is_none() && r.unreadable.len() == noted {
        let path = r.roots.sys_root.join(rel);
        let error = std::io::Error::new(std::io::ErrorKind::NotFound, "an idle state lacks it");
        r.unreadable
            .push(ProcError::Read { path, error }.to_string());
    }
    text
}

/// The number in the /sys file `rel`, which an idle state must have;
/// `None` (noted) when it is missing or holds something else.
fn required_number<T: std::str::FromStr>(r: &mut Reader, rel: &str) -> Option<T> {
    let text = required(r, rel)?;
    let parsed = text.parse().ok();
    if parsed.is_none() {
        let path = r.roots.sys_root.join(rel);
        r.unreadable
            .push(ProcError::Parse { path, line: text }.to_string());
    }
    parsed
}

/// The states as one compact text: `name:exit latency µs`, with `:off`
/// after a disabled one, comma-separated (`POLL:0,C1:2,C6:85:off`); `none`
/// for a CPU without idle states.
pub(super) fn compact(states: &[IdleState]) -> String {
    if states.is_empty() {
        return "none".into();
    }
    states
        .iter()
        .map(|s| {
            let off = if s.disabled { ":off" } else { "" };
            format!("{}:{}{off}", s.name, s.exit_latency_us)
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(name: &str, exit_latency_us: u64, disabled: bool) -> IdleState {
        IdleState {
            name: name.into(),
            exit_latency_us,
            disabled,
        }
    }

    #[test]
    fn states_are_written_compactly_with_the_disabled_marked() {
        let states = [state("POLL", 0, false), state("C6", 85, true)];
        assert_eq!(compact(&states), "POLL:0,C6:85:off");
        assert_eq!(compact(&[]), "none");
    }
}
