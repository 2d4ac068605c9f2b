//! Perforce wildcard patterns over `//`-rooted paths (`...`, `*`), plus the shared matcher.
//!
//! Matching uses a dynamic-programming table over (pattern token, path byte), so it runs in
//! O(len(pattern) * len(path)) time with no exponential backtracking.

use std::fmt;

use crate::path::{Wildcards, check_segments};

/// Errors produced when parsing a [`PathPattern`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// The text is not a valid path pattern.
    #[error("invalid path pattern {pattern:?}: {reason}")]
    Invalid { pattern: String, reason: String },
}

/// One element of a compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Tok {
    /// Literal text.
    Lit(String),
    /// `*`: any characters except `/`.
    Star,
    /// `...`: any characters including `/`.
    Dots,
    /// `%%n` (views only): like `*`, bound by its number.
    Pos(u8),
}

impl Tok {
    pub(crate) fn is_wildcard(&self) -> bool {
        !matches!(self, Tok::Lit(_))
    }
}

/// Splits already-validated text into tokens (`%%n` is recognised only when `positional`).
pub(crate) fn tokenize(text: &str, positional: bool) -> Vec<Tok> {
    let bytes = text.as_bytes();
    let mut toks = Vec::new();
    let mut lit_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let (tok, len) = if bytes[i] == b'*' {
            (Some(Tok::Star), 1)
        } else if bytes[i..].starts_with(b"...") {
            (Some(Tok::Dots), 3)
        } else if positional
            && bytes[i..].starts_with(b"%%")
            && bytes.get(i + 2).is_some_and(|d| (b'1'..=b'9').contains(d))
        {
            (Some(Tok::Pos(bytes[i + 2] - b'0')), 3)
        } else {
            (None, 1)
        };
        match tok {
            Some(tok) => {
                if lit_start < i {
                    toks.push(Tok::Lit(text[lit_start..i].to_string()));
                }
                toks.push(tok);
                i += len;
                lit_start = i;
            }
            None => i += len,
        }
    }
    if lit_start < bytes.len() {
        toks.push(Tok::Lit(text[lit_start..].to_string()));
    }
    toks
}

/// `table[pi * (n + 1) + si]` is true when `toks[pi..]` matches `path[si..]`.
fn match_table(toks: &[Tok], path: &str) -> Vec<bool> {
    let bytes = path.as_bytes();
    let n = bytes.len();
    let width = n + 1;
    let mut table = vec![false; (toks.len() + 1) * width];
    table[toks.len() * width + n] = true;
    for pi in (0..toks.len()).rev() {
        for si in (0..=n).rev() {
            if !path.is_char_boundary(si) {
                continue;
            }
            let next = si + path[si..].chars().next().map_or(0, char::len_utf8);
            let here = match &toks[pi] {
                Tok::Lit(lit) => {
                    bytes[si..].starts_with(lit.as_bytes())
                        && table[(pi + 1) * width + si + lit.len()]
                }
                Tok::Star | Tok::Pos(_) => {
                    table[(pi + 1) * width + si]
                        || (si < n && bytes[si] != b'/' && table[pi * width + next])
                }
                Tok::Dots => table[(pi + 1) * width + si] || (si < n && table[pi * width + next]),
            };
            table[pi * width + si] = here;
        }
    }
    table
}

/// Whether the literal prefix (if any) of `toks` can match the start of `path`.
fn prefix_ok(toks: &[Tok], path: &str) -> bool {
    match toks.first() {
        Some(Tok::Lit(lit)) => path.starts_with(lit.as_str()),
        _ => true,
    }
}

