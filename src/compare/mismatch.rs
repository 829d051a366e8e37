//! What differs between compared runs: the machine and calibration (a
//! warning, since figures from different machines are not comparable) and
//! the settings and kernel (shown, since they are usually the point).

use crate::document::methods;
use crate::document::schema::{described, RunDocument, SuiteRecord};
use crate::sim::fragment::FragmentSettings;
use crate::sim::io::IoSettings;
use crate::sim::job::JobSettings;
use crate::sim::micro::MicroMode;
use crate::sim::rtapp::settings::RtappSettings;
use crate::system::cpulist::CpuList;
use serde::Serialize;

/// How far calibrations may differ (as a fraction) before the comparison warns.
const CALIBRATION_TOLERANCE: f64 = 0.05;

/// A fact or setting with a different value in some run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub what: String,
    /// Every run's value, in run order.
    pub values: Vec<String>,
}

/// Named facts of a run, as text, for spotting differences.
type Fact = (&'static str, fn(&RunDocument) -> String);

/// Facts that make runs from different machines: a difference is a warning.
const MACHINE: &[Fact] = &[
    ("hostname", |r| r.system.hostname.clone()),
    ("CPU model", |r| {
        r.system
            .cpu_model
            .clone()
            .unwrap_or_else(|| "unknown".into())
    }),
    ("CPUs", |r| r.system.cpus.to_string()),
    ("memory (MiB)", |r| {
        r.system
            .mem_bytes
            .map_or("unknown".into(), |b| (b >> 20).to_string())
    }),
];

/// Settings and the kernel: what a comparison usually varies on purpose.
const SETTINGS: &[Fact] = &[
    ("kernel", |r| r.system.kernel_release.clone()),
    ("suite", |r| SuiteRecord::describe(r.suite.as_ref())),
    ("seconds per scenario", |r| {
        r.settings.duration_s.to_string()
    }),
    ("--precision", |r| {
        match (r.settings.precision_pct, r.settings.max_time_s) {
            (Some(pct), Some(max_s)) => format!("±{pct} (at most {max_s} s)"),
            _ => "none".into(),
        }
    }),
    ("probe policy", |r| {
        match r.settings.probe_sched.fifo_priority {
            Some(p) => format!("SCHED_FIFO {p}"),
            None => "SCHED_OTHER".into(),
        }
    }),
    ("probe nice", |r| r.settings.probe_sched.nice.to_string()),
    ("probe slice (ns)", |r| {
        r.settings
            .probe_sched
            .slice_ns
            .map_or("the kernel's".into(), |ns| ns.to_string())
    }),
    ("probe timer slack (ns)", |r| {
        r.settings.probe_sched.timer_slack_ns.to_string()
    }),
    ("load nice", |r| r.settings.load_nice.to_string()),
    ("burn processes", |r| r.settings.burn_processes.to_string()),
    // Default sizes follow free disk and available memory at the start of
    // a run, so they are compared to a tenth of a GiB.
    ("file size (GiB)", |r| gib(r.settings.file_bytes)),
    ("memory load (GiB)", |r| gib(r.settings.mem_bytes)),
    ("memory limit (MiB)", |r| {
        r.settings
            .mem_limit_bytes
            .map_or("none".into(), |b| (b >> 20).to_string())
    }),
    ("added swap (MiB)", |r| {
        r.settings
            .swap_bytes
            .map_or("none".into(), |b| (b >> 20).to_string())
    }),
    ("PM QoS (µs)", |r| pm_qos(r.settings.cpu_dma_latency_us)),
    ("probe CPUs", |r| {
        any_or_list(r.settings.probe_cpus.as_ref())
    }),
    ("probe session", |r| r.settings.probe_session_words()),
    ("load CPUs", |r| any_or_list(r.settings.load_cpus.as_ref())),
    ("load CPU weight", |r| {
        r.settings
            .load_cpu_weight
            .map_or("none".into(), |w| w.to_string())
    }),
    ("job", |r| {
        described(r.settings.job.as_ref(), JobSettings::describe)
    }),
    ("fragment player", |r| {
        described(r.settings.fragment.as_ref(), FragmentSettings::describe)
    }),
    ("file I/O", |r| {
        described(r.settings.io.as_ref(), IoSettings::describe)
    }),
    ("micro mode", |r| {
        described(r.settings.micro.as_ref(), MicroMode::describe)
    }),
    ("rt-app workloads", |r| {
        described(r.settings.rtapp.as_ref(), RtappSettings::describe)
    }),
    ("late events split", |r| r.settings.late_split_words()),
];

/// The PM QoS limit a run held, or `not held`.
fn pm_qos(limit_us: Option<u32>) -> String {
    limit_us.map_or("not held".into(), |us| us.to_string())
}

/// A CPU list, or `any` when the run left the choice to the scheduler.
fn any_or_list(cpus: Option<&CpuList>) -> String {
    cpus.map_or("any".into(), CpuList::to_string)
}

fn gib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / f64::from(1u32 << 30))
}

