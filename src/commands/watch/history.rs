//! `feelbench history --watch`: the minutes `watch` stored, a row per
//! minute and canary, so a machine's feel reads over days: as a table,
//! CSV or JSON, or as a chart of each canary's p99 over time (SVG, or an
//! HTML page with the chart and the table).

use super::canary::name_width;
use crate::commands::history::HistoryFormat;
use crate::commands::store::open;
use crate::report::chart::{self, Labels, Line};
use crate::report::html;
use crate::store::watch::WatchMinute;
use crate::store::StoreLocation;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, UNIX_EPOCH};

/// What `history --watch` shows.
#[derive(Debug)]
pub struct WatchHistorySettings {
    pub store: StoreLocation,
    /// One host's minutes, else every host's.
    pub hostname: Option<String>,
    /// From when (Unix seconds); `None`: the last day.
    pub since_unix: Option<i64>,
    pub format: HistoryFormat,
    /// The file to write to (`-o`), else stdout.
    pub output: Option<PathBuf>,
}

/// The minutes asked for, rendered in the format asked for.
pub fn render(settings: &WatchHistorySettings) -> anyhow::Result<String> {
    let now = crate::store::add::now_unix();
    let since = settings.since_unix.unwrap_or(now - 86_400);
    let minutes = open(&settings.store)?.watch_minutes(settings.hostname.as_deref(), since)?;
    Ok(match settings.format {
        HistoryFormat::Table => table(&minutes),
        HistoryFormat::Csv => csv(&minutes)?,
        HistoryFormat::Json => serde_json::to_string_pretty(&minutes)? + "\n",
        HistoryFormat::Svg => svg(&minutes)?,
        HistoryFormat::Html => page(&minutes)?,
    })
}

/// A minute's start as `YYYY-MM-DD HH:MM` (UTC).
fn stamp(minute_unix: i64) -> String {
    let start = UNIX_EPOCH + Duration::from_secs(minute_unix.max(0) as u64);
    humantime::format_rfc3339_seconds(start).to_string()[..16].replace('T', " ")
}

/// The columns of the table and the page.
const HEADER: [&str; 8] = [
    "minute (UTC)",
    "host",
    "canary",
    "events",
    "p50 ms",
    "p99 ms",
    "max ms",
    "incidents",
];

/// A minute's cells, in [`HEADER`]'s order.
fn cells(m: &WatchMinute) -> [String; 8] {
    [
        stamp(m.minute_unix),
        m.hostname.clone(),
        m.canary.clone(),
        m.events.to_string(),
        format!("{:.3}", m.p50_ms),
        format!("{:.3}", m.p99_ms),
        format!("{:.3}", m.max_ms),
        m.incidents.to_string(),
    ]
}

/// The minutes as a table, or a line saying there are none.
fn table(minutes: &[WatchMinute]) -> String {
    if minutes.is_empty() {
        return "no minutes of feelbench watch in the store for this choice\n".to_string();
    }
    let width = name_width(minutes.iter().map(|m| m.canary.as_str()));
    let mut out = String::new();
    let rows = std::iter::once(HEADER.map(String::from)).chain(minutes.iter().map(cells));
    for [minute, host, canary, events, p50, p99, max, incidents] in rows {
        let _ = writeln!(
            out,
            "{minute:<17}  {host:<12}  {canary:<width$}  {events:>7}  {p50:>8}  {p99:>8}  {max:>8}  {incidents:>9}"
        );
    }
    out
}

/// The minutes as CSV with a header, a record per minute and canary.
fn csv(minutes: &[WatchMinute]) -> anyhow::Result<String> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record([
        "minute_unix",
        "minute",
        "host",
        "canary",
        "events",
        "p50_ms",
        "p99_ms",
        "max_ms",
        "incidents",
    ])?;
    for m in minutes {
        writer.write_record([
            m.minute_unix.to_string(),
            stamp(m.minute_unix),
            m.hostname.clone(),
            m.canary.clone(),
            m.events.to_string(),
            m.p50_ms.to_string(),
            m.p99_ms.to_string(),
            m.max_ms.to_string(),
            m.incidents.to_string(),
        ])?;
    }
    Ok(String::from_utf8(writer.into_inner()?)?)
}

