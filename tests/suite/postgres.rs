//! The PostgreSQL store against a real server (tests/suite/common's
//! `postgres_server`, skipped with a notice where PostgreSQL is not
//! installed): `submit` stores a run once however often it is sent, a run
//! that cannot be sent waits and `submit --pending` sends it, a server that
//! is down or a wrong password is said in one line, both back ends answer
//! the same queries alike, TLS when the server wants it, the server's
//! certificate checked as libpq's sslmode says, no output ever shows a
//! password, whatever characters it holds, and a watch's minutes are
//! stored there and listed by `history --watch`.

use crate::common::postgres_server::{certificate_authority, Server, PASSWORD, ROLE};
use crate::common::{feelbench, new_tag, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Output;

/// Run files of an earlier release, as a lab's machines would send them.
fn run_files() -> Vec<PathBuf> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    vec![data.join("v1-run.json"), data.join("v1-nice19.json")]
}

/// The arguments of a 1 s run of `x` under no load, written to `file` and
/// stored in `store`.
fn one_second_run<'a>(file: &'a Path, store: &'a str) -> [&'a str; 11] {
    let file = file.to_str().unwrap();
    [
        "run", "--probe", "x", "--load", "none", "-t", "1", "-o", file, "--store", store,
    ]
}

/// `feelbench ARGS` with `dir` as its home for data (the local store).
fn feelbench_in(dir: &Path, args: &[&str]) -> Output {
    feelbench_with(dir, args, &[])
}

/// [`feelbench_in`] with the environment variables `env` set too.
fn feelbench_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let output = feelbench(&new_tag(), dir)
        .args(args)
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .env_remove("PGSSLMODE")
        .env_remove("PGSSLROOTCERT")
        .env("HOME", dir)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert_no_password(&output);
    output
}

/// No output shows the test role's password.
fn assert_no_password(output: &Output) {
    let said = format!("{}{}", stdout(output), stderr(output));
    assert!(!said.contains(PASSWORD), "the password was shown: {said}");
}

