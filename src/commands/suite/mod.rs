//! Suites: a classic tool's probes, loads and settings as versioned data
//! (TOML files in `suites/`, built into the binary, or a user's file in the
//! same format), and `feelbench suite list|show`. A suite is read into a
//! [`Suite`] with every probe and load name checked; `cli` checks its
//! settings against `run`'s options and turns them into arguments, which
//! the user's own options follow and override.

mod builtin;
mod file;
pub mod show;

pub use builtin::{text as built_in_text, BUILT_IN};
pub use file::FileError;

use crate::document::schema::{SuiteGroup, SuiteRecord};
use crate::load::LoadMix;
use crate::probe;
use crate::store::location::without_password;
use file::{RawSuite, Source};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// How deep includes may nest (a suite including one that includes another).
const MAX_INCLUDE_DEPTH: usize = 4;
/// Most times a group may have its scenarios measured.
const MAX_GROUP_REPEAT: u32 = 100;

/// Why a suite cannot be used (bad input: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// No built-in suite of that name.
    #[error("unknown suite '{name}'; suites: {valid} (or --suite-file FILE)")]
    Unknown { name: String, valid: String },
    /// The file cannot be read.
    #[error("cannot read suite file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// Something in a suite file is wrong, at a line.
    #[error(transparent)]
    At(#[from] FileError),
}

/// Where a suite was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    BuiltIn,
    File(PathBuf),
}

impl std::fmt::Display for Origin {
    /// `built-in`, or the file's path.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::BuiltIn => f.write_str("built-in"),
            Origin::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// One run option a suite gives, with where it stands.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The option's long name, without `--`.
    pub key: String,
    /// The option's values as arguments (several for a list; none for a
    /// switch set to false).
    pub values: Vec<String>,
    /// A switch (`true`/`false` in the file): given without a value.
    pub switch: bool,
    /// The file and line it was read from.
    pub file: String,
    pub line: usize,
}

impl Setting {
    /// The arguments the setting stands for: `--key value` for each value,
    /// `--key` for a switch that is on.
    pub fn args(&self) -> Vec<String> {
        let option = format!("--{}", self.key);
        match self.switch {
            true => self.values.iter().map(|_| option.clone()).collect(),
            false => self
                .values
                .iter()
                .flat_map(|v| [option.clone(), v.clone()])
                .collect(),
        }
    }

    /// The error `what` at this setting's line.
    pub fn error(&self, what: impl Into<String>) -> FileError {
        FileError {
            file: self.file.clone(),
            line: self.line,
            what: what.into(),
        }
    }
}

/// Probes to run, each under every load of the group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub probes: Vec<String>,
    pub loads: Vec<String>,
    /// Times each of its scenarios is measured, when more than `--repeat`
    /// (so that a probe measured once per scenario, such as the job, gets
    /// an interval).
    pub repeat: Option<u32>,
}

/// A suite read, its includes resolved and its names checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    pub name: String,
    pub version: u32,
    pub summary: String,
    pub origin: Origin,
    /// Run options, in the order of their names.
    pub settings: Vec<Setting>,
    /// Run options applied only as root.
    pub root_settings: Vec<Setting>,
    pub groups: Vec<Group>,
}

impl Suite {
    /// The built-in suite `name`.
    pub fn built_in(name: &str) -> Result<Suite, SuiteError> {
        Self::built_in_at(name, 0)
    }

    /// The suite in the file at `path`.
    pub fn from_file(path: &Path) -> Result<Suite, SuiteError> {
        let text = std::fs::read_to_string(path).map_err(|source| SuiteError::Read {
            path: path.display().to_string(),
            source,
        })?;
        let file = path.display().to_string();
        let source = Source {
            file: &file,
            text: &text,
        };
        Self::read(source, Origin::File(path.to_path_buf()), 0)
    }

    fn built_in_at(name: &str, depth: usize) -> Result<Suite, SuiteError> {
        let text = builtin::text(name).ok_or_else(|| SuiteError::Unknown {
            name: name.to_string(),
            valid: builtin::names().join(", "),
        })?;
        let file = format!("built-in suite {name}");
        let source = Source { file: &file, text };
        Self::read(source, Origin::BuiltIn, depth)
    }

