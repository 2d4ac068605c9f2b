//! Validated depot paths (`//depot/dir/file`) and workspace-relative client paths (`dir/file`).
//!
//! Every `/`-separated segment is non-empty and never `.` or `..`; no path holds a NUL, another
//! control character, or the reserved `@`, `#` and `%`. Wildcards (`*`, `...`, and in view lines
//! `%%1`-`%%9`) appear only where a pattern or view line allows them, never in a single file's
//! path.

use std::borrow::Borrow;
use std::fmt;

/// Errors produced when validating depot or client paths.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The text is not a valid single-file depot path.
    #[error("invalid depot path {path:?}: {reason}")]
    InvalidDepotPath { path: String, reason: String },
    /// The text is not a valid workspace-relative client path.
    #[error("invalid client path {path:?}: {reason}")]
    InvalidClientPath { path: String, reason: String },
}

impl PathError {
    /// The text that was refused.
    pub fn path(&self) -> &str {
        match self {
            PathError::InvalidDepotPath { path, .. }
            | PathError::InvalidClientPath { path, .. } => path,
        }
    }
}

/// Which wildcards a path text may contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wildcards {
    /// No wildcards: a single file.
    None,
    /// `*` and `...` (file arguments).
    Glob,
    /// `*`, `...` and `%%1`-`%%9` (view lines).
    View,
}

/// Checks the characters and `/`-separated segments of `text` (without any leading `//`).
pub(crate) fn check_segments(text: &str, wild: Wildcards) -> Result<(), String> {
    if plainly_valid(text) {
        return Ok(());
    }
    segment_problem(text, wild)
}

/// True when `text` passes [`segment_problem`] whatever the wildcards allowed: no control,
/// reserved or wildcard byte, no `...`, and no empty, `.` or `..` segment. One pass over the
/// bytes for the common case; any other text gets the full check, which names the problem.
/// (Bytes of multi-byte UTF-8 characters are all >= 0x80, so none of them is refused.)
fn plainly_valid(text: &str) -> bool {
    // The current segment's length, whether it is all dots, and the current run of dots.
    let mut len = 0usize;
    let mut all_dots = true;
    let mut dots = 0usize;
    for &b in text.as_bytes() {
        match b {
            b'/' => {
                if len == 0 || (all_dots && len <= 2) {
                    return false;
                }
                len = 0;
                all_dots = true;
                dots = 0;
            }
            b'.' => {
                dots += 1;
                if dots == 3 {
                    return false;
                }
                len += 1;
            }
            0..=0x1f | 0x7f | b'@' | b'#' | b'%' | b'*' => return false,
            _ => {
                len += 1;
                all_dots = false;
                dots = 0;
            }
        }
    }
    len > 0 && !(all_dots && len <= 2)
}

/// Why `text` fails [`check_segments`] (the first problem, characters first), if it does.
fn segment_problem(text: &str, wild: Wildcards) -> Result<(), String> {
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        match c {
            '\0' => return Err("NUL byte not allowed".into()),
            c if c < ' ' || c == '\x7f' => {
                return Err(format!("control character {c:?} not allowed"));
            }
            '@' | '#' => return Err(format!("reserved character '{c}' not allowed")),
            '%' if wild == Wildcards::View => {
                let is_pos = bytes.get(i + 1) == Some(&b'%')
                    && bytes.get(i + 2).is_some_and(|d| (b'1'..=b'9').contains(d));
                let is_second = i > 0 && bytes[i - 1] == b'%';
                if !is_pos && !is_second {
                    return Err("'%' only allowed in positional wildcards %%1-%%9".into());
                }
            }
            '%' => return Err("reserved character '%' not allowed".into()),
            '*' if wild == Wildcards::None => return Err("wildcard '*' not allowed".into()),
            _ => {}
        }
    }
    if wild == Wildcards::None && text.contains("...") {
        return Err("wildcard '...' not allowed".into());
    }
    if wild == Wildcards::View && text.contains("%%%") {
        return Err("'%' only allowed in positional wildcards %%1-%%9".into());
    }
    for segment in text.split('/') {
        match segment {
            "" => return Err("empty path segment".into()),
            "." => return Err("'.' segment not allowed".into()),
            ".." => return Err("'..' segment not allowed".into()),
            _ => {}
        }
    }
    Ok(())
}

/// A single file's depot path, like `//depot/dir/file.c`.
///
/// A newtype over the path's text: equality, order and hash are the text's, so a set or map
/// keyed by `DepotPath` can be looked up with a `&str` (`Borrow<str>`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DepotPath(String);

