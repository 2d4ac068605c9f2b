//! Perforce view mappings (client views, branch views): parsing lines and translating paths.
//!
//! Later lines take precedence over earlier ones on both sides: a path maps through the last
//! line whose source side matches it, and the result is kept only if no later line claims the
//! result on the other side (so `translate` and `translate_back` are mutual inverses).
//!
//! Both sides of a line carry the same wildcards (`...`, `*`, `%%1`-`%%9`, counted as a
//! multiset, as Perforce requires). Each wildcard on one side takes its text from the next
//! unused wildcard of the same kind on the other side; `%%n` takes it from `%%n`.

use std::fmt;

use crate::path::{Wildcards, check_segments};
use crate::pattern::{Tok, captures, is_match, literal_prefix_of, tokenize};

/// Errors produced when parsing view lines or building views.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    /// The line is not `[-|+]LEFT RIGHT`.
    #[error("invalid view line {line:?}: {reason}")]
    InvalidLine { line: String, reason: String },
    /// One side of a line is not a valid view path.
    #[error("invalid view path {path:?}: {reason}")]
    InvalidPath { path: String, reason: String },
    /// The two sides use different wildcards.
    #[error("view line {line:?}: wildcards differ between sides (left: {left}; right: {right})")]
    WildcardMismatch {
        line: String,
        left: String,
        right: String,
    },
}

/// What a view line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineKind {
    /// A plain mapping.
    Include,
    /// `-`: unmaps what it matches.
    Exclude,
    /// `+`: an overlay mapping (treated like an include when translating).
    Overlay,
}

/// One line of a view: `[-|+]LEFT RIGHT`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ViewLine {
    pub kind: LineKind,
    pub left: String,
    pub right: String,
}

/// Splits a line into its kind and raw (unquoted) side texts.
fn split_line(line: &str) -> Result<(LineKind, Vec<&str>), String> {
    let mut rest = line.trim();
    let mut kind = None;
    if let Some(r) = rest.strip_prefix('-') {
        kind = Some(LineKind::Exclude);
        rest = r;
    } else if let Some(r) = rest.strip_prefix('+') {
        kind = Some(LineKind::Overlay);
        rest = r;
    }
    let mut sides = Vec::new();
    while !rest.is_empty() {
        let token;
        if let Some(after) = rest.strip_prefix('"') {
            let end = after.find('"').ok_or("unterminated quote")?;
            token = &after[..end];
            rest = &after[end + 1..];
            if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
                return Err("expected whitespace after closing quote".into());
            }
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            token = &rest[..end];
            rest = &rest[end..];
        }
        sides.push(token);
        rest = rest.trim_start();
    }
    if kind.is_none()
        && let Some(first) = sides.first_mut()
    {
        if let Some(r) = first.strip_prefix('-') {
            kind = Some(LineKind::Exclude);
            *first = r;
        } else if let Some(r) = first.strip_prefix('+') {
            kind = Some(LineKind::Overlay);
            *first = r;
        }
    }
    if sides.len() != 2 {
        return Err(format!("expected two paths, found {}", sides.len()));
    }
    Ok((kind.unwrap_or(LineKind::Include), sides))
}

/// Validates one side and returns its tokens.
fn compile_side(text: &str) -> Result<Vec<Tok>, ViewError> {
    let err = |reason: String| ViewError::InvalidPath {
        path: text.to_string(),
        reason,
    };
    let rest = text
        .strip_prefix("//")
        .ok_or_else(|| err("must start with '//'".into()))?;
    check_segments(rest, Wildcards::View).map_err(err)?;
    let toks = tokenize(text, true);
    let mut seen = [false; 10];
    for tok in &toks {
        if let Tok::Pos(n) = tok {
            let slot = &mut seen[usize::from(*n)];
            if *slot {
                return Err(err(format!("positional wildcard %%{n} used twice")));
            }
            *slot = true;
        }
    }
    Ok(toks)
}

