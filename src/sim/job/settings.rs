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

/// Where the built-in job's inputs are when the job starts
/// (`--job-cache`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobCache {
    /// In the page cache, as written before the window: a compile run
    /// again straight after another (contest's `cacherun`).
    #[default]
    Warm,
    /// Written back and dropped from the page cache before the window, so
    /// the job reads them from the device (contest's first, no-load
    /// compile, on a tree not read since boot).
    Cold,
}

impl JobCache {
    /// Every state.
    pub const ALL: [JobCache; 2] = [JobCache::Warm, JobCache::Cold];

    /// The state called `name` on the command line.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|cache| cache.name() == name)
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            JobCache::Warm => "warm",
            JobCache::Cold => "cold",
        }
    }
}

/// Which job runs and how long it may take, for the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSettings {
    /// `--job-size`: the built-in job's size, 1 for the default (about
    /// 20 s on idle CPUs; see `plan`).
    pub size: f64,
    /// `--job`: the command the `job` probe times instead of the built-in
    /// job (`jobload` always runs the built-in job: a command cannot be
    /// assumed to survive running twice at once, as two `make`s in one
    /// tree would not).
    pub command: Option<String>,
    /// `--job-timeout`: the longest a job may take; it is killed then.
    pub timeout_s: f64,
    /// `--job-cache`: where the built-in job's inputs are when it starts
    /// (warm in runs older than this field); a load may ask for them warm
    /// whatever this says (`cacherun`).
    #[serde(default)]
    pub cache: JobCache,
}

impl Default for JobSettings {
    fn default() -> Self {
        Self {
            size: 1.0,
            command: None,
            timeout_s: DEFAULT_TIMEOUT_S,
            cache: JobCache::Warm,
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

    /// The settings in words (`built-in, size 1, inputs warm, at most
    /// 3600 s`), for listing differences between runs.
    pub fn describe(&self) -> String {
        let job = match &self.command {
            Some(command) => format!("`{command}`"),
            None => format!("built-in, size {}, inputs {}", self.size, self.cache.name()),
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
        assert_eq!(
            settings.describe(),
            "built-in, size 1, inputs warm, at most 3600 s"
        );
        assert_eq!(command.describe(), "`make`, at most 10 s");
    }

    #[test]
    fn cache_states_go_by_their_names_and_old_runs_read_warm() {
        for cache in JobCache::ALL {
            assert_eq!(JobCache::named(cache.name()), Some(cache));
        }
        assert_eq!(JobCache::named("hot"), None);
        let old: JobSettings =
            serde_json::from_str(r#"{"size":1.0,"command":null,"timeout_s":3600.0}"#).unwrap();
        assert_eq!(old, JobSettings::default());
        let cold = JobSettings {
            cache: JobCache::Cold,
            ..JobSettings::default()
        };
        assert!(serde_json::to_string(&cold)
            .unwrap()
            .contains(r#""cache":"cold""#));
        assert_eq!(
            cold.describe(),
            "built-in, size 1, inputs cold, at most 3600 s"
        );
    }
}
