//! rt-app's grammar over the lenient reader (`json`): `global`, `tasks`,
//! their `phases` and events, as rt-app reads them (event keys matched
//! by prefix, `runtime` before `run`; loops defaulting as rt-app's do).
//! The grammar is rt-app 1.0's with what later versions added and feelbench
//! runs: `fork`, `instance` 0, `barrier`, and `policy`/`priority` in a phase.
//! A key rt-app ignores silently is kept out and named with its file and
//! line ([`Workload::warnings`]), or refused when strict; everything
//! feelbench does not run (SCHED_DEADLINE, uclamp, ...) is refused: each
//! error names the file, the line, the task and the key.

use super::events;
use super::json::{self, Entry, Value};
use super::model::{Event, Ignored, Phase, Policy, Sched, Task, Workload, MEM_BUFFER_BYTES};
use super::shipped;
use sha2::{Digest, Sha256};
use std::path::Path;

/// A workload that cannot be read, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RtappError {
    /// Neither a shipped workload nor a file that can be read.
    #[error("cannot read rt-app workload {file}: {problem} (give a file or one of: {})", shipped::names().join(", "))]
    Read { file: String, problem: String },
    /// Not JSON even as rt-app reads it.
    #[error("{file}:{line}: not rt-app's JSON: {message}")]
    Syntax {
        file: String,
        line: usize,
        message: String,
    },
    /// A key that cannot be used where it is.
    #[error("{file}:{line}: {place}: {key}: {message}")]
    Key {
        file: String,
        line: usize,
        /// `global`, `task NAME`, `task NAME phase NAME`.
        place: String,
        key: String,
        message: String,
    },
}

/// The workload `spec` names: a shipped workload's name (`audio-chain`) or
/// a file's path; `strict`: a key rt-app ignores is refused.
pub fn load(spec: &str, strict: bool) -> Result<Workload, RtappError> {
    if let Some(text) = shipped::text(spec) {
        return parse(spec, text, strict);
    }
    let text = std::fs::read_to_string(Path::new(spec)).map_err(|e| RtappError::Read {
        file: spec.to_string(),
        problem: e.to_string(),
    })?;
    parse(spec, &text, strict)
}

/// The workload of `text`, read from `source` (named in errors); a key
/// rt-app ignores is left out and named in [`Workload::warnings`], or
/// refused when `strict`.
pub fn parse(source: &str, text: &str, strict: bool) -> Result<Workload, RtappError> {
    let root = json::parse(text).map_err(|e| RtappError::Syntax {
        file: source.to_string(),
        line: e.line,
        message: e.message,
    })?;
    let mut reader = Grammar {
        file: source.to_string(),
        ignored: Vec::new(),
        task_names: Vec::new(),
        strict,
    };
    let mut workload = reader.workload(&root)?;
    workload.sha256 = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    workload.ignored = reader.ignored;
    Ok(workload)
}

/// Keys of `global` feelbench reads and records without acting on
/// (`io_device` too: `iorun` writes the null device, rt-app's default,
/// whatever the file names).
const GLOBAL_RECORDED: [&str; 11] = [
    "calibration",
    "logdir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "lock_pages",
    "pi_enabled",
    "frag",
    "io_device",
    "cumulative_slack",
];

/// The largest `mem_buffer_size` feelbench takes, per thread.
const MAX_MEM_BUFFER_BYTES: u64 = 64 << 20;

/// The most threads one task may start at once.
const MAX_INSTANCES: u64 = 1024;

/// The place of a top-level key in errors.
const TOP: &str = "top level";

/// Why the pre-1.0 grammar (doc/examples/merge) is refused.
const PRE_1_0: &str = "pre-1.0 rt-app grammar (exec/period/deadline/resources/lock_order) is not supported: use run, timer and phases";

