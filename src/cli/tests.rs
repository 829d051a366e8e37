//! Tests of the command line: clap's definition, and the settings that
//! arguments become.

use super::*;
use crate::commands::run::{OutputChoice, RunConfig};
use clap::CommandFactory;

#[test]
fn clap_definition_is_consistent() {
    Cli::command().debug_assert();
}

/// A 2-CPU machine with `free_swap_bytes` of swap.
fn machine(free_swap_bytes: u64) -> Machine {
    Machine {
        cpus: 2,
        free_swap_bytes,
        online_cpus: "0-1".parse().ok(),
    }
}

/// The task `feelbench ARGS...` asks for on a 2-CPU machine without swap.
fn task(args: &[&str]) -> Result<Task, UsageError> {
    let mut full = vec!["feelbench"];
    full.extend_from_slice(args);
    match Cli::try_parse_from(full).expect("parses").command {
        Command::User(command) => command.into_task(&machine(0)),
        Command::Worker { .. } | Command::JobStep { .. } => {
            unreachable!("no test starts a worker or a job step")
        }
    }
}

/// The settings of `feelbench run ARGS...` with `free_swap_bytes`.
fn config_with_swap(args: &[&str], free_swap_bytes: u64) -> Result<RunConfig, UsageError> {
    let mut full = vec!["feelbench", "run"];
    full.extend_from_slice(args);
    match Cli::try_parse_from(full).expect("parses").command {
        Command::User(UserCommand::Run(run)) => run.into_config(&machine(free_swap_bytes)),
        _ => unreachable!("the arguments are a run's"),
    }
}

fn config(args: &[&str]) -> Result<RunConfig, UsageError> {
    config_with_swap(args, 0)
}

fn names(config: &RunConfig) -> Vec<String> {
    config.scenarios.iter().map(|s| format!("{s:?}")).collect()
}

#[test]
fn default_run_is_every_periodic_probe_under_every_default_load() {
    let c = config(&[]).unwrap();
    let params = crate::sim::WorkParams::for_tests();
    let default_loads = || crate::load::LOADS.iter().filter(|l| (l.default)(&params));
    let expected: Vec<String> = crate::probe::PROBES
        .iter()
        .filter(|p| (p.default)(&params))
        .flat_map(|p| default_loads().map(move |l| format!("{} under {}", p.name, l.name)))
        .collect();
    assert_eq!(names(&c), expected);
    assert!(names(&c).contains(&"audio under read".to_string()));
    assert!(names(&c).contains(&"audio under hack".to_string()));
    assert!(!names(&c).iter().any(|n| n.contains("smallwrite")));
    assert_eq!(c.work.burn_processes, 4);
    assert_eq!(c.timing.duration_ns, 6_000_000_000);
    assert!(!names(&c).iter().any(|n| n.contains("custom")));
    assert!(!c.loads_given);
}

#[test]
fn full_runs_every_runnable_load_for_30_s() {
    let c = config(&["--full"]).unwrap();
    assert_eq!(c.timing.duration_ns, 30_000_000_000);
    let names = names(&c);
    assert!(
        names.contains(&"gaming under burn".to_string()),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.contains("cmd") || n.contains("custom")),
        "{names:?}"
    );
    assert!(names.contains(&"micro under none".to_string()));
    assert!(names.contains(&"job under jobload".to_string()));
    assert!(
        !names.iter().any(|n| n.ends_with("under cacherun")),
        "a condition of the job, not work: {names:?}"
    );
    assert!(
        !names.iter().any(|n| n.contains("micro:")),
        "the parts of micro run in micro: {names:?}"
    );
    assert_eq!(
        config(&["--full", "-t", "2"]).unwrap().timing.duration_ns,
        2_000_000_000
    );
}

#[test]
fn a_probe_named_with_a_colon_is_chosen_by_its_name() {
    let c = config(&["--probe", "micro:pipe,micro", "--load", "none"]).unwrap();
    assert_eq!(names(&c), ["micro under none", "micro:pipe under none"]);
}

