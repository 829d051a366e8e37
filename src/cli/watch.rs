//! `feelbench watch`'s options, turned into [`WatchSettings`]: canaries and
//! thresholds checked by name, the address to listen on bound at once (so
//! an address in use is bad input before anything starts).

use super::store::StoreArgs;
use super::values::{check_online, parse_cpu_list, parse_duration, seconds_to_ns};
use crate::commands::watch::{self, Bound, FlightBudget, WatchSettings, DEFAULT_CANARIES};
use crate::exit::UsageError;
use crate::store::StoreLocation;
use crate::system::cpulist::CpuList;
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Options of `feelbench watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Watch for SECS seconds [default: until SIGINT, SIGTERM or SIGHUP].
    #[arg(short = 't', long = "duration", value_name = "SECS")]
    duration_s: Option<f64>,
    /// The canaries, comma-separated: timer, frame, x, audio, video,
    /// fragment;
    /// custom:PCT@INTERVAL (PCT % of a CPU every INTERVAL, as the custom
    /// probe: custom:30@2ms); rtapp:FILE or rtapp:NAME (a shipped workload,
    /// see `feelbench rtapp list`): each task of the rt-app workload that
    /// waits on a timer is a canary, rtapp:NAME/TASK, its events the work
    /// after each activation.
    #[arg(long = "canary", value_name = "LIST", value_delimiter = ',', default_values_t = DEFAULT_CANARIES.map(String::from))]
    canaries: Vec<String>,
    /// An event later than its canary's threshold is an incident, as
    /// CANARY=DURATION, comma-separated (rtapp:NAME=DURATION sets each of
    /// the workload's tasks) [default: timer=2ms, frame=8ms, x=10ms,
    /// audio=10ms, video=8ms, fragment=2.9ms; a custom canary or an rt-app
    /// task: half its (shortest timer) period, at least 1ms].
    #[arg(long = "threshold", value_name = "LIST", value_delimiter = ',')]
    thresholds: Vec<String>,
    /// Keep the canaries on these CPUs (0,2-3) [default: wherever the
    /// scheduler puts them].
    #[arg(long = "cpus", value_name = "LIST")]
    cpus: Option<String>,
    /// Serve OpenMetrics on ADDR (127.0.0.1:9464), at /metrics.
    #[arg(long = "listen", value_name = "ADDR")]
    listen: Option<String>,
    /// Write the summary and the worst incidents, whole, as JSON to FILE
    /// when the watch ends.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// How many of the worst incidents --output and --trace keep.
    #[arg(long = "keep", value_name = "N", default_value_t = 20)]
    keep: usize,
    /// Write a Perfetto trace of each incident among the --keep worst into
    /// the directory DIR (the second before its event to just after it:
    /// the late event with its cause and parts beside the time it was
    /// allowed, with the recorder, as root, every task's scheduling and a
    /// flow to what ran instead; the telemetry as counters); a trace whose
    /// incident a worse one pushes out is removed.
    #[arg(long = "trace", value_name = "DIR")]
    trace: Option<PathBuf>,
    /// Culprit cgroups the metrics label by name (the first seen); the
    /// others count as `other`.
    #[arg(long = "top-cgroups", value_name = "N", default_value_t = 10)]
    top_cgroups: usize,
    /// Do not run the scheduler flight recorder, even as root.
    #[arg(long = "no-recorder")]
    no_recorder: bool,
    /// The share of one CPU the flight recorder may cost, in percent; above
    /// it, it stops itself and starts again after a cool-down (60 s, twice
    /// as long after each stop, up to 10 min).
    #[arg(
        long = "recorder-budget",
        value_name = "PERCENT",
        default_value_t = 1.0
    )]
    recorder_budget_pct: f64,
    /// The recorder's first cool-down, s; its cost is judged after the
    /// shorter of 10 s and this (for tests).
    #[arg(
        long = "recorder-cooldown",
        value_name = "SECS",
        default_value_t = 60.0,
        hide = true
    )]
    recorder_cooldown_s: f64,
    /// Keep no minutes nor incidents in the store.
    #[arg(long = "no-store")]
    no_store: bool,
    #[command(flatten)]
    store: StoreArgs,
    /// Work loops per millisecond for the frames' work [default: calibrated
    /// once per machine].
    #[arg(short = 'l', long = "loops-per-ms", value_name = "N")]
    loops_per_ms: Option<f64>,
}

impl WatchArgs {
    /// The settings, every option checked.
    pub fn settings(self, online: Option<&CpuList>) -> Result<WatchSettings, UsageError> {
        if self.trace.is_some() && self.keep == 0 {
            return Err(UsageError::new(
                "--trace writes the traces of the --keep worst incidents: --keep 0 keeps none",
            ));
        }
        let thresholds = self
            .thresholds
            .iter()
            .map(|t| threshold(t))
            .collect::<Result<Vec<_>, _>>()?;
        let canaries = watch::canary_settings(&self.canaries, &thresholds)?;
        let duration_ns = self
            .duration_s
            .map(|s| seconds_to_ns("-t/--duration", s, 0.5))
            .transpose()?;
        let cpus = self
            .cpus
            .map(|text| {
                parse_cpu_list(&text).map_err(|e| UsageError::new(format!("--cpus {text:?}: {e}")))
            })
            .transpose()?;
        let cpus = check_online("--cpus", cpus, online)?;
        if let Some(n) = self.loops_per_ms.filter(|n| !(n.is_finite() && *n > 0.0)) {
            return Err(UsageError::new(format!(
                "-l/--loops-per-ms takes a number above 0, not {n}"
            )));
        }
        let store = match (self.no_store, self.store.store) {
            (true, _) => None,
            (false, Some(location)) => Some(location),
            // Without a default store (no HOME, as a service may run), the
            // minutes are not kept; the watch says so once and goes on.
            (false, None) => match StoreLocation::default_location() {
                Ok(Some(location)) => Some(location),
                _ => {
                    say!("watch: no default store (set HOME or XDG_DATA_HOME, or give --store): the minutes are not kept");
                    None
                }
            },
        };
        let recorder_budget = recorder_budget(self.recorder_budget_pct, self.recorder_cooldown_s)?;
        let listen = self.listen.map(|addr| listen(&addr)).transpose()?;
        Ok(WatchSettings {
            canaries,
            duration_ns,
            cpus,
            listen,
            keep: self.keep,
            output: self.output,
            trace: self.trace,
            top_cgroups: self.top_cgroups,
            no_recorder: self.no_recorder,
            recorder_budget,
            loops_per_ms: self.loops_per_ms,
            store,
        })
    }
}

/// `--recorder-budget PERCENT` and `--recorder-cooldown SECS`, checked.
fn recorder_budget(pct: f64, cooldown_s: f64) -> Result<FlightBudget, UsageError> {
    if !(pct.is_finite() && pct > 0.0 && pct <= 100.0) {
        return Err(UsageError::new(format!(
            "--recorder-budget takes a percentage of one CPU above 0 and at most 100, not {pct}"
        )));
    }
    let cooldown_ns = seconds_to_ns("--recorder-cooldown", cooldown_s, 0.5)?;
    Ok(FlightBudget {
        cpu_share: pct / 100.0,
        cooldown: std::time::Duration::from_nanos(cooldown_ns),
    })
}

/// One `CANARY=DURATION` of `--threshold` (the canary is checked against
/// those the watch runs by `watch::canary_settings`).
fn threshold(text: &str) -> Result<(String, u64), UsageError> {
    let (name, duration) = text.split_once('=').ok_or_else(|| {
        UsageError::new(format!(
            "--threshold takes CANARY=DURATION (timer=2ms), not {text:?}"
        ))
    })?;
    let ns = parse_duration(duration)
        .map_err(|e| UsageError::new(format!("--threshold {text}: {e}")))?;
    Ok((name.to_string(), ns))
}

/// `--listen ADDR`, parsed and bound.
fn listen(addr: &str) -> Result<Bound, UsageError> {
    let parsed: SocketAddr = addr.parse().map_err(|_| {
        UsageError::new(format!(
            "--listen takes an address and port such as 127.0.0.1:9464 or [::1]:9464, not {addr:?}"
        ))
    })?;
    Bound::bind(parsed).map_err(UsageError::input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_name_a_canary_and_a_duration() {
        assert_eq!(threshold("timer=3ms").unwrap(), ("timer".into(), 3_000_000));
        for bad in ["timer", "timer=fast", "timer=0ms"] {
            let e = threshold(bad).unwrap_err().to_string();
            assert!(
                !e.contains('\n') && e.starts_with("--threshold"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_listen_address_must_parse() {
        let e = listen("localhost").err().unwrap().to_string();
        assert!(e.contains("such as 127.0.0.1:9464"), "{e}");
        assert!(listen("127.0.0.1:0").is_ok());
    }
}
