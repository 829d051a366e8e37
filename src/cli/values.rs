//! Values of options: parsers for clap (sizes, `KEY=VALUE` pairs) and the
//! range checks that turn a number the user gave into a setting or a
//! [`UsageError`] naming the option and its range.

use crate::exit::UsageError;
use crate::sim::io::MAX_THRESHOLDS;
use crate::system::cpulist::CpuList;
use crate::system::environment;

/// A size such as `512M`, `4G` or `1048576` (K, M, G and T are powers of 1024).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    parse_size::Config::new()
        .with_binary()
        .parse_size(text)
        .map_err(|e| format!("{e} (give a size such as 512M or 4G)"))
        .and_then(|bytes| match bytes {
            0 => Err("a size must be more than 0".to_string()),
            b => Ok(b),
        })
}

/// A duration above 0 such as `20ms`, `2s` or `1m 30s`, in ns.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let duration = humantime::parse_duration(text.trim())
        .map_err(|e| format!("{e} (give a duration such as 20ms or 2s)"))?;
    match u64::try_from(duration.as_nanos()) {
        Ok(0) => Err("a duration must be more than 0".to_string()),
        Ok(ns) => Ok(ns),
        Err(_) => Err(format!("{text:?} is too long")),
    }
}

/// Request latency thresholds such as `100ms,2s,10s`: one to
/// [`MAX_THRESHOLDS`], ascending, in ns.
pub fn parse_thresholds(text: &str) -> Result<Vec<u64>, String> {
    let thresholds = text
        .split(',')
        .map(parse_duration)
        .collect::<Result<Vec<u64>, String>>()?;
    if thresholds.len() > MAX_THRESHOLDS {
        return Err(format!(
            "give at most {MAX_THRESHOLDS} thresholds, not {}",
            thresholds.len()
        ));
    }
    if thresholds.windows(2).any(|pair| pair[0] >= pair[1]) {
        return Err(format!(
            "give the thresholds in ascending order, such as 100ms,2s,10s, not {text:?}"
        ));
    }
    Ok(thresholds)
}

/// A `KEY=VALUE` pair of `--expect`, whose key names an environment field.
pub fn parse_expect(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("give KEY=VALUE, not {text:?}"))?;
    match environment::key(key) {
        Some(_) => Ok((key.to_string(), value.to_string())),
        None => Err(format!(
            "unknown key {key:?}; the keys are: {}",
            environment::key_names()
        )),
    }
}

/// A percentage above 0 and at most 100, such as `5` or `5%`.
pub fn parse_percent(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim_end();
    match number.parse::<f64>() {
        Ok(pct) if pct > 0.0 && pct <= 100.0 => Ok(pct),
        _ => Err(format!(
            "give a percentage above 0 and at most 100, such as 5 or 5%, not {text:?}"
        )),
    }
}

/// A CPU list such as `0`, `1-3` or `0,2`.
pub fn parse_cpu_list(text: &str) -> Result<CpuList, String> {
    text.parse()
        .map_err(|e: crate::system::cpulist::CpuListError| e.to_string())
}

/// `cpus` of `option`, when every one is online (unchecked when the
/// online CPUs are not known).
pub fn check_online(
    option: &str,
    cpus: Option<CpuList>,
    online: Option<&CpuList>,
) -> Result<Option<CpuList>, UsageError> {
    match (cpus, online) {
        (Some(cpus), Some(online)) => cpus
            .within(online)
            .map(Some)
            .map_err(|e| UsageError::new(format!("{option}: {e}"))),
        (cpus, _) => Ok(cpus),
    }
}

/// `value` when `ok`, else the usage error `message` says.
pub fn check<T>(ok: bool, value: T, message: impl FnOnce() -> String) -> Result<T, UsageError> {
    if ok {
        Ok(value)
    } else {
        Err(UsageError::new(message()))
    }
}

