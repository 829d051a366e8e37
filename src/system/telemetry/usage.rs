//! What one worker process used over its life, as getrusage tells it; the
//! engine stores it with each worker's result.

use serde::{Deserialize, Serialize};

/// What one worker process used over its life (getrusage of itself, not
/// of the children it reaped).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProcessUsage {
    /// CPU time in user space.
    pub user_cpu_ms: f64,
    /// CPU time in the kernel.
    pub system_cpu_ms: f64,
    /// Times it gave up the CPU (to wait or sleep).
    pub voluntary_switches: u64,
    /// Times it was preempted.
    pub involuntary_switches: u64,
    /// Peak resident set size.
    pub max_rss_bytes: u64,
}

/// What this process used so far; `None` when getrusage fails.
pub fn self_usage() -> Option<ProcessUsage> {
    use nix::sys::resource::{getrusage, UsageWho};
    let usage = getrusage(UsageWho::RUSAGE_SELF).ok()?;
    let ms = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 * 1e3 + t.tv_usec() as f64 / 1e3;
    Some(ProcessUsage {
        user_cpu_ms: ms(usage.user_time()),
        system_cpu_ms: ms(usage.system_time()),
        voluntary_switches: usage.voluntary_context_switches().max(0) as u64,
        involuntary_switches: usage.involuntary_context_switches().max(0) as u64,
        // Linux reports kilobytes.
        max_rss_bytes: usage.max_rss().max(0) as u64 * 1024,
    })
}
