//! A run document turned into what the store keeps of it: the document
//! itself (compressed, with its SHA-256 and schema), the keys that place it
//! in a series, and every figure of every scenario as rows to query.

use super::fingerprint::{self, MachineKey};
use crate::document::figure::Figure;
use crate::document::schema::{RunDocument, ScenarioResult, ScenarioStatus};
use flate2::write::GzEncoder;
use flate2::Compression;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write as _;

/// One run, ready to be added.
#[derive(Debug, Clone)]
pub struct RunRows {
    /// What makes the run unique in every store: its id and the host that
    /// made it (`20261127-081114-29625@vm`).
    pub run_key: String,
    pub run_id: String,
    pub hostname: String,
    pub machine: MachineKey,
    /// Seconds since the epoch when the run started.
    pub started_unix: i64,
    /// The same, as the document says it (RFC 3339).
    pub started: String,
    pub kernel_release: String,
    pub feelbench_version: Option<String>,
    pub doc_schema: String,
    pub suite: Option<String>,
    pub suite_version: Option<i64>,
    pub settings_hash: String,
    pub series_key: String,
    pub comment: Option<String>,
    pub interrupted: bool,
    /// The SHA-256 of the document's bytes, in hex.
    pub doc_sha256: String,
    /// The document's bytes, gzip-compressed.
    pub doc_gz: Vec<u8>,
    pub scenarios: Vec<ScenarioRows>,
}

/// One scenario of a run and its figures.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioRows {
    pub probe: String,
    pub load: String,
    /// `ok` or `failed`.
    pub status: String,
    /// How many measurements its figures merge.
    pub measurements: i64,
    pub figures: Vec<FigureRow>,
}

/// One figure of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureRow {
    /// The key `--figure` takes (`p99`, `work:burn`).
    pub name: String,
    /// The unit as the run document names it.
    pub unit: String,
    /// `lower` or `higher`.
    pub better: String,
    /// One of the figures a probe puts first.
    pub headline: bool,
    pub value: f64,
    /// The interval of the value, when the run has one (repeats or
    /// sub-window batch means).
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
}

/// The key a run is stored under in every store.
pub fn run_key(run: &RunDocument) -> String {
    format!("{}@{}", run.run.id, run.system.hostname)
}

/// The rows of `run`, whose document is `bytes` exactly (the file's bytes,
/// so its SHA-256 is the file's).
pub fn rows_of(run: &RunDocument, bytes: &[u8]) -> RunRows {
    let machine = fingerprint::machine_of(run);
    let settings_hash = fingerprint::settings_hash(run);
    let series_key = fingerprint::series_key(&machine, &settings_hash, run);
    RunRows {
        run_key: run_key(run),
        run_id: run.run.id.clone(),
        hostname: run.system.hostname.clone(),
        machine,
        started_unix: unix_seconds(&run.run.started),
        started: run.run.started.clone(),
        kernel_release: run.system.kernel_release.clone(),
        feelbench_version: run
            .environment
            .feelbench_version
            .clone()
            .or(Some(run.tool.version.clone())),
        doc_schema: run.schema.clone(),
        suite: run.suite.as_ref().map(|s| s.name.clone()),
        suite_version: run.suite.as_ref().map(|s| i64::from(s.version)),
        settings_hash,
        series_key,
        comment: run.run.comment.clone(),
        interrupted: run.run.interrupted,
        doc_sha256: sha256_hex(bytes),
        doc_gz: compressed(bytes),
        scenarios: run
            .scenarios
            .iter()
            .map(|s| scenario_rows(run, s))
            .collect(),
    }
}

/// The SHA-256 of `bytes`, in hex: what a document is checked against.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `bytes` gzip-compressed at the fast level: a run's document is mostly
/// base64 histograms, which the slow levels barely shrink further.
fn compressed(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(bytes.len() / 3), Compression::fast());
    encoder
        .write_all(bytes)
        .and_then(|()| encoder.finish())
        .expect("compressing into memory cannot fail")
}

/// The seconds since the epoch of an RFC 3339 time; 0 when it is not one
/// (a document written by hand).
fn unix_seconds(time: &str) -> i64 {
    humantime::parse_rfc3339_weak(time)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as i64)
}

