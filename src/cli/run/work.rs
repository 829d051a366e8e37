//! How the probe is scheduled and the work the probes and loads simulate:
//! the job, the response probe, the fragment player and the io* loads.

use super::*;

/// How the probe is scheduled.
#[derive(Debug, Args)]
#[command(next_help_heading = "Probe scheduling")]
pub(super) struct ProbeSchedArgs {
    /// Nice value of the probe [default: the nice value feelbench was
    /// started with, normally 0].
    #[arg(
        short = 'B',
        long = "nice",
        value_name = "N",
        allow_hyphen_values = true
    )]
    nice: Option<i32>,
    /// Run the probe SCHED_FIFO (real time).
    #[arg(short = 'r', long = "rt")]
    rt: bool,
    /// SCHED_FIFO priority used with --rt.
    #[arg(long = "rt-priority", value_name = "N", default_value_t = 80)]
    rt_priority: i32,
    /// Timer slack of the probe in ns (set after the last policy change).
    #[arg(long = "timer-slack", value_name = "NS", default_value_t = 1)]
    timer_slack_ns: u64,
    /// A custom slice for the probe's threads under EEVDF, 0.1ms to 100ms
    /// (sched_setattr, Linux 6.12+): how long each may run before another
    /// task of its CPU may take it, and, shorter, how early it is picked
    /// when it wakes [default: the kernel's base slice].
    #[arg(long = "slice", value_name = "DURATION", value_parser = parse_duration, conflicts_with = "rt")]
    slice_ns: Option<u64>,
    /// Run the probe on these CPUs only, e.g. 0 or 0,2-3 (sched_setaffinity).
    #[arg(long = "probe-cpus", value_name = "LIST", value_parser = parse_cpu_list)]
    pub(super) probe_cpus: Option<CpuList>,
    /// Run the probe in a session of its own (setsid), apart from the loads,
    /// as a desktop's programs are apart from a build started in a terminal:
    /// with kernel.sched_autogroup_enabled=1 the scheduler then shares the
    /// CPUs between the two sessions before sharing them between their tasks.
    #[arg(long = "probe-session")]
    pub(super) probe_session: bool,
}

/// What the probes' and loads' work is made of.
#[derive(Debug, Args)]
#[command(next_help_heading = "Work")]
pub(super) struct WorkArgs {
    /// Processes of the burn load [default: twice the number of CPUs].
    #[arg(short = 'L', long = "burn-processes", value_name = "N")]
    burn_processes: Option<usize>,
    /// Use this many work loops per ms instead of the calibration.
    #[arg(short = 'l', long = "loops-per-ms", value_name = "N")]
    loops_per_ms: Option<f64>,
    /// Calibrate again even if a calibration is cached.
    #[arg(short = 'b', long = "recalibrate")]
    recalibrate: bool,
    /// CPU share of the custom simulation, in % (interbench -C).
    #[arg(
        short = 'C',
        long = "custom-cpu",
        value_name = "PCT",
        requires = "custom_interval_us"
    )]
    custom_cpu_pct: Option<f64>,
    /// Period of the custom simulation, in µs (interbench -I).
    #[arg(
        short = 'I',
        long = "custom-interval",
        value_name = "US",
        requires = "custom_cpu_pct"
    )]
    custom_interval_us: Option<u64>,
    /// How the micro probes time their operations: paced (each once every
    /// 20 ms, taking turns) or lmbench (LMbench's warm back-to-back loops on
    /// one CPU, and its page fault per page of a mapping).
    #[arg(long = "micro-mode", value_name = "MODE", default_value = "paced", value_parser = micro_mode)]
    micro_mode: MicroMode,
    /// Take no per-event readings of the probes' threads: no split of late
    /// events into their causes (`result.late`), for measuring what the
    /// readings cost.
    #[arg(long = "no-late-split")]
    no_late_split: bool,
}

/// `--micro-mode`'s value.
fn micro_mode(name: &str) -> Result<MicroMode, String> {
    MicroMode::named(name).ok_or_else(|| format!("takes paced or lmbench, not {name}"))
}

