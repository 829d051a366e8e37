//! CPU lists as the kernel writes them (`0`, `1-3`, `0,2-3`): parsing one
//! the user or /sys gives, printing it back in the same short form, and the
//! CPUs online now (`/sys/devices/system/cpu/online`). A list is stored in
//! run documents as that text.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A CPU list that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    /// The text is not a list of CPU numbers and ranges.
    #[error("{text:?} is not a CPU list: {problem} (give e.g. 0, 1-3 or 0,2)")]
    Malformed { text: String, problem: String },
    /// The list names CPUs that are not online.
    #[error("CPU {} {} not online (the online CPUs are {online})", .missing, if .missing.cpus().count() == 1 { "is" } else { "are" })]
    NotOnline { missing: CpuList, online: CpuList },
    /// The online CPUs could not be read.
    #[error("cannot read the online CPUs from {path}: {problem}")]
    Online { path: PathBuf, problem: String },
}

/// A non-empty set of CPU numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CpuList(BTreeSet<usize>);

impl CpuList {
    /// The list of `cpus`; `None` when there are none.
    pub fn from_cpus(cpus: impl IntoIterator<Item = usize>) -> Option<Self> {
        let set: BTreeSet<usize> = cpus.into_iter().collect();
        (!set.is_empty()).then_some(Self(set))
    }

    /// The CPU numbers, in increasing order.
    pub fn cpus(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().copied()
    }

    /// This list, when every CPU of it is in `online`; else which are not.
    pub fn within(self, online: &CpuList) -> Result<Self, CpuListError> {
        match Self::from_cpus(self.0.difference(&online.0).copied()) {
            None => Ok(self),
            Some(missing) => Err(CpuListError::NotOnline {
                missing,
                online: online.clone(),
            }),
        }
    }
}

/// One part of a list: a CPU number or a range `FIRST-LAST`.
fn parse_part(part: &str) -> Result<std::ops::RangeInclusive<usize>, String> {
    let number = |text: &str| {
        text.trim()
            .parse::<usize>()
            .map_err(|_| format!("{:?} is not a CPU number", text.trim()))
    };
    match part.split_once('-') {
        None => number(part).map(|cpu| cpu..=cpu),
        Some((first, last)) => {
            let (first, last) = (number(first)?, number(last)?);
            match first <= last {
                true => Ok(first..=last),
                false => Err(format!("the range {first}-{last} runs backwards")),
            }
        }
    }
}

impl std::str::FromStr for CpuList {
    type Err = CpuListError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let malformed = |problem: String| CpuListError::Malformed {
            text: text.to_string(),
            problem,
        };
        if text.trim().is_empty() {
            return Err(malformed("it is empty".to_string()));
        }
        let mut cpus = BTreeSet::new();
        for part in text.trim().split(',') {
            cpus.extend(parse_part(part).map_err(malformed)?);
        }
        Ok(Self(cpus))
    }
}

impl std::fmt::Display for CpuList {
    /// Runs of consecutive CPUs as ranges: `0-2,5`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for cpu in self.cpus() {
            match ranges.last_mut() {
                Some((_, last)) if *last + 1 == cpu => *last = cpu,
                _ => ranges.push((cpu, cpu)),
            }
        }
        let parts: Vec<String> = ranges
            .iter()
            .map(|&(first, last)| match first == last {
                true => first.to_string(),
                false => format!("{first}-{last}"),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

impl TryFrom<String> for CpuList {
    type Error = CpuListError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        text.parse()
    }
}

impl From<CpuList> for String {
    fn from(list: CpuList) -> Self {
        list.to_string()
    }
}

/// The CPUs online now, from `<sys_root>/devices/system/cpu/online`.
pub fn online(sys_root: &Path) -> Result<CpuList, CpuListError> {
    let path = sys_root.join("devices/system/cpu/online");
    let failed = |problem: String| CpuListError::Online {
        path: path.clone(),
        problem,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| failed(e.to_string()))?;
    text.parse()
        .map_err(|e: CpuListError| failed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(text: &str) -> CpuList {
        text.parse().unwrap()
    }

    #[test]
    fn single_cpus_ranges_and_mixtures_parse_and_print_short() {
        assert_eq!(list("0").cpus().collect::<Vec<_>>(), [0]);
        assert_eq!(list("1-3").cpus().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(list("0,2").cpus().collect::<Vec<_>>(), [0, 2]);
        assert_eq!(list(" 3,0-1,2\n").to_string(), "0-3");
        assert_eq!(list("5,1,1").to_string(), "1,5");
        assert_eq!(list("0-1,4-6,9").cpus().count(), 6);
    }

    #[test]
    fn malformed_lists_say_what_is_wrong() {
        for (text, problem) in [
            ("", "it is empty"),
            ("a", "\"a\" is not a CPU number"),
            ("1,", "\"\" is not a CPU number"),
            ("-1", "\"\" is not a CPU number"),
            ("3-1", "the range 3-1 runs backwards"),
            ("1-2-3", "\"2-3\" is not a CPU number"),
        ] {
            let err = text.parse::<CpuList>().unwrap_err();
            assert_eq!(
                err,
                CpuListError::Malformed {
                    text: text.into(),
                    problem: problem.into()
                },
                "{text:?}"
            );
        }
        let message = "x".parse::<CpuList>().unwrap_err().to_string();
        assert!(message.contains("give e.g. 0, 1-3 or 0,2"), "{message}");
    }

    #[test]
    fn cpus_out_of_the_online_range_are_named() {
        let online = list("0-1");
        assert_eq!(list("1").within(&online).unwrap(), list("1"));
        let err = list("1-3").within(&online).unwrap_err().to_string();
        assert_eq!(err, "CPU 2-3 are not online (the online CPUs are 0-1)");
        let err = list("4").within(&online).unwrap_err().to_string();
        assert_eq!(err, "CPU 4 is not online (the online CPUs are 0-1)");
    }

    #[test]
    fn stored_as_text() {
        let json = serde_json::to_string(&list("0,2-3")).unwrap();
        assert_eq!(json, "\"0,2-3\"");
        assert_eq!(
            serde_json::from_str::<CpuList>(&json).unwrap(),
            list("0,2-3")
        );
        assert!(serde_json::from_str::<CpuList>("\"x\"").is_err());
    }

    #[test]
    fn online_cpus_are_read_below_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let err = online(dir.path()).unwrap_err().to_string();
        assert!(err.contains("devices/system/cpu/online"), "{err}");
        let path = dir.path().join("devices/system/cpu");
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("online"), "0-1\n").unwrap();
        assert_eq!(online(dir.path()).unwrap(), list("0-1"));
        std::fs::write(path.join("online"), "garbage\n").unwrap();
        let err = online(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a CPU list"), "{err}");
    }
}
