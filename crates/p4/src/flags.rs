//! Command-line flags as P4 commands take them: single letters after `-`, some with a value
//! (`-m 5` or `-m5`), several letters in one word (`-as`), `--` ending the flags.

/// Why the flags are refused (shown with the command's usage line).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    #[error("Invalid option: -{flag}.")]
    Invalid { flag: char },
    #[error("Missing value for option -{flag}.")]
    MissingValue { flag: char },
    #[error("Invalid option: {word}.")]
    InvalidWord { word: String },
}

/// Parsed flags and the remaining arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flags {
    set: Vec<(char, Option<String>)>,
    /// The arguments after the flags.
    pub rest: Vec<String>,
}

impl Flags {
    /// Parses `args` against `spec`: the letters allowed, each followed by `:` when it takes a
    /// value (`"aps h:"`; spaces are ignored).
    pub fn parse(args: &[String], spec: &str) -> Result<Flags, FlagError> {
        let takes = |c: char| -> Option<bool> {
            let at = spec.find(c)?;
            Some(spec[at + c.len_utf8()..].starts_with(':'))
        };
        let mut flags = Flags::default();
        let mut i = 0;
        while i < args.len() {
            let arg = &args[i];
            if arg == "--" {
                i += 1;
                break;
            }
            let Some(letters) = arg.strip_prefix('-') else {
                break;
            };
            if letters.is_empty() {
                // `-` alone is an argument (stdin/stdout in some commands).
                break;
            }
            if letters.starts_with('-') {
                return Err(FlagError::InvalidWord { word: arg.clone() });
            }
            for (pos, c) in letters.char_indices() {
                if c == ':' {
                    return Err(FlagError::Invalid { flag: c });
                }
                match takes(c) {
                    None => return Err(FlagError::Invalid { flag: c }),
                    Some(false) => flags.set.push((c, None)),
                    Some(true) => {
                        let attached = &letters[pos + c.len_utf8()..];
                        let value = if !attached.is_empty() {
                            attached.to_string()
                        } else {
                            i += 1;
                            args.get(i)
                                .cloned()
                                .ok_or(FlagError::MissingValue { flag: c })?
                        };
                        flags.set.push((c, Some(value)));
                        break;
                    }
                }
            }
            i += 1;
        }
        flags.rest = args[i.min(args.len())..].to_vec();
        Ok(flags)
    }

    /// Whether `-c` was given.
    pub fn has(&self, c: char) -> bool {
        self.set.iter().any(|(f, _)| *f == c)
    }

    /// Every value of `-c VALUE`, in order (`fstat -Ol -Op`).
    pub fn values(&self, c: char) -> impl Iterator<Item = &str> {
        self.set
            .iter()
            .filter(move |(f, _)| *f == c)
            .filter_map(|(_, v)| v.as_deref())
    }

    /// The value of the last `-c VALUE`.
    pub fn value(&self, c: char) -> Option<&str> {
        self.set
            .iter()
            .rev()
            .find(|(f, _)| *f == c)
            .and_then(|(_, v)| v.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn letters_values_and_the_rest() {
        let f = Flags::parse(&args(&["-as", "-h", "box", "-m5", "alice"]), "a s p h: m:")
            .expect("parses");
        assert!(f.has('a') && f.has('s') && !f.has('p'));
        assert_eq!(f.value('h'), Some("box"));
        assert_eq!(f.value('m'), Some("5"));
        assert_eq!(f.rest, ["alice"]);
        let f = Flags::parse(&args(&["--", "-a"]), "a").expect("parses");
        assert!(!f.has('a'));
        assert_eq!(f.rest, ["-a"]);
    }

    #[test]
    fn unknown_or_incomplete_flags_are_named() {
        assert_eq!(
            Flags::parse(&args(&["-x"]), "a"),
            Err(FlagError::Invalid { flag: 'x' })
        );
        assert_eq!(
            Flags::parse(&args(&["-h"]), "h:"),
            Err(FlagError::MissingValue { flag: 'h' })
        );
        assert_eq!(
            Flags::parse(&args(&["--all"]), "a"),
            Err(FlagError::InvalidWord {
                word: "--all".into()
            })
        );
        assert_eq!(
            Flags::parse(&args(&["-"]), "a").expect("parses").rest,
            ["-"]
        );
    }
}
