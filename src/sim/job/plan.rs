//! What the built-in job does, as data: a parallel build in the shape of a
//! kernel compile. Many compile steps, each reading its source file and a
//! few of the shared headers, computing, and writing an object file several
//! times the size of its source; then one link step that reads every
//! object and writes an image. The plan is a pure function of the number
//! of CPUs and `--job-size`: steps, sizes and CPU times vary from step to
//! step as a compile's units do, but the same way in every run.
//!
//! Sizing: 120 compile steps per CPU of 150 ms of CPU each on average
//! (75–225 ms), 18 s of compiling on idle CPUs, and a link alone on one
//! CPU for a twentieth of that, 0.9 s: 19 s of planned work on an idle
//! machine of any size (on 2 CPUs: 240 steps, 37 s of CPU), and about 20 s
//! with the steps' start-up and the last steps' uneven ends (20.6 s, at
//! 192 % CPU, on an idle 2-CPU VM). Steps run 2 per CPU at a time: `make -j4` on 2 CPUs, as
//! contest ran it, so a step waiting for I/O leaves no CPU idle. On 2 CPUs
//! it reads about 100 MB (mostly headers, from the page cache) and writes
//! 60 MB of objects and a 15 MB image.

use serde::{Deserialize, Serialize};

/// Compile steps per CPU of the run at `--job-size 1`.
const STEPS_PER_CPU: f64 = 120.0;
/// Mean CPU time of a compile step; one step of this size is the unit the
/// `jobload` load counts its work in.
pub const STEP_CPU_NS: u64 = 150_000_000;
/// Steps run at once per CPU (`make -jN`, N = 2 × CPUs).
const JOBS_PER_CPU: usize = 2;
/// Header files every compile step picks from.
pub const HEADERS: usize = 16;
/// Size of a header file.
pub const HEADER_BYTES: u64 = 64 << 10;
/// Headers each compile step reads.
const INCLUDES: usize = 6;
/// Mean size of a source file (16–48 KiB).
const SOURCE_BYTES: u64 = 32 << 10;
/// An object file is this many times the size of its source.
const OBJECT_FACTOR: u64 = 8;
/// The link's CPU time is this fraction (1/N) of the compile steps' time
/// on idle CPUs.
const LINK_SHARE: u64 = 20;
/// The image is this fraction (1/N) of all objects.
const IMAGE_SHARE: u64 = 4;

/// One compile step: read source `index` and the headers `headers`,
/// compute for `cpu_ns` (at the run's calibration), write an object of
/// `object_bytes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompileStep {
    pub index: usize,
    pub source_bytes: u64,
    pub headers: Vec<usize>,
    pub cpu_ns: u64,
    pub object_bytes: u64,
}

/// The link: read the objects of the `objects` compile steps, compute for
/// `cpu_ns`, write an image of `image_bytes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkStep {
    pub objects: usize,
    pub cpu_ns: u64,
    pub image_bytes: u64,
}

/// The whole built-in job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobPlan {
    /// The compile steps, in the order they start.
    pub compiles: Vec<CompileStep>,
    /// The link, once every compile step is done.
    pub link: LinkStep,
    /// Steps run at once.
    pub parallel: usize,
}

impl JobPlan {
    /// The job for a run on `cpus` CPUs at `--job-size size` (at least one
    /// compile step).
    pub fn new(cpus: usize, size: f64) -> Self {
        let cpus = cpus.max(1);
        let steps = (STEPS_PER_CPU * cpus as f64 * size).round().max(1.0) as usize;
        let compiles: Vec<CompileStep> = (0..steps).map(compile_step).collect();
        let compile_cpu_ns: u64 = compiles.iter().map(|s| s.cpu_ns).sum();
        let object_bytes: u64 = compiles.iter().map(|s| s.object_bytes).sum();
        Self {
            link: LinkStep {
                objects: steps,
                cpu_ns: compile_cpu_ns / cpus as u64 / LINK_SHARE,
                image_bytes: object_bytes / IMAGE_SHARE,
            },
            compiles,
            parallel: JOBS_PER_CPU * cpus,
        }
    }

    /// CPU time of every step together.
    pub fn cpu_ns(&self) -> u64 {
        self.compiles.iter().map(|s| s.cpu_ns).sum::<u64>() + self.link.cpu_ns
    }

    /// How long the job takes on `cpus` idle CPUs: the compile steps share
    /// the CPUs, the link runs alone.
    pub fn expected_ns(&self, cpus: usize) -> u64 {
        let compile_ns = self.cpu_ns() - self.link.cpu_ns;
        compile_ns / self.parallel.min(cpus.max(1)) as u64 + self.link.cpu_ns
    }

    /// Disk space the job's files take: sources, headers, objects, image.
    pub fn disk_bytes(&self) -> u64 {
        let per_step: u64 = self
            .compiles
            .iter()
            .map(|s| s.source_bytes + s.object_bytes)
            .sum();
        per_step + HEADERS as u64 * HEADER_BYTES + self.link.image_bytes
    }
}

/// The work of a step of `cpu_ns`, in steps of average size (`jobload`'s unit).
pub fn step_units(cpu_ns: u64) -> f64 {
    cpu_ns as f64 / STEP_CPU_NS as f64
}

