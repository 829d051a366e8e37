//! `feelbench rtapp check|list`: an rt-app workload as feelbench understands
//! it (tasks, phases and events with their units, the keys it records
//! without acting on) and whether it can run here as a probe and as a load;
//! and the shipped workloads with a line each.

use crate::sim::rtapp::model::{Event, Policy, Sched, Task, TimerMode, Workload};
use crate::sim::rtapp::parse::{self, RtappError};
use crate::sim::rtapp::shipped::SHIPPED;
use std::fmt::Write as _;
use std::path::Path;

/// rt-app's default real-time priority when a FIFO/RR task names none.
const RT_DEFAULT_PRIORITY: i32 = 10;

/// What this machine lets this process do with a workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rights {
    /// Running as root (any policy, priority and nice value).
    pub root: bool,
    /// RLIMIT_RTPRIO's soft limit: the highest real-time priority allowed.
    pub max_rt_priority: i32,
    /// The lowest nice value allowed: this process's own (any process may
    /// keep or raise its nice value), or lower as far as RLIMIT_NICE lets
    /// it (20 − limit).
    pub min_nice: i32,
    /// The CPUs online; `None` when /sys does not say.
    pub online_cpus: Option<Vec<usize>>,
}

impl Rights {
    /// This process's rights on this machine.
    pub fn here() -> Self {
        use nix::sys::resource::{getrlimit, Resource};
        let limit = |r| getrlimit(r).map(|(soft, _)| soft).unwrap_or(0);
        let online_cpus = crate::system::cpulist::online(Path::new("/sys"))
            .ok()
            .map(|l| l.cpus().collect());
        Self {
            root: nix::unistd::geteuid().is_root(),
            max_rt_priority: limit(Resource::RLIMIT_RTPRIO).min(99) as i32,
            min_nice: (20 - limit(Resource::RLIMIT_NICE).min(40) as i32)
                .min(crate::measure::sched::current_nice()),
            online_cpus,
        }
    }
}

/// The shipped workloads, a line each.
pub fn list() -> String {
    let mut out = String::new();
    for (name, about, _) in SHIPPED {
        let _ = writeln!(out, "{name:<12} {about}");
    }
    out += "\n`feelbench rtapp check NAME` shows one as understood; `--probe rtapp:NAME` measures it, `--load rtapp:NAME` runs it as a load.\n";
    out
}

/// `feelbench rtapp check SPEC` on this machine; `strict`: a key rt-app
/// ignores is refused.
pub fn check(spec: &str, strict: bool) -> Result<String, RtappError> {
    let workload = parse::load(spec, strict)?;
    Ok(render(&workload, &Rights::here()))
}

/// The workload as understood, and whether `rights` let it run.
pub fn render(workload: &Workload, rights: &Rights) -> String {
    let mut out = String::new();
    let duration = match workload.duration_s {
        Some(s) => format!("{s} s (feelbench's -t bounds it)"),
        None => "until the tasks end (feelbench's -t bounds it)".into(),
    };
    let _ = writeln!(
        out,
        "rt-app workload {} (sha256 {})\nduration: {duration}\ndefault policy: {}",
        workload.source,
        &workload.sha256[..16.min(workload.sha256.len())],
        policy_name(workload.default_policy)
    );
    let buffered = workload
        .tasks
        .iter()
        .flat_map(|t| &t.phases)
        .flat_map(|p| &p.events);
    if buffered
        .into_iter()
        .any(|e| matches!(e, Event::Mem { .. } | Event::Iorun { .. }))
    {
        let _ = writeln!(
            out,
            "mem/iorun buffer: {} B per thread (mem_buffer_size)",
            workload.mem_buffer_bytes
        );
    }
    for task in &workload.tasks {
        render_task(&mut out, task, workload.default_policy);
    }
    out += "\nrun: calibrated work as rt-app means it (loops, not time), sized by feelbench's own calibration (recorded in the run)\n";
    let recorded: Vec<_> = workload
        .ignored
        .iter()
        .filter(|i| i.unknown.is_none())
        .collect();
    if recorded.is_empty() {
        out += "ignored keys: none\n";
    } else {
        out += "ignored keys (read, recorded, not acted on):\n";
        for i in recorded {
            let _ = writeln!(out, "  line {:>3}: {} in {}", i.line, i.key, i.place);
        }
    }
    let unknown = workload.warnings();
    if !unknown.is_empty() {
        out += "keys rt-app ignores, left out (--strict refuses the file):\n";
        for line in unknown {
            let _ = writeln!(out, "  {line}");
        }
    }
    let problems = problems_here(workload, rights);
    let probe: Vec<String> = workload
        .probe_problem()
        .into_iter()
        .chain(problems.iter().cloned())
        .collect();
    out += "\ncan run here\n";
    let _ = writeln!(out, "  as a probe: {}", verdict(&probe));
    let _ = writeln!(out, "  as a load:  {}", verdict(&problems));
    out
}

