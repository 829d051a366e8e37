//! Short real runs of the binary: the run document's structure and
//! invariants, `report` reproducing the console table, output files, and
//! the calibration cache. No test asserts a latency or speed figure.

use crate::common::{
    feelbench, feelbench_niced, feelbench_niced_as_nobody, new_tag, read_json, require_root,
    stderr, stdout, LOOPS_PER_MS,
};
use serde_json::Value;

fn f(value: &Value, path: &str) -> f64 {
    value
        .pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{path} missing in {value}"))
}

/// `feelbench run ARGS` with a fixed work-loop rate, writing `DIR/run.json`;
/// asserts it succeeded and returns its output and the run document.
fn measure(dir: &std::path::Path, args: &[&str]) -> (std::process::Output, Value) {
    let file = dir.join("run.json");
    let output = feelbench(&new_tag(), dir)
        .arg("run")
        .args(args)
        .args(["-l", LOOPS_PER_MS, "-q", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    (output, read_json(&file))
}

#[test]
fn started_under_nice_the_probe_and_loads_keep_that_nice_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    // Run as nobody when root, who could set any nice: a user cannot go below 5.
    let mut command = if nix::unistd::geteuid().is_root() {
        feelbench_niced_as_nobody(5, &new_tag(), dir.path())
    } else {
        feelbench_niced(5, &new_tag(), dir.path())
    };
    command.args(["run", "--probe", "audio", "--load", "burn", "-t", "0.5"]);
    command.args(["--warmup", "0", "-l", LOOPS_PER_MS, "-q", "-o"]);
    let output = command.arg(&file).output().unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let run = read_json(&file);
    assert_eq!(run["settings"]["probe_sched"]["nice"], 5);
    assert_eq!(run["settings"]["load_nice"], 5);
    let sched = &run["scenarios"][0]["result"]["sched"];
    assert_eq!(sched["nice"], 5);
    assert_eq!(sched["timer_slack_ns"], 1, "the default --timer-slack");
    let tasks = sched["tasks"].as_array().expect("the tasks read back");
    assert!(
        tasks.iter().any(|t| t["name"] == "fb-probe-audio"),
        "{sched}"
    );
    for task in tasks {
        assert_eq!(
            (&task["nice"], &task["policy"]),
            (&5.into(), &"SCHED_OTHER".into())
        );
    }
}

/// `feelbench report FILE --format FORMAT`.
fn report(dir: &std::path::Path, file: &std::path::Path, format: &str) -> std::process::Output {
    feelbench(&new_tag(), dir)
        .args(["report", "--format", format])
        .arg(file)
        .output()
        .unwrap()
}

fn assert_latency_ordered(scenario: &Value) {
    let l = &scenario["result"]["figures"];
    let chain = ["p50", "p90", "p99", "p999", "max"].map(|p| f(l, &format!("/latency_{p}_us")));
    assert!(
        chain.windows(2).all(|w| w[0] <= w[1]),
        "percentiles out of order: {chain:?}"
    );
    assert!(f(l, "/latency_mean_us") <= f(l, "/latency_max_us"));
    assert!(f(l, "/latency_mean_us") > 0.0);
    // A latency for every frame that woke: those that ran, and for the
    // periodic probes those dropped because they woke after their period.
    let woke_late = match scenario["probe"] == "gaming" {
        true => {
            assert!(l.get("frames_dropped").is_none(), "a game drops no frame");
            0.0
        }
        false => {
            let woke_late = f(scenario, "/result/tally/counts/woke_late");
            assert!(woke_late <= f(l, "/frames_dropped"));
            woke_late
        }
    };
    assert_eq!(f(l, "/samples"), f(l, "/frames_executed") + woke_late);
}

/// The scenario's sub-windows: 20 equal slices of `duration_s` whose counts
/// add up to the scenario's; returns them.
fn assert_batches_add_up(scenario: &Value, duration_s: f64) -> &Vec<Value> {
    let batches = scenario["result"]["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 20);
    let sum = |key: &str| batches.iter().map(|b| f(b, key)).sum::<f64>();
    assert!(batches
        .iter()
        .all(|b| f(b, "/counts/measured_s") == duration_s / 20.0));
    let whole = &scenario["result"]["tally"];
    for count in ["executed", "cpu_received_ms"] {
        let (parts, total) = (
            sum(&format!("/counts/{count}")),
            f(whole, &format!("/counts/{count}")),
        );
        assert!((parts - total).abs() < 1e-6, "{count}: {parts} vs {total}");
    }
    if scenario["probe"] == "gaming" {
        assert!(batches.iter().all(|b| b["counts"].get("periods").is_none()));
    } else {
        assert_eq!(
            sum("/counts/periods"),
            f(scenario, "/result/figures/deadlines_total")
        );
        assert_eq!(
            sum("/counts/met"),
            f(scenario, "/result/figures/deadlines_met")
        );
    }
    batches
}

#[test]
fn run_document_holds_consistent_figures_and_report_reproduces_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    let (output, run) = measure(
        dir.path(),
        &[
            "--probe",
            "audio,gaming,x",
            "--load",
            "none,burn",
            "-t",
            "1",
            "--warmup",
            "0.2",
        ]
        .into_iter()
        .chain(["-m", "integration test"])
        .collect::<Vec<_>>(),
    );
    assert_eq!(run["schema"], "feelbench.run/2");
    // The method version of each probe and load it used, and the build.
    let methods = &run["methods"];
    for probe in ["x", "audio", "gaming"] {
        assert!(methods["probes"][probe].as_u64() >= Some(1), "{methods}");
    }
    for load in ["none", "burn"] {
        assert!(methods["loads"][load].as_u64() >= Some(1), "{methods}");
    }
    assert_eq!(methods["probes"].as_object().unwrap().len(), 3, "{methods}");
    assert_eq!(run["tool"]["version"], env!("CARGO_PKG_VERSION"));
    // The build script gives the tests the commit it gave feelbench.
    assert_eq!(run["tool"]["commit"], env!("FEELBENCH_COMMIT"));
    // Settings no probe or load of the run works by are not recorded.
    for group in ["response", "job", "fragment", "io"] {
        assert!(run["settings"][group].is_null(), "{group} recorded");
    }
    for probe in ["x", "audio", "gaming"] {
        assert!(!run["probes"][probe]["figures"]
            .as_array()
            .unwrap()
            .is_empty());
    }
    assert_eq!(run["run"]["comment"], "integration test");
    assert_eq!(run["run"]["interrupted"], false);
    assert!(run["run"]["finished"].is_string());
    assert_eq!(f(&run, "/settings/duration_s"), 1.0);
    let scenarios = run["scenarios"].as_array().unwrap();
    let names: Vec<String> = scenarios
        .iter()
        .map(|s| {
            format!(
                "{}/{}",
                s["probe"].as_str().unwrap(),
                s["load"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            "x/none",
            "x/burn",
            "audio/none",
            "audio/burn",
            "gaming/none",
            "gaming/burn"
        ]
        .map(String::from)
    );
    for s in scenarios {
        assert_eq!(s["status"], "ok", "{s}");
        assert_latency_ordered(s);
        assert_batches_add_up(s, 1.0);
        let latency = &s["result"]["tally"]["samples"]["latency"];
        assert!(latency["histogram"].as_str().unwrap().len() > 10);
        assert!(f(s, "/result/tally/counts/measured_s") >= 1.0, "{s}");
        let work = s["load_work"].as_array().unwrap();
        if s["load"] == "burn" {
            assert_eq!(work.len(), 1);
            assert!(f(&work[0], "/amount") > 0.0 && f(&work[0], "/rate_per_s") > 0.0);
            assert!(f(&work[0], "/cpu_pct") > 0.0);
            assert_eq!(work[0]["processes"], run["settings"]["burn_processes"]);
        } else {
            assert!(work.is_empty());
        }
        if s["probe"] == "gaming" {
            assert!(s["result"]["figures"].get("deadlines_met_pct").is_none());
            assert!(f(s, "/result/figures/fps") > 0.0);
            assert!(f(s, "/result/figures/low_1pct_fps") <= f(s, "/result/figures/fps") * 1.05);
        } else {
            let d = &s["result"]["figures"];
            assert!(f(d, "/deadlines_met") <= f(d, "/deadlines_total"));
            assert_eq!(
                f(d, "/frames_executed") + f(d, "/frames_dropped"),
                f(d, "/deadlines_total"),
                "every period is a frame run or a frame dropped"
            );
            let periods = if s["probe"] == "audio" { 20.0 } else { 100.0 };
            assert_eq!(
                f(d, "/deadlines_total"),
                periods,
                "1 s of periods, no more, no less"
            );
        }
        assert!(f(s, "/result/figures/desired_cpu_pct") > 0.0);
    }

    let table = report(dir.path(), &file, "table");
    assert!(table.status.success());
    assert_eq!(
        stdout(&table),
        stdout(&output),
        "report must reproduce run's table"
    );

    let csv = report(dir.path(), &file, "csv");
    assert_eq!(
        stdout(&csv).lines().count(),
        1 + scenarios.len(),
        "header plus one row per scenario"
    );
    let md = report(dir.path(), &file, "md");
    assert!(stdout(&md).contains("## gaming"));
    let json = report(dir.path(), &file, "json");
    assert_eq!(serde_json::from_slice::<Value>(&json.stdout).unwrap(), run);
}

#[test]
fn custom_probe_accounts_every_period_of_its_window() {
    let dir = tempfile::tempdir().unwrap();
    let (_, run) = measure(
        dir.path(),
        &[
            "--probe", "custom", "-C", "0", "-I", "1000", "--load", "none", "-t", "1.5",
            "--warmup", "0",
        ],
    );
    let s = &run["scenarios"][0];
    assert_eq!(f(s, "/result/figures/deadlines_total"), 1500.0);
    let batches = assert_batches_add_up(s, 1.5);
    assert!(
        batches.iter().all(|b| f(b, "/counts/periods") == 75.0),
        "1 ms periods in 75 ms sub-windows"
    );
    assert!(
        s["result"]["figures"].get("desired_cpu_pct").is_none(),
        "0 % CPU wanted: no percentage"
    );
    assert_latency_ordered(s);
}

/// Names of the JSON files in `dir`.
fn json_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect()
}

/// A short audio-only run with a fixed work-loop rate.
const SHORT_AUDIO_RUN: [&str; 10] = [
    "run",
    "--probe",
    "audio",
    "--load",
    "none",
    "--warmup",
    "0",
    "-l",
    LOOPS_PER_MS,
    "-q",
];

#[test]
fn default_file_is_named_after_kernel_and_date_and_console_only_writes_none() {
    let dir = tempfile::tempdir().unwrap();
    let output = feelbench(&new_tag(), dir.path())
        .current_dir(dir.path())
        .args(SHORT_AUDIO_RUN)
        .args(["-t", "0.5"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let release = nix::sys::utsname::uname()
        .unwrap()
        .release()
        .to_string_lossy()
        .into_owned();
    let files = json_files(dir.path());
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(
        files[0].starts_with(&format!("feelbench-{release}-")),
        "{files:?}"
    );

    let console_dir = tempfile::tempdir().unwrap();
    let output = feelbench(&new_tag(), console_dir.path())
        .current_dir(console_dir.path())
        .args(SHORT_AUDIO_RUN)
        .args(["-t", "0.5", "-c"])
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(stdout(&output).contains("--- audio"));
    assert_eq!(json_files(console_dir.path()), Vec::<String>::new());
}

#[test]
fn unwritable_output_fails_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let output = feelbench(&new_tag(), dir.path())
        .args(SHORT_AUDIO_RUN)
        .args(["-t", "60", "-o", "/nonexistent-dir/run.json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(message.contains("/nonexistent-dir/run.json"), "{message}");
}

#[test]
fn calibration_is_measured_once_then_reused_from_the_cache() {
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "run", "--probe", "audio", "--load", "none", "-t", "0.2", "--warmup", "0", "-q", "-c",
    ];
    let first = feelbench(&new_tag(), cache.path())
        .args(args)
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(stderr(&first).contains("measured in"), "{}", stderr(&first));
    let stored = cache.path().join("feelbench/calibration.json");
    assert!(stored.exists());
    let second = feelbench(&new_tag(), cache.path())
        .args(args)
        .output()
        .unwrap();
    assert!(
        stderr(&second).contains(&format!("from {}", stored.display())),
        "{}",
        stderr(&second)
    );
}

#[test]
fn a_slice_is_given_to_every_probe_thread_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let output = feelbench(&new_tag(), dir.path())
        .args(["run", "--probe", "audio", "--load", "none", "-t", "0.3"])
        .args(["--warmup", "0", "--noise-check", "0", "--slice", "3ms"])
        .args(["-l", LOOPS_PER_MS, "-q", "--no-store", "-o", "run.json"])
        .output()
        .unwrap();
    let said = stderr(&output);
    if output.status.code() == Some(2) && said.contains("need Linux 6.12") {
        assert_eq!(said.trim().lines().count(), 1, "{said}");
        crate::common::skip("this kernel has no custom slices (Linux 6.12+)");
        return;
    }
    assert!(output.status.success(), "{said}");
    let run = read_json(&dir.path().join("run.json"));
    assert_eq!(run["settings"]["probe_sched"]["slice_ns"], 3_000_000);
    let sched = &run["scenarios"][0]["result"]["sched"];
    assert_eq!(sched["slice_ns"], 3_000_000, "{sched}");
    let tasks = sched["tasks"].as_array().expect("the tasks read back");
    assert!(!tasks.is_empty());
    for task in tasks {
        assert_eq!(task["slice_ns"], 3_000_000, "{task}");
    }
}

#[test]
fn rt_probe_runs_sched_fifo_with_its_timer_slack_recorded() {
    if !require_root("SCHED_FIFO, negative nice, mlock") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_, run) = measure(
        dir.path(),
        &[
            "--probe", "audio", "--load", "none", "--rt", "-B", "-5", "-t", "0.5", "--warmup", "0",
        ],
    );
    let sched = &run["scenarios"][0]["result"]["sched"];
    assert_eq!(sched["policy"], "SCHED_FIFO");
    assert_eq!(sched["fifo_priority"], 80);
    assert_eq!(sched["nice"], -5);
    assert_eq!(sched["memory_locked"], true);
    let slack = fifo_slack_of_1ns();
    assert_eq!(sched["timer_slack_ns"], slack, "{sched}");
    let tasks = sched["tasks"].as_array().expect("the tasks read back");
    assert!(
        tasks.iter().any(|t| t["name"] == "fb-probe-audio"),
        "{sched}"
    );
    for task in tasks {
        assert_eq!(task["policy"], "SCHED_FIFO", "{task}");
        assert_eq!(task["timer_slack_ns"], slack, "read as root: {task}");
    }
}

/// The timer slack this kernel gives a SCHED_FIFO thread that asked for
/// 1 ns, read back in a throwaway thread (0 since Linux 6.8, which runs
/// real-time tasks without slack; 1 before).
fn fifo_slack_of_1ns() -> i32 {
    std::thread::spawn(|| {
        let param = libc::sched_param { sched_priority: 1 };
        // SAFETY: `param` outlives the call; pid 0 is this thread.
        let ret = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
        assert_eq!(ret, 0, "{}", std::io::Error::last_os_error());
        // SAFETY: PR_SET_TIMERSLACK and PR_GET_TIMERSLACK take integers only.
        unsafe {
            assert_eq!(libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0), 0);
            libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0)
        }
    })
    .join()
    .unwrap()
}