/// How the `response` and `command` probes work.
#[derive(Debug, Args)]
#[command(next_help_heading = "Response and command probes")]
pub(super) struct ResponseArgs {
    /// Seconds the response and command probes leave the machine alone
    /// before each point (resp1: 20).
    #[arg(long = "response-gap", value_name = "SECS", default_value_t = 20.0)]
    gap_s: f64,
    /// Points each response or command scenario measures (resp1: 5).
    #[arg(long = "response-points", value_name = "N", default_value_t = 5)]
    points: u32,
    /// Size of the array the response probe allocates at its start and
    /// scans at each point, e.g. 32M [default: 1/32 of the memory the
    /// memory loads work through, 1 MiB to 64 MiB].
    #[arg(long = "response-resident", value_name = "SIZE", value_parser = parse_bytes)]
    resident_bytes: Option<u64>,
    /// Size of the array the response probe allocates, fills and scans
    /// afresh at each point [default: as --response-resident].
    #[arg(long = "response-fresh", value_name = "SIZE", value_parser = parse_bytes)]
    fresh_bytes: Option<u64>,
    /// The command probe times this command (run by /bin/sh -c, its output
    /// discarded) instead of `ls -l /usr/bin`.
    #[arg(long = "command", value_name = "CMD")]
    timed_command: Option<String>,
    /// The command probe drops the page cache (and the dentries and inodes)
    /// before each point's idle gap, so the program starts cold (root).
    #[arg(long = "command-cold")]
    cold: bool,
}

/// The job the `job` probe times and the `jobload` load repeats (contest's
/// kernel compile).
#[derive(Debug, Args)]
#[command(next_help_heading = "Job")]
pub(super) struct JobArgs {
    /// Time this command (run by /bin/sh -c, in an empty private directory
    /// removed afterwards) instead of the built-in job, e.g. --job 'make -C
    /// ~/linux -B -j4'. Everything it does is timed; a non-zero exit fails
    /// the scenario. The jobload load still runs the built-in job.
    #[arg(long = "job", value_name = "CMD")]
    job_command: Option<String>,
    /// Size of the built-in job: 1 takes about 20 s on idle CPUs, 0.05 about 1 s.
    #[arg(long = "job-size", value_name = "X", default_value_t = 1.0)]
    size: f64,
    /// Seconds a job may take before it is killed with everything it
    /// started (the scenario then fails).
    #[arg(long = "job-timeout", value_name = "SECS", default_value_t = 3600.0)]
    timeout_s: f64,
    /// Where the built-in job's inputs are when it starts: warm (in the
    /// page cache, as written) or cold (written back and dropped from the
    /// page cache, read from the device, as contest's first compile). The
    /// cacherun load keeps them warm whatever this says.
    #[arg(long = "job-cache", value_name = "STATE", default_value = "warm", value_parser = job_cache)]
    cache: JobCache,
}

/// `--job-cache`'s value.
fn job_cache(name: &str) -> Result<JobCache, String> {
    JobCache::named(name).ok_or_else(|| format!("takes warm or cold, not {name}"))
}

/// The buffer and work of the `fragment` probe's player (latencytest's).
#[derive(Debug, Args)]
#[command(next_help_heading = "Fragment probe")]
pub(super) struct FragmentArgs {
    /// Fragments in the emulated sound device's buffer.
    #[arg(long = "fragments", value_name = "N", default_value_t = 3)]
    fragments: u32,
    /// Bytes of each fragment (16-bit stereo samples).
    #[arg(long = "fragment-bytes", value_name = "B", default_value_t = 256)]
    fragment_bytes: u32,
    /// Samples per second the device plays.
    #[arg(long = "sample-rate", value_name = "HZ", default_value_t = 44_100)]
    sample_rate_hz: u32,
    /// CPU work of the player per fragment, in % of the time a fragment plays.
    #[arg(long = "fragment-cpu", value_name = "PCT", default_value_t = 10.0)]
    cpu_pct: f64,
}

/// The frame graph of the `game` probe (`sim::game` says where each
/// default comes from).
#[derive(Debug, Args)]
#[command(next_help_heading = "Game probe")]
pub(super) struct GameArgs {
    /// The display's refresh rate: 60 or 144.
    #[arg(long = "game-refresh", value_name = "HZ", default_value_t = 60)]
    game_refresh_hz: u32,
    /// Frames the swap chain queues ahead of the display (1–3).
    #[arg(long = "game-queue", value_name = "N", default_value_t = 2)]
    game_queue: u32,
    /// Threads in the pool the frame's jobs are fanned out to.
    #[arg(long = "game-pool", value_name = "N", default_value_t = 2)]
    game_workers: u32,
    /// Jobs fanned out per frame (Igalia found chains of 20–30).
    #[arg(long = "game-jobs", value_name = "N", default_value_t = 24)]
    game_jobs: u32,
    /// CPU of a frame's graph, in % of one refresh.
    #[arg(long = "game-cpu", value_name = "PCT", default_value_t = 60.0)]
    game_cpu_pct: f64,
}

