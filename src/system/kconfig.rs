//! The kernel's build configuration and preemption model: the timer
//! frequency from `/proc/config.gz` (or `/boot/config-RELEASE`), the
//! preemption build from the version string, and the current preemption
//! mode from debugfs, the `preempt=` boot parameter or the configured default.

use super::procfs::ProcError;
use super::read_optional;
use std::io::Read as _;
use std::path::Path;

/// The kernel configuration as text: `<proc_root>/config.gz` when the kernel
/// exposes it, else `<boot_dir>/config-RELEASE`; `Ok(None)` when neither exists.
pub fn read_config(
    proc_root: &Path,
    boot_dir: &Path,
    release: Option<&str>,
) -> Result<Option<String>, ProcError> {
    let gz = proc_root.join("config.gz");
    match std::fs::read(&gz) {
        Ok(bytes) => {
            let mut text = String::new();
            return flate2::read::GzDecoder::new(&bytes[..])
                .read_to_string(&mut text)
                .map(|_| Some(text))
                .map_err(|error| ProcError::Read { path: gz, error });
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(ProcError::Read { path: gz, error }),
    }
    match release {
        Some(release) => read_optional(&boot_dir.join(format!("config-{release}"))),
        None => Ok(None),
    }
}

/// The value of `CONFIG_<name>` in a kernel configuration; `None` when it is
/// not set.
pub fn config_value<'a>(config: &'a str, name: &str) -> Option<&'a str> {
    config.lines().find_map(|line| {
        line.strip_prefix("CONFIG_")?
            .strip_prefix(name)?
            .strip_prefix('=')
    })
}

/// The timer frequency (`CONFIG_HZ`); `None` when the configuration lacks it
/// or it is not a number.
pub fn hz(config: &str) -> Option<u32> {
    config_value(config, "HZ")?.parse().ok()
}

/// The preemption the kernel was built with, from its version string:
/// `PREEMPT_RT`, `PREEMPT_DYNAMIC`, `PREEMPT`, or `none` when the string
/// names none of them (the kernel writes them there since Linux 2.6).
pub fn preempt_build(version: &str) -> &'static str {
    let words: Vec<&str> = version.split_whitespace().collect();
    ["PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT"]
        .into_iter()
        .find(|model| words.contains(model))
        .unwrap_or("none")
}

/// The current preemption mode and where it was learnt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreemptMode {
    /// `none`, `voluntary`, `full` or `lazy`.
    pub mode: String,
    /// `debugfs` (the live setting), `cmdline` (the `preempt=` boot
    /// parameter) or `config` (the configured default; a later change
    /// through debugfs would not show).
    pub source: &'static str,
}

/// The current preemption mode of a `PREEMPT_DYNAMIC` kernel, from the
/// bracketed word of debugfs' `sched/preempt` (`debugfs_preempt`), else the
/// `preempt=` boot parameter, else the configured default. Non-dynamic
/// kernels have a fixed mode, given by `build`.
pub fn preempt_mode(
    build: &str,
    debugfs_preempt: Option<&str>,
    cmdline: Option<&str>,
    config: Option<&str>,
) -> Option<PreemptMode> {
    let fixed = |mode: &str, source| {
        Some(PreemptMode {
            mode: mode.to_string(),
            source,
        })
    };
    match build {
        "PREEMPT_RT" => return fixed("full", "config"),
        "PREEMPT" => return fixed("full", "config"),
        "none" => return None,
        _ => {}
    }
    if let Some(mode) = debugfs_preempt.and_then(super::bracketed) {
        return fixed(mode, "debugfs");
    }
    let boot = cmdline.and_then(|c| {
        c.split_whitespace()
            .find_map(|word| word.strip_prefix("preempt="))
    });
    if let Some(mode) = boot {
        return fixed(mode, "cmdline");
    }
    let config = config?;
    [
        ("PREEMPT_NONE", "none"),
        ("PREEMPT_VOLUNTARY", "voluntary"),
        ("PREEMPT_LAZY", "lazy"),
        ("PREEMPT", "full"),
    ]
    .into_iter()
    .find(|(name, _)| config_value(config, name) == Some("y"))
    .and_then(|(_, mode)| fixed(mode, "config"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of this machine's /proc/config.gz.
    const CONFIG: &str = "CONFIG_PREEMPT_BUILD=y\nCONFIG_PREEMPT_NONE=y\nCONFIG_PREEMPT_COUNT=y\nCONFIG_PREEMPTION=y\nCONFIG_PREEMPT_DYNAMIC=y\n# CONFIG_SCHED_CLASS_EXT is not set\nCONFIG_PREEMPT_RCU=y\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n";
    const VERSION: &str = "Linux version 6.18.44-fc-v782 (builder@sandboxing) (gcc (GCC) 15.3.0, GNU ld (GNU Binutils) 2.46) #1 SMP PREEMPT_DYNAMIC @0\n";

    #[test]
    fn hz_and_build_from_this_machine() {
        assert_eq!(hz(CONFIG), Some(250));
        assert_eq!(hz("CONFIG_HZ=fast\n"), None);
        assert_eq!(hz("# CONFIG_HZ is not set\n"), None);
        assert_eq!(preempt_build(VERSION), "PREEMPT_DYNAMIC");
        assert_eq!(preempt_build("#1 SMP PREEMPT_RT Tue"), "PREEMPT_RT");
        assert_eq!(preempt_build("#1 SMP Tue Jan 1"), "none");
    }

    #[test]
    fn preempt_mode_prefers_debugfs_then_cmdline_then_config() {
        let mode = |d, c, k| preempt_mode("PREEMPT_DYNAMIC", d, c, k).map(|m| (m.mode, m.source));
        assert_eq!(
            mode(Some("none voluntary (full) lazy"), None, Some(CONFIG)),
            Some(("full".into(), "debugfs"))
        );
        assert_eq!(
            mode(None, Some("quiet preempt=voluntary"), Some(CONFIG)),
            Some(("voluntary".into(), "cmdline"))
        );
        assert_eq!(
            mode(None, Some("quiet"), Some(CONFIG)),
            Some(("none".into(), "config"))
        );
        assert_eq!(mode(None, Some("quiet"), None), None);
        assert_eq!(preempt_mode("none", None, None, None), None);
    }

    #[test]
    fn config_comes_from_proc_or_boot_or_nowhere() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let (proc_root, boot) = (dir.path().join("proc"), dir.path().join("boot"));
        std::fs::create_dir_all(&proc_root).unwrap();
        std::fs::create_dir_all(&boot).unwrap();
        assert_eq!(read_config(&proc_root, &boot, Some("6.1")).unwrap(), None);
        std::fs::write(boot.join("config-6.1"), "CONFIG_HZ=1000\n").unwrap();
        let text = read_config(&proc_root, &boot, Some("6.1"))
            .unwrap()
            .unwrap();
        assert_eq!(hz(&text), Some(1000));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(CONFIG.as_bytes()).unwrap();
        std::fs::write(proc_root.join("config.gz"), gz.finish().unwrap()).unwrap();
        let text = read_config(&proc_root, &boot, Some("6.1"))
            .unwrap()
            .unwrap();
        assert_eq!(hz(&text), Some(250));
        std::fs::write(proc_root.join("config.gz"), "not gzip").unwrap();
        let err = read_config(&proc_root, &boot, None).unwrap_err();
        assert!(err.to_string().contains("config.gz"), "{err}");
    }
}
