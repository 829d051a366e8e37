//! Memory cgroups: removing one (what a clean-up needs).

use anyhow::Context as _;
use std::path::Path;

/// Removes the cgroup directory at `path` (its processes must be gone).
pub fn remove(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_dir(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing cgroup {}", path.display()))
        }
        _ => Ok(()),
    }
}
