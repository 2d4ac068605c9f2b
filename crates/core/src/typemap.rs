//! The typemap (`keel typemap`): lines `TYPE PATTERN` that give files added without `-t` their
//! type by depot path. The last line whose pattern matches decides; a matching `-PATTERN`
//! line (an exclusion) means no line of the map applies.

use std::fmt;

use crate::filetype::TypeChange;
use crate::pattern::PathPattern;

/// A typemap line that cannot be used, named by its number (1-based) and text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("typemap line {line} ({text:?}): {reason}")]
pub struct TypemapError {
    pub line: usize,
    pub text: String,
    pub reason: String,
}

/// One line: a type (whole, or modifiers such as `+l`) and the files it applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypemapLine {
    pub file_type: TypeChange,
    pub pattern: PathPattern,
    /// `-//depot/...`: files matching are left out of the earlier lines.
    pub exclude: bool,
}

impl TypemapLine {
    /// Parses `TYPE PATTERN` (the pattern may be quoted, and may start with `-`); `line` is
    /// the number errors name.
    pub fn parse(text: &str, line: usize) -> Result<TypemapLine, TypemapError> {
        let err = |reason: String| TypemapError {
            line,
            text: text.to_string(),
            reason,
        };
        let trimmed = text.trim();
        let (file_type, rest) = trimmed
            .split_once(char::is_whitespace)
            .ok_or_else(|| err("expected a type and a depot pattern: TYPE //depot/...".into()))?;
        let file_type = TypeChange::parse(file_type).map_err(|e| err(e.to_string()))?;
        let rest = rest.trim();
        let unquoted = match rest.strip_prefix('"') {
            Some(inner) => inner
                .strip_suffix('"')
                .ok_or_else(|| err("the pattern's opening quote is not closed".into()))?,
            None if rest.contains(char::is_whitespace) => {
                return Err(err(
                    "more than one pattern (quote a pattern that holds spaces)".into(),
                ));
            }
            None => rest,
        };
        let (exclude, pattern) = match unquoted.strip_prefix('-') {
            Some(p) => (true, p),
            None => (false, unquoted),
        };
        let pattern = PathPattern::parse(pattern).map_err(|e| err(e.to_string()))?;
        Ok(TypemapLine {
            file_type,
            pattern,
            exclude,
        })
    }
}

impl fmt::Display for TypemapLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let minus = if self.exclude { "-" } else { "" };
        let pattern = self.pattern.as_str();
        if pattern.contains(char::is_whitespace) {
            write!(f, "{} \"{minus}{pattern}\"", self.file_type)
        } else {
            write!(f, "{} {minus}{pattern}", self.file_type)
        }
    }
}

/// Parses a whole table (a form's `TypeMap` lines); blank lines are skipped but counted.
pub fn parse_typemap(lines: &[String]) -> Result<Vec<TypemapLine>, TypemapError> {
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| TypemapLine::parse(l, i + 1))
        .collect()
}

/// The type change the map gives `depot_path`: the last matching line's, none when that line
/// is an exclusion or no line matches.
pub fn typemap_lookup(table: &[TypemapLine], depot_path: &str) -> Option<TypeChange> {
    table
        .iter()
        .rev()
        .find(|l| l.pattern.matches(depot_path))
        .filter(|l| !l.exclude)
        .map(|l| l.file_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(lines: &[&str]) -> Vec<TypemapLine> {
        let lines: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        parse_typemap(&lines).expect("table")
    }

    #[test]
    fn the_last_matching_line_decides() {
        let map = table(&[
            "binary+l //depot/....png",
            "text+k //depot/src/....c",
            "",
            "+w //depot/src/gen/...",
            "binary -//depot/src/vendor/...",
            "ktext \"//depot/with space/...\"",
        ]);
        let got = |p: &str| typemap_lookup(&map, p).map(|t| t.to_string());
        assert_eq!(got("//depot/art/logo.png").as_deref(), Some("binary+l"));
        assert_eq!(got("//depot/src/a.c").as_deref(), Some("text+k"));
        assert_eq!(got("//depot/src/gen/b.c").as_deref(), Some("+w"));
        assert_eq!(got("//depot/src/vendor/z.c"), None);
        assert_eq!(got("//depot/readme.txt"), None);
        assert_eq!(got("//depot/with space/x").as_deref(), Some("text+k"));
        assert_eq!(map[3].to_string(), "binary -//depot/src/vendor/...");
        assert_eq!(map[4].to_string(), "text+k \"//depot/with space/...\"");
    }

    #[test]
    fn bad_lines_are_refused_naming_the_line() {
        let cases: &[(&[&str], usize, &str)] = &[
            (
                &["text //a/...", "blob //depot/..."],
                2,
                "unknown base type",
            ),
            (&["text+q //depot/..."], 1, "unknown modifier 'q'"),
            (
                &["text", "binary //x/..."],
                1,
                "expected a type and a depot pattern",
            ),
            (&["", "", "text depot/..."], 3, "must start with '//'"),
            (&["text //depot/a //depot/b"], 1, "more than one pattern"),
            (&["text \"//depot/a"], 1, "quote is not closed"),
            (&["text //depot/%%1"], 1, "invalid path pattern"),
        ];
        for (lines, line, reason) in cases {
            let lines: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            let err = parse_typemap(&lines).expect_err(reason);
            assert_eq!(err.line, *line, "{err}");
            assert!(err.to_string().contains(reason), "{err}");
            assert!(err.to_string().contains(&format!("line {line}")), "{err}");
        }
    }
}
