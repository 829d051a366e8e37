//! Which job a run times and repeats, and how long it may take
//! (`--job`, `--job-size`, `--job-timeout`): fixed for the whole run,
//! carried to the workers and recorded in the run document.

use super::plan::JobPlan;
use serde::{Deserialize, Serialize};

/// `--job-timeout` when not given: an hour, room for a real kernel build
/// on a slow machine under load.
const DEFAULT_TIMEOUT_S: f64 = 3600.0;
/// How long a `--job` command is taken to last, for the progress bar
/// only: nothing is known about it before it runs.
const COMMAND_GUESS_NS: u64 = 60_000_000_000;

/// Which job runs and how long it may take, for the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSettings {
    /// `--job-size`: the built-in job's size, 1 for the default (about
    /// 20 s on idle CPUs; see `plan`).
    pub size: f64,
    /// `--job`: the command the `job` probe times instead of the built-in
    /// job (`cacherun` always runs the built-in job: a command cannot be
    /// assumed to survive running twice at once, as two `make`s in one
    /// tree would not).
    pub command: Option<String>,
    /// `--job-timeout`: the longest a job may take; it is killed then.
    pub timeout_s: f64,
}

impl Default for JobSettings {
    fn default() -> Self {
        Self {
            size: 1.0,
            command: None,
            timeout_s: DEFAULT_TIMEOUT_S,
        }
    }
}

impl JobSettings {
    /// The built-in job of a run on `cpus` CPUs.
    pub fn plan(&self, cpus: usize) -> JobPlan {
        JobPlan::new(cpus, self.size)
    }

    /// How long the job is expected to take on `cpus` idle CPUs (a guess
    /// for a command), at most its cap.
    pub fn expected_ns(&self, cpus: usize) -> u64 {
        let expected_ns = match self.command {
            Some(_) => COMMAND_GUESS_NS,
            None => self.plan(cpus).expected_ns(cpus),
        };
        expected_ns.min(self.cap_ns())
    }

    /// The longest a job may take.
    pub fn cap_ns(&self) -> u64 {
        (self.timeout_s * 1e9) as u64
    }

    /// The settings in words (`built-in, size 1, at most 3600 s`), for
    /// listing differences between runs.
    pub fn describe(&self) -> String {
        let job = match &self.command {
            Some(command) => format!("`{command}`"),
            None => format!("built-in, size {}", self.size),
        };
        format!("{job}, at most {} s", self.timeout_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_give_the_plan_expected_time_and_cap() {
        let settings = JobSettings::default();
        let expected_s = settings.expected_ns(2) as f64 / 1e9;
        assert!((15.0..25.0).contains(&expected_s), "{expected_s}");
        assert_eq!(settings.cap_ns(), 3_600_000_000_000);
        let command = JobSettings {
            command: Some("make".into()),
            timeout_s: 10.0,
            ..JobSettings::default()
        };
        assert_eq!(command.expected_ns(2), 10_000_000_000, "at most the cap");
        assert_eq!(settings.describe(), "built-in, size 1, at most 3600 s");
        assert_eq!(command.describe(), "`make`, at most 10 s");
    }
}
