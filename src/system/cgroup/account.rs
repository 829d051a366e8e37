//! Cgroups that only account CPU time: one per `cmd:` load worker, which
//! moves into it before it starts the command, so that everything the
//! command starts (children, daemons that left its process group and
//! session, processes that already exited) is in it and the kernel's own
//! accounting of the cgroup is the load's whole CPU time. It is made below
//! the worker's own cgroup in the first hierarchy that accounts CPU (a
//! cgroup2 hierarchy's `cpu.stat`, else a v1 `cpuacct` hierarchy's
//! `cpuacct.usage`), so the loads' limits still hold for what runs in it.
//! Its name carries the worker's pid and start time, so what a killed
//! worker left is found and removed ([`remove_orphaned_accounts`]).

use super::hierarchy::{read_mounts, Mount};
use super::{io_error, join, procs_file, remove, CgroupError};
use std::path::{Path, PathBuf};

/// Name of an accounting cgroup, before its maker's pid and start time.
const PREFIX: &str = "feelbench-cmd-";

/// Where a hierarchy keeps a cgroup's CPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UsageFile {
    /// cgroup2 `cpu.stat`, line `usage_usec`.
    CpuStat,
    /// cgroup v1 `cpuacct.usage`, in nanoseconds.
    CpuacctUsage,
}

/// A hierarchy that accounts CPU time, and the calling process's cgroup in it.
struct Accounting {
    usage: UsageFile,
    own_cgroup: PathBuf,
    root: PathBuf,
}

/// An accounting cgroup, removed (what is still in it killed) when dropped.
#[derive(Debug)]
pub struct CpuAccount {
    path: PathBuf,
    /// The cgroup it was made in, where the maker goes back before removing it.
    parent: PathBuf,
    usage: UsageFile,
}

/// The hierarchies that account CPU time, cgroup2 first, with the calling
/// process's cgroup in each, after `<proc_root>/self/mounts` and
/// `<proc_root>/self/cgroup`.
fn accounting_hierarchies(proc_root: &Path) -> Result<Vec<Accounting>, CgroupError> {
    let mounts = read_mounts(proc_root)?;
    let path = proc_root.join("self/cgroup");
    let own = std::fs::read_to_string(&path).map_err(io_error("read", &path))?;
    // Lines `ID:CONTROLLERS:PATH`; cgroup2's is `0::PATH`.
    let own_path = |v2: bool| {
        own.lines().find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            let wanted = match v2 {
                true => controllers.is_empty(),
                false => controllers.split(',').any(|c| c == "cpuacct"),
            };
            wanted.then(|| path.trim_start_matches('/').to_string())
        })
    };
    let found = |mount: &Mount, v2: bool, usage| {
        Some(Accounting {
            usage,
            own_cgroup: mount.dir.join(own_path(v2)?),
            root: mount.dir.clone(),
        })
    };
    let v2 = mounts
        .iter()
        .filter(|m| m.fs_type == "cgroup2")
        .filter_map(|m| found(m, true, UsageFile::CpuStat));
    let v1 = mounts
        .iter()
        .filter(|m| m.fs_type == "cgroup" && m.options.split(',').any(|o| o == "cpuacct"))
        .filter_map(|m| found(m, false, UsageFile::CpuacctUsage));
    Ok(v2.chain(v1).collect())
}

/// Makes the accounting cgroup of the process `pid` started at
/// `start_ticks` (the caller) below the caller's own cgroup in the first
/// hierarchy that accounts CPU time; the error says why none could be made
/// (no such hierarchy, no permission).
pub fn make_cpu_account(
    proc_root: &Path,
    pid: u32,
    start_ticks: u64,
) -> Result<CpuAccount, CgroupError> {
    let Some(hierarchy) = accounting_hierarchies(proc_root)?.into_iter().next() else {
        return Err(CgroupError::NoController {
            controller: "cpuacct",
            option: "accounting a cmd: load",
            found: "no cgroup2 hierarchy and no v1 hierarchy with cpuacct is mounted".into(),
        });
    };
    let path = hierarchy
        .own_cgroup
        .join(format!("{PREFIX}{pid}-{start_ticks}"));
    std::fs::create_dir(&path).map_err(io_error("make the cgroup", &path))?;
    Ok(CpuAccount {
        path,
        parent: hierarchy.own_cgroup,
        usage: hierarchy.usage,
    })
}