    /// The suite `source` holds, its includes read at `depth + 1`.
    fn read(source: Source, origin: Origin, depth: usize) -> Result<Suite, SuiteError> {
        let raw = source.parse()?;
        let mut included = Vec::new();
        for name in &raw.include {
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(source
                    .error_at(name.span(), "includes nest too deep")
                    .into());
            }
            let suite = Self::built_in_at(name.get_ref(), depth + 1).map_err(|e| match e {
                SuiteError::Unknown { .. } => {
                    SuiteError::At(source.error_at(name.span(), e.to_string()))
                }
                other => other,
            })?;
            included.push(suite);
        }
        let groups = included
            .iter()
            .flat_map(|s| s.groups.iter().cloned())
            .chain(own_groups(source, &raw)?)
            .collect::<Vec<_>>();
        if groups.is_empty() {
            return Err(source
                .error_at(
                    raw.name.span(),
                    "a suite needs at least one [[group]] of probes and loads",
                )
                .into());
        }
        let name = raw.name.get_ref().trim().to_string();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err(source
                .error_at(raw.name.span(), "a suite's name is one word")
                .into());
        }
        Ok(Suite {
            name,
            version: *raw.version.get_ref(),
            summary: raw.summary.clone(),
            origin,
            settings: merged_settings(source, &raw, &included)?,
            root_settings: settings(source, &raw.root_settings)?,
            groups,
        })
    }

    /// What a run stores of the suite: `options` and `root_left_out` as
    /// the run applied them (without the password of any store URL in
    /// them), `left_out` the members it could not run.
    pub fn record(
        &self,
        options: Vec<String>,
        root_left_out: Vec<String>,
        left_out: Vec<String>,
    ) -> SuiteRecord {
        SuiteRecord {
            name: self.name.clone(),
            version: self.version,
            summary: self.summary.clone(),
            source: self.origin.to_string(),
            options: options.iter().map(|o| without_password(o)).collect(),
            root_options_left_out: root_left_out.iter().map(|o| without_password(o)).collect(),
            groups: self
                .groups
                .iter()
                .map(|g| SuiteGroup {
                    probes: g.probes.clone(),
                    loads: g.loads.clone(),
                    repeat: g.repeat,
                })
                .collect(),
            left_out,
        }
    }
}

/// The suite's own groups, every name checked against the registries.
fn own_groups(source: Source, raw: &RawSuite) -> Result<Vec<Group>, FileError> {
    raw.groups
        .iter()
        .map(|group| {
            let names = |list: &Spanned<Vec<Spanned<String>>>,
                         kind: &str,
                         check: &dyn Fn(&str) -> Result<(), String>| {
                if list.get_ref().is_empty() {
                    return Err(
                        source.error_at(list.span(), format!("a group needs at least one {kind}"))
                    );
                }
                list.get_ref()
                    .iter()
                    .map(|name| {
                        check(name.get_ref())
                            .map(|()| name.get_ref().clone())
                            .map_err(|what| source.error_at(name.span(), what))
                    })
                    .collect::<Result<Vec<_>, _>>()
            };
            let repeat = match &group.repeat {
                Some(n) if !(1..=MAX_GROUP_REPEAT).contains(n.get_ref()) => {
                    return Err(source.error_at(
                        n.span(),
                        format!("repeat takes 1 to {MAX_GROUP_REPEAT}, not {}", n.get_ref()),
                    ))
                }
                other => other.as_ref().map(|n| *n.get_ref()),
            };
            Ok(Group {
                probes: names(&group.probes, "probe", &check_probe)?,
                loads: names(&group.loads, "load", &check_load)?,
                repeat,
            })
        })
        .collect()
}

/// Whether `name` is a probe.
fn check_probe(name: &str) -> Result<(), String> {
    match probe::find(name) {
        Some(_) => Ok(()),
        None => {
            let valid: Vec<_> = probe::PROBES.iter().map(|p| p.name).collect();
            Err(format!(
                "unknown probe '{name}'; valid probes: {}",
                valid.join(", ")
            ))
        }
    }
}

/// Whether `name` is a load or a mix of loads.
fn check_load(name: &str) -> Result<(), String> {
    LoadMix::parse(name).map(drop).map_err(|e| e.to_string())
}

/// The suite's settings over those of the suites it includes; two included
/// suites that set an option differently must be settled by the suite.
fn merged_settings(
    source: Source,
    raw: &RawSuite,
    included: &[Suite],
) -> Result<Vec<Setting>, FileError> {
    let own = settings(source, &raw.settings)?;
    let mut merged: BTreeMap<String, (Setting, &str)> = BTreeMap::new();
    for suite in included {
        for setting in &suite.settings {
            if let Some((earlier, from)) = merged.get(&setting.key) {
                let settled = own.iter().any(|s| s.key == setting.key);
                if earlier.values != setting.values && !settled {
                    let at = raw.include.first().map(Spanned::span).unwrap_or(0..0);
                    return Err(source.error_at(
                        at,
                        format!(
                            "included suites {from} and {} set {} differently ({} and {}); set it in [settings] here",
                            suite.name,
                            setting.key,
                            earlier.values.join(","),
                            setting.values.join(",")
                        ),
                    ));
                }
            }
            merged
                .entry(setting.key.clone())
                .or_insert((setting.clone(), &suite.name));
        }
    }
    for setting in own {
        merged.insert(setting.key.clone(), (setting, ""));
    }
    Ok(merged.into_values().map(|(s, _)| s).collect())
}

