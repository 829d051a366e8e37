//! What a sample of `sched_switch` or `sched_wakeup` says, read from the
//! bytes perf hands over (`PERF_SAMPLE_TIME | CPU | RAW`: time, CPU and
//! reserved word, raw size, raw record) at the offsets tracefs gives.

use super::tracefs::{EventFormat, Field, TracefsError};

/// The task on a CPU changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switch {
    /// `CLOCK_MONOTONIC`, ns.
    pub at_ns: u64,
    pub cpu: u32,
    pub prev_tid: i32,
    /// The task switched out still wanted the CPU (preempted), rather than
    /// going to sleep or blocking.
    pub prev_runnable: bool,
    pub next_tid: i32,
}

/// A task was woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wakeup {
    pub at_ns: u64,
    pub tid: i32,
    /// The CPU it was woken onto.
    pub target_cpu: u32,
}

/// A sample, read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sample<'a> {
    Switch {
        switch: Switch,
        prev_comm: &'a [u8],
        next_comm: &'a [u8],
    },
    Wakeup(Wakeup),
}

/// Where `sched_switch`'s and `sched_wakeup`'s fields lie.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub switch_id: u16,
    pub wakeup_id: u16,
    prev_comm: Field,
    prev_tid: Field,
    prev_state: Field,
    next_comm: Field,
    next_tid: Field,
    woken_tid: Field,
    target_cpu: Field,
}

/// The bits of `prev_state` that say the task left the CPU to wait
/// (`TASK_REPORT`); none set is `TASK_RUNNING`, a preemption (a preempted
/// task is reported as `TASK_REPORT_MAX`, above them).
const TASK_REPORT: u64 = 0xff;

impl Layout {
    /// The layout tracefs describes.
    pub fn of(switch: &EventFormat, wakeup: &EventFormat) -> Result<Self, TracefsError> {
        Ok(Self {
            switch_id: switch.id,
            wakeup_id: wakeup.id,
            prev_comm: switch.field("prev_comm")?,
            prev_tid: switch.field("prev_pid")?,
            prev_state: switch.field("prev_state")?,
            next_comm: switch.field("next_comm")?,
            next_tid: switch.field("next_pid")?,
            woken_tid: wakeup.field("pid")?,
            target_cpu: wakeup.field("target_cpu")?,
        })
    }

    /// The sample in `bytes` (a `PERF_RECORD_SAMPLE` after its header);
    /// `None` for another tracepoint or a record too short.
    pub fn read<'a>(&self, bytes: &'a [u8]) -> Option<Sample<'a>> {
        let at_ns = number(bytes, 0, 8)?;
        let cpu = number(bytes, 8, 4)? as u32;
        let raw_size = number(bytes, 16, 4)? as usize;
        let raw = bytes.get(20..20 + raw_size)?;
        let id = number(raw, 0, 2)? as u16;
        let get = |field: Field| number(raw, field.offset, field.size);
        let text = |field: Field| {
            let bytes = raw.get(field.offset..field.offset + field.size)?;
            Some(&bytes[..bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len())])
        };
        if id == self.switch_id {
            Some(Sample::Switch {
                switch: Switch {
                    at_ns,
                    cpu,
                    prev_tid: get(self.prev_tid)? as i32,
                    prev_runnable: get(self.prev_state)? & TASK_REPORT == 0,
                    next_tid: get(self.next_tid)? as i32,
                },
                prev_comm: text(self.prev_comm)?,
                next_comm: text(self.next_comm)?,
            })
        } else if id == self.wakeup_id {
            Some(Sample::Wakeup(Wakeup {
                at_ns,
                tid: get(self.woken_tid)? as i32,
                target_cpu: get(self.target_cpu)? as u32,
            }))
        } else {
            None
        }
    }
}

/// The native-endian unsigned number of `size` bytes at `offset`.
fn number(bytes: &[u8], offset: usize, size: usize) -> Option<u64> {
    let slice = bytes.get(offset..offset + size)?;
    Some(match size {
        1 => slice[0] as u64,
        2 => u16::from_ne_bytes(slice.try_into().ok()?) as u64,
        4 => u32::from_ne_bytes(slice.try_into().ok()?) as u64,
        8 => u64::from_ne_bytes(slice.try_into().ok()?),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(offset: usize, size: usize) -> Field {
        Field { offset, size }
    }

    fn layout() -> Layout {
        Layout {
            switch_id: 316,
            wakeup_id: 318,
            prev_comm: field(8, 16),
            prev_tid: field(24, 4),
            prev_state: field(32, 8),
            next_comm: field(40, 16),
            next_tid: field(56, 4),
            woken_tid: field(24, 4),
            target_cpu: field(32, 4),
        }
    }

    /// A sample as perf writes it: time, CPU, reserved, raw size, raw.
    fn sample(at_ns: u64, cpu: u32, raw: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend(at_ns.to_ne_bytes());
        bytes.extend(cpu.to_ne_bytes());
        bytes.extend(0u32.to_ne_bytes());
        bytes.extend((raw.len() as u32).to_ne_bytes());
        bytes.extend(raw);
        bytes
    }

    fn put(raw: &mut [u8], offset: usize, value: &[u8]) {
        raw[offset..offset + value.len()].copy_from_slice(value);
    }

    #[test]
    fn reads_a_preemption_with_both_names() {
        let mut raw = vec![0u8; 64];
        put(&mut raw, 0, &316u16.to_ne_bytes());
        put(&mut raw, 8, b"fb-probe-x");
        put(&mut raw, 24, &812i32.to_ne_bytes());
        put(&mut raw, 32, &0x100u64.to_ne_bytes());
        put(&mut raw, 40, b"fb-load-burn");
        put(&mut raw, 56, &900i32.to_ne_bytes());
        let bytes = sample(5_000, 1, &raw);
        let Some(Sample::Switch {
            switch,
            prev_comm,
            next_comm,
        }) = layout().read(&bytes)
        else {
            panic!("not a switch");
        };
        assert_eq!(
            switch,
            Switch {
                at_ns: 5_000,
                cpu: 1,
                prev_tid: 812,
                prev_runnable: true,
                next_tid: 900
            }
        );
        assert_eq!(prev_comm, b"fb-probe-x");
        assert_eq!(next_comm, b"fb-load-burn");
    }

    #[test]
    fn a_task_going_to_sleep_is_not_runnable() {
        let mut raw = vec![0u8; 64];
        put(&mut raw, 0, &316u16.to_ne_bytes());
        put(&mut raw, 32, &1u64.to_ne_bytes());
        let Some(Sample::Switch { switch, .. }) = layout().read(&sample(1, 0, &raw)) else {
            panic!("not a switch");
        };
        assert!(!switch.prev_runnable);
    }

    #[test]
    fn reads_a_wakeup_and_ignores_other_events_and_short_records() {
        let mut raw = vec![0u8; 40];
        put(&mut raw, 0, &318u16.to_ne_bytes());
        put(&mut raw, 24, &77i32.to_ne_bytes());
        put(&mut raw, 32, &1u32.to_ne_bytes());
        assert_eq!(
            layout().read(&sample(9, 0, &raw)),
            Some(Sample::Wakeup(Wakeup {
                at_ns: 9,
                tid: 77,
                target_cpu: 1
            }))
        );
        put(&mut raw, 0, &7u16.to_ne_bytes());
        assert_eq!(layout().read(&sample(9, 0, &raw)), None);
        assert_eq!(layout().read(&sample(9, 0, &raw)[..22]), None);
    }
}