/// Why `text` is not a single file's depot path, if it is not.
fn depot_path_problem(text: &str) -> Option<String> {
    let Some(rest) = text.strip_prefix("//") else {
        return Some("must start with '//'".into());
    };
    if let Err(reason) = check_segments(rest, Wildcards::None) {
        return Some(reason);
    }
    if !rest.contains('/') {
        return Some("needs a depot name and a file name".into());
    }
    None
}

impl DepotPath {
    /// Validates a depot path: `//depot/...segments`, no wildcards or reserved characters.
    pub fn parse(text: &str) -> Result<DepotPath, PathError> {
        match depot_path_problem(text) {
            None => Ok(DepotPath(text.to_string())),
            Some(reason) => Err(PathError::InvalidDepotPath {
                path: text.to_string(),
                reason,
            }),
        }
    }

    /// Validates a depot path held in a `String`, keeping its allocation (see [`Self::parse`]).
    pub fn parse_owned(text: String) -> Result<DepotPath, PathError> {
        match depot_path_problem(&text) {
            None => Ok(DepotPath(text)),
            Some(reason) => Err(PathError::InvalidDepotPath { path: text, reason }),
        }
    }

    /// Wraps a path the metadata store wrote, without validating it again.
    ///
    /// Only for values read back from the store: every path it holds was a `DepotPath` when
    /// written, so it was validated on the way in. Debug builds check that it still parses.
    pub fn from_stored(text: String) -> DepotPath {
        debug_assert!(
            depot_path_problem(&text).is_none(),
            "stored depot path {text:?} does not parse: {:?}",
            depot_path_problem(&text)
        );
        DepotPath(text)
    }

    /// The full path text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The path text, without copying it.
    pub fn into_string(self) -> String {
        self.0
    }

    /// The depot name (first segment), e.g. `depot`.
    pub fn depot(&self) -> &str {
        let rest = &self.0[2..];
        rest.split('/').next().unwrap_or(rest)
    }

    /// The last segment, e.g. `file.c`.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// Everything before the last `/`, e.g. `//depot/dir`.
    pub fn dir(&self) -> &str {
        match self.0.rfind('/') {
            Some(i) => &self.0[..i],
            None => &self.0,
        }
    }
}

impl fmt::Display for DepotPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Borrow<str> for DepotPath {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for DepotPath {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for DepotPath {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// A path relative to a workspace root, `/`-separated, like `dir/file.c`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientPath(String);

impl ClientPath {
    /// Validates a relative path with the same segment rules as [`DepotPath`].
    pub fn parse(text: &str) -> Result<ClientPath, PathError> {
        let err = |reason: String| PathError::InvalidClientPath {
            path: text.to_string(),
            reason,
        };
        if text.is_empty() {
            return Err(err("must not be empty".into()));
        }
        if text.starts_with('/') {
            return Err(err("must be relative (no leading '/')".into()));
        }
        check_segments(text, Wildcards::None).map_err(err)?;
        Ok(ClientPath(text.to_string()))
    }

    /// The path text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClientPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text of up to five characters over an alphabet holding each kind of byte the
    /// check cares about.
    fn short_texts(alphabet: &[char]) -> Vec<String> {
        let mut all = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..5 {
            last = last
                .iter()
                .flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}")))
                .collect();
            all.extend(last.iter().cloned());
        }
        all
    }

    #[test]
    fn the_fast_path_accepts_only_what_the_full_check_accepts() {
        let texts = short_texts(&[
            'a', '.', '/', '*', '%', '@', '#', '\u{1}', '\u{7f}', '\u{e9}',
        ]);
        for text in &texts {
            if plainly_valid(text) {
                for wild in [Wildcards::None, Wildcards::Glob, Wildcards::View] {
                    assert_eq!(segment_problem(text, wild), Ok(()), "{text:?} {wild:?}");
                }
            }
        }
    }

