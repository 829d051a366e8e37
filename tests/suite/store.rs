//! Every run is added to the store when it ends: the store in the user's
//! data directory by default, `--store` elsewhere, none with `--no-store`
//! or `-c`; a store that cannot be used costs a one-line warning, not the
//! run. `store import` adds files written before.

use crate::common::{feelbench, new_tag, stderr, stdout};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;

/// `feelbench runs --format json` in `dir`'s default store (and any extra
/// arguments), parsed.
fn stored_runs(dir: &Path, extra: &[&str]) -> Vec<Value> {
    let output = feelbench(&new_tag(), dir)
        .args(["runs", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str::<Vec<Value>>(&stdout(&output)).unwrap()
}

/// A one-second run of x under no load in `dir`, with `extra` options.
fn short_run(dir: &Path, file: &str, extra: &[&str]) -> std::process::Output {
    feelbench(&new_tag(), dir)
        .args([
            "run", "--probe", "x", "--load", "none", "-t", "1", "-o", file,
        ])
        .args(extra)
        .output()
        .unwrap()
}

fn sha256_of(path: &Path) -> String {
    Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_run_is_stored_whole_in_the_data_directory_and_importing_it_again_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let output = short_run(dir.path(), "r.json", &["-m", "first"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("run stored in"),
        "{}",
        stderr(&output)
    );
    let runs = stored_runs(dir.path(), &[]);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["comment"], "first");
    assert_eq!(runs[0]["doc_sha256"], sha256_of(&dir.path().join("r.json")));
    assert!(dir.path().join("feelbench/store.sqlite").is_file());

    let again = feelbench(&new_tag(), dir.path())
        .args(["store", "import", "r.json"])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stdout(&again).starts_with("0 run(s) added"),
        "{}",
        stdout(&again)
    );
    assert_eq!(stored_runs(dir.path(), &["--comment", "first"]).len(), 1);
    assert!(stored_runs(dir.path(), &["--comment", "other"]).is_empty());
}

#[test]
fn no_store_and_console_only_store_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for extra in [&["--no-store"][..], &["-c"][..]] {
        let args: Vec<&str> = ["run", "--probe", "x", "--load", "none", "-t", "1"]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        let output = feelbench(&new_tag(), dir.path())
            .args(&args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
    }
    assert!(stored_runs(dir.path(), &[]).is_empty());
}

#[test]
fn a_store_that_cannot_be_used_warns_in_one_line_and_the_run_file_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("not-a-store"), vec![b'x'; 8192]).unwrap();
    let output = short_run(dir.path(), "r.json", &["--store", "not-a-store"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let said = stderr(&output);
    let warnings: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("run not stored"))
        .collect();
    assert_eq!(warnings.len(), 1, "{said}");
    assert!(warnings[0].contains("not a store"), "{}", warnings[0]);
    crate::common::read_json(&dir.path().join("r.json"));
}

#[test]
fn importing_a_file_that_is_not_a_run_adds_the_others_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    let output = short_run(dir.path(), "runs/r.json", &["--no-store"]);
    assert!(output.status.success(), "{}", stderr(&output));
    std::fs::write(runs.join("broken.json"), "{").unwrap();
    let import = feelbench(&new_tag(), dir.path())
        .args(["store", "import", "runs"])
        .output()
        .unwrap();
    assert_eq!(import.status.code(), Some(2), "{}", stderr(&import));
    assert!(
        stderr(&import).contains("1 run(s) added"),
        "{}",
        stderr(&import)
    );
    assert!(
        stderr(&import).contains("broken.json"),
        "{}",
        stderr(&import)
    );
    assert_eq!(stored_runs(dir.path(), &[]).len(), 1);
}

// Issue 29: the store loses nothing, says when it refuses a run, cuts the
// series an annotation names, and is private to its user.

/// tests/data/v1-run.json written to `dir/name` after `edit`.
pub fn doctored(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> std::path::PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1-run.json");
    let mut run = crate::common::read_json(&source);
    edit(&mut run);
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&run).unwrap()).unwrap();
    path
}

/// The run with its load under `burn` given twice (`--load burn+burn`):
/// two figures `work:burn`.
pub fn two_burns(run: &mut Value) {
    let scenario = run["scenarios"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["load"] == "burn")
        .unwrap();
    let work = scenario["load_work"].as_array_mut().unwrap();
    let mut second = work[0].clone();
    second["rate_per_s"] = 500.0.into();
    work.push(second);
}

