use super::*;
use crate::document::fixture;
use crate::document::schema::{FigureInterval, IntervalMethod, Intervals, SuiteRecord};

fn interval(figure: &str, low: f64, high: f64) -> FigureInterval {
    FigureInterval {
        figure: figure.into(),
        value: (low + high) / 2.0,
        low,
        high,
        se: 1.0,
        df: 19.0,
        samples: 20,
    }
}

/// The fixture run with no probe's rule of what its user notices: its
/// probes judged by their ratios alone, as runs older than the rules.
fn by_ratio_alone() -> RunDocument {
    let mut run = fixture::run();
    for sheet in run.probes.values_mut() {
        sheet.figures.iter_mut().for_each(|f| f.noticeable = None);
    }
    run
}

fn with_intervals(figures: Vec<FigureInterval>) -> Option<Intervals> {
    Some(Intervals {
        method: IntervalMethod::BatchMeans,
        level: 0.95,
        figures,
    })
}

#[test]
fn every_probe_declares_an_overview_figure() {
    for def in crate::probe::PROBES {
        let sheet = def.sheet();
        let declared = sheet
            .figures
            .iter()
            .filter(|f| matches!(f.overview, Some(OverviewRole::Ratio { .. })));
        // job's sheet falls back on its first headline figure.
        assert!(
            declared.count() > 0 || sheet.figures.iter().any(|f| f.headline),
            "{}",
            def.name
        );
        for f in sheet.figures.iter().filter(|f| f.overview.is_some()) {
            if f.overview == Some(OverviewRole::Share) {
                assert_eq!(f.unit, crate::figures::Unit::Percent, "{}", def.name);
            }
        }
    }
    let set_of = |probe: &str| -> Vec<FigureDef> {
        let sheet = crate::probe::sheet_of(probe).unwrap();
        sheet
            .figures
            .into_iter()
            .filter(|f| f.overview.is_some())
            .collect()
    };
    let micro = set_of("micro");
    assert!(micro.len() > 10, "micro: one median per operation");
    let label = set_label(&micro.iter().collect::<Vec<_>>());
    assert_eq!(
        label,
        format!("median (µs) of {}, geometric mean", micro.len())
    );
    let fileio = set_label(&set_of("fileio").iter().collect::<Vec<_>>());
    assert_eq!(fileio, "avg (ms) of 2, geometric mean");
}

#[test]
fn ratios_are_to_none_and_say_how_many_times_worse() {
    let overview = of(&fixture::run());
    assert_eq!(
        overview.loads,
        ["none", "burn", "cmd:stress-ng --cpu 2", "video"]
    );
    let audio = &overview.probes[0];
    assert_eq!(audio.figure, "latency mean (ms)");
    assert_eq!(audio.share.as_deref(), Some("deadlines met %"));
    let burn = audio.cells[1].figures.as_ref().unwrap();
    assert!((burn.ratio.unwrap() - 1234.5 / 52.5).abs() < 1e-9);
    assert!(burn.clear && burn.worse());
    assert_eq!(burn.share, Some(90.0));
    assert_eq!(audio.cells[0].figures.as_ref().unwrap().ratio, Some(1.0));
    assert!(audio.cells[3].figures.is_none(), "video failed");
    // Gaming's FPS is better higher: the ratio is none's over burn's
    // (both 58.25 in the fixture).
    let gaming = &overview.probes[1];
    assert_eq!(gaming.figure, "FPS");
    let fps = gaming.cells[1].figures.as_ref().unwrap();
    assert_eq!(fps.ratio, Some(1.0));
    assert_eq!(fps.share, Some(93.33));
}