/// Keys of a task or phase that feelbench refuses, with why.
const REFUSED: [(&str, &str); 12] = [
    ("dl-runtime", "SCHED_DEADLINE is not supported"),
    ("dl-period", "SCHED_DEADLINE is not supported"),
    ("dl-deadline", "SCHED_DEADLINE is not supported"),
    ("util_min", "uclamp (util_min/util_max) is not supported"),
    ("util_max", "uclamp (util_min/util_max) is not supported"),
    (
        "taskgroup",
        "taskgroups (cgroup-v1 cpu controller) are not supported",
    ),
    ("nodes_membind", "NUMA memory binding is not supported"),
    ("exec", PRE_1_0),
    ("period", PRE_1_0),
    ("deadline", PRE_1_0),
    ("lock_order", PRE_1_0),
    ("resources", PRE_1_0),
];

/// Reads the grammar, collecting ignored keys.
struct Grammar {
    file: String,
    ignored: Vec<Ignored>,
    /// Every task's name, for `fork`.
    task_names: Vec<String>,
    /// Whether a key rt-app ignores is refused.
    strict: bool,
}

impl Grammar {
    fn fail(&self, entry: &Entry, place: &str, message: impl Into<String>) -> RtappError {
        RtappError::Key {
            file: self.file.clone(),
            line: entry.line,
            place: place.to_string(),
            key: entry.key.clone(),
            message: message.into(),
        }
    }

    fn ignore(&mut self, entry: &Entry, place: &str) {
        self.ignored.push(Ignored {
            key: entry.key.clone(),
            place: place.to_string(),
            line: entry.line,
            unknown: None,
        });
    }

    /// A key rt-app ignores (`why`): left out and named, or refused when
    /// strict.
    fn unknown(&mut self, entry: &Entry, place: &str, why: String) -> Result<(), RtappError> {
        if self.strict {
            return Err(self.fail(entry, place, format!("{why} (refused: strict)")));
        }
        self.ignored.push(Ignored {
            key: entry.key.clone(),
            place: place.to_string(),
            line: entry.line,
            unknown: Some(why),
        });
        Ok(())
    }

    fn workload(&mut self, root: &Value) -> Result<Workload, RtappError> {
        let Value::Object(entries) = root else {
            return Err(RtappError::Syntax {
                file: self.file.clone(),
                line: 1,
                message: format!("the file is {}, not an object", root.kind()),
            });
        };
        let mut workload = Workload {
            source: self.file.clone(),
            sha256: String::new(),
            duration_s: None,
            default_policy: Policy::SchedOther,
            mem_buffer_bytes: MEM_BUFFER_BYTES,
            tasks: Vec::new(),
            ignored: Vec::new(),
        };
        let mut tasks = None;
        for entry in entries {
            match entry.key.as_str() {
                "global" => self.global(entry, &mut workload)?,
                "tasks" => tasks = Some(entry),
                "resources" => return Err(self.fail(entry, TOP, PRE_1_0)),
                _ => self.unknown(
                    entry,
                    TOP,
                    "unknown top-level key, which rt-app ignores (it reads tasks and global)"
                        .into(),
                )?,
            }
        }
        let Some(tasks) = tasks else {
            return Err(RtappError::Key {
                file: self.file.clone(),
                line: 1,
                place: TOP.into(),
                key: "tasks".into(),
                message: "missing: an rt-app file needs at least one task".into(),
            });
        };
        let Value::Object(task_entries) = &tasks.value else {
            return Err(self.fail(tasks, TOP, "must be an object of tasks"));
        };
        if task_entries.is_empty() {
            return Err(self.fail(tasks, TOP, "has no task"));
        }
        self.task_names = task_entries.iter().map(|e| e.key.clone()).collect();
        for entry in task_entries {
            if workload.tasks.iter().any(|t| t.name == entry.key) {
                return Err(self.fail(
                    entry,
                    &format!("task {}", entry.key),
                    "a second task of this name",
                ));
            }
            let task = self.task(entry)?;
            workload.tasks.push(task);
        }
        Ok(workload)
    }

