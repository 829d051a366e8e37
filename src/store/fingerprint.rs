//! What makes two runs comparable. A machine's fingerprint hashes what
//! moves results and stays put across kernels (CPU model and count, SMT,
//! memory to the GiB, governor, the boot command line without the kernel
//! image's name); the hostname is left out, so a renamed machine keeps its
//! history. The architecture is kept beside it but not hashed: the CPU
//! model names it, and runs written before it was recorded must find their
//! machine. The settings hash covers every run setting that
//! shapes a result, with sizes to the GiB (the default file size follows
//! MemTotal, which moves a little with each kernel), the memory size only
//! when `--mem-limit` set it (by default it is the memory available at the
//! start, which moves by a GiB or more between runs) and the calibration
//! left out (it is measured anew by each run). A series is a
//! machine, a settings hash and a suite with its version, and the method
//! versions of the probes and loads the run used: history and regressions
//! never mix series unless asked, and where only the method versions
//! differ they show one series cut at the change ([`base_of`]).

use crate::document::schema::RunDocument;
use serde_json::json;
use sha2::{Digest, Sha256};

/// The machine a run was made on, as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineKey {
    pub fingerprint: String,
    pub cpu_model: Option<String>,
    pub cpus: Option<i64>,
    pub mem_gib: Option<i64>,
    pub arch: Option<String>,
    pub governor: Option<String>,
    /// The boot command line as it counts for the fingerprint.
    pub cmdline: Option<String>,
}

/// The first 16 hex digits of the SHA-256 of `text`.
pub fn short_hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// `bytes` to the nearest GiB.
fn gib(bytes: u64) -> i64 {
    ((bytes as f64) / (1u64 << 30) as f64).round() as i64
}

/// The boot command line without what names the kernel booted
/// (`BOOT_IMAGE=`, `initrd=`), its words sorted.
fn comparable_cmdline(cmdline: &str) -> String {
    let mut words: Vec<&str> = cmdline
        .split_whitespace()
        .filter(|w| !w.starts_with("BOOT_IMAGE=") && !w.starts_with("initrd="))
        .collect();
    words.sort_unstable();
    words.join(" ")
}

/// The machine `run` was made on.
pub fn machine_of(run: &RunDocument) -> MachineKey {
    let env = &run.environment;
    let cpu_model = env.cpu_model.clone().or(run.system.cpu_model.clone());
    let cpus = env.cpus.unwrap_or(run.system.cpus) as i64;
    let mem_gib = env.mem_bytes.or(run.system.mem_bytes).map(gib);
    let cmdline = env.kernel_cmdline.as_deref().map(comparable_cmdline);
    let text = json!({
        "cpu_model": cpu_model,
        "cpus": cpus,
        "smt": env.smt,
        "mem_gib": mem_gib,
        "governor": env.governor,
        "cmdline": cmdline,
    })
    .to_string();
    MachineKey {
        fingerprint: short_hash(&text),
        cpu_model,
        cpus: Some(cpus),
        mem_gib,
        arch: env.arch.clone(),
        governor: env.governor.clone(),
        cmdline,
    }
}

/// The hash of the settings that shape `run`'s results.
pub fn settings_hash(run: &RunDocument) -> String {
    let mut settings = serde_json::to_value(&run.settings).unwrap_or_default();
    if let Some(map) = settings.as_object_mut() {
        for drifting in [
            "loops_per_ms",
            "calibration",
            "repeats",
            "precision_pct",
            "max_time_s",
        ] {
            map.remove(drifting);
        }
        if map.get("mem_limit_bytes").is_none_or(|v| v.is_null()) {
            // Without --mem-limit it is the memory available when the run
            // began, which moves by a GiB or more from run to run.
            map.remove("mem_bytes");
        }
        for size in ["file_bytes", "mem_bytes"] {
            if let Some(bytes) = map.get(size).and_then(|v| v.as_u64()) {
                map.insert(size.to_string(), json!(gib(bytes)));
            }
        }
    }
    short_hash(&settings.to_string())
}

/// What separates the method versions' part of a series key from the rest.
const METHODS_MARK: char = '-';

/// The series `run` belongs to: the hash of its machine, settings and
/// suite, then, for a run that records its method versions, the mark and
/// the first 8 hex digits of their hash (`0f3c…9a2e-5b1d04c7`). A run of
/// feelbench 0.1.0 records none (version 0 of every one): its key is the
/// first part alone, as the store has it.
pub fn series_key(machine: &MachineKey, settings_hash: &str, run: &RunDocument) -> String {
    let suite = run
        .suite
        .as_ref()
        .map(|s| format!("{}@{}", s.name, s.version))
        .unwrap_or_default();
    let base = short_hash(&format!("{}/{settings_hash}/{suite}", machine.fingerprint));
    match &run.methods {
        None => base,
        Some(methods) => {
            let versions = serde_json::to_string(methods).unwrap_or_default();
            format!("{base}{METHODS_MARK}{}", &short_hash(&versions)[..8])
        }
    }
}

