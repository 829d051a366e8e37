//! The arms of an experiment as the user gives them: `--arm NAME:SETTING,...`
//! on the command line, or `[[arm]]` tables in a TOML file. A setting that
//! starts with `-` is an option of `run`; any other is a setting of the
//! system, which `system::setting` parses and applies (this module only
//! keeps its text).

use serde::{Deserialize, Serialize};
use std::path::Path;

/// One arm, as given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArmSpec {
    /// Its name: letters, digits, `.`, `_` and `-`.
    pub name: String,
    /// Settings of the system, as written (`vm.swappiness=10`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub system: Vec<String>,
    /// Pairs of shell commands, one that sets and one that restores.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandPair>,
    /// Options of `run`, as arguments (`--load-nice=19`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run: Vec<String>,
}

/// A setting with no name: a command that sets it and one that puts it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandPair {
    pub set: String,
    pub restore: String,
}

/// Why the arms cannot be used (bad input).
#[derive(Debug, thiserror::Error)]
pub enum ArmError {
    #[error("--arm {0:?}: an arm needs a name before its settings (NAME:SETTING,...)")]
    NoName(String),
    #[error("arm name {0:?}: use letters, digits, '.', '_' and '-' only")]
    BadName(String),
    #[error("arm {0}: an empty setting (two commas, or a comma at the end)")]
    EmptySetting(String),
    #[error("two arms are named {0}: give each arm its own name")]
    SameName(String),
    #[error("an experiment needs two arms or more (the first is the baseline); {0} given")]
    TooFew(usize),
    #[error("cannot read the arms file {path}: {error}")]
    Read { path: String, error: String },
    #[error("{path}: {error}")]
    Toml { path: String, error: String },
    #[error("{path}: arm {name}: `set` and `restore` go together")]
    HalfPair { path: String, name: String },
}

/// The arm `--arm TEXT` gives: `NAME`, or `NAME:SETTING[,SETTING...]`.
pub fn parse_arm(text: &str) -> Result<ArmSpec, ArmError> {
    let (name, settings) = text.split_once(':').unwrap_or((text, ""));
    let name = checked_name(name, text)?;
    let mut spec = ArmSpec {
        name,
        system: Vec::new(),
        commands: Vec::new(),
        run: Vec::new(),
    };
    if settings.trim().is_empty() {
        return Ok(spec);
    }
    for setting in settings.split(',').map(str::trim) {
        if setting.is_empty() {
            return Err(ArmError::EmptySetting(spec.name));
        }
        add_setting(&mut spec, setting);
    }
    Ok(spec)
}

/// Adds `setting` to `spec`: run options (split at spaces), `slice=D` (the
/// probe's custom slice, `run --slice D`: a setting of its threads, not of
/// the system) or a system setting.
fn add_setting(spec: &mut ArmSpec, setting: &str) {
    if let Some(slice) = setting.strip_prefix("slice=") {
        spec.run.push(format!("--slice={}", slice.trim()));
        return;
    }
    match setting.starts_with('-') {
        true => spec
            .run
            .extend(setting.split_whitespace().map(str::to_string)),
        false => spec.system.push(setting.to_string()),
    }
}

/// `name`, checked (`text`: the whole --arm value, for the message).
fn checked_name(name: &str, text: &str) -> Result<String, ArmError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(ArmError::NoName(text.to_string()));
    }
    let fine = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    match fine {
        true => Ok(name.to_string()),
        false => Err(ArmError::BadName(name.to_string())),
    }
}

/// An arms file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(rename = "arm", default)]
    arms: Vec<RawArm>,
}

/// One `[[arm]]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArm {
    name: String,
    /// As `--arm`'s settings, one per item.
    #[serde(default)]
    settings: Vec<String>,
    /// Options of `run`, as arguments.
    #[serde(default)]
    run: Vec<String>,
    set: Option<String>,
    restore: Option<String>,
}