    fn global(&mut self, global: &Entry, workload: &mut Workload) -> Result<(), RtappError> {
        let Value::Object(entries) = &global.value else {
            return Err(self.fail(global, TOP, "must be an object"));
        };
        for entry in entries {
            match entry.key.as_str() {
                "duration" => {
                    let seconds = entry
                        .value
                        .number()
                        .ok_or_else(|| self.fail(entry, "global", "must be a number of seconds"))?;
                    workload.duration_s = match seconds {
                        -1.0 => None,
                        s if s > 0.0 => Some(s),
                        _ => {
                            return Err(self.fail(
                                entry,
                                "global",
                                "must be seconds above 0, or -1 (until the tasks end)",
                            ))
                        }
                    };
                }
                "default_policy" => {
                    workload.default_policy = self.policy(entry, "global")?;
                }
                "mem_buffer_size" => match self.count(entry, "global", 1)? {
                    bytes if bytes <= MAX_MEM_BUFFER_BYTES => workload.mem_buffer_bytes = bytes,
                    _ => {
                        return Err(self.fail(
                            entry,
                            "global",
                            format!(
                                "at most {} MiB per thread (feelbench's bound; rt-app's default is 4 MiB)",
                                MAX_MEM_BUFFER_BYTES >> 20
                            ),
                        ))
                    }
                },
                key if GLOBAL_RECORDED.contains(&key) => self.ignore(entry, "global"),
                _ => self.unknown(
                    entry,
                    "global",
                    format!(
                        "unknown key, which rt-app ignores (global has duration, default_policy, mem_buffer_size, {})",
                        GLOBAL_RECORDED.join(", ")
                    ),
                )?,
            }
        }
        Ok(())
    }

    fn task(&mut self, entry: &Entry) -> Result<Task, RtappError> {
        let place = format!("task {}", entry.key);
        let Value::Object(entries) = &entry.value else {
            return Err(self.fail(entry, &place, "a task must be an object"));
        };
        let mut task = Task {
            name: entry.key.clone(),
            instances: 1,
            delay_us: 0,
            loops: None,
            sched: Sched::default(),
            phases: Vec::new(),
        };
        let phases = entries.iter().find(|e| e.key == "phases");
        let mut loop_value = None;
        // The mutexes the task's events hold so far, in order.
        let mut held = Vec::new();
        let mut events = Vec::new();
        for e in entries {
            match e.key.as_str() {
                "instance" => match self.count(e, &place, 0)? {
                    n if n <= MAX_INSTANCES => task.instances = n as u32,
                    _ => {
                        return Err(self.fail(
                            e,
                            &place,
                            format!("at most {MAX_INSTANCES} threads of one task"),
                        ))
                    }
                },
                "delay" => task.delay_us = self.count(e, &place, 0)?,
                "loop" => loop_value = Some(self.loop_count(e, &place)?),
                "phases" => {}
                _ if self.sched_key(e, &place, &mut task.sched)? => {}
                _ if phases.is_some() => self.unknown(
                    e,
                    &place,
                    "not a task key, which rt-app ignores (a task with phases has instance, delay, loop, phases, policy, priority, cpus; events go in its phases)".into(),
                )?,
                _ => events.push(e),
            }
        }
        match phases {
            Some(phases) => {
                // With phases, the task's loop defaults to -1 (forever).
                task.loops = loop_value.flatten();
                let Value::Object(phase_entries) = &phases.value else {
                    return Err(self.fail(phases, &place, "must be an object of phases"));
                };
                if phase_entries.is_empty() {
                    return Err(self.fail(phases, &place, "has no phase"));
                }
                for p in phase_entries {
                    task.phases.push(self.phase(&task.name, p, &mut held)?);
                }
            }
            None => {
                // Without phases the task is its one phase, repeated
                // forever when `loop` is absent (rt-app 1.0 and master
                // alike), run `loop` times when it is given (master; 1.0
                // repeats it forever then too, `loop` times per round).
                task.loops = loop_value.flatten();
                let phase_events = self.events(&events, &task.name, &place, &mut held)?;
                if phase_events.is_empty() {
                    return Err(self.fail(entry, &place, "the task has no event and no phases"));
                }
                task.phases.push(Phase {
                    name: "main".into(),
                    loops: 1,
                    sched: Sched::default(),
                    events: phase_events,
                });
            }
        }
        Ok(task)
    }

