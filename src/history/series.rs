//! Which series history shows: points of runs that are not comparable
//! (another machine, other settings, another suite) are never mixed unless
//! asked; when they span several series, the error names each so the user
//! can choose one with `--series`. Runs that differ only in the method
//! versions of their probes and loads are one series, cut where those
//! change ([`method_marks`]), as an annotation cuts it.

use super::{Mark, MarkKind};
use crate::store::fingerprint::base_of;
use crate::store::query::{Point, RunSummary};
use serde::Serialize;
use std::collections::HashMap;

/// A series as history names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesInfo {
    /// The series key without its method versions (`--series` takes its
    /// start).
    pub key: String,
    /// The machine's fingerprint.
    pub machine: String,
    /// The hostnames its runs were made on.
    pub hosts: Vec<String>,
    /// The suite and its version, when the runs were of one.
    pub suite: Option<String>,
    pub settings_hash: String,
    /// How many of its runs have the figure.
    pub runs: usize,
    /// How many sets of method versions those runs were made with (the
    /// series is cut at each change).
    pub methods: usize,
}

impl std::fmt::Display for SeriesInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (machine {} on {}, suite {}, settings {}, {} run(s){})",
            self.key,
            self.machine,
            self.hosts.join("+"),
            self.suite.as_deref().unwrap_or("-"),
            self.settings_hash,
            self.runs,
            match self.methods {
                1 => String::new(),
                n => format!(", {n} sets of method versions"),
            }
        )
    }
}

/// The points span several series and mixing them was not asked for.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "{what} spans {} series that are not comparable; choose one with --series KEY (or mix them with --any-series): {}",
    .series.len(),
    .series.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
)]
pub struct ManySeries {
    /// The probe, load and figure, in words.
    pub what: String,
    pub series: Vec<SeriesInfo>,
}

/// The series of `points` (oldest first) in order of first appearance,
/// each described from `runs`.
pub fn series_of(points: &[Point], runs: &[RunSummary]) -> Vec<SeriesInfo> {
    let mut found: Vec<SeriesInfo> = Vec::new();
    let mut counted = std::collections::HashSet::<(&str, &str)>::new();
    let mut methods = std::collections::HashSet::<&str>::new();
    for p in points {
        let base = base_of(&p.series);
        let index = match found.iter().position(|s| s.key == base) {
            Some(i) => i,
            None => {
                let run = runs.iter().find(|r| r.run_key == p.run_key);
                found.push(SeriesInfo {
                    key: base.to_string(),
                    machine: p.machine.clone(),
                    hosts: Vec::new(),
                    suite: run.and_then(|r| {
                        r.suite
                            .as_ref()
                            .map(|s| format!("{s}@{}", r.suite_version.unwrap_or(0)))
                    }),
                    settings_hash: run.map(|r| r.settings_hash.clone()).unwrap_or_default(),
                    runs: 0,
                    methods: 0,
                });
                found.len() - 1
            }
        };
        let series = &mut found[index];
        if !series.hosts.contains(&p.hostname) {
            series.hosts.push(p.hostname.clone());
        }
        if counted.insert((base, &p.run_key)) {
            series.runs += 1;
        }
        if methods.insert(&p.series) {
            series.methods += 1;
        }
    }
    found
}

/// A mark at each point of `points` (oldest first) whose method versions
/// differ from those of the point before it in its series.
pub fn method_marks(points: &[Point]) -> Vec<Mark> {
    let mut last: HashMap<&str, &str> = HashMap::new();
    points
        .iter()
        .filter_map(|p| {
            let before = last.insert(base_of(&p.series), &p.series)?;
            (before != p.series).then(|| Mark {
                kind: MarkKind::Method,
                run_key: p.run_key.clone(),
                started_unix: p.started_unix,
                kernel: p.kernel_release.clone(),
                note: "its probes' and loads' method versions differ from the previous run's: values before it were measured otherwise".into(),
            })
        })
        .collect()
}

/// The series of `points` to show: all of them when `any` or when there
/// is one, else the error that names them.
pub fn choose(
    what: &str,
    points: &[Point],
    runs: &[RunSummary],
    any: bool,
) -> Result<Vec<SeriesInfo>, ManySeries> {
    let series = series_of(points, runs);
    match series.len() > 1 && !any {
        true => Err(ManySeries {
            what: what.to_string(),
            series,
        }),
        false => Ok(series),
    }
}