/// `feelbench ARGS` in `dir` (its default store there).
fn in_dir(dir: &Path, args: &[&str]) -> std::process::Output {
    feelbench(&new_tag(), dir).args(args).output().unwrap()
}

#[test]
fn a_run_with_two_load_parts_of_one_name_is_stored_with_both() {
    let dir = tempfile::tempdir().unwrap();
    let file = doctored(dir.path(), "twice.json", two_burns);
    let import = in_dir(dir.path(), &["store", "import", file.to_str().unwrap()]);
    assert!(import.status.success(), "{}", stderr(&import));
    assert!(stdout(&import).starts_with("1 run(s) added"));
    let second = in_dir(
        dir.path(),
        &[
            "history",
            "--probe",
            "x",
            "--load",
            "burn",
            "--figure",
            "work:burn#2",
            "--format",
            "csv",
        ],
    );
    assert!(second.status.success(), "{}", stderr(&second));
    assert!(stdout(&second).contains(",500"), "{}", stdout(&second));
}

#[test]
fn import_refuses_another_run_under_a_taken_key_and_carries_on() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    doctored(&runs, "a.json", |_| {});
    doctored(&runs, "b.json", |run| {
        run["run"]["comment"] = "other".into()
    });
    doctored(&runs, "c.json", |run| {
        run["run"]["id"] = "20261123-114752-1".into()
    });
    let import = in_dir(dir.path(), &["store", "import", runs.to_str().unwrap()]);
    assert_eq!(import.status.code(), Some(1), "{}", stderr(&import));
    let said = stderr(&import);
    assert!(said.contains("2 run(s) added"), "{said}");
    assert!(said.contains("1 refused"), "{said}");
    assert!(said.contains("b.json: not stored: the store holds a different run"));
    let kept = stored_runs(dir.path(), &[]);
    assert_eq!(kept.len(), 2);
    assert!(kept.iter().all(|r| r["comment"] != "other"));
}

/// The id of the regressions test store's copy `i`.
fn copy_id(i: usize) -> String {
    format!("20261124-{:02}0000-{i}", i % 24)
}

