//! Readers of the system-wide counters sampled around each measurement:
//! pressure stall information (/proc/pressure/*), /proc/vmstat, /proc/stat,
//! and the CPU time of every process (/proc/PID/stat). Each takes the /proc
//! root; what a kernel does not have is `None`, a line of the wrong shape is
//! an error naming the file and the line.

use super::procfs::{read, read_process_stat, ProcError, ProcessStat};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// One line ("some" or "full") of a pressure file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PressureLine {
    pub avg10_pct: f64,
    pub avg60_pct: f64,
    pub avg300_pct: f64,
    /// Time, since boot, that tasks stalled on the resource.
    pub total_us: u64,
}

/// A pressure file: either line may be missing (older kernels lack cpu "full").
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Pressure {
    pub some: Option<PressureLine>,
    pub full: Option<PressureLine>,
}

/// Reads `<proc_root>/pressure/<resource>` (`cpu`, `memory` or `io`);
/// `Ok(None)` when the kernel has no PSI (no file, or PSI turned off).
pub fn read_pressure(proc_root: &Path, resource: &str) -> Result<Option<Pressure>, ProcError> {
    read_pressure_file(&proc_root.join("pressure").join(resource))
}

/// Reads the pressure file at `path` (/proc/pressure/*, or a cgroup's
/// `cpu.pressure`, `memory.pressure`, `io.pressure`); `Ok(None)` when it
/// does not exist or PSI is turned off.
pub fn read_pressure_file(path: &Path) -> Result<Option<Pressure>, ProcError> {
    let (path, text) = match read(path.to_path_buf()) {
        Ok(read) => read,
        Err(ProcError::Read { error, .. })
            if error.kind() == std::io::ErrorKind::NotFound
                || error.raw_os_error() == Some(libc::EOPNOTSUPP) =>
        {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    let mut pressure = Pressure::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (kind, parsed) = parse_pressure_line(line).ok_or_else(|| parse_error(&path, line))?;
        match kind {
            "some" => pressure.some = Some(parsed),
            _ => pressure.full = Some(parsed),
        }
    }
    Ok(Some(pressure))
}

fn parse_pressure_line(line: &str) -> Option<(&str, PressureLine)> {
    let mut words = line.split_whitespace();
    let kind = words.next().filter(|k| *k == "some" || *k == "full")?;
    let mut fields = BTreeMap::new();
    for word in words {
        let (key, value) = word.split_once('=')?;
        fields.insert(key, value);
    }
    let pct = |key: &str| fields.get(key)?.parse::<f64>().ok();
    Some((
        kind,
        PressureLine {
            avg10_pct: pct("avg10")?,
            avg60_pct: pct("avg60")?,
            avg300_pct: pct("avg300")?,
            total_us: fields.get("total")?.parse().ok()?,
        },
    ))
}

fn parse_error(path: &Path, line: &str) -> ProcError {
    ProcError::Parse {
        path: path.to_path_buf(),
        line: line.to_string(),
    }
}

/// Reads every counter of `<proc_root>/vmstat`.
pub fn read_vmstat(proc_root: &Path) -> Result<BTreeMap<String, u64>, ProcError> {
    let (path, text) = read(proc_root.join("vmstat"))?;
    let mut counters = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut words = line.split_whitespace();
        let parsed = (|| {
            let key = words.next()?;
            let value: u64 = words.next()?.parse().ok()?;
            words.next().is_none().then_some((key.to_string(), value))
        })();
        let (key, value) = parsed.ok_or_else(|| parse_error(&path, line))?;
        counters.insert(key, value);
    }
    Ok(counters)
}

/// The system-wide CPU time split of /proc/stat's `cpu` line, in clock ticks.
/// The fields after `idle` came with later kernels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTicks {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: Option<u64>,
    pub irq: Option<u64>,
    pub softirq: Option<u64>,
    pub steal: Option<u64>,
}

impl CpuTicks {
    /// Every field added up (guest time is already counted in user).
    pub fn total(&self) -> u64 {
        let optional = [self.iowait, self.irq, self.softirq, self.steal];
        self.user + self.nice + self.system + self.idle + optional.iter().flatten().sum::<u64>()
    }
}

