//! The method versions a run records: for each probe and load it used, the
//! version of what that probe or load measures (`ProbeDef.method`,
//! `LoadDef.method`, raised whenever what it measures changes). Runs whose
//! versions differ are not comparable: `compare` lists the difference,
//! `merge` refuses it, and the store's series key holds the versions, so
//! `history` and `regressions` cut a series where they change.
//! Documents written before versions were recorded (feelbench 0.1.0) have
//! none; every probe and load of theirs reads as version 0, the method
//! before the first version.

use super::schema::RunDocument;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The method version of each probe and load a run used, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Methods {
    pub probes: BTreeMap<String, u32>,
    pub loads: BTreeMap<String, u32>,
}

impl Methods {
    /// The union of `all`'s versions (a merge of runs that agree where they
    /// overlap); `None` when none of them records versions.
    pub fn union<'a>(all: impl IntoIterator<Item = Option<&'a Methods>>) -> Option<Methods> {
        all.into_iter().flatten().fold(None, |union, m| {
            let mut union: Methods = union.unwrap_or_default();
            union.probes.extend(m.probes.clone());
            union.loads.extend(m.loads.clone());
            Some(union)
        })
    }
}

/// Whether a method version is a probe's or a load's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Probe,
    Load,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Probe => "probe",
            Kind::Load => "load",
        }
    }
}

/// The method version of the probe or load `name` in `run`: as the run
/// recorded it, 0 in a run that recorded none, `None` when the run
/// recorded versions but did not use it.
pub fn version_of(run: &RunDocument, kind: Kind, name: &str) -> Option<u32> {
    let Some(methods) = &run.methods else {
        return Some(0);
    };
    let versions = match kind {
        Kind::Probe => &methods.probes,
        Kind::Load => &methods.loads,
    };
    versions.get(name).copied()
}

/// A probe or load whose method version differs between runs that all
/// used it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodDifference {
    pub kind: Kind,
    pub name: String,
    /// Each run's version, in run order.
    pub versions: Vec<u32>,
}

impl MethodDifference {
    /// `probe audio`, `load burn`.
    pub fn what(&self) -> String {
        format!("{} {}", self.kind.word(), self.name)
    }
}

/// The probes and loads every one of `runs` used (a run without versions
/// counts as using every one) whose method versions differ, probes first,
/// each in name order.
pub fn differences(runs: &[&RunDocument]) -> Vec<MethodDifference> {
    let mut named: Vec<(Kind, &str)> = Vec::new();
    for methods in runs.iter().filter_map(|r| r.methods.as_ref()) {
        named.extend(methods.probes.keys().map(|n| (Kind::Probe, n.as_str())));
        named.extend(methods.loads.keys().map(|n| (Kind::Load, n.as_str())));
    }
    named.sort_unstable();
    named.dedup();
    named
        .into_iter()
        .filter_map(|(kind, name)| {
            let versions: Option<Vec<u32>> =
                runs.iter().map(|r| version_of(r, kind, name)).collect();
            let versions = versions?;
            versions
                .iter()
                .any(|v| *v != versions[0])
                .then(|| MethodDifference {
                    kind,
                    name: name.to_string(),
                    versions,
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::fixture;

    #[test]
    fn a_run_without_versions_reads_as_version_0_for_every_probe_and_load() {
        let mut old = fixture::run();
        old.methods = None;
        assert_eq!(version_of(&old, Kind::Probe, "audio"), Some(0));
        assert_eq!(version_of(&old, Kind::Load, "burn"), Some(0));
        let new = fixture::run();
        assert_eq!(version_of(&new, Kind::Probe, "audio"), Some(1));
        assert_eq!(version_of(&new, Kind::Probe, "x"), None);
    }

    #[test]
    fn a_document_of_the_previous_release_reads_as_version_0() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1-run.json");
        let old = crate::document::file::read_run(&path, &crate::probe::sheet_of).unwrap();
        assert_eq!(old.methods, None);
        assert_eq!(old.tool.commit, None);
        assert_eq!(version_of(&old, Kind::Probe, "x"), Some(0));
        assert_eq!(version_of(&old, Kind::Load, "burn"), Some(0));
    }

    #[test]
    fn only_versions_of_what_every_run_used_are_compared() {
        let mut other = fixture::run();
        let methods = other.methods.as_mut().unwrap();
        methods.probes.insert("x".into(), 7);
        methods.loads.insert("burn".into(), 2);
        let runs = [fixture::run(), other];
        let d = differences(&[&runs[0], &runs[1]]);
        assert_eq!(
            d,
            [MethodDifference {
                kind: Kind::Load,
                name: "burn".into(),
                versions: vec![1, 2],
            }]
        );
        assert_eq!(d[0].what(), "load burn");
    }

    #[test]
    fn a_run_without_versions_differs_from_one_with_them() {
        let mut old = fixture::run();
        old.methods = None;
        let runs = [old, fixture::run()];
        let d = differences(&[&runs[0], &runs[1]]);
        let what: Vec<String> = d.iter().map(MethodDifference::what).collect();
        assert_eq!(
            what,
            [
                "probe audio",
                "probe gaming",
                "load burn",
                "load cmd",
                "load none",
                "load video"
            ]
        );
        assert!(d.iter().all(|d| d.versions == [0, 1]), "{d:?}");
        assert!(differences(&[&runs[0], &runs[0]]).is_empty());
    }
}
