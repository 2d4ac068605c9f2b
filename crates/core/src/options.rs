//! The workspace `Options:` field (`noallwrite clobber normdir modtime`, plus `locked` and
//! `compress`).

use std::fmt;

/// Errors produced when parsing workspace options.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// A word is not a known option.
    #[error("invalid workspace options {text:?}: unknown option {word:?}")]
    UnknownWord { text: String, word: String },
    /// The same option was given twice.
    #[error("invalid workspace options {text:?}: option {word:?} set more than once")]
    Repeated { text: String, word: String },
    /// A label's or branch's Options is neither `locked` nor `unlocked`.
    #[error("unknown Options '{text}' (locked or unlocked)")]
    UnknownLock { text: String },
}

/// Workspace behaviour flags; all false by default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct WorkspaceOptions {
    pub allwrite: bool,
    pub clobber: bool,
    pub rmdir: bool,
    pub modtime: bool,
    /// `locked`: only the owner uses the workspace, even a super user's override is refused;
    /// anyone else (a super user with force) may only edit or delete the spec. Written only
    /// when set, so specs without it read as before.
    pub locked: bool,
    /// `compress`: P4 clients working in this workspace get a compressed connection (the
    /// P4 front end's link compression); Keel's own protocol compresses content itself.
    /// Written only when set.
    pub compress: bool,
}

const NAMES: [&str; 4] = ["allwrite", "clobber", "rmdir", "modtime"];

impl WorkspaceOptions {
    /// Parses whitespace-separated words like `noallwrite clobber normdir modtime`, in any
    /// order; missing words keep their default (false).
    pub fn parse(text: &str) -> Result<WorkspaceOptions, OptionsError> {
        let mut values = [false; 4];
        let mut seen = [false; 4];
        let mut locked = None;
        let mut compress = None;
        for word in text.split_whitespace() {
            if word == "compress" || word == "nocompress" {
                if compress.is_some() {
                    return Err(OptionsError::Repeated {
                        text: text.to_string(),
                        word: word.to_string(),
                    });
                }
                compress = Some(word == "compress");
                continue;
            }
            if word == "locked" || word == "unlocked" {
                if locked.is_some() {
                    return Err(OptionsError::Repeated {
                        text: text.to_string(),
                        word: word.to_string(),
                    });
                }
                locked = Some(word == "locked");
                continue;
            }
            let (name, value) = match word.strip_prefix("no") {
                Some(rest) if NAMES.contains(&rest) => (rest, false),
                _ => (word, true),
            };
            let idx =
                NAMES
                    .iter()
                    .position(|n| *n == name)
                    .ok_or_else(|| OptionsError::UnknownWord {
                        text: text.to_string(),
                        word: word.to_string(),
                    })?;
            if seen[idx] {
                return Err(OptionsError::Repeated {
                    text: text.to_string(),
                    word: word.to_string(),
                });
            }
            seen[idx] = true;
            values[idx] = value;
        }
        let [allwrite, clobber, rmdir, modtime] = values;
        Ok(WorkspaceOptions {
            allwrite,
            clobber,
            rmdir,
            modtime,
            locked: locked.unwrap_or(false),
            compress: compress.unwrap_or(false),
        })
    }
}

impl fmt::Display for WorkspaceOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let values = [self.allwrite, self.clobber, self.rmdir, self.modtime];
        for (i, (name, on)) in NAMES.iter().zip(values).enumerate() {
            let sep = if i == 0 { "" } else { " " };
            let no = if on { "" } else { "no" };
            write!(f, "{sep}{no}{name}")?;
        }
        if self.locked {
            f.write_str(" locked")?;
        }
        if self.compress {
            f.write_str(" compress")?;
        }
        Ok(())
    }
}

/// The `Options:` field of a label or branch spec: whether only its owner may change it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SpecLock {
    #[default]
    Unlocked,
    Locked,
}

