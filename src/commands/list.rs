//! `feelbench list`: every probe and load with one line each, and the names
//! that stand for a mix of loads.

use crate::{load, probe};

/// The listing text.
pub fn render() -> String {
    let mut out = String::from("Probes (--probe, -W, -X):\n");
    for p in probe::PROBES {
        out.push_str(&format!("  {:<10} {}\n", p.name, p.summary));
    }
    out.push_str("\nLoads (--load, -w, -x):\n");
    for l in load::LOADS {
        out.push_str(&format!("  {:<10} {}\n", l.name, l.summary));
    }
    for (alias, mix) in load::ALIASES {
        out.push_str(&format!("  {alias:<10} {mix} together\n"));
    }
    out
}
