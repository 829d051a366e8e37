//! Reading and writing run documents: atomic writes (temp file + rename) and
//! reads that tell a foreign, corrupt or too-new file apart.

use super::schema::{RunDocument, SCHEMA_FAMILY, SCHEMA_MAJOR};
use super::v1::SheetLookup;
use crate::system::atomic::write_atomically;
use anyhow::Context as _;
use std::path::{Path, PathBuf};

/// A file that could not be used as a run document. The messages name the
/// file; the cause, where there is one, is the error's source (so a chain
/// printed with `{:#}` says it once).
#[derive(Debug, thiserror::Error)]
pub enum RunFileError {
    /// There is no file at `path`.
    #[error("cannot read {path}: there is no such file")]
    Missing { path: PathBuf },
    /// The file is there but could not be read.
    #[error("cannot read {path}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{path} is not JSON")]
    NotJson {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// The file is JSON of something else.
    #[error("{path} is not a feelbench run (no \"schema\": \"{SCHEMA_FAMILY}/N\" field)")]
    Foreign { path: PathBuf },
    /// The file is a run of a schema newer than this feelbench reads.
    #[error("{path} has schema {found}, newer than this feelbench reads ({SCHEMA_FAMILY}/{SCHEMA_MAJOR}); use a newer feelbench")]
    TooNew { path: PathBuf, found: String },
    /// The file says it is a run but does not hold one.
    #[error("{path} is a damaged feelbench run")]
    Damaged {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// Writes `run` as pretty JSON to `path`, atomically.
pub fn write_run(path: &Path, run: &RunDocument) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(run).context("serialising the run")?;
    text.push('\n');
    Ok(write_atomically(path, text.as_bytes())?)
}

/// Reads a run document, checking its schema family and major version
/// first; a version 1 document is upgraded, with the declarations of its
/// probes from `sheets`.
pub fn read_run(path: &Path, sheets: SheetLookup) -> Result<RunDocument, RunFileError> {
    let text = std::fs::read_to_string(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => RunFileError::Missing {
            path: path.to_path_buf(),
        },
        _ => RunFileError::Read {
            path: path.to_path_buf(),
            source,
        },
    })?;
    parse_run(path, &text, sheets)
}

/// Reads a run document from `text`, the contents of `path` (named in
/// errors), as [`read_run`] does.
pub fn parse_run(
    path: &Path,
    text: &str,
    sheets: SheetLookup,
) -> Result<RunDocument, RunFileError> {
    let path = path.to_path_buf();
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|source| RunFileError::NotJson {
            path: path.clone(),
            source,
        })?;
    let schema = value.get("schema").and_then(|s| s.as_str()).unwrap_or("");
    let major = schema
        .strip_prefix(SCHEMA_FAMILY)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|v| v.split('.').next())
        .and_then(|v| v.parse::<u32>().ok());
    match major {
        None => Err(RunFileError::Foreign { path }),
        Some(m) if m > SCHEMA_MAJOR => Err(RunFileError::TooNew {
            path,
            found: schema.to_string(),
        }),
        Some(major) => {
            let damaged = |source| RunFileError::Damaged {
                path: path.clone(),
                source,
            };
            let value = match major {
                1 => super::v1::upgrade(value, sheets).map_err(damaged)?,
                _ => value,
            };
            serde_json::from_value(value).map_err(damaged)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_corrupt_and_newer_files_are_told_apart() {
        let p = Path::new("x.json");
        let parse_run = |p: &Path, text: &str| parse_run(p, text, &|_: &str| None);
        assert!(matches!(
            parse_run(p, "{oops"),
            Err(RunFileError::NotJson { .. })
        ));
        assert!(matches!(
            parse_run(p, r#"{"name": "something else"}"#),
            Err(RunFileError::Foreign { .. })
        ));
        assert!(matches!(
            parse_run(p, r#"{"schema": "feelbench.run/3"}"#),
            Err(RunFileError::TooNew { .. })
        ));
        for version in [1, 2] {
            let text = format!(r#"{{"schema": "feelbench.run/{version}"}}"#);
            assert!(matches!(
                parse_run(p, &text),
                Err(RunFileError::Damaged { .. })
            ));
        }
    }
}
