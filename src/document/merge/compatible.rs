//! What runs must share to be merged: the machine, and every setting that
//! changes what is measured. Sizes that the run derives from the machine's
//! state at its start (the calibration, the disk and memory loads' sizes)
//! may differ a little.

use crate::document::methods;
use crate::document::schema::{described, RunDocument, SuiteRecord};
use crate::measure::sched::SchedRequest;
use crate::sim::fragment::FragmentSettings;
use crate::sim::game::GameSettings;
use crate::sim::io::IoSettings;
use crate::sim::job::JobSettings;
use crate::sim::micro::MicroMode;
use crate::sim::rtapp::settings::RtappSettings;
use crate::sim::ResponseParams;
use crate::system::cpulist::CpuList;

/// How far apart, as a fraction of the larger, two runs' loops_per_ms and
/// load sizes may be: the calibration of one machine varies by a few %
/// between runs, and the default sizes follow the free memory and disk.
pub const TOLERANCE: f64 = 0.05;

/// Something the two runs do not share, with each run's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub what: &'static str,
    pub first: String,
    pub other: String,
    /// Whether the values only differ by more than [`TOLERANCE`].
    pub beyond_tolerance: bool,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} differs ({} in the first, {} in the second",
            self.what, self.first, self.other
        )?;
        if self.beyond_tolerance {
            write!(f, ", more than {:.0} % apart", TOLERANCE * 100.0)?;
        }
        write!(f, ")")
    }
}

