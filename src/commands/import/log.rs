//! What a frame log says, whatever wrote it: the time of each frame in
//! order, the frames that missed their refresh where the log says, and
//! what it tells of the machine; and the one-line error a bad log gives,
//! naming its file and line.

use std::path::Path;

/// The frames of one log.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FrameLog {
    /// Each frame's time (from the previous present to its own), ns.
    pub frames_ns: Vec<u64>,
    /// Frames that missed their refresh, where the log says (PresentMon
    /// 1.x's `Dropped`); `None` where it does not.
    pub missed: Option<u64>,
    /// The kernel release and CPU of the machine it was made on, where the
    /// log says (MangoHud's system line).
    pub kernel: Option<String>,
    pub cpu: Option<String>,
}

/// A log that cannot be read, at `line` of `path` (1-based).
#[derive(Debug, thiserror::Error)]
#[error("{path}:{line}: {what}")]
pub struct LogError {
    pub path: String,
    pub line: u64,
    pub what: String,
}

impl LogError {
    /// The error `what` at `line` of `path`.
    pub fn at(path: &Path, line: u64, what: impl Into<String>) -> Self {
        Self {
            path: path.display().to_string(),
            line,
            what: what.into(),
        }
    }
}

/// The rows of the CSV `text`, each with its line (1-based), trimmed,
/// blank ones left out; rows may have any number of fields.
pub fn rows(path: &Path, text: &str) -> Result<Vec<(u64, Vec<String>)>, LogError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(1, |p| p.line());
            LogError::at(path, line, format!("not CSV: {e}"))
        })?;
        let line = record.position().map_or(1, |p| p.line());
        let fields: Vec<String> = record.iter().map(str::to_string).collect();
        if fields.iter().any(|f| !f.is_empty()) {
            rows.push((line, fields));
        }
    }
    Ok(rows)
}

/// The frame time `field` of the row at `line`, in `unit_ns` per unit: a
/// number above 0.
pub fn frame_ns(
    path: &Path,
    line: u64,
    column: &str,
    field: &str,
    unit_ns: f64,
) -> Result<u64, LogError> {
    let value: f64 = field
        .parse()
        .map_err(|_| LogError::at(path, line, format!("{column} '{field}' is not a number")))?;
    if !(value.is_finite() && value > 0.0) {
        return Err(LogError::at(
            path,
            line,
            format!("{column} {field}: a frame time must be above 0"),
        ));
    }
    Ok((value * unit_ns).round().max(1.0) as u64)
}

/// The field of `row` in `column` (its index), or the error of a row cut
/// short.
pub fn field<'a>(
    path: &Path,
    (line, row): (u64, &'a [String]),
    column: usize,
    width: usize,
) -> Result<&'a str, LogError> {
    row.get(column).map(String::as_str).ok_or_else(|| {
        LogError::at(
            path,
            line,
            format!("truncated row: {} of {width} fields", row.len()),
        )
    })
}
