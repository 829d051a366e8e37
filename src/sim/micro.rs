//! How the `micro` probes time LMbench's operations (`--micro-mode`): at
//! the probe's steady rhythm, or as LMbench's own programs do, so that the
//! two tables can be read side by side.

use serde::{Deserialize, Serialize};

/// How the `micro` probes time their operations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MicroMode {
    /// Each operation once every 20 ms, the operations taking turns: how
    /// an operation fares when it comes now and then, as interactive work
    /// does.
    #[default]
    Paced,
    /// LMbench's way: each operation in warm back-to-back loops, the
    /// probe and its partners on one CPU, and the page fault as LMbench's
    /// lat_pagefault gives it (a whole mapping's faults over its pages).
    Lmbench,
}

impl MicroMode {
    /// Every mode.
    pub const ALL: [MicroMode; 2] = [MicroMode::Paced, MicroMode::Lmbench];

    /// The mode called `name` on the command line.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|mode| mode.name() == name)
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            MicroMode::Paced => "paced",
            MicroMode::Lmbench => "lmbench",
        }
    }

    /// Its name, as merge and compare show it.
    pub fn describe(&self) -> String {
        self.name().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_go_by_their_names_both_ways() {
        for mode in MicroMode::ALL {
            assert_eq!(MicroMode::named(mode.name()), Some(mode));
            assert_eq!(mode.describe(), mode.name());
        }
        assert_eq!(MicroMode::named("fast"), None);
        assert_eq!(MicroMode::default(), MicroMode::Paced);
        let json = serde_json::to_string(&MicroMode::Lmbench).unwrap();
        assert_eq!(json, "\"lmbench\"");
    }
}
