//! A setting as a user writes it: `NAME=VALUE`, where NAME is one of the
//! named settings, an absolute path under /proc/sys or /sys, or a sysctl
//! (`vm.swappiness`, dots for the slashes under /proc/sys).

use super::{Kind, Setting, SettingError};
use crate::system::{blockdev, mounts};
use std::path::{Path, PathBuf};

/// Where sysctls live.
const PROC_SYS: &str = "/proc/sys";

/// The named settings, for the error that lists them.
const NAMED: &str = "iosched, thp, autogroup, governor, preempt, scx";

/// Transparent huge pages' switch.
const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// Where debugfs lets the preemption model change (CONFIG_PREEMPT_DYNAMIC).
pub const PREEMPT_MODELS: [&str; 4] = ["full", "voluntary", "none", "lazy"];

/// Parses `text` (see [`Setting::parse`]).
pub fn parse(text: &str, work_dir: &Path) -> Result<Setting, SettingError> {
    let invalid = |reason: String| SettingError::invalid(text, reason);
    let Some((name, value)) = text.split_once('=') else {
        return Err(invalid(
            "not a setting: write NAME=VALUE (a sysctl such as vm.swappiness=10, a path under /proc/sys or /sys, or one of ".to_string()
                + NAMED
                + ")",
        ));
    };
    let (name, value) = (name.trim(), value.trim());
    if value.is_empty() {
        return Err(invalid(format!("{name} is given no value")));
    }
    let label = format!("{name}={value}");
    let files = |paths: Vec<PathBuf>| Kind::Files {
        paths,
        value: value.to_string(),
    };
    let kind = match name {
        "iosched" => files(vec![iosched(work_dir).map_err(invalid)?]),
        "thp" => files(vec![existing(Path::new(THP), "/sys").map_err(invalid)?]),
        "autogroup" => files(vec![sysctl("kernel.sched_autogroup_enabled").map_err(invalid)?]),
        "governor" => files(governors().map_err(invalid)?),
        "preempt" => preempt(value).map_err(invalid)?,
        "scx" => scx(value).map_err(invalid)?,
        path if path.starts_with('/') => files(vec![under_proc_sys_or_sys(path).map_err(invalid)?]),
        sysctl_name if sysctl_name.contains('.') => files(vec![sysctl(sysctl_name).map_err(invalid)?]),
        other => {
            return Err(invalid(format!(
                "unknown setting {other:?}: the named ones are {NAMED}; a sysctl has dots (vm.swappiness), a file is a path under /proc/sys or /sys"
            )))
        }
    };
    Ok(Setting { label, kind })
}

/// The file of sysctl `name` (`vm.swappiness` is /proc/sys/vm/swappiness).
fn sysctl(name: &str) -> Result<PathBuf, String> {
    if name.contains('/') || name.split('.').any(str::is_empty) {
        return Err(format!("{name:?} is not a sysctl name"));
    }
    let path = Path::new(PROC_SYS).join(name.replace('.', "/"));
    existing(&path, PROC_SYS).map_err(|_| format!("unknown sysctl {name} (no {})", path.display()))
}

/// The file `path`, which must be under /proc/sys or /sys once its `..`
/// and links are resolved.
fn under_proc_sys_or_sys(path: &str) -> Result<PathBuf, String> {
    let root = match Path::new(path) {
        p if p.starts_with(PROC_SYS) => PROC_SYS,
        p if p.starts_with("/sys") => "/sys",
        _ => return Err(format!("{path} is not under /proc/sys or /sys")),
    };
    existing(Path::new(path), root)
}

/// `path` resolved (its `..` and links), which must be a file under `root`.
fn existing(path: &Path, root: &str) -> Result<PathBuf, String> {
    let resolved = path
        .canonicalize()
        .map_err(|e| format!("no such setting: {}: {e}", path.display()))?;
    if !resolved.starts_with(root) {
        return Err(format!(
            "{} is {}, not under {root}",
            path.display(),
            resolved.display()
        ));
    }
    if !resolved.is_file() {
        return Err(format!("{} is not a file", resolved.display()));
    }
    Ok(resolved)
}

/// The file choosing the I/O scheduler of the disk holding `work_dir`.
fn iosched(work_dir: &Path) -> Result<PathBuf, String> {
    let device = blockdev::device_of(Path::new("/proc"), work_dir)
        .ok_or_else(|| format!("cannot tell which device holds {}", work_dir.display()))?;
    let file = mounts::io_scheduler_file(Path::new("/sys"), &device).ok_or_else(|| {
        format!(
            "{} is on device {device}, which has no I/O scheduler (not a block device: tmpfs, overlay, ...)",
            work_dir.display()
        )
    })?;
    existing(&file, "/sys")
}

