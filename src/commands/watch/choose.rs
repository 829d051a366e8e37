//! Which canaries a watch runs, from `--canary`'s names: one of the
//! registry's (`canary::CANARIES`), `custom:PCT@INTERVAL` (the `custom`
//! probe's periodic task of the user's shape) or `rtapp:SPEC` (a canary
//! per timed task of an rt-app workload, `super::rtapp`); and each one's
//! threshold, its default or `--threshold`'s.

use super::canary::{self, Beat, CanarySetting, CanaryWork, CANARIES};
use super::rtapp;
use crate::exit::UsageError;
use crate::sim::CustomShape;

/// How `--canary` names a custom periodic canary.
const CUSTOM: &str = "custom:";

/// The canaries `names` name, each with its threshold: its default, or the
/// one `thresholds` (`NAME=DURATION`) gives it; `rtapp:SPEC=DURATION`
/// sets every canary of that workload.
pub fn canary_settings(
    names: &[String],
    thresholds: &[(String, u64)],
) -> Result<Vec<CanarySetting>, UsageError> {
    let mut settings: Vec<CanarySetting> = Vec::new();
    for name in names {
        let named = match (name.strip_prefix(rtapp::PREFIX), name.strip_prefix(CUSTOM)) {
            (Some(spec), _) => rtapp::settings(spec)?,
            (None, Some(shape)) => vec![custom(name, shape)?],
            (None, None) => vec![registered(name)?],
        };
        for setting in named {
            if settings.iter().any(|s| s.name == setting.name) {
                return Err(UsageError::new(format!(
                    "canary {:?} is named twice",
                    setting.name
                )));
            }
            settings.push(setting);
        }
    }
    for (name, ns) in thresholds {
        let mut set = settings
            .iter_mut()
            .filter(|s| applies(name, &s.name))
            .peekable();
        if set.peek().is_none() {
            let running: Vec<&str> = settings.iter().map(|s| s.name.as_str()).collect();
            return Err(UsageError::new(format!(
                "--threshold {name}=...: {name:?} is not a canary this watch runs ({})",
                running.join(", ")
            )));
        }
        set.for_each(|s| s.threshold_ns = *ns);
    }
    Ok(settings)
}

/// Whether `--threshold`'s `name` is canary `canary`'s, or its rt-app
/// workload's.
fn applies(name: &str, canary: &str) -> bool {
    let workload = name.starts_with(rtapp::PREFIX)
        && canary
            .strip_prefix(name)
            .is_some_and(|task| task.starts_with('/'));
    canary == name || workload
}

/// The registry's canary `name`.
fn registered(name: &str) -> Result<CanarySetting, UsageError> {
    let def = canary::find(name).ok_or_else(|| {
        let known: Vec<&str> = CANARIES.iter().map(|c| c.name).collect();
        UsageError::new(format!(
            "unknown canary {name:?}; canaries: {}, custom:PCT@INTERVAL, rtapp:FILE or rtapp:NAME",
            known.join(", ")
        ))
    })?;
    Ok(CanarySetting {
        name: def.name.to_string(),
        period_ns: def.beat.period_ns(),
        threshold_ns: def.threshold_ns,
        work: CanaryWork::Beat(def.beat),
    })
}

