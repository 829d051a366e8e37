//! Parsers for the /proc files feelbench reads. Each takes the /proc root
//! directory; errors name the file and the offending line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A /proc file could not be read or understood.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    /// The file could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A line did not have the expected shape.
    #[error("{path}: cannot parse line {line:?}")]
    Parse { path: PathBuf, line: String },
}

pub(crate) fn read(path: PathBuf) -> Result<(PathBuf, String), ProcError> {
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok((path, text)),
        Err(error) => Err(ProcError::Read { path, error }),
    }
}

/// The fields of /proc/meminfo, in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meminfo(BTreeMap<String, u64>);

impl Meminfo {
    /// The value of `key` in bytes; `None` when this kernel lacks the key.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.0.get(key).copied()
    }
}

/// Reads `<proc_root>/meminfo`.
pub fn read_meminfo(proc_root: &Path) -> Result<Meminfo, ProcError> {
    let (path, text) = read(proc_root.join("meminfo"))?;
    let mut fields = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let parsed = line.split_once(':').and_then(|(key, rest)| {
            let mut words = rest.split_whitespace();
            let value: u64 = words.next()?.parse().ok()?;
            let scale = match words.next() {
                Some("kB") => 1024,
                None => 1,
                Some(_) => return None,
            };
            Some((key.trim().to_string(), value * scale))
        });
        let (key, value) = parsed.ok_or_else(|| ProcError::Parse {
            path: path.clone(),
            line: line.to_string(),
        })?;
        fields.insert(key, value);
    }
    Ok(Meminfo(fields))
}

/// The CPU model name from `<proc_root>/cpuinfo`; `Ok(None)` when the file has
/// no such line (as on some architectures).
pub fn read_cpu_model(proc_root: &Path) -> Result<Option<String>, ProcError> {
    let (_, text) = read(proc_root.join("cpuinfo"))?;
    Ok(text.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == "model name").then(|| value.trim().to_string())
    }))
}

/// Storage I/O a process caused, from `<proc_root>/<pid>/io`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessIo {
    /// Bytes it caused to be fetched from storage.
    pub read_bytes: u64,
    /// Bytes it caused to be sent to storage (counted when pages are dirtied).
    pub write_bytes: u64,
}

/// Reads `<proc_root>/<pid>/io` (`pid` may be `self`).
pub fn read_process_io(proc_root: &Path, pid: &str) -> Result<ProcessIo, ProcError> {
    let (path, text) = read(proc_root.join(pid).join("io"))?;
    let field = |key: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))
            .and_then(|value| value.trim().parse::<u64>().ok())
            .ok_or_else(|| ProcError::Parse {
                path: path.clone(),
                line: format!("{key}: (missing or not a number)"),
            })
    };
    Ok(ProcessIo {
        read_bytes: field("read_bytes")?,
        write_bytes: field("write_bytes")?,
    })
}

/// Clock ticks per second of the times in /proc/PID/stat.
pub fn clock_ticks_per_s() -> u64 {
    // SAFETY: sysconf takes a constant and has no side effects.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as u64
    } else {
        100
    }
}

/// The fields of /proc/PID/stat that feelbench uses; proc(5) numbers them
/// from 1, as the comments here do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessStat {
    /// (1) The process id.
    pub pid: u32,
    /// (2) The command name, without the parentheses around it.
    pub comm: String,
    /// (3) The state: `R` running, `S` sleeping, `Z` zombie, `X` dead, ...
    pub state: char,
    /// (4) The parent's pid.
    pub ppid: u32,
    /// (9) The kernel's `PF_*` flags.
    pub flags: u64,
    /// (14) Time in user mode, in clock ticks.
    pub utime_ticks: u64,
    /// (15) Time in kernel mode, in clock ticks.
    pub stime_ticks: u64,
    /// (16) User time of the children it waited for, in clock ticks.
    pub cutime_ticks: u64,
    /// (17) Kernel time of the children it waited for, in clock ticks.
    pub cstime_ticks: u64,
    /// (22) Start time after boot, in clock ticks: with `pid`, names the
    /// process across pid reuse.
    pub start_ticks: u64,
}

impl ProcessStat {
    /// Parses the text of /proc/PID/stat; `None` when it has not that shape.
    pub fn parse(text: &str) -> Option<Self> {
        // The command name may hold spaces and parentheses; it runs from the
        // first '(' to the last ')', and the numbered fields resume after it.
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let fields: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
        let number = |field: usize| fields.get(field - 3)?.parse::<u64>().ok();
        let mut state = fields.first()?.chars();
        Some(Self {
            pid: text[..open].trim().parse().ok()?,
            comm: text.get(open + 1..close)?.to_string(),
            state: state.next().filter(|_| state.next().is_none())?,
            ppid: u32::try_from(number(4)?).ok()?,
            flags: number(9)?,
            utime_ticks: number(14)?,
            stime_ticks: number(15)?,
            cutime_ticks: number(16)?,
            cstime_ticks: number(17)?,
            start_ticks: number(22)?,
        })
    }

    /// Whether the process still runs: neither a zombie nor dead.
    pub fn is_running(&self) -> bool {
        !matches!(self.state, 'Z' | 'X')
    }

