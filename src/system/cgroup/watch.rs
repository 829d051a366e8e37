//! Watching the cgroups a run's processes are in: which they are, on which
//! hierarchy ([`groups_of`], from `/proc/PID/cgroup` and the mounts), and
//! their counters at one moment ([`GroupFiles`]: `cpu.stat` throttling,
//! and the `cpu`, `memory` and `io` pressure files where the group has
//! them). What a group has no file for is `None`, never 0.

use super::hierarchy::read_mounts;
use super::{io_error, CgroupError};
use crate::system::counters::{read_pressure_file, Pressure};
use crate::system::procfs::ProcError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The v1 controllers whose groups are watched: `cpu` for its throttling,
/// `memory` because a probe that shares its memory joins the loads' group.
const V1_WATCHED: [&str; 2] = ["cpu", "memory"];

/// A cgroup some of the run's processes are in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchedGroup {
    /// Its hierarchy: `cgroup v2`, or `cgroup v1` with its controllers
    /// (`cgroup v1 cpu`).
    pub hierarchy: String,
    pub path: PathBuf,
    /// Whose group it is: `probe`, `loads`, or both.
    pub roles: Vec<String>,
}

/// The watched cgroups (see [`V1_WATCHED`]; every cgroup2 one) of each
/// `(pid, role)`, below the mounts of `<proc_root>/self/mounts`, one entry
/// per group with the roles of every process in it, in the order found.
pub fn groups_of(
    proc_root: &Path,
    members: &[(u32, &str)],
) -> Result<Vec<WatchedGroup>, CgroupError> {
    let mounts = read_mounts(proc_root)?;
    let mut groups: Vec<WatchedGroup> = Vec::new();
    for &(pid, role) in members {
        let file = proc_root.join(pid.to_string()).join("cgroup");
        let text = std::fs::read_to_string(&file).map_err(io_error("read", &file))?;
        for line in text.lines() {
            let mut fields = line.splitn(3, ':');
            let (Some(_), Some(controllers), Some(relative)) =
                (fields.next(), fields.next(), fields.next())
            else {
                return Err(CgroupError::Parse {
                    path: file,
                    line: line.to_string(),
                });
            };
            let found = if controllers.is_empty() {
                mounts
                    .iter()
                    .find(|m| m.fs_type == "cgroup2")
                    .map(|m| ("cgroup v2".to_string(), &m.dir))
            } else {
                let wanted: Vec<&str> = controllers.split(',').collect();
                let watched = wanted.iter().any(|c| V1_WATCHED.contains(c));
                mounts
                    .iter()
                    .filter(|_| watched)
                    .find(|m| {
                        m.fs_type == "cgroup"
                            && wanted.iter().all(|c| m.options.split(',').any(|o| o == *c))
                    })
                    .map(|m| (format!("cgroup v1 {controllers}"), &m.dir))
            };
            let Some((hierarchy, dir)) = found else {
                continue;
            };
            let path = match relative.trim_start_matches('/') {
                "" => dir.clone(),
                relative => dir.join(relative),
            };
            match groups.iter_mut().find(|g| g.path == path) {
                Some(group) if group.roles.iter().any(|r| r == role) => {}
                Some(group) => group.roles.push(role.to_string()),
                None => groups.push(WatchedGroup {
                    hierarchy,
                    path,
                    roles: vec![role.to_string()],
                }),
            }
        }
    }
    Ok(groups)
}

/// The CFS bandwidth counters of a group's `cpu.stat`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Throttling {
    /// Enforcement periods that passed, and those in which it was throttled.
    pub nr_periods: u64,
    pub nr_throttled: u64,
    /// Time its tasks were throttled (v2 `throttled_usec`, v1
    /// `throttled_time`), ns.
    pub throttled_ns: u64,
}

