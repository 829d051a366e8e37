//! THROW-AWAY stand-in for helper A's parser (replaced at the merge): reads
//! the strict-JSON subset of rt-app's grammar the executor's tests use,
//! keys in file order (repeated keys kept), events matched by prefix. No
//! comments, no shipped workloads, no line numbers.

use super::model::{Event, Phase, Policy, Sched, Task, TimerMode, Workload};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use sha2::{Digest, Sha256};
use std::fmt;

/// What is wrong with a workload file, in one line.
#[derive(Debug, thiserror::Error)]
#[error("rt-app file {source_name}: {what}")]
pub struct RtappError {
    source_name: String,
    what: String,
}

/// Reads the workload `spec` (a file path).
pub fn load(spec: &str) -> Result<Workload, RtappError> {
    let fail = |what: String| RtappError {
        source_name: spec.to_string(),
        what,
    };
    let text = std::fs::read_to_string(spec).map_err(|e| fail(format!("cannot read it: {e}")))?;
    let json: Json = serde_json::from_str(&text).map_err(|e| fail(e.to_string()))?;
    let mut workload = workload(&json).map_err(fail)?;
    workload.source = spec.to_string();
    let digest = Sha256::digest(text.as_bytes());
    workload.sha256 = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(workload)
}

/// JSON with objects kept in order.
#[derive(Debug, Clone)]
enum Json {
    /// `null`, `true` or `false`: no event or setting takes them here.
    Other,
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Json, E> {
                Ok(Json::Other)
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Num(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Num(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Num(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Json, E> {
                Ok(Json::Str(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = a.next_element()? {
                    out.push(v);
                }
                Ok(Json::Arr(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Json, A::Error> {
                let mut out = Vec::new();
                while let Some(kv) = a.next_entry()? {
                    out.push(kv);
                }
                Ok(Json::Obj(out))
            }
        }
        d.deserialize_any(V)
    }
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(kv) => kv.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn num(&self) -> Option<f64> {
        match self {
            Json::Num(n) => Some(*n),
            _ => None,
        }
    }

    fn text(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }
}

fn workload(json: &Json) -> Result<Workload, String> {
    let global = json.get("global");
    let duration_s = global
        .and_then(|g| g.get("duration"))
        .and_then(Json::num)
        .filter(|&d| d > 0.0);
    let default_policy = match global.and_then(|g| g.get("default_policy")) {
        Some(p) => policy(p)?,
        None => Policy::SchedOther,
    };
    let Some(Json::Obj(tasks)) = json.get("tasks") else {
        return Err("no \"tasks\" object".to_string());
    };
    let tasks = tasks
        .iter()
        .map(|(name, body)| task(name, body))
        .collect::<Result<_, _>>()?;
    Ok(Workload {
        source: String::new(),
        sha256: String::new(),
        duration_s,
        default_policy,
        tasks,
        ignored: Vec::new(),
    })
}

fn policy(json: &Json) -> Result<Policy, String> {
    Ok(match json.text().unwrap_or("") {
        "SCHED_OTHER" => Policy::SchedOther,
        "SCHED_BATCH" => Policy::SchedBatch,
        "SCHED_IDLE" => Policy::SchedIdle,
        "SCHED_FIFO" => Policy::SchedFifo,
        "SCHED_RR" => Policy::SchedRr,
        other => return Err(format!("unknown policy '{other}'")),
    })
}

/// The scheduling keys of a task or phase.
fn sched(body: &Json) -> Result<Sched, String> {
    Ok(Sched {
        policy: body.get("policy").map(policy).transpose()?,
        priority: body.get("priority").and_then(Json::num).map(|n| n as i32),
        cpus: match body.get("cpus") {
            Some(Json::Arr(a)) => {
                Some(a.iter().filter_map(Json::num).map(|n| n as usize).collect())
            }
            Some(Json::Num(n)) => Some(vec![*n as usize]),
            _ => None,
        },
    })
}

fn task(name: &str, body: &Json) -> Result<Task, String> {
    let count = |key: &str| body.get(key).and_then(Json::num);
    let phases = match body.get("phases") {
        Some(Json::Obj(phases)) => phases
            .iter()
            .map(|(p, b)| phase(name, p, b))
            .collect::<Result<_, _>>()?,
        _ => vec![phase(name, "main", body)?],
    };
    Ok(Task {
        name: name.to_string(),
        instances: count("instance").unwrap_or(1.0) as u32,
        delay_us: count("delay").unwrap_or(0.0) as u64,
        loops: count("loop").filter(|&n| n >= 0.0).map(|n| n as u64),
        sched: sched(body)?,
        phases,
    })
}

/// Keys of a task or phase that are not events.
const NOT_EVENTS: &[&str] = &[
    "instance", "loop", "delay", "policy", "priority", "cpus", "phases",
];

fn phase(task: &str, name: &str, body: &Json) -> Result<Phase, String> {
    let Json::Obj(keys) = body else {
        return Err(format!("task {task}: phase {name} is not an object"));
    };
    let events = keys
        .iter()
        .filter(|(k, _)| !NOT_EVENTS.contains(&k.as_str()))
        .map(|(k, v)| event(k, v).map_err(|e| format!("task {task} phase {name}: {e}")))
        .collect::<Result<_, _>>()?;
    let in_phases = name != "main";
    Ok(Phase {
        name: name.to_string(),
        loops: match in_phases {
            true => body.get("loop").and_then(Json::num).unwrap_or(1.0).max(1.0) as u64,
            false => 1,
        },
        sched: match in_phases {
            true => sched(body)?,
            false => Sched::default(),
        },
        events,
    })
}

fn event(key: &str, value: &Json) -> Result<Event, String> {
    let us = || {
        value
            .num()
            .map(|n| n.max(0.0) as u64)
            .ok_or(format!("{key} takes a number"))
    };
    let name = || {
        value
            .text()
            .map(str::to_string)
            .ok_or(format!("{key} takes a name"))
    };
    Ok(match key {
        k if k.starts_with("runtime") => Event::Runtime { us: us()? },
        k if k.starts_with("run") => Event::Run { us: us()? },
        k if k.starts_with("sleep") => Event::Sleep { us: us()? },
        k if k.starts_with("timer") => Event::Timer {
            name: value
                .get("ref")
                .and_then(Json::text)
                .unwrap_or("unique")
                .to_string(),
            period_us: value.get("period").and_then(Json::num).unwrap_or(0.0) as u64,
            mode: match value.get("mode").and_then(Json::text) {
                Some("relative") => TimerMode::Relative,
                _ => TimerMode::Absolute,
            },
        },
        k if k.starts_with("barrier") => Event::Barrier { name: name()? },
        k if k.starts_with("suspend") => Event::Suspend { name: name()? },
        k if k.starts_with("resume") => Event::Resume { name: name()? },
        k if k.starts_with("lock") => Event::Lock { mutex: name()? },
        k if k.starts_with("unlock") => Event::Unlock { mutex: name()? },
        k if k.starts_with("fork") => Event::Fork { task: name()? },
        k if k.starts_with("mem") => Event::Mem { bytes: us()? },
        k if k.starts_with("iorun") => Event::Iorun { bytes: us()? },
        k if k.starts_with("yield") => Event::Yield,
        other => return Err(format!("unknown event '{other}'")),
    })
}
