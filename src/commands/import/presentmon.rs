//! PresentMon's CSV (the console application's `--output_file`; its
//! README-ConsoleApplication.md, "CSV columns"): a header, then a row per
//! frame presented, time values in ms. The frame time is `MsBetweenPresents`
//! (1.x and 2.x), or `FrameTime` (2.x with its newer metrics); the frames
//! never displayed are those that missed their refresh: 1.x's `Dropped` 1,
//! the newer `DisplayedTime` NA. A file must hold one process's frames: PresentMon writes
//! every process it saw into one file unless told `--process_name`.

use super::log::{field, frame_ns, rows, FrameLog, LogError};
use std::path::Path;

/// Reads PresentMon's CSV `text`, from `path`.
pub fn read(path: &Path, text: &str) -> Result<FrameLog, LogError> {
    let rows = rows(path, text)?;
    let Some(((header_line, header), data)) = rows.split_first() else {
        return Err(LogError::at(path, 1, "not a PresentMon CSV: it is empty"));
    };
    let column = |name: &str| header.iter().position(|f| f == name);
    let Some((name, frametime)) = ["MsBetweenPresents", "FrameTime"]
        .into_iter()
        .find_map(|name| Some((name, column(name)?)))
    else {
        return Err(LogError::at(
            path,
            *header_line,
            "not a PresentMon CSV: no MsBetweenPresents or FrameTime column",
        ));
    };
    let width = header.len();
    if data.is_empty() {
        return Err(LogError::at(
            path,
            *header_line,
            "a PresentMon CSV with no frames",
        ));
    }
    let process = |row: &[String]| {
        [column("Application"), column("ProcessID")]
            .map(|c| c.and_then(|c| row.get(c)).cloned().unwrap_or_default())
    };
    let first = process(&data[0].1);
    // A frame never displayed, and how its column says so.
    let dropped = [("Dropped", "1"), ("DisplayedTime", "NA")]
        .into_iter()
        .find_map(|(name, never)| Some((column(name)?, never)));
    let mut log = FrameLog {
        missed: dropped.map(|_| 0),
        ..FrameLog::default()
    };
    for (line, row) in data {
        let value = field(path, (*line, row), frametime, width)?;
        if process(row) != first {
            return Err(LogError::at(
                path,
                *line,
                format!(
                    "a second process ({}) after {}: capture one per file (--process_name)",
                    process(row).join(" "),
                    first.join(" ")
                ),
            ));
        }
        log.frames_ns.push(frame_ns(path, *line, name, value, 1e6)?);
        if let (Some(missed), Some((c, never))) = (log.missed.as_mut(), dropped) {
            *missed += u64::from(field(path, (*line, row), c, width)? == never);
        }
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> Result<FrameLog, LogError> {
        read(Path::new("pm.csv"), text)
    }

    #[test]
    fn presentmon_rows_give_frame_times_in_ms_and_dropped_frames() {
        let v1 = "Application,ProcessID,SwapChainAddress,Runtime,SyncInterval,PresentFlags,Dropped,TimeInSeconds,MsBetweenPresents\n\
            game.exe,42,0x1,DXGI,1,0,0,0.0166,16.667\n\
            game.exe,42,0x1,DXGI,1,0,1,0.0500,33.333\n";
        let log = read_str(v1).unwrap();
        assert_eq!(log.frames_ns, vec![16_667_000, 33_333_000]);
        assert_eq!(log.missed, Some(1));
        let v2 = "Application,ProcessID,CPUStartTime,FrameTime,CPUBusy\ngame.exe,7,0.1,6.944,3.0\n";
        let log = read_str(v2).unwrap();
        assert_eq!((log.frames_ns, log.missed), (vec![6_944_000], None));
        let shown = "Application,ProcessID,MsBetweenPresents,DisplayedTime\n\
            g,7,6.9,6.9\ng,7,6.9,NA\ng,7,6.9,13.8\n";
        assert_eq!(read_str(shown).unwrap().missed, Some(1));
    }

    #[test]
    fn a_bad_presentmon_csv_names_its_file_and_line() {
        let header = "Application,ProcessID,MsBetweenPresents\n";
        let with_rows = |rows: &str| format!("{header}{rows}");
        let cases = [
            (String::new(), "pm.csv:1: not a PresentMon CSV: it is empty"),
            ("a,b\n1,2\n".into(), "pm.csv:1: not a PresentMon CSV: no Ms"),
            (header.into(), "pm.csv:1: a PresentMon CSV with no frames"),
            (
                with_rows("g,1,16.6\ng,1\n"),
                "pm.csv:3: truncated row: 2 of 3 fields",
            ),
            (
                with_rows("g,1,NA\n"),
                "pm.csv:2: MsBetweenPresents 'NA' is not a number",
            ),
            (
                with_rows("g,1,16.6\nh,2,16.6\n"),
                "pm.csv:3: a second process (h 2) after g 1",
            ),
        ];
        for (text, message) in cases {
            let err = read_str(&text).unwrap_err().to_string();
            assert!(err.starts_with(message), "{text:?}: {err}");
        }
    }
}
