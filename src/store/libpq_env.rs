//! What libpq would read beside a connection URL: its environment
//! (`PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`, `PGSSLMODE`,
//! `PGSSLROOTCERT`), its password file (`PGPASSFILE`, else `~/.pgpass`) and
//! its root certificate file (`~/.postgresql/root.crt`), so a lab keeps
//! credentials and its authority where its other PostgreSQL tools find
//! them, and never in a URL that a shell history or a run document would
//! keep.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

/// A libpq environment variable, `None` when unset or empty.
pub fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The password file libpq reads: `PGPASSFILE`, else `~/.pgpass`.
pub fn password_file() -> Option<PathBuf> {
    var("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| Path::new(&home).join(".pgpass")))
}

/// The root certificate file libpq reads: `given` (the URL's
/// `sslrootcert`), else `PGSSLROOTCERT`, else `~/.postgresql/root.crt`;
/// `None` without a home. It need not exist.
pub fn root_certificate_file(given: Option<&Path>) -> Option<PathBuf> {
    given
        .filter(|path| !path.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .or_else(|| var("PGSSLROOTCERT").map(PathBuf::from))
        .or_else(|| var("HOME").map(|home| Path::new(&home).join(".postgresql/root.crt")))
}

/// What looking in the password file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PassFile {
    /// A password for the connection.
    Found(String),
    /// No file, or no line for the connection.
    Absent,
    /// A file libpq would ignore too, and why.
    Ignored(String),
}

/// The password the file at `path` gives for `host:port:database:user`,
/// as libpq looks it up: the first matching line wins, `*` matches
/// anything, `\` escapes `:` and `\`, and a file that its group or others
/// may read is ignored.
pub fn password_for(path: &Path, host: &str, port: u16, database: &str, user: &str) -> PassFile {
    let Ok(meta) = std::fs::metadata(path) else {
        return PassFile::Absent;
    };
    if !meta.is_file() {
        return PassFile::Ignored(format!("password file {} is not a file", path.display()));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return PassFile::Ignored(format!(
            "password file {} is readable by its group or others, so it is not read \
             (chmod 600 it)",
            path.display()
        ));
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return PassFile::Absent;
    };
    let port = port.to_string();
    let wanted = [host, port.as_str(), database, user];
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .filter_map(fields)
        .find(|fields| {
            fields[..4]
                .iter()
                .zip(wanted)
                .all(|(field, want)| field == "*" || field == want)
        })
        .map_or(PassFile::Absent, |mut fields| {
            PassFile::Found(fields.remove(4))
        })
}

/// The five fields of a password file line (`host:port:db:user:password`),
/// unescaped; `None` for a line of another shape.
fn fields(line: &str) -> Option<Vec<String>> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut()?.push(chars.next().unwrap_or('\\')),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut()?.push(c),
        }
    }
    (fields.len() == 5).then_some(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str, mode: u32) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        file
    }

    #[test]
    fn the_first_matching_line_gives_the_password() {
        let f = file(
            "# lab\nother:5432:*:*:no\ndb.lab:*:feelbench:ci:first\n*:*:*:*:second\n",
            0o600,
        );
        let look = |host, db, user| password_for(f.path(), host, 5432, db, user);
        assert_eq!(
            look("db.lab", "feelbench", "ci"),
            PassFile::Found("first".into())
        );
        assert_eq!(
            look("db.lab", "other", "ci"),
            PassFile::Found("second".into())
        );
    }

    #[test]
    fn escaped_colons_and_backslashes_are_part_of_a_field() {
        let f = file("h:5432:d:u:pa\\:ss\\\\word\n", 0o600);
        assert_eq!(
            password_for(f.path(), "h", 5432, "d", "u"),
            PassFile::Found("pa:ss\\word".into())
        );
        assert_eq!(
            password_for(f.path(), "h", 5433, "d", "u"),
            PassFile::Absent
        );
    }

    #[test]
    fn a_file_others_may_read_is_ignored_like_libpq_does() {
        let f = file("*:*:*:*:secret\n", 0o644);
        let PassFile::Ignored(why) = password_for(f.path(), "h", 5432, "d", "u") else {
            panic!("a 0644 password file was read");
        };
        assert!(
            why.contains("chmod 600") && !why.contains("secret"),
            "{why}"
        );
    }
}