/// The keys of the runs a store lists.
fn run_keys(dir: &Path, store: &str) -> Vec<String> {
    let output = feelbench_in(dir, &["runs", "--format", "json", "--store", store]);
    assert!(output.status.success(), "{}", stderr(&output));
    let runs: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    runs.as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_key"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_run_sent_twice_is_stored_once() {
    let Some(server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files = run_files();
    let file = files[0].to_str().unwrap();
    let first = feelbench_in(dir.path(), &["submit", "--store", &server.url(), file]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(
        stdout(&first).starts_with("1 sent, 0 already there, 0 failed"),
        "{}",
        stdout(&first)
    );
    let again = feelbench_in(
        dir.path(),
        &["submit", "--store", &server.url(), file, file],
    );
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stdout(&again).starts_with("0 sent, 2 already there, 0 failed"),
        "{}",
        stdout(&again)
    );
    assert_eq!(
        server.psql("SELECT count(*), count(DISTINCT run_key) FROM run"),
        "1|1"
    );
    assert_eq!(run_keys(dir.path(), &server.url()).len(), 1);
}

#[test]
fn the_local_store_runs_the_remote_lacks_are_sent() {
    let Some(server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files = run_files();
    let import: Vec<&str> = ["store", "import"]
        .into_iter()
        .chain(files.iter().map(|f| f.to_str().unwrap()))
        .collect();
    assert!(feelbench_in(dir.path(), &import).status.success());
    let sent = feelbench_in(dir.path(), &["submit", "--store", &server.url()]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    assert!(
        stdout(&sent).starts_with("2 sent, 0 already there"),
        "{}",
        stdout(&sent)
    );
    let again = feelbench_in(dir.path(), &["submit", "--store", &server.url()]);
    assert!(
        stdout(&again).starts_with("0 sent, 2 already there"),
        "{}",
        stdout(&again)
    );
}

#[test]
fn a_run_the_server_missed_waits_and_is_sent_with_pending() {
    let Some(mut server) = Server::start(false) else {
        return;
    };
    server.stop();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("r.json");
    let run = feelbench_in(dir.path(), &one_second_run(&file, &server.url()));
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let said = stderr(&run);
    let warnings: Vec<&str> = said.lines().filter(|l| l.contains("not sent")).collect();
    assert_eq!(warnings.len(), 1, "{said}");
    assert!(warnings[0].contains("submit --pending"), "{said}");
    let document = std::fs::read_to_string(&file).expect("the run file was not written");
    assert!(
        !document.contains(PASSWORD),
        "the run document keeps the password"
    );
    let local = run_keys(
        dir.path(),
        dir.path().join("feelbench/store.sqlite").to_str().unwrap(),
    );
    assert_eq!(local.len(), 1, "the local store lacks the run");

    server.restart();
    let sent = feelbench_in(
        dir.path(),
        &["submit", "--pending", "--store", &server.url()],
    );
    assert!(sent.status.success(), "{}", stderr(&sent));
    assert!(
        stdout(&sent).starts_with("1 sent, 0 already there, 0 failed"),
        "{}",
        stdout(&sent)
    );
    assert_eq!(run_keys(dir.path(), &server.url()), local);
    let nothing_left = feelbench_in(
        dir.path(),
        &["submit", "--pending", "--store", &server.url()],
    );
    assert!(stdout(&nothing_left).starts_with("0 sent, 0 already there, 0 failed"));
}

#[test]
fn a_server_that_is_down_is_said_in_one_line_and_nothing_is_lost() {
    let Some(mut server) = Server::start(false) else {
        return;
    };
    server.stop();
    let dir = tempfile::tempdir().unwrap();
    let files = run_files();
    let file = files[0].to_str().unwrap();
    let sent = feelbench_in(dir.path(), &["submit", "--store", &server.url(), file]);
    assert_eq!(sent.status.code(), Some(1));
    let said = stderr(&sent);
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    assert!(
        said.contains("0 sent, 0 already there, 1 failed (waiting"),
        "{said}"
    );
    assert!(said.contains("cannot reach the store"), "{said}");
    assert!(Path::new(file).is_file());
    let local = run_keys(
        dir.path(),
        dir.path().join("feelbench/store.sqlite").to_str().unwrap(),
    );
    assert_eq!(local.len(), 1, "the run does not wait in the local store");
    let runs = feelbench_in(dir.path(), &["runs", "--store", &server.url()]);
    assert_ne!(runs.status.code(), Some(0));
    assert_eq!(stderr(&runs).trim().lines().count(), 1, "{}", stderr(&runs));
}

#[test]
fn both_back_ends_answer_alike() {
    let Some(server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("same.sqlite");
    // Twenty runs with a step at run 11 (regressions' test store).
    let runs = crate::regressions::step_copies(dir.path());
    for store in [sqlite.to_str().unwrap(), &server.url()] {
        let imported = feelbench_in(
            dir.path(),
            &["store", "import", runs.to_str().unwrap(), "--store", store],
        );
        assert!(imported.status.success(), "{}", stderr(&imported));
    }
    let queries: [&[&str]; 7] = [
        &["runs", "--format", "json"],
        &["runs", "--format", "csv"],
        &["runs", "--last", "1", "--format", "json"],
        &["runs", "--kernel", "6.18.1", "--format", "json"],
        &[
            "history", "--probe", "x", "--load", "burn", "--figure", "p99", "--format", "json",
        ],
        &[
            "history", "--probe", "gaming", "--load", "burn", "--figure", "mean", "--by", "kernel",
            "--format", "csv",
        ],
        &["regressions", "--format", "json"],
    ];
    for query in queries {
        let answer = |store: &str| {
            let mut args = query.to_vec();
            args.extend(["--store", store]);
            let output = feelbench_in(dir.path(), &args);
            assert!(output.status.success(), "{query:?}: {}", stderr(&output));
            // The command a regression gives to check it names its store
            // (the URL without its password): cut from there.
            stdout(&output)
                .lines()
                .map(|line| line.split("--store ").next().unwrap_or(line))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let from_sqlite = answer(sqlite.to_str().unwrap());
        assert!(from_sqlite.lines().count() > 1, "{query:?}: {from_sqlite}");
        assert_eq!(from_sqlite, answer(&server.url()), "{query:?} differs");
    }
}

#[test]
fn a_wrong_password_is_said_in_one_line_without_it() {
    let Some(server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let wrong = format!(
        "postgres://{ROLE}:not-{PASSWORD}@127.0.0.1:{}/postgres",
        server.port
    );
    let output = feelbench_in(dir.path(), &["runs", "--store", &wrong]);
    assert_ne!(output.status.code(), Some(0));
    let said = stderr(&output);
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    assert!(said.contains("refused the login"), "{said}");
    assert!(said.contains("password authentication failed"), "{said}");
    assert!(
        said.contains(&format!("postgres://{ROLE}@127.0.0.1")),
        "{said}"
    );
}

#[test]
fn credentials_come_from_the_environment_or_a_private_password_file() {
    let Some(server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = server.url_without_password();
    let from_env = feelbench(&new_tag(), dir.path())
        .args(["runs", "--store", &url])
        .env("PGPASSWORD", PASSWORD)
        .output()
        .unwrap();
    assert!(from_env.status.success(), "{}", stderr(&from_env));
    assert_no_password(&from_env);

    let passfile = dir.path().join("pgpass");
    std::fs::write(
        &passfile,
        format!("127.0.0.1:{}:*:{ROLE}:{PASSWORD}\n", server.port),
    )
    .unwrap();
    let with_mode = |mode: u32| {
        std::fs::set_permissions(
            &passfile,
            std::os::unix::fs::PermissionsExt::from_mode(mode),
        )
        .unwrap();
        let output = feelbench(&new_tag(), dir.path())
            .args(["runs", "--store", &url])
            .env_remove("PGPASSWORD")
            .env("PGPASSFILE", &passfile)
            .output()
            .unwrap();
        assert_no_password(&output);
        output
    };
    let private = with_mode(0o600);
    assert!(private.status.success(), "{}", stderr(&private));
    let open = with_mode(0o644);
    assert_ne!(open.status.code(), Some(0));
    assert!(stderr(&open).contains("chmod 600"), "{}", stderr(&open));
}

#[test]
fn tls_is_used_when_the_server_requires_it() {
    if std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_err()
    {
        crate::common::skip("openssl is not installed to make the server's certificate");
        return;
    }
    let Some(server) = Server::start(true) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files = run_files();
    let file = files[0].to_str().unwrap();
    for mode in ["prefer", "require"] {
        let url = format!("{}?sslmode={mode}", server.url());
        let sent = feelbench_in(dir.path(), &["submit", "--store", &url, file]);
        assert!(sent.status.success(), "sslmode={mode}: {}", stderr(&sent));
    }
    // The server takes TLS connections only (hostssl), so the run got
    // there encrypted.
    assert_eq!(server.psql("SELECT count(*) FROM run"), "1");
    let plain = format!("{}?sslmode=disable", server.url());
    let refused = feelbench_in(dir.path(), &["runs", "--store", &plain]);
    assert_ne!(refused.status.code(), Some(0));
    assert!(
        stderr(&refused).contains("no encryption"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn a_read_only_role_reads_the_store_and_cannot_write_it() {
    let Some(server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let files = run_files();
    let file = files[0].to_str().unwrap();
    let sent = feelbench_in(dir.path(), &["submit", "--store", &server.url(), file]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    // The README's role, as it says it.
    server.psql("CREATE ROLE grafana LOGIN PASSWORD 'graf-pw'");
    server.psql("GRANT CONNECT ON DATABASE postgres TO grafana");
    server.psql("GRANT USAGE ON SCHEMA public TO grafana");
    server.psql(
        "GRANT SELECT ON schema_version, machine, run, scenario, figure, annotation TO grafana",
    );
    let reader = format!(
        "postgres://grafana:graf-pw@127.0.0.1:{}/postgres",
        server.port
    );
    assert_eq!(
        run_keys(dir.path(), &reader),
        run_keys(dir.path(), &server.url())
    );
    let files = run_files();
    let other = files[1].to_str().unwrap();
    let write = feelbench_in(dir.path(), &["store", "import", "--store", &reader, other]);
    assert_ne!(write.status.code(), Some(0));
    assert_eq!(
        stderr(&write).trim().lines().count(),
        1,
        "{}",
        stderr(&write)
    );
    assert!(
        stderr(&write).contains("permission denied"),
        "{}",
        stderr(&write)
    );
    assert_eq!(server.psql("SELECT count(*) FROM run"), "1");
}

// Issue 29, the store loses nothing: the same tests as tests/suite/store.rs
// and the store's unit tests, against a real server.

#[test]
fn pg_a_run_with_two_figures_of_one_name_is_sent_not_called_locked() {
    let Some(server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = crate::store::doctored(dir.path(), "twice.json", crate::store::two_burns);
    let sent = feelbench_in(
        dir.path(),
        &["submit", "--store", &server.url(), file.to_str().unwrap()],
    );
    assert!(sent.status.success(), "{}", stderr(&sent));
    assert_eq!(
        server.psql("SELECT count(*) FROM figure WHERE name LIKE 'work:burn%'"),
        "3"
    );
}

#[test]
fn pg_another_run_under_a_taken_key_is_refused_and_a_damaged_document_found() {
    let Some(server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = server.url();
    let first = crate::store::doctored(dir.path(), "a.json", |_| {});
    let other = crate::store::doctored(dir.path(), "b.json", |run| {
        run["run"]["comment"] = "other".into()
    });
    let sent = feelbench_in(
        dir.path(),
        &["submit", "--store", &url, first.to_str().unwrap()],
    );
    assert!(sent.status.success(), "{}", stderr(&sent));
    let refused = feelbench_in(
        dir.path(),
        &["submit", "--store", &url, other.to_str().unwrap()],
    );
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("the store holds a different run"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(
        server.psql("SELECT count(*) FROM run WHERE comment = 'other'"),
        "0"
    );
    // Sending it again would fail alike: it does not wait to be sent.
    let pending = feelbench_in(dir.path(), &["submit", "--pending", "--store", &url]);
    assert!(pending.status.success(), "{}", stderr(&pending));
    server.psql("UPDATE run SET doc_sha256 = repeat('0', 64)");
    let read = feelbench_in(
        dir.path(),
        &[
            "history", "--probe", "x", "--load", "burn", "--figure", "p99", "--store", &url,
        ],
    );
    assert_eq!(read.status.code(), Some(1), "{}", stderr(&read));
    assert!(stderr(&read).contains("SHA-256"), "{}", stderr(&read));
}

#[test]
fn pg_a_newer_schema_is_written_while_its_migrations_allow_this_build() {
    let Some(server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = server.url();
    let files = run_files();
    let submit = |file: &Path| {
        feelbench_in(
            dir.path(),
            &["submit", "--store", &url, file.to_str().unwrap()],
        )
    };
    assert!(submit(&files[0]).status.success());
    let newer: i64 = server
        .psql("SELECT max(version) + 1 FROM schema_version")
        .parse()
        .unwrap();
    server.psql(&format!(
        "INSERT INTO schema_version VALUES ({newer}); \
         INSERT INTO schema_writers VALUES ({newer}, 1)"
    ));
    let additive = submit(&files[1]);
    assert!(additive.status.success(), "{}", stderr(&additive));
    server.psql(&format!(
        "UPDATE schema_writers SET oldest_writer = {newer} WHERE version = {newer}"
    ));
    let third = crate::store::doctored(dir.path(), "c.json", |run| {
        run["run"]["id"] = "20261123-114752-1".into()
    });
    let refused = submit(&third);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("upgrade feelbench on this machine"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(server.psql("SELECT count(*) FROM run"), "2");
}

#[test]
fn pg_a_damaged_local_store_does_not_stop_the_run_being_sent() {
    let Some(server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("feelbench/store.sqlite");
    std::fs::create_dir_all(local.parent().unwrap()).unwrap();
    std::fs::write(&local, vec![b'x'; 8192]).unwrap();
    let file = dir.path().join("r.json");
    let run = feelbench_in(dir.path(), &one_second_run(&file, &server.url()));
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let said = stderr(&run);
    let line = said
        .lines()
        .find(|l| l.contains("run stored in postgres://"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        line.contains(&format!("not kept in {}", local.display())),
        "{line}"
    );
    assert_eq!(server.psql("SELECT count(*) FROM run"), "1");
}

// ---------------------------------------------------------------------------
// Passwords that hold what a URL gives a meaning to, URLs that cannot be
// used, and the server's certificate checked (issue 29, items 15 and 17).

/// The two halves of every special test password: neither may be shown.
const HALVES: [&str; 2] = ["Kw7xPre", "Zq9yPost"];

/// Each character a URL gives a meaning to, as it goes in a URL's
/// password: all raw but `@`, which the connection's parser would end the
/// password at, so it is written `%40` (`%` followed by no hex digits is
/// taken as it is).
const SPECIAL: [(&str, &str); 15] = [
    ("/", "/"),
    ("?", "?"),
    ("#", "#"),
    (":", ":"),
    ("%", "%"),
    ("[", "["),
    ("]", "]"),
    (" ", " "),
    ("&", "&"),
    ("=", "="),
    ("+", "+"),
    (",", ","),
    ("@", "%40"),
    ("/?#:%[] &=", "/?#:%[] &="),
    ("'\"\\;$!*()~", "'\"\\;$!*()~"),
];

/// `text` (an output, a file or a store, named `what`) holds neither half
/// of a special password.
fn assert_no_half(what: &str, text: &str) {
    for half in HALVES {
        assert!(!text.contains(half), "{what} shows the password: {text}");
    }
}

/// A login role `name` with `password`, allowed everything.
fn role_with(server: &Server, name: &str, password: &str) {
    let quoted = password.replace('\'', "''");
    server.psql(&format!(
        "CREATE ROLE {name} LOGIN SUPERUSER PASSWORD '{quoted}'"
    ));
}

/// `feelbench ARGS`, checking that neither half of a special password is
/// in its output.
fn feelbench_hiding(dir: &Path, args: &[&str]) -> Output {
    let output = feelbench_in(dir, args);
    assert_no_half(
        "the output",
        &format!("{}{}", stdout(&output), stderr(&output)),
    );
    output
}

#[test]
fn a_password_with_any_url_character_connects_and_is_never_shown() {
    let Some(server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (i, (character, written)) in SPECIAL.iter().enumerate() {
        let role = format!("lab{i}");
        let [before, after] = HALVES;
        role_with(&server, &role, &format!("{before}{character}{after}"));
        let url = format!(
            "postgres://{role}:{before}{written}{after}@127.0.0.1:{}/postgres",
            server.port
        );
        let output = feelbench_hiding(dir.path(), &["runs", "--store", &url]);
        assert!(
            output.status.success(),
            "password with {character:?}: {}",
            stderr(&output)
        );
    }
    // An @ left raw ends the password where the connection's parser
    // would: the URL is refused, saying how to write it.
    let raw_at = format!(
        "postgres://lab0:{}@{}@127.0.0.1:{}/postgres",
        HALVES[0], HALVES[1], server.port
    );
    let refused = feelbench_hiding(dir.path(), &["runs", "--store", &raw_at]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("%40"), "{}", stderr(&refused));
}

#[test]
fn a_run_with_such_a_password_keeps_it_nowhere() {
    let Some(mut server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let [before, after] = HALVES;
    let special = "/?#:%[] &=";
    role_with(&server, "lab", &format!("{before}{special}{after}"));
    let url = format!(
        "postgres://lab:{before}{special}{after}@127.0.0.1:{}/postgres",
        server.port
    );
    // The server stops as if it crashed, and commits without waiting for
    // the disk: the role must be written first.
    server.psql("CHECKPOINT");
    server.stop();
    let file = dir.path().join("r.json");
    let run = feelbench_hiding(dir.path(), &one_second_run(&file, &url));
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    // The warning and the command it suggests name the store without the
    // password, and that command finds the run waiting.
    let shown = format!("postgres://lab@127.0.0.1:{}/postgres", server.port);
    let warning = stderr(&run);
    assert!(
        warning.contains(&format!("submit --pending --store {shown}")),
        "{warning}"
    );
    let document = std::fs::read_to_string(&file).unwrap();
    assert_no_half("the run document", &document);
    assert!(
        document.contains(&shown),
        "the document's command line: {document}"
    );
    // The local store: the waiting run's row names the store shown (the
    // document inside is compressed: checked above).
    for name in ["store.sqlite", "store.sqlite-wal"] {
        if let Ok(bytes) = std::fs::read(dir.path().join("feelbench").join(name)) {
            assert_no_half(name, &String::from_utf8_lossy(&bytes));
        }
    }
    server.restart();
    let sent = feelbench_hiding(dir.path(), &["submit", "--pending", "--store", &url]);
    assert!(
        stdout(&sent).starts_with("1 sent, 0 already there, 0 failed"),
        "{}{}",
        stdout(&sent),
        stderr(&sent)
    );
}

#[test]
fn a_url_that_cannot_be_used_is_refused_in_one_line_without_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let [before, after] = HALVES;
    let urls = [
        format!("postgres://u:{before}@[::1"),
        format!("postgres://u:{before}@{after}@db/fb"),
        format!("postgres://u:{before}@db:port{after}/fb"),
        format!("postgres://u:{before}@db/fb?sslmode={after}"),
        format!("postgres://db/fb?password={before}&{after}=1"),
        format!("postgres://db/fb?password={before}@{after}"),
    ];
    for url in &urls {
        let commands: [&[&str]; 4] = [
            &["runs", "--store", url],
            &[
                "history", "--probe", "x", "--load", "none", "--figure", "p99", "--store", url,
            ],
            &["submit", "--store", url],
            &["run", "--probe", "x", "--load", "none", "--store", url],
        ];
        for args in commands {
            let output = feelbench_hiding(dir.path(), args);
            assert_eq!(
                output.status.code(),
                Some(2),
                "{args:?}: {}",
                stderr(&output)
            );
            let said = stderr(&output);
            let lines: Vec<&str> = said.lines().filter(|l| !l.is_empty()).collect();
            assert!(
                lines[0].starts_with("error: invalid value for --store: a postgres:// URL"),
                "{said}"
            );
            assert!(
                lines[1..]
                    .iter()
                    .all(|l| l.starts_with("For more information")),
                "{said}"
            );
        }
        let from_env = feelbench(&new_tag(), dir.path())
            .args(["runs"])
            .env("FEELBENCH_STORE", url)
            .output()
            .unwrap();
        assert_eq!(from_env.status.code(), Some(2));
        let said = stderr(&from_env);
        assert_eq!(said.trim().lines().count(), 1, "{said}");
        assert!(
            said.contains("FEELBENCH_STORE: a postgres:// URL"),
            "{said}"
        );
        assert_no_half("FEELBENCH_STORE's error", &said);
    }
}

#[test]
fn a_url_given_where_none_was_expected_is_repeated_without_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let [before, after] = HALVES;
    let url = format!("postgres://lab:{before}/{after}@db.example/fb");
    let shown = "postgres://lab@db.example/fb";
    let unexpected = feelbench_hiding(dir.path(), &["runs", &url]);
    assert_eq!(unexpected.status.code(), Some(2));
    assert!(
        stderr(&unexpected).contains(&format!("unexpected argument '{shown}'")),
        "{}",
        stderr(&unexpected)
    );
    let not_a_file = feelbench_hiding(dir.path(), &["compare", &url, "other.json"]);
    assert_eq!(not_a_file.status.code(), Some(2));
    assert!(
        stderr(&not_a_file).contains(&format!("cannot read {shown}")),
        "{}",
        stderr(&not_a_file)
    );
}

/// Whether `openssl` can make the test's certificates; says the test is
/// skipped when not.
fn openssl_installed() -> bool {
    let there = std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_ok();
    if !there {
        crate::common::skip("openssl is not installed to make the server's certificate");
    }
    there
}

#[test]
fn verify_full_checks_the_chain_and_the_host_name_and_verify_ca_the_chain() {
    if !openssl_installed() {
        return;
    }
    let Some(server) = Server::start(true) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = server.root_certificate();
    let root = root.to_str().unwrap();
    let other = certificate_authority(dir.path(), "other");
    let other = other.to_str().unwrap();
    let url = |host: &str, query: &str| {
        format!(
            "postgres://{ROLE}:{PASSWORD}@{host}:{}/postgres?{query}",
            server.port
        )
    };
    let runs = |url: &str, env: &[(&str, &str)]| {
        feelbench_with(dir.path(), &["runs", "--store", url], env)
    };
    let works = |url: String, env: &[(&str, &str)]| {
        let output = runs(&url, env);
        assert!(
            output.status.success(),
            "{url} {env:?}: {}",
            stderr(&output)
        );
    };
    let fails = |url: String, env: &[(&str, &str)], because: &str| {
        let output = runs(&url, env);
        let said = stderr(&output);
        assert_eq!(output.status.code(), Some(1), "{url} {env:?}: {said}");
        assert_eq!(said.trim().lines().count(), 1, "{said}");
        assert!(said.contains(because), "{url} {env:?}: {said}");
    };
    // The certificate names localhost, signed by `root`.
    works(
        url(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={root}"),
        ),
        &[],
    );
    works(
        url("localhost", "sslmode=verify-full"),
        &[("PGSSLROOTCERT", root)],
    );
    works(
        url(
            "127.0.0.1",
            &format!("sslmode=verify-ca&sslrootcert={root}"),
        ),
        &[],
    );
    fails(
        url(
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={root}"),
        ),
        &[],
        "not valid for name",
    );
    fails(
        url(
            "localhost",
            &format!("sslmode=verify-ca&sslrootcert={other}"),
        ),
        &[],
        "UnknownIssuer",
    );
    fails(
        url("localhost", "sslmode=verify-full"),
        &[],
        "root.crt does not exist",
    );
    // Without a root certificate, require encrypts and checks nothing; with
    // one in ~/.postgresql, as libpq, it checks the chain.
    works(url("127.0.0.1", "sslmode=require"), &[]);
    let home_root = dir.path().join(".postgresql/root.crt");
    std::fs::create_dir_all(home_root.parent().unwrap()).unwrap();
    std::fs::copy(other, &home_root).unwrap();
    fails(url("127.0.0.1", "sslmode=require"), &[], "UnknownIssuer");
    std::fs::copy(root, &home_root).unwrap();
    works(url("localhost", "sslmode=verify-full"), &[]);
    works(url("127.0.0.1", "sslmode=require"), &[]);
}

/// Issue 31: a watch's minutes go to a lab's PostgreSQL store as to the
/// local one (migration 2 over the same `Backend`), and `history --watch`
/// lists them from there, with each default canary's events.
#[test]
fn pg_a_watchs_minutes_are_stored_and_history_lists_them() {
    let Some(server) = Server::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = server.url();
    let watched = feelbench_in(
        dir.path(),
        &[
            "watch",
            "-t",
            "2",
            "-l",
            crate::common::LOOPS_PER_MS,
            "--threshold",
            "frame=1us",
            "--store",
            &url,
        ],
    );
    assert_eq!(watched.status.code(), Some(0), "{}", stderr(&watched));
    let history = feelbench_in(dir.path(), &["history", "--watch", "--store", &url]);
    assert_eq!(history.status.code(), Some(0), "{}", stderr(&history));
    let text = stdout(&history);
    assert!(text.starts_with("minute (UTC)"), "{text}");
    for canary in ["timer", "frame"] {
        let events: u64 = text
            .lines()
            .filter(|l| l.split_whitespace().nth(3) == Some(canary))
            .map(|r| r.split_whitespace().nth(4).unwrap().parse::<u64>().unwrap())
            .sum();
        assert!(events > 10, "{canary}: {text}");
    }
    let json = feelbench_in(
        dir.path(),
        &["history", "--watch", "--format", "json", "--store", &url],
    );
    let minutes: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let canaries: std::collections::BTreeSet<&str> = minutes
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["canary"].as_str().unwrap())
        .collect();
    assert_eq!(canaries, ["frame", "timer"].into(), "{minutes}");
    // Nothing went to the local store.
    let local = feelbench_in(dir.path(), &["history", "--watch"]);
    assert!(
        stdout(&local).starts_with("no minutes"),
        "{}",
        stdout(&local)
    );
}