/// Sorted wildcard names of a side, for the same-multiset check and messages.
fn wildcard_names(toks: &[Tok]) -> Vec<String> {
    let mut names: Vec<String> = toks
        .iter()
        .filter_map(|t| match t {
            Tok::Lit(_) => None,
            Tok::Star => Some("*".to_string()),
            Tok::Dots => Some("...".to_string()),
            Tok::Pos(n) => Some(format!("%%{n}")),
        })
        .collect();
    names.sort();
    names
}

/// For each wildcard of `dst` (in order), the index of the `src` wildcard it takes its text from.
fn binding(src: &[Tok], dst: &[Tok]) -> Option<Vec<usize>> {
    let src_wild: Vec<&Tok> = src.iter().filter(|t| t.is_wildcard()).collect();
    let mut used = vec![false; src_wild.len()];
    let mut out = Vec::new();
    for tok in dst.iter().filter(|t| t.is_wildcard()) {
        let idx = src_wild
            .iter()
            .enumerate()
            .position(|(i, s)| !used[i] && *s == tok)?;
        used[idx] = true;
        out.push(idx);
    }
    Some(out)
}

impl ViewLine {
    /// Parses `[-|+]LEFT RIGHT`; sides may be double-quoted to contain spaces.
    pub fn parse(line: &str) -> Result<ViewLine, ViewError> {
        let (kind, sides) = split_line(line).map_err(|reason| ViewError::InvalidLine {
            line: line.to_string(),
            reason,
        })?;
        let parsed = ViewLine {
            kind,
            left: sides[0].to_string(),
            right: sides[1].to_string(),
        };
        CompiledLine::new(&parsed, line)?;
        Ok(parsed)
    }
}

fn quoted(side: &str) -> String {
    if side.is_empty() || side.contains(char::is_whitespace) {
        format!("\"{side}\"")
    } else {
        side.to_string()
    }
}

impl fmt::Display for ViewLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = match self.kind {
            LineKind::Include => "",
            LineKind::Exclude => "-",
            LineKind::Overlay => "+",
        };
        write!(f, "{prefix}{} {}", quoted(&self.left), quoted(&self.right))
    }
}

/// A view line with both sides compiled and their wildcards bound to each other.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CompiledLine {
    kind: LineKind,
    left: Vec<Tok>,
    right: Vec<Tok>,
    right_from_left: Vec<usize>,
    left_from_right: Vec<usize>,
}

impl CompiledLine {
    fn new(line: &ViewLine, source: &str) -> Result<CompiledLine, ViewError> {
        let left = compile_side(&line.left)?;
        let right = compile_side(&line.right)?;
        let (lw, rw) = (wildcard_names(&left), wildcard_names(&right));
        let mismatch = || ViewError::WildcardMismatch {
            line: source.to_string(),
            left: lw.join(" "),
            right: rw.join(" "),
        };
        if lw != rw {
            return Err(mismatch());
        }
        let right_from_left = binding(&left, &right).ok_or_else(mismatch)?;
        let left_from_right = binding(&right, &left).ok_or_else(mismatch)?;
        Ok(CompiledLine {
            kind: line.kind,
            left,
            right,
            right_from_left,
            left_from_right,
        })
    }

    fn side(&self, from_left: bool) -> (&[Tok], &[Tok], &[usize]) {
        if from_left {
            (&self.left, &self.right, &self.right_from_left)
        } else {
            (&self.right, &self.left, &self.left_from_right)
        }
    }
}

/// Builds the destination text from captured wildcard text.
fn substitute(dst: &[Tok], caps: &[&str], bind: &[usize]) -> String {
    let mut out = String::new();
    let mut wild = 0;
    for tok in dst {
        match tok {
            Tok::Lit(lit) => out.push_str(lit),
            _ => {
                out.push_str(caps[bind[wild]]);
                wild += 1;
            }
        }
    }
    out
}

/// An ordered list of view lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct View {
    lines: Vec<ViewLine>,
    compiled: Vec<CompiledLine>,
}