    /// Its own CPU time, in clock ticks.
    pub fn own_cpu_ticks(&self) -> u64 {
        self.utime_ticks + self.stime_ticks
    }

    /// Its own CPU time and that of the children it waited for, in clock ticks.
    pub fn cpu_ticks_with_reaped(&self) -> u64 {
        self.own_cpu_ticks() + self.cutime_ticks + self.cstime_ticks
    }
}

/// The process of thread `tid` below `proc_root` (its `Tgid`), while it
/// lives.
pub fn process_of_thread(proc_root: &Path, tid: i32) -> Option<i32> {
    if tid <= 0 {
        return None;
    }
    let status = std::fs::read_to_string(proc_root.join(tid.to_string()).join("status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Tgid:"))?
        .trim()
        .parse()
        .ok()
}

/// Reads `<proc_root>/<pid>/stat`.
pub fn read_process_stat(proc_root: &Path, pid: u32) -> Result<ProcessStat, ProcError> {
    let (path, text) = read(proc_root.join(pid.to_string()).join("stat"))?;
    ProcessStat::parse(&text).ok_or_else(|| ProcError::Parse {
        path,
        line: text.trim_end().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    #[test]
    fn meminfo_is_read_in_bytes() {
        let dir = proc_with(&[(
            "meminfo",
            "MemTotal:       24590040 kB\nSwapTotal:             0 kB\nHugePages_Total:       0\n",
        )]);
        let m = read_meminfo(dir.path()).unwrap();
        assert_eq!(m.get("MemTotal"), Some(24_590_040 * 1024));
        assert_eq!(m.get("SwapTotal"), Some(0));
        assert_eq!(m.get("HugePages_Total"), Some(0));
        assert_eq!(m.get("MemAvailable"), None);
    }

    #[test]
    fn malformed_meminfo_names_the_line() {
        let dir = proc_with(&[("meminfo", "MemTotal: lots kB\n")]);
        let err = read_meminfo(dir.path()).unwrap_err().to_string();
        assert!(err.contains("MemTotal: lots kB"), "{err}");
    }

    #[test]
    fn missing_file_is_an_error_with_the_path() {
        let dir = proc_with(&[]);
        let err = read_meminfo(dir.path()).unwrap_err().to_string();
        assert!(err.contains("meminfo"), "{err}");
    }

    #[test]
    fn process_io_is_read_and_damage_reported() {
        let dir = proc_with(&[]);
        std::fs::create_dir(dir.path().join("42")).unwrap();
        std::fs::write(
            dir.path().join("42/io"),
            "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n",
        )
        .unwrap();
        let io = read_process_io(dir.path(), "42").unwrap();
        assert_eq!((io.read_bytes, io.write_bytes), (4096, 8192));
        std::fs::write(dir.path().join("42/io"), "rchar: 10\n").unwrap();
        assert!(read_process_io(dir.path(), "42")
            .unwrap_err()
            .to_string()
            .contains("read_bytes"));
        assert!(read_process_io(dir.path(), "7").is_err());
    }

    #[test]
    fn process_stat_is_parsed_whatever_the_command_name() {
        let text = "19750 (a (b) c) R 19744 19744 18475 0 -1 4194304 99 0 0 0 7 3 5 6 20 0 1 0 664750 3133440 512";
        let stat = ProcessStat::parse(text).unwrap();
        assert_eq!(
            (stat.pid, stat.comm.as_str(), stat.state),
            (19750, "a (b) c", 'R')
        );
        assert_eq!(
            (stat.ppid, stat.flags, stat.start_ticks),
            (19744, 4194304, 664_750)
        );
        assert_eq!(
            (stat.own_cpu_ticks(), stat.cpu_ticks_with_reaped()),
            (10, 21)
        );
        assert!(stat.is_running());
        let zombie = text.replace(") R ", ") Z ");
        assert!(!ProcessStat::parse(&zombie).unwrap().is_running());
        assert_eq!(ProcessStat::parse("1 (init) S 0"), None, "too short");
        assert_eq!(ProcessStat::parse(&text.replace(") R ", ") RR ")), None);
        assert_eq!(ProcessStat::parse("no name here"), None);
    }

    #[test]
    fn process_stat_errors_name_the_file() {
        let dir = proc_with(&[]);
        std::fs::create_dir(dir.path().join("7")).unwrap();
        std::fs::write(dir.path().join("7/stat"), "7 (x) S 1\n").unwrap();
        let err = read_process_stat(dir.path(), 7).unwrap_err().to_string();
        assert!(err.contains("7/stat") && err.contains("7 (x) S 1"), "{err}");
        assert!(matches!(
            read_process_stat(dir.path(), 8),
            Err(ProcError::Read { .. })
        ));
    }

    #[test]
    fn cpu_model_present_or_absent() {
        let dir = proc_with(&[("cpuinfo", "processor\t: 0\nmodel name\t: AMD EPYC 7B13\n")]);
        assert_eq!(
            read_cpu_model(dir.path()).unwrap().as_deref(),
            Some("AMD EPYC 7B13")
        );
        let dir = proc_with(&[("cpuinfo", "processor\t: 0\nCPU part\t: 0xd0c\n")]);
        assert_eq!(read_cpu_model(dir.path()).unwrap(), None);
    }
}