/// Whether `path` could match `toks` at all: it starts with the first literal, ends with the
/// last, and holds the ones between in order. Necessary, not sufficient; cheap enough to try
/// before the match table, which most paths then never reach (a protections table's
/// `//depot/.../*.key` against `//depot/main/a.c`).
fn literals_ok(toks: &[Tok], path: &str) -> bool {
    if !prefix_ok(toks, path) {
        return false;
    }
    let mut from = match toks.first() {
        Some(Tok::Lit(lit)) => lit.len(),
        _ => 0,
    };
    let last = toks.len().saturating_sub(1);
    let mut until = path.len();
    if let Some(Tok::Lit(lit)) = toks.last()
        && last > 0
    {
        if !path.ends_with(lit.as_str()) || path.len() < from + lit.len() {
            return false;
        }
        until = path.len() - lit.len();
    }
    for tok in toks.iter().take(last).skip(1) {
        if let Tok::Lit(lit) = tok {
            match path
                .get(from..until)
                .and_then(|rest| rest.find(lit.as_str()))
            {
                Some(at) => from += at + lit.len(),
                None => return false,
            }
        }
    }
    true
}

/// Whether `toks` matches the whole of `path`.
pub(crate) fn is_match(toks: &[Tok], path: &str) -> bool {
    if !toks.iter().any(Tok::is_wildcard) {
        let mut rest = path;
        for tok in toks {
            if let Tok::Lit(lit) = tok {
                match rest.strip_prefix(lit.as_str()) {
                    Some(after) => rest = after,
                    None => return false,
                }
            }
        }
        return rest.is_empty();
    }
    if let Some(fast) = single_wildcard(toks) {
        return fast.capture(path).is_some();
    }
    literals_ok(toks, path) && match_table(toks, path)[0]
}

/// A pattern with exactly one wildcard between optional literals (`//depot/a/...`,
/// `//depot/*.c`, `//ws/%%1`): by far the commonest shape in views and arguments, matched
/// without the general table.
struct SingleWildcard<'t> {
    prefix: &'t str,
    wild: &'t Tok,
    suffix: &'t str,
}

fn single_wildcard(toks: &[Tok]) -> Option<SingleWildcard<'_>> {
    let (prefix, rest) = match toks.first() {
        Some(Tok::Lit(p)) => (p.as_str(), &toks[1..]),
        _ => ("", toks),
    };
    match rest {
        [wild] if wild.is_wildcard() => Some(SingleWildcard {
            prefix,
            wild,
            suffix: "",
        }),
        [wild, Tok::Lit(suffix)] if wild.is_wildcard() => Some(SingleWildcard {
            prefix,
            wild,
            suffix,
        }),
        _ => None,
    }
}

impl SingleWildcard<'_> {
    /// The wildcard's capture when `path` matches.
    fn capture<'p>(&self, path: &'p str) -> Option<&'p str> {
        if path.len() < self.prefix.len() + self.suffix.len()
            || !path.starts_with(self.prefix)
            || !path.ends_with(self.suffix)
        {
            return None;
        }
        let middle = &path[self.prefix.len()..path.len() - self.suffix.len()];
        match self.wild {
            Tok::Dots => Some(middle),
            _ if middle.contains('/') => None,
            _ => Some(middle),
        }
    }
}

/// Matches `toks` against `path`, returning one captured substring per wildcard in order.
/// Earlier wildcards capture as much as possible (greedy).
pub(crate) fn captures<'a>(toks: &[Tok], path: &'a str) -> Option<Vec<&'a str>> {
    if let Some(fast) = single_wildcard(toks) {
        return fast.capture(path).map(|c| vec![c]);
    }
    captures_by_table(toks, path)
}

/// The general matcher behind [`captures`]: a table over (token, position).
fn captures_by_table<'a>(toks: &[Tok], path: &'a str) -> Option<Vec<&'a str>> {
    if !prefix_ok(toks, path) {
        return None;
    }
    let table = match_table(toks, path);
    let width = path.len() + 1;
    if !table[0] {
        return None;
    }
    let bytes = path.as_bytes();
    let mut caps = Vec::new();
    let mut si = 0;
    for (pi, tok) in toks.iter().enumerate() {
        match tok {
            Tok::Lit(lit) => si += lit.len(),
            wild => {
                let start = si;
                while si < path.len() && (matches!(wild, Tok::Dots) || bytes[si] != b'/') {
                    let next = si + path[si..].chars().next().map_or(1, char::len_utf8);
                    if !table[pi * width + next] {
                        break;
                    }
                    si = next;
                }
                caps.push(&path[start..si]);
            }
        }
    }
    Some(caps)
}