#[test]
fn custom_joins_the_defaults_when_shaped() {
    let c = config(&["-C", "10", "-I", "2000"]).unwrap();
    assert_eq!(c.scenarios.len(), 45);
}

#[test]
fn include_and_exclude_work_like_interbench() {
    let c = config(&[
        "--probe", "audio", "-W", "video", "-x", "burn", "-x", "x", "-x", "write", "-x", "read",
    ])
    .unwrap();
    assert_eq!(
        names(&c),
        [
            "audio under none",
            "audio under video",
            "audio under hack",
            "audio under spawn",
            "video under none",
            "video under video",
            "video under hack",
            "video under spawn"
        ]
    );
    assert!(config(&["-w", "burn"]).unwrap().loads_given);
}

#[test]
fn unknown_names_list_the_valid_ones() {
    let err = config(&["--probe", "audoi"]).unwrap_err().to_string();
    assert!(err.contains("unknown probe 'audoi'"), "{err}");
    assert!(
        err.contains("x, audio, video, gaming, game, custom"),
        "{err}"
    );
    let err = config(&["-x", "brun"]).unwrap_err().to_string();
    assert!(err.contains("unknown load 'brun'"), "{err}");
}

#[test]
fn custom_without_its_shape_is_refused_as_probe_and_as_load() {
    let err = config(&["--probe", "custom"]).unwrap_err().to_string();
    assert!(err.contains("--custom-cpu"), "{err}");
    let err = config(&["--load", "custom"]).unwrap_err().to_string();
    assert!(
        err.starts_with("load custom:") && err.contains("--custom-cpu"),
        "{err}"
    );
    let err = config(&["-w", "custom"]).unwrap_err().to_string();
    assert!(err.contains("--custom-cpu"), "{err}");
}

#[test]
fn out_of_range_values_are_refused() {
    for args in [
        &["-t", "0"][..],
        &["-t", "nan"],
        &["-B", "-21"],
        &["-N", "20"],
        &["-L", "0"],
        &["-l", "0.5"],
        &["-C", "101", "-I", "1000"],
        &["-C", "10", "-I", "99"],
        &["--rt-priority", "100"],
        &["--noise-check", "100000"],
        &["--warmup", "inf"],
        &["--cpu-dma-latency", "2000000001"],
    ] {
        assert!(config(args).is_err(), "{args:?}");
    }
}

#[test]
fn cpu_dma_latency_is_kept_when_given_and_refused_when_not_a_limit() {
    assert_eq!(config(&[]).unwrap().cpu_dma_latency_us, None);
    let held = |us: &str| {
        config(&["--cpu-dma-latency", us])
            .unwrap()
            .cpu_dma_latency_us
    };
    assert_eq!(held("0"), Some(0));
    assert_eq!(held("2000000000"), Some(2_000_000_000));
    for value in ["-1", "1.5", "zero", "4294967296"] {
        let parsed = Cli::try_parse_from(["feelbench", "run", "--cpu-dma-latency", value]);
        assert!(parsed.is_err(), "{value}");
    }
}

#[test]
fn placement_takes_online_cpus_and_weights_in_range() {
    let c = config(&[
        "--probe-cpus",
        "0",
        "--load-cpus",
        "1",
        "--load-cpu-weight",
        "10",
    ])
    .unwrap();
    let shown = |cpus: &Option<CpuList>| cpus.as_ref().map(CpuList::to_string);
    assert_eq!(shown(&c.placement.probe_cpus).as_deref(), Some("0"));
    assert_eq!(shown(&c.placement.load_cpus).as_deref(), Some("1"));
    assert_eq!(c.placement.load_cpu_weight, Some(10));
    assert_eq!(config(&[]).unwrap().placement, Default::default());
    let err = config(&["--load-cpus", "1-2"]).unwrap_err().to_string();
    assert_eq!(
        err,
        "--load-cpus: CPU 2 is not online (the online CPUs are 0-1)"
    );
    for weight in ["0", "10001"] {
        let err = config(&["--load-cpu-weight", weight])
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!("--load-cpu-weight takes 1 to 10000, not {weight}")
        );
    }
}

