//! Writing a value to a /proc/sys or /sys file and reading it back as the
//! kernel shows it: a choice list's chosen word (`always madvise [never]`,
//! `none voluntary (full) lazy`), else the text with its blanks made single
//! spaces (`4\t4\t1\t7` is `4 4 1 7`).

use super::SettingError;
use crate::system::bracketed;
use std::io::Write as _;
use std::path::Path;

/// The value `text` shows: a choice list's chosen word, else the text with
/// its blanks made single spaces.
pub fn shown(text: &str) -> String {
    match bracketed(text) {
        Some(chosen) => chosen.to_string(),
        None => text.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// The value the file at `path` shows, for `setting`'s errors.
pub fn read(setting: &str, path: &Path) -> Result<String, SettingError> {
    std::fs::read_to_string(path)
        .map(|text| shown(&text))
        .map_err(|error| SettingError::Read {
            setting: setting.to_string(),
            path: path.to_path_buf(),
            error,
        })
}

/// Writes `value` to the file at `path` in one write, as `echo V > path`
/// does (sysfs and /proc/sys take a value in one write).
pub fn write(setting: &str, path: &Path, value: &str) -> Result<(), SettingError> {
    let error = |error| SettingError::Write {
        setting: setting.to_string(),
        path: path.to_path_buf(),
        value: value.to_string(),
        error,
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(error)?;
    file.write_all(format!("{value}\n").as_bytes())
        .map_err(error)
}

/// Writes `value` and reads it back: an error naming the setting when the
/// file shows another value.
pub fn write_checked(setting: &str, path: &Path, value: &str) -> Result<(), SettingError> {
    write(setting, path, value)?;
    check(setting, path, value)
}

/// An error naming the setting when the file at `path` does not show `value`.
pub fn check(setting: &str, path: &Path, value: &str) -> Result<(), SettingError> {
    let now = read(setting, path)?;
    if now == shown(value) {
        return Ok(());
    }
    Err(SettingError::ReadBack {
        setting: setting.to_string(),
        path: path.to_path_buf(),
        value: value.to_string(),
        shown: now,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_list_shows_its_chosen_word_and_blanks_are_one_space() {
        assert_eq!(shown("always madvise [never]\n"), "never");
        assert_eq!(shown("none voluntary (full) lazy\n"), "full");
        assert_eq!(shown("4\t4\t1\t7\n"), "4 4 1 7");
        assert_eq!(shown("60\n"), "60");
    }
}
