//! `feelbench regressions` and `feelbench export` on stores built from the
//! two run documents of tests/data, copied as if made one after another
//! (a new id, start time and kernel each): runs 1–10 with loads at nice 19,
//! 11–20 at nice 0 (the nice-19 copies take the nice-0 run's settings, so
//! all twenty are one series and the change is injected at run 11), or
//! twenty copies of one run. Copies have the same figures, so each level is
//! exact and the verdicts do not move with the machine.

use crate::common;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

pub const NICE0: &str = "tests/data/v1-run.json";
pub const NICE19: &str = "tests/data/v1-nice19.json";

/// The id of copy `i` (1-based).
pub fn run_id(i: usize) -> String {
    format!("20261124-{:02}0000-{i}", i % 24)
}

/// Writes copy `i` of `source` to `dir` (`run-II.json`), with
/// `settings_from`'s settings.
pub fn write_copy(dir: &Path, i: usize, source: &str, settings_from: &Value) {
    let mut run: Value = serde_json::from_str(&std::fs::read_to_string(source).unwrap()).unwrap();
    run["settings"] = settings_from["settings"].clone();
    run["run"]["id"] = run_id(i).into();
    run["run"]["started"] = format!("2026-11-24T{:02}:00:00Z", i % 24).into();
    run["run"]["finished"] = format!("2026-11-24T{:02}:00:10Z", i % 24).into();
    run["system"]["kernel_release"] = format!("6.18.{i}-test").into();
    let path = dir.join(format!("run-{i:02}.json"));
    std::fs::write(path, serde_json::to_vec(&run).unwrap()).unwrap();
}

/// Twenty copies in `dir/runs`, one an hour on a kernel of their own:
/// run `i` is a copy of `source(i)` with nice 0's settings.
fn copies(dir: &Path, source: impl Fn(usize) -> &'static str) -> PathBuf {
    let runs = dir.join("runs");
    std::fs::create_dir(&runs).unwrap();
    let nice0 = common::read_json(Path::new(NICE0));
    for i in 1..=20 {
        write_copy(&runs, i, source(i), &nice0);
    }
    runs
}

/// The step: nice 19's figures for runs 1–10, nice 0's from run 11.
fn step_source(i: usize) -> &'static str {
    if i <= 10 {
        NICE19
    } else {
        NICE0
    }
}

/// The step's twenty copies in `dir/runs` (the directory).
pub fn step_copies(dir: &Path) -> PathBuf {
    copies(dir, step_source)
}

/// A store in `dir` of twenty copies: run `i` is a copy of `source(i)`.
fn store_of(dir: &Path, source: impl Fn(usize) -> &'static str) -> PathBuf {
    let runs = copies(dir, source);
    let store = dir.join("store.sqlite");
    let output = feelbench(dir, &["store", "import", runs.to_str().unwrap()], &store);
    assert_eq!(output.status.code(), Some(0), "{}", common::stderr(&output));
    assert!(common::stdout(&output).starts_with("20 run(s) added"));
    store
}

/// The step store: nice 19 for runs 1–10, nice 0 from run 11.
fn step_store(dir: &Path) -> PathBuf {
    store_of(dir, step_source)
}

/// `feelbench ARGS --store STORE`.
fn feelbench(dir: &Path, args: &[&str], store: &Path) -> Output {
    common::feelbench(&common::new_tag(), dir)
        .args(args)
        .arg("--store")
        .arg(store)
        .output()
        .unwrap()
}

/// `regressions --format json` with `extra`: its exit code and report.
fn regressions_json(dir: &Path, store: &Path, extra: &[&str]) -> (Option<i32>, Value) {
    let mut args = vec!["regressions", "--format", "json"];
    args.extend(extra);
    let output = feelbench(dir, &args, store);
    let report = serde_json::from_str(&common::stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {}", common::stderr(&output)));
    (output.status.code(), report)
}

#[test]
fn a_change_injected_at_run_11_is_found_there_and_fails_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let store = step_store(dir.path());
    let (code, report) = regressions_json(dir.path(), &store, &["--fail-on", "worse"]);
    let changes = report["changes"].as_array().unwrap();
    assert!(!changes.is_empty(), "{report:#}");
    for change in changes {
        assert_eq!(change["first_after"]["run_id"], run_id(11), "{change:#}");
        assert_eq!(change["last_before"]["run_id"], run_id(10), "{change:#}");
        assert_eq!(change["first_after"]["kernel_release"], "6.18.11-test");
        assert_eq!(
            (
                change["runs_before"].as_u64(),
                change["runs_after"].as_u64()
            ),
            (Some(10), Some(10))
        );
        assert!(change["q"].as_f64().unwrap() <= 0.05);
        assert!(change["change_pct"].as_f64().unwrap().abs() >= 5.0);
        let check = change["check"].as_str().unwrap();
        assert!(
            check.starts_with(&format!("feelbench compare {}@", run_id(10))),
            "{check}"
        );
    }
    // The loads at nice 0 take the CPU from the x probe: its p99 rises.
    let x_p99 = changes
        .iter()
        .find(|c| c["probe"] == "x" && c["load"] == "burn" && c["figure"] == "p99")
        .unwrap_or_else(|| panic!("x/burn p99 is not among {report:#}"));
    assert_eq!(x_p99["worse"], true);
    assert!(x_p99["after"].as_f64() > x_p99["before"].as_f64());
    // Series under the load `none` begin at run 11: nothing to divide.
    assert!(changes.iter().all(|c| c["load"] == "burn"));
    assert_eq!(code, Some(3), "--fail-on worse on a regression exits 3");

    let output = feelbench(dir.path(), &["regressions"], &store);
    assert_eq!(output.status.code(), Some(0), "no gate, no failure");
    let text = common::stdout(&output);
    assert!(
        text.contains("\nRegressions\n") && text.contains(&format!("{}@", run_id(11))),
        "{text}"
    );
}