#[test]
fn the_verdict_names_the_worst_loads_and_a_low_share() {
    let overview = of(&by_ratio_alone());
    assert_eq!(
        overview.probes[0].verdict(),
        "audio: 38× later under cmd:stress-ng --cpu 2, 24× under burn; \
         90 % deadlines met under none, 90 % under burn, 90 % under cmd:stress-ng --cpu 2; \
         failed under video"
    );
    let mut run = by_ratio_alone();
    for s in &mut run.scenarios {
        let figures = &mut s.outcome.result.as_mut().map(|r| &mut r.figures);
        if let Some(figures) = figures {
            figures.insert("latency_mean_us".into(), 52.5);
            figures.insert("deadlines_met_pct".into(), 100.0);
            figures.insert("desired_cpu_pct".into(), 100.0);
        }
    }
    run.scenarios.retain(|s| s.load != "video");
    let overview = of(&run);
    assert_eq!(overview.probes[0].verdict(), "audio: fine under every load");
    assert_eq!(
        overview.probes[1].verdict(),
        "gaming: fine under every load"
    );
    run.scenarios.retain(|s| s.load != "none");
    let overview = of(&run);
    assert!(!overview.probes[0].has_reference);
    assert!(overview.probes[0]
        .verdict()
        .contains("not measured under none"));
    assert_eq!(
        cell_text(&overview.probes[0], &overview.probes[0].cells[0]),
        "0.052"
    );
    assert_eq!(overview.summary(), None);
}

#[test]
fn a_low_share_never_reads_as_the_fine_threshold() {
    assert_eq!(share_words(94.6), "94.6 %");
    assert_eq!(share_words(94.4), "94 %");
    assert_eq!(share_words(7.5), "8 %");
}

#[test]
fn a_ratio_within_the_intervals_is_not_called_worse() {
    let mut run = by_ratio_alone();
    run.scenarios[0].intervals = with_intervals(vec![interval("mean", 40.0, 1300.0)]);
    run.scenarios[1].intervals = with_intervals(vec![interval("mean", 1000.0, 1500.0)]);
    let overview = of(&run);
    let audio = &overview.probes[0];
    let burn = audio.cells[1].figures.as_ref().unwrap();
    assert!(!burn.clear && !burn.worse());
    assert_eq!(cell_text(audio, &audio.cells[1]), "23.5×°");
    assert!(burn.unclear());
    assert!(
        audio
            .verdict()
            .contains("24× later under burn within the noise (°)"),
        "not called worse, nor fine: {}",
        audio.verdict()
    );
    assert_eq!(burn.band(), 1, "the share of 90 % is still low");
    run.scenarios[0].intervals = with_intervals(vec![interval("mean", 40.0, 60.0)]);
    let overview = of(&run);
    assert!(overview.probes[0].cells[1]
        .figures
        .as_ref()
        .unwrap()
        .worse());
}