#[test]
fn malformed_cpu_lists_are_refused_by_the_parser() {
    for list in ["", "x", "1-", "2-1"] {
        let err = Cli::try_parse_from(["feelbench", "run", "--probe-cpus", list]).unwrap_err();
        assert_eq!(err.exit_code(), 2, "{list:?}");
        assert!(err.to_string().contains("not a CPU list"), "{err}");
    }
}

#[test]
fn memload_needs_swap_from_the_system_or_from_swap_option() {
    let err = config(&["--load", "memload"]).unwrap_err().to_string();
    assert!(
        err.starts_with("load memload: needs swap") && err.contains("--swap SIZE"),
        "{err}"
    );
    let c = config(&["--load", "memload", "--swap", "1G"]).unwrap();
    assert_eq!(c.work.swap_bytes, 1 << 30);
    assert_eq!(c.swap_file_bytes, Some(1 << 30));
    assert!(config_with_swap(&["--load", "memload"], 1 << 30).is_ok());
    assert!(!names(&config_with_swap(&[], 1 << 30).unwrap())
        .iter()
        .any(|n| n.contains("memload")));
}

#[test]
fn the_work_is_complete_once_the_run_knows_rate_and_sizes() {
    let c = config(&["-C", "10", "-I", "2000", "--file-size", "1G", "-L", "3"]).unwrap();
    let params = c.work.params(5000.0, 1 << 30, 1 << 29);
    assert_eq!(params.loops_per_ms, 5000.0);
    assert_eq!((params.file_bytes, params.mem_bytes), (1 << 30, 1 << 29));
    assert_eq!((params.cpus, params.burn_processes), (2, 3));
    assert_eq!(params.custom.map(|s| s.interval_us), Some(2000));
    assert_eq!(c.work.file_bytes, Some(1 << 30));
}

#[test]
fn the_response_probes_take_resp1s_defaults_and_arrays_follow_the_memory() {
    let defaults = config(&["--probe", "response"]).unwrap();
    let params = defaults.work.params(5000.0, 1 << 30, 1 << 30).response;
    assert_eq!((params.gap_ns, params.points), (20_000_000_000, 5));
    assert_eq!(
        (params.resident_bytes, params.fresh_bytes),
        (32 << 20, 32 << 20)
    );
    assert_eq!((params.command, params.cold), (None, false));
    let c = config(&[
        "--response-gap",
        "0.5",
        "--response-points",
        "7",
        "--response-resident",
        "8M",
        "--command",
        "ls /",
        "--command-cold",
    ])
    .unwrap();
    let params = c.work.params(5000.0, 1 << 30, 1 << 30).response;
    assert_eq!((params.gap_ns, params.points), (500_000_000, 7));
    assert_eq!(
        (params.resident_bytes, params.fresh_bytes),
        (8 << 20, 32 << 20)
    );
    assert_eq!(
        (params.command.as_deref(), params.cold),
        (Some("ls /"), true)
    );
}

#[test]
fn repeat_is_one_by_default_and_refused_below_one() {
    assert_eq!(config(&[]).unwrap().timing.repeats, 1);
    assert_eq!(config(&["--repeat", "3"]).unwrap().timing.repeats, 3);
    let err = config(&["--repeat", "0"]).unwrap_err().to_string();
    assert_eq!(err, "--repeat takes 1 to 1000, not 0");
}

#[test]
fn precision_takes_a_cap_of_ten_measurements_by_default() {
    assert_eq!(config(&[]).unwrap().timing.precision, None);
    let goal = |args: &[&str]| config(args).unwrap().timing.precision.unwrap();
    let default = goal(&["-t", "2", "--precision", "5%"]);
    assert_eq!(default.pct, 5.0);
    assert_eq!(default.max_time_ns, 20_000_000_000);
    assert_eq!(default.max_measurements(2_000_000_000), 10);
    let capped = goal(&["-t", "2", "--precision", "5", "--max-time", "7"]);
    assert_eq!(capped.max_measurements(2_000_000_000), 3);
    assert_eq!(config(&["--precision", "5"]).unwrap().timing.repeats, 1);
}

