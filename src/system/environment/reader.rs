//! The reader every part of the capture goes through: it reads /proc and
//! /sys below the run's [`Roots`], and turns a file that exists but cannot
//! be read or understood into an absent value plus a note in `unreadable`.

use super::Roots;
use crate::system::procfs::ProcError;
use crate::system::read_optional;

/// Collects failures as notes, turning each into an absent value.
pub(super) struct Reader<'a> {
    pub(super) roots: &'a Roots,
    pub(super) unreadable: Vec<String>,
}

impl Reader<'_> {
    /// The value of a reader, or `None` with its error noted.
    pub(super) fn keep<T>(&mut self, result: Result<Option<T>, ProcError>) -> Option<T> {
        result.unwrap_or_else(|e| {
            self.unreadable.push(e.to_string());
            None
        })
    }

    /// The trimmed text of a /proc file.
    pub(super) fn proc(&mut self, rel: &str) -> Option<String> {
        let path = self.roots.proc_root.join(rel);
        self.keep(read_optional(&path))
            .map(|t| t.trim().to_string())
    }

    /// The trimmed text of a /sys file.
    pub(super) fn sys(&mut self, rel: &str) -> Option<String> {
        let path = self.roots.sys_root.join(rel);
        self.keep(read_optional(&path))
            .map(|t| t.trim().to_string())
    }

    /// A number in a /proc file; a file holding something else is noted.
    pub(super) fn proc_number<T: std::str::FromStr>(&mut self, rel: &str) -> Option<T> {
        let text = self.proc(rel)?;
        let parsed = text.parse().ok();
        if parsed.is_none() {
            self.unreadable.push(
                ProcError::Parse {
                    path: self.roots.proc_root.join(rel),
                    line: text,
                }
                .to_string(),
            );
        }
        parsed
    }
}
