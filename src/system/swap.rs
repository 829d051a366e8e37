//! Swap files: a temporary one for the run (`--swap`), turned off and
//! removed when it is dropped, and [`remove`] for the clean-up after a run
//! that was killed before it could do that itself.
//!
//! The swap header is written here rather than by running `mkswap`: it is one
//! page holding a version, the last page's number, a bad-page count and the
//! `SWAPSPACE2` magic (the format of `union swap_header` in the kernel's
//! `include/linux/swap.h`, unchanged since Linux 2.2), so one code path works
//! whether or not util-linux is installed, and `swapon` itself verifies it.
//! The space is reserved with `fallocate` (ext4 and xfs accept such files for
//! swap); a file system without `fallocate` gets zeros written instead.

use anyhow::Context as _;
use nix::errno::Errno;
use nix::fcntl::{fallocate, FallocateFlags};
use std::ffi::CString;
use std::fs::File;
use std::io::Write as _;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

/// The magic string at the end of a version-1 swap header's page.
const MAGIC: &[u8] = b"SWAPSPACE2";
/// The header's version field.
const VERSION: u32 = 1;
/// Offset of the version field (after 1024 bytes left for boot loaders).
const INFO_OFFSET: usize = 1024;
/// mkswap's minimum: fewer pages are not worth a swap area.
const MIN_PAGES: u64 = 10;

/// A swap file that is on for as long as this value lives.
pub struct SwapFile {
    path: PathBuf,
}

impl SwapFile {
    /// Makes a swap file of `size_bytes` (rounded down to whole pages) at
    /// `path`, readable by root only, and turns it on. The caller records
    /// `path` before calling, so that a run killed in between is cleaned up.
    pub fn create(path: &Path, size_bytes: u64) -> anyhow::Result<Self> {
        let page_bytes = page_bytes()?;
        let pages = swap_pages(size_bytes, page_bytes)?;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("cannot make the swap file {}", path.display()))?;
        // From here on, dropping `swap` removes the file.
        let swap = Self {
            path: path.to_path_buf(),
        };
        reserve(&file, pages * page_bytes)
            .and_then(|()| file.write_all_at(&header(page_bytes, pages), 0))
            .and_then(|()| file.sync_all())
            .with_context(|| format!("cannot write the swap file {}", path.display()))?;
        swapon(path)?;
        Ok(swap)
    }
}

impl Drop for SwapFile {
    fn drop(&mut self) {
        if let Err(e) = remove(&self.path) {
            say!("warning: {e:#}");
        }
    }
}

/// The system's page size.
fn page_bytes() -> anyhow::Result<u64> {
    let size = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .context("cannot read the page size")?
        .context("the system does not say its page size")?;
    Ok(size as u64)
}

/// How many pages a swap file of `size_bytes` has, checked against what
/// mkswap and the header's 32-bit last-page field allow.
fn swap_pages(size_bytes: u64, page_bytes: u64) -> anyhow::Result<u64> {
    let pages = size_bytes / page_bytes;
    if pages < MIN_PAGES {
        anyhow::bail!(
            "--swap {size_bytes} is too small: a swap file needs at least {} bytes",
            MIN_PAGES * page_bytes
        );
    }
    if pages - 1 > u64::from(u32::MAX) {
        anyhow::bail!("--swap {size_bytes} is too large for one swap file");
    }
    Ok(pages)
}

/// The first page of a swap area of `pages` pages: the version-1 header.
/// The UUID and label stay zero (the kernel does not read them).
fn header(page_bytes: u64, pages: u64) -> Vec<u8> {
    let mut page = vec![0; page_bytes as usize];
    let last_page = u32::try_from(pages - 1).expect("checked by swap_pages");
    let nr_badpages = 0u32;
    for (index, field) in [VERSION, last_page, nr_badpages].into_iter().enumerate() {
        let at = INFO_OFFSET + 4 * index;
        page[at..at + 4].copy_from_slice(&field.to_ne_bytes());
    }
    let magic_at = page.len() - MAGIC.len();
    page[magic_at..].copy_from_slice(MAGIC);
    page
}

/// Gives `file` `len` bytes of real blocks (swap files may have no holes).
fn reserve(file: &File, len: u64) -> std::io::Result<()> {
    let len_off = libc::off_t::try_from(len).map_err(std::io::Error::other)?;
    match fallocate(file, FallocateFlags::empty(), 0, len_off) {
        Ok(()) => Ok(()),
        Err(Errno::EOPNOTSUPP) => write_zeros(file, len),
        Err(e) => Err(e.into()),
    }
}