impl View {
    /// Builds a view, validating every line. An empty view maps nothing.
    pub fn new(lines: Vec<ViewLine>) -> Result<View, ViewError> {
        let compiled = lines
            .iter()
            .map(|l| CompiledLine::new(l, &l.to_string()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(View { lines, compiled })
    }

    /// Parses and builds a view from text lines; blank lines are skipped.
    pub fn parse_lines<I, S>(lines: I) -> Result<View, ViewError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let parsed = lines
            .into_iter()
            .filter(|l| !l.as_ref().trim().is_empty())
            .map(|l| ViewLine::parse(l.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        View::new(parsed)
    }

    fn map(&self, path: &str, from_left: bool) -> Option<String> {
        for (i, line) in self.compiled.iter().enumerate().rev() {
            let (src, dst, bind) = line.side(from_left);
            let Some(caps) = captures(src, path) else {
                continue;
            };
            if line.kind == LineKind::Exclude {
                return None;
            }
            let out = substitute(dst, &caps, bind);
            let claimed = self.compiled[i + 1..].iter().any(|later| {
                let (_, later_dst, _) = later.side(from_left);
                is_match(later_dst, &out)
            });
            return if claimed { None } else { Some(out) };
        }
        None
    }

    /// Maps a left-side (depot) path to the right side, or `None` when unmapped.
    pub fn translate(&self, left: &str) -> Option<String> {
        self.map(left, true)
    }

    /// Maps a right-side path back to the left side, or `None` when unmapped.
    pub fn translate_back(&self, right: &str) -> Option<String> {
        self.map(right, false)
    }

    /// Literal prefixes of the left sides of Include and Overlay lines, deduplicated.
    pub fn left_prefixes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for line in &self.compiled {
            if line.kind == LineKind::Exclude {
                continue;
            }
            let prefix = literal_prefix_of(&line.left);
            if !out.iter().any(|p| p == prefix) {
                out.push(prefix.to_string());
            }
        }
        out
    }

    /// The lines of the view, in order.
    pub fn lines(&self) -> &[ViewLine] {
        &self.lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(lines: &[&str]) -> View {
        View::parse_lines(lines).expect("valid view")
    }

    #[test]
    fn parse_lines_valid() {
        let cases: &[(&str, LineKind, &str, &str)] = &[
            (
                "//depot/... //ws/...",
                LineKind::Include,
                "//depot/...",
                "//ws/...",
            ),
            (
                "  //depot/... \t //ws/...  ",
                LineKind::Include,
                "//depot/...",
                "//ws/...",
            ),
            (
                "-//depot/x/... //ws/x/...",
                LineKind::Exclude,
                "//depot/x/...",
                "//ws/x/...",
            ),
            (
                "+//depot/o/... //ws/...",
                LineKind::Overlay,
                "//depot/o/...",
                "//ws/...",
            ),
            (
                "\"//depot/a b/...\" \"//ws/a b/...\"",
                LineKind::Include,
                "//depot/a b/...",
                "//ws/a b/...",
            ),
            (
                "-\"//depot/a b/...\" //ws/ab/...",
                LineKind::Exclude,
                "//depot/a b/...",
                "//ws/ab/...",
            ),
            (
                "\"-//depot/a b/...\" //ws/ab/...",
                LineKind::Exclude,
                "//depot/a b/...",
                "//ws/ab/...",
            ),
            (
                "//depot/*.c //ws/src/*.c",
                LineKind::Include,
                "//depot/*.c",
                "//ws/src/*.c",
            ),
            (
                "//depot/%%1/x/%%2 //ws/%%2/%%1",
                LineKind::Include,
                "//depot/%%1/x/%%2",
                "//ws/%%2/%%1",
            ),
            (
                "//depot/f.c //ws/g.c",
                LineKind::Include,
                "//depot/f.c",
                "//ws/g.c",
            ),
        ];
        for (text, kind, left, right) in cases {
            let line = ViewLine::parse(text).expect(text);
            assert_eq!(
                (line.kind, line.left.as_str(), line.right.as_str()),
                (*kind, *left, *right)
            );
        }
    }

    #[test]
    fn parse_lines_invalid() {
        let cases = [
            "",
            "//depot/...",
            "//depot/... //ws/... //extra/...",
            "depot/... //ws/...",
            "//depot/... ws/...",
            "//depot/... //ws/*",
            "//depot/* //ws/...",
            "//depot/.../* //ws/...",
            "//depot/%%1 //ws/%%2",
            "//depot/%%1/%%1 //ws/%%1/%%1",
            "//depot/%1 //ws/%1",
            "//depot/%%0 //ws/%%0",
            "//depot/../... //ws/...",
            "//depot/./x //ws/x",
            "//depot//x //ws/x",
            "//depot/a\0 //ws/a",
            "//depot/a\x01 //ws/a",
            "\"//depot/a b/... //ws/...",
            "\"//depot/a\"x //ws/x",
            "//depot/a@1 //ws/a",
            "//depot/a#1 //ws/a",
        ];
        for text in cases {
            let err = ViewLine::parse(text).expect_err(text);
            assert!(!err.to_string().is_empty());
        }
    }

    #[test]
    fn mismatch_error_names_line() {
        let err = ViewLine::parse("//depot/... //ws/*").expect_err("mismatch");
        assert_eq!(
            err.to_string(),
            "view line \"//depot/... //ws/*\": wildcards differ between sides (left: ...; right: *)"
        );
    }

    #[test]
    fn display_round_trip() {
        let cases = [
            ("//depot/... //ws/...", "//depot/... //ws/..."),
            ("-//depot/x/... //ws/x/...", "-//depot/x/... //ws/x/..."),
            ("+//depot/o/... //ws/...", "+//depot/o/... //ws/..."),
            (
                "\"//depot/a b/...\" //ws/ab/...",
                "\"//depot/a b/...\" //ws/ab/...",
            ),
            (
                "\"-//depot/a b/...\" \"//ws/a b/...\"",
                "-\"//depot/a b/...\" \"//ws/a b/...\"",
            ),
            (
                "\"//depot/ab/...\" \"//ws/ab/...\"",
                "//depot/ab/... //ws/ab/...",
            ),
        ];
        for (text, shown) in cases {
            let line = ViewLine::parse(text).expect(text);
            assert_eq!(line.to_string(), shown);
            assert_eq!(ViewLine::parse(shown).expect(shown), line);
        }
    }

    #[test]
    fn translate_table() {
        let cases: &[(&[&str], &str, Option<&str>)] = &[
            (&[], "//depot/a", None),
            (
                &["//depot/... //ws/..."],
                "//depot/a/b.c",
                Some("//ws/a/b.c"),
            ),
            (&["//depot/... //ws/..."], "//other/a", None),
            (
                &["//depot/main/... //ws/..."],
                "//depot/main/x",
                Some("//ws/x"),
            ),
            (
                &["//depot/*.c //ws/src/*.c"],
                "//depot/a.c",
                Some("//ws/src/a.c"),
            ),
            (&["//depot/*.c //ws/src/*.c"], "//depot/d/a.c", None),
            (
                &["//depot/....c //ws/....c"],
                "//depot/d/a.c",
                Some("//ws/d/a.c"),
            ),
            (
                &[
                    "//depot/... //ws/...",
                    "-//depot/secret/... //ws/secret/...",
                ],
                "//depot/secret/k",
                None,
            ),
            (
                &[
                    "//depot/... //ws/...",
                    "-//depot/secret/... //ws/secret/...",
                ],
                "//depot/public/k",
                Some("//ws/public/k"),
            ),
            (
                &[
                    "//depot/... //ws/...",
                    "-//depot/secret/... //ws/secret/...",
                    "//depot/secret/ok/... //ws/secret/ok/...",
                ],
                "//depot/secret/ok/f",
                Some("//ws/secret/ok/f"),
            ),
            (
                &["//depot/a/... //ws/one/...", "//depot/a/... //ws/two/..."],
                "//depot/a/f",
                Some("//ws/two/f"),
            ),
            (
                &["//depot/... //ws/...", "+//depot/over/... //ws/..."],
                "//depot/over/f",
                Some("//ws/f"),
            ),
            (
                &["//depot/main/... //ws/...", "//depot/rel/... //ws/rel/..."],
                "//depot/main/rel/f",
                None,
            ),
            (
                &["//depot/%%1/x/%%2 //ws/%%2/%%1"],
                "//depot/a/x/b",
                Some("//ws/b/a"),
            ),
            (&["//depot/%%1/x/%%2 //ws/%%2/%%1"], "//depot/a/x/b/c", None),
            (
                &["//depot/*/.../*.h //ws/.../inc/*/*.h"],
                "//depot/lib/p/q/api.h",
                Some("//ws/p/q/inc/lib/api.h"),
            ),
            (
                &["\"//depot/a b/...\" \"//ws/c d/...\""],
                "//depot/a b/x y",
                Some("//ws/c d/x y"),
            ),
            (&["//depot/f.c //ws/g.c"], "//depot/f.c", Some("//ws/g.c")),
            (&["//depot/f.c //ws/g.c"], "//depot/f.cc", None),
            (&["//depot/... //ws/..."], "//depot/", Some("//ws/")),
        ];
        for (lines, path, want) in cases {
            let v = view(lines);
            assert_eq!(v.translate(path).as_deref(), *want, "{lines:?} {path}");
            if let Some(right) = want {
                assert_eq!(
                    v.translate_back(right).as_deref(),
                    Some(*path),
                    "back {lines:?} {right}"
                );
            }
        }
    }

    #[test]
    fn translate_back_table() {
        let cases: &[(&[&str], &str, Option<&str>)] = &[
            (&["//depot/... //ws/..."], "//ws/a", Some("//depot/a")),
            (&["//depot/... //ws/..."], "//other/a", None),
            (
                &["//depot/a/... //ws/x/...", "//depot/b/... //ws/x/..."],
                "//ws/x/f",
                Some("//depot/b/f"),
            ),
            (
                &["//depot/... //ws/...", "-//depot/s/... //ws/s/..."],
                "//ws/s/f",
                None,
            ),
            (
                &["//depot/%%1/%%2 //ws/%%2/%%1"],
                "//ws/b/a",
                Some("//depot/a/b"),
            ),
        ];
        for (lines, path, want) in cases {
            let v = view(lines);
            assert_eq!(v.translate_back(path).as_deref(), *want, "{lines:?} {path}");
        }
        let shadowed = view(&["//depot/a/... //ws/x/...", "//depot/b/... //ws/x/..."]);
        assert_eq!(shadowed.translate("//depot/a/f"), None);
    }

    #[test]
    fn left_prefixes_dedup_and_skip_excludes() {
        let v = view(&[
            "//depot/main/... //ws/...",
            "-//depot/main/secret/... //ws/secret/...",
            "//depot/main/*.c //ws/c/*.c",
            "+//depot/over/... //ws/over/...",
        ]);
        assert_eq!(v.left_prefixes(), vec!["//depot/main/", "//depot/over/"]);
        assert_eq!(v.lines().len(), 4);
        assert_eq!(v.lines()[1].kind, LineKind::Exclude);
    }

    #[test]
    fn new_validates_constructed_lines() {
        let bad = ViewLine {
            kind: LineKind::Include,
            left: "//depot/...".into(),
            right: "//ws/*".into(),
        };
        assert!(View::new(vec![bad]).is_err());
        let empty = View::new(Vec::new()).expect("empty view");
        assert_eq!(empty.translate("//depot/a"), None);
        assert!(empty.left_prefixes().is_empty());
    }

    #[test]
    fn parse_lines_skips_blank_lines() {
        let v = View::parse_lines(vec!["", "//depot/... //ws/...", "   "]).expect("valid");
        assert_eq!(v.lines().len(), 1);
    }
}
