//! `feelbench list`: every probe and load with one line each.

use crate::{load, probe};

/// The listing text.
pub fn render() -> String {
    let mut out = String::from("Probes (--probe, -W, -X):\n");
    for p in probe::PROBES {
        out.push_str(&format!("  {:<8} {}\n", p.name, p.summary));
    }
    out.push_str("\nLoads (--load, -w, -x):\n");
    for l in load::LOADS {
        out.push_str(&format!("  {:<8} {}\n", l.name, l.summary));
    }
    out
}
