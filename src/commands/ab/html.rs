//! An experiment as one HTML page: a heat map of the arms (and the A/A
//! control) × the scenarios, each cell the probe's overview figure's change
//! against the baseline, coloured by its verdict; the answer's lines; then
//! a table per scenario of every figure compared. Built from the report's
//! page and table pieces.

use super::text;
use crate::experiment::analysis::{Analysis, VerdictName};
use crate::experiment::model::ExperimentDocument;
use crate::report::html::{escape, page, table};
use std::fmt::Write as _;

/// The page of `doc`.
pub fn render(doc: &ExperimentDocument) -> String {
    let mut body = format!("<h1>Experiment {}</h1>\n", escape(&doc.id));
    let answer = text::render(doc);
    let Some(analysis) = &doc.analysis else {
        return page(&doc.id, &(body + "<pre>" + &escape(&answer) + "</pre>"));
    };
    body += &heat_map(doc, analysis);
    body += "<h2>Answer and tables</h2>\n<pre>";
    body += &escape(&answer);
    body += "</pre>\n";
    for scenario in &analysis.scenarios {
        let _ = writeln!(
            body,
            "<h2>{} under {}</h2>",
            escape(&scenario.probe),
            escape(&scenario.load)
        );
        let rows: Vec<Vec<(String, &str)>> = scenario
            .figures
            .iter()
            .flat_map(|f| f.comparisons.iter().map(move |c| (f, c)))
            .map(|(f, c)| {
                vec![
                    (f.label.clone(), ""),
                    (doc.slots[c.slot].name.clone(), ""),
                    (f.unit.show(c.baseline), "num"),
                    (
                        format!(
                            "{} [{}, {}]",
                            text::signed(f.unit, c.shift),
                            text::signed(f.unit, c.low),
                            text::signed(f.unit, c.high)
                        ),
                        "num",
                    ),
                    (format!("{:.4}", c.q), "num"),
                    (text::verdict_word(c.verdict).to_string(), class(c.verdict)),
                ]
            })
            .collect();
        body += &table(
            &["figure", "arm", "baseline", "change [95 %]", "q", "verdict"],
            &rows,
        );
    }
    page(&format!("feelbench ab {}", doc.id), &body)
}

/// Arms × scenarios, each cell the overview figure's change.
fn heat_map(doc: &ExperimentDocument, analysis: &Analysis) -> String {
    let mut out =
        String::from("<h2>Arms × scenarios</h2>\n<table class=\"heat\">\n<tr><th>arm</th>");
    for s in &analysis.scenarios {
        let _ = write!(
            out,
            "<th>{}<br><small>{}</small></th>",
            escape(&s.probe),
            escape(&s.load)
        );
    }
    out += "</tr>\n";
    for slot in 1..doc.slots.len() {
        let _ = write!(out, "<tr><th>{}</th>", escape(&doc.slots[slot].name));
        for s in &analysis.scenarios {
            let found = s
                .figures
                .iter()
                .find(|f| f.overview)
                .and_then(|f| Some((f, f.comparisons.iter().find(|c| c.slot == slot)?)));
            out += &match found {
                Some((f, c)) => {
                    let change = match c.relative {
                        Some(r) => format!("{} %", text::pct(r.shift_pct)),
                        None => text::signed(f.unit, c.shift),
                    };
                    format!(
                        "<td class=\"{}\">{}<br><small>{}</small></td>",
                        class(c.verdict),
                        escape(&change),
                        escape(&f.label)
                    )
                }
                None => "<td class=\"na\"></td>".to_string(),
            };
        }
        out += "</tr>\n";
    }
    out + "</table>\n"
}

/// The style class of a verdict (the report's page colours them).
fn class(v: VerdictName) -> &'static str {
    match v {
        VerdictName::Better => "better",
        VerdictName::Worse => "worse",
        VerdictName::Unchanged => "",
    }
}