/// The rows of one scenario: each figure its probe declares that it has,
/// then the work rate of each part of its load. Names are unique in a
/// scenario: a second part of one name (`burn+burn`) is `work:burn#2`, and
/// so is any other name a scenario gives twice.
fn scenario_rows(run: &RunDocument, scenario: &ScenarioResult) -> ScenarioRows {
    let outcome = &scenario.outcome;
    let declared = run
        .sheet(&scenario.probe)
        .map(|sheet| sheet.figures.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|def| {
            let figure = Figure::Probe(def);
            let value = figure.of(outcome);
            (figure, value)
        });
    // Each part's own rate: `Figure::of` finds a part by its name, which
    // two parts may share.
    let ok = outcome.status == ScenarioStatus::Ok;
    let work = outcome.load_work.iter().map(|w| {
        (
            Figure::Work(w.load.clone()),
            Some(w.rate_per_s).filter(|_| ok),
        )
    });
    let mut seen = HashMap::<String, usize>::new();
    let figures = declared
        .chain(work)
        .filter_map(|(figure, value)| {
            let value = value.filter(|v| v.is_finite())?;
            let key = figure.key();
            let interval = scenario
                .intervals
                .as_ref()
                .and_then(|i| i.figures.iter().find(|f| f.figure == key));
            let count = seen.entry(key.clone()).or_insert(0);
            *count += 1;
            Some(FigureRow {
                unit: unit_name(&figure),
                better: serde_json::to_value(figure.better())
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                headline: matches!(&figure, Figure::Probe(def) if def.headline),
                value,
                ci_low: interval.filter(|_| *count == 1).map(|i| i.low),
                ci_high: interval.filter(|_| *count == 1).map(|i| i.high),
                name: match *count {
                    1 => key,
                    n => format!("{key}#{n}"),
                },
            })
        })
        .collect();
    ScenarioRows {
        probe: scenario.probe.clone(),
        load: scenario.load.clone(),
        status: match outcome.status {
            ScenarioStatus::Ok => "ok",
            ScenarioStatus::Failed => "failed",
        }
        .to_string(),
        measurements: scenario.measurements().len() as i64,
        figures,
    }
}

/// The unit of `figure` as the run document names it.
fn unit_name(figure: &Figure) -> String {
    serde_json::to_value(figure.unit())
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::fixture;

    #[test]
    fn every_ok_scenario_gives_its_figures_and_the_document_its_hash() {
        let run = fixture::run();
        let bytes = serde_json::to_vec(&run).unwrap();
        let rows = rows_of(&run, &bytes);
        assert_eq!(rows.scenarios.len(), run.scenarios.len());
        assert!(rows.scenarios.iter().any(|s| !s.figures.is_empty()));
        assert_eq!(rows.doc_sha256.len(), 64);
        assert!(rows.started_unix > 0);
        let mut decoder = flate2::read::GzDecoder::new(&rows.doc_gz[..]);
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut decoder, &mut back).unwrap();
        assert_eq!(back, bytes);
    }

    #[test]
    fn two_figures_of_one_name_get_names_of_their_own() {
        let mut run = fixture::run();
        let scenario = run
            .scenarios
            .iter_mut()
            .find(|s| s.load == "burn" && s.outcome.status == ScenarioStatus::Ok)
            .unwrap();
        let mut second = scenario.outcome.load_work[0].clone();
        second.rate_per_s = 450.0;
        scenario.outcome.load_work.push(second);
        let probe = scenario.probe.clone();
        // A figure the scenario has, declared twice.
        let has = rows_of(&run, b"{}")
            .scenarios
            .into_iter()
            .find(|s| s.probe == probe && s.load == "burn")
            .unwrap()
            .figures[0]
            .name
            .clone();
        let sheet = run.probes.get_mut(&probe).unwrap();
        let twice = sheet.figure(&has).unwrap().clone();
        sheet.figures.push(twice.clone());
        let rows = rows_of(&run, b"{}");
        let burn = rows
            .scenarios
            .iter()
            .find(|s| s.probe == probe && s.load == "burn")
            .unwrap();
        let value = |name: &str| {
            let found: Vec<f64> = burn
                .figures
                .iter()
                .filter(|f| f.name == name)
                .map(|f| f.value)
                .collect();
            assert_eq!(found.len(), 1, "{name}: {:?}", burn.figures);
            found[0]
        };
        assert_eq!(value("work:burn"), 900.0);
        assert_eq!(value("work:burn#2"), 450.0);
        assert_eq!(value(&twice.key), value(&format!("{}#2", twice.key)));
    }
}
