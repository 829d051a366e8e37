//! A `postgres://` URL split where the connection's parser (tokio-postgres's
//! `Config`) splits it, so that what is shown leaves out exactly what that
//! parser takes as the password: the user and password end at the first
//! `@` of the whole URL (so a password may hold `/`, `?`, `#`, `:`, `[`,
//! `%` or a space), the user at the first `:` of those; the host ends at
//! the next `/` or `?`, the database at the next `?`; each parameter's
//! key ends at `=`, its value at `&`. A URL that parser would read
//! otherwise than its writer meant (a second `@`, a user name holding a `/`
//! or `?`, a parameter it does not know) is refused, and no error repeats
//! any of the URL's text.

use std::borrow::Cow;

/// Why a URL is refused. The messages never hold the URL's text, which may
/// hold a password.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// More than one `@`: the parser ends the password at the first.
    #[error(
        "more than one @ (the connection would end the password at the first): write an @ \
         inside a password, user name or value as %40"
    )]
    SecondAt,
    /// The text before the `@` holds a `/` or `?`, so an `@` meant for a
    /// value would make the host, database or parameters a user name.
    #[error(
        "the user name before the @ holds a / or ?: write an @ inside a value as %40, and a \
         / or ? in a user name as %2F or %3F"
    )]
    UserNotAName,
    /// A parameter without `=`.
    #[error("parameter {0} has no = (write an & inside a value as %26)")]
    NoEquals(usize),
    /// A parameter that libpq does not know.
    #[error(
        "parameter {0} is not one of libpq's connection parameters (misspelt? write an & \
         inside a value as %26)"
    )]
    Unknown(usize),
    /// A parameter of libpq's that this client does not take.
    #[error("{0} is a libpq parameter feelbench does not support")]
    Unsupported(&'static str),
    /// Percent-encoding that does not decode to UTF-8 in a parameter's name.
    #[error("parameter {0}'s name is not UTF-8 once decoded")]
    NotUtf8(usize),
}

/// The parameters tokio-postgres's parser takes.
const CONNECTION_PARAMETERS: [&str; 19] = [
    "user",
    "password",
    "dbname",
    "options",
    "application_name",
    "sslmode",
    "sslnegotiation",
    "host",
    "hostaddr",
    "port",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
];

/// The parameters feelbench reads itself, and leaves out of what it gives
/// the parser (which refuses them or some of their values).
const OWN_PARAMETERS: [&str; 2] = ["sslmode", "sslrootcert"];

/// libpq's other parameters: named when refused, being no secret.
const UNSUPPORTED: [&str; 21] = [
    "passfile",
    "require_auth",
    "gssencmode",
    "gsslib",
    "gssdelegation",
    "krbsrvname",
    "service",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "sslcompression",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "requirepeer",
    "replication",
    "client_encoding",
    "fallback_application_name",
];

/// One parameter as written: `key=value` (no `Debug`: the value may be a
/// password).
#[derive(Clone, PartialEq, Eq)]
struct Param<'a> {
    /// The key, percent-decoded (as the parser compares it).
    key: String,
    /// The value as written.
    raw_value: &'a str,
}

impl Param<'_> {
    /// The value percent-decoded, as the parser reads it.
    fn value(&self) -> Cow<'_, str> {
        decoded(self.raw_value)
    }
}

/// A URL in its parts, as the connection's parser splits it (`Debug`
/// shows it without its password).
#[derive(Clone, PartialEq, Eq)]
pub struct Split<'a> {
    /// `postgres` or `postgresql`.
    scheme: &'a str,
    /// What comes before the first `@`: the user, then `:` and the
    /// password; `None` without an `@`.
    credentials: Option<&'a str>,
    /// The hosts and ports, as written.
    host: &'a str,
    /// The database as written (after `/`), when there is a `/`.
    path: Option<&'a str>,
    /// The parameters after `?`, in order.
    params: Vec<Param<'a>>,
}