/// The text before the first wildcard token.
pub(crate) fn literal_prefix_of(toks: &[Tok]) -> &str {
    match toks.first() {
        Some(Tok::Lit(lit)) => lit,
        _ => "",
    }
}

/// A compiled Perforce file pattern such as `//depot/a/...` or `//depot/*.c`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PathPattern {
    text: String,
    toks: Vec<Tok>,
}

impl PathPattern {
    /// Parses a `//`-rooted pattern; `*` and `...` are allowed, `%%n` is not.
    pub fn parse(text: &str) -> Result<PathPattern, PatternError> {
        let err = |reason: String| PatternError::Invalid {
            pattern: text.to_string(),
            reason,
        };
        let rest = text
            .strip_prefix("//")
            .ok_or_else(|| err("must start with '//'".into()))?;
        check_segments(rest, Wildcards::Glob).map_err(err)?;
        Ok(PathPattern {
            text: text.to_string(),
            toks: tokenize(text, false),
        })
    }

    /// Whether `path` matches the whole pattern.
    pub fn matches(&self, path: &str) -> bool {
        is_match(&self.toks, path)
    }

    /// The text before the first wildcard (the whole text when there is none).
    pub fn literal_prefix(&self) -> &str {
        literal_prefix_of(&self.toks)
    }

    /// Whether the pattern contains `*` or `...`.
    pub fn has_wildcards(&self) -> bool {
        self.toks.iter().any(Tok::is_wildcard)
    }

