//! A suite file as written: TOML read into [`RawSuite`], every name and
//! value kept with where it stands in the file, so that what is wrong is
//! said with the file and line.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// A suite file's fields, as the file has them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawSuite {
    pub name: Spanned<String>,
    pub version: Spanned<u32>,
    pub summary: String,
    /// Built-in suites whose groups and settings this one takes.
    #[serde(default)]
    pub include: Vec<Spanned<String>>,
    /// Options of `feelbench run` by their long name.
    #[serde(default)]
    pub settings: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    /// Options applied only when run as root.
    #[serde(default)]
    pub root_settings: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    #[serde(default, rename = "group")]
    pub groups: Vec<RawGroup>,
}

/// Probes to run under loads, as the file has them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGroup {
    pub probes: Spanned<Vec<Spanned<String>>>,
    pub loads: Spanned<Vec<Spanned<String>>>,
    /// Times each scenario is measured, at least.
    #[serde(default)]
    pub repeat: Option<Spanned<u32>>,
}

/// Where something is wrong in a suite file, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {what}")]
pub struct FileError {
    /// The file as the user named it, or `built-in suite NAME`.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    pub what: String,
}

/// A suite's text, with the name it is known by, for messages.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The file as the user named it, or `built-in suite NAME`.
    pub file: &'a str,
    pub text: &'a str,
}

impl Source<'_> {
    /// The 1-based line of byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// The error `what` at the place `span` starts.
    pub fn error_at(&self, span: std::ops::Range<usize>, what: impl Into<String>) -> FileError {
        FileError {
            file: self.file.to_string(),
            line: self.line_of(span.start),
            what: what.into(),
        }
    }

    /// The suite as written, or where the TOML or its fields are wrong.
    pub fn parse(&self) -> Result<RawSuite, FileError> {
        toml::from_str(self.text).map_err(|e| {
            let what = e.message().trim().to_string();
            self.error_at(e.span().unwrap_or(0..0), what)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RawSuite, FileError> {
        Source {
            file: "s.toml",
            text,
        }
        .parse()
    }

    #[test]
    fn a_malformed_value_is_said_with_its_line() {
        let text = "name = \"s\"\nversion = \"one\"\nsummary = \"x\"\n";
        let err = parse(text).unwrap_err();
        assert_eq!((err.file.as_str(), err.line), ("s.toml", 2));
        assert!(err.to_string().starts_with("s.toml:2: "), "{err}");
    }

    #[test]
    fn an_unknown_field_is_refused_with_its_line() {
        let text = "name = \"s\"\nversion = 1\nsummary = \"x\"\n[[group]]\nprobes = [\"x\"]\nloads = [\"none\"]\ncolour = 3\n";
        let err = parse(text).unwrap_err();
        assert_eq!(err.line, 7, "{err}");
        assert!(err.what.contains("colour"), "{err}");
    }

    #[test]
    fn names_keep_their_lines() {
        let text = "name = \"s\"\nversion = 1\nsummary = \"x\"\n\n[[group]]\nprobes = [\"x\",\n  \"audio\"]\nloads = [\"none\"]\n";
        let suite = parse(text).unwrap();
        let source = Source { file: "s", text };
        let audio = &suite.groups[0].probes.get_ref()[1];
        assert_eq!(source.line_of(audio.span().start), 7);
    }
}