/// A table of settings as [`Setting`]s.
fn settings(
    source: Source,
    table: &BTreeMap<Spanned<String>, Spanned<toml::Value>>,
) -> Result<Vec<Setting>, FileError> {
    table
        .iter()
        .map(|(key, value)| {
            let (values, switch) = values(value.get_ref()).map_err(|what| {
                source.error_at(value.span(), format!("{}: {what}", key.get_ref()))
            })?;
            Ok(Setting {
                key: key.get_ref().clone(),
                values,
                switch,
                file: source.file.to_string(),
                line: source.line_of(key.span().start),
            })
        })
        .collect()
}

/// A setting's value as arguments, and whether it is a switch.
fn values(value: &toml::Value) -> Result<(Vec<String>, bool), String> {
    use toml::Value;
    let one = |v: &Value| match v {
        Value::String(s) => Ok(s.clone()),
        Value::Integer(i) => Ok(i.to_string()),
        Value::Float(f) => Ok(f.to_string()),
        other => Err(format!(
            "takes a string or a number, not {}",
            other.type_str()
        )),
    };
    match value {
        Value::Boolean(on) => Ok((on.then(String::new).into_iter().collect(), true)),
        Value::Array(items) => Ok((items.iter().map(one).collect::<Result<_, _>>()?, false)),
        other => Ok((vec![one(other)?], false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Suite, SuiteError> {
        Suite::read(
            Source {
                file: "my.toml",
                text,
            },
            Origin::File("my.toml".into()),
            0,
        )
    }

    const HEAD: &str = "name = \"mine\"\nversion = 2\nsummary = \"s\"\n";

    #[test]
    fn the_recorded_options_keep_no_password() {
        let suite = Suite::built_in("resp1").unwrap();
        let timed = "psql postgres://lab:s3/cret@db/fb -c 'select 1'";
        let record = suite.record(
            vec!["--command".into(), timed.into()],
            vec!["--job".into(), format!("{timed} && true")],
            Vec::new(),
        );
        assert_eq!(
            record.options,
            ["--command", "psql postgres://lab@db/fb -c 'select 1'"]
        );
        let kept = serde_json::to_string(&record).unwrap();
        assert!(!kept.contains("s3") && !kept.contains("cret"), "{kept}");
    }

    #[test]
    fn every_built_in_suite_reads_and_is_named_as_its_file() {
        for name in builtin::names() {
            let suite = Suite::built_in(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(suite.name, name);
            assert!(!suite.groups.is_empty());
        }
    }

    #[test]
    fn an_unknown_probe_is_said_with_its_file_and_line() {
        let text = format!("{HEAD}[[group]]\nprobes = [\"x\", \"mouse\"]\nloads = [\"none\"]\n");
        let err = read(&text).unwrap_err().to_string();
        assert!(err.starts_with("my.toml:5: unknown probe 'mouse'"), "{err}");
    }

    #[test]
    fn an_unknown_load_and_an_empty_list_are_refused() {
        let text = format!("{HEAD}[[group]]\nprobes = [\"x\"]\nloads = [\"none\",\n \"fire\"]\n");
        assert!(read(&text)
            .unwrap_err()
            .to_string()
            .starts_with("my.toml:7: "));
        let text = format!("{HEAD}[[group]]\nprobes = []\nloads = [\"none\"]\n");
        let err = read(&text).unwrap_err().to_string();
        assert!(err.contains("at least one probe"), "{err}");
    }

    #[test]
    fn settings_become_arguments() {
        let text = format!(
            "{HEAD}[settings]\nduration = 4\njob-size = 0.25\nrt = true\nexpect = [\"hz=250\", \"cpus=2\"]\nstrict = false\n[[group]]\nprobes = [\"x\"]\nloads = [\"none\"]\n"
        );
        let suite = read(&text).unwrap();
        let args: Vec<String> = suite.settings.iter().flat_map(Setting::args).collect();
        assert_eq!(
            args,
            [
                "--duration",
                "4",
                "--expect",
                "hz=250",
                "--expect",
                "cpus=2",
                "--job-size",
                "0.25",
                "--rt"
            ]
        );
        assert_eq!(suite.settings[0].line, 5);
    }

    #[test]
    fn includes_take_groups_and_settings_and_a_conflict_must_be_settled() {
        let text = format!("{HEAD}include = [\"interbench\", \"lmbench\"]\n");
        let err = read(&text).unwrap_err().to_string();
        assert!(err.contains("set duration differently"), "{err}");
        let text =
            format!("{HEAD}include = [\"interbench\", \"lmbench\"]\n[settings]\nduration = 3\n");
        let suite = read(&text).unwrap();
        assert_eq!(suite.groups.len(), 2);
        assert_eq!(
            suite
                .settings
                .iter()
                .find(|s| s.key == "duration")
                .unwrap()
                .values,
            ["3"]
        );
        let text = format!("{HEAD}include = [\"nosuch\"]\n");
        assert!(read(&text)
            .unwrap_err()
            .to_string()
            .starts_with("my.toml:4: unknown suite 'nosuch'"));
    }
}