/// Writes `len` zero bytes from the start of `file`.
fn write_zeros(mut file: &File, len: u64) -> std::io::Result<()> {
    let zeros = vec![0; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(zeros.len() as u64);
        file.write_all(&zeros[..n as usize])?;
        left -= n;
    }
    Ok(())
}

fn c_path(path: &Path) -> anyhow::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).context("swap path has a NUL byte")
}

/// Turns the swap file at `path` on.
fn swapon(path: &Path) -> anyhow::Result<()> {
    let c_path = c_path(path)?;
    // SAFETY: swapon takes a NUL-terminated path that lives across the call.
    if unsafe { libc::swapon(c_path.as_ptr(), 0) } == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    let hint = match err.raw_os_error() {
        Some(libc::EPERM) => "; turning swap on needs root (CAP_SYS_ADMIN)",
        Some(libc::EINVAL) => "; this file system cannot hold swap files (ext4 and xfs can; tmpfs, NFS and copy-on-write files cannot): choose another --workdir",
        _ => "",
    };
    Err(err).with_context(|| format!("swapon {}{hint}", path.display()))
}

/// Turns the swap file at `path` off (if it is on) and deletes it.
pub fn remove(path: &Path) -> anyhow::Result<()> {
    let c_path = c_path(path)?;
    // SAFETY: swapoff takes a NUL-terminated path that lives across the call.
    let ret = unsafe { libc::swapoff(c_path.as_ptr()) };
    let err = std::io::Error::last_os_error();
    // EINVAL: not an active swap area (already off); ENOENT: already gone.
    if ret == -1 && !matches!(err.raw_os_error(), Some(libc::EINVAL | libc::ENOENT)) {
        return Err(err).with_context(|| format!("swapoff {}", path.display()));
    }
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt as _;

    fn field(page: &[u8], index: usize) -> u32 {
        let at = INFO_OFFSET + 4 * index;
        u32::from_ne_bytes(page[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn header_holds_version_last_page_no_bad_pages_and_the_magic() {
        let page = header(4096, 65536);
        assert_eq!(page.len(), 4096);
        assert_eq!(&page[4086..], b"SWAPSPACE2");
        assert_eq!(
            [field(&page, 0), field(&page, 1), field(&page, 2)],
            [1, 65535, 0]
        );
        assert!(page[..INFO_OFFSET].iter().all(|&b| b == 0));
        assert!(page[INFO_OFFSET + 12..4086].iter().all(|&b| b == 0));
    }

    #[test]
    fn sizes_round_down_to_pages_within_limits() {
        assert_eq!(swap_pages((256 << 20) + 100, 4096).unwrap(), 65536);
        let err = swap_pages(9 * 4096, 4096).unwrap_err().to_string();
        assert!(err.contains("too small"), "{err}");
        assert!(swap_pages((u64::from(u32::MAX) + 2) * 4096, 4096).is_err());
    }

    /// Our header is the one mkswap writes, UUID aside (where mkswap exists).
    #[test]
    fn header_matches_mkswap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("swap");
        let page_bytes = page_bytes().unwrap();
        let pages = 64;
        std::fs::write(&path, vec![0; (pages * page_bytes) as usize]).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        let Ok(status) = std::process::Command::new("mkswap")
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .status()
        else {
            crate::system::skip(
                "mkswap is not on PATH (util-linux; /sbin is often not on a plain user's PATH)",
            );
            return;
        };
        assert!(status.success());
        let mut theirs = std::fs::read(&path).unwrap();
        theirs.truncate(page_bytes as usize);
        // sws_uuid: 16 bytes after version, last_page and nr_badpages.
        theirs[INFO_OFFSET + 12..INFO_OFFSET + 28].fill(0);
        assert_eq!(theirs, header(page_bytes, pages));
    }

    #[test]
    fn zeros_leave_no_holes() {
        let file = tempfile::tempfile().unwrap();
        let len = (3 << 20) + 4096;
        write_zeros(&file, len).unwrap();
        let meta = file.metadata().unwrap();
        assert_eq!(meta.len(), len);
        assert!(meta.blocks() * 512 >= len, "{} blocks", meta.blocks());
    }

    #[test]
    fn removing_a_file_that_is_not_swap_or_not_there_succeeds() {
        if !nix::unistd::geteuid().is_root() {
            crate::system::skip("needs root (swapoff)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("swap");
        std::fs::write(&path, b"x").unwrap();
        remove(&path).unwrap();
        assert!(!path.exists());
        remove(&path).unwrap();
    }
}