/// Every CPU's cpufreq governor file.
fn governors() -> Result<Vec<PathBuf>, String> {
    let cpus = Path::new("/sys/devices/system/cpu");
    let entries =
        std::fs::read_dir(cpus).map_err(|e| format!("cannot list {}: {e}", cpus.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("cpu"))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(|e| e.path().join("cpufreq/scaling_governor"))
        .filter(|p| p.is_file())
        .collect();
    if paths.is_empty() {
        return Err("this machine has no CPU frequency governor (no /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor: no cpufreq driver, as in most virtual machines)".to_string());
    }
    paths.sort();
    Ok(paths)
}

/// The preemption model `model`.
fn preempt(model: &str) -> Result<Kind, String> {
    if !PREEMPT_MODELS.contains(&model) {
        return Err(format!(
            "{model:?} is not a preemption model (one of {})",
            PREEMPT_MODELS.join(", ")
        ));
    }
    Ok(Kind::Preempt {
        model: model.to_string(),
    })
}

/// A sched_ext scheduler: a program and its arguments, split as a shell
/// splits words.
fn scx(command: &str) -> Result<Kind, String> {
    let argv = shell_words::split(command).map_err(|e| format!("cannot split {command:?}: {e}"))?;
    let Some(program) = argv.first() else {
        return Err("no scheduler program".to_string());
    };
    let path = Path::new(program);
    if !path.is_file() {
        return Err(format!("{program}: no such program"));
    }
    Ok(Kind::Scx {
        argv,
        root: PathBuf::from(super::scx::ROOT),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        let e = parse(text, Path::new("/")).unwrap_err();
        assert!(e.is_bad_input(), "{e}");
        e.to_string()
    }

    #[test]
    fn a_sysctl_is_its_file_under_proc_sys() {
        let setting = parse("vm.swappiness = 10", Path::new("/")).unwrap();
        assert_eq!(setting.label(), "vm.swappiness=10");
        assert_eq!(
            setting.kind,
            Kind::Files {
                paths: vec![PathBuf::from("/proc/sys/vm/swappiness")],
                value: "10".into()
            }
        );
        assert!(setting.needs_root());
        let autogroup = parse("autogroup=0", Path::new("/")).unwrap();
        assert!(matches!(autogroup.kind, Kind::Files { paths, .. }
            if paths == [PathBuf::from("/proc/sys/kernel/sched_autogroup_enabled")]));
    }

    #[test]
    fn unknown_names_paths_outside_and_escapes_are_refused_as_bad_input() {
        assert!(error("vm.no_such_knob=1").contains("unknown sysctl vm.no_such_knob"));
        assert!(error("vm..swappiness=1").contains("not a sysctl name"));
        assert!(error("/etc/passwd=1").contains("not under /proc/sys or /sys"));
        let escape = error("/proc/sys/../../etc/passwd=1");
        assert!(
            escape.contains("is /etc/passwd, not under /proc/sys"),
            "{escape}"
        );
        assert!(error("/sys/kernel/mm/transparent_hugepage=never").contains("not a file"));
        assert!(error("nosuch=1").contains("unknown setting \"nosuch\""));
        assert!(error("vm.swappiness").contains("write NAME=VALUE"));
        assert!(error("vm.swappiness=").contains("no value"));
        assert!(error("preempt=sometimes").contains("not a preemption model"));
        assert!(error("scx=/no/such/scx_lavd --fast").contains("no such program"));
    }

    #[test]
    fn a_link_in_sys_is_followed_and_stays_in_sys() {
        // /sys/block/* are links into /sys/devices.
        let Some(block) = std::fs::read_dir("/sys/block")
            .ok()
            .and_then(|mut d| d.next())
        else {
            crate::system::skip("no block device in /sys/block");
            return;
        };
        let scheduler = block.unwrap().path().join("queue/scheduler");
        let setting = parse(&format!("{}=none", scheduler.display()), Path::new("/")).unwrap();
        let Kind::Files { paths, .. } = setting.kind else {
            panic!("a file setting");
        };
        assert!(paths[0].starts_with("/sys/devices"), "{paths:?}");
    }
}
