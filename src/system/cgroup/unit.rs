//! The cgroup a process is in and the name a user knows it by: the
//! systemd unit (`nginx.service`, `session-3.scope`), the container
//! (`docker 3f2a9c1b2d4e`, `podman ...`), else the path itself, read from
//! `/proc/PID/cgroup` (the cgroup2 line, else the v1 `name=systemd` one).

use std::path::Path;

/// A process's cgroup and its recognisable name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessGroup {
    /// The path in its hierarchy (`/system.slice/nginx.service`).
    pub path: String,
    /// What a user recognises it as.
    pub name: String,
}

/// The cgroup of process `pid` below `proc_root`; `None` when the process
/// is gone or its file names none.
pub fn of_process(proc_root: &Path, pid: i32) -> Option<ProcessGroup> {
    let text = std::fs::read_to_string(proc_root.join(pid.to_string()).join("cgroup")).ok()?;
    let path = cgroup_path(&text)?;
    Some(ProcessGroup {
        name: recognisable(&path),
        path,
    })
}

/// The path of the cgroup2 line (`0::PATH`) of a `/proc/PID/cgroup` text,
/// else that of the v1 `name=systemd` hierarchy.
fn cgroup_path(text: &str) -> Option<String> {
    let line = |prefix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .map(str::to_string)
    };
    line("0::").or_else(|| {
        text.lines().find_map(|l| {
            let mut fields = l.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            (controllers == "name=systemd").then(|| path.to_string())
        })
    })
}

/// The name a user knows the cgroup at `path` by: its container
/// (`docker ID12`, `podman ID12`, `containerd ID12`), else the deepest
/// systemd unit on its path, else the path (`/` for the root).
fn recognisable(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    for part in parts.iter().rev() {
        for (prefix, runtime) in [
            ("docker-", "docker"),
            ("libpod-", "podman"),
            ("cri-containerd-", "containerd"),
            ("crio-", "cri-o"),
        ] {
            if let Some(id) = part
                .strip_prefix(prefix)
                .and_then(|p| p.strip_suffix(".scope"))
            {
                return format!("{runtime} {}", &id[..id.len().min(12)]);
            }
        }
    }
    let unit = parts.iter().rev().find(|p| {
        [".service", ".scope", ".slice"]
            .iter()
            .any(|suffix| p.ends_with(suffix))
    });
    match unit {
        Some(unit) => unit.to_string(),
        None if parts.is_empty() => "/".to_string(),
        None => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cgroup2_line_wins_and_v1_falls_back_to_systemds() {
        assert_eq!(
            cgroup_path("12:cpu:/x\n0::/system.slice/nginx.service\n").as_deref(),
            Some("/system.slice/nginx.service")
        );
        assert_eq!(
            cgroup_path("3:cpu,cpuacct:/a\n1:name=systemd:/user.slice/session-2.scope\n")
                .as_deref(),
            Some("/user.slice/session-2.scope")
        );
        assert_eq!(cgroup_path("3:cpu:/a\n"), None);
    }

    #[test]
    fn names_are_the_container_else_the_deepest_unit_else_the_path() {
        let id = "3f2a9c1b2d4e5f60718293a4b5c6d7e8f9";
        assert_eq!(
            recognisable(&format!("/system.slice/docker-{id}.scope")),
            "docker 3f2a9c1b2d4e"
        );
        assert_eq!(
            recognisable(&format!("/machine.slice/libpod-{id}.scope/container")),
            "podman 3f2a9c1b2d4e"
        );
        assert_eq!(
            recognisable("/user.slice/user-1000.slice/session-3.scope"),
            "session-3.scope"
        );
        assert_eq!(
            recognisable("/system.slice/nginx.service/worker"),
            "nginx.service"
        );
        assert_eq!(recognisable("/feelbench-stall"), "/feelbench-stall");
        assert_eq!(recognisable("/"), "/");
    }

    #[test]
    fn a_process_is_read_below_its_root_and_a_gone_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("42")).unwrap();
        std::fs::write(
            dir.path().join("42/cgroup"),
            "0::/system.slice/cron.service\n",
        )
        .unwrap();
        let group = of_process(dir.path(), 42).unwrap();
        assert_eq!(
            (group.path.as_str(), group.name.as_str()),
            ("/system.slice/cron.service", "cron.service")
        );
        assert_eq!(of_process(dir.path(), 43), None);
    }
}