/// The series key without its method versions: the series of runs that
/// differ only in those (history and regressions cut it where they change).
pub fn base_of(series: &str) -> &str {
    series
        .split_once(METHODS_MARK)
        .map_or(series, |(base, _)| base)
}

/// The method versions' part of a series key (empty for a run that
/// recorded none): runs of one series, or of every series under
/// `regressions --any-series`, are cut where it changes.
pub fn methods_of(series: &str) -> &str {
    series
        .split_once(METHODS_MARK)
        .map_or("", |(_, methods)| methods)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::fixture;

    #[test]
    fn the_kernel_image_and_the_hostname_leave_the_fingerprint_alone() {
        let mut run = fixture::run();
        run.environment.kernel_cmdline = Some("BOOT_IMAGE=/vmlinuz-6.1 quiet".into());
        let before = machine_of(&run).fingerprint;
        run.environment.kernel_cmdline = Some("quiet BOOT_IMAGE=/vmlinuz-6.12".into());
        run.system.hostname = "elsewhere".into();
        assert_eq!(machine_of(&run).fingerprint, before);
        run.environment.kernel_cmdline = Some("quiet preempt=full".into());
        assert_ne!(machine_of(&run).fingerprint, before);
    }

    fn key_of(run: &RunDocument) -> String {
        let machine = machine_of(run);
        series_key(&machine, &settings_hash(run), run)
    }

    #[test]
    fn runs_that_differ_only_in_a_method_version_are_other_series_of_one_base() {
        let run = fixture::run();
        let mut raised = fixture::run();
        let methods = raised.methods.as_mut().unwrap();
        *methods.probes.get_mut("audio").unwrap() += 1;
        let (key, raised_key) = (key_of(&run), key_of(&raised));
        assert_ne!(key, raised_key);
        assert_eq!(base_of(&key), base_of(&raised_key));
        let mut load_raised = fixture::run();
        let methods = load_raised.methods.as_mut().unwrap();
        *methods.loads.get_mut("burn").unwrap() += 1;
        assert!(![key.clone(), raised_key].contains(&key_of(&load_raised)));
        // Another run of the same build shares the series.
        let mut again = fixture::run();
        again.run.id = "20261124-120000-7".into();
        assert_eq!(key_of(&again), key);
    }

    #[test]
    fn a_run_without_method_versions_keeps_the_key_it_was_stored_under() {
        let mut old = fixture::run();
        old.methods = None;
        let key = key_of(&old);
        // The key feelbench 0.1.0 gave this run.
        let settings = settings_hash(&old);
        let stored = short_hash(&format!("{}/{settings}/", machine_of(&old).fingerprint));
        assert_eq!(key, stored);
        assert_eq!(base_of(&key), key);
        assert_eq!(base_of(&key_of(&fixture::run())), key);
        assert_eq!(methods_of(&key), "");
        let new = key_of(&fixture::run());
        assert_eq!(format!("{key}-{}", methods_of(&new)), new);
    }

    #[test]
    fn the_settings_hash_of_a_fixed_run_stays_what_the_store_has() {
        // Keys are computed once, when a run is stored: a change here (a
        // new field of the settings serialised as null, a renamed one)
        // starts a new series for every run stored after it. If that is
        // meant, say so in CHANGELOG.md; else keep the new field out of
        // the hash (skip it when it is absent).
        let mut run = fixture::run();
        assert_eq!(settings_hash(&run), "fbf4ac92b4a64be9");
        assert_eq!(key_of(&run), "e068cc3ef0d08571-72811522");
        run.methods = None;
        assert_eq!(key_of(&run), "e068cc3ef0d08571");
    }

    #[test]
    fn calibration_leaves_the_settings_hash_alone_but_nice_does_not() {
        let mut run = fixture::run();
        let before = settings_hash(&run);
        run.settings.loops_per_ms *= 1.01;
        assert_eq!(settings_hash(&run), before);
        run.settings.load_nice = 19;
        assert_ne!(settings_hash(&run), before);
    }

    #[test]
    fn the_memory_available_leaves_the_settings_hash_alone_but_a_limit_does_not() {
        let mut run = fixture::run();
        run.settings.mem_limit_bytes = None;
        run.settings.mem_bytes = 24_308_473_856;
        let before = settings_hash(&run);
        // 22.6 GiB, then 21.7 GiB: two runs a minute apart on one machine.
        run.settings.mem_bytes = 23_259_287_552;
        assert_eq!(settings_hash(&run), before);
        run.settings.mem_limit_bytes = Some(4 << 30);
        run.settings.mem_bytes = 4 << 30;
        let limited = settings_hash(&run);
        assert_ne!(limited, before);
        run.settings.mem_bytes = 8 << 30;
        run.settings.mem_limit_bytes = Some(8 << 30);
        assert_ne!(settings_hash(&run), limited);
    }
}
