//! The options of the store's commands: which store (`--store`), and
//! `runs`, `store import` and `store annotate`.

use crate::commands::compare::RunSource;
use crate::commands::store::{RunsFormat, RunsSettings, StoreTask};
use crate::exit::UsageError;
use crate::store::location::without_argument_passwords;
use crate::store::query::RunFilter;
use crate::store::StoreLocation;
use clap::{Args, Subcommand, ValueEnum};
use std::path::PathBuf;

/// `--store`: which store a command reads or writes.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// The store: a SQLite file's path, or a postgres:// URL [default:
    /// $FEELBENCH_STORE, else $XDG_DATA_HOME/feelbench/store.sqlite].
    #[arg(long = "store", value_name = "PATH|URL", value_parser = LocationParser)]
    pub store: Option<StoreLocation>,
}

impl StoreArgs {
    /// The store named, else the default one.
    pub fn location(self) -> Result<StoreLocation, UsageError> {
        match self.store {
            Some(location) => Ok(location),
            None => StoreLocation::default_location()
                .map_err(UsageError::new)?
                .ok_or_else(|| {
                    UsageError::new("no store: set HOME or XDG_DATA_HOME, or give --store PATH")
                }),
        }
    }
}

/// `--store`'s value parser: a store named on the command line. Its error
/// says what is wrong without the value, which may hold a password (clap's
/// own error for a value it cannot use repeats the value).
#[derive(Debug, Clone, Copy)]
pub struct LocationParser;

impl clap::builder::TypedValueParser for LocationParser {
    type Value = StoreLocation;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<StoreLocation, clap::Error> {
        let option = arg.and_then(clap::Arg::get_long).unwrap_or("store");
        let location = match value.to_str() {
            Some(text) => StoreLocation::parse(text),
            None => Err("it is not valid UTF-8".to_string()),
        };
        location.map_err(|why| {
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value for --{option}: {why}\n"),
            )
            .with_cmd(cmd)
        })
    }
}

/// The command line parsed, as `Cli::parse` does, except that an error of
/// clap's that repeats an argument holding a PostgreSQL URL (a URL given
/// where an option or a file was expected) shows it without its password.
pub fn parse_command_line() -> super::Cli {
    <super::Cli as clap::Parser>::try_parse().unwrap_or_else(|error| {
        let said = error.render().to_string();
        let hidden = without_argument_passwords(&said);
        if hidden == said {
            error.exit()
        }
        eprint!("{hidden}");
        std::process::exit(error.exit_code())
    })
}

/// `feelbench store ...`.
#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Add run files written before the store existed (or elsewhere); a
    /// directory adds every *.json in it. Runs the store has are skipped.
    Import {
        /// Run files and directories of run files.
        #[arg(required = true, value_name = "FILE|DIR")]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Cut a run's series from that run on ("BIOS update"): regressions
    /// never compare values across an annotation.
    Annotate {
        /// The run from which the note holds (its id, or the start of it).
        run: String,
        /// What changed.
        note: String,
        /// Cut only the series whose key starts with KEY, as `history
        /// --series` takes it (`feelbench runs` shows each run's series; a
        /// start that several series share is refused) [default: every
        /// series of the run's machine].
        #[arg(long = "series", value_name = "KEY")]
        series: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// Which runs of the store: the filters `runs`, `history` and the other
/// readers of the store share.
#[derive(Debug, Args)]
pub struct RunFilterArgs {
    /// Runs of this machine: a hostname, or the start of a fingerprint.
    #[arg(long = "machine", value_name = "HOST|FINGERPRINT")]
    machine: Option<String>,
    /// Runs whose kernel release contains TEXT.
    #[arg(long = "kernel", value_name = "TEXT")]
    kernel: Option<String>,
    /// Runs whose comment contains TEXT.
    #[arg(long = "comment", value_name = "TEXT")]
    comment: Option<String>,
    /// Runs of this suite.
    #[arg(long = "suite", value_name = "NAME")]
    suite: Option<String>,
    /// Runs started on or after this date (2026-11-27, or an RFC 3339 time).
    #[arg(long = "since", value_name = "DATE", value_parser = parse_date)]
    since: Option<i64>,
    /// Runs started before this date.
    #[arg(long = "until", value_name = "DATE", value_parser = parse_date)]
    until: Option<i64>,
    /// Only the newest N runs: of all the runs listed in `runs`, of each
    /// series in `history`, `regressions` and `export`.
    #[arg(long = "last", value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    last: Option<u32>,
}

impl RunFilterArgs {
    /// The filter these options give.
    pub fn filter(self) -> RunFilter {
        RunFilter {
            machine: self.machine,
            kernel: self.kernel,
            comment: self.comment,
            suite: self.suite,
            series: None,
            since_unix: self.since,
            until_unix: self.until,
            last: self.last.map(|n| n as usize),
        }
    }
}

/// Options of `feelbench runs`.
#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(flatten)]
    filter: RunFilterArgs,
    /// Output format.
    #[arg(long = "format", value_enum, default_value_t = RunsFormatChoice::Table)]
    format: RunsFormatChoice,
    #[command(flatten)]
    store: StoreArgs,
}

/// Formats of `feelbench runs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RunsFormatChoice {
    Table,
    Csv,
    Json,
}