fn differing(runs: &[RunDocument], facts: &[Fact]) -> Vec<Difference> {
    facts
        .iter()
        .filter_map(|(what, get)| {
            let values: Vec<String> = runs.iter().map(get).collect();
            values.iter().any(|v| v != &values[0]).then(|| Difference {
                what: what.to_string(),
                values,
            })
        })
        .collect()
}

/// Settings and kernel releases that differ between the runs, then the
/// method versions of the probes and loads they all used (`method of probe
/// audio`; a run of feelbench 0.1.0 has version 0 of every one).
pub fn differences(runs: &[RunDocument]) -> Vec<Difference> {
    let mut found = differing(runs, SETTINGS);
    let runs: Vec<&RunDocument> = runs.iter().collect();
    found.extend(methods::differences(&runs).into_iter().map(|d| Difference {
        what: format!("method of {}", d.what()),
        values: d.versions.iter().map(u32::to_string).collect(),
    }));
    found
}

/// Warnings about runs that come from different machines or calibrations.
pub fn warnings(runs: &[RunDocument]) -> Vec<String> {
    let mut warnings: Vec<String> = differing(runs, MACHINE)
        .into_iter()
        .map(|d| {
            format!(
                "the runs come from different machines: {} {}",
                d.what,
                d.values.join(" | ")
            )
        })
        .collect();
    let base = runs[0].settings.loops_per_ms;
    if runs
        .iter()
        .any(|r| (r.settings.loops_per_ms / base - 1.0).abs() > CALIBRATION_TOLERANCE)
    {
        let values: Vec<String> = runs
            .iter()
            .map(|r| format!("{:.0}", r.settings.loops_per_ms))
            .collect();
        warnings.push(format!(
            "the calibrations differ by more than {:.0} % (loops_per_ms {}): the probes' CPU work per frame is not the same",
            CALIBRATION_TOLERANCE * 100.0,
            values.join(" | ")
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::fixture;

    #[test]
    fn identical_runs_differ_in_nothing() {
        let runs = [fixture::run(), fixture::run()];
        assert!(differences(&runs).is_empty());
        assert!(warnings(&runs).is_empty());
    }

    #[test]
    fn settings_differences_are_listed_with_every_value() {
        let mut other = fixture::run();
        other.settings.load_nice = 19;
        other.system.kernel_release = "6.19.0".into();
        let d = differences(&[fixture::run(), other]);
        let what: Vec<&str> = d.iter().map(|d| d.what.as_str()).collect();
        assert_eq!(what, ["kernel", "load nice"]);
        assert_eq!(d[1].values, ["0", "19"]);
    }

    #[test]
    fn the_probes_timer_slack_is_a_difference() {
        let mut slack = fixture::run();
        slack.settings.probe_sched.timer_slack_ns = 50_000;
        let d = differences(&[fixture::run(), slack]);
        let what: Vec<&str> = d.iter().map(|d| d.what.as_str()).collect();
        assert_eq!(what, ["probe timer slack (ns)"]);
        assert_eq!(d[0].values, ["1", "50000"]);
    }

    #[test]
    fn a_pm_qos_limit_is_a_difference() {
        let mut held = fixture::run();
        held.settings.cpu_dma_latency_us = Some(0);
        let d = differences(&[fixture::run(), held]);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].what, "PM QoS (µs)");
        assert_eq!(d[0].values, ["not held", "0"]);
    }

    #[test]
    fn runs_without_the_late_split_differ_from_runs_with_it() {
        let mut off = fixture::run();
        off.settings.late_split = false;
        let d = differences(&[fixture::run(), off]);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].what, "late events split");
        assert_eq!(d[0].values, ["on", "off"]);
    }

    #[test]
    fn a_probes_other_method_version_is_a_difference() {
        let mut other = fixture::run();
        other
            .methods
            .as_mut()
            .unwrap()
            .probes
            .insert("audio".into(), 2);
        let d = differences(&[fixture::run(), other]);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].what, "method of probe audio");
        assert_eq!(d[0].values, ["1", "2"]);
        let mut old = fixture::run();
        old.methods = None;
        let d = differences(&[old, fixture::run()]);
        assert!(
            d.iter()
                .any(|d| d.what == "method of load burn" && d.values == ["0", "1"]),
            "{d:?}"
        );
    }

    #[test]
    fn a_precision_goal_is_a_listed_setting() {
        let mut other = fixture::run();
        other.settings.precision_pct = Some(5.0);
        other.settings.max_time_s = Some(30.0);
        let d = differences(&[fixture::run(), other]);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].values, ["none", "±5 (at most 30 s)"]);
    }

    #[test]
    fn placement_differences_are_listed() {
        let mut other = fixture::run();
        other.settings.probe_cpus = "0".parse().ok();
        other.settings.load_cpus = "1".parse().ok();
        other.settings.load_cpu_weight = Some(10);
        let d = differences(&[fixture::run(), other]);
        let rows: Vec<(&str, &[String])> = d
            .iter()
            .map(|d| (d.what.as_str(), d.values.as_slice()))
            .collect();
        assert_eq!(
            rows,
            [
                ("probe CPUs", &["any".to_string(), "0".to_string()][..]),
                ("load CPUs", &["any".to_string(), "1".to_string()][..]),
                (
                    "load CPU weight",
                    &["none".to_string(), "10".to_string()][..]
                ),
            ]
        );
    }

    #[test]
    fn a_job_of_another_size_or_command_is_listed() {
        let mut other = fixture::run();
        other
            .settings
            .job
            .get_or_insert_with(Default::default)
            .command = Some("make -j4".into());
        let d = differences(&[fixture::run(), other]);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].what, "job");
        assert_eq!(d[0].values[1], "`make -j4`, at most 3600 s");
    }

    #[test]
    fn another_micro_mode_is_listed() {
        let mut runs = [fixture::run(), fixture::run()];
        runs[0].settings.micro = Some(MicroMode::Paced);
        runs[1].settings.micro = Some(MicroMode::Lmbench);
        let d = differences(&runs);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            (d[0].what.as_str(), &d[0].values[..]),
            (
                "micro mode",
                &["paced".to_string(), "lmbench".to_string()][..]
            )
        );
    }

    #[test]
    fn another_fragment_player_is_listed() {
        let mut other = fixture::run();
        other
            .settings
            .fragment
            .get_or_insert_with(Default::default)
            .fragment_bytes = 128;
        let d = differences(&[fixture::run(), other]);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].what, "fragment player");
        assert_eq!(d[0].values[1], "3 x 128 bytes at 44100 Hz, 10 % CPU");
    }

    #[test]
    fn other_machines_and_calibrations_are_warned_about() {
        let mut other = fixture::run();
        other.system.hostname = "elsewhere".into();
        other.settings.loops_per_ms *= 1.2;
        let w = warnings(&[fixture::run(), other]);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("hostname testhost | elsewhere"), "{}", w[0]);
        assert!(w[1].contains("calibrations differ"), "{}", w[1]);
    }
}