impl SpecLock {
    /// Parses `locked` or `unlocked` (empty is `unlocked`).
    pub fn parse(text: &str) -> Result<SpecLock, OptionsError> {
        match text.trim() {
            "" | "unlocked" => Ok(SpecLock::Unlocked),
            "locked" => Ok(SpecLock::Locked),
            other => Err(OptionsError::UnknownLock {
                text: other.to_string(),
            }),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SpecLock::Unlocked => "unlocked",
            SpecLock::Locked => "locked",
        }
    }
}

impl fmt::Display for SpecLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(allwrite: bool, clobber: bool, rmdir: bool, modtime: bool) -> WorkspaceOptions {
        WorkspaceOptions {
            allwrite,
            clobber,
            rmdir,
            modtime,
            locked: false,
            compress: false,
        }
    }

    #[test]
    fn compress_is_kept_and_written_only_when_set() {
        let o = WorkspaceOptions::parse("allwrite compress").expect("parses");
        assert!(o.compress && o.allwrite);
        assert_eq!(
            o.to_string(),
            "allwrite noclobber normdir nomodtime compress"
        );
        assert!(
            !WorkspaceOptions::parse("nocompress")
                .expect("parses")
                .compress
        );
        assert!(WorkspaceOptions::parse("compress nocompress").is_err());
    }

    #[test]
    fn parse_valid() {
        let cases = [
            ("", opts(false, false, false, false)),
            (
                "noallwrite clobber normdir modtime",
                opts(false, true, false, true),
            ),
            (
                "allwrite noclobber rmdir nomodtime",
                opts(true, false, true, false),
            ),
            ("modtime  allwrite", opts(true, false, false, true)),
            ("\trmdir\n", opts(false, false, true, false)),
        ];
        for (text, want) in cases {
            assert_eq!(WorkspaceOptions::parse(text), Ok(want), "{text:?}");
        }
    }

    #[test]
    fn parse_invalid() {
        let cases = [
            ("nolocked", "unknown option \"nolocked\""),
            ("locked unlocked", "option \"unlocked\" set more than once"),
            ("allwrite nosuch", "unknown option \"nosuch\""),
            ("no", "unknown option \"no\""),
            ("Allwrite", "unknown option \"Allwrite\""),
            (
                "allwrite noallwrite",
                "option \"noallwrite\" set more than once",
            ),
        ];
        for (text, reason) in cases {
            let err = WorkspaceOptions::parse(text).expect_err(text);
            assert_eq!(
                err.to_string(),
                format!("invalid workspace options {text:?}: {reason}")
            );
        }
    }

    #[test]
    fn display_round_trip() {
        let cases = [
            (
                opts(false, false, false, false),
                "noallwrite noclobber normdir nomodtime",
            ),
            (
                opts(true, true, true, true),
                "allwrite clobber rmdir modtime",
            ),
            (
                opts(false, true, false, true),
                "noallwrite clobber normdir modtime",
            ),
        ];
        for (value, text) in cases {
            assert_eq!(value.to_string(), text);
            assert_eq!(WorkspaceOptions::parse(text), Ok(value));
        }
        assert_eq!(
            WorkspaceOptions::default(),
            opts(false, false, false, false)
        );
        let locked = WorkspaceOptions::parse("clobber locked").expect("valid");
        assert!(locked.locked && locked.clobber);
        assert_eq!(
            locked.to_string(),
            "noallwrite clobber normdir nomodtime locked"
        );
        assert_eq!(WorkspaceOptions::parse(&locked.to_string()), Ok(locked));
        assert!(!WorkspaceOptions::parse("unlocked").expect("valid").locked);
    }

    #[test]
    fn spec_lock_parses_and_prints() {
        assert_eq!(SpecLock::parse(""), Ok(SpecLock::Unlocked));
        assert_eq!(SpecLock::parse(" locked "), Ok(SpecLock::Locked));
        assert_eq!(SpecLock::Locked.to_string(), "locked");
        let err = SpecLock::parse("sealed").expect_err("unknown");
        assert_eq!(
            err.to_string(),
            "unknown Options 'sealed' (locked or unlocked)"
        );
    }
}