#[test]
fn one_setting_twenty_times_reports_nothing_and_passes_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_of(dir.path(), |_| NICE0);
    let (code, report) = regressions_json(dir.path(), &store, &["--fail-on", "worse"]);
    assert_eq!(code, Some(0));
    assert_eq!(report["changes"], Value::Array(Vec::new()), "{report:#}");
    assert!(
        report["series"].as_u64().unwrap() >= 4,
        "x and gaming under none and burn"
    );
}

#[test]
fn an_annotation_at_the_change_cuts_it_out() {
    let dir = tempfile::tempdir().unwrap();
    let store = step_store(dir.path());
    let output = feelbench(
        dir.path(),
        &["store", "annotate", &run_id(11), "BIOS update"],
        &store,
    );
    assert_eq!(output.status.code(), Some(0), "{}", common::stderr(&output));
    let (code, report) = regressions_json(dir.path(), &store, &["--fail-on", "worse"]);
    assert_eq!(code, Some(0), "{report:#}");
    assert_eq!(report["changes"], Value::Array(Vec::new()), "{report:#}");
    assert!(
        report["parts"].as_u64() > report["series"].as_u64(),
        "{report:#}"
    );
}

#[test]
fn bad_numbers_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    for args in [["--fdr", "2"], ["--min-effect=-1", "--format=table"]] {
        let mut all = vec!["regressions"];
        all.extend(args);
        let output = feelbench(dir.path(), &all, &store);
        assert_eq!(output.status.code(), Some(2));
        assert_eq!(
            common::stderr(&output).lines().count(),
            1,
            "{}",
            common::stderr(&output)
        );
    }
}

#[test]
fn openmetrics_export_of_the_newest_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = step_store(dir.path());
    // The copies were made on the host vm: --machine, as on any other host.
    let output = feelbench(
        dir.path(),
        &["export", "--format", "openmetrics", "--machine", "vm"],
        &store,
    );
    assert_eq!(output.status.code(), Some(0), "{}", common::stderr(&output));
    let text = common::stdout(&output);
    assert!(text.ends_with("# EOF\n"), "{text}");
    let info = format!(
        "feelbench_run_info{{run_id=\"{}\",kernel=\"6.18.20-test\",host=\"vm\"}} 1\n",
        run_id(20)
    );
    assert!(text.contains(&info), "{text}");
    assert!(
        text.contains("# TYPE feelbench_p99_seconds gauge\n# UNIT feelbench_p99_seconds seconds\n"),
        "{text}"
    );
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (name, value) = line.rsplit_once(' ').unwrap();
        assert!(value.parse::<f64>().is_ok(), "{line}");
        if !name.starts_with("feelbench_run_info") {
            let labels = name.split_once('{').unwrap().1;
            assert!(
                labels.starts_with("probe=\"") && labels.contains(",load=\""),
                "{line}"
            );
            assert!(
                !labels.contains("run") && !labels.contains("kernel"),
                "{line}"
            );
        }
    }
    // x and gaming under none and burn: a sample of p99 each.
    assert_eq!(text.matches("feelbench_p99_seconds{").count(), 4, "{text}");
    parsed_by_prometheus_client(&text);

    let file = dir.path().join("feelbench.prom");
    let output = feelbench(
        dir.path(),
        &[
            "export",
            "--format",
            "openmetrics",
            "--machine",
            "vm",
            "-o",
            file.to_str().unwrap(),
        ],
        &store,
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

/// Parses `text` with the Python Prometheus client's OpenMetrics parser,
/// or says why it cannot.
fn parsed_by_prometheus_client(text: &str) {
    let script = "import sys\n\
        from prometheus_client.openmetrics.parser import text_string_to_metric_families as p\n\
        families = list(p(sys.stdin.read()))\n\
        print(len(families), sum(len(f.samples) for f in families))\n";
    // The Python in PATH, else the system's, where Debian's
    // python3-prometheus-client (installed by .ci/run) goes.
    let python = ["python3", "/usr/bin/python3"].into_iter().find(|python| {
        std::process::Command::new(python)
            .args(["-c", "import prometheus_client"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(python) = python else {
        common::skip(
            "python3 with prometheus_client is not installed (apt-get install python3-prometheus-client)",
        );
        return;
    };
    let mut child = std::process::Command::new(python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", common::stderr(&output));
    let samples = text.lines().filter(|l| !l.starts_with('#')).count();
    let said = common::stdout(&output);
    assert_eq!(
        said.split_whitespace().nth(1),
        Some(samples.to_string().as_str()),
        "{said}"
    );
}