fn verdict(problems: &[String]) -> String {
    match problems {
        [] => "yes".into(),
        _ => format!("no: {}", problems.join("; ")),
    }
}

fn render_task(out: &mut String, task: &Task, default_policy: Policy) {
    let instances = match task.instances {
        0 => "started only by fork".to_string(),
        1 => "1 thread".to_string(),
        n => format!("{n} threads"),
    };
    let loops = match task.loops {
        None => "phases loop forever".to_string(),
        Some(1) => "phases run once".to_string(),
        Some(n) => format!("phases run {n} times"),
    };
    let delay = match task.delay_us {
        0 => String::new(),
        us => format!(", starts after {}", micros(us)),
    };
    let _ = writeln!(
        out,
        "\ntask {}: {instances}, {loops}{delay}; {}",
        task.name,
        sched_text(&task.sched, None, default_policy)
    );
    for phase in &task.phases {
        let times = match phase.loops {
            1 => "once".to_string(),
            n => format!("{n} times"),
        };
        let sched = match phase.sched == Sched::default() {
            true => String::new(),
            false => format!(
                "; {}",
                sched_text(&phase.sched, Some(&task.sched), default_policy)
            ),
        };
        let _ = writeln!(out, "  phase {} ({times}{sched}):", phase.name);
        for event in &phase.events {
            let _ = writeln!(out, "    {}", describe(event));
        }
    }
}

/// A phase's or task's scheduling in words (a phase's falling back to its
/// task's, as rt-app does).
fn sched_text(sched: &Sched, task: Option<&Sched>, default_policy: Policy) -> String {
    let policy = effective_policy(sched, task, default_policy);
    let priority = sched.priority.or(task.and_then(|t| t.priority));
    let priority = match (is_rt(policy), priority) {
        (true, p) => format!("priority {}", p.unwrap_or(RT_DEFAULT_PRIORITY)),
        (false, p) => format!("nice {}", p.unwrap_or(0)),
    };
    let cpus = match sched.cpus.as_ref().or(task.and_then(|t| t.cpus.as_ref())) {
        None => "any CPU".to_string(),
        Some(cpus) => format!(
            "CPUs {}",
            cpus.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
    };
    format!("{} {priority}, {cpus}", policy_name(policy))
}

fn effective_policy(sched: &Sched, task: Option<&Sched>, default_policy: Policy) -> Policy {
    sched
        .policy
        .or(task.and_then(|t| t.policy))
        .unwrap_or(default_policy)
}

fn is_rt(policy: Policy) -> bool {
    matches!(policy, Policy::SchedFifo | Policy::SchedRr)
}

fn policy_name(policy: Policy) -> &'static str {
    match policy {
        Policy::SchedOther => "SCHED_OTHER",
        Policy::SchedBatch => "SCHED_BATCH",
        Policy::SchedIdle => "SCHED_IDLE",
        Policy::SchedFifo => "SCHED_FIFO",
        Policy::SchedRr => "SCHED_RR",
    }
}

/// Microseconds as rt-app's users read them: µs below a millisecond.
fn micros(us: u64) -> String {
    match us {
        0..=999 => format!("{us} µs"),
        _ if us.is_multiple_of(1000) => format!("{} ms", us / 1000),
        _ => format!("{:.3} ms", us as f64 / 1000.0),
    }
}

/// One event in words, with its unit.
fn describe(event: &Event) -> String {
    match event {
        Event::Run { us } => format!("run      {} of calibrated work", micros(*us)),
        Event::Runtime { us } => format!("runtime  busy for {} of wall-clock time", micros(*us)),
        Event::Sleep { us } => format!("sleep    {}", micros(*us)),
        Event::Timer {
            name,
            period_us,
            mode,
        } => {
            let scope = match name.starts_with("unique") {
                true => "one per thread",
                false => "shared by every thread naming it",
            };
            let mode = match mode {
                TimerMode::Absolute => "absolute: late wake-ups stay on the grid",
                TimerMode::Relative => "relative: the next period counts from now",
            };
            format!(
                "timer    {name:?} every {} ({scope}; {mode})",
                micros(*period_us)
            )
        }
        Event::Barrier { name } => format!("barrier  {name:?}"),
        Event::Suspend { name } => format!("suspend  until the next resume of {name:?}"),
        Event::Resume { name } => {
            format!("resume   {name:?} (every thread suspended on it then; lost if none)")
        }
        Event::Lock { mutex } => format!("lock     mutex {mutex:?}"),
        Event::Unlock { mutex } => format!("unlock   mutex {mutex:?}"),
        Event::Wait { cond, mutex } => format!("wait     on {cond:?} with mutex {mutex:?}"),
        Event::Signal { cond } => format!("signal   one waiter of {cond:?}"),
        Event::Broad { cond } => format!("broad    every waiter of {cond:?}"),
        Event::Sync { cond, mutex } => {
            format!("sync     signal {cond:?} and wait on it with mutex {mutex:?}")
        }
        Event::Fork { task } => format!("fork     a thread of task {task:?}"),
        Event::Mem { bytes } => format!("mem      write {bytes} B to the thread's buffer"),
        Event::Iorun { bytes } => {
            format!("iorun    write {bytes} B from the thread's buffer to /dev/null")
        }
        Event::Yield => "yield".into(),
    }
}

