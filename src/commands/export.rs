//! `feelbench export --format openmetrics`: the newest run's headline
//! figures (of this host, unless `--machine` names another) in the
//! OpenMetrics text format, for the node exporter's textfile
//! collector. A figure is a gauge `feelbench_<figure>_<unit>` in the base
//! unit OpenMetrics wants (seconds, a ratio for a share) labelled by probe
//! and load only; the run (id, kernel, host) is one `feelbench_run_info`
//! gauge of 1, so no label grows a new series with every run.

use super::store::open;
use crate::exit::{ExitCode, UsageError};
use crate::figures::Unit;
use crate::store::query::{Point, PointQuery, RunFilter};
use crate::store::StoreLocation;
use anyhow::Context as _;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;

/// Settings of `feelbench export`.
#[derive(Debug, Clone)]
pub struct ExportSettings {
    pub store: StoreLocation,
    /// The newest run these match is exported.
    pub runs: RunFilter,
    /// A file to replace instead of stdout.
    pub output: Option<PathBuf>,
}

/// Exports the newest run's headline figures: of this host's runs unless
/// `--machine` names a machine, since the metrics carry no machine label
/// and a lab's store holds every machine's runs.
pub fn run(settings: &ExportSettings) -> anyhow::Result<ExitCode> {
    let mut store = open(&settings.store)?;
    let mut runs = settings.runs.clone();
    let this_host = match runs.machine {
        Some(_) => None,
        None => nix::sys::utsname::uname()
            .ok()
            .map(|u| u.nodename().to_string_lossy().into_owned()),
    };
    runs.machine = runs.machine.or_else(|| this_host.clone());
    let mut points = store
        .points(&PointQuery {
            runs,
            ..PointQuery::default()
        })
        .with_context(|| format!("store {}", settings.store))?;
    let newest = points.last().map(|p| p.run_key.clone()).ok_or_else(|| {
        let of_this_host = this_host
            .map(|host| format!(" of this host ({host}; --machine HOST exports another's)"))
            .unwrap_or_default();
        UsageError::new(format!(
            "no finished run{of_this_host} in {} matches: nothing to export",
            settings.store
        ))
    })?;
    points.retain(|p| p.run_key == newest);
    let text = openmetrics(&points);
    match &settings.output {
        None => super::print(&text),
        Some(path) => {
            replace(path, &text).with_context(|| format!("cannot write {}", path.display()))?;
            Ok(ExitCode::Success)
        }
    }
}

/// Writes `text` to a file beside `path` and renames it over `path`, so a
/// collector never reads half of it. The file is readable by all (0644
/// less the umask), as a file written in place would be: the node exporter
/// reading it runs as a user of its own.
fn replace(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut file = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o644))
        .tempfile_in(dir)?;
    file.write_all(text.as_bytes())?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A figure's OpenMetrics unit, and what its stored value is divided by.
fn base_unit(unit: &str) -> (Option<&'static str>, f64) {
    let unit: Option<Unit> = serde_json::from_value(serde_json::Value::String(unit.into())).ok();
    match unit {
        Some(Unit::Micros | Unit::ShortMicros | Unit::Seconds) => (Some("seconds"), 1e6),
        Some(Unit::Percent) => (Some("ratio"), 100.0),
        Some(Unit::Ratio) => (Some("ratio"), 1.0),
        _ => (None, 1.0),
    }
}

/// `text` as a metric name's part: letters, digits and `_`.
fn name_part(text: &str) -> String {
    text.chars()
        .map(|c| match c.is_ascii_alphanumeric() {
            true => c.to_ascii_lowercase(),
            false => '_',
        })
        .collect()
}