impl<'a> Split<'a> {
    /// `text` split, when it is a PostgreSQL URL (`None` when it is not
    /// one: another scheme, or no scheme); refused when the parser would
    /// read it otherwise than its writer meant.
    pub fn of(text: &'a str) -> Result<Option<Self>, UrlError> {
        let Some((scheme, rest)) = ["postgres", "postgresql"]
            .into_iter()
            .find_map(|scheme| Some((scheme, text.strip_prefix(scheme)?.strip_prefix("://")?)))
        else {
            return Ok(None);
        };
        let (credentials, rest) = match rest.split_once('@') {
            Some((credentials, rest)) => (Some(credentials), rest),
            None => (None, rest),
        };
        if rest.contains('@') {
            return Err(UrlError::SecondAt);
        }
        let user = credentials.map(|c| c.split_once(':').map_or(c, |(user, _)| user));
        if user.is_some_and(|user| user.contains(['/', '?'])) {
            return Err(UrlError::UserNotAName);
        }
        let (host, rest) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        let (path, rest) = match rest.strip_prefix('/') {
            Some(path) => {
                let (path, rest) = path.split_at(path.find('?').unwrap_or(path.len()));
                (Some(path), rest)
            }
            None => (None, rest),
        };
        let params = match rest.strip_prefix('?') {
            Some(query) => params(query)?,
            None => Vec::new(),
        };
        Ok(Some(Split {
            scheme,
            credentials,
            host,
            path,
            params,
        }))
    }

    /// The URL without its password (the user's, or a `password`
    /// parameter), to show.
    pub fn shown(&self) -> String {
        let user = self
            .credentials
            .map(|c| c.split_once(':').map_or(c, |(user, _)| user));
        self.joined(user, |param| param.key != "password")
    }

    /// The URL as the connection's parser should read it, password and
    /// all, without the parameters feelbench reads itself.
    pub fn for_connection(&self) -> String {
        self.joined(self.credentials, |param| {
            !OWN_PARAMETERS.contains(&param.key.as_str())
        })
    }

    /// The value of the parameter `key`, decoded; the last when it is given
    /// twice (as the parser takes it).
    pub fn parameter(&self, key: &str) -> Option<Cow<'_, str>> {
        self.params
            .iter()
            .rev()
            .find(|param| param.key == key)
            .map(Param::value)
    }

    /// The URL again from its parts, with `user_part` before the `@` and
    /// the parameters `keep` keeps.
    fn joined(&self, user_part: Option<&str>, keep: impl Fn(&Param) -> bool) -> String {
        let mut url = format!("{}://", self.scheme);
        if let Some(user_part) = user_part {
            url.push_str(user_part);
            url.push('@');
        }
        url.push_str(self.host);
        if let Some(path) = self.path {
            url.push('/');
            url.push_str(path);
        }
        let kept: Vec<String> = self
            .params
            .iter()
            .filter(|param| keep(param))
            .map(|param| format!("{}={}", param.key, param.raw_value))
            .collect();
        if !kept.is_empty() {
            url.push('?');
            url.push_str(&kept.join("&"));
        }
        url
    }
}

impl std::fmt::Debug for Split<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Split({})", self.shown())
    }
}

/// The parameters of `query` (after the `?`): each key up to its `=`, its
/// value up to the next `&`, each key one of libpq's.
fn params(query: &str) -> Result<Vec<Param<'_>>, UrlError> {
    let mut params = Vec::new();
    let mut rest = query;
    while !rest.is_empty() {
        let number = params.len() + 1;
        let (key, after) = rest.split_once('=').ok_or(UrlError::NoEquals(number))?;
        let (raw_value, after) = after.split_once('&').unwrap_or((after, ""));
        rest = after;
        let key = decoded_utf8(key).ok_or(UrlError::NotUtf8(number))?;
        if let Some(name) = UNSUPPORTED.iter().find(|name| **name == key) {
            return Err(UrlError::Unsupported(name));
        }
        let known =
            CONNECTION_PARAMETERS.contains(&key.as_str()) || OWN_PARAMETERS.contains(&key.as_str());
        if !known {
            return Err(UrlError::Unknown(number));
        }
        params.push(Param { key, raw_value });
    }
    Ok(params)
}

