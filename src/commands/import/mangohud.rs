//! MangoHud's CSV log (`src/logging.cpp`, `writeFile`): optionally `v1`,
//! its version and a `SYSTEM INFO` rule; a header `os,cpu,gpu,ram,kernel,
//! driver,cpuscheduler` and its values; optionally a `FRAME METRICS` rule;
//! a header beginning `fps,frametime,...` and a row per logged frame.
//! MangoHud 0.6 writes `frametime` in µs (its `fps` is 1e6 over it); the
//! unit is told from the first row, whose `fps` times `frametime` is about
//! 1e6 in µs and 1e3 in ms.

use super::log::{field, frame_ns, rows, FrameLog, LogError};
use std::path::Path;

/// Reads MangoHud's log `text`, from `path`.
pub fn read(path: &Path, text: &str) -> Result<FrameLog, LogError> {
    let rows = rows(path, text)?;
    let column = |header: &[String], name: &str| header.iter().position(|f| f == name);
    let mut log = FrameLog::default();
    let mut frames_header = None;
    for (k, (line, row)) in rows.iter().enumerate() {
        if row.first().is_some_and(|f| f == "os") && column(row, "cpu").is_some() {
            if let Some((_, values)) = rows.get(k + 1) {
                let value = |name| column(row, name).and_then(|i| values.get(i)).cloned();
                log.kernel = value("kernel").filter(|v| !v.is_empty());
                log.cpu = value("cpu").filter(|v| !v.is_empty());
            }
        }
        if row.first().is_some_and(|f| f == "fps") {
            if let Some(frametime) = column(row, "frametime") {
                frames_header = Some((k, *line, row.len(), frametime));
                break;
            }
        }
    }
    let Some((header, header_line, width, frametime)) = frames_header else {
        return Err(LogError::at(
            path,
            1,
            "not a MangoHud log: no `fps,frametime,...` header",
        ));
    };
    let data = &rows[header + 1..];
    let Some((first_line, first)) = data.first() else {
        return Err(LogError::at(
            path,
            header_line,
            "a MangoHud log with no frames",
        ));
    };
    let first_fps: f64 = field(path, (*first_line, first), 0, width)?
        .parse()
        .unwrap_or(0.0);
    let first_time: f64 = field(path, (*first_line, first), frametime, width)?
        .parse()
        .unwrap_or(0.0);
    let unit_ns = if first_fps * first_time > 1e4 {
        1e3
    } else {
        1e6
    };
    for (line, row) in data {
        if row.len() < width {
            return Err(LogError::at(
                path,
                *line,
                format!("truncated row: {} of {width} fields", row.len()),
            ));
        }
        let value = field(path, (*line, row), frametime, width)?;
        log.frames_ns
            .push(frame_ns(path, *line, "frametime", value, unit_ns)?);
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "os,cpu,gpu,ram,kernel,driver,cpuscheduler\n\
        Debian 12,AMD EPYC 7B13,llvmpipe,8 GB,6.1.0,Mesa 22.3.6,\n\
        fps,frametime,cpu_load,gpu_load,cpu_temp,gpu_temp,gpu_core_clock,gpu_mem_clock,gpu_vram_used,gpu_power,ram_used,elapsed\n\
        60.0024,16666,12,0,0,0,0,0,0,0,1.2,16666000\n\
        30,33333,12,0,0,0,0,0,0,0,1.2,49999000\n";

    fn read_str(text: &str) -> Result<FrameLog, LogError> {
        read(Path::new("game.csv"), text)
    }

    #[test]
    fn a_mangohud_log_gives_its_frames_in_microseconds_and_its_machine() {
        let log = read_str(LOG).unwrap();
        assert_eq!(log.frames_ns, vec![16_666_000, 33_333_000]);
        assert_eq!(log.kernel.as_deref(), Some("6.1.0"));
        assert_eq!(log.cpu.as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(log.missed, None);
        let versioned = format!(
            "v1\n0.6.8\n---------------------SYSTEM INFO---------------------\n{}",
            LOG.replacen(
                "fps,",
                "--------------------FRAME METRICS--------------------\nfps,",
                1
            )
        );
        assert_eq!(read_str(&versioned).unwrap().frames_ns.len(), 2);
        let in_ms = "fps,frametime,elapsed\n50,20.0,0\n";
        assert_eq!(read_str(in_ms).unwrap().frames_ns, vec![20_000_000]);
    }

    #[test]
    fn a_bad_log_names_its_file_and_line() {
        let cases = [
            ("a,b\n1,2\n", "game.csv:1: not a MangoHud log"),
            (
                "fps,frametime,elapsed\n",
                "game.csv:1: a MangoHud log with no frames",
            ),
            (
                "fps,frametime,elapsed\n60,16666,0\n60,16666\n",
                "game.csv:3: truncated row: 2 of 3 fields",
            ),
            (
                "fps,frametime,elapsed\n60,16666,0\n60,0,1\n",
                "game.csv:3: frametime 0: a frame time must be above 0",
            ),
            (
                "fps,frametime,elapsed\n60,-5,0\n",
                "game.csv:2: frametime -5: a frame time must be above 0",
            ),
            (
                "fps,frametime,elapsed\n60,abc,0\n",
                "game.csv:2: frametime 'abc' is not a number",
            ),
        ];
        for (text, message) in cases {
            let err = read_str(text).unwrap_err().to_string();
            assert!(err.starts_with(message), "{text:?}: {err}");
        }
    }
}
