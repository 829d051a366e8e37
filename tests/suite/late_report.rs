//! Why a real run's events were late, as `report` shows it: every row of a
//! probe that splits its events says their dominant cause, the CSV has
//! the cause's key, and `report --explain` has per scenario a table of
//! causes whose shares add up, the worst events broken down and the
//! readings' cost.

use crate::common::{feelbench, new_tag, read_json, stderr, stdout, LOOPS_PER_MS};
use std::path::Path;

/// `feelbench ARGS` in `dir`, expecting success; its stdout.
fn ok(dir: &Path, args: &[&str]) -> String {
    let output = feelbench(&new_tag(), dir).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
    stdout(&output)
}

/// The cause rows of one scenario's explanation: (% of late, % of late delay).
fn cause_shares(block: &str) -> Vec<(f64, f64)> {
    block
        .lines()
        .skip_while(|l| !l.starts_with("Cause "))
        .skip(1)
        .take_while(|l| !l.starts_with("late time by part: "))
        .map(|l| {
            let cells: Vec<f64> = l
                .split_whitespace()
                .rev()
                .skip(2)
                .take(2)
                .map(|c| c.parse().unwrap())
                .collect();
            (cells[1], cells[0])
        })
        .collect()
}

#[test]
fn a_real_run_says_why_its_events_were_late() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.json");
    let run_arg = run.to_str().unwrap();
    let console = ok(
        dir.path(),
        &[
            "run",
            "--probe",
            "x",
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
            "-o",
            run_arg,
        ],
    );
    let doc = read_json(&run);
    let scenarios = doc["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2);
    for scenario in scenarios {
        let late = &scenario["result"]["late"];
        assert!(
            late["tally"]["counts"]["events"].as_f64().unwrap() > 0.0,
            "{late}"
        );
    }
    // The run's table and the report's say the cause under each row.
    let table = ok(dir.path(), &["report", run_arg]);
    for text in [&console, &table] {
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.trim_start().starts_with("late: "))
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines
                .iter()
                .all(|l| l.ends_with(" late") || l.ends_with(" events late")),
            "{text}"
        );
    }
    let csv = ok(dir.path(), &["report", run_arg, "--format", "csv"]);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",late_events,late_cause,late_cause_pct"),
        "{csv}"
    );

    let explained = ok(
        dir.path(),
        &["report", run_arg, "--explain", "--worst", "3"],
    );
    let blocks: Vec<&str> = explained.split("\n--- ").skip(1).collect();
    assert_eq!(blocks.len(), 2, "{explained}");
    for (block, scenario) in blocks.iter().zip(scenarios) {
        let load = scenario["load"].as_str().unwrap();
        assert!(block.starts_with(&format!("x under {load}: ")), "{block}");
        let late = scenario["result"]["late"]["tally"]["counts"]["late"]
            .as_f64()
            .unwrap_or(0.0) as usize;
        let events = scenario["result"]["late"]["tally"]["counts"]["events"]
            .as_f64()
            .unwrap();
        assert!(
            block.contains(&format!(
                ": {late} of {events} events late (missed its deadline) ---\n"
            )),
            "{block}"
        );
        let shares = cause_shares(block);
        let worst = block
            .lines()
            .filter(|l| l.contains(" (monotonic) on CPU"))
            .count();
        assert_eq!(worst, late.min(3), "{block}");
        if late > 0 {
            for total in [
                shares.iter().map(|s| s.0).sum::<f64>(),
                shares.iter().map(|s| s.1).sum(),
            ] {
                assert!(
                    (total - 100.0).abs() < 0.5,
                    "shares add up to 100 %: {block}"
                );
            }
            assert!(block.contains("\nlate time by part: "), "{block}");
        } else {
            assert!(shares.is_empty(), "{block}");
        }
        assert!(
            block.contains("\nreadings: ") && block.contains("% of the "),
            "{block}"
        );
    }
    // Two burn processes on two CPUs leave the 100 %-CPU frames of x
    // short of a CPU: some are late, and the table names a cause.
    assert!(!cause_shares(blocks[1]).is_empty(), "{explained}");
}
