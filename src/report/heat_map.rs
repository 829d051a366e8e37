//! The top of the HTML page: the run's overview (`overview`) as a probe ×
//! load heat map, each cell coloured by the rule the verdict follows
//! (`CellFigures::band`: what the probe's user would notice, where its
//! sheet says, else how much worse it did than under `none`) and linked to
//! its row, then the verdicts, the summary line, each probe's rule and a
//! table of contents. Knows no probe: everything comes from the overview,
//! which reads the sheets.

use super::html::escape;
use super::overview::{self, Cell, Overview, ProbeOverview};
use crate::document::schema::RunDocument;
use std::fmt::Write;

/// The colours of the bands (`CellFigures::band`), fine to bad, and the
/// class of a cell without one.
pub const STYLE: &str = ".heat td{text-align:center;min-width:5em}.heat td.figure{text-align:left}\
    .heat td a{color:#222;text-decoration:none;display:block}\
    .b0{background:#b9e6b9}.b1{background:#fff1a0}.b2{background:#ffc68a}.b3{background:#f39a9a}\
    .na{background:#eee}.heat small{color:#444}\
    nav ul{padding:0}nav li{display:inline;margin-right:1.5em}\
    #overview p{font-size:90%;margin:.3em 0}";

/// The bands as the legend names them, fine to bad: by a probe's rule,
/// then (after `|`) by ratio and share for a probe without one.
const BANDS: [&str; 4] = [
    "not noticed | ratio ≤ 1.5× (or within the intervals), share ≥ 95 %",
    "not noticed, ratio > 1.5× | ratio ≤ 2×, share ≥ 80 %",
    "noticed | ratio < 5×, share ≥ 50 %",
    "poor | ratio ≥ 5× or share < 50 %",
];

/// The anchor of `probe`'s section.
pub fn probe_anchor(probe: &str) -> String {
    let slug: String = probe
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("probe-{slug}")
}

/// The anchor of the row of the run's scenario `index`.
pub fn scenario_anchor(index: usize) -> String {
    format!("scenario-{index}")
}

/// The table of contents (`sections`: each probe's name, in the page's
/// order) and the overview.
pub fn render(run: &RunDocument, sections: &[&str]) -> String {
    let overview = overview::of(run);
    let mut out = contents(sections) + "<div id=\"overview\">\n<h2>Overview</h2>\n";
    if overview.probes.is_empty() {
        out += "<p>No probe of this run declares a figure to show here.</p>\n";
    } else {
        out += &heat_map(&overview);
        out += "<ul>\n";
        for p in &overview.probes {
            let _ = writeln!(out, "<li>{}</li>", escape(&p.verdict()));
        }
        out += "</ul>\n";
        for line in overview
            .summary()
            .into_iter()
            .chain(overview::legend(&overview))
        {
            let _ = writeln!(out, "<p>{}</p>", escape(&line));
        }
        out += &band_legend();
    }
    out + "</div>\n"
}

/// The table: a row per probe, a column per load, each cell its ratio (or,
/// under `none`, its value) with its share and the figure its rule judges
/// below, coloured by its band.
fn heat_map(overview: &Overview) -> String {
    let mut out = String::from("<table class=\"heat\">\n<tr><th>probe</th><th>figure</th>");
    for load in &overview.loads {
        let _ = write!(out, "<th>{}</th>", escape(load));
    }
    out += "</tr>\n";
    for p in &overview.probes {
        let small = |label: &str| format!("<br><small>{}</small>", escape(label));
        let figure = escape(&p.figure)
            + &p.share.as_deref().map(small).unwrap_or_default()
            + &p.rule
                .as_ref()
                .filter(|r| !r.is_share)
                .map(|r| small(&r.figure))
                .unwrap_or_default();
        let _ = write!(
            out,
            "<tr><th><a href=\"#{}\">{}</a></th><td class=\"figure\">{figure}</td>",
            probe_anchor(&p.probe),
            escape(&p.probe)
        );
        for load in &overview.loads {
            out += &match p.cells.iter().find(|c| &c.load == load) {
                Some(cell) => heat_cell(p, cell),
                None => "<td></td>".to_string(),
            };
        }
        out += "</tr>\n";
    }
    out + "</table>\n"
}