/// The arms of the TOML file at `path`.
pub fn read_file(path: &Path) -> Result<Vec<ArmSpec>, ArmError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ArmError::Read {
        path: shown.clone(),
        error: e.to_string(),
    })?;
    let raw: RawFile = toml::from_str(&text).map_err(|e| ArmError::Toml {
        path: shown.clone(),
        error: e.message().to_string(),
    })?;
    raw.arms
        .into_iter()
        .map(|arm| {
            let mut spec = ArmSpec {
                name: checked_name(&arm.name, &arm.name)?,
                system: Vec::new(),
                commands: Vec::new(),
                run: arm.run,
            };
            for setting in &arm.settings {
                add_setting(&mut spec, setting.trim());
            }
            match (arm.set, arm.restore) {
                (Some(set), Some(restore)) => spec.commands.push(CommandPair { set, restore }),
                (None, None) => {}
                _ => {
                    return Err(ArmError::HalfPair {
                        path: shown.clone(),
                        name: spec.name,
                    })
                }
            }
            Ok(spec)
        })
        .collect()
}

/// Two arms or more, no two of one name.
pub fn check_names(arms: &[ArmSpec]) -> Result<(), ArmError> {
    if arms.len() < 2 {
        return Err(ArmError::TooFew(arms.len()));
    }
    for (i, arm) in arms.iter().enumerate() {
        if arms[..i].iter().any(|a| a.name == arm.name) {
            return Err(ArmError::SameName(arm.name.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arm_splits_into_system_settings_and_run_options() {
        let arm = parse_arm("n19:vm.swappiness=10, --load-nice=19,--load-cpu-weight 10").unwrap();
        assert_eq!(arm.name, "n19");
        assert_eq!(arm.system, ["vm.swappiness=10"]);
        assert_eq!(arm.run, ["--load-nice=19", "--load-cpu-weight", "10"]);
        let base = parse_arm("base").unwrap();
        assert!(base.system.is_empty() && base.run.is_empty());
        assert_eq!(parse_arm("base:").unwrap(), base);
        let short = parse_arm("short:slice=1ms,--slice 3ms").unwrap();
        assert_eq!(short.run, ["--slice=1ms", "--slice", "3ms"]);
        assert!(short.system.is_empty());
    }

    #[test]
    fn bad_arms_are_refused() {
        assert!(matches!(parse_arm(":x=1"), Err(ArmError::NoName(_))));
        assert!(matches!(parse_arm("a b:x=1"), Err(ArmError::BadName(_))));
        assert!(matches!(
            parse_arm("a:x=1,,y=2"),
            Err(ArmError::EmptySetting(_))
        ));
        let arms = [parse_arm("a").unwrap(), parse_arm("a:x=1").unwrap()];
        assert!(matches!(check_names(&arms), Err(ArmError::SameName(_))));
        assert!(matches!(check_names(&arms[..1]), Err(ArmError::TooFew(1))));
    }

    #[test]
    fn a_file_gives_arms_with_command_pairs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("arms.toml");
        std::fs::write(
            &path,
            "[[arm]]\nname = \"base\"\n\n[[arm]]\nname = \"mine\"\nsettings = [\"thp=never\"]\n\
             run = [\"--load-nice\", \"19\"]\nset = \"echo 1 > /tmp/x\"\nrestore = \"echo 0 > /tmp/x\"\n",
        )
        .unwrap();
        let arms = read_file(&path).unwrap();
        assert_eq!(arms.len(), 2);
        assert_eq!(arms[1].system, ["thp=never"]);
        assert_eq!(arms[1].run, ["--load-nice", "19"]);
        assert_eq!(arms[1].commands[0].restore, "echo 0 > /tmp/x");
        std::fs::write(&path, "[[arm]]\nname = \"x\"\nset = \"true\"\n").unwrap();
        assert!(matches!(read_file(&path), Err(ArmError::HalfPair { .. })));
        std::fs::write(&path, "[[arm]]\nnom = \"x\"\n").unwrap();
        assert!(matches!(read_file(&path), Err(ArmError::Toml { .. })));
    }
}