/// A group's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupCounters {
    /// `None` where the group has no `cpu.stat` with throttling (the root
    /// of cgroup2, a group without the cpu controller).
    pub throttling: Option<Throttling>,
    /// `cpu.pressure`, `memory.pressure`, `io.pressure` (cgroup2 only).
    pub cpu: Option<Pressure>,
    pub memory: Option<Pressure>,
    pub io: Option<Pressure>,
}

/// The counter files a group has, looked up once: the window's sampler
/// reads a group ten times a second, and v1 groups have no pressure files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupFiles {
    cpu_stat: Option<PathBuf>,
    cpu: Option<PathBuf>,
    memory: Option<PathBuf>,
    io: Option<PathBuf>,
}

impl GroupFiles {
    /// The files of the group at `dir` that exist now.
    pub fn at(dir: &Path) -> Self {
        let file = |name: &str| Some(dir.join(name)).filter(|p| p.exists());
        Self {
            cpu_stat: file("cpu.stat"),
            cpu: file("cpu.pressure"),
            memory: file("memory.pressure"),
            io: file("io.pressure"),
        }
    }

    /// Reads the counters of those files.
    pub fn read(&self) -> Result<GroupCounters, ProcError> {
        let throttling = match &self.cpu_stat {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|error| ProcError::Read {
                    path: path.clone(),
                    error,
                })?;
                parse_throttling(path, &text)?
            }
            None => None,
        };
        let pressure = |path: &Option<PathBuf>| match path {
            Some(path) => read_pressure_file(path),
            None => Ok(None),
        };
        Ok(GroupCounters {
            throttling,
            cpu: pressure(&self.cpu)?,
            memory: pressure(&self.memory)?,
            io: pressure(&self.io)?,
        })
    }
}

/// The throttling counters of a `cpu.stat` text; `None` when it has none.
fn parse_throttling(path: &Path, text: &str) -> Result<Option<Throttling>, ProcError> {
    let (mut periods, mut throttled, mut throttled_ns) = (None, None, None);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let parsed = line
            .split_once(' ')
            .and_then(|(key, value)| Some((key, value.trim().parse::<u64>().ok()?)));
        let Some((key, value)) = parsed else {
            return Err(ProcError::Parse {
                path: path.to_path_buf(),
                line: line.to_string(),
            });
        };
        match key {
            "nr_periods" => periods = Some(value),
            "nr_throttled" => throttled = Some(value),
            "throttled_usec" => throttled_ns = Some(value.saturating_mul(1000)),
            "throttled_time" => throttled_ns = Some(value),
            _ => {}
        }
    }
    Ok((|| {
        Some(Throttling {
            nr_periods: periods?,
            nr_throttled: throttled?,
            throttled_ns: throttled_ns?,
        })
    })())
}

#[cfg(test)]
mod tests {
    use super::super::tests::fake;
    use super::*;

    /// This machine's layout: v1 cpu and memory hierarchies beside cgroup2.
    const MOUNTS: &str = "\
cgroup @/cg/cpu cgroup rw,relatime,cpu 0 0
cgroup @/cg/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup @/cg/memory cgroup rw,relatime,memory 0 0
cgroup @/cg/systemd cgroup rw,relatime,name=systemd 0 0
cgroup2 @/cg/unified cgroup2 rw,relatime 0 0
";
    /// `/proc/PID/cgroup` of a probe that joined the loads' memory group.
    const PROBE: &str = "9:name=systemd:/\n4:memory:/fb-1\n2:cpuacct:/\n1:cpu:/\n0::/\n";
    /// ... and of a load, also in a cpu group of the run's.
    const LOAD: &str = "9:name=systemd:/\n4:memory:/fb-1\n2:cpuacct:/\n1:cpu:/fb-1\n0::/\n";
    /// cgroup v1's `cpu.stat` and the root of cgroup2's, as this kernel
    /// writes them.
    const V1_STAT: &str =
        "nr_periods 10\nnr_throttled 3\nthrottled_time 4500000\nnr_bursts 0\nburst_time 0\n";
    const V2_ROOT_STAT: &str = "usage_usec 3680959368\nuser_usec 3184482377\n";
    const V2_STAT: &str = "usage_usec 5\nnr_periods 8\nnr_throttled 2\nthrottled_usec 1500\n";

