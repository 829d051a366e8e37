//! Text generated from the registries for the command line: the long help
//! of `--probe` and `--load` lists every probe and load with its summary.

use crate::commands::list;

/// Short help of `--probe`.
pub const PROBE_HELP: &str = "Probes to measure, comma-separated (default: all periodic probes)";
/// Short help of `--load`.
pub const LOAD_HELP: &str = "Loads to measure under, comma-separated (default: the standard set)";

/// Long help of `--probe`: its short help, then every probe.
pub fn probe_option_help() -> String {
    format!(
        "{PROBE_HELP}, from:\n{}",
        list::render_lines(&list::probes()).trim_end()
    )
}

/// Long help of `--load`: its short help, then every load and mix.
pub fn load_option_help() -> String {
    format!(
        "{LOAD_HELP}, from these (combined with +, e.g. burn+write):\n{}",
        list::render_lines(&list::loads()).trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_of_probes_and_loads_list_every_entry() {
        let probes = probe_option_help();
        for entry in list::probes() {
            assert!(probes.contains(&entry.summary), "{}", entry.name);
        }
        let loads = load_option_help();
        for entry in list::loads() {
            assert!(loads.contains(&entry.summary), "{}", entry.name);
        }
    }
}
