//! What `feelbench run` checks before it changes anything: that the system
//! is the one `--expect` asks for, that the options' privileges are there,
//! and (once set up) that the machine is quiet enough to measure. It also
//! removes what killed runs left behind, and puts back the settings killed
//! experiments left changed.

use super::config::{Preflight, RunConfig};
use crate::document::schema::{Warning, WarningCode};
use crate::engine::workspace;
use crate::exit::UsageError;
use crate::load;
use crate::measure::affinity;
use crate::measure::sched::{self, SchedRequest};
use crate::system::cgroup;
use crate::system::delayacct;
use crate::system::environment::{self, Environment, StealSample};
use crate::system::noise;
use crate::system::setting;
use crate::system::swap;
use std::path::Path;
use std::time::Duration;

/// Captures the environment, refuses a system or privileges the run
/// cannot use, and removes what earlier runs left behind; the steal sample
/// it begins is taken in by the caller when the run is over.
pub fn check_system(config: &RunConfig) -> Result<(Environment, StealSample), UsageError> {
    let roots = environment::Roots::system();
    let steal = StealSample::begin(&roots, environment::STEAL_SAMPLE);
    let environment = environment::capture(&roots, &config.workdir);
    check_expectations(&environment, &config.preflight.expect)?;
    check_privileges(config)?;
    // The loads' first: a dead `cmd:` worker's accounting cgroup sits inside
    // the dead run's load cgroup, which cannot be removed before it.
    let loads = load::remove_leftovers();
    let runs = workspace::clean_leftovers(swap::remove, |p| Ok(cgroup::remove(p)?));
    let delayacct = match nix::unistd::geteuid().is_root() {
        true => delayacct::clean_dead_holders(&delayacct::Switch::system()),
        false => Vec::new(),
    };
    // What a killed `feelbench ab` left changed.
    let settings = setting::restore_leftovers().unwrap_or_else(|e| vec![format!("warning: {e}")]);
    for line in loads
        .into_iter()
        .chain(runs)
        .chain(delayacct)
        .chain(settings)
    {
        say!("{line}");
    }
    Ok((environment, steal))
}

/// Refuses to run when the system differs from what `--expect` asked for.
fn check_expectations(env: &Environment, expect: &[(String, String)]) -> Result<(), UsageError> {
    let mismatches = environment::mismatches(env, expect);
    if mismatches.is_empty() {
        return Ok(());
    }
    Err(UsageError::new(format!(
        "this system is not the one expected, so nothing was measured:\n  {}",
        mismatches.join("\n  ")
    )))
}

/// Refuses at once what every scenario would fail on: a negative nice or
/// SCHED_FIFO without the privileges, a slice the kernel does not keep
/// (`--slice` before Linux 6.12), CPUs the workers may not be put on,
/// or a change to the system (`--swap`, `--mem-limit`,
/// `--load-cpu-weight`) by someone who is not root.
pub fn check_privileges(config: &RunConfig) -> Result<(), UsageError> {
    let changes = [
        (
            "--swap",
            "turns a swap file on",
            config.swap_file_bytes.is_some(),
        ),
        (
            "--mem-limit",
            "makes a memory cgroup",
            config.mem_limit_bytes.is_some(),
        ),
        (
            "--load-cpu-weight",
            "makes a CPU cgroup",
            config.placement.load_cpu_weight.is_some(),
        ),
    ];
    if let Some((option, what, _)) = changes.iter().find(|(_, _, given)| *given) {
        if !nix::unistd::geteuid().is_root() {
            return Err(UsageError::new(format!(
                "{option} needs root: it {what}; run as root or leave it out"
            )));
        }
    }
    let loads = SchedRequest {
        nice: config.load_nice,
        fifo_priority: None,
        timer_slack_ns: 1,
        slice_ns: None,
    };
    for request in [&config.probe_sched, &loads] {
        sched::check_allowed(request).map_err(UsageError::input)?;
    }
    let placement = &config.placement;
    for cpus in [&placement.probe_cpus, &placement.load_cpus]
        .into_iter()
        .flatten()
    {
        affinity::check_allowed(cpus).map_err(UsageError::input)?;
    }
    Ok(())
}

/// Samples the machine before the first scenario: a warning when other
/// processes or the hypervisor are busy, or a refusal with `--strict`.
pub fn noise_check(preflight: &Preflight) -> Result<Option<Warning>, UsageError> {
    if preflight.noise_check_ns == 0 {
        return Ok(None);
    }
    let length = Duration::from_nanos(preflight.noise_check_ns);
    let noise = match noise::check(Path::new("/proc"), length) {
        Ok(noise) => noise,
        Err(e) => {
            say!("warning: no noise check: {e}");
            return Ok(None);
        }
    };
    let Some(complaint) = noise.complaint() else {
        return Ok(None);
    };
    if preflight.strict {
        return Err(UsageError::new(format!("--strict: {complaint}")));
    }
    Ok(Some(Warning::new(WarningCode::NoisyMachine, complaint)))
}
