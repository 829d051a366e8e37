//! Build script: names the commit feelbench is built from, for every run
//! document to record (`FEELBENCH_COMMIT`, read by
//! `report::schema::ToolInfo::this_build`). A `FEELBENCH_COMMIT` given to
//! the build wins (a package built from a source archive, which has no
//! checkout); else `git rev-parse HEAD` when the crate is the top of a git
//! checkout (not a source archive unpacked inside some other repository);
//! else `unknown`. The script runs again when HEAD or the branch it points
//! to moves, not at every build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=FEELBENCH_COMMIT");
    let given = std::env::var("FEELBENCH_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty());
    let commit = given
        .or_else(checked_out_commit)
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=FEELBENCH_COMMIT={}", commit.trim());
}

/// The crate's own directory.
fn crate_dir() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
}

/// What `git ARGS` prints in the crate's directory, trimmed; `None` when
/// git is missing or fails.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(crate_dir())
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    out.status.success().then(|| text.trim().to_string())
}

/// The commit checked out, when the crate is the top of a git checkout;
/// asks cargo to run the script again when it moves.
fn checked_out_commit() -> Option<String> {
    let top = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != crate_dir().canonicalize().ok()? {
        return None;
    }
    watch(Path::new(&git(&["rev-parse", "--git-path", "HEAD"])?));
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        // A branch's commit is in its own file, or in packed-refs until
        // the next commit writes that file (in its directory).
        let loose = crate_dir().join(git(&["rev-parse", "--git-path", &branch])?);
        match loose.exists() {
            true => watch(&loose),
            false => watch(loose.parent()?),
        }
        watch(Path::new(&git(&[
            "rev-parse",
            "--git-path",
            "packed-refs",
        ])?));
    }
    git(&["rev-parse", "HEAD"])
}

/// Runs the script again when `path` (relative to the crate's directory,
/// as git gives it) changes; a path that does not exist is left alone, as
/// cargo would run the script at every build for it.
fn watch(path: &Path) {
    let path = crate_dir().join(path);
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
