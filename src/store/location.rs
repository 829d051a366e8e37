//! Where a store is: a SQLite file, or a PostgreSQL database named by a
//! URL. With neither `--store` nor `FEELBENCH_STORE`, the store is
//! `store.sqlite` in the user's data directory (`$XDG_DATA_HOME/feelbench`,
//! else `~/.local/share/feelbench`).

use super::tls::SslMode;
use super::url::Split;
use std::fmt;
use std::path::{Path, PathBuf};

/// The environment variable that names the store when `--store` does not.
pub const STORE_VAR: &str = "FEELBENCH_STORE";

/// A store's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database.
    Postgres(PostgresUrl),
}

/// A `postgres://` or `postgresql://` URL, checked and split as the
/// connection's parser splits it ([`super::url`]). It may hold a password,
/// so it is shown (`Display`, `Debug`) without what that parser takes as
/// the password, and only the connection reads it whole.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl(Box<UrlParts>);

/// What a [`PostgresUrl`] keeps (boxed: a command's options hold one).
#[derive(Clone, PartialEq, Eq)]
struct UrlParts {
    /// For the connection's parser: password and all, without the
    /// parameters feelbench reads itself.
    connection: String,
    /// The URL without its password.
    shown: String,
    /// `sslmode`, when the URL gives it.
    ssl_mode: Option<SslMode>,
    /// `sslrootcert`, when the URL gives it.
    root_certificate: Option<PathBuf>,
}

impl PostgresUrl {
    /// The URL `text`, when it is one of PostgreSQL's; why it cannot be
    /// used, in words that never repeat it.
    fn parse(text: &str) -> Result<Option<Self>, String> {
        let unusable = |why: &dyn fmt::Display| {
            format!(
                "a postgres:// URL that cannot be used (not shown: it may hold a password): {why}"
            )
        };
        let Some(split) = Split::of(text).map_err(|e| unusable(&e))? else {
            return Ok(None);
        };
        let ssl_mode = match split.parameter("sslmode") {
            Some(word) => Some(
                SslMode::parse(&word)
                    .ok_or_else(|| unusable(&format!("sslmode takes {}", SslMode::CHOICES)))?,
            ),
            None => None,
        };
        let root_certificate = split.parameter("sslrootcert").map(|p| PathBuf::from(&*p));
        let connection = split.for_connection();
        if let Err(error) = connection.parse::<::postgres::Config>() {
            let cause = std::error::Error::source(&error)
                .map(|c| format!(": {c}"))
                .unwrap_or_default();
            return Err(unusable(&format!("{error}{cause}")));
        }
        Ok(Some(Self(Box::new(UrlParts {
            connection,
            shown: split.shown(),
            ssl_mode,
            root_certificate,
        }))))
    }

    /// The URL for the connection's parser, password and all: for the
    /// connection only.
    pub(super) fn connection_text(&self) -> &str {
        &self.0.connection
    }

    /// The `sslmode` the URL gives.
    pub(super) fn ssl_mode(&self) -> Option<SslMode> {
        self.0.ssl_mode
    }

    /// The `sslrootcert` the URL gives.
    pub(super) fn root_certificate(&self) -> Option<&Path> {
        self.0.root_certificate.as_deref()
    }
}

/// A command-line argument with the password of any PostgreSQL URL in it
/// left out (`postgres://u:pw@h/db`, `--store=postgres://u:pw@h/db`), for
/// what is kept or shown of a command line: a URL that cannot be split
/// safely is left out from its scheme on.
pub fn without_password(arg: &str) -> String {
    let Some(at) = url_start(arg) else {
        return arg.to_string();
    };
    let (head, url) = arg.split_at(at);
    match Split::of(url) {
        Ok(Some(split)) => format!("{head}{}", split.shown()),
        _ => format!("{head}postgres://(not shown)"),
    }
}

/// `text` (a message) with every PostgreSQL URL that an argument of this
/// process holds shown without its password: for a message that repeats an
/// argument given where no URL was expected (a run file, an argument clap
/// does not take).
pub fn without_argument_passwords(text: &str) -> String {
    let args: Vec<String> = std::env::args_os()
        .filter_map(|arg| arg.into_string().ok())
        .collect();
    without_passwords_of(text, &args)
}

/// `text` with the PostgreSQL URL in each of `args`, wherever it appears,
/// shown without its password.
fn without_passwords_of(text: &str, args: &[String]) -> String {
    args.iter()
        .filter_map(|arg| Some(&arg[url_start(arg)?..]))
        .fold(text.to_string(), |text, url| {
            text.replace(url, &without_password(url))
        })
}

/// Where the first PostgreSQL URL in `text` starts.
fn url_start(text: &str) -> Option<usize> {
    ["postgres://", "postgresql://"]
        .iter()
        .filter_map(|scheme| text.find(scheme))
        .min()
}

impl fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.shown)
    }
}

impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PostgresUrl({})", self.0.shown)
    }
}