/// `custom:PCT@INTERVAL` (`name`, `shape` what follows `custom:`): PCT % of
/// a CPU every INTERVAL, as the `custom` probe's `-C PCT -I INTERVAL`;
/// its default threshold is half its period, at least 1 ms.
fn custom(name: &str, shape: &str) -> Result<CanarySetting, UsageError> {
    let bad = |why: String| UsageError::new(format!("--canary {name}: {why}"));
    let (pct, interval) = shape
        .split_once('@')
        .ok_or_else(|| bad("give custom:PCT@INTERVAL, such as custom:30@2ms".to_string()))?;
    let pct: f64 = pct
        .trim_end_matches('%')
        .parse()
        .ok()
        .filter(|p| CustomShape::CPU_PCT.contains(p))
        .ok_or_else(|| {
            bad(format!(
                "the CPU share is a percentage from 0 to 100, not {pct:?}"
            ))
        })?;
    let interval_us = humantime::parse_duration(interval)
        .ok()
        .and_then(|d| u64::try_from(d.as_micros()).ok())
        .filter(|us| CustomShape::INTERVAL_US.contains(us))
        .ok_or_else(|| bad(format!("the interval is 100us to 1s, not {interval:?}")))?;
    let shape = CustomShape {
        cpu_pct: pct,
        interval_us,
    }
    .periodic();
    Ok(CanarySetting {
        name: name.to_string(),
        period_ns: shape.period_ns,
        threshold_ns: canary::default_threshold_ns(shape.period_ns),
        work: CanaryWork::Beat(Beat::Periodic(shape)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::periodic::{CpuDemand, PeriodicShape};

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn thresholds_go_to_the_canaries_named_and_bad_names_are_refused() {
        let both = names(&["timer", "frame"]);
        let set = canary_settings(&both, &[("frame".into(), 20_000_000)]).unwrap();
        assert_eq!(
            set[0].threshold_ns,
            canary::find("timer").unwrap().threshold_ns
        );
        assert_eq!(set[1].threshold_ns, 20_000_000);
        let e = canary_settings(&both, &[("audio".into(), 1)]).unwrap_err();
        assert!(
            e.to_string().contains("not a canary this watch runs"),
            "{e}"
        );
        let e = canary_settings(&names(&["mouse"]), &[]).unwrap_err();
        assert!(e.to_string().contains("unknown canary \"mouse\""), "{e}");
        assert!(canary_settings(&names(&["timer", "timer"]), &[]).is_err());
    }

    #[test]
    fn a_threshold_names_an_rtapp_task_or_its_whole_workload() {
        let list = names(&["timer", "rtapp:compositor"]);
        let set =
            canary_settings(&list, &[("rtapp:compositor/compositor".into(), 3_000_000)]).unwrap();
        let named: Vec<(&str, u64)> = set
            .iter()
            .map(|s| (s.name.as_str(), s.threshold_ns))
            .collect();
        assert_eq!(
            named,
            [
                ("timer", 2_000_000),
                ("rtapp:compositor/client", 8_333_500),
                ("rtapp:compositor/compositor", 3_000_000)
            ]
        );
        let all = canary_settings(&list, &[("rtapp:compositor".into(), 9_000_000)]).unwrap();
        assert!(all[1..].iter().all(|s| s.threshold_ns == 9_000_000));
        assert_eq!(all[0].threshold_ns, 2_000_000);
        // A prefix of a task's name is not its workload's.
        assert!(canary_settings(&list, &[("rtapp:compositor/comp".into(), 1)]).is_err());
        assert!(canary_settings(&list, &[("rtapp:comp".into(), 1)]).is_err());
        let twice = names(&["rtapp:compositor", "rtapp:compositor"]);
        let e = canary_settings(&twice, &[]).unwrap_err().to_string();
        assert!(e.contains("named twice"), "{e}");
    }

    #[test]
    fn a_custom_canary_takes_a_share_and_an_interval() {
        let set = canary_settings(&names(&["custom:30@2ms"]), &[]).unwrap();
        let shape = PeriodicShape {
            period_ns: 2_000_000,
            cpu: CpuDemand::Share(30.0),
        };
        assert_eq!(set[0].work, CanaryWork::Beat(Beat::Periodic(shape)));
        assert_eq!(
            (set[0].period_ns, set[0].threshold_ns),
            (2_000_000, 1_000_000)
        );
        let slow = canary_settings(&names(&["custom:5%@100ms"]), &[]).unwrap();
        assert_eq!(slow[0].threshold_ns, 50_000_000);
        for bad in [
            "custom:30",
            "custom:130@2ms",
            "custom:x@2ms",
            "custom:30@2",
            "custom:30@50us",
            "custom:30@2s",
        ] {
            let e = canary_settings(&names(&[bad]), &[])
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!("--canary {bad}: ")) && !e.contains('\n'),
                "{e}"
            );
        }
    }
}