    #[test]
    fn the_groups_of_the_probe_and_the_loads_are_found_once_with_their_roles() {
        let dir = fake(
            MOUNTS,
            &[("proc/10/cgroup", PROBE), ("proc/11/cgroup", LOAD)],
        );
        let groups = groups_of(&dir.path().join("proc"), &[(10, "probe"), (11, "loads")]).unwrap();
        let cg = dir.path().join("cg");
        let found: Vec<(&str, PathBuf, Vec<&str>)> = groups
            .iter()
            .map(|g| {
                let roles = g.roles.iter().map(String::as_str).collect();
                (g.hierarchy.as_str(), g.path.clone(), roles)
            })
            .collect();
        assert_eq!(
            found,
            [
                (
                    "cgroup v1 memory",
                    cg.join("memory/fb-1"),
                    vec!["probe", "loads"]
                ),
                ("cgroup v1 cpu", cg.join("cpu"), vec!["probe"]),
                ("cgroup v2", cg.join("unified"), vec!["probe", "loads"]),
                ("cgroup v1 cpu", cg.join("cpu/fb-1"), vec!["loads"]),
            ]
        );
    }

    #[test]
    fn a_missing_or_malformed_cgroup_file_names_it() {
        let dir = fake(MOUNTS, &[("proc/10/cgroup", "garbage\n")]);
        let proc_root = dir.path().join("proc");
        let err = groups_of(&proc_root, &[(10, "probe")])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("10/cgroup") && err.contains("garbage"),
            "{err}"
        );
        let err = groups_of(&proc_root, &[(12, "loads")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("12/cgroup"), "{err}");
    }

    #[test]
    fn throttling_is_read_in_ns_from_either_version_and_absent_where_not_kept() {
        let dir = fake(
            "",
            &[
                ("v1/cpu.stat", V1_STAT),
                ("root/cpu.stat", V2_ROOT_STAT),
                (
                    "root/memory.pressure",
                    include_str!("../testdata/pressure_memory"),
                ),
                ("v2/cpu.stat", V2_STAT),
            ],
        );
        let v1 = GroupFiles::at(&dir.path().join("v1")).read().unwrap();
        assert_eq!(
            v1.throttling,
            Some(Throttling {
                nr_periods: 10,
                nr_throttled: 3,
                throttled_ns: 4_500_000
            })
        );
        assert_eq!(
            (v1.cpu, v1.memory, v1.io),
            (None, None, None),
            "v1 has no pressure files"
        );
        let root = GroupFiles::at(&dir.path().join("root")).read().unwrap();
        assert_eq!(root.throttling, None, "the cgroup2 root is never throttled");
        assert_eq!(root.memory.unwrap().some.unwrap().total_us, 41_286_452);
        let v2 = GroupFiles::at(&dir.path().join("v2")).read().unwrap();
        assert_eq!(v2.throttling.unwrap().throttled_ns, 1_500_000);
        assert_eq!(
            GroupFiles::at(&dir.path().join("gone")).read().unwrap(),
            GroupCounters::default()
        );
    }

    #[test]
    fn a_file_gone_since_it_was_looked_up_is_an_error_naming_it() {
        let dir = fake("", &[("g/cpu.stat", V1_STAT)]);
        let files = GroupFiles::at(&dir.path().join("g"));
        std::fs::remove_file(dir.path().join("g/cpu.stat")).unwrap();
        let err = files.read().unwrap_err().to_string();
        assert!(err.contains("g/cpu.stat"), "{err}");
    }

    #[test]
    fn a_malformed_cpu_stat_names_the_line() {
        let dir = fake("", &[("g/cpu.stat", "nr_periods ten\n")]);
        let err = GroupFiles::at(&dir.path().join("g"))
            .read()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cpu.stat") && err.contains("nr_periods ten"),
            "{err}"
        );
    }
}