    fn phase(
        &mut self,
        task: &str,
        entry: &Entry,
        held: &mut Vec<String>,
    ) -> Result<Phase, RtappError> {
        let place = format!("task {task} phase {}", entry.key);
        let Value::Object(entries) = &entry.value else {
            return Err(self.fail(entry, &place, "a phase must be an object"));
        };
        let mut phase = Phase {
            name: entry.key.clone(),
            loops: 1,
            sched: Sched::default(),
            events: Vec::new(),
        };
        let mut events = Vec::new();
        for e in entries {
            match e.key.as_str() {
                "loop" => match self.loop_count(e, &place)? {
                    Some(n) => phase.loops = n,
                    None => {
                        return Err(self.fail(
                            e,
                            &place,
                            "a phase's loop must be at least 1 (loop the task instead)",
                        ))
                    }
                },
                _ if self.sched_key(e, &place, &mut phase.sched)? => {}
                _ => events.push(e),
            }
        }
        phase.events = self.events(&events, task, &place, held)?;
        if phase.events.is_empty() {
            return Err(self.fail(entry, &place, "the phase has no event"));
        }
        Ok(phase)
    }

    /// Reads `entry` into `sched` when it is a scheduling key; refuses the
    /// keys feelbench does not run. Whether it was one.
    fn sched_key(
        &mut self,
        entry: &Entry,
        place: &str,
        sched: &mut Sched,
    ) -> Result<bool, RtappError> {
        match entry.key.as_str() {
            "policy" => sched.policy = Some(self.policy(entry, place)?),
            "priority" => {
                let n = entry
                    .value
                    .integer()
                    .ok_or_else(|| self.fail(entry, place, "must be an integer"))?;
                if !(-20..=99).contains(&n) {
                    return Err(self.fail(
                        entry,
                        place,
                        "must be a nice value (-20..19) or a real-time priority (1..99)",
                    ));
                }
                sched.priority = Some(n as i32);
            }
            "cpus" => sched.cpus = Some(self.cpus(entry, place)?),
            key => match REFUSED.iter().find(|(k, _)| *k == key) {
                Some((_, why)) => return Err(self.fail(entry, place, *why)),
                None => return Ok(false),
            },
        }
        Ok(true)
    }

    fn policy(&self, entry: &Entry, place: &str) -> Result<Policy, RtappError> {
        match &entry.value {
            Value::String(name) => match name.as_str() {
                "SCHED_OTHER" => Ok(Policy::SchedOther),
                "SCHED_BATCH" => Ok(Policy::SchedBatch),
                "SCHED_IDLE" => Ok(Policy::SchedIdle),
                "SCHED_FIFO" => Ok(Policy::SchedFifo),
                "SCHED_RR" => Ok(Policy::SchedRr),
                "SCHED_DEADLINE" => Err(self.fail(entry, place, "SCHED_DEADLINE is not supported")),
                other => Err(self.fail(
                    entry,
                    place,
                    format!("unknown policy {other:?} (SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR)"),
                )),
            },
            other => Err(self.fail(entry, place, format!("must be a policy name, not {}", other.kind()))),
        }
    }

    fn cpus(&self, entry: &Entry, place: &str) -> Result<Vec<usize>, RtappError> {
        let items = match &entry.value {
            Value::Array(items) => items.clone(),
            single @ Value::Number(_) => vec![single.clone()],
            other => {
                return Err(self.fail(
                    entry,
                    place,
                    format!("must be a list of CPU numbers, not {}", other.kind()),
                ))
            }
        };
        let cpus: Option<Vec<usize>> = items
            .iter()
            .map(|v| v.integer().and_then(|n| usize::try_from(n).ok()))
            .collect();
        match cpus {
            Some(cpus) if !cpus.is_empty() => Ok(cpus),
            _ => Err(self.fail(entry, place, "must be a non-empty list of CPU numbers")),
        }
    }

    /// A whole number at least `min`.
    fn count(&self, entry: &Entry, place: &str, min: i64) -> Result<u64, RtappError> {
        match entry.value.integer() {
            Some(n) if n >= min => Ok(n as u64),
            _ => Err(self.fail(
                entry,
                place,
                format!("must be a whole number, at least {min}"),
            )),
        }
    }

