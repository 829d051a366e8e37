//! What `run` measures: the probes and loads chosen, by name, by suite or
//! by `--full`, and the rt-app workloads named as `rtapp:SPEC`.

use super::*;

/// Which probes run under which loads.
#[derive(Debug, Args)]
#[command(next_help_heading = "Probes and loads")]
pub struct SelectionArgs {
    /// Run a suite: a classic tool's probes, loads and settings, printed in
    /// its table's shape (`feelbench suite list`). Options given after it
    /// override its settings; --probe/--load replace its groups' lists and
    /// -W/-X/-w/-x add and drop members. Without --suite, --probe, --load,
    /// -W, -w or --full, the run is the `default` suite.
    #[arg(long = "suite", value_name = "NAME", conflicts_with_all = ["suite_file", "full"])]
    pub suite: Option<String>,
    /// Run the suite in FILE (TOML, in the format of `feelbench suite show NAME --toml`).
    #[arg(long = "suite-file", value_name = "FILE", conflicts_with = "full")]
    pub suite_file: Option<PathBuf>,
    // Help: docs::PROBE_HELP, then (with --help) every probe.
    #[arg(
        long = "probe",
        value_name = "LIST",
        value_delimiter = ',',
        help = docs::PROBE_HELP,
        long_help = docs::probe_option_help()
    )]
    pub probes: Option<Vec<String>>,
    // Help: docs::LOAD_HELP, then (with --help) every load.
    #[arg(
        long = "load",
        value_name = "LIST",
        value_delimiter = ',',
        help = docs::LOAD_HELP,
        long_help = docs::load_option_help()
    )]
    pub loads: Option<Vec<String>>,
    /// Add a probe to the list (interbench -W).
    #[arg(short = 'W', long = "with-probe", value_name = "PROBE")]
    pub with_probes: Vec<String>,
    /// Remove a probe from the list (interbench -X).
    #[arg(short = 'X', long = "without-probe", value_name = "PROBE")]
    pub without_probes: Vec<String>,
    /// Add a load to the list (interbench -w).
    #[arg(short = 'w', long = "with-load", value_name = "LOAD")]
    pub with_loads: Vec<String>,
    /// Remove a load from the list (interbench -x).
    #[arg(short = 'x', long = "without-load", value_name = "LOAD")]
    pub without_loads: Vec<String>,
    /// Refuse an rt-app file (rtapp:FILE) that has a key rt-app ignores (a
    /// misspelt one), instead of warning and leaving the key out.
    #[arg(long = "rtapp-strict")]
    pub rtapp_strict: bool,
}

impl SelectionArgs {
    /// The rt-app workloads named as `rtapp:SPEC`, each name shortened to
    /// `rtapp` (see `cli::rtapp`).
    pub(super) fn take_rtapp(&mut self) -> Result<RtappSettings, UsageError> {
        let strict = self.rtapp_strict;
        let no_list: &mut [String] = &mut [];
        let probe = [
            take_workload(
                "--probe",
                self.probes.as_deref_mut().unwrap_or(no_list),
                false,
                strict,
            )?,
            take_workload("-W/--with-probe", &mut self.with_probes, false, strict)?,
        ];
        let no_list: &mut [String] = &mut [];
        let load = [
            take_workload(
                "--load",
                self.loads.as_deref_mut().unwrap_or(no_list),
                true,
                strict,
            )?,
            take_workload("-w/--with-load", &mut self.with_loads, true, strict)?,
        ];
        Ok(RtappSettings {
            probe: one_workload("--probe", probe)?,
            load: one_workload("--load", load)?,
        })
    }

    /// Every chosen probe under every chosen load, probe by probe.
    pub(super) fn scenarios(
        &self,
        full: bool,
        work: &WorkSettings,
        repeats: u32,
    ) -> Result<Vec<Scenario>, UsageError> {
        let params = work.params_before_the_run();
        let probes = Selection {
            list: self.probes.as_deref(),
            with: &self.with_probes,
            without: &self.without_probes,
        }
        .choose::<Probes>(&params, full)?;
        let loads = Selection {
            list: self.loads.as_deref(),
            with: &self.with_loads,
            without: &self.without_loads,
        }
        .choose::<Loads>(&params, full)?;
        Ok(probes
            .iter()
            .flat_map(|&probe| {
                loads.iter().map(move |load| Scenario {
                    probe,
                    load: load.clone(),
                    repeats,
                })
            })
            .collect())
    }

    /// Every probe of each of a suite's `groups` under every load of the
    /// group, once each, in the groups' order: the names given on the
    /// command line replace a group's lists, `with` and `without` add and
    /// drop members of every group; members that cannot run here are left
    /// out, each with why. Each is measured `at_least` times or as often
    /// as its group says, whichever is more (once when `at_least` is
    /// `None`: `--precision` decides).
    pub(super) fn suite_scenarios(
        &self,
        groups: &[Group],
        work: &WorkSettings,
        at_least: Option<u32>,
    ) -> Result<(Vec<Scenario>, Vec<String>), UsageError> {
        let params = work.params_before_the_run();
        let mut scenarios: Vec<Scenario> = Vec::new();
        let mut left_out: Vec<String> = Vec::new();
        for group in groups {
            let (probes, probes_left_out) = Selection {
                list: Some(self.probes.as_deref().unwrap_or(&group.probes)),
                with: &self.with_probes,
                without: &self.without_probes,
            }
            .runnable::<Probes>(&params)?;
            let (loads, loads_left_out) = Selection {
                list: Some(self.loads.as_deref().unwrap_or(&group.loads)),
                with: &self.with_loads,
                without: &self.without_loads,
            }
            .runnable::<Loads>(&params)?;
            for why in probes_left_out.into_iter().chain(loads_left_out) {
                if !left_out.contains(&why) {
                    left_out.push(why);
                }
            }
            for probe in probes {
                for load in &loads {
                    let known = scenarios
                        .iter()
                        .any(|s| s.probe.name == probe.name && s.load.name == load.name);
                    if !known {
                        scenarios.push(Scenario {
                            probe,
                            load: load.clone(),
                            repeats: at_least.map_or(1, |n| n.max(group.repeat.unwrap_or(1))),
                        });
                    }
                }
            }
        }
        if scenarios.is_empty() {
            let why = match left_out.is_empty() {
                true => String::new(),
                false => format!(": {}", left_out.join("; ")),
            };
            return Err(UsageError::new(format!(
                "no scenario of the suite left to run{why}"
            )));
        }
        Ok((scenarios, left_out))
    }

    /// Whether the user named loads (not only removed some).
    pub(super) fn loads_given(&self) -> bool {
        self.loads.is_some() || !self.with_loads.is_empty()
    }
}