#[test]
fn precision_refuses_repeat_and_a_cap_below_one_measurement() {
    let parse = |args: &[&str]| {
        let mut full = vec!["feelbench", "run"];
        full.extend_from_slice(args);
        Cli::try_parse_from(full).map(|_| ()).unwrap_err().kind()
    };
    use clap::error::ErrorKind;
    assert_eq!(
        parse(&["--precision", "5", "--repeat", "3"]),
        ErrorKind::ArgumentConflict
    );
    assert_eq!(
        parse(&["--max-time", "30"]),
        ErrorKind::MissingRequiredArgument
    );
    assert_eq!(parse(&["--precision", "0"]), ErrorKind::ValueValidation);
    let err = config(&["-t", "3", "--precision", "5", "--max-time", "2"])
        .unwrap_err()
        .to_string();
    assert_eq!(err, "--max-time takes seconds from 3 to 86400, not 2");
    let err = config(&["-t", "0.1", "--precision", "5", "--max-time", "200"])
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("--max-time allows at most 1000 measurements"),
        "{err}"
    );
}

#[test]
fn duration_is_kept_exactly() {
    assert_eq!(
        config(&["-t", "2.5"]).unwrap().timing.duration_ns,
        2_500_000_000
    );
}

#[test]
fn negative_nice_is_accepted_as_a_value() {
    assert_eq!(config(&["-B", "-5"]).unwrap().probe_sched.nice, -5);
    let c = config(&["-r", "--rt-priority", "50", "--timer-slack", "0"]).unwrap();
    assert_eq!(c.probe_sched.fifo_priority, Some(50));
    assert_eq!(c.probe_sched.timer_slack_ns, 1);
}

#[test]
fn a_slice_is_kept_in_the_kernels_bounds_and_not_with_rt() {
    assert_eq!(config(&[]).unwrap().probe_sched.slice_ns, None);
    let c = config(&["--slice", "3ms"]).unwrap();
    assert_eq!(c.probe_sched.slice_ns, Some(3_000_000));
    for bad in ["50us", "101ms"] {
        let err = config(&["--slice", bad]).unwrap_err().to_string();
        assert!(err.starts_with("--slice takes 0.1ms to 100ms"), "{err}");
    }
    assert!(Cli::try_parse_from(["feelbench", "run", "--slice", "3ms", "--rt"]).is_err());
}

#[test]
fn output_choices_become_one_setting() {
    let file = |args: &[&str]| config(args).unwrap().output.file;
    assert_eq!(file(&[]), OutputChoice::Default);
    assert_eq!(file(&["-c"]), OutputChoice::ConsoleOnly);
    assert_eq!(
        file(&["-o", "r.json"]),
        OutputChoice::File(PathBuf::from("r.json"))
    );
}

#[test]
fn report_and_compare_map_their_choices_to_settings() {
    let Ok(Task::Report(report)) = task(&["report", "r.json", "--format", "md", "-v"]) else {
        panic!("a report task");
    };
    let results = ReportView::Results {
        format: commands::Format::Md,
        verbose: true,
    };
    assert_eq!(report.view, results);
    let Ok(Task::Report(report)) = task(&["report", "r.json", "--env"]) else {
        panic!("a report task");
    };
    assert_eq!(report.view, ReportView::Environment);
    for (args, worst) in [
        (&["--explain"][..], 5),
        (&["--explain", "--worst", "12"], 12),
    ] {
        let Ok(Task::Report(report)) = task(&[&["report", "r.json"][..], args].concat()) else {
            panic!("a report task");
        };
        assert_eq!(report.view, ReportView::Explain { worst });
    }
    for wrong in [&["--worst", "3"][..], &["--explain", "--format", "csv"]] {
        let args = [&["feelbench", "report", "r.json"][..], wrong].concat();
        assert!(Cli::try_parse_from(args).is_err(), "{wrong:?}");
    }
    let Ok(Task::Compare(compare)) = task(&["compare", "a", "b", "--layout", "rows"]) else {
        panic!("a compare task");
    };
    assert_eq!(compare.layout, Layout::Rows);
    assert_eq!(compare.options.figures, figure_keys(true));
    let md_rows = task(&["compare", "a", "b", "--layout", "rows", "--format", "md"]);
    assert!(matches!(md_rows, Ok(Task::Compare(c)) if c.layout == Layout::Rows));
}