/// Compile step `index`: its sizes, CPU time and headers drawn from its
/// index, so every run has the same steps.
fn compile_step(index: usize) -> CompileStep {
    let mut draws = Draws::new(index as u64);
    let source_bytes = SOURCE_BYTES / 2 + draws.below(SOURCE_BYTES);
    let cpu_ns = STEP_CPU_NS / 2 + draws.below(STEP_CPU_NS);
    let mut headers = Vec::with_capacity(INCLUDES);
    while headers.len() < INCLUDES {
        let header = draws.below(HEADERS as u64) as usize;
        if !headers.contains(&header) {
            headers.push(header);
        }
    }
    CompileStep {
        index,
        source_bytes,
        headers,
        cpu_ns,
        object_bytes: OBJECT_FACTOR * source_bytes,
    }
}

/// splitmix64's output function: a well-spread 64-bit mix of `x`.
pub fn mix(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A deterministic sequence of numbers drawn from a seed (splitmix64).
struct Draws(u64);

impl Draws {
    fn new(seed: u64) -> Self {
        Self(mix(seed ^ 0x6A09_E667_F3BC_C909))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// A number in `0..bound`.
    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }
}

/// Fills `buf` with the bytes of `seed`: the same seed, the same bytes.
pub fn fill(seed: u64, buf: &mut [u8]) {
    let mut draws = Draws::new(seed);
    for chunk in buf.chunks_mut(8) {
        let word = draws.next().to_le_bytes();
        chunk.copy_from_slice(&word[..chunk.len()]);
    }
}

/// The FNV-1a hash of `bytes`, continuing from `hash` (start from
/// [`HASH_START`]).
pub fn hash_bytes(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

/// The FNV-1a offset basis.
pub const HASH_START: u64 = 0xCBF2_9CE4_8422_2325;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_is_the_same_every_time() {
        assert_eq!(JobPlan::new(2, 1.0), JobPlan::new(2, 1.0));
        let plan = JobPlan::new(2, 1.0);
        assert_eq!(plan.compiles[7], compile_step(7));
        let mut a = [0u8; 13];
        let mut b = [0u8; 13];
        fill(5, &mut a);
        fill(5, &mut b);
        assert_eq!(a, b);
        fill(6, &mut b);
        assert_ne!(a, b);
        assert_eq!(hash_bytes(HASH_START, b""), HASH_START);
        assert_ne!(hash_bytes(HASH_START, b"a"), hash_bytes(HASH_START, b"b"));
    }

    #[test]
    fn two_cpus_make_the_default_job_of_about_19_seconds() {
        let plan = JobPlan::new(2, 1.0);
        assert_eq!(plan.compiles.len(), 240);
        assert_eq!(plan.parallel, 4, "contest's make -j4 on 2 CPUs");
        let mean_ns = (plan.cpu_ns() - plan.link.cpu_ns) / 240;
        // Drawn evenly from 75–225 ms: the mean of 240 within a few ms of 150.
        assert!(mean_ns.abs_diff(STEP_CPU_NS) < 10_000_000, "{mean_ns}");
        let expected_s = plan.expected_ns(2) as f64 / 1e9;
        assert!((17.0..21.0).contains(&expected_s), "{expected_s}");
        let disk_mb = plan.disk_bytes() as f64 / 1e6;
        assert!((60.0..110.0).contains(&disk_mb), "{disk_mb}");
    }

    #[test]
    fn steps_vary_within_their_bounds_and_read_distinct_headers() {
        let plan = JobPlan::new(4, 1.0);
        for step in &plan.compiles {
            assert!((STEP_CPU_NS / 2..STEP_CPU_NS * 3 / 2).contains(&step.cpu_ns));
            assert!((16 << 10..48 << 10).contains(&step.source_bytes));
            assert_eq!(step.object_bytes, 8 * step.source_bytes);
            let mut headers = step.headers.clone();
            headers.sort_unstable();
            headers.dedup();
            assert_eq!(headers.len(), INCLUDES);
            assert!(headers.iter().all(|&h| h < HEADERS));
        }
        let cpus: Vec<u64> = plan.compiles.iter().map(|s| s.cpu_ns).collect();
        assert!(cpus.windows(2).any(|w| w[0] != w[1]), "steps differ");
        assert_eq!(plan.link.objects, plan.compiles.len());
    }

    #[test]
    fn the_size_scales_the_steps_and_the_time_not_the_machine() {
        let small = JobPlan::new(2, 0.05);
        assert_eq!(small.compiles.len(), 12);
        let expected_s = small.expected_ns(2) as f64 / 1e9;
        assert!((0.5..1.5).contains(&expected_s), "{expected_s}");
        assert_eq!(JobPlan::new(2, 0.0001).compiles.len(), 1, "at least one");
        // A machine of 8 CPUs gets 4 times the steps and about the same time.
        let big = JobPlan::new(8, 1.0);
        assert_eq!((big.compiles.len(), big.parallel), (960, 16));
        let ratio = big.expected_ns(8) as f64 / JobPlan::new(2, 1.0).expected_ns(2) as f64;
        assert!((0.95..1.05).contains(&ratio), "{ratio}");
        // Fewer CPUs than the plan was made for: it takes longer.
        assert!(big.expected_ns(2) > 3 * big.expected_ns(8));
    }

    #[test]
    fn a_step_of_average_size_is_one_unit() {
        assert_eq!(step_units(STEP_CPU_NS), 1.0);
        assert_eq!(step_units(STEP_CPU_NS / 2), 0.5);
    }
}
