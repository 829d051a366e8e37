//! The rt-app workloads of a run, as a settings group: what the `rtapp`
//! probe measured and what the `rtapp` load ran, recorded in the run so
//! that runs of other files never merge or compare as alike.

use super::model::Workload;
use serde::{Deserialize, Serialize};

/// The workloads of a run's `rtapp` probe and `rtapp` load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RtappSettings {
    /// The workload the `rtapp` probe measures (`--probe rtapp:SPEC`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Workload>,
    /// The workload the `rtapp` load runs (`--load rtapp:SPEC`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<Workload>,
}

impl RtappSettings {
    /// One line for settings that differ: each workload's source and the
    /// start of its file's SHA-256.
    pub fn describe(&self) -> String {
        let one = |role: &str, w: &Option<Workload>| match w {
            Some(w) => format!(
                "{role} {} ({})",
                w.source,
                &w.sha256[..w.sha256.len().min(12)]
            ),
            None => format!("no {role}"),
        };
        format!("{}, {}", one("probe", &self.probe), one("load", &self.load))
    }
}
