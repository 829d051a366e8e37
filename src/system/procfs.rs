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

/// Parent pid and CPU ticks (utime + stime + cutime + cstime: its own and
/// that of the children it reaped) from the text of /proc/PID/stat.
fn parse_stat(text: &str) -> Option<(u32, u64)> {
    // The command name may hold spaces and parentheses; fields resume after the last ')'.
    let fields: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
    let number = |i: usize| fields.get(i)?.parse::<u64>().ok();
    let ppid = number(1)? as u32;
    Some((ppid, number(11)? + number(12)? + number(13)? + number(14)?))
}

/// CPU ticks used by process `root` and all its live descendants (including
/// what they reaped from children that already ended).
pub fn tree_cpu_ticks(proc_root: &Path, root: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir(proc_root) else {
        return 0;
    };
    let processes: Vec<(u32, u32, u64)> = entries
        .filter_map(|e| {
            let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let text =
                std::fs::read_to_string(proc_root.join(pid.to_string()).join("stat")).ok()?;
            let (ppid, ticks) = parse_stat(&text)?;
            Some((pid, ppid, ticks))
        })
        .collect();
    let mut tree = vec![root];
    let mut total = 0;
    while let Some(pid) = tree.pop() {
        for &(child, ppid, ticks) in &processes {
            if child == pid {
                total += ticks;
            }
            if ppid == pid && child != root {
                tree.push(child);
            }
        }
    }
    total
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
    fn tree_cpu_adds_up_a_process_and_its_descendants() {
        let dir = proc_with(&[]);
        let stat = |pid: u32, ppid: u32, ticks: u64| {
            std::fs::create_dir(dir.path().join(pid.to_string())).unwrap();
            let text =
                format!("{pid} (a (b) c) S {ppid} 1 1 0 -1 0 0 0 0 0 {ticks} 1 2 3 20 0 1 0");
            std::fs::write(dir.path().join(pid.to_string()).join("stat"), text).unwrap();
        };
        stat(10, 1, 100); // root: 100 + 1 + 2 + 3
        stat(11, 10, 10); // child
        stat(12, 11, 20); // grandchild
        stat(13, 1, 1000); // unrelated
        assert_eq!(tree_cpu_ticks(dir.path(), 10), 106 + 16 + 26);
        assert_eq!(tree_cpu_ticks(dir.path(), 99), 0);
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