/// `seconds` of `option` in ns, when from `min` to a day.
pub fn seconds_to_ns(option: &str, seconds: f64, min: f64) -> Result<u64, UsageError> {
    let ok = seconds.is_finite() && seconds >= min && seconds <= 86_400.0;
    check(ok, (seconds * 1e9).round() as u64, || {
        format!("{option} takes seconds from {min} to 86400, not {seconds}")
    })
}

/// `nice` of `option`, when a nice value.
pub fn check_nice(option: &str, nice: i32) -> Result<i32, UsageError> {
    check((-20..=19).contains(&nice), nice, || {
        format!("{option} takes a nice value from -20 to 19, not {nice}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary_and_more_than_zero() {
        assert_eq!(parse_bytes("4G"), Ok(4 << 30));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert!(parse_bytes("0").unwrap_err().contains("more than 0"));
        assert!(parse_bytes("lots").unwrap_err().contains("512M or 4G"));
    }

    #[test]
    fn expect_takes_known_keys_only() {
        assert_eq!(
            parse_expect("governor=performance"),
            Ok(("governor".to_string(), "performance".to_string()))
        );
        assert!(parse_expect("governor").unwrap_err().contains("KEY=VALUE"));
        assert!(parse_expect("colour=blue")
            .unwrap_err()
            .contains("unknown key"));
    }

    #[test]
    fn percentages_take_an_optional_sign_and_stay_in_range() {
        assert_eq!(parse_percent("5"), Ok(5.0));
        assert_eq!(parse_percent("2.5%"), Ok(2.5));
        for bad in ["0", "101", "-3", "five", "NaN"] {
            assert!(
                parse_percent(bad).unwrap_err().contains("such as 5"),
                "{bad}"
            );
        }
    }

    #[test]
    fn cpu_lists_parse_and_are_checked_against_the_online_cpus() {
        assert_eq!(parse_cpu_list("1-3").unwrap().to_string(), "1-3");
        assert!(parse_cpu_list("one")
            .unwrap_err()
            .contains("not a CPU list"));
        let online = parse_cpu_list("0-1").ok();
        let cpus = parse_cpu_list("0,1").ok();
        let checked = check_online("--load-cpus", cpus.clone(), online.as_ref());
        assert_eq!(checked.unwrap(), cpus);
        let err = check_online("--load-cpus", parse_cpu_list("2").ok(), online.as_ref())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "--load-cpus: CPU 2 is not online (the online CPUs are 0-1)"
        );
        assert_eq!(
            check_online("--probe-cpus", None, online.as_ref()).unwrap(),
            None
        );
        let unknown = check_online("--probe-cpus", parse_cpu_list("7").ok(), None);
        assert_eq!(unknown.unwrap(), parse_cpu_list("7").ok());
    }

    #[test]
    fn ranges_name_the_option() {
        assert_eq!(seconds_to_ns("-t", 1.5, 0.1).unwrap(), 1_500_000_000);
        let err = seconds_to_ns("-t", 0.0, 0.1).unwrap_err().to_string();
        assert_eq!(err, "-t takes seconds from 0.1 to 86400, not 0");
        assert!(check_nice("-B", 20).is_err());
        assert_eq!(check_nice("-B", -20).unwrap(), -20);
    }

    #[test]
    fn thresholds_are_ascending_durations() {
        assert_eq!(
            parse_thresholds("100ms,2s,10s"),
            Ok(vec![100_000_000, 2_000_000_000, 10_000_000_000])
        );
        assert_eq!(parse_thresholds(" 1s "), Ok(vec![1_000_000_000]));
        for (bad, says) in [
            ("", "duration"),
            ("2s,100ms", "ascending"),
            ("1s,1s", "ascending"),
            ("1ms,2ms,3ms,4ms", "at most 3"),
            ("0s", "more than 0"),
            ("fast", "such as 20ms"),
        ] {
            let err = parse_thresholds(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