/// The `fileio` probe's file and rhythm, and the `io*` loads (tiobench's).
#[derive(Debug, Args)]
#[command(next_help_heading = "File I/O")]
pub(super) struct IoArgs {
    /// Size of the file the fileio probe reads and writes at random (made
    /// before it measures, in the work directory).
    #[arg(long = "fileio-size", value_name = "SIZE", value_parser = parse_bytes, default_value = "256M")]
    probe_file_bytes: u64,
    /// Time between the starts of the fileio probe's requests, e.g. 20ms.
    #[arg(long = "fileio-period", value_name = "DURATION", value_parser = parse_duration, default_value = "20ms")]
    period_ns: u64,
    /// Thresholds the fileio probe and the io* loads count slower requests
    /// over: 1 to 3 ascending durations.
    #[arg(long = "io-thresholds", value_name = "LIST", value_parser = parse_thresholds, default_value = "100ms,2s,10s")]
    thresholds_ns: std::vec::Vec<u64>,
    /// Processes of each io* load (tiobench's threads), each with its own file.
    #[arg(long = "io-threads", value_name = "N", default_value_t = 4)]
    threads: usize,
}

impl ProbeSchedArgs {
    pub(super) fn request(&self) -> Result<SchedRequest, UsageError> {
        let priority = self.rt_priority;
        check((1..=99).contains(&priority), (), || {
            format!("--rt-priority takes 1 to 99, not {priority}")
        })?;
        if let Some(ns) = self.slice_ns {
            let range = crate::measure::slice::RANGE_NS;
            check(range.contains(&ns), (), || {
                format!(
                    "--slice takes 0.1ms to 100ms (the kernel's bounds), not {}",
                    humantime::format_duration(std::time::Duration::from_nanos(ns))
                )
            })?;
        }
        Ok(SchedRequest {
            nice: check_nice("-B/--nice", self.nice.unwrap_or_else(current_nice))?,
            fifo_priority: self.rt.then_some(priority),
            timer_slack_ns: self.timer_slack_ns.max(1),
            slice_ns: self.slice_ns,
        })
    }
}

impl WorkArgs {
    /// The work settings on `machine`, with the file size and the swap
    /// added for the run that `loads` give, the `response` settings and
    /// the `job`.
    pub(super) fn settings(
        &self,
        machine: &Machine,
        loads: &LoadArgs,
        response: ResponseSettings,
        job: JobSettings,
        fragment: FragmentSettings,
        io: IoSettings,
    ) -> Result<WorkSettings, UsageError> {
        let burn_processes = self.burn_processes.unwrap_or(2 * machine.cpus);
        check((1..=1024).contains(&burn_processes), (), || {
            format!("-L/--burn-processes takes 1 to 1024, not {burn_processes}")
        })?;
        if let Some(lpm) = self.loops_per_ms {
            check(lpm.is_finite() && lpm >= 1.0, (), || {
                format!("-l/--loops-per-ms takes a positive number, not {lpm}")
            })?;
        }
        Ok(WorkSettings {
            cpus: machine.cpus,
            burn_processes,
            custom: self.custom_shape()?,
            loops_per_ms: self.loops_per_ms,
            recalibrate: self.recalibrate,
            file_bytes: loads.file_bytes,
            swap_bytes: machine.free_swap_bytes + loads.swap_bytes.unwrap_or(0),
            response,
            job,
            fragment,
            game: Default::default(),
            io,
            micro: self.micro_mode,
            rtapp: Default::default(),
            late_split: !self.no_late_split,
        })
    }

    /// The custom simulation's shape, when `-C` and `-I` give one.
    fn custom_shape(&self) -> Result<Option<CustomShape>, UsageError> {
        let (Some(cpu_pct), Some(interval_us)) = (self.custom_cpu_pct, self.custom_interval_us)
        else {
            return Ok(None);
        };
        check(CustomShape::CPU_PCT.contains(&cpu_pct), (), || {
            format!("-C/--custom-cpu takes a percentage from 0 to 100, not {cpu_pct}")
        })?;
        check(CustomShape::INTERVAL_US.contains(&interval_us), (), || {
            format!("-I/--custom-interval takes 100 to 1000000 µs, not {interval_us}")
        })?;
        Ok(Some(CustomShape {
            cpu_pct,
            interval_us,
        }))
    }
}

impl ResponseArgs {
    pub(super) fn settings(&self) -> Result<ResponseSettings, UsageError> {
        let points = self.points;
        check((1..=MAX_RESPONSE_POINTS).contains(&points), (), || {
            format!("--response-points takes 1 to {MAX_RESPONSE_POINTS}, not {points}")
        })?;
        if let Some(command) = &self.timed_command {
            check(!command.trim().is_empty(), (), || {
                "--command needs a command, e.g. --command 'ls -l /etc'".to_string()
            })?;
        }
        Ok(ResponseSettings {
            gap_ns: seconds_to_ns("--response-gap", self.gap_s, 0.0)?,
            points,
            resident_bytes: self.resident_bytes,
            fresh_bytes: self.fresh_bytes,
            command: self.timed_command.clone(),
            cold: self.cold,
        })
    }
}

