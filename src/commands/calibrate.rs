//! `feelbench calibrate`: measures loops_per_ms again and stores it.

use crate::measure::calibrate::{self, MachineIdentity};
use crate::system::SystemInfo;

/// Calibrates, prints the figures, and stores them unless `no_save`.
pub fn run(system: &SystemInfo, no_save: bool) -> anyhow::Result<()> {
    let calibration = calibrate::measure();
    println!(
        "loops_per_ms {:.0} (spread {:.2} % IQR over rounds, took {} ms)",
        calibration.loops_per_ms, calibration.spread_pct, calibration.took_ms
    );
    match (no_save, calibrate::default_cache_path()) {
        (false, Some(path)) => {
            calibrate::store(&path, &MachineIdentity::of(system), &calibration)?;
            println!("stored in {}", path.display());
        }
        (false, None) => eprintln!("feelbench: no HOME or XDG_CACHE_HOME: calibration not stored"),
        (true, _) => {}
    }
    Ok(())
}