impl RunsArgs {
    /// The settings of `feelbench runs`.
    pub fn settings(self) -> Result<RunsSettings, UsageError> {
        Ok(RunsSettings {
            store: self.store.location()?,
            filter: self.filter.filter(),
            format: match self.format {
                RunsFormatChoice::Table => RunsFormat::Table,
                RunsFormatChoice::Csv => RunsFormat::Csv,
                RunsFormatChoice::Json => RunsFormat::Json,
            },
        })
    }
}

impl StoreCommand {
    /// The settings of `feelbench store ...`.
    pub fn settings(self) -> Result<StoreTask, UsageError> {
        Ok(match self {
            StoreCommand::Import { paths, store } => StoreTask::Import {
                paths,
                store: store.location()?,
            },
            StoreCommand::Annotate {
                run,
                note,
                series,
                store,
            } => StoreTask::Annotate {
                run,
                note,
                series,
                store: store.location()?,
            },
        })
    }
}

/// Seconds since the epoch of a date (`2026-11-27`) or an RFC 3339 time.
pub fn parse_date(text: &str) -> Result<i64, String> {
    let full = match text.len() {
        10 => format!("{text}T00:00:00Z"),
        _ => text.to_string(),
    };
    humantime::parse_rfc3339_weak(&full)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64)
        .ok_or_else(|| format!("{text} is not a date: give 2026-11-27 or 2026-11-27T08:00:00Z"))
}

/// What a run named to `compare` is: an existing file; else a query when
/// it has `=`; else a file when it looks like one (a `/`, `.json`), so a
/// missing file is said as such; else a run id of the store.
pub fn run_source(text: &str) -> Result<RunSource, UsageError> {
    let path = std::path::Path::new(text);
    if path.exists() {
        return Ok(RunSource::File(path.to_path_buf()));
    }
    if text.contains('=') {
        return Ok(RunSource::Query {
            text: text.to_string(),
            filter: query_filter(text)?,
        });
    }
    match text.contains('/') || text.ends_with(".json") {
        true => Ok(RunSource::File(path.to_path_buf())),
        false => Ok(RunSource::Stored(text.to_string())),
    }
}

/// The keys a query of the store takes.
const QUERY_KEYS: &str = "kernel, machine, comment, suite, since, until, last";

/// The filter of a query `KEY=VALUE[,KEY=VALUE...]`.
fn query_filter(text: &str) -> Result<RunFilter, UsageError> {
    let mut filter = RunFilter::default();
    for part in text.split(',') {
        let bad = |why: String| UsageError::new(format!("query {text:?}: {why}"));
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("{part:?} is not KEY=VALUE (keys: {QUERY_KEYS})")))?;
        let value = value.to_string();
        match key.trim() {
            "kernel" => filter.kernel = Some(value),
            "machine" => filter.machine = Some(value),
            "comment" => filter.comment = Some(value),
            "suite" => filter.suite = Some(value),
            "since" => filter.since_unix = Some(parse_date(&value).map_err(bad)?),
            "until" => filter.until_unix = Some(parse_date(&value).map_err(bad)?),
            "last" => {
                let n = value.parse::<usize>().ok().filter(|n| *n > 0);
                filter.last =
                    Some(n.ok_or_else(|| bad(format!("last={value} is not a count of runs")))?);
            }
            other => return Err(bad(format!("unknown key {other:?} (keys: {QUERY_KEYS})"))),
        }
    }
    Ok(filter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compare_argument_is_a_file_a_query_or_a_stored_run() {
        let here = env!("CARGO_MANIFEST_DIR");
        assert!(matches!(run_source(here), Ok(RunSource::File(_))));
        assert!(matches!(
            run_source("gone/run.json"),
            Ok(RunSource::File(_))
        ));
        assert!(matches!(run_source("new.json"), Ok(RunSource::File(_))));
        assert_eq!(
            run_source("20261127-0840").unwrap(),
            RunSource::Stored("20261127-0840".into())
        );
        let Ok(RunSource::Query { filter, .. }) = run_source("kernel=6.12,last=5,since=2026-11-27")
        else {
            panic!("a query");
        };
        assert_eq!(filter.kernel.as_deref(), Some("6.12"));
        assert_eq!(filter.last, Some(5));
        assert_eq!(filter.since_unix, Some(1_795_737_600));
        for bad in ["colour=red", "last=0", "kernel=6.1,5", "until=yesterday"] {
            let error = run_source(bad).unwrap_err().to_string();
            assert!(error.starts_with(&format!("query {bad:?}: ")), "{error}");
        }
    }
}