/// Each host's canaries' p99 over time, a line each, in hours since the
/// first minute shown.
fn svg(minutes: &[WatchMinute]) -> anyhow::Result<String> {
    let first = minutes.iter().map(|m| m.minute_unix).min().unwrap_or(0);
    let mut lines: Vec<Line> = Vec::new();
    for m in minutes {
        let name = format!("{} {}", m.hostname, m.canary);
        let point = ((m.minute_unix - first) as f64 / 3600.0, m.p99_ms);
        match lines.iter_mut().find(|l| l.name == name) {
            Some(line) => line.points.push(point),
            None => lines.push(Line {
                name,
                points: vec![point],
            }),
        }
    }
    for line in &mut lines {
        line.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let x = format!("hours since {} UTC", stamp(first));
    let labels = Labels {
        title: "feelbench watch: each canary's p99 a minute",
        x: &x,
        y: "p99 (ms)",
    };
    chart::over_time(labels, &lines, None)
}

/// One self-contained page: the chart and the table.
fn page(minutes: &[WatchMinute]) -> anyhow::Result<String> {
    let title = "feelbench watch: the machine's feel, minute by minute";
    if minutes.is_empty() {
        return Ok(html::page(
            title,
            &format!("<p>{}</p>", html::escape(&table(minutes))),
        ));
    }
    // The first three columns are words, the rest numbers.
    let rows: Vec<Vec<(String, &str)>> = minutes
        .iter()
        .map(|m| {
            (cells(m).into_iter().enumerate())
                .map(|(column, cell)| (cell, if column < 3 { "" } else { "num" }))
                .collect()
        })
        .collect();
    let body = format!(
        "<h1>{}</h1>\n<div class=\"charts\">{}</div>\n{}",
        html::escape(title),
        svg(minutes)?,
        html::table(&HEADER, &rows)
    );
    Ok(html::page(title, &body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minute_is_a_row_with_its_utc_start() {
        let minute = WatchMinute {
            hostname: "vm".into(),
            canary: "timer".into(),
            minute_unix: 1_800_000_000,
            events: 60_000,
            incidents: 3,
            p50_ms: 0.1,
            p99_ms: 2.5,
            max_ms: 31.25,
        };
        let text = table(&[minute]);
        let row = text.lines().nth(1).unwrap();
        assert!(row.starts_with("2027-01-15 08:00   vm "), "{row}");
        assert!(
            row.ends_with("0.100     2.500    31.250          3"),
            "{row}"
        );
        assert!(table(&[]).starts_with("no minutes"));
    }

    fn minutes() -> Vec<WatchMinute> {
        ["timer", "frame"]
            .iter()
            .flat_map(|canary| {
                (0..3).map(move |i| WatchMinute {
                    hostname: "vm".into(),
                    canary: canary.to_string(),
                    minute_unix: 1_800_000_000 + 60 * i,
                    events: 60_000,
                    incidents: i,
                    p50_ms: 0.1,
                    p99_ms: 1.0 + i as f64,
                    max_ms: 9.5,
                })
            })
            .collect()
    }

    #[test]
    fn csv_and_json_hold_every_minute_and_its_figures() {
        let minutes = minutes();
        let text = csv(&minutes).unwrap();
        let mut rows = text.lines();
        assert_eq!(
            rows.next(),
            Some("minute_unix,minute,host,canary,events,p50_ms,p99_ms,max_ms,incidents")
        );
        assert_eq!(
            rows.next(),
            Some("1800000000,2027-01-15 08:00,vm,timer,60000,0.1,1,9.5,0")
        );
        assert_eq!(rows.count(), 5);
        let json: serde_json::Value = serde_json::to_value(&minutes).unwrap();
        assert_eq!(json[4]["canary"], "frame");
        assert_eq!(json[4]["p99_ms"], 2.0);
    }

    #[test]
    fn the_chart_has_a_line_per_canary_and_the_page_its_table() {
        let svg = svg(&minutes()).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        for name in ["vm timer", "vm frame", "hours since 2027-01-15 08:00 UTC"] {
            assert!(svg.contains(name), "{name}");
        }
        let html = page(&minutes()).unwrap();
        assert!(html.contains("<svg") && html.contains("<table"), "{html}");
        assert!(page(&[]).unwrap().contains("no minutes"));
    }
}
