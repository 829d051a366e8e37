//! One event of a phase: its key matched by prefix as rt-app matches it
//! (`runtime` before `run`, so `run0`, `run-1` and `timer_b` work), its
//! value read as rt-app takes it. The events feelbench does not run are
//! refused; keys rt-app silently ignores are named ([`ignored_by_rtapp`]).

use super::json::{Entry, Value};
use super::model::{Event, TimerMode};

/// Event keys as rt-app matches them: by prefix, in this order (`runtime`
/// before `run`, `memrun` before `mem`).
const EVENT_PREFIXES: [&str; 20] = [
    "runtime", "run", "sleep", "timer", "memrun", "mem", "iorun", "lock", "unlock", "wait",
    "signal", "broad", "sync", "barrier", "suspend", "resume", "sem_post", "sem_wait", "yield",
    "fork",
];

/// The event keys feelbench runs, for error messages.
const EVENTS_SUPPORTED: &str = "run, runtime, sleep, timer, barrier, suspend, resume, lock, unlock, wait, signal, broad, sync, fork, mem, iorun, yield (each may carry a suffix: run1, run-2)";

/// Why rt-app 1.0 ignores the key `key` of a phase (it matches no event
/// and is no phase key, or is a task key written in a phase); `None` for
/// an event key.
pub fn ignored_by_rtapp(key: &str) -> Option<String> {
    if key == "delay" {
        return Some(
            "delay is a task key, not an event: rt-app ignores it here (use sleep)".into(),
        );
    }
    match EVENT_PREFIXES.iter().any(|p| key.starts_with(p)) {
        true => None,
        false => Some(format!(
            "unknown event, which rt-app ignores (events are {EVENTS_SUPPORTED})"
        )),
    }
}

/// The event of `entry` in a phase of task `task` (`tasks`: every task's
/// name, which `fork` may start); else what is wrong with it.
pub fn event(entry: &Entry, task: &str, tasks: &[String]) -> Result<Event, String> {
    let kind = match entry.key.as_str() {
        "delay" => "delay",
        key => EVENT_PREFIXES
            .iter()
            .find(|p| key.starts_with(*p))
            .copied()
            .unwrap_or(""),
    };
    let value = &entry.value;
    Ok(match kind {
        "runtime" => Event::Runtime { us: amount(value)? },
        "run" => Event::Run { us: amount(value)? },
        "sleep" => Event::Sleep { us: amount(value)? },
        "timer" => timer(value)?,
        "mem" => Event::Mem {
            bytes: amount(value)?,
        },
        "iorun" => Event::Iorun {
            bytes: amount(value)?,
        },
        "lock" => Event::Lock {
            mutex: name(value)?,
        },
        "unlock" => Event::Unlock {
            mutex: name(value)?,
        },
        "signal" => Event::Signal { cond: name(value)? },
        "broad" => Event::Broad { cond: name(value)? },
        "barrier" => Event::Barrier { name: name(value)? },
        "resume" => Event::Resume { name: name(value)? },
        "fork" => {
            let forked = name(value)?;
            if !tasks.contains(&forked) {
                return Err(format!("names {forked:?}, which is not a task of the file"));
            }
            Event::Fork { task: forked }
        }
        "suspend" => Event::Suspend {
            name: match value {
                Value::Null => task.to_string(),
                _ => name(value)?,
            },
        },
        "wait" => {
            let (cond, mutex) = ref_mutex(value)?;
            Event::Wait { cond, mutex }
        }
        "sync" => {
            let (cond, mutex) = ref_mutex(value)?;
            Event::Sync { cond, mutex }
        }
        "yield" => Event::Yield,
        "memrun" => return Err("memrun is not supported (use mem)".into()),
        "sem_post" | "sem_wait" => {
            return Err("semaphores (sem_post/sem_wait) are not supported".into())
        }
        _ => return Err(ignored_by_rtapp(&entry.key).unwrap_or_else(|| "unknown event".into())),
    })
}

/// Microseconds or bytes: a whole number, at least 0.
fn amount(value: &Value) -> Result<u64, String> {
    match value.integer() {
        Some(n) if n >= 0 => Ok(n as u64),
        _ => Err("must be a whole number, at least 0".into()),
    }
}

/// A reference's name.
fn name(value: &Value) -> Result<String, String> {
    match value {
        Value::String(s) if !s.is_empty() => Ok(s.clone()),
        other => Err(format!("must be a name (a string), not {}", other.kind())),
    }
}

fn timer(value: &Value) -> Result<Event, String> {
    let Value::Object(fields) = value else {
        return Err("must be { \"ref\": NAME, \"period\": MICROSECONDS, \"mode\": \"relative\"|\"absolute\" }".into());
    };
    let (mut name, mut period_us, mut mode) = (None, None, TimerMode::Relative);
    for f in fields {
        match (f.key.as_str(), &f.value) {
            ("ref", Value::String(s)) if !s.is_empty() => name = Some(s.clone()),
            ("period", v) => match v.integer() {
                Some(n) if n > 0 => period_us = Some(n as u64),
                _ => return Err("period must be microseconds above 0".into()),
            },
            ("mode", Value::String(m)) if m == "relative" => mode = TimerMode::Relative,
            ("mode", Value::String(m)) if m == "absolute" => mode = TimerMode::Absolute,
            (key, _) => {
                return Err(format!(
                    "{key:?} cannot be used in a timer (ref: a name, period: microseconds, mode: relative or absolute)"
                ))
            }
        }
    }
    match (name, period_us) {
        (Some(name), Some(period_us)) => Ok(Event::Timer {
            name,
            period_us,
            mode,
        }),
        (None, _) => Err("a timer needs a \"ref\" (a name; \"unique\" for one per thread)".into()),
        (_, None) => Err("a timer needs a \"period\" in microseconds".into()),
    }
}

/// `{ "ref": CONDITION, "mutex": MUTEX }` of `wait` and `sync`.
fn ref_mutex(value: &Value) -> Result<(String, String), String> {
    let usage = || "must be { \"ref\": CONDITION, \"mutex\": MUTEX }".to_string();
    let Value::Object(fields) = value else {
        return Err(usage());
    };
    let (mut cond, mut mutex) = (None, None);
    for f in fields {
        match (f.key.as_str(), &f.value) {
            ("ref", Value::String(s)) if !s.is_empty() => cond = Some(s.clone()),
            ("mutex", Value::String(s)) if !s.is_empty() => mutex = Some(s.clone()),
            _ => return Err(usage()),
        }
    }
    cond.zip(mutex).ok_or_else(usage)
}