#[test]
fn a_set_of_figures_takes_the_geometric_mean_of_their_ratios() {
    let mut run = by_ratio_alone();
    let sheet = run.probes.get_mut("audio").unwrap();
    for f in &mut sheet.figures {
        f.overview = match f.key.as_str() {
            "p50" | "p99" => Some(OverviewRole::ratio("slower")),
            _ => None,
        };
    }
    // p50 and p99 both scale with the mean in the fixture: under burn
    // each is 1234.5 / 52.5 times none's.
    let overview = of(&run);
    let audio = &overview.probes[0];
    assert_eq!(audio.figure, "(ms) of 2, geometric mean", "p50 and p99");
    assert_eq!(audio.share, None);
    let burn = audio.cells[1].figures.as_ref().unwrap();
    assert!((burn.ratio.unwrap() - 1234.5 / 52.5).abs() < 1e-9);
    assert_eq!(burn.value, None);
    assert_eq!(cell_text(audio, &audio.cells[0]), "1.00×", "none's ratio");
    assert!(audio.verdict().starts_with("audio: 38× slower under cmd"));
    assert!((geometric_mean([2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
    assert_eq!(geometric_mean([]), None);
}

#[test]
fn a_sheet_without_a_declaration_falls_back_on_its_first_headline_figure() {
    let mut run = fixture::run();
    for sheet in run.probes.values_mut() {
        sheet.figures.iter_mut().for_each(|f| f.overview = None);
    }
    let overview = of(&run);
    assert_eq!(overview.probes[0].figure, "latency mean (ms)");
    assert_eq!(overview.probes[0].worse, "worse");
    assert_eq!(overview.probes[0].share, None);
    // A sheet stored without the field still reads.
    let mut value = serde_json::to_value(fixture::run()).unwrap();
    let figures = value["probes"]["audio"]["figures"].as_array_mut().unwrap();
    figures
        .iter_mut()
        .for_each(|f| _ = f.as_object_mut().unwrap().remove("overview"));
    let old: RunDocument = serde_json::from_value(value).unwrap();
    assert_eq!(of(&old).probes[0].worse, "worse");
}

/// The fixture run, as made from suite `name`.
fn in_suite(name: &str) -> RunDocument {
    let mut run = fixture::run();
    run.suite = Some(SuiteRecord {
        name: name.to_string(),
        version: 1,
        summary: String::new(),
        source: "built-in".to_string(),
        options: Vec::new(),
        root_options_left_out: Vec::new(),
        groups: Vec::new(),
        left_out: Vec::new(),
    });
    run
}

#[test]
fn the_summary_is_the_geometric_mean_of_the_ratios() {
    let summary = of(&in_suite("interbench")).summary().unwrap();
    // audio: 23.51 and 38.10 (geometric mean 29.93), gaming 1.00:
    // over all three, 9.64.
    assert_eq!(
        summary,
        "geometric mean of the ratios to none, suite interbench: 9.64× (audio 29.9×, gaming 1.00×); the figures per scenario are above"
    );
    let overview = of(&fixture::run());
    assert!(overview.summary().unwrap().contains(", the run: 9.64×"));
}

#[test]
fn bands_follow_the_worse_of_ratio_and_share() {
    let cell = |ratio: f64, share: Option<f64>| CellFigures {
        value: None,
        ratio: Some(ratio),
        clear: true,
        share,
        notice: None,
        judged: None,
    };
    assert_eq!(cell(1.1, None).band(), 0);
    assert_eq!(cell(1.5, Some(99.0)).band(), 0, "fine up to FINE_RATIO");
    assert_eq!(cell(1.6, Some(99.0)).band(), 1);
    assert_eq!(cell(3.0, Some(99.0)).band(), 2);
    assert_eq!(cell(5.0, None).band(), 3);
    assert_eq!(cell(1.0, Some(40.0)).band(), 3);
    assert_eq!(cell(1.0, Some(90.0)).band(), 1);
}

#[test]
fn the_console_overview_has_a_row_per_probe_and_share_and_a_column_per_load() {
    let text = render(&fixture::run());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], "=== Overview ===");
    assert!(
        lines[2].contains("figure") && lines[2].ends_with("video"),
        "{text}"
    );
    assert!(lines[3].starts_with("audio   latency mean (ms)"), "{text}");
    assert!(
        lines[3].contains("0.052") && lines[3].contains("23.5×"),
        "{text}"
    );
    assert!(lines[3].ends_with("failed"), "{text}");
    assert!(lines[4].starts_with("        deadlines met %"), "{text}");
    // Gaming's rule judges its 1 % low, which gets a row of its own.
    assert!(lines[7].starts_with("        1% low FPS"), "{text}");
    assert!(text.contains("\naudio: poor under "), "{text}");
    assert!(
        text.contains("\naudio: deadlines met % noticed below 100.0, poor below 99.0: "),
        "{text}"
    );
    assert!(
        text.contains("\ngeometric mean of the ratios to none, the run: "),
        "{text}"
    );
    let md = render_markdown(&in_suite("interbench"));
    assert!(
        md.starts_with("\n## Overview\n\n| probe | figure | none | burn |"),
        "{md}"
    );
    assert!(
        md.contains("\n| audio | latency mean (ms) | 0.052 | 23.5× |"),
        "{md}"
    );
    assert!(md.contains("\n- audio: poor under "), "{md}");
    assert!(md.contains("none, suite interbench: 9.64×"), "{md}");
}

/// The fixture run with audio's deadlines met at `burn_pct` under
/// burn and 100 % elsewhere.
fn audio_meeting(burn_pct: f64) -> RunDocument {
    let mut run = fixture::run();
    for s in run.scenarios.iter_mut().filter(|s| s.probe == "audio") {
        if let Some(result) = s.outcome.result.as_mut() {
            let met = if s.load == "burn" { burn_pct } else { 100.0 };
            result.figures.insert("deadlines_met_pct".into(), met);
        }
    }
    run.scenarios.retain(|s| s.load != "video");
    run
}

#[test]
fn a_probe_is_judged_first_by_what_its_user_notices() {
    // 24× later under burn with every deadline met: nobody hears it.
    let overview = of(&audio_meeting(100.0));
    let audio = &overview.probes[0];
    let burn = audio.cells[1].figures.as_ref().unwrap();
    assert!(burn.worse(), "the ratio is still far above 1.5");
    assert_eq!(burn.notice, Some(Notice::Unnoticed));
    assert_eq!(burn.band(), 1, "not red: only worse than none");
    assert_eq!(
        audio.verdict(),
        "audio: 38× later under cmd:stress-ng --cpu 2, 24× under burn, not noticed"
    );
    assert_eq!(audio.cells[0].figures.as_ref().unwrap().band(), 0);
    // A few deadlines missed, at a ratio of 24: noticed, said with it.
    let overview = of(&audio_meeting(99.5));
    let audio = &overview.probes[0];
    assert_eq!(audio.cells[1].figures.as_ref().unwrap().band(), 2);
    assert_eq!(
        audio.verdict(),
        "audio: noticed under burn (deadlines met % 99.5, 24× later); \
         38× later under cmd:stress-ng --cpu 2, not noticed"
    );
    // 4 % missed: poor, whatever the ratio.
    let overview = of(&audio_meeting(96.0));
    let burn = overview.probes[0].cells[1].figures.as_ref().unwrap();
    assert_eq!((burn.notice, burn.band()), (Some(Notice::Poor), 3));
    // Judged without a `none` as well: the rule needs no ratio.
    let mut run = audio_meeting(96.0);
    run.scenarios.retain(|s| s.load != "none");
    let overview = of(&run);
    let audio = &overview.probes[0];
    assert!(!audio.has_reference);
    assert_eq!(
        audio.verdict(),
        "audio: poor under burn (deadlines met % 96.0); fine under cmd:stress-ng --cpu 2"
    );
    let html = crate::report::heat_map::render(&run, &["audio"]);
    assert!(html.contains("<td class=\"b3\">"), "{html}");
}

#[test]
fn the_verdict_and_the_heat_map_follow_one_rule() {
    // A probe judged by ratio: "fine" in the verdict exactly when the
    // heat map colours the cell as fine (1.3× was fine and yellow).
    for ratio in [1.0, 1.3, 1.5, 1.6, 2.5, 6.0] {
        for met in [100.0, 96.0, 90.0, 60.0] {
            let mut run = by_ratio_alone();
            run.scenarios.retain(|s| s.load != "video");
            for s in run.scenarios.iter_mut().filter(|s| s.probe == "audio") {
                let figures = &mut s.outcome.result.as_mut().unwrap().figures;
                let mean = if s.load == "burn" { 52.5 * ratio } else { 52.5 };
                figures.insert("latency_mean_us".into(), mean);
                figures.insert("deadlines_met_pct".into(), met);
            }
            let overview = of(&run);
            let audio = &overview.probes[0];
            let band = audio.cells[1].figures.as_ref().unwrap().band();
            let verdict = audio.verdict();
            let fine =
                verdict.contains("fine under burn") || verdict.ends_with("fine under every load");
            assert_eq!(fine, band == 0, "{ratio}, {met}: {verdict} (band {band})");
        }
    }
}

#[test]
fn every_rule_of_what_a_user_notices_is_whole() {
    let mut judged = Vec::new();
    for def in crate::probe::PROBES {
        let sheet = def.sheet();
        let rules: Vec<&FigureDef> = sheet
            .figures
            .iter()
            .filter(|f| f.noticeable.is_some())
            .collect();
        assert!(rules.len() <= 1, "{}: one rule per probe", def.name);
        let Some(figure) = rules.first() else {
            continue;
        };
        let rule = figure.noticeable.as_ref().unwrap();
        let poor_is_worse = match figure.better {
            Better::Lower => rule.poor > rule.noticed,
            Better::Higher => rule.poor < rule.noticed,
        };
        assert!(poor_is_worse, "{}: {rule:?}", def.name);
        assert!(
            rule.source.len() > 40,
            "{}: say where it comes from",
            def.name
        );
        judged.push(def.name);
    }
    for probe in [
        "x", "audio", "video", "gaming", "fragment", "response", "command", "rtapp",
    ] {
        assert!(judged.contains(&probe), "{probe} has no rule: {judged:?}");
    }
}
