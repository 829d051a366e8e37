//! SysV message queues: the one ctxmem's ring passes its tokens through, and
//! the removal of queues left behind. A SysV queue outlives every process,
//! and a process group that is SIGKILLed (the orchestrator ends every
//! scenario so) cannot remove its own, so each queue's key names its maker:
//! [`KEY_TAG`] in the top byte, the maker's pid below. A queue whose maker is
//! gone is left over, and [`remove_leftovers`] removes it.

use super::procfs::{read_process_stat, ProcError};
use std::io::{Error, ErrorKind};
use std::path::Path;

/// Top byte of the keys of feelbench's queues.
const KEY_TAG: u32 = 0xFB00_0000;
/// The bits of a key that hold its maker's pid (pids stay below 2^22).
const PID_MASK: u32 = 0x00FF_FFFF;

/// The key of the queue made by process `pid`.
fn key_of(pid: u32) -> libc::key_t {
    (KEY_TAG | (pid & PID_MASK)) as libc::key_t
}

/// The maker's pid, when `key` is the key of a feelbench queue.
fn maker_of(key: libc::key_t) -> Option<u32> {
    let key = key as u32;
    (key & !PID_MASK == KEY_TAG).then_some(key & PID_MASK)
}

/// The queue of this process could not be made.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// A queue under this process's key, left by a dead process with the
    /// same pid, could not be removed.
    #[error("a SysV message queue with key {key:#x} is in the way and cannot be removed: {error}")]
    InTheWay { key: libc::key_t, error: Error },
    /// msgget refused.
    #[error("cannot make a SysV message queue: {error} (the limit is /proc/sys/kernel/msgmni)")]
    Create { error: Error },
}

/// What is sent: a message with a type and no text.
#[repr(C)]
struct Token {
    mtype: libc::c_long,
}

/// A message queue of this process, removed when dropped.
#[derive(Debug)]
pub struct MessageQueue {
    id: libc::c_int,
}

impl MessageQueue {
    /// Makes this process's queue, readable and writable by its user only. A
    /// queue under the same key was left by a dead process with this pid,
    /// and is removed first.
    pub fn create() -> Result<Self, QueueError> {
        let key = key_of(std::process::id());
        let create = || {
            // SAFETY: msgget takes only integers.
            let id = unsafe { libc::msgget(key, libc::IPC_CREAT | libc::IPC_EXCL | 0o600) };
            match id {
                -1 => Err(Error::last_os_error()),
                id => Ok(Self { id }),
            }
        };
        match create() {
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                // SAFETY: msgget takes only integers.
                let old = unsafe { libc::msgget(key, 0) };
                remove(old).map_err(|error| QueueError::InTheWay { key, error })?;
                create()
            }
            other => other,
        }
        .map_err(|error| QueueError::Create { error })
    }

    /// Sends a message of type `mtype` (above 0), waiting for room if needed.
    pub fn send(&self, mtype: libc::c_long) -> std::io::Result<()> {
        let token = Token { mtype };
        retry_interrupted(|| {
            // SAFETY: `token` is a message buffer with the type and no text
            // (size 0), alive across the call.
            unsafe { libc::msgsnd(self.id, (&raw const token).cast(), 0, 0) }
        })
    }

    /// Waits for a message of type `mtype` and takes it.
    pub fn receive(&self, mtype: libc::c_long) -> std::io::Result<()> {
        let mut token = Token { mtype: 0 };
        retry_interrupted(|| {
            // SAFETY: `token` has room for the type and no text (size 0),
            // which is all the messages of this queue carry; it is alive
            // across the call.
            let got = unsafe { libc::msgrcv(self.id, (&raw mut token).cast(), 0, mtype, 0) };
            got as libc::c_int
        })
    }
}

impl Drop for MessageQueue {
    fn drop(&mut self) {
        let _ = remove(self.id);
    }
}

/// Calls `call` (a system call returning -1 on error) again while it is
/// interrupted by a signal.
fn retry_interrupted(mut call: impl FnMut() -> libc::c_int) -> std::io::Result<()> {
    loop {
        if call() != -1 {
            return Ok(());
        }
        let error = Error::last_os_error();
        if error.kind() != ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Removes queue `id`.
fn remove(id: libc::c_int) -> std::io::Result<()> {
    // SAFETY: IPC_RMID takes no buffer (null is allowed).
    match unsafe { libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()) } {
        -1 => Err(Error::last_os_error()),
        _ => Ok(()),
    }
}

/// A feelbench queue whose maker is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leftover {
    /// The queue's id.
    pub id: libc::c_int,
    /// The pid of the process that made it.
    pub maker: u32,
}

