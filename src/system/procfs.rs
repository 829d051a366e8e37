//! Parsers for the /proc files feelbench reads. Each takes the /proc root
//! directory; errors name the file and the offending line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A /proc file could not be read or understood.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A line did not have the expected shape.
    #[error("{path}: cannot parse line {line:?}")]
    Parse { path: PathBuf, line: String },
}

fn read(path: PathBuf) -> Result<(PathBuf, String), ProcError> {
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok((path, text)),
        Err(source) => Err(ProcError::Read { path, source }),
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