/// `text` as a label value between quotes.
fn label_value(text: &str) -> String {
    text.replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

/// `value` with at most 12 decimals and no trailing zeros, so a value
/// converted to its base unit shows no rounding noise
/// (0.000109311, not 0.00010931100000000001).
fn number(value: f64) -> String {
    let text = format!("{value:.12}");
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}

/// The points of one run in the OpenMetrics text format: a gauge family
/// per figure and unit, a sample per probe and load (the first when a run
/// has the same pair twice), the run's info, `# EOF`.
pub fn openmetrics(points: &[Point]) -> String {
    type Family<'a> = (Option<&'static str>, &'a Point, Vec<(String, f64)>);
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    for p in points {
        let (unit, divisor) = base_unit(&p.unit);
        let name = match unit {
            Some(unit) => format!("feelbench_{}_{unit}", name_part(&p.figure)),
            None => format!("feelbench_{}", name_part(&p.figure)),
        };
        let labels = format!(
            "probe=\"{}\",load=\"{}\"",
            label_value(&p.probe),
            label_value(&p.load)
        );
        let family = families.entry(name).or_insert((unit, p, Vec::new()));
        if !family.2.iter().any(|(l, _)| *l == labels) {
            family.2.push((labels, p.value / divisor));
        }
    }
    let mut out = String::new();
    for (name, (unit, first, samples)) in &families {
        out.push_str(&format!("# TYPE {name} gauge\n"));
        if let Some(unit) = unit {
            out.push_str(&format!("# UNIT {name} {unit}\n"));
        }
        out.push_str(&format!(
            "# HELP {name} feelbench figure {} of the newest run ({} is better)\n",
            first.figure, first.better
        ));
        for (labels, value) in samples {
            out.push_str(&format!("{name}{{{labels}}} {}\n", number(*value)));
        }
    }
    if let Some(run) = points.first() {
        out.push_str("# TYPE feelbench_run_info gauge\n");
        out.push_str("# HELP feelbench_run_info the run the feelbench figures come from\n");
        out.push_str(&format!(
            "feelbench_run_info{{run_id=\"{}\",kernel=\"{}\",host=\"{}\"}} 1\n",
            label_value(&run.run_id),
            label_value(&run.kernel_release),
            label_value(&run.hostname)
        ));
    }
    out.push_str("# EOF\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(probe: &str, figure: &str, unit: &str, value: f64) -> Point {
        Point {
            series: "s".into(),
            run_key: "r1@vm".into(),
            run_id: "r1".into(),
            hostname: "vm".into(),
            machine: "m".into(),
            started: "2026-11-27T08:00:00Z".into(),
            started_unix: 0,
            kernel_release: "6.18.0-\"rc1\"".into(),
            comment: None,
            suite: None,
            probe: probe.into(),
            load: "burn".into(),
            figure: figure.into(),
            unit: unit.into(),
            better: "lower".into(),
            value,
            ci_low: None,
            ci_high: None,
        }
    }

    #[test]
    fn figures_are_gauges_in_base_units_labelled_by_probe_and_load() {
        let text = openmetrics(&[
            point("x", "p99", "micros", 1500.0),
            point("audio", "p99", "micros", 250.0),
            point("audio", "deadlines", "percent", 99.5),
            point("game", "fps", "fps", 58.0),
            point("x", "p99", "micros", 9999.0),
        ]);
        let expected = "\
# TYPE feelbench_deadlines_ratio gauge
# UNIT feelbench_deadlines_ratio ratio
# HELP feelbench_deadlines_ratio feelbench figure deadlines of the newest run (lower is better)
feelbench_deadlines_ratio{probe=\"audio\",load=\"burn\"} 0.995
# TYPE feelbench_fps gauge
# HELP feelbench_fps feelbench figure fps of the newest run (lower is better)
feelbench_fps{probe=\"game\",load=\"burn\"} 58
# TYPE feelbench_p99_seconds gauge
# UNIT feelbench_p99_seconds seconds
# HELP feelbench_p99_seconds feelbench figure p99 of the newest run (lower is better)
feelbench_p99_seconds{probe=\"x\",load=\"burn\"} 0.0015
feelbench_p99_seconds{probe=\"audio\",load=\"burn\"} 0.00025
# TYPE feelbench_run_info gauge
# HELP feelbench_run_info the run the feelbench figures come from
feelbench_run_info{run_id=\"r1\",kernel=\"6.18.0-\\\"rc1\\\"\",host=\"vm\"} 1
# EOF
";
        assert_eq!(text, expected);
    }

    #[test]
    fn no_points_is_an_empty_exposition() {
        assert_eq!(openmetrics(&[]), "# EOF\n");
    }

    #[test]
    fn names_keep_only_what_a_metric_name_may_hold() {
        assert_eq!(name_part("work:burn"), "work_burn");
        assert_eq!(name_part("Ctx0_P99"), "ctx0_p99");
    }

    #[test]
    fn numbers_carry_no_rounding_noise() {
        assert_eq!(number(109.311 / 1e6), "0.000109311");
        assert_eq!(number(58.0), "58");
        assert_eq!(number(-0.5), "-0.5");
        assert_eq!(number(1234567.25), "1234567.25");
    }
}
