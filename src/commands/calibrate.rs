//! `feelbench calibrate`: measures loops_per_ms again and stores it.

use crate::measure::calibrate::{self, MachineIdentity};
use crate::system::SystemInfo;

/// Settings of `feelbench calibrate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalibrateSettings {
    /// Whether the figures are stored in the cache (else only printed).
    pub save: bool,
}

/// Calibrates, prints the figures, and stores them if `settings` say so.
pub fn run(system: &SystemInfo, settings: &CalibrateSettings) -> anyhow::Result<()> {
    let calibration = calibrate::measure();
    println!(
        "loops_per_ms {:.0} (spread {:.2} % IQR over rounds, took {} ms)",
        calibration.loops_per_ms, calibration.spread_pct, calibration.took_ms
    );
    match (settings.save, calibrate::default_cache_path()) {
        (true, Some(path)) => {
            calibrate::store(&path, &MachineIdentity::of(system), &calibration)?;
            println!("stored in {}", path.display());
        }
        (true, None) => say!("no HOME or XDG_CACHE_HOME: calibration not stored"),
        (false, _) => {}
    }
    Ok(())
}