#[test]
fn compare_options_are_checked() {
    for (args, message) in [
        (
            &["--alpha", "0.5"][..],
            "--alpha 0.5 is not a significance level",
        ),
        (&["--name", "one"], "--name gives 1 name(s) for 2 runs"),
        (&["--figure", "p42"], "unknown figure \"p42\""),
        (
            &["--layout", "rows", "--format", "html"],
            "--layout rows is a shape of the table and md formats; --format html",
        ),
        (&["--layout", "rows", "--format", "csv"], "--layout rows"),
        (&["--layout", "rows", "--format", "json"], "--layout rows"),
    ] {
        let mut full = vec!["compare", "a", "b"];
        full.extend_from_slice(args);
        let err = task(&full).unwrap_err().to_string();
        assert!(err.starts_with(message), "{args:?}: {err}");
    }
}

#[test]
fn the_job_options_become_the_job_settings() {
    let c = config(&["--probe", "job", "--load", "none"]).unwrap();
    assert_eq!(c.work.job, crate::sim::job::JobSettings::default());
    let c = config(&[
        "--job",
        " make -j4 ",
        "--job-size",
        "0.5",
        "--job-timeout",
        "60",
    ])
    .unwrap();
    let job = &c.work.job;
    assert_eq!(job.command.as_deref(), Some("make -j4"));
    assert_eq!((job.size, job.timeout_s), (0.5, 60.0));
    let cold = config(&["--job-cache", "cold"]).unwrap();
    assert_eq!(cold.work.job.cache, crate::sim::job::JobCache::Cold);
    let hot = Cli::try_parse_from(["feelbench", "run", "--job-cache", "hot"]).unwrap_err();
    assert!(
        hot.to_string().contains("takes warm or cold, not hot"),
        "{hot}"
    );
    for (args, message) in [
        (["--job", " "], "--job needs a command"),
        (
            ["--job=make", "--job-cache=cold"],
            "a --job command's files are its own",
        ),
        (["--job-size", "0"], "--job-size takes a number above 0"),
        (["--job-size", "1000"], "at most 100, not 1000"),
        (
            ["--job-timeout", "0"],
            "--job-timeout takes seconds from 0.1",
        ),
    ] {
        let err = config(&args).unwrap_err().to_string();
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

#[test]
fn the_game_options_become_the_frame_graph() {
    use crate::sim::game::GameSettings;
    let c = config(&["--probe", "game", "--load", "none"]).unwrap();
    assert_eq!(c.work.game, GameSettings::default());
    let args = [
        "--game-refresh",
        "144",
        "--game-queue",
        "3",
        "--game-pool",
        "4",
        "--game-jobs",
        "30",
        "--game-cpu",
        "80",
    ];
    let expected = GameSettings {
        refresh_hz: 144,
        queue: 3,
        workers: 4,
        jobs: 30,
        cpu_pct: 80.0,
    };
    assert_eq!(config(&args).unwrap().work.game, expected);
    for (args, message) in [
        (
            ["--game-refresh", "75"],
            "--game-refresh takes 60 or 144, not 75",
        ),
        (["--game-queue", "4"], "--game-queue takes 1 to 3, not 4"),
        (["--game-pool", "0"], "--game-pool takes 1 to 16, not 0"),
        (["--game-jobs", "0"], "--game-jobs takes 1 to 256, not 0"),
        (["--game-cpu", "NaN"], "--game-cpu takes a percentage"),
    ] {
        let err = config(&args).unwrap_err().to_string();
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

#[test]
fn the_fragment_options_become_the_fragment_settings() {
    use crate::sim::fragment::FragmentSettings;
    let c = config(&["--probe", "fragment", "--load", "none"]).unwrap();
    assert_eq!(c.work.fragment, FragmentSettings::default());
    let args = [
        "--fragments",
        "2",
        "--fragment-bytes",
        "128",
        "--sample-rate",
        "48000",
        "--fragment-cpu",
        "25",
    ];
    let c = config(&args).unwrap();
    let expected = FragmentSettings {
        fragments: 2,
        fragment_bytes: 128,
        sample_rate_hz: 48_000,
        cpu_pct: 25.0,
    };
    assert_eq!(c.work.fragment, expected);
    for (args, message) in [
        (["--fragments", "65"], "--fragments takes 2 to 64, not 65"),
        (["--fragment-bytes", "8"], "from 16 to 1048576, not 8"),
        (
            ["--sample-rate", "1000000"],
            "--sample-rate takes 8000 to 384000",
        ),
        (
            ["--fragment-cpu", "NaN"],
            "--fragment-cpu takes a percentage",
        ),
    ] {
        let err = config(&args).unwrap_err().to_string();
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

#[test]
fn the_io_options_become_the_io_settings() {
    use crate::sim::io::IoSettings;
    let c = config(&["--probe", "fileio", "--load", "ioseqwrite"]).unwrap();
    assert_eq!(c.work.io, IoSettings::default());
    let args = [
        "--fileio-size",
        "64M",
        "--fileio-period",
        "50ms",
        "--io-thresholds",
        "10ms,1s",
        "--io-threads",
        "16",
    ];
    let expected = IoSettings {
        probe_file_bytes: 64 << 20,
        period_ns: 50_000_000,
        thresholds_ns: vec![10_000_000, 1_000_000_000],
        threads: 16,
    };
    assert_eq!(config(&args).unwrap().work.io, expected);
    for (args, message) in [
        (["--io-threads", "0"], "--io-threads takes 1 to 64, not 0"),
        (
            ["--fileio-period", "20s"],
            "--fileio-period takes 1ms to 10s, not 20s",
        ),
        (["--fileio-size", "4K"], "--fileio-size takes 1M or more"),
    ] {
        let err = config(&args).unwrap_err().to_string();
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

#[test]
fn a_job_step_is_a_hidden_subcommand_of_its_own() {
    let args = ["feelbench", crate::sim::job::step::STEP_SUBCOMMAND, "{}"];
    let command = Cli::try_parse_from(args).unwrap().command;
    assert!(matches!(command, Command::JobStep { spec } if spec == "{}"));
    let help = Cli::command().render_long_help().to_string();
    assert!(!help.contains("job-step"), "{help}");
}

#[test]
fn rtapp_specs_become_the_workloads_of_the_rtapp_probe_and_load() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.json");
    let text =
        r#"{ "tasks": { "t": { "run": 2000, "timer": { "ref": "unique", "period": 10000 } } } }"#;
    std::fs::write(&file, text).unwrap();
    let spec = format!("rtapp:{}", file.display());
    let load = format!("burn+{spec}");
    let c = config(&["--probe", &spec, "--load", &load]).unwrap();
    assert_eq!(names(&c), ["rtapp under burn+rtapp"]);
    let probe = c.work.rtapp.probe.as_ref().unwrap();
    assert_eq!(probe.tasks[0].name, "t");
    assert_eq!(c.work.rtapp.load.as_ref(), Some(probe));
    let err = config(&["--probe", "rtapp", "--load", "none"]).unwrap_err();
    assert!(err.to_string().contains("rtapp needs a workload"), "{err}");
}