    #[test]
    fn the_fast_path_takes_every_valid_plain_text() {
        // Without wildcard or reserved characters the two agree exactly, so ordinary paths
        // never reach the full check.
        for text in short_texts(&['a', '.', '/', '\u{e9}']) {
            assert_eq!(
                plainly_valid(&text),
                segment_problem(&text, Wildcards::None).is_ok(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn depot_path_validation() {
        let cases: &[(&str, Option<&str>)] = &[
            ("//depot/file.c", None),
            ("//depot/dir/file.c", None),
            ("//depot/a b/c d.txt", None),
            ("//depot/a..b", None),
            ("//depot/.hidden", None),
            ("//depot/caf\u{e9}", None),
            ("", Some("must start with '//'")),
            ("/depot/x", Some("must start with '//'")),
            ("depot/x", Some("must start with '//'")),
            ("//depot", Some("needs a depot name and a file name")),
            ("//", Some("empty path segment")),
            ("//depot//x", Some("empty path segment")),
            ("//depot/x/", Some("empty path segment")),
            ("///x", Some("empty path segment")),
            ("//depot/../x", Some("'..' segment not allowed")),
            ("//depot/./x", Some("'.' segment not allowed")),
            ("//depot/x/..", Some("'..' segment not allowed")),
            ("//depot/a\0b", Some("NUL byte not allowed")),
            ("//depot/a\nb", Some("control character '\\n' not allowed")),
            (
                "//depot/a\x7fb",
                Some("control character '\\u{7f}' not allowed"),
            ),
            ("//depot/*.c", Some("wildcard '*' not allowed")),
            ("//depot/...", Some("wildcard '...' not allowed")),
            ("//depot/a...b", Some("wildcard '...' not allowed")),
            ("//depot/a@b", Some("reserved character '@' not allowed")),
            ("//depot/a#1", Some("reserved character '#' not allowed")),
            ("//depot/a%b", Some("reserved character '%' not allowed")),
        ];
        for (text, want) in cases {
            assert_eq!(
                DepotPath::parse_owned(text.to_string()),
                DepotPath::parse(text),
                "{text:?}: parse_owned differs from parse"
            );
            match (DepotPath::parse(text), want) {
                (Ok(p), None) => assert_eq!(p.as_str(), *text),
                (Err(e), Some(reason)) => {
                    assert_eq!(
                        e.to_string(),
                        format!("invalid depot path {text:?}: {reason}")
                    );
                }
                (got, _) => panic!("{text:?}: unexpected {got:?}"),
            }
        }
    }

    #[test]
    fn depot_path_parts() {
        let cases = [
            ("//depot/dir/file.c", "depot", "//depot/dir", "file.c"),
            ("//depot/file.c", "depot", "//depot", "file.c"),
            ("//d/a/b/c", "d", "//d/a/b", "c"),
        ];
        for (text, depot, dir, name) in cases {
            let p = DepotPath::parse(text).expect(text);
            assert_eq!(
                (p.depot(), p.dir(), p.file_name()),
                (depot, dir, name),
                "{text}"
            );
            assert_eq!(p.to_string(), text);
        }
    }

    #[test]
    fn depot_path_orders_and_hashes_as_its_text() {
        let texts = [
            "//depot/a",
            "//depot/a/b",
            "//depot/a.c",
            "//depot/B",
            "//d/caf\u{e9}",
        ];
        let mut paths: Vec<DepotPath> = texts
            .iter()
            .map(|t| DepotPath::parse(t).expect(t))
            .collect();
        let mut sorted = texts.to_vec();
        paths.sort();
        sorted.sort();
        assert_eq!(
            paths.iter().map(DepotPath::as_str).collect::<Vec<_>>(),
            sorted
        );
        let set: std::collections::HashSet<DepotPath> = paths.iter().cloned().collect();
        let tree: std::collections::BTreeSet<DepotPath> = paths.into_iter().collect();
        for text in texts {
            assert!(set.contains(text) && tree.contains(text), "{text}");
        }
        assert!(!set.contains("//depot/z"));
    }

    #[test]
    fn stored_path_is_taken_as_is() {
        let path = DepotPath::from_stored("//depot/dir/file.c".to_string());
        assert_eq!(path, DepotPath::parse("//depot/dir/file.c").expect("valid"));
        assert_eq!(path, "//depot/dir/file.c");
        assert_eq!(path.into_string(), "//depot/dir/file.c");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "does not parse")]
    fn stored_path_that_does_not_parse_is_caught_in_debug_builds() {
        DepotPath::from_stored("//depot/../x".to_string());
    }

    #[test]
    fn error_message_names_value() {
        let err = DepotPath::parse("//depot/../x").expect_err("invalid");
        assert_eq!(
            err.to_string(),
            "invalid depot path \"//depot/../x\": '..' segment not allowed"
        );
        assert_eq!(err.path(), "//depot/../x");
        let err = ClientPath::parse("../x").expect_err("invalid");
        assert_eq!(err.path(), "../x");
    }

    #[test]
    fn client_path_validation() {
        let cases: &[(&str, bool)] = &[
            ("file.c", true),
            ("dir/file.c", true),
            ("a b/c", true),
            ("", false),
            ("/abs", false),
            ("dir//x", false),
            ("dir/", false),
            ("../x", false),
            ("./x", false),
            ("a/../b", false),
            ("a\0b", false),
            ("a\tb", false),
            ("*.c", false),
            ("a/...", false),
            ("a@1", false),
            ("a#1", false),
            ("a%1", false),
        ];
        for (text, ok) in cases {
            let got = ClientPath::parse(text);
            assert_eq!(got.is_ok(), *ok, "{text:?}: {got:?}");
            if let Ok(p) = got {
                assert_eq!(p.to_string(), *text);
            }
        }
    }
}
