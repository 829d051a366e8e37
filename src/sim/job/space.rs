//! A job's private directory (`JobSpace`), made empty and removed with
//! everything in it, and the file its stderr goes to (`StderrLog`), whose
//! last lines a failure quotes.

use super::files::JobDir;
use super::make::Make;
use super::plan::JobPlan;
use super::settings::JobCache;
use super::JobError;
use std::io::{Read as _, Seek as _};
use std::path::{Path, PathBuf};

/// Most of a failed job's stderr quoted: its last lines, up to this much.
const TAIL_LINES: usize = 5;
const TAIL_CHARS: usize = 400;

/// The file a job's stderr goes to, whose end is quoted when it fails.
#[derive(Debug, Clone)]
pub struct StderrLog {
    path: PathBuf,
}

impl StderrLog {
    /// An empty log at `path`.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        std::fs::File::create(path)?;
        Ok(Self {
            path: path.to_path_buf(),
        })
    }

    /// A handle for a process's stderr, appending to the log.
    pub fn stdio(&self) -> std::io::Result<std::fs::File> {
        std::fs::File::options().append(true).open(&self.path)
    }

    /// The last lines written to the log, on one line.
    pub fn tail(&self) -> String {
        let mut text = Vec::new();
        let read = std::fs::File::open(&self.path).and_then(|mut file| {
            let length = file.metadata()?.len();
            file.seek(std::io::SeekFrom::Start(length.saturating_sub(4096)))?;
            file.read_to_end(&mut text)
        });
        match read {
            Ok(_) => tail_of(&String::from_utf8_lossy(&text)),
            Err(_) => String::new(),
        }
    }
}

/// The last [`TAIL_LINES`] non-blank lines of `text` joined by ` / `, cut
/// to their last [`TAIL_CHARS`] characters.
fn tail_of(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let joined = lines[lines.len().saturating_sub(TAIL_LINES)..].join(" / ");
    let chars = joined.chars().count();
    match chars > TAIL_CHARS {
        true => format!(
            "…{}",
            joined.chars().skip(chars - TAIL_CHARS).collect::<String>()
        ),
        false => joined,
    }
}

/// A job's private directory: made empty, removed with everything in it
/// when dropped.
pub struct JobSpace {
    root: PathBuf,
}

impl JobSpace {
    /// Makes `root`, which must not exist yet.
    pub fn create(root: &Path) -> Result<Self, JobError> {
        std::fs::create_dir(root).map_err(|error| JobError::Setup {
            what: format!("cannot make the job's directory {}", root.display()),
            error,
        })?;
        Ok(Self {
            root: root.to_path_buf(),
        })
    }

    /// The built-in job's directory in it, with the inputs of `plan`
    /// written and left in the page cache or dropped from it (`cache`).
    pub(super) fn build_dir(&self, plan: &JobPlan, cache: JobCache) -> Result<PathBuf, JobError> {
        let build = self.root.join("build");
        let dir = JobDir::at(&build);
        let setup = |what: &str| {
            let what = format!(
                "cannot {what} the built-in job's inputs in {}",
                build.display()
            );
            move |error| JobError::Setup { what, error }
        };
        dir.write_inputs(plan).map_err(setup("write"))?;
        if cache == JobCache::Cold {
            dir.drop_inputs(plan)
                .map_err(setup("drop from the page cache"))?;
        }
        Ok(build)
    }

    /// A command's working directory in it, made empty.
    pub(super) fn work_dir(&self) -> Result<PathBuf, JobError> {
        let work = self.root.join("work");
        std::fs::create_dir(&work).map_err(|error| JobError::Setup {
            what: format!("cannot make the job's working directory {}", work.display()),
            error,
        })?;
        Ok(work)
    }

    /// A fresh log for the job's stderr.
    pub(super) fn stderr(&self) -> Result<StderrLog, JobError> {
        let path = self.root.join("stderr");
        StderrLog::create(&path).map_err(|error| JobError::Setup {
            what: format!("cannot make {}", path.display()),
            error,
        })
    }

    /// A build of the built-in job of `plan` at `loops_per_ms`, its
    /// inputs written and kept in the page cache (`jobload`'s).
    pub fn make(&self, plan: JobPlan, loops_per_ms: f64) -> Result<Make, JobError> {
        let build = self.build_dir(&plan, JobCache::Warm)?;
        Make::new(plan, &build, loops_per_ms, self.stderr()?)
    }
}

impl Drop for JobSpace {
    /// Removes the directory; what cannot be removed is said on stderr
    /// (the scenario's directory, which holds it, is removed after the
    /// scenario and warns again if it still cannot be).
    fn drop(&mut self) {
        match std::fs::remove_dir_all(&self.root) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => say!(
                "warning: cannot remove the job's directory {}: {e}",
                self.root.display()
            ),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_the_last_lines_on_one_line() {
        assert_eq!(tail_of(""), "");
        assert_eq!(tail_of("a\n\n  b  \n"), "a / b");
        let many: String = (1..=9).map(|i| format!("line {i}\n")).collect();
        assert_eq!(tail_of(&many), "line 5 / line 6 / line 7 / line 8 / line 9");
        let long = "x".repeat(1000) + "END";
        let tail = tail_of(&long);
        assert_eq!(tail.chars().count(), TAIL_CHARS + 1);
        assert!(tail.starts_with('…') && tail.ends_with("xEND"), "{tail}");
    }

    #[test]
    fn a_log_quotes_only_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let log = StderrLog::create(&dir.path().join("stderr")).unwrap();
        assert_eq!(log.tail(), "");
        let filler = "filler line\n".repeat(1000);
        std::fs::write(dir.path().join("stderr"), filler + "the error\n").unwrap();
        assert!(log.tail().ends_with("filler line / the error"));
    }

    #[test]
    fn a_space_is_made_fresh_and_removed_with_its_contents() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("job");
        let space = JobSpace::create(&root).unwrap();
        assert!(JobSpace::create(&root).is_err(), "made exclusively");
        let plan = JobPlan::new(1, 0.01);
        space.build_dir(&plan, JobCache::Cold).unwrap();
        space.work_dir().unwrap();
        space.stderr().unwrap();
        drop(space);
        assert!(!root.exists());
    }
}
