//! Choosing a run's probes and loads from what the user said: a list (or
//! the defaults), plus `with`, minus `without`, each name checked against
//! its registry and each entry against the run's parameters. One algorithm,
//! [`Selection::choose`], for both registries ([`Probes`], [`Loads`]).

use crate::exit::UsageError;
use crate::load::{self, LoadMix, SpecError};
use crate::probe::{self, BuildError, ProbeDef};
use crate::sim::WorkParams;
use std::collections::HashSet;

/// A registry the command line chooses from.
pub trait Registry {
    /// What a chosen name stands for.
    type Entry;
    /// Why a name or an entry cannot be used (bad input, said as it is).
    type Error: std::error::Error + Send + Sync + 'static;
    /// `probe` or `load`, for messages.
    const KIND: &'static str;
    /// The entry `name` stands for; the error lists the valid names.
    fn parse(name: &str) -> Result<Self::Entry, Self::Error>;
    /// The entry's name, by which it is excluded and deduplicated.
    fn name(entry: &Self::Entry) -> &str;
    /// The entries that run when the user names none (`full`: `--full`).
    fn defaults(params: &WorkParams, full: bool) -> Vec<Self::Entry>;
    /// Fails, with a message naming the entry, when `params` lack what it
    /// needs.
    fn check(entry: &Self::Entry, params: &WorkParams) -> Result<(), Self::Error>;
    /// Where the entry runs: entries run by rank, and in the order given
    /// among equal ranks.
    fn rank(entry: &Self::Entry) -> usize;
}

/// A probe name or probe the user chose that cannot run; the message is
/// complete on its own.
#[derive(Debug, thiserror::Error)]
pub enum ProbeChoiceError {
    /// No probe of that name.
    #[error("unknown probe '{name}'; valid probes: {valid}")]
    Unknown { name: String, valid: String },
    /// The probe cannot be built with the run's parameters.
    #[error("probe {probe}: {problem}")]
    Build {
        probe: &'static str,
        problem: BuildError,
    },
}

/// The probes: run in registry order, whatever the order given.
pub struct Probes;

impl Registry for Probes {
    type Entry = &'static ProbeDef;
    type Error = ProbeChoiceError;
    const KIND: &'static str = "probe";

    fn parse(name: &str) -> Result<Self::Entry, Self::Error> {
        probe::find(name).ok_or_else(|| {
            let valid: Vec<_> = probe::PROBES.iter().map(|p| p.name).collect();
            ProbeChoiceError::Unknown {
                name: name.to_string(),
                valid: valid.join(", "),
            }
        })
    }

    fn name(entry: &Self::Entry) -> &str {
        entry.name
    }

    /// The default probes, or with `--full` every probe that can be built
    /// with the run's parameters, but not those that run a part of
    /// another (see [`ProbeDef::is_part`]).
    fn defaults(params: &WorkParams, full: bool) -> Vec<Self::Entry> {
        probe::PROBES
            .iter()
            .filter(|p| match full {
                true => !p.is_part() && (p.build)(params).is_ok(),
                false => (p.default)(params),
            })
            .collect()
    }

    fn check(entry: &Self::Entry, params: &WorkParams) -> Result<(), Self::Error> {
        (entry.build)(params)
            .map(drop)
            .map_err(|problem| ProbeChoiceError::Build {
                probe: entry.name,
                problem,
            })
    }

    fn rank(entry: &Self::Entry) -> usize {
        probe::PROBES
            .iter()
            .position(|p| p.name == entry.name)
            .unwrap_or(usize::MAX)
    }
}

/// The loads, and mixes of them: run in the order given.
pub struct Loads;

impl Registry for Loads {
    type Entry = LoadMix;
    type Error = SpecError;
    const KIND: &'static str = "load";

    fn parse(name: &str) -> Result<Self::Entry, Self::Error> {
        LoadMix::parse(name)
    }

    fn name(entry: &Self::Entry) -> &str {
        &entry.name
    }

    /// The default loads, or with `--full` every load that can run here
    /// without an argument and is background work (not `cacherun`, a
    /// condition of the job probe: under every probe it would be a second
    /// `none`).
    fn defaults(params: &WorkParams, full: bool) -> Vec<Self::Entry> {
        load::LOADS
            .iter()
            .filter(|l| match full {
                true => !l.takes_arg && l.job_cache.is_none() && (l.check)(params, None).is_ok(),
                false => (l.default)(params),
            })
            .map(LoadMix::single)
            .collect()
    }

