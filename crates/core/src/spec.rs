//! File arguments: a path plus an optional revision specifier (`#3`, `#head`, `@42`, `@label`).
//!
//! As in Perforce, `#0` means `#none`, and `@` followed only by digits is a change number;
//! anything else after `@` is a label name, validated like other names.

use std::fmt;

use crate::ids::{ChangeNumber, check_name};

/// Errors produced when parsing file or revision specifiers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The file argument has no path before its revision.
    #[error("invalid file spec {spec:?}: path must not be empty")]
    EmptyPath { spec: String },
    /// The file argument contains a control character.
    #[error("invalid file spec {spec:?}: control characters not allowed")]
    ControlChar { spec: String },
    /// The revision part is malformed.
    #[error("invalid revision {rev:?}: {reason}")]
    InvalidRev { rev: String, reason: String },
}

/// A revision specifier.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RevSpec {
    /// `#head`: the latest revision.
    Head,
    /// `#none` or `#0`: no revision (the file is absent).
    None,
    /// `#have`: the revision the workspace has.
    Have,
    /// `#n`: a specific file revision.
    Rev(u32),
    /// `@n`: the file as of a change.
    Change(ChangeNumber),
    /// `@name`: the file as tagged by a label.
    Label(String),
}

impl RevSpec {
    /// Parses a revision including its marker, e.g. `#3`, `#head`, `@42`, `@mylabel`.
    pub fn parse(text: &str) -> Result<RevSpec, SpecError> {
        let err = |reason: &str| SpecError::InvalidRev {
            rev: text.to_string(),
            reason: reason.to_string(),
        };
        if let Some(body) = text.strip_prefix('#') {
            match body {
                "head" => Ok(RevSpec::Head),
                "none" => Ok(RevSpec::None),
                "have" => Ok(RevSpec::Have),
                "" => Err(err("missing revision after '#'")),
                digits if digits.bytes().all(|b| b.is_ascii_digit()) => {
                    match digits.parse::<u32>() {
                        Ok(0) => Ok(RevSpec::None),
                        Ok(n) => Ok(RevSpec::Rev(n)),
                        Err(_) => Err(err("revision number too large")),
                    }
                }
                _ => Err(err("expected a number, 'head', 'have' or 'none' after '#'")),
            }
        } else if let Some(body) = text.strip_prefix('@') {
            if body.is_empty() {
                return Err(err("missing change or label after '@'"));
            }
            if body.bytes().all(|b| b.is_ascii_digit()) {
                return body
                    .parse::<u64>()
                    .map(|n| RevSpec::Change(ChangeNumber(n)))
                    .map_err(|_| err("change number too large"));
            }
            check_name(body).map_err(|reason| err(&format!("invalid label name: {reason}")))?;
            Ok(RevSpec::Label(body.to_string()))
        } else {
            Err(err("must start with '#' or '@'"))
        }
    }
}

impl fmt::Display for RevSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RevSpec::Head => f.write_str("#head"),
            RevSpec::None => f.write_str("#none"),
            RevSpec::Have => f.write_str("#have"),
            RevSpec::Rev(n) => write!(f, "#{n}"),
            RevSpec::Change(c) => write!(f, "@{c}"),
            RevSpec::Label(l) => write!(f, "@{l}"),
        }
    }
}

/// A file argument: a path (not validated here beyond non-empty) and an optional revision.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileSpec {
    pub path: String,
    pub rev: Option<RevSpec>,
}

impl FileSpec {
    /// Splits `text` at the first `#` or `@` into path and revision.
    pub fn parse(text: &str) -> Result<FileSpec, SpecError> {
        if text.chars().any(|c| c < ' ' || c == '\x7f') {
            return Err(SpecError::ControlChar {
                spec: text.to_string(),
            });
        }
        let (path, rev) = match text.find(['#', '@']) {
            Some(i) => (&text[..i], Some(RevSpec::parse(&text[i..])?)),
            None => (text, None),
        };
        if path.is_empty() {
            return Err(SpecError::EmptyPath {
                spec: text.to_string(),
            });
        }
        Ok(FileSpec {
            path: path.to_string(),
            rev,
        })
    }
}

impl fmt::Display for FileSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path)?;
        match &self.rev {
            Some(rev) => write!(f, "{rev}"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_file_specs() {
        let cases: &[(&str, &str, Option<RevSpec>)] = &[
            ("//depot/a.c", "//depot/a.c", None),
            ("//depot/a.c#head", "//depot/a.c", Some(RevSpec::Head)),
            ("//depot/a.c#none", "//depot/a.c", Some(RevSpec::None)),
            ("//depot/a.c#have", "//depot/a.c", Some(RevSpec::Have)),
            ("//depot/a.c#3", "//depot/a.c", Some(RevSpec::Rev(3))),
            ("//depot/a.c#0", "//depot/a.c", Some(RevSpec::None)),
            ("//depot/a.c#007", "//depot/a.c", Some(RevSpec::Rev(7))),
            (
                "//depot/...@42",
                "//depot/...",
                Some(RevSpec::Change(ChangeNumber(42))),
            ),
            ("a.c@0", "a.c", Some(RevSpec::Change(ChangeNumber(0)))),
            (
                "//depot/a.c@mylabel",
                "//depot/a.c",
                Some(RevSpec::Label("mylabel".into())),
            ),
            (
                "//depot/a.c@rel-1.0",
                "//depot/a.c",
                Some(RevSpec::Label("rel-1.0".into())),
            ),
            ("dir with space/x", "dir with space/x", None),
        ];
        for (text, path, rev) in cases {
            let spec = FileSpec::parse(text).expect(text);
            assert_eq!(&spec.path, path, "{text}");
            assert_eq!(&spec.rev, rev, "{text}");
        }
    }

    #[test]
    fn invalid_file_specs() {
        let cases = [
            "",
            "#3",
            "@42",
            "//depot/a.c#",
            "//depot/a.c@",
            "//depot/a.c#3#4",
            "//depot/a.c#-1",
            "//depot/a.c#+3",
            "//depot/a.c#3x",
            "//depot/a.c#HEAD",
            "//depot/a.c#4294967296",
            "//depot/a.c@99999999999999999999999",
            "//depot/a.c@42@43",
            "//depot/a.c@la bel",
            "//depot/a.c@-x",
            "//depot/a.c@x#3",
            "//depot/a\0.c",
            "//depot/a.c\n",
        ];
        for text in cases {
            let err = FileSpec::parse(text).expect_err(text);
            assert!(!err.to_string().is_empty());
        }
    }

    #[test]
    fn rev_display_round_trip() {
        let cases = ["#head", "#none", "#have", "#3", "@42", "@mylabel"];
        for text in cases {
            let rev = RevSpec::parse(text).expect(text);
            assert_eq!(rev.to_string(), text);
        }
    }

    #[test]
    fn file_spec_display() {
        for text in ["//depot/a.c", "//depot/a.c#3", "//depot/...@12", "x@lab"] {
            assert_eq!(FileSpec::parse(text).expect(text).to_string(), text);
        }
    }

    #[test]
    fn error_names_input() {
        let err = FileSpec::parse("//d/a#3#4").expect_err("trailing garbage");
        assert!(err.to_string().contains("\"#3#4\""), "{err}");
    }
}