/// `regressions --format json` in `dir` with `extra`: the changes found.
fn changes(dir: &Path, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["regressions", "--format", "json"];
    args.extend(extra);
    let output = in_dir(dir, &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    report["changes"].as_array().unwrap().clone()
}

#[test]
fn annotate_takes_the_start_of_a_series_key_as_history_does() {
    let dir = tempfile::tempdir().unwrap();
    let runs = crate::regressions::step_copies(dir.path());
    assert!(
        in_dir(dir.path(), &["store", "import", runs.to_str().unwrap()])
            .status
            .success()
    );
    assert!(!changes(dir.path(), &[]).is_empty(), "the step is found");
    let series = stored_runs(dir.path(), &[])[0]["series"]
        .as_str()
        .unwrap()
        .to_string();
    let (run, note) = (copy_id(11), "BIOS update");
    let prefix = &series[..4];
    let cut = in_dir(
        dir.path(),
        &["store", "annotate", &run, note, "--series", prefix],
    );
    assert!(cut.status.success(), "{}", stderr(&cut));
    assert!(changes(dir.path(), &[]).is_empty(), "the cut holds");
    assert!(stdout(&cut).starts_with(&format!("series {series} cut")));
    let unknown = in_dir(
        dir.path(),
        &["store", "annotate", &run, note, "--series", "zz"],
    );
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
}

#[test]
fn a_series_annotation_cuts_under_any_series_too() {
    let dir = tempfile::tempdir().unwrap();
    let runs = crate::regressions::step_copies(dir.path());
    // Runs 11-20 with nice 19's settings: a second series from run 11.
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1-nice19.json");
    let settings = crate::common::read_json(&source)["settings"].clone();
    for i in 11..=20 {
        let path = runs.join(format!("run-{i:02}.json"));
        let mut run = crate::common::read_json(&path);
        run["settings"] = settings.clone();
        std::fs::write(&path, serde_json::to_vec(&run).unwrap()).unwrap();
    }
    assert!(
        in_dir(dir.path(), &["store", "import", runs.to_str().unwrap()])
            .status
            .success()
    );
    assert!(!changes(dir.path(), &["--any-series"]).is_empty());
    let later = stored_runs(dir.path(), &["--last", "1"])[0]["series"]
        .as_str()
        .unwrap()
        .to_string();
    let (run, note) = (copy_id(11), "loads at nice 19 from here");
    let cut = in_dir(
        dir.path(),
        &["store", "annotate", &run, note, "--series", &later],
    );
    assert!(cut.status.success(), "{}", stderr(&cut));
    assert!(changes(dir.path(), &["--any-series"]).is_empty());
    let both = in_dir(
        dir.path(),
        &["store", "annotate", &run, note, "--series", ""],
    );
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    assert!(
        stderr(&both).contains("starts 2 series"),
        "{}",
        stderr(&both)
    );
}

#[test]
fn last_says_what_it_counts_in_each_command() {
    let help = in_dir(Path::new("."), &["runs", "--help"]);
    let text = stdout(&help);
    assert!(
        text.contains("of all the runs listed in `runs`, of each"),
        "{text}"
    );
}

#[test]
fn the_default_store_is_private_and_a_sudo_run_gives_it_to_its_user() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let dir = tempfile::tempdir().unwrap();
    let file = doctored(dir.path(), "r.json", |_| {});
    let import = |home: &Path, sudo: bool| {
        let mut command = feelbench(&new_tag(), home);
        command.args(["store", "import", file.to_str().unwrap()]);
        if sudo {
            command.env("SUDO_UID", "65534").env("SUDO_GID", "65534");
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
    };
    import(dir.path(), false);
    let store = dir.path().join("feelbench");
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&store), 0o700);
    assert_eq!(mode(&store.join("store.sqlite")), 0o600);
    if !crate::common::require_root("to run as root under sudo and give the store away") {
        return;
    }
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::os::unix::fs::chown(&home, Some(65534), Some(65534)).unwrap();
    import(&home, true);
    for made in ["feelbench", "feelbench/store.sqlite"] {
        let owner = std::fs::metadata(home.join(made)).unwrap();
        assert_eq!((owner.uid(), owner.gid()), (65534, 65534), "{made}");
    }
    // What is made in a directory of root's own stays root's.
    let own = dir.path().join("own");
    std::fs::create_dir(&own).unwrap();
    import(&own, true);
    assert_eq!(std::fs::metadata(own.join("feelbench")).unwrap().uid(), 0);
}

#[test]
fn an_exported_file_is_readable_by_the_node_exporter() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let file = doctored(dir.path(), "r.json", |run| {
        run["system"]["hostname"] = this_host().into()
    });
    assert!(
        in_dir(dir.path(), &["store", "import", file.to_str().unwrap()])
            .status
            .success()
    );
    let prom = dir.path().join("feelbench.prom");
    let export = in_dir(
        dir.path(),
        &[
            "export",
            "--format",
            "openmetrics",
            "-o",
            prom.to_str().unwrap(),
        ],
    );
    assert!(export.status.success(), "{}", stderr(&export));
    let umask = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
        .unwrap();
    let mode = std::fs::metadata(&prom).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644 & !umask);
}

/// This machine's host name, as feelbench finds it.
fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn export_takes_this_hosts_newest_run_unless_told_another_machine() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    doctored(&runs, "mine.json", |run| {
        run["system"]["hostname"] = this_host().into()
    });
    doctored(&runs, "theirs.json", |run| {
        run["system"]["hostname"] = "another-host".into();
        run["run"]["started"] = "2026-11-24T11:47:52Z".into();
    });
    let import = in_dir(dir.path(), &["store", "import", runs.to_str().unwrap()]);
    assert!(import.status.success(), "{}", stderr(&import));
    let host_of = |extra: &[&str]| {
        let mut args = vec!["export", "--format", "openmetrics"];
        args.extend(extra);
        let output = in_dir(dir.path(), &args);
        assert!(output.status.success(), "{}", stderr(&output));
        let text = stdout(&output);
        let info = text
            .lines()
            .find(|l| l.starts_with("feelbench_run_info"))
            .unwrap()
            .to_string();
        info
    };
    assert!(host_of(&[]).contains(&format!("host=\"{}\"", this_host())));
    assert!(host_of(&["--machine", "another-host"]).contains("host=\"another-host\""));
}