/// feelbench's queues in `<proc_root>/sysvipc/msg` that user `uid` made and
/// whose maker is gone (or a zombie). A kernel without SysV IPC has none.
pub fn find_leftovers(proc_root: &Path, uid: u32) -> Result<Vec<Leftover>, ProcError> {
    let path = proc_root.join("sysvipc/msg");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(ProcError::Read { path, error }),
    };
    let mut found = Vec::new();
    // Columns: key msqid perms cbytes qnum lspid lrpid uid gid cuid cgid ...
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let parsed = (|| {
            let key: libc::key_t = fields.first()?.parse().ok()?;
            let id: libc::c_int = fields.get(1)?.parse().ok()?;
            let creator_uid: u32 = fields.get(9)?.parse().ok()?;
            Some((key, id, creator_uid))
        })();
        let (key, id, creator_uid) = parsed.ok_or_else(|| ProcError::Parse {
            path: path.clone(),
            line: line.to_string(),
        })?;
        if let Some(maker) = maker_of(key) {
            if creator_uid == uid && !is_running(proc_root, maker) {
                found.push(Leftover { id, maker });
            }
        }
    }
    Ok(found)
}

/// Whether process `pid` is in `<proc_root>` and not a zombie.
fn is_running(proc_root: &Path, pid: u32) -> bool {
    read_process_stat(proc_root, pid).is_ok_and(|stat| stat.is_running())
}

/// Removes this user's left-over feelbench queues; returns one line per
/// queue removed or that could not be.
pub fn remove_leftovers(proc_root: &Path) -> Vec<String> {
    // SAFETY: geteuid takes nothing and cannot fail.
    let uid = unsafe { libc::geteuid() };
    let leftovers = match find_leftovers(proc_root, uid) {
        Ok(leftovers) => leftovers,
        Err(e) => return vec![format!("cannot look for left-over message queues: {e}")],
    };
    leftovers
        .into_iter()
        .map(|Leftover { id, maker }| match remove(id) {
            Ok(()) => format!("removed SysV message queue {id} left by process {maker}"),
            Err(e) => {
                format!("could not remove SysV message queue {id} left by process {maker}: {e}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_their_maker() {
        assert_eq!(maker_of(key_of(4_194_304)), Some(4_194_304));
        assert_eq!(maker_of(key_of(1)), Some(1));
        assert_eq!(maker_of(0), None, "IPC_PRIVATE");
        assert_eq!(maker_of(0x1234_5678), None);
    }

    /// A /proc with `sysvipc/msg` holding `text` and processes `(pid, state)`.
    fn fake_proc(text: &str, processes: &[(u32, &str)]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("sysvipc")).unwrap();
        std::fs::write(root.path().join("sysvipc/msg"), text).unwrap();
        for (pid, state) in processes {
            let dir = root.path().join(pid.to_string());
            std::fs::create_dir(&dir).unwrap();
            let stat = format!(
                "{pid} (fb-load (x)) {state} 1 {pid} {pid} 0 -1 4194560 0 0 0 0 1 1 0 0 20 0 1 0 5 0"
            );
            std::fs::write(dir.join("stat"), stat).unwrap();
        }
        root
    }

    const HEADER: &str = "       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid      stime      rtime      ctime\n";

    fn row(key: libc::key_t, id: i32, cuid: u32) -> String {
        format!("{key:>10} {id:>10}   600           0          0  4242  4243  {cuid:>4}     0  {cuid:>4}     0 1767000000 1767000000 1767000000\n")
    }

    #[test]
    fn only_own_feelbench_queues_of_dead_makers_are_left_over() {
        let text = [
            HEADER.to_string(),
            row(key_of(100), 1, 0), // maker 100 is alive
            row(key_of(200), 2, 0), // maker 200 is gone: left over
            row(key_of(250), 6, 0), // maker 250 is a zombie: left over
            row(key_of(300), 3, 7), // another user's
            row(0, 4, 0),           // IPC_PRIVATE, not feelbench's
            row(0x0102_0304, 5, 0), // someone else's key
        ]
        .concat();
        let root = fake_proc(&text, &[(100, "S"), (250, "Z")]);
        assert_eq!(
            find_leftovers(root.path(), 0).unwrap(),
            [
                Leftover { id: 2, maker: 200 },
                Leftover { id: 6, maker: 250 }
            ]
        );
    }

    #[test]
    fn no_queues_or_no_sysv_ipc_is_nothing_left_over_and_junk_is_an_error() {
        let root = fake_proc(HEADER, &[]);
        assert_eq!(find_leftovers(root.path(), 0).unwrap(), []);
        let bare = tempfile::tempdir().unwrap();
        assert_eq!(find_leftovers(bare.path(), 0).unwrap(), []);
        let junk = fake_proc(&format!("{HEADER}not a queue\n"), &[]);
        let err = find_leftovers(junk.path(), 0).unwrap_err().to_string();
        assert!(err.contains("not a queue"), "{err}");
    }
}