    /// The original pattern text.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for PathPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_wildcard_shortcut_agrees_with_the_table() {
        let patterns = [
            "//depot/a/...",
            "//depot/...",
            "//depot/*.c",
            "//depot/a/*",
            "...",
            "*",
            "//ws/%%1.txt",
            "//depot/...z",
            "//depot/a/.../f.c",
            "//depot/*/x/*",
        ];
        let paths = [
            "//depot/a/b/c.c",
            "//depot/a/",
            "//depot/a",
            "//depot/x.c",
            "//depot/x/y.c",
            "//depot/z",
            "//depot/",
            "//ws/a.txt",
            "//ws/a/b.txt",
            "//depot/a/q/f.c",
            "//depot/é/x/ü",
            "",
        ];
        let mut shortcut_used = 0;
        for pattern in patterns {
            let toks = tokenize(pattern, true);
            for path in paths {
                let by_table = captures_by_table(&toks, path);
                assert_eq!(captures(&toks, path), by_table, "{pattern} on {path}");
                assert_eq!(
                    is_match(&toks, path),
                    by_table.is_some(),
                    "{pattern} on {path}"
                );
            }
            shortcut_used += usize::from(single_wildcard(&toks).is_some());
        }
        assert_eq!(
            shortcut_used, 9,
            "only the two-wildcard pattern needs the table"
        );
    }

    #[test]
    fn the_literal_filter_never_refuses_what_the_table_matches() {
        let patterns = [
            "//depot/main/.../*.key",
            "//depot/.../private/...",
            "//depot/*/x/*",
            "...a...a",
            "//a/...a",
            "*/*",
            "//depot/...é/*.c",
            "//depot/main/f.c",
            "//x/.../y/.../z",
        ];
        let paths = [
            "//depot/main/a/b.key",
            "//depot/main/a/b.c",
            "//depot/main/key",
            "//depot/q/private/f",
            "//depot/private/f",
            "//depot/y/x/z",
            "aa",
            "a",
            "//a/a",
            "//a/",
            "x/y",
            "//depot/aé/b.c",
            "//depot/main/f.c",
            "//depot/main/f.cc",
            "//x/y/z",
            "//x/a/y/b/z",
            "//x/z/y/",
            "",
        ];
        for pattern in patterns {
            let toks = tokenize(pattern, true);
            for path in paths {
                let by_table = match_table(&toks, path)[0];
                if by_table {
                    assert!(literals_ok(&toks, path), "{pattern} on {path}");
                }
                assert_eq!(is_match(&toks, path), by_table, "{pattern} on {path}");
            }
        }
    }

    #[test]
    fn parse_validation() {
        let cases: &[(&str, bool)] = &[
            ("//depot/...", true),
            ("//...", true),
            ("//depot/*.c", true),
            ("//ws/src/.../*.h", true),
            ("//depot/a...", true),
            ("//depot/file.c", true),
            ("//depot", true),
            ("", false),
            ("depot/...", false),
            ("/depot/...", false),
            ("//", false),
            ("//depot//x", false),
            ("//depot/../...", false),
            ("//depot/./x", false),
            ("//depot/%%1", false),
            ("//depot/a@1", false),
            ("//depot/a#1", false),
            ("//depot/a\0", false),
            ("//depot/a\x01", false),
        ];
        for (text, ok) in cases {
            let got = PathPattern::parse(text);
            assert_eq!(got.is_ok(), *ok, "{text:?}: {got:?}");
        }
    }

    #[test]
    fn matching() {
        let cases: &[(&str, &str, bool)] = &[
            ("//depot/...", "//depot/a", true),
            ("//depot/...", "//depot/a/b/c", true),
            ("//depot/...", "//depot/", true),
            ("//depot/...", "//depot", false),
            ("//depot/...", "//other/a", false),
            ("//...", "//anything/at/all", true),
            ("//depot/*.c", "//depot/main.c", true),
            ("//depot/*.c", "//depot/.c", true),
            ("//depot/*.c", "//depot/dir/main.c", false),
            ("//depot/*.c", "//depot/main.h", false),
            ("//depot/....c", "//depot/dir/main.c", true),
            ("//ws/src/.../*.h", "//ws/src/a.h", false),
            ("//ws/src/.../*.h", "//ws/src/x/a.h", true),
            ("//ws/src/.../*.h", "//ws/src/x/y/a.h", true),
            ("//ws/src/.../*.h", "//ws/src/x/y/a.c", false),
            ("//depot/a*b*c", "//depot/aXbYc", true),
            ("//depot/a*b*c", "//depot/abc", true),
            ("//depot/a*b*c", "//depot/ab/c", false),
            ("//depot/file.c", "//depot/file.c", true),
            ("//depot/file.c", "//depot/file.cc", false),
            ("//depot/*", "//depot/caf\u{e9}", true),
            ("//depot/*\u{e9}", "//depot/caf\u{e9}", true),
        ];
        for (pat, path, want) in cases {
            let p = PathPattern::parse(pat).expect(pat);
            assert_eq!(p.matches(path), *want, "{pat} vs {path}");
        }
    }

    #[test]
    fn prefix_and_wildcards() {
        let cases = [
            ("//depot/a/...", "//depot/a/", true),
            ("//depot/*.c", "//depot/", true),
            ("//...", "//", true),
            ("//depot/x.c", "//depot/x.c", false),
        ];
        for (pat, prefix, wild) in cases {
            let p = PathPattern::parse(pat).expect(pat);
            assert_eq!(p.literal_prefix(), prefix, "{pat}");
            assert_eq!(p.has_wildcards(), wild, "{pat}");
            assert_eq!(p.as_str(), pat);
        }
    }

    #[test]
    fn adversarial_input_is_fast() {
        let pat = format!("//d/{}x", "*...".repeat(200));
        let p = PathPattern::parse(&pat).expect("valid");
        let path = format!("//d/{}", "a".repeat(2000));
        let start = std::time::Instant::now();
        assert!(!p.matches(&path));
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn captures_are_greedy_and_char_aligned() {
        let toks = tokenize("//d/*...x", false);
        assert_eq!(
            captures(&toks, "//d/\u{e9}\u{e9}x"),
            Some(vec!["\u{e9}\u{e9}", ""])
        );
        let toks = tokenize("//d/.../*.c", false);
        assert_eq!(captures(&toks, "//d/a/b/c.c"), Some(vec!["a/b", "c"]));
        assert_eq!(captures(&toks, "//d/c.h"), None);
    }
}
