//! The tracepoints' ids and record layouts, read from tracefs. Where tracefs
//! is not mounted it is mounted *detached* (`fsopen`/`fsmount`): the mount
//! is reachable only through a file descriptor of this process, is never
//! attached to any directory, and disappears when that descriptor closes,
//! so no run, however it ends, leaves a mount behind.

use crate::system::detached;
use std::fs::File;
use std::io::Read as _;
use std::os::fd::OwnedFd;
use std::path::Path;

/// Where tracefs is usually mounted.
const MOUNTED: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Why a tracepoint's description could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TracefsError {
    #[error("tracefs is not mounted and cannot be mounted: {0}")]
    Mount(std::io::Error),
    #[error("cannot read tracefs {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("tracefs {path}: no field {field}")]
    Field { path: String, field: String },
    #[error("tracefs {path}: not a number: {text:?}")]
    Number { path: String, text: String },
}

/// Where tracefs's files are read from.
pub enum Tracefs {
    /// A directory where it is mounted already.
    Mounted(&'static str),
    /// A detached mount of our own.
    Detached(OwnedFd),
}

impl Tracefs {
    /// tracefs as mounted, or a detached mount of it.
    pub fn open() -> Result<Self, TracefsError> {
        if let Some(dir) = MOUNTED
            .into_iter()
            .find(|dir| Path::new(dir).join("events").is_dir())
        {
            return Ok(Self::Mounted(dir));
        }
        detached::mount("tracefs")
            .map(Self::Detached)
            .map_err(TracefsError::Mount)
    }

    /// The text of the file at `path` inside tracefs.
    pub fn read(&self, path: &str) -> Result<String, TracefsError> {
        let error = |error| TracefsError::Read {
            path: path.to_string(),
            error,
        };
        let mut file = match self {
            Self::Mounted(dir) => File::open(Path::new(dir).join(path)).map_err(error)?,
            Self::Detached(fd) => detached::open_at(fd, path, libc::O_RDONLY).map_err(error)?,
        };
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(error)?;
        Ok(text)
    }

    /// The id and field layout of tracepoint `event` (`sched/sched_switch`).
    pub fn event(&self, event: &str) -> Result<EventFormat, TracefsError> {
        let id_path = format!("events/{event}/id");
        let text = self.read(&id_path)?;
        let id = text.trim().parse().map_err(|_| TracefsError::Number {
            path: id_path,
            text,
        })?;
        let format_path = format!("events/{event}/format");
        Ok(EventFormat {
            id,
            path: format_path.clone(),
            text: self.read(&format_path)?,
        })
    }
}

/// A tracepoint's id and its `format` file.
pub struct EventFormat {
    pub id: u16,
    path: String,
    text: String,
}

/// Where a field lies in a tracepoint's raw record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
}

impl EventFormat {
    /// The field `name`, from a line such as
    /// `field:pid_t prev_pid; offset:24; size:4; signed:1;`.
    pub fn field(&self, name: &str) -> Result<Field, TracefsError> {
        let missing = || TracefsError::Field {
            path: self.path.clone(),
            field: name.to_string(),
        };
        self.text
            .lines()
            .find_map(|line| parse_field(line, name))
            .ok_or_else(missing)
    }
}

fn parse_field(line: &str, name: &str) -> Option<Field> {
    let mut parts = line.trim().split(';').map(str::trim);
    let declaration = parts.next()?.strip_prefix("field:")?;
    let declared = declaration.split_whitespace().last()?;
    let declared = declared.split('[').next()?;
    if declared != name {
        return None;
    }
    let mut value = |key: &str| -> Option<usize> {
        parts
            .next()?
            .strip_prefix(key)?
            .strip_prefix(':')?
            .parse()
            .ok()
    };
    Some(Field {
        offset: value("offset")?,
        size: value("size")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch
ID: 316
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;
";

    #[test]
    fn finds_fields_by_name_arrays_included() {
        let format = EventFormat {
            id: 316,
            path: "events/sched/sched_switch/format".into(),
            text: SWITCH.into(),
        };
        assert_eq!(
            format.field("prev_comm").unwrap(),
            Field {
                offset: 8,
                size: 16
            }
        );
        assert_eq!(format.field("prev_state").unwrap().offset, 32);
        let err = format.field("next_pid").unwrap_err().to_string();
        assert!(err.contains("no field next_pid"), "{err}");
    }

    #[test]
    fn reads_the_real_sched_switch_format_when_root() {
        if !nix::unistd::geteuid().is_root() {
            crate::system::skip("mounting tracefs needs root");
            return;
        }
        let tracefs = Tracefs::open().expect("tracefs");
        let switch = tracefs.event("sched/sched_switch").expect("sched_switch");
        assert!(switch.id > 0);
        assert!(switch.field("next_pid").is_ok());
    }
}