/// Percentage of all CPU time stolen by the hypervisor between two samples;
/// `None` when the kernel has no steal column, no time passed, or a counter
/// went backwards.
pub fn steal_pct(before: &CpuTicks, after: &CpuTicks) -> Option<f64> {
    let total = after.total().checked_sub(before.total())?;
    let steal = after.steal?.checked_sub(before.steal?)?;
    (total > 0).then(|| steal as f64 * 100.0 / total as f64)
}

/// The counters of /proc/stat that telemetry uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatCounters {
    pub cpu: CpuTicks,
    /// Context switches since boot.
    pub ctxt: Option<u64>,
    /// Interrupts serviced since boot (the first number of the `intr` line).
    pub intr: Option<u64>,
}

/// Reads `<proc_root>/stat`.
pub fn read_stat(proc_root: &Path) -> Result<StatCounters, ProcError> {
    let (path, text) = read(proc_root.join("stat"))?;
    let mut cpu = None;
    let (mut ctxt, mut intr) = (None, None);
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let single = |words: &mut std::str::SplitWhitespace| -> Result<u64, ProcError> {
            words
                .next()
                .and_then(|w| w.parse().ok())
                .ok_or_else(|| parse_error(&path, line))
        };
        match words.next() {
            Some("cpu") => {
                cpu = Some(parse_cpu_ticks(words).ok_or_else(|| parse_error(&path, line))?)
            }
            Some("ctxt") => ctxt = Some(single(&mut words)?),
            Some("intr") => intr = Some(single(&mut words)?),
            _ => {}
        }
    }
    let cpu = cpu.ok_or_else(|| parse_error(&path, "(no cpu line)"))?;
    Ok(StatCounters { cpu, ctxt, intr })
}

/// The numbers after a `cpu` or `cpuN` word of /proc/stat; `None` when one
/// is not a number or fewer than four are there.
fn parse_cpu_ticks(words: std::str::SplitWhitespace) -> Option<CpuTicks> {
    let numbers: Vec<u64> = words.map(|w| w.parse().ok()).collect::<Option<_>>()?;
    let at = |i: usize| numbers.get(i).copied();
    Some(CpuTicks {
        user: at(0)?,
        nice: at(1)?,
        system: at(2)?,
        idle: at(3)?,
        iowait: at(4),
        irq: at(5),
        softirq: at(6),
        steal: at(7),
    })
}

/// The CPU time split of each CPU (/proc/stat's `cpuN` lines), indexed by
/// CPU number; a CPU without a line (offline) is `None`.
pub fn read_stat_per_cpu(proc_root: &Path) -> Result<Vec<Option<CpuTicks>>, ProcError> {
    let (path, text) = read(proc_root.join("stat"))?;
    let mut cpus: Vec<Option<CpuTicks>> = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(cpu) = words.next().and_then(|w| w.strip_prefix("cpu")) else {
            continue;
        };
        if cpu.is_empty() {
            continue;
        }
        let number: usize = cpu.parse().map_err(|_| parse_error(&path, line))?;
        let ticks = parse_cpu_ticks(words).ok_or_else(|| parse_error(&path, line))?;
        if cpus.len() <= number {
            cpus.resize(number + 1, None);
        }
        cpus[number] = Some(ticks);
    }
    Ok(cpus)
}

/// The kernel's flag for kernel threads in /proc/PID/stat.
const PF_KTHREAD: u64 = 0x0020_0000;

/// The CPU time of one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessTicks {
    pub pid: u32,
    /// The parent's pid.
    pub ppid: u32,
    /// Start time since boot, in clock ticks: with `pid`, names the process
    /// across pid reuse.
    pub start_ticks: u64,
    pub comm: String,
    /// Its own user + system time (not its reaped children's), in clock ticks.
    pub cpu_ticks: u64,
    pub kernel_thread: bool,
}

impl From<ProcessStat> for ProcessTicks {
    fn from(stat: ProcessStat) -> Self {
        Self {
            pid: stat.pid,
            ppid: stat.ppid,
            start_ticks: stat.start_ticks,
            cpu_ticks: stat.own_cpu_ticks(),
            kernel_thread: stat.flags & PF_KTHREAD != 0,
            comm: stat.comm,
        }
    }
}