    fn check(entry: &Self::Entry, params: &WorkParams) -> Result<(), Self::Error> {
        entry.check(params)
    }

    fn rank(_: &Self::Entry) -> usize {
        0
    }
}

/// What the user said about one registry: an explicit list (or the
/// defaults), plus `with`, minus `without`.
pub struct Selection<'a> {
    /// The names given (`--probe`, `--load`), or `None` for the defaults.
    pub list: Option<&'a [String]>,
    /// Names added (`-W`, `-w`).
    pub with: &'a [String],
    /// Names removed (`-X`, `-x`).
    pub without: &'a [String],
}

impl Selection<'_> {
    /// The chosen entries of registry `R`, each once: unknown names are an
    /// error that lists the valid ones, and so is an entry `params` cannot
    /// run, or nothing left.
    pub fn choose<R: Registry>(
        &self,
        params: &WorkParams,
        full: bool,
    ) -> Result<Vec<R::Entry>, UsageError> {
        let chosen = self.named::<R>(params, full)?;
        if chosen.is_empty() {
            return Err(UsageError::new(format!("no {} left to run", R::KIND)));
        }
        for entry in &chosen {
            R::check(entry, params).map_err(UsageError::input)?;
        }
        Ok(chosen)
    }

    /// The chosen entries of registry `R` that `params` can run, each once,
    /// and why each of the others cannot (a suite's members that cannot
    /// run here are left out, not refused); unknown names are an error.
    pub fn runnable<R: Registry>(
        &self,
        params: &WorkParams,
    ) -> Result<(Vec<R::Entry>, Vec<String>), UsageError> {
        let mut left_out = Vec::new();
        let mut chosen = self.named::<R>(params, false)?;
        chosen.retain(|entry| match R::check(entry, params) {
            Ok(()) => true,
            Err(why) => {
                left_out.push(why.to_string());
                false
            }
        });
        Ok((chosen, left_out))
    }

    /// The entries named (or the defaults), plus `with`, minus `without`,
    /// each once, in run order; unknown names are an error.
    fn named<R: Registry>(
        &self,
        params: &WorkParams,
        full: bool,
    ) -> Result<Vec<R::Entry>, UsageError> {
        let parse = |name: &String| R::parse(name).map_err(UsageError::input);
        let mut chosen = match self.list {
            Some(names) => names.iter().map(parse).collect::<Result<Vec<_>, _>>()?,
            None => R::defaults(params, full),
        };
        for name in self.with {
            chosen.push(parse(name)?);
        }
        for name in self.without {
            let excluded = parse(name)?;
            chosen.retain(|entry| R::name(entry) != R::name(&excluded));
        }
        let mut seen = HashSet::new();
        chosen.retain(|entry| seen.insert(R::name(entry).to_string()));
        chosen.sort_by_key(R::rank);
        Ok(chosen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    fn chosen<R: Registry>(list: Option<&[&str]>, with: &[&str], without: &[&str]) -> Vec<String> {
        let list = list.map(strings);
        let (with, without) = (strings(with), strings(without));
        let selection = Selection {
            list: list.as_deref(),
            with: &with,
            without: &without,
        };
        selection
            .choose::<R>(&WorkParams::for_tests(), false)
            .unwrap()
            .iter()
            .map(|e| R::name(e).to_string())
            .collect()
    }

    #[test]
    fn probes_run_in_registry_order_and_loads_in_the_order_given() {
        assert_eq!(
            chosen::<Probes>(Some(&["video", "audio", "video"]), &[], &[]),
            ["audio", "video"]
        );
        assert_eq!(
            chosen::<Loads>(Some(&["read", "burn", "read"]), &[], &[]),
            ["read", "burn"]
        );
    }

    #[test]
    fn with_adds_and_without_removes_by_name() {
        assert_eq!(
            chosen::<Loads>(Some(&["none"]), &["burn+write", "compile"], &["none"]),
            ["burn+write", "compile"]
        );
        assert_eq!(
            chosen::<Probes>(None, &[], &["x", "gaming"]),
            ["audio", "video"]
        );
    }

    #[test]
    fn nothing_left_is_refused() {
        let all = strings(&["audio"]);
        let selection = Selection {
            list: Some(&all),
            with: &[],
            without: &all,
        };
        let Err(err) = selection.choose::<Probes>(&WorkParams::for_tests(), false) else {
            panic!("nothing is left, yet something was chosen");
        };
        assert_eq!(err.to_string(), "no probe left to run");
    }
}
