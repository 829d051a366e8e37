//! `--probe rtapp:SPEC` and `--load rtapp:SPEC` (also in a mix such as
//! `burn+rtapp:SPEC`, and with -W/-w): the spec is read as an rt-app
//! workload (a shipped workload's name or a file) and taken out of the
//! name, which becomes `rtapp`; the workload goes into the run's settings,
//! where the `rtapp` probe and load find it. A run has at most one
//! workload for the probe and one for the load.

use crate::exit::UsageError;
use crate::sim::rtapp::model::Workload;
use crate::sim::rtapp::parse;

/// The name `rtapp:SPEC` is shortened to.
const NAME: &str = "rtapp";

/// Shortens every `rtapp:SPEC` of `names` (with `mixes`, of each part of a
/// `+` mix) to `rtapp` and reads the one workload they name; `option`
/// names them in errors. Two different specs are refused. A key rt-app
/// ignores is said in a warning and left out, or refused when `strict`.
pub fn take_workload(
    option: &str,
    names: &mut [String],
    mixes: bool,
    strict: bool,
) -> Result<Option<Workload>, UsageError> {
    let mut spec: Option<String> = None;
    for name in names.iter_mut() {
        let parts: Vec<String> = match mixes {
            true => name.split('+').map(str::to_string).collect(),
            false => vec![name.clone()],
        };
        let mut shortened = Vec::with_capacity(parts.len());
        for part in parts {
            match part.strip_prefix("rtapp:") {
                Some(this) => {
                    if let Some(other) = spec.as_deref().filter(|s| *s != this) {
                        return Err(UsageError::new(format!(
                            "{option} names two rt-app workloads ({other} and {this}); a run takes one"
                        )));
                    }
                    spec = Some(this.to_string());
                    shortened.push(NAME.to_string());
                }
                None => shortened.push(part),
            }
        }
        *name = shortened.join("+");
    }
    let Some(spec) = spec else {
        return Ok(None);
    };
    let workload = parse::load(&spec, strict)
        .map_err(|e| UsageError::new(format!("{option} rtapp:{spec}: {e}")))?;
    for warning in workload.warnings() {
        say!("warning: {warning}");
    }
    Ok(Some(workload))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_without_a_spec_are_left_alone() {
        let mut names = vec!["audio".to_string(), "burn+x".to_string()];
        assert!(take_workload("--load", &mut names, true, false)
            .unwrap()
            .is_none());
        assert_eq!(names, ["audio", "burn+x"]);
    }

    #[test]
    fn a_missing_file_is_a_usage_error_naming_it() {
        let mut names = vec!["burn+rtapp:/nonexistent/w.json".to_string()];
        let err = take_workload("--load", &mut names, true, false).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/w.json"), "{err}");
        assert_eq!(names, ["burn+rtapp"]);
    }

    #[test]
    fn two_workloads_are_refused() {
        let mut names = vec!["rtapp:a".to_string(), "rtapp:b".to_string()];
        let err = take_workload("--probe", &mut names, false, false).unwrap_err();
        assert!(err.to_string().contains("two rt-app workloads"), "{err}");
    }
}
