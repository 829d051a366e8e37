//! What a cgroup of the loads limits, and the control file and value that
//! set it in each cgroup version.

use super::CgroupVersion;

/// CPU weight of a cgroup whose share is the kernel's default (v2 `cpu.weight`).
const DEFAULT_WEIGHT: u64 = 100;
/// v1 `cpu.shares` of a cgroup whose share is the kernel's default.
const DEFAULT_SHARES: u64 = 1024;

/// A limit the loads' cgroups put on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// A memory limit in bytes (`--mem-limit`); swap is left unlimited, so
    /// the loads can be pushed into it.
    MemoryBytes(u64),
    /// A CPU weight from 1 to 10000, 100 being the default share
    /// (`--load-cpu-weight`).
    CpuWeight(u32),
}

impl Limit {
    /// The controller that enforces the limit.
    pub fn controller(self) -> &'static str {
        match self {
            Limit::MemoryBytes(_) => "memory",
            Limit::CpuWeight(_) => "cpu",
        }
    }

    /// The option that asks for the limit.
    pub fn option(self) -> &'static str {
        match self {
            Limit::MemoryBytes(_) => "--mem-limit",
            Limit::CpuWeight(_) => "--load-cpu-weight",
        }
    }

    /// The control file that sets the limit in a cgroup of `version`, and
    /// what is written to it.
    pub fn file_and_value(self, version: CgroupVersion) -> (&'static str, String) {
        match (self, version) {
            (Limit::MemoryBytes(bytes), CgroupVersion::V1) => {
                ("memory.limit_in_bytes", bytes.to_string())
            }
            (Limit::MemoryBytes(bytes), CgroupVersion::V2) => ("memory.max", bytes.to_string()),
            (Limit::CpuWeight(weight), CgroupVersion::V1) => {
                ("cpu.shares", shares_of_weight(weight).to_string())
            }
            (Limit::CpuWeight(weight), CgroupVersion::V2) => ("cpu.weight", weight.to_string()),
        }
    }
}

/// The v1 `cpu.shares` that gives the share a v2 `cpu.weight` gives: the
/// kernel's own mapping, weight × 1024 / 100 rounded to the closest.
pub fn shares_of_weight(weight: u32) -> u64 {
    (u64::from(weight) * DEFAULT_SHARES + DEFAULT_WEIGHT / 2) / DEFAULT_WEIGHT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_map_to_shares_as_the_kernel_maps_them() {
        assert_eq!(shares_of_weight(100), 1024);
        assert_eq!(shares_of_weight(10), 102);
        assert_eq!(shares_of_weight(1), 10);
        assert_eq!(shares_of_weight(50), 512);
        assert_eq!(shares_of_weight(10_000), 102_400);
        // 1024 × 3 / 100 = 30.72: rounded to the closest.
        assert_eq!(shares_of_weight(3), 31);
    }

    #[test]
    fn each_limit_has_its_file_in_each_version() {
        let cases = [
            (
                Limit::MemoryBytes(1 << 20),
                CgroupVersion::V1,
                "memory.limit_in_bytes",
                "1048576",
            ),
            (
                Limit::MemoryBytes(1 << 20),
                CgroupVersion::V2,
                "memory.max",
                "1048576",
            ),
            (Limit::CpuWeight(10), CgroupVersion::V1, "cpu.shares", "102"),
            (Limit::CpuWeight(10), CgroupVersion::V2, "cpu.weight", "10"),
        ];
        for (limit, version, file, value) in cases {
            assert_eq!(limit.file_and_value(version), (file, value.to_string()));
        }
        assert_eq!(Limit::CpuWeight(1).controller(), "cpu");
        assert_eq!(Limit::MemoryBytes(1).option(), "--mem-limit");
    }
}