/// The CPU time of every process below `proc_root` for which `keep` is true
/// (processes that end while being read are left out).
pub fn read_processes(proc_root: &Path, mut keep: impl FnMut(u32) -> bool) -> Vec<ProcessTicks> {
    let Ok(entries) = std::fs::read_dir(proc_root) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| keep(pid))
        .filter_map(|pid| read_process_stat(proc_root, pid).ok())
        .map(ProcessTicks::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRESSURE_CPU: &str = include_str!("testdata/pressure_cpu");
    const PRESSURE_IO: &str = include_str!("testdata/pressure_io");
    const VMSTAT: &str = include_str!("testdata/vmstat");
    const VMSTAT_OLD: &str = include_str!("testdata/vmstat_old");
    const STAT: &str = include_str!("testdata/stat");

    fn proc_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn steal_is_a_share_of_all_cpu_time_and_absent_on_old_kernels() {
        let ticks = |idle, steal| CpuTicks {
            user: 100,
            nice: 0,
            system: 50,
            idle,
            iowait: Some(0),
            irq: Some(0),
            softirq: Some(0),
            steal,
        };
        let before = ticks(1000, Some(10));
        assert_eq!(steal_pct(&before, &ticks(1196, Some(14))), Some(2.0));
        assert_eq!(
            steal_pct(&ticks(1196, Some(14)), &before),
            None,
            "backwards"
        );
        assert_eq!(steal_pct(&before, &before), None, "no time passed");
        assert_eq!(steal_pct(&ticks(1000, None), &ticks(1100, None)), None);
    }

    #[test]
    fn pressure_of_this_machine_is_read() {
        let dir = proc_with(&[("pressure/cpu", PRESSURE_CPU), ("pressure/io", PRESSURE_IO)]);
        let cpu = read_pressure(dir.path(), "cpu").unwrap().unwrap();
        let some = cpu.some.unwrap();
        assert_eq!(some.total_us, 989_275_295);
        assert_eq!(some.avg10_pct, 0.13);
        assert_eq!(cpu.full.unwrap().total_us, 0);
        let io = read_pressure(dir.path(), "io").unwrap().unwrap();
        assert_eq!(io.full.unwrap().total_us, 344_930_381);
    }

    #[test]
    fn pressure_absent_or_without_full_is_none() {
        let dir = proc_with(&[(
            "pressure/cpu",
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=12\n",
        )]);
        let cpu = read_pressure(dir.path(), "cpu").unwrap().unwrap();
        assert_eq!(cpu.some.unwrap().total_us, 12);
        assert_eq!(cpu.full, None);
        assert_eq!(read_pressure(dir.path(), "memory").unwrap(), None);
        let none = proc_with(&[]);
        assert_eq!(read_pressure(none.path(), "cpu").unwrap(), None);
    }

    #[test]
    fn malformed_pressure_names_file_and_line() {
        let dir = proc_with(&[("pressure/io", "some avg10=0.00 avg60=0.00 total=x\n")]);
        let err = read_pressure(dir.path(), "io").unwrap_err().to_string();
        assert!(
            err.contains("pressure/io") && err.contains("total=x"),
            "{err}"
        );
        let dir = proc_with(&[("pressure/io", "half avg10=0 avg60=0 avg300=0 total=1\n")]);
        assert!(read_pressure(dir.path(), "io").is_err());
    }

    #[test]
    fn vmstat_of_this_machine_and_of_an_older_kernel() {
        let dir = proc_with(&[("vmstat", VMSTAT)]);
        let v = read_vmstat(dir.path()).unwrap();
        assert_eq!(v.get("pswpin"), Some(&3_808_781));
        assert_eq!(v.get("allocstall_movable"), Some(&2));
        let dir = proc_with(&[("vmstat", VMSTAT_OLD)]);
        let v = read_vmstat(dir.path()).unwrap();
        assert!(v.contains_key("pgfault"));
        assert!(!v.keys().any(|k| k.starts_with("allocstall")));
    }

    #[test]
    fn malformed_or_missing_vmstat_is_an_error_with_path() {
        let dir = proc_with(&[("vmstat", "pgfault 12\npswpin lots\n")]);
        let err = read_vmstat(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("vmstat") && err.contains("pswpin lots"),
            "{err}"
        );
        let dir = proc_with(&[]);
        assert!(read_vmstat(dir.path())
            .unwrap_err()
            .to_string()
            .contains("vmstat"));
    }

    #[test]
    fn stat_of_this_machine_is_read() {
        let dir = proc_with(&[("stat", STAT)]);
        let s = read_stat(dir.path()).unwrap();
        assert_eq!(s.cpu.user, 351_990);
        assert_eq!(s.cpu.steal, Some(8224));
        assert!(s.ctxt.unwrap() > 0 && s.intr.unwrap() > 0);
    }

    #[test]
    fn stat_of_an_old_kernel_lacks_the_later_fields() {
        let dir = proc_with(&[("stat", "cpu  10 0 5 100\ncpu0 10 0 5 100\n")]);
        let s = read_stat(dir.path()).unwrap();
        assert_eq!((s.cpu.idle, s.cpu.iowait, s.cpu.steal), (100, None, None));
        assert_eq!((s.ctxt, s.intr), (None, None));
    }

    #[test]
    fn malformed_stat_names_the_line() {
        let dir = proc_with(&[("stat", "cpu  10 0 five 100\n")]);
        let err = read_stat(dir.path()).unwrap_err().to_string();
        assert!(err.contains("cpu  10 0 five 100"), "{err}");
        let dir = proc_with(&[("stat", "cpu  1 2 3 4\nctxt\n")]);
        assert!(read_stat(dir.path())
            .unwrap_err()
            .to_string()
            .contains("ctxt"));
        let dir = proc_with(&[("stat", "ctxt 5\n")]);
        assert!(read_stat(dir.path()).is_err());
    }

    #[test]
    fn process_ticks_are_own_cpu_time_and_kernel_threads_are_told() {
        let text = "19750 (a (b) c) R 19744 19744 18475 0 -1 4194304 99 0 0 0 7 3 5 5 20 0 1 0 664750 3133440";
        let p = ProcessTicks::from(ProcessStat::parse(text).unwrap());
        assert_eq!(
            (p.pid, p.comm.as_str(), p.cpu_ticks, p.start_ticks),
            (19750, "a (b) c", 10, 664_750)
        );
        assert!(!p.kernel_thread);
        let kthread = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 1 0 0 20 0 1 0 2 0";
        assert!(ProcessTicks::from(ProcessStat::parse(kthread).unwrap()).kernel_thread);
    }

    #[test]
    fn each_cpu_is_read_by_its_number_and_a_missing_one_is_none() {
        let dir = proc_with(&[("stat", STAT)]);
        let cpus = read_stat_per_cpu(dir.path()).unwrap();
        assert_eq!(cpus.len(), 2);
        let cpu1 = cpus[1].unwrap();
        assert_eq!(
            (cpu1.user, cpu1.softirq, cpu1.steal),
            (182_170, Some(2242), Some(4122))
        );
        let dir = proc_with(&[("stat", "cpu  1 2 3 4\ncpu2 1 2 3 4 5\nctxt 5\n")]);
        let cpus = read_stat_per_cpu(dir.path()).unwrap();
        assert_eq!(
            (cpus.len(), cpus[0], cpus[2].unwrap().iowait),
            (3, None, Some(5))
        );
        let dir = proc_with(&[("stat", "cpu0 1 2 3\n")]);
        let err = read_stat_per_cpu(dir.path()).unwrap_err().to_string();
        assert!(err.contains("cpu0 1 2 3"), "{err}");
        let dir = proc_with(&[("stat", "cpuX 1 2 3 4\n")]);
        assert!(read_stat_per_cpu(dir.path()).is_err());
    }

    #[test]
    fn a_cgroup_pressure_file_is_read_by_its_path() {
        let dir = proc_with(&[(
            "g/memory.pressure",
            include_str!("testdata/pressure_memory"),
        )]);
        let memory = read_pressure_file(&dir.path().join("g/memory.pressure")).unwrap();
        assert!(memory.unwrap().full.is_some());
        assert_eq!(
            read_pressure_file(&dir.path().join("g/io.pressure")).unwrap(),
            None
        );
    }
}