    /// A `loop`: `None` for -1 (forever), else at least 1.
    fn loop_count(&self, entry: &Entry, place: &str) -> Result<Option<u64>, RtappError> {
        match entry.value.integer() {
            Some(-1) => Ok(None),
            Some(n) if n >= 1 => Ok(Some(n as u64)),
            _ => Err(self.fail(
                entry,
                place,
                "must be a whole number at least 1, or -1 (forever)",
            )),
        }
    }

    /// The events of `entries`; `held`: the mutexes the task holds before
    /// them, after them on return. A `wait` or `sync` whose mutex the task
    /// does not hold is refused: rt-app's is `pthread_cond_wait` on it,
    /// undefined unless it is locked.
    fn events(
        &mut self,
        entries: &[&Entry],
        task: &str,
        place: &str,
        held: &mut Vec<String>,
    ) -> Result<Vec<Event>, RtappError> {
        let mut out = Vec::with_capacity(entries.len());
        for e in entries {
            if let Some(why) = events::ignored_by_rtapp(&e.key) {
                self.unknown(e, place, why)?;
                continue;
            }
            let event =
                events::event(e, task, &self.task_names).map_err(|m| self.fail(e, place, m))?;
            match &event {
                Event::Lock { mutex } => held.push(mutex.clone()),
                Event::Unlock { mutex } => held.retain(|m| m != mutex),
                Event::Wait { mutex, .. } | Event::Sync { mutex, .. } if !held.contains(mutex) => {
                    return Err(self.fail(
                        e,
                        place,
                        format!("its mutex {mutex:?} is not locked before it (rt-app waits with pthread_cond_wait, which needs the mutex held: add \"lock\": {mutex:?} before it)"),
                    ))
                }
                _ => {}
            }
            out.push(event);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rtapp::model::TimerMode;

    fn ok(text: &str) -> Workload {
        parse("w.json", text, false).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The error of `text` read strictly (a key rt-app ignores refused).
    fn refused(text: &str) -> String {
        parse("w.json", text, true).unwrap_err().to_string()
    }

    /// rt-app ignores a key it does not know: so does feelbench, naming
    /// it with its file and line, unless strict.
    #[test]
    fn keys_rt_app_ignores_are_warned_about_and_left_out() {
        let text = "{\"global\": {\n\"log_basedir\": \"x\"},\n\"tasks\": {\"t\": {\"phases\": {\"p\": {\n\"delay\": 5, \"run\": 1,\n\"frobnicate\": 2}}}}}";
        let w = ok(text);
        assert_eq!(w.tasks[0].phases[0].events, vec![Event::Run { us: 1 }]);
        let warnings = w.warnings();
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].starts_with("w.json:2: global: log_basedir: unknown key"));
        assert!(warnings[1].starts_with("w.json:4: task t phase p: delay: delay is a task key"));
        assert!(warnings[2].starts_with("w.json:5: task t phase p: frobnicate: unknown event"));
        assert!(warnings.iter().all(|w| !w.contains('\n')));
        let strict = refused(text);
        assert!(
            strict.starts_with("w.json:2: global: log_basedir: unknown key"),
            "{strict}"
        );
        assert!(ok(r#"{"tasks": {"t": {"run": 1, "sleep": 1}}}"#)
            .warnings()
            .is_empty());
    }

    #[test]
    fn events_keep_order_and_match_by_prefix() {
        let w = ok(r#"{ "tasks": { "t": {
            "loop": -1,
            "run0": 100, "runtime-1": 200, "run": 300,
            "timer_b": { "ref": "tick", "period": 1000, "mode": "absolute" },
            "sleep1": 50, "mem": 4096, "iorun": 10, "yield",
        } } }"#);
        let task = &w.tasks[0];
        assert_eq!(task.loops, None);
        assert_eq!(task.phases.len(), 1);
        assert_eq!(
            task.phases[0].events,
            vec![
                Event::Run { us: 100 },
                Event::Runtime { us: 200 },
                Event::Run { us: 300 },
                Event::Timer {
                    name: "tick".into(),
                    period_us: 1000,
                    mode: TimerMode::Absolute
                },
                Event::Sleep { us: 50 },
                Event::Mem { bytes: 4096 },
                Event::Iorun { bytes: 10 },
                Event::Yield,
            ]
        );
    }