impl CpuAccount {
    /// The file a process writes its pid into to join the cgroup.
    pub fn procs_file(&self) -> PathBuf {
        procs_file(&self.path)
    }

    /// The CPU time of everything that ran in the cgroup so far.
    pub fn usage_ns(&self) -> Result<u64, CgroupError> {
        let (file, key, ns_per_unit) = match self.usage {
            UsageFile::CpuStat => ("cpu.stat", Some("usage_usec"), 1_000),
            UsageFile::CpuacctUsage => ("cpuacct.usage", None, 1),
        };
        let path = self.path.join(file);
        let text = std::fs::read_to_string(&path).map_err(io_error("read", &path))?;
        let value = match key {
            Some(key) => text.lines().find_map(|line| {
                let (name, value) = line.split_once(' ')?;
                (name == key).then_some(value)
            }),
            None => Some(text.as_str()),
        };
        value
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|units| units * ns_per_unit)
            .ok_or_else(|| CgroupError::Parse {
                path,
                line: text.trim_end().to_string(),
            })
    }
}

impl Drop for CpuAccount {
    /// Moves the calling process back to the cgroup the account was made
    /// in (it may have joined it), then kills what is left in the account
    /// and removes it. If the move fails, the account is left for
    /// [`remove_orphaned_accounts`], as removing it would kill the caller.
    fn drop(&mut self) {
        let outcome = join(&procs_file(&self.parent)).and_then(|()| remove(&self.path));
        if let Err(e) = outcome {
            say!("warning: {e}");
        }
    }
}

/// Kills what is in, and removes, the accounting cgroups whose maker is no
/// longer running (`running(pid, start_ticks)` says), looking where makers
/// make them: below the caller's own cgroup and the `feelbench-*` cgroups
/// at the top of each accounting hierarchy (those of the loads). Returns one
/// line per cgroup, for the user.
pub fn remove_orphaned_accounts(
    proc_root: &Path,
    running: impl Fn(u32, u64) -> bool,
) -> Vec<String> {
    let Ok(hierarchies) = accounting_hierarchies(proc_root) else {
        return Vec::new();
    };
    let mut done = Vec::new();
    for hierarchy in hierarchies {
        let mut parents = vec![hierarchy.own_cgroup];
        parents.extend(children_named(&hierarchy.root, |name| {
            name.starts_with("feelbench-")
        }));
        parents.dedup();
        for parent in parents {
            for account in children_named(&parent, |name| orphaned(name, &running)) {
                done.push(match remove(&account) {
                    Ok(()) => format!(
                        "removed the cgroup {} of a load that ended",
                        account.display()
                    ),
                    Err(e) => format!("could not remove a load's cgroup: {e}"),
                });
            }
        }
    }
    done
}

/// The directories in `dir` whose name `wanted` accepts.
fn children_named(dir: &Path, wanted: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            (e.file_type().ok()?.is_dir() && wanted(&name)).then(|| e.path())
        })
        .collect()
}