/// One cell: its text, share and the figure its rule judges (when not
/// the share), linked to its row, in its band's colour (grey when it has
/// none: failed, or neither a rule's judgement nor a `none` to compare
/// with).
fn heat_cell(p: &ProbeOverview, cell: &Cell) -> String {
    let class = match &cell.figures {
        Some(f) if p.has_reference || f.notice.is_some() => format!("b{}", f.band()),
        _ => "na".to_string(),
    };
    let share = match &p.share {
        Some(_) => format!("<br><small>{} %</small>", overview::share_text(cell)),
        None => String::new(),
    };
    let judged = match p.rule.as_ref().filter(|r| !r.is_share) {
        Some(_) => format!(
            "<br><small>{}</small>",
            escape(&overview::judged_text(cell))
        ),
        None => String::new(),
    };
    format!(
        "<td class=\"{class}\"><a href=\"#{}\">{}{share}{judged}</a></td>",
        scenario_anchor(cell.scenario),
        escape(&overview::cell_text(p, cell))
    )
}

/// The colours' meaning.
fn band_legend() -> String {
    let swatches: String = BANDS
        .iter()
        .enumerate()
        .map(|(i, text)| format!("<td class=\"b{i}\">{}</td>", escape(text)))
        .collect();
    format!("<table class=\"heat\"><tr>{swatches}<td class=\"na\">no ratio</td></tr></table>\n")
}

/// The table of contents: the overview, each probe's section, the
/// environment and the warnings.
fn contents(sections: &[&str]) -> String {
    let mut out = String::from(
        "<nav>\n<ul>\n<li><strong>Contents</strong></li>\n<li><a href=\"#overview\">Overview</a></li>\n",
    );
    for probe in sections {
        let _ = writeln!(
            out,
            "<li><a href=\"#{}\">{}</a></li>",
            probe_anchor(probe),
            escape(probe)
        );
    }
    out + "<li><a href=\"#environment\">Environment</a></li>\n<li><a href=\"#warnings\">Warnings</a></li>\n</ul>\n</nav>\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::fixture;

    #[test]
    fn each_cell_is_coloured_by_its_band_and_links_to_its_row() {
        let run = fixture::run();
        let html = render(&run, &["audio", "gaming"]);
        // audio under burn: 23.5×, red as its rule says of 90 % deadlines
        // met, its row the run's second scenario.
        assert!(
            html.contains(
                "<td class=\"b3\"><a href=\"#scenario-1\">23.5×<br><small>90.0 %</small></a></td>"
            ),
            "{html}"
        );
        // Under none the value, judged by the same rule: poor too.
        assert!(
            html.contains("<td class=\"b3\"><a href=\"#scenario-0\">0.052<br>"),
            "{html}"
        );
        // Gaming's rule judges its 1 % low, shown under its share; 41.5
        // FPS is not noticed, and its ratio is 1: green.
        assert!(
            html.contains("<td class=\"b0\"><a href=\"#scenario-4\">58.2<br><small>93.3 %</small><br><small>41.5</small></a></td>"),
            "{html}"
        );
        assert!(
            html.contains("<p>gaming: 1% low FPS noticed below 30.0"),
            "{html}"
        );
        // Failed: grey; a load the probe did not run: empty.
        assert!(
            html.contains("<td class=\"na\"><a href=\"#scenario-3\">failed"),
            "{html}"
        );
        assert!(html.contains("<td></td>"), "{html}");
        assert!(
            html.contains("<a href=\"#probe-gaming\">gaming</a>"),
            "{html}"
        );
        assert!(html.contains("<li>audio: poor under "), "{html}");
        assert_eq!(html.matches("<li><a href=\"#probe-").count(), 2, "{html}");
        assert_eq!(probe_anchor("micro:fork"), "probe-micro-fork");
    }
}