    #[test]
    fn synchronisation_events_take_rt_apps_values() {
        let w = ok(r#"{ "tasks": { "a": {
            "suspend", "suspend": "x", "resume": "b", "barrier": "B",
            "lock": "m", "wait": { "ref": "q", "mutex": "m" }, "signal": "q",
            "broad": "q", "sync": { "ref": "q", "mutex": "m" }, "unlock": "m", "fork": "b",
            "timer": { "ref": "unique", "period": 10 }
        }, "b": { "instance": 0, "run": 1 } } }"#);
        let events = &w.tasks[0].phases[0].events;
        assert_eq!(events[0], Event::Suspend { name: "a".into() });
        assert_eq!(events[1], Event::Suspend { name: "x".into() });
        assert_eq!(
            events[5],
            Event::Wait {
                cond: "q".into(),
                mutex: "m".into()
            }
        );
        assert_eq!(events[10], Event::Fork { task: "b".into() });
        assert!(matches!(
            events[11],
            Event::Timer {
                mode: TimerMode::Relative,
                ..
            }
        ));
        assert_eq!(w.tasks[0].loops, None);
        assert_eq!(w.tasks[1].instances, 0);
    }

    #[test]
    fn loops_default_as_rt_apps() {
        let w = ok(r#"{ "tasks": {
            "phased": { "phases": { "p1": { "run": 1 }, "p2": { "loop": 3, "sleep": 1 } } },
            "forever": { "run": 1 },
            "thrice": { "loop": 3, "run": 1 }
        }, "global": { "duration": -1, "default_policy": "SCHED_FIFO", "logdir": "./" } }"#);
        let loops: Vec<_> = w.tasks.iter().map(|t| t.loops).collect();
        assert_eq!(loops, vec![None, None, Some(3)]);
        let phase_loops: Vec<_> = w.tasks[0].phases.iter().map(|p| p.loops).collect();
        assert_eq!(phase_loops, vec![1, 3]);
        assert_eq!(w.duration_s, None);
        assert_eq!(w.default_policy, Policy::SchedFifo);
        assert_eq!(
            w.ignored,
            vec![Ignored {
                key: "logdir".into(),
                place: "global".into(),
                line: 5,
                unknown: None,
            }]
        );
        assert!(w.warnings().is_empty());
        assert_eq!(w.sha256.len(), 64);
    }

    #[test]
    fn scheduling_is_read_at_task_and_phase() {
        let w = ok(
            r#"{ "tasks": { "t": { "policy": "SCHED_RR", "priority": 20, "cpus": [0, 1],
            "phases": { "p": { "cpus": [1], "priority": 30, "run": 1 } } } } }"#,
        );
        let t = &w.tasks[0];
        assert_eq!(t.sched.policy, Some(Policy::SchedRr));
        assert_eq!(t.sched.cpus, Some(vec![0, 1]));
        assert_eq!(t.phases[0].sched.priority, Some(30));
        assert_eq!(t.phases[0].sched.cpus, Some(vec![1]));
    }

    #[test]
    fn refusals_name_file_line_place_and_key() {
        let cases = [
            (
                "{\"tasks\": {\"t\": {\n\"run\": 1,\n\"frobnicate\": 2}}}",
                "w.json:3: task t: frobnicate: unknown event",
            ),
            (
                "{\"tasks\": {\"t\": {\"phases\": {\"p\": {\n\"delay\": 5, \"run\": 1}}}}}",
                "w.json:2: task t phase p: delay: delay is a task key",
            ),
            (
                "{\"tasks\": {\"t\": {\n\"policy\": \"SCHED_DEADLINE\", \"run\": 1}}}",
                "w.json:2: task t: policy: SCHED_DEADLINE",
            ),
            (
                "{\"tasks\": {\"t\": {\"run\": 1,\n\"dl-runtime\": 5}}}",
                "w.json:2: task t: dl-runtime: SCHED_DEADLINE",
            ),
            (
                "{\"tasks\": {\"t\": {\"run\": 1,\n\"util_max\": 5}}}",
                "w.json:2: task t: util_max: uclamp",
            ),
            (
                "{\"tasks\": {\"t\": {\"run\": 1,\n\"taskgroup\": \"/a\"}}}",
                "w.json:2: task t: taskgroup:",
            ),
            (
                "{\"tasks\": {\"t\": {\"run\": 1,\n\"memrun\": {}}}}",
                "w.json:2: task t: memrun:",
            ),
            (
                "{\"tasks\": {\"t\": {\"run\": 1,\n\"sem_wait\": \"s\"}}}",
                "w.json:2: task t: sem_wait: semaphores",
            ),
            (
                "{\"tasks\": {\"t\": {\"exec\": 1,\n\"period\": 5}}}",
                "w.json:1: task t: exec: pre-1.0",
            ),
            (
                "{\"tasks\": {\"t\": {\n\"timer\": {\"ref\": \"x\"}}}}",
                "w.json:2: task t: timer: a timer needs a \"period\"",
            ),
            (
                "{\"tasks\": {\"t\": {\n\"instance\": 100000, \"run\": 1}}}",
                "w.json:2: task t: instance: at most 1024",
            ),
            (
                "{\"tasks\": {\"t\": {\n\"run\": -5}}}",
                "w.json:2: task t: run: must be a whole number",
            ),
            (
                "{\"tasks\": {\"t\": {\n\"fork\": \"nobody\"}}}",
                "w.json:2: task t: fork: names \"nobody\"",
            ),
            (
                "{\"global\": {\n\"durations\": 5}, \"tasks\": {\"t\": {\"run\": 1}}}",
                "w.json:2: global: durations: unknown key",
            ),
            ("{\"global\": {}}", "w.json:1: top level: tasks: missing"),
            (
                "{\"tasks\": {\"t\": {\"run\": 1}},\n\"tsks\": 1}",
                "w.json:2: top level: tsks: unknown top-level key",
            ),
            (
                "{\"tasks\": {\"t\": {\"phases\": {\"p\": {\"run\": 1}},\n\"run\": 1}}}",
                "w.json:2: task t: run: not a task key",
            ),
            (
                "{\"tasks\": {\"t\": {\"run\": 1,\n\"wait\": {\"ref\": \"c\", \"mutex\": \"m\"}}}}",
                "w.json:2: task t: wait: its mutex \"m\" is not locked before it",
            ),
            (
                "{\"tasks\": {\"t\": {\n\"run\": 1,,}}}",
                "w.json:2: not rt-app's JSON",
            ),
        ];
        for (text, expected) in cases {
            let error = refused(text);
            assert!(error.starts_with(expected), "{text:?}: {error}");
            assert!(!error.contains('\n'), "{error}");
        }
    }

    #[test]
    fn probe_problem_says_why() {
        let spin = ok(
            r#"{"tasks": {"t": {"loop": -1, "run": 10}, "u": {"loop": -1, "run": 1, "timer": {"ref": "a", "period": 10}}}}"#,
        );
        assert!(spin
            .probe_problem()
            .unwrap()
            .contains("task t loops forever"));
        let no_timer = ok(r#"{"tasks": {"t": {"loop": -1, "run": 10, "sleep": 10}}}"#);
        assert!(no_timer
            .probe_problem()
            .unwrap()
            .contains("no task waits on a timer"));
        let fine = ok(
            r#"{"tasks": {"t": {"loop": 5, "run": 10}, "u": {"loop": -1, "run": 1, "timer": {"ref": "a", "period": 10}}}}"#,
        );
        assert_eq!(fine.probe_problem(), None);
    }

    #[test]
    fn shipped_workloads_load_by_name() {
        for name in shipped::names() {
            let w = load(name, false).unwrap();
            assert_eq!(w.source, name);
            assert_eq!(w.probe_problem(), None, "{name}");
        }
        let error = load("no-such-workload", false).unwrap_err().to_string();
        assert!(error.contains("audio-chain"), "{error}");
    }
}