/// Whether `name` is an accounting cgroup whose maker is not running.
fn orphaned(name: &str, running: impl Fn(u32, u64) -> bool) -> bool {
    let Some((pid, start)) = name
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.split_once('-'))
    else {
        return false;
    };
    match (pid.parse(), start.parse()) {
        (Ok(pid), Ok(start)) => !running(pid, start),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake system with `mounts`, the caller's cgroups `own` (as
    /// `/proc/self/cgroup` lists them) and `files` (as `cgroup::tests::fake`).
    fn fake(mounts: &str, own: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let files: Vec<(&str, &str)> = [("proc/self/cgroup", own)]
            .into_iter()
            .chain(files.iter().copied())
            .collect();
        super::super::tests::fake(mounts, &files)
    }

    /// This machine's layout: v1 controllers, a cgroup2 hierarchy beside them.
    const HYBRID: &str = "\
cgroup @/cg/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup2 @/cg/unified cgroup2 rw,relatime 0 0
";

    #[test]
    fn made_below_the_own_cgroup_in_cgroup2_first_and_read_in_ns() {
        let dir = fake(
            HYBRID,
            "2:cpuacct:/\n0::/feelbench-9\n",
            &[("cg/unified/feelbench-9/cgroup.procs", "")],
        );
        let proc = dir.path().join("proc");
        let account = make_cpu_account(&proc, 42, 7).unwrap();
        let path = dir.path().join("cg/unified/feelbench-9/feelbench-cmd-42-7");
        assert_eq!(account.procs_file(), path.join("cgroup.procs"));
        std::fs::write(
            path.join("cpu.stat"),
            "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n",
        )
        .unwrap();
        assert_eq!(account.usage_ns().unwrap(), 1_500_000);
        std::fs::write(path.join("cpu.stat"), "user_usec 1000\n").unwrap();
        let err = account.usage_ns().unwrap_err().to_string();
        assert!(
            err.contains("cpu.stat") && err.contains("user_usec"),
            "{err}"
        );
        // Dropping it goes back to the parent and removes it.
        std::fs::remove_file(path.join("cpu.stat")).unwrap();
        drop(account);
        assert!(!path.exists());
        let parent_procs = dir.path().join("cg/unified/feelbench-9/cgroup.procs");
        assert_eq!(
            std::fs::read_to_string(parent_procs).unwrap(),
            std::process::id().to_string()
        );
    }

    #[test]
    fn v1_cpuacct_when_there_is_no_cgroup2() {
        let dir = fake(
            "cgroup @/cg/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n",
            "3:cpu,cpuacct:/\n",
            &[("cg/cpu,cpuacct/cgroup.procs", "")],
        );
        let account = make_cpu_account(&dir.path().join("proc"), 42, 7).unwrap();
        let path = dir.path().join("cg/cpu,cpuacct/feelbench-cmd-42-7");
        std::fs::write(path.join("cpuacct.usage"), "123456789\n").unwrap();
        assert_eq!(account.usage_ns().unwrap(), 123_456_789);
        std::fs::remove_file(path.join("cpuacct.usage")).unwrap();
    }

    #[test]
    fn no_accounting_hierarchy_is_an_error_that_says_so() {
        let dir = fake(
            "cgroup @/cg/memory cgroup rw,memory 0 0\n",
            "4:memory:/\n",
            &[],
        );
        let err = make_cpu_account(&dir.path().join("proc"), 1, 1).unwrap_err();
        assert!(err.to_string().contains("no cgroup2 hierarchy"), "{err}");
    }

    #[test]
    fn only_the_accounts_of_makers_that_are_gone_are_removed() {
        let dir = fake(HYBRID, "0::/\n2:cpuacct:/\n", &[]);
        let unified = dir.path().join("cg/unified");
        for name in [
            "feelbench-cmd-10-1",             // maker gone
            "feelbench-cmd-11-1",             // maker running
            "feelbench-9/feelbench-cmd-12-5", // in a load cgroup, maker gone
            "feelbench-cmd-x-1",              // not an account
            "other/feelbench-cmd-13-1",       // not where accounts are made
        ] {
            std::fs::create_dir_all(unified.join(name)).unwrap();
        }
        let lines = remove_orphaned_accounts(&dir.path().join("proc"), |pid, start| {
            (pid, start) == (11, 1)
        });
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(!unified.join("feelbench-cmd-10-1").exists());
        assert!(!unified.join("feelbench-9/feelbench-cmd-12-5").exists());
        for kept in [
            "feelbench-cmd-11-1",
            "feelbench-cmd-x-1",
            "other/feelbench-cmd-13-1",
        ] {
            assert!(unified.join(kept).exists(), "{kept}");
        }
    }
}