/// One property runs must share.
enum Rule {
    /// Shown the same.
    Exact(&'static str, fn(&RunDocument) -> String),
    /// Within [`TOLERANCE`] of each other, shown with the formatter.
    Near(&'static str, fn(&RunDocument) -> f64, fn(f64) -> String),
}

/// Every property merged runs must share, machine first.
const RULES: &[Rule] = &[
    Rule::Exact("hostname", |r| r.system.hostname.clone()),
    Rule::Exact("CPU model", |r| {
        r.system.cpu_model.clone().unwrap_or("unknown".into())
    }),
    Rule::Exact("CPU count", |r| r.system.cpus.to_string()),
    Rule::Exact("kernel release", |r| r.system.kernel_release.clone()),
    Rule::Exact("suite", |r| SuiteRecord::describe(r.suite.as_ref())),
    Rule::Exact("duration per scenario", |r| {
        format!("{} s", r.settings.duration_s)
    }),
    Rule::Exact("warm-up", |r| format!("{} s", r.settings.warmup_s)),
    Rule::Exact("probe scheduling", |r| sched(&r.settings.probe_sched)),
    Rule::Exact("load nice", |r| r.settings.load_nice.to_string()),
    Rule::Exact("burn processes", |r| r.settings.burn_processes.to_string()),
    Rule::Exact("custom shape", |r| match r.settings.custom {
        Some(c) => format!("-C {} -I {}", c.cpu_pct, c.interval_us),
        None => "none".into(),
    }),
    Rule::Exact("memory limit", |r| {
        optional_size(r.settings.mem_limit_bytes)
    }),
    Rule::Exact("swap file", |r| optional_size(r.settings.swap_bytes)),
    Rule::Exact("PM QoS limit", |r| match r.settings.cpu_dma_latency_us {
        Some(us) => format!("{us} µs"),
        None => "not held".into(),
    }),
    Rule::Exact("probe CPUs", |r| cpus(r.settings.probe_cpus.as_ref())),
    Rule::Exact("probe session", |r| r.settings.probe_session_words()),
    Rule::Exact("load CPUs", |r| cpus(r.settings.load_cpus.as_ref())),
    Rule::Exact("load CPU weight", |r| {
        r.settings
            .load_cpu_weight
            .map_or_else(|| "none".into(), |w| w.to_string())
    }),
    Rule::Exact("response probes' settings", |r| {
        r.settings
            .response
            .as_ref()
            .map_or_else(|| "none".into(), response)
    }),
    Rule::Exact("job", |r| {
        described(r.settings.job.as_ref(), JobSettings::describe)
    }),
    Rule::Exact("fragment player", |r| {
        described(r.settings.fragment.as_ref(), FragmentSettings::describe)
    }),
    Rule::Exact("game's frame graph", |r| {
        described(r.settings.game.as_ref(), GameSettings::describe)
    }),
    Rule::Exact("file I/O", |r| {
        described(r.settings.io.as_ref(), IoSettings::describe)
    }),
    Rule::Exact("micro mode", |r| {
        described(r.settings.micro.as_ref(), MicroMode::describe)
    }),
    Rule::Exact("rt-app workloads", |r| {
        described(r.settings.rtapp.as_ref(), RtappSettings::describe)
    }),
    Rule::Exact("late events split", |r| r.settings.late_split_words()),
    Rule::Near(
        "loops_per_ms",
        |r| r.settings.loops_per_ms,
        |v| format!("{v:.0}"),
    ),
    Rule::Near(
        "disk loads' file size",
        |r| r.settings.file_bytes as f64,
        size,
    ),
    Rule::Near("memory loads' size", |r| r.settings.mem_bytes as f64, size),
    Rule::Near(
        "response probe's arrays",
        |r| {
            r.settings
                .response
                .as_ref()
                .map_or(0.0, |p| (p.resident_bytes + p.fresh_bytes) as f64)
        },
        size,
    ),
];

fn sched(request: &SchedRequest) -> String {
    let policy = match request.fifo_priority {
        Some(p) => format!("SCHED_FIFO {p}"),
        None => "SCHED_OTHER".into(),
    };
    let slice = request
        .slice_ns
        .map(|ns| format!(", slice {ns} ns"))
        .unwrap_or_default();
    format!(
        "{policy}, nice {}, timer slack {} ns{slice}",
        request.nice, request.timer_slack_ns
    )
}

/// What the user chose of the response probes' settings; the arrays'
/// default sizes follow the memory, as the memory loads' size does.
fn response(params: &ResponseParams) -> String {
    format!(
        "{} points after {} s, command {}{}",
        params.points,
        params.gap_ns as f64 / 1e9,
        params.command.as_deref().unwrap_or("default"),
        if params.cold { ", cold" } else { "" }
    )
}

fn cpus(list: Option<&CpuList>) -> String {
    list.map_or_else(|| "any".into(), CpuList::to_string)
}

fn size(bytes: f64) -> String {
    format!("{:.0} MiB", bytes / f64::from(1 << 20))
}

fn optional_size(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "none".into(), |b| size(b as f64))
}

/// The first property in which `other` was not made like `first`: a rule,
/// the method version of a probe or load both used (a run of feelbench
/// 0.1.0 has version 0 of every one), or a probe both measured whose
/// figures they declare otherwise (made by another version of feelbench),
/// since a merge keeps one sheet per probe.
pub fn first_difference(first: &RunDocument, other: &RunDocument) -> Option<Difference> {
    rule_difference(first, other)
        .or_else(|| method_difference(first, other))
        .or_else(|| sheet_difference(first, other))
}

/// The first probe or load both runs used whose method version differs.
fn method_difference(first: &RunDocument, other: &RunDocument) -> Option<Difference> {
    let d = methods::differences(&[first, other]).into_iter().next()?;
    Some(Difference {
        what: "method version",
        first: format!("{} version {}", d.what(), d.versions[0]),
        other: format!("{} version {}", d.what(), d.versions[1]),
        beyond_tolerance: false,
    })
}

/// The first probe both runs measured whose figures they declare otherwise.
fn sheet_difference(first: &RunDocument, other: &RunDocument) -> Option<Difference> {
    first.probes.iter().find_map(|(probe, sheet)| {
        let theirs = other.probes.get(probe)?;
        (theirs != sheet).then(|| Difference {
            what: "a probe's figures",
            first: format!("{probe} as this version declares them"),
            other: format!("{probe} declared otherwise"),
            beyond_tolerance: false,
        })
    })
}

/// The first rule `other` breaks.
fn rule_difference(first: &RunDocument, other: &RunDocument) -> Option<Difference> {
    RULES.iter().find_map(|rule| match rule {
        Rule::Exact(what, show) => {
            let (a, b) = (show(first), show(other));
            (a != b).then_some(Difference {
                what,
                first: a,
                other: b,
                beyond_tolerance: false,
            })
        }
        Rule::Near(what, value, show) => {
            let (a, b) = (value(first), value(other));
            ((a - b).abs() > TOLERANCE * a.abs().max(b.abs())).then(|| Difference {
                what,
                first: show(a),
                other: show(b),
                beyond_tolerance: true,
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::fixture;
    use crate::sim::CustomShape;

    fn differs(change: impl FnOnce(&mut RunDocument)) -> Option<Difference> {
        let mut other = fixture::run();
        change(&mut other);
        first_difference(&fixture::run(), &other)
    }

    #[test]
    fn the_same_run_matches_and_unrelated_fields_may_differ() {
        assert_eq!(differs(|_| {}), None);
        assert_eq!(
            differs(|r| {
                r.run.comment = None;
                r.scenarios.clear();
                r.system.mem_bytes = Some(1);
                r.settings.repeats = 3;
            }),
            None
        );
    }

    #[test]
    fn another_fragment_player_or_another_sheet_does_not_merge() {
        let d = differs(|r| {
            r.settings
                .fragment
                .get_or_insert_with(Default::default)
                .fragments = 2
        })
        .unwrap();
        assert_eq!(d.what, "fragment player");
        assert_eq!(d.other, "2 x 256 bytes at 44100 Hz, 10 % CPU");
        let d = differs(|r| {
            let sheet = r.probes.values_mut().next().unwrap();
            sheet.figures[0].label = "relabelled".into();
        })
        .unwrap();
        assert_eq!(d.what, "a probe's figures");
    }

    #[test]
    fn runs_of_another_method_version_do_not_merge() {
        let d = differs(|r| {
            let methods = r.methods.as_mut().unwrap();
            methods.probes.insert("audio".into(), 2);
        })
        .unwrap();
        assert_eq!(
            d.to_string(),
            "method version differs (probe audio version 1 in the first, probe audio version 2 in the second)"
        );
        let d = differs(|r| r.methods = None).unwrap();
        assert_eq!(
            (d.what, d.first.as_str(), d.other.as_str()),
            (
                "method version",
                "probe audio version 1",
                "probe audio version 0"
            )
        );
        // A probe only one of them ran has nothing to agree on.
        assert_eq!(
            differs(|r| {
                let methods = r.methods.as_mut().unwrap();
                methods.probes.insert("x".into(), 3);
            }),
            None
        );
    }

    #[test]
    fn micro_runs_of_another_mode_do_not_merge() {
        let d = differs(|r| r.settings.micro = Some(MicroMode::Lmbench)).unwrap();
        assert_eq!((d.what, d.first.as_str()), ("micro mode", "not used"));
        assert_eq!(d.other, "lmbench");
    }

    #[test]
    fn machine_differences_name_both_values() {
        let d = differs(|r| r.system.hostname = "other".into()).unwrap();
        assert_eq!(
            (d.what, d.first.as_str(), d.other.as_str()),
            ("hostname", "testhost", "other")
        );
        assert_eq!(differs(|r| r.system.cpus = 4).unwrap().what, "CPU count");
        assert_eq!(
            differs(|r| r.system.cpu_model = None).unwrap().other,
            "unknown"
        );
        assert_eq!(
            differs(|r| r.system.kernel_release = "6.1".into())
                .unwrap()
                .what,
            "kernel release"
        );
    }

    #[test]
    fn settings_that_change_the_measurement_must_match() {
        let d = differs(|r| r.settings.duration_s = 1.0).unwrap();
        assert_eq!(
            (d.what, d.first.as_str(), d.other.as_str()),
            ("duration per scenario", "3 s", "1 s")
        );
        let d = differs(|r| r.settings.probe_sched.fifo_priority = Some(80)).unwrap();
        assert_eq!(d.other, "SCHED_FIFO 80, nice 0, timer slack 1 ns");
        let d = differs(|r| r.settings.probe_sched.slice_ns = Some(3_000_000)).unwrap();
        assert_eq!(
            d.other,
            "SCHED_OTHER, nice 0, timer slack 1 ns, slice 3000000 ns"
        );
        assert_eq!(
            differs(|r| r.settings.load_nice = 19).unwrap().what,
            "load nice"
        );
        assert_eq!(
            differs(|r| r.settings.burn_processes = 8).unwrap().what,
            "burn processes"
        );
        let shape = Some(CustomShape {
            cpu_pct: 10.0,
            interval_us: 2000,
        });
        assert_eq!(
            differs(|r| r.settings.custom = shape).unwrap().other,
            "-C 10 -I 2000"
        );
        assert_eq!(
            differs(|r| r.settings.mem_limit_bytes = Some(256 << 20))
                .unwrap()
                .other,
            "256 MiB"
        );
        assert_eq!(
            differs(|r| r.settings.swap_bytes = Some(1 << 30))
                .unwrap()
                .what,
            "swap file"
        );
        assert_eq!(
            differs(|r| r.settings.warmup_s = 0.0).unwrap().what,
            "warm-up"
        );
        let d = differs(|r| r.settings.cpu_dma_latency_us = Some(0)).unwrap();
        assert_eq!(
            (d.what, d.first.as_str(), d.other.as_str()),
            ("PM QoS limit", "not held", "0 µs")
        );
        let d = differs(|r| r.settings.late_split = false).unwrap();
        assert_eq!(
            (d.what, d.first.as_str(), d.other.as_str()),
            ("late events split", "on", "off")
        );
        let d =
            differs(|r| r.settings.job.get_or_insert_with(Default::default).size = 0.5).unwrap();
        assert_eq!(
            (d.what, d.other.as_str()),
            ("job", "built-in, size 0.5, inputs warm, at most 3600 s")
        );
        let d = differs(|r| {
            r.settings.job.get_or_insert_with(Default::default).cache =
                crate::sim::job::JobCache::Cold
        })
        .unwrap();
        assert_eq!(
            (d.what, d.other.as_str()),
            ("job", "built-in, size 1, inputs cold, at most 3600 s")
        );
    }

    #[test]
    fn runs_placed_otherwise_do_not_merge() {
        let d = differs(|r| r.settings.probe_cpus = "0".parse().ok()).unwrap();
        assert_eq!(
            (d.what, d.first.as_str(), d.other.as_str()),
            ("probe CPUs", "any", "0")
        );
        let d = differs(|r| r.settings.load_cpus = "1-3".parse().ok()).unwrap();
        assert_eq!((d.what, d.other.as_str()), ("load CPUs", "1-3"));
        let d = differs(|r| r.settings.load_cpu_weight = Some(10)).unwrap();
        assert_eq!(
            (d.what, d.first.as_str(), d.other.as_str()),
            ("load CPU weight", "none", "10")
        );
    }

    #[test]
    fn runs_of_response_probes_made_otherwise_do_not_merge() {
        let params = || ResponseParams {
            gap_ns: 20_000_000_000,
            points: 5,
            resident_bytes: 32 << 20,
            fresh_bytes: 32 << 20,
            command: None,
            cold: false,
        };
        let d = differs(|r| r.settings.response = Some(params())).unwrap();
        assert_eq!(
            (d.what, d.first.as_str(), d.other.as_str()),
            (
                "response probes' settings",
                "none",
                "5 points after 20 s, command default"
            )
        );
        let mut first = fixture::run();
        first.settings.response = Some(params());
        let mut other = first.clone();
        other.settings.response = Some(ResponseParams {
            command: Some("ls".into()),
            cold: true,
            ..params()
        });
        let d = first_difference(&first, &other).unwrap();
        assert_eq!(d.other, "5 points after 20 s, command ls, cold");
        other.settings.response = Some(ResponseParams {
            fresh_bytes: 64 << 20,
            ..params()
        });
        let d = first_difference(&first, &other).unwrap();
        assert_eq!(
            (d.what, d.other.as_str()),
            ("response probe's arrays", "96 MiB")
        );
    }

    #[test]
    fn calibration_and_sizes_may_differ_within_the_tolerance() {
        assert_eq!(differs(|r| r.settings.loops_per_ms *= 1.04), None);
        let d = differs(|r| r.settings.loops_per_ms *= 1.06).unwrap();
        assert_eq!(
            (d.what, d.first.as_str(), d.other.as_str()),
            ("loops_per_ms", "500000", "530000")
        );
        assert!(d.beyond_tolerance);
        assert_eq!(
            differs(|r| r.settings.mem_bytes -= r.settings.mem_bytes / 50),
            None
        );
        assert_eq!(
            differs(|r| r.settings.file_bytes *= 2).unwrap().what,
            "disk loads' file size"
        );
        assert_eq!(
            differs(|r| r.settings.mem_bytes /= 2).unwrap().other,
            "4096 MiB"
        );
    }
}
