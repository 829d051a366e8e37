//! `feelbench history --watch`: the minutes `watch` stored, a row per
//! minute and canary, so a machine's feel reads over days.

use crate::commands::store::open;
use crate::store::watch::WatchMinute;
use crate::store::StoreLocation;
use std::fmt::Write as _;
use std::time::{Duration, UNIX_EPOCH};

/// What `history --watch` shows.
#[derive(Debug)]
pub struct WatchHistorySettings {
    pub store: StoreLocation,
    /// One host's minutes, else every host's.
    pub hostname: Option<String>,
    /// From when (Unix seconds); `None`: the last day.
    pub since_unix: Option<i64>,
}

/// The table of the minutes asked for.
pub fn render(settings: &WatchHistorySettings) -> anyhow::Result<String> {
    let now = crate::store::add::now_unix();
    let since = settings.since_unix.unwrap_or(now - 86_400);
    let minutes = open(&settings.store)?.watch_minutes(settings.hostname.as_deref(), since)?;
    Ok(table(&minutes))
}

/// The minutes as a table, or a line saying there are none.
fn table(minutes: &[WatchMinute]) -> String {
    if minutes.is_empty() {
        return "no minutes of feelbench watch in the store for this choice\n".to_string();
    }
    // As wide as the longest canary's name (an rt-app task's is long).
    let width = minutes
        .iter()
        .map(|m| m.canary.len())
        .max()
        .unwrap_or(0)
        .max(6);
    let mut out = format!(
        "{:<17}  {:<12}  {:<width$}  {:>7}  {:>8}  {:>8}  {:>8}  {:>9}\n",
        "minute (UTC)", "host", "canary", "events", "p50 ms", "p99 ms", "max ms", "incidents"
    );
    for m in minutes {
        let start = UNIX_EPOCH + Duration::from_secs(m.minute_unix.max(0) as u64);
        let stamp = humantime::format_rfc3339_seconds(start).to_string();
        let _ = writeln!(
            out,
            "{:<17}  {:<12}  {:<width$}  {:>7}  {:>8.3}  {:>8.3}  {:>8.3}  {:>9}",
            stamp[..16].replace('T', " "),
            m.hostname,
            m.canary,
            m.events,
            m.p50_ms,
            m.p99_ms,
            m.max_ms,
            m.incidents
        );
    }
    out
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
}
