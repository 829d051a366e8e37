//! The HTML report of a real short run, looked at as a person would: its
//! charts and their series are in the page, the run's comment shows as text,
//! and headless Chromium (Debian's `chromium`, when installed) loads it with
//! the SVGs in its DOM, no console error, and takes a screenshot.

use crate::common::{feelbench, new_tag, skip, stderr, LOOPS_PER_MS};
use std::path::Path;
use std::process::{Command, Output};

const COMMENT: &str = "<script>alert(1)</script>";
const LOADS: [&str; 2] = ["none", "burn"];

/// Runs feelbench in `dir` with `args`, expecting success.
fn ok(dir: &Path, args: &[&str]) -> Output {
    let output = feelbench(&new_tag(), dir).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    output
}

/// The sections of `html` that hold a probe's or a scenario's charts.
fn sections(html: &str) -> Vec<&str> {
    html.split("<section>").skip(1).collect()
}

/// The page Chromium made of `page`, or `None` (said) when it is absent.
fn chromium(dir: &Path, page: &Path) -> Option<(String, String)> {
    if Command::new("chromium").arg("--version").output().is_err() {
        skip("chromium is not installed (Debian: apt-get install chromium); the page was not loaded in a browser");
        return None;
    }
    let profile = dir.join("chromium-profile");
    // Its profile, crash reports and GTK settings go under `dir`, not $HOME.
    let browser = || {
        let mut command = Command::new("chromium");
        command
            .env("HOME", dir)
            .env("XDG_CONFIG_HOME", dir)
            .env("XDG_CACHE_HOME", dir);
        command
    };
    let output = browser()
        .args(["--headless", "--no-sandbox", "--disable-gpu"])
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", dir.join("page.png").display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let shot = std::fs::metadata(dir.join("page.png")).unwrap();
    assert!(shot.len() > 10_000, "a screenshot of a page with charts");
    let dom = browser()
        .args(["--headless", "--no-sandbox", "--disable-gpu"])
        .args(["--enable-logging=stderr", "--v=0", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(dom.status.success(), "{}", stderr(&dom));
    let log = format!("{}{}", stderr(&output), stderr(&dom));
    Some((String::from_utf8(dom.stdout).unwrap(), log))
}

#[test]
fn a_real_run_and_its_comparison_render_as_pages_with_their_charts() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.json");
    let run_arg = run.to_str().unwrap();
    ok(
        dir.path(),
        &[
            "run",
            "--probe",
            "x,audio",
            "--load",
            "none,burn",
            "-t",
            "1",
            "--warmup",
            "0.2",
            "--noise-check",
            "0",
            "-l",
            LOOPS_PER_MS,
            "-q",
            "-m",
            COMMENT,
            "-o",
            run_arg,
        ],
    );
    let page = dir.path().join("run.html");
    ok(
        dir.path(),
        &[
            "report",
            run_arg,
            "--format",
            "html",
            "-o",
            page.to_str().unwrap(),
        ],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.contains("<script"), "nothing from the run is markup");
    let probes = sections(&html);
    assert_eq!(probes.len(), 2, "one section per probe");
    for section in &probes {
        // Histogram, CDF, and one chart per headline figure.
        assert!(section.matches("<svg").count() >= 3);
        for load in LOADS {
            let legend = format!("\n{load}\n");
            assert!(
                section.contains(&legend),
                "{load} is a series in every chart"
            );
        }
        assert!(section.contains("latency histogram") && section.contains("latency CDF"));
    }

    let chart = |args: &[&str]| {
        let mut all = vec!["report", run_arg, "--format", "svg", "--probe", "x"];
        all.extend(args);
        String::from_utf8(ok(dir.path(), &all).stdout).unwrap()
    };
    for (args, title) in [
        (&["--chart", "cdf"][..], "x: latency CDF"),
        (&["--chart", "histogram"], "x: latency histogram"),
        (
            &["--chart", "over-time", "--load", "burn"],
            "x under burn: latency over time",
        ),
        (
            &["--chart", "figure", "--figure", "deadlines"],
            "x: deadlines met",
        ),
    ] {
        let svg = chart(args);
        assert!(
            svg.starts_with("<svg") && svg.contains(title),
            "{args:?}: {svg:.300}"
        );
    }
    let unknown = feelbench(&new_tag(), dir.path())
        .args([
            "report", run_arg, "--format", "svg", "--chart", "figure", "--figure", "nonesuch",
        ])
        .output()
        .unwrap();
    assert_eq!(
        unknown.status.code(),
        Some(2),
        "an unknown figure is bad input"
    );

    let compared = dir.path().join("compare.html");
    ok(
        dir.path(),
        &[
            "compare",
            run_arg,
            run_arg,
            "--name",
            "a,b",
            "--format",
            "html",
            "-o",
            compared.to_str().unwrap(),
        ],
    );
    let compare_html = std::fs::read_to_string(&compared).unwrap();
    let scenarios = sections(&compare_html);
    assert_eq!(scenarios.len(), 4, "one section per probe x load");
    for section in scenarios {
        assert!(
            section.contains("\na\n") && section.contains("\nb\n"),
            "a series per run"
        );
    }

    if let Some((dom, log)) = chromium(dir.path(), &page) {
        assert_eq!(dom.matches("<svg").count(), html.matches("<svg").count());
        assert!(
            !dom.contains("<script"),
            "the comment stayed text in the DOM"
        );
        assert!(dom.contains(COMMENT.replace('<', "&lt;").replace('>', "&gt;").as_str()));
        for error in ["Uncaught", "ERROR:CONSOLE"] {
            assert!(!log.contains(error), "console error: {log}");
        }
    }
}

#[test]
fn charts_that_cannot_be_drawn_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let output = feelbench(&new_tag(), dir.path())
        .args(["compare", "a.json", "b.json", "--format", "svg"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "a usage error");
    assert!(stderr(&output).contains("--format html"));
    let output = feelbench(&new_tag(), dir.path())
        .args(["report", "missing.json", "--format", "html"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(stderr(&output).contains("missing.json"));
}
