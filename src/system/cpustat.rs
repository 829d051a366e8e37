//! The system-wide CPU time split of `<proc_root>/stat` (its `cpu` line),
//! and the share of it stolen by the hypervisor between two samples.

use super::procfs::ProcError;
use std::path::Path;

/// Raw ticks of the `cpu` line, summed over all CPUs since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// user, nice, system, idle, iowait, irq, softirq and steal added up
    /// (guest time is already counted in user).
    pub total_ticks: u64,
    /// Time the hypervisor ran something else while this guest wanted to run;
    /// `None` on kernels whose line has no steal column.
    pub steal_ticks: Option<u64>,
}

/// Reads the `cpu` line of `<proc_root>/stat`.
pub fn read_cpu_times(proc_root: &Path) -> Result<CpuTimes, ProcError> {
    let path = proc_root.join("stat");
    let text = std::fs::read_to_string(&path).map_err(|source| ProcError::Read {
        path: path.clone(),
        source,
    })?;
    let line = text.lines().find(|l| l.starts_with("cpu ")).unwrap_or("");
    parse_cpu_line(line).ok_or_else(|| ProcError::Parse {
        path,
        line: line.to_string(),
    })
}

fn parse_cpu_line(line: &str) -> Option<CpuTimes> {
    let numbers: Vec<u64> = line
        .strip_prefix("cpu ")?
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    if numbers.len() < 4 {
        return None;
    }
    Some(CpuTimes {
        total_ticks: numbers.iter().take(8).sum(),
        steal_ticks: numbers.get(7).copied(),
    })
}

/// Percentage of all CPU time stolen between two samples; `None` when the
/// kernel has no steal column, no time passed, or a counter went backwards.
pub fn steal_pct(before: &CpuTimes, after: &CpuTimes) -> Option<f64> {
    let total = after.total_ticks.checked_sub(before.total_ticks)?;
    let steal = after.steal_ticks?.checked_sub(before.steal_ticks?)?;
    (total > 0).then(|| steal as f64 * 100.0 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_this_machines_cpu_line_and_computes_steal() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("stat"),
            "cpu  351987 0 144451 770865 41738 0 2867 8224 0 0\ncpu0 169818 0 71353 411026 3218 0 624 4102 0 0\n",
        )
        .unwrap();
        let before = read_cpu_times(dir.path()).unwrap();
        assert_eq!(before.steal_ticks, Some(8224));
        assert_eq!(
            before.total_ticks,
            351987 + 144451 + 770865 + 41738 + 2867 + 8224
        );
        let after = CpuTimes {
            total_ticks: before.total_ticks + 200,
            steal_ticks: Some(8228),
        };
        assert_eq!(steal_pct(&before, &after), Some(2.0));
        assert_eq!(steal_pct(&after, &before), None);
        assert_eq!(steal_pct(&before, &before), None);
    }

    #[test]
    fn old_kernel_has_no_steal_and_damage_is_an_error() {
        let old = parse_cpu_line("cpu  10 0 5 100").unwrap();
        assert_eq!(old.steal_ticks, None);
        assert_eq!(steal_pct(&old, &old), None);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stat"), "cpu  10 x 5 100\n").unwrap();
        let err = read_cpu_times(dir.path()).unwrap_err().to_string();
        assert!(err.contains("10 x 5"), "{err}");
    }
}
