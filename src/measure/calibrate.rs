//! Calibration: how many work loops fit in one millisecond of CPU time on this
//! machine, measured with the thread CPU clock, and remembered in a cache file
//! keyed by the machine's identity.

use super::clock::thread_cpu_ns;
use super::work::burn_loops;
use crate::system::atomic::write_atomically;
use crate::system::SystemInfo;
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// CPU time of one calibration round.
const ROUND_CPU_NS: u64 = 10_000_000;
/// Rounds measured; the median round gives the result.
const ROUNDS: usize = 41;
/// Loops used for the first rough estimate (also warms the CPU up).
const PROBE_LOOPS: u64 = 2_000_000;

/// The outcome of one calibration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Median work loops per millisecond of thread CPU time.
    pub loops_per_ms: f64,
    /// Interquartile range of the rounds, as % of the median.
    pub spread_pct: f64,
    /// Wall time the calibration took, in ms.
    pub took_ms: u64,
}

/// Where the `loops_per_ms` of a run came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum CalibrationSource {
    /// Given on the command line (`-l`).
    Forced,
    /// Read from the cache file.
    Cached { path: PathBuf },
    /// Measured now, and stored in `path` unless `not_stored` says why not.
    Measured {
        path: Option<PathBuf>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        not_stored: Option<String>,
        calibration: Calibration,
    },
}

/// The machine identity a cached calibration is valid for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineIdentity {
    pub cpu_model: Option<String>,
    pub cpus: usize,
    pub kernel_release: String,
    pub feelbench_version: String,
    /// `release` or `debug`: the work loop runs at very different speeds.
    pub build: String,
}

impl MachineIdentity {
    /// The identity of the machine `system` describes, for this build.
    pub fn of(system: &SystemInfo) -> Self {
        Self {
            cpu_model: system.cpu_model.clone(),
            cpus: system.cpus,
            kernel_release: system.kernel_release.clone(),
            feelbench_version: env!("CARGO_PKG_VERSION").to_string(),
            build: if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
            .to_string(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct CacheFile {
    identity: MachineIdentity,
    calibration: Calibration,
}

/// Measures `loops_per_ms` on the calling thread: a rough estimate, then
/// `ROUNDS` rounds of `ROUND_CPU_NS` each (about 0.4 s of CPU in all).
pub fn measure() -> Calibration {
    let started = Instant::now();
    let rough_per_ms = rate_per_ms(PROBE_LOOPS).max(1.0);
    let round_loops = (rough_per_ms * (ROUND_CPU_NS as f64 / 1e6)) as u64;
    let mut rates: Vec<f64> = (0..ROUNDS).map(|_| rate_per_ms(round_loops)).collect();
    rates.sort_by(f64::total_cmp);
    let median = rates[ROUNDS / 2];
    let iqr = rates[ROUNDS * 3 / 4] - rates[ROUNDS / 4];
    Calibration {
        loops_per_ms: median,
        spread_pct: 100.0 * iqr / median,
        took_ms: started.elapsed().as_millis() as u64,
    }
}

fn rate_per_ms(loops: u64) -> f64 {
    let before = thread_cpu_ns();
    burn_loops(loops);
    let used_ns = (thread_cpu_ns() - before).max(1);
    loops as f64 * 1e6 / used_ns as f64
}

/// feelbench's cache directory: `$XDG_CACHE_HOME/feelbench`, else
/// `~/.cache/feelbench`; `None` when neither is known.
pub fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("feelbench"))
}

/// The default cache file: `calibration.json` in [`cache_dir`].
pub fn default_cache_path() -> Option<PathBuf> {
    cache_dir().map(|d| d.join("calibration.json"))
}

/// The cached calibration at `path`, if it exists and was made on a machine
/// with the same `identity`.
pub fn load_cached(path: &Path, identity: &MachineIdentity) -> Option<Calibration> {
    let text = std::fs::read_to_string(path).ok()?;
    let cache: CacheFile = serde_json::from_str(&text).ok()?;
    (cache.identity == *identity && cache.calibration.loops_per_ms > 0.0)
        .then_some(cache.calibration)
}

/// Stores `calibration` for `identity` at `path`, creating its directory.
pub fn store(
    path: &Path,
    identity: &MachineIdentity,
    calibration: &Calibration,
) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let cache = CacheFile {
        identity: identity.clone(),
        calibration: *calibration,
    };
    let text = serde_json::to_string_pretty(&cache)?;
    write_atomically(path, text.as_bytes())?;
    Ok(())
}

/// The `loops_per_ms` to use: forced, else cached (unless `recalibrate`),
/// else measured now (after calling `announce`) and cached. A cache that
/// cannot be written is reported in the source, not an error.
pub fn obtain(
    forced: Option<f64>,
    recalibrate: bool,
    cache_path: Option<&Path>,
    identity: &MachineIdentity,
    announce: impl FnOnce(),
) -> (f64, CalibrationSource) {
    if let Some(loops_per_ms) = forced {
        return (loops_per_ms, CalibrationSource::Forced);
    }
    if let (Some(path), false) = (cache_path, recalibrate) {
        if let Some(cached) = load_cached(path, identity) {
            let path = path.to_path_buf();
            return (cached.loops_per_ms, CalibrationSource::Cached { path });
        }
    }
    announce();
    let calibration = measure();
    let stored = cache_path.map(|path| {
        store(path, identity, &calibration)
            .map(|()| path.to_path_buf())
            .map_err(|e| format!("{e:#}"))
    });
    let source = CalibrationSource::Measured {
        path: stored.clone().and_then(Result::ok),
        not_stored: stored.and_then(Result::err),
        calibration,
    };
    (calibration.loops_per_ms, source)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity() -> MachineIdentity {
        MachineIdentity {
            cpu_model: Some("Test CPU".into()),
            cpus: 2,
            kernel_release: "6.18.0".into(),
            feelbench_version: "0.1.0".into(),
            build: "release".into(),
        }
    }

    #[test]
    fn cache_is_reused_only_for_the_same_machine() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/calibration.json");
        let calibration = Calibration {
            loops_per_ms: 123_456.0,
            spread_pct: 0.5,
            took_ms: 900,
        };
        store(&path, &identity(), &calibration).unwrap();
        assert_eq!(load_cached(&path, &identity()), Some(calibration));
        let other = MachineIdentity {
            kernel_release: "6.19.0".into(),
            ..identity()
        };
        assert_eq!(load_cached(&path, &other), None);
    }

    #[test]
    fn forced_value_skips_measuring() {
        let (value, source) = obtain(Some(42.0), false, None, &identity(), || panic!("measured"));
        assert_eq!(value, 42.0);
        assert_eq!(source, CalibrationSource::Forced);
    }

    #[test]
    fn an_unwritable_cache_is_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "").unwrap();
        let path = blocker.join("calibration.json");
        let mut announced = false;
        let (value, source) = obtain(None, false, Some(&path), &identity(), || announced = true);
        assert!(announced && value > 0.0);
        match source {
            CalibrationSource::Measured {
                path, not_stored, ..
            } => {
                assert_eq!(path, None);
                assert!(not_stored.is_some());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn corrupt_cache_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("calibration.json");
        std::fs::write(&path, "{ not json").unwrap();
        assert_eq!(load_cached(&path, &identity()), None);
    }
}