impl JobArgs {
    pub(super) fn settings(&self) -> Result<JobSettings, UsageError> {
        let size = self.size;
        check(size > 0.0 && size <= MAX_JOB_SIZE, (), || {
            format!("--job-size takes a number above 0 and at most {MAX_JOB_SIZE}, not {size}")
        })?;
        seconds_to_ns("--job-timeout", self.timeout_s, 0.1)?;
        let command = match self.job_command.as_deref().map(str::trim) {
            Some("") => {
                return Err(UsageError::new(
                    "--job needs a command, e.g. --job 'make -j4'",
                ))
            }
            other => other.map(str::to_string),
        };
        check(
            command.is_none() || self.cache == JobCache::Warm,
            (),
            || {
                "--job-cache cold drops the built-in job's inputs from the page cache; a --job command's files are its own (drop them yourself, or give --job-cache warm)".to_string()
            },
        )?;
        Ok(JobSettings {
            size,
            command,
            timeout_s: self.timeout_s,
            cache: self.cache,
        })
    }
}

impl FragmentArgs {
    pub(super) fn settings(&self) -> Result<FragmentSettings, UsageError> {
        let (fragments, bytes, rate, cpu) = (
            self.fragments,
            self.fragment_bytes,
            self.sample_rate_hz,
            self.cpu_pct,
        );
        check((2..=64).contains(&fragments), (), || {
            format!("--fragments takes 2 to 64, not {fragments}")
        })?;
        check(
            (16..=1 << 20).contains(&bytes) && bytes % 4 == 0,
            (),
            || format!("--fragment-bytes takes a multiple of 4 from 16 to 1048576, not {bytes}"),
        )?;
        check((8_000..=384_000).contains(&rate), (), || {
            format!("--sample-rate takes 8000 to 384000 Hz, not {rate}")
        })?;
        check((0.0..=90.0).contains(&cpu), (), || {
            format!("--fragment-cpu takes a percentage from 0 to 90, not {cpu}")
        })?;
        Ok(FragmentSettings {
            fragments,
            fragment_bytes: bytes,
            sample_rate_hz: rate,
            cpu_pct: cpu,
        })
    }
}

impl GameArgs {
    pub(super) fn settings(&self) -> Result<GameSettings, UsageError> {
        let s = GameSettings {
            refresh_hz: self.game_refresh_hz,
            queue: self.game_queue,
            workers: self.game_workers,
            jobs: self.game_jobs,
            cpu_pct: self.game_cpu_pct,
        };
        check([60, 144].contains(&s.refresh_hz), (), || {
            format!("--game-refresh takes 60 or 144, not {}", s.refresh_hz)
        })?;
        check((1..=3).contains(&s.queue), (), || {
            format!("--game-queue takes 1 to 3, not {}", s.queue)
        })?;
        check((1..=16).contains(&s.workers), (), || {
            format!("--game-pool takes 1 to 16, not {}", s.workers)
        })?;
        check((1..=256).contains(&s.jobs), (), || {
            format!("--game-jobs takes 1 to 256, not {}", s.jobs)
        })?;
        check((1.0..=200.0).contains(&s.cpu_pct), (), || {
            format!(
                "--game-cpu takes a percentage from 1 to 200, not {}",
                s.cpu_pct
            )
        })?;
        Ok(s)
    }
}

impl IoArgs {
    pub(super) fn settings(&self) -> Result<IoSettings, UsageError> {
        let (threads, period_ns) = (self.threads, self.period_ns);
        check((1..=64).contains(&threads), (), || {
            format!("--io-threads takes 1 to 64, not {threads}")
        })?;
        check(
            (1_000_000..=10_000_000_000).contains(&period_ns),
            (),
            || {
                format!(
                    "--fileio-period takes 1ms to 10s, not {}",
                    crate::sim::io::show_threshold(period_ns)
                )
            },
        )?;
        check(self.probe_file_bytes >= 1 << 20, (), || {
            format!(
                "--fileio-size takes 1M or more, not {} bytes",
                self.probe_file_bytes
            )
        })?;
        Ok(IoSettings {
            probe_file_bytes: self.probe_file_bytes,
            period_ns,
            thresholds_ns: self.thresholds_ns.clone(),
            threads,
        })
    }
}