impl StoreLocation {
    /// The store `text` names: a path, or a URL of a database.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("the store is an empty name: give a path or a postgres:// URL".into());
        }
        if let Some(url) = PostgresUrl::parse(text)? {
            return Ok(StoreLocation::Postgres(url));
        }
        if let Some((scheme, _)) = text.split_once("://") {
            return Err(format!(
                "{scheme}:// is not a store this feelbench can use: give a path to a SQLite file \
                 or a postgres:// URL"
            ));
        }
        Ok(StoreLocation::Sqlite(PathBuf::from(text)))
    }

    /// The store used when none is named: `FEELBENCH_STORE`, else the
    /// user's data directory; `None` when there is no home to put it in.
    pub fn default_location() -> Result<Option<Self>, String> {
        if let Some(named) = std::env::var_os(STORE_VAR).filter(|v| !v.is_empty()) {
            let text = named
                .into_string()
                .map_err(|_| format!("{STORE_VAR} is not valid UTF-8"))?;
            return Self::parse(&text)
                .map(Some)
                .map_err(|why| format!("{STORE_VAR}: {why}"));
        }
        Ok(Self::local_default())
    }

    /// The SQLite store of this user, whatever `FEELBENCH_STORE` says:
    /// where runs sent to a database are kept too, and wait when it cannot
    /// be reached. `None` when there is no home to put it in.
    pub fn local() -> Result<Option<Self>, String> {
        match Self::default_location()? {
            Some(StoreLocation::Postgres(_)) => Ok(Self::local_default()),
            other => Ok(other),
        }
    }

    /// `store.sqlite` in the user's data directory.
    fn local_default() -> Option<Self> {
        let data = std::env::var_os("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
        data.map(|dir| StoreLocation::Sqlite(dir.join("feelbench").join("store.sqlite")))
    }
}

impl fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreLocation::Sqlite(path) => write!(f, "{}", path.display()),
            StoreLocation::Postgres(url) => write!(f, "{url}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_postgres_url_is_shown_without_its_password() {
        for (given, shown) in [
            (
                "postgres://lab:s3cret@db.example:5433/feelbench?sslmode=require",
                "postgres://lab@db.example:5433/feelbench?sslmode=require",
            ),
            (
                "postgresql://db/feelbench?password=s3cret&user=lab",
                "postgresql://db/feelbench?user=lab",
            ),
            ("postgres://db", "postgres://db"),
        ] {
            let location = StoreLocation::parse(given).unwrap();
            assert_eq!(location.to_string(), shown);
            assert!(!format!("{location:?}").contains("s3cret"));
        }
    }

    #[test]
    fn a_command_line_keeps_no_password() {
        assert_eq!(
            without_password("--store=postgres://lab:s3cret@db/feelbench"),
            "--store=postgres://lab@db/feelbench"
        );
        assert_eq!(
            without_password("postgresql://lab:s3cret@db"),
            "postgresql://lab@db"
        );
        assert_eq!(without_password("--probe"), "--probe");
    }

    #[test]
    fn a_password_holding_what_ends_a_host_or_path_is_still_left_out() {
        for password in ["s3/cret", "s3?cret", "s3/c?ret#x", "s3:cr[e]t %"] {
            let url = format!("postgres://lab:{password}@db:5433/feelbench?sslmode=require");
            let shown = "postgres://lab@db:5433/feelbench?sslmode=require";
            assert_eq!(StoreLocation::parse(&url).unwrap().to_string(), shown);
            assert_eq!(
                without_password(&format!("--store={url}")),
                format!("--store={shown}")
            );
            assert_eq!(
                without_password(&format!("psql {url} -c 'x'")),
                format!("psql {shown} -c 'x'")
            );
        }
    }

    #[test]
    fn a_message_repeating_an_argument_shows_its_url_without_the_password() {
        let args = [
            "feelbench",
            "compare",
            "postgres://lab:s3/c et@db/fb",
            "--x=postgres://u:pw@h",
        ]
        .map(String::from);
        assert_eq!(
            without_passwords_of(
                "cannot read postgres://lab:s3/c et@db/fb: no such file; '--x=postgres://u:pw@h'",
                &args
            ),
            "cannot read postgres://lab@db/fb: no such file; '--x=postgres://u@h'"
        );
    }

    #[test]
    fn a_url_that_cannot_be_used_is_never_repeated() {
        for url in [
            "postgres://u:s3cret@[::1",
            "postgres://u:s3@cret@db/fb",
            "postgres://u:s3cret@db:port/fb",
            "postgres://u:s3cret@db/fb?sslmode=sometimes",
            "postgres://u:s3cret@db/fb?colour=red",
            "postgres://db/fb?password=s3cret@db",
        ] {
            let why = StoreLocation::parse(url).unwrap_err();
            assert!(
                why.starts_with("a postgres:// URL that cannot be used"),
                "{why}"
            );
            for piece in ["s3", "cret", "[::1"] {
                assert!(!why.contains(piece), "{url}: {why}");
            }
            let kept = without_password(&format!("x {url}"));
            assert!(!kept.contains("s3") && !kept.contains("cret"), "{kept}");
        }
    }

    #[test]
    fn other_schemes_are_refused_and_paths_are_sqlite() {
        assert!(StoreLocation::parse("mysql://db").is_err());
        assert!(StoreLocation::parse("postgres://db?sslmode=sometimes").is_err());
        assert!(StoreLocation::parse("postgres://db?sslmode=verify-full").is_ok());
        assert!(StoreLocation::parse("").is_err());
        assert_eq!(
            StoreLocation::parse("runs.sqlite").unwrap(),
            StoreLocation::Sqlite(PathBuf::from("runs.sqlite"))
        );
    }
}