/// What keeps the workload from running here with `rights` (as a probe
/// and as a load alike).
pub fn problems_here(workload: &Workload, rights: &Rights) -> Vec<String> {
    let mut problems = Vec::new();
    for task in &workload.tasks {
        let scheds = std::iter::once((&task.sched, None))
            .chain(task.phases.iter().map(|p| (&p.sched, Some(&task.sched))));
        for (sched, parent) in scheds {
            if let Some(problem) = sched_problem(sched, parent, workload.default_policy, rights) {
                let problem = format!("task {}: {problem}", task.name);
                if !problems.contains(&problem) {
                    problems.push(problem);
                }
            }
        }
    }
    problems
}

fn sched_problem(
    sched: &Sched,
    task: Option<&Sched>,
    default_policy: Policy,
    rights: &Rights,
) -> Option<String> {
    if let (Some(cpus), Some(online)) = (
        sched.cpus.as_ref().or(task.and_then(|t| t.cpus.as_ref())),
        &rights.online_cpus,
    ) {
        let missing: Vec<String> = cpus
            .iter()
            .filter(|c| !online.contains(c))
            .map(|c| c.to_string())
            .collect();
        if !missing.is_empty() {
            return Some(format!("CPU {} not online", missing.join(",")));
        }
    }
    if rights.root {
        return None;
    }
    let policy = effective_policy(sched, task, default_policy);
    let priority = sched.priority.or(task.and_then(|t| t.priority));
    match is_rt(policy) {
        true => {
            let wanted = priority.unwrap_or(RT_DEFAULT_PRIORITY);
            (wanted > rights.max_rt_priority).then(|| {
                format!(
                    "{} priority {wanted} needs root or RLIMIT_RTPRIO ≥ {wanted} (it is {})",
                    policy_name(policy),
                    rights.max_rt_priority
                )
            })
        }
        false => {
            let nice = priority.unwrap_or(0);
            (nice < rights.min_nice).then(|| {
                format!(
                    "nice {nice} needs root or RLIMIT_NICE ≥ {} (the lowest nice allowed is {})",
                    20 - nice,
                    rights.min_nice
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rtapp::parse::parse;

    fn user() -> Rights {
        Rights {
            root: false,
            max_rt_priority: 0,
            min_nice: 0,
            online_cpus: Some(vec![0, 1]),
        }
    }

    #[test]
    fn shipped_workloads_render_and_run_as_probes_for_a_user() {
        for (name, _, text) in SHIPPED {
            let workload = parse(name, text, false).unwrap();
            let out = render(&workload, &user());
            assert!(out.contains("as a probe: yes"), "{name}:\n{out}");
            assert!(out.contains("as a load:  yes"), "{name}:\n{out}");
        }
    }

    #[test]
    fn rights_cpus_and_spinning_are_said() {
        let text = r#"{"tasks": {
            "rt": {"policy": "SCHED_FIFO", "priority": 50, "loop": -1, "run": 100, "timer": {"ref": "t", "period": 1000}},
            "far": {"cpus": [7], "loop": -1, "run": 100, "sleep": 100},
            "nice": {"priority": -5, "loop": 3, "run": 100},
            "spin": {"loop": -1, "run": 100}
        }}"#;
        let workload = parse("f.json", text, false).unwrap();
        let problems = problems_here(&workload, &user());
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].contains("SCHED_FIFO priority 50"));
        assert!(problems[1].contains("CPU 7 not online"));
        assert!(problems[2].contains("nice -5"));
        let root = Rights {
            root: true,
            ..user()
        };
        assert_eq!(problems_here(&workload, &root).len(), 1);
        let out = render(&workload, &root);
        assert!(
            out.contains("as a probe: no: f.json: task spin loops forever"),
            "{out}"
        );
    }

    #[test]
    fn units_are_written() {
        assert_eq!(micros(300), "300 µs");
        assert_eq!(micros(2000), "2 ms");
        assert_eq!(micros(5333), "5.333 ms");
    }
}