/// `text` percent-decoded, as the parser decodes it, with bytes that are
/// not UTF-8 replaced.
fn decoded(text: &str) -> Cow<'_, str> {
    percent_encoding::percent_decode_str(text).decode_utf8_lossy()
}

/// `text` percent-decoded; `None` when that is not UTF-8 (which the parser
/// refuses).
fn decoded_utf8(text: &str) -> Option<String> {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .ok()
        .map(Cow::into_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The password tokio-postgres's parser takes from `url`, and its user.
    fn parsed(url: &str) -> (Option<String>, Option<String>) {
        let config: ::postgres::Config = url.parse().unwrap();
        (
            config
                .get_password()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
            config.get_user().map(str::to_string),
        )
    }

    #[test]
    fn the_password_is_what_the_parser_takes_and_is_never_shown() {
        for password in [
            "pa/ss",
            "pa?ss",
            "pa#ss",
            "pa:ss",
            "pa%ss",
            "pa[ss]",
            "pa ss",
            "pa&x=1",
            "p=ss",
            "/?#:[]& %",
        ] {
            let url =
                format!("postgres://lab:{password}@db.example:5433/feelbench?sslmode=require");
            let split = Split::of(&url).unwrap().unwrap();
            let (parser_password, user) = parsed(&split.for_connection());
            assert_eq!(parser_password.as_deref(), Some(password), "{url}");
            assert_eq!(user.as_deref(), Some("lab"));
            assert_eq!(
                split.shown(),
                "postgres://lab@db.example:5433/feelbench?sslmode=require",
                "{url}"
            );
        }
    }

    #[test]
    fn a_password_parameter_is_left_out_whatever_its_spelling() {
        for url in [
            "postgresql://db/feelbench?password=s3cret&user=lab",
            "postgresql://db/feelbench?pass%77ord=s3cret&user=lab",
        ] {
            let split = Split::of(url).unwrap().unwrap();
            assert_eq!(split.shown(), "postgresql://db/feelbench?user=lab");
            assert_eq!(parsed(&split.for_connection()).0.as_deref(), Some("s3cret"));
        }
    }

    #[test]
    fn urls_the_parser_would_misread_are_refused_without_their_text() {
        for (url, error) in [
            ("postgres://u:p@ss@db/fb", UrlError::SecondAt),
            ("postgres://u:secret@db/fb?user=a@b", UrlError::SecondAt),
            (
                "postgres://db/fb?password=secret@host",
                UrlError::UserNotAName,
            ),
            ("postgres://db/fb?password=secret&x", UrlError::NoEquals(2)),
            ("postgres://db/fb?password=se&cret=1", UrlError::Unknown(2)),
            (
                "postgres://db/fb?sslkey=/k",
                UrlError::Unsupported("sslkey"),
            ),
        ] {
            assert_eq!(Split::of(url), Err(error.clone()), "{url}");
            let said = error.to_string();
            assert!(!said.contains("secret") && !said.contains("cret"), "{said}");
        }
    }

    #[test]
    fn feelbenchs_own_parameters_are_kept_from_the_parser_but_shown() {
        let url =
            "postgres://lab@db/fb?sslmode=verify-full&sslrootcert=/etc/ca.pem&connect_timeout=3";
        let split = Split::of(url).unwrap().unwrap();
        assert_eq!(split.shown(), url);
        assert_eq!(
            split.for_connection(),
            "postgres://lab@db/fb?connect_timeout=3"
        );
        assert_eq!(split.parameter("sslmode").as_deref(), Some("verify-full"));
        assert_eq!(
            split.parameter("sslrootcert").as_deref(),
            Some("/etc/ca.pem")
        );
    }

    #[test]
    fn other_schemes_are_not_postgres_urls() {
        assert_eq!(Split::of("mysql://u:p@db"), Ok(None));
        assert_eq!(Split::of("runs.sqlite"), Ok(None));
        assert_eq!(Split::of("postgres:/db"), Ok(None));
    }

    #[test]
    fn a_parameters_name_that_is_not_utf8_is_refused() {
        assert_eq!(
            Split::of("postgres://db/fb?%ff=1"),
            Err(UrlError::NotUtf8(1))
        );
    }
}
