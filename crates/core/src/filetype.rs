//! File types (`text`, `binary+lx`, ...) and content-based base type detection.

use std::fmt;

/// Errors produced when parsing file types.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileTypeError {
    /// The base type is not `text`, `binary` or `symlink`.
    #[error("invalid file type {text:?}: unknown base type {base:?}")]
    UnknownBase { text: String, base: String },
    /// A modifier letter is not one of `l`, `w`, `x`.
    #[error("invalid file type {text:?}: unknown modifier '{modifier}'")]
    UnknownModifier { text: String, modifier: char },
    /// The modifier part is missing or malformed.
    #[error("invalid file type modifiers {text:?}: expected '+' followed by l, w or x")]
    BadModifiers { text: String },
}

/// The storage/representation class of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BaseType {
    Text,
    Binary,
    Symlink,
}

impl BaseType {
    fn as_str(self) -> &'static str {
        match self {
            BaseType::Text => "text",
            BaseType::Binary => "binary",
            BaseType::Symlink => "symlink",
        }
    }
}

/// A base type plus modifiers: `+x` executable, `+w` always writable, `+l` exclusive lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileType {
    pub base: BaseType,
    pub executable: bool,
    pub writable: bool,
    pub exclusive: bool,
}

impl FileType {
    /// Parses `text`, `binary`, `symlink`, optionally followed by `+` and modifiers (`binary+lx`).
    pub fn parse(text: &str) -> Result<FileType, FileTypeError> {
        let (base, mods) = match text.find('+') {
            Some(i) => (&text[..i], Some(&text[i..])),
            None => (text, None),
        };
        let base = match base {
            "text" => BaseType::Text,
            "binary" => BaseType::Binary,
            "symlink" => BaseType::Symlink,
            other => {
                return Err(FileTypeError::UnknownBase {
                    text: text.to_string(),
                    base: other.to_string(),
                });
            }
        };
        let plain = FileType {
            base,
            executable: false,
            writable: false,
            exclusive: false,
        };
        match mods {
            Some(mods) => plain.apply_modifiers(mods).map_err(|e| match e {
                FileTypeError::UnknownModifier { modifier, .. } => FileTypeError::UnknownModifier {
                    text: text.to_string(),
                    modifier,
                },
                _ => FileTypeError::BadModifiers {
                    text: text.to_string(),
                },
            }),
            None => Ok(plain),
        }
    }

    /// Returns a copy with the modifiers in `mods` (like `+l` or `+xw`) turned on.
    pub fn apply_modifiers(&self, mods: &str) -> Result<FileType, FileTypeError> {
        let letters = mods
            .strip_prefix('+')
            .filter(|l| !l.is_empty())
            .ok_or_else(|| FileTypeError::BadModifiers {
                text: mods.to_string(),
            })?;
        let mut out = *self;
        for c in letters.chars() {
            match c {
                'x' => out.executable = true,
                'w' => out.writable = true,
                'l' => out.exclusive = true,
                modifier => {
                    return Err(FileTypeError::UnknownModifier {
                        text: mods.to_string(),
                        modifier,
                    });
                }
            }
        }
        Ok(out)
    }
}

/// A type change asked for with `-t`: a whole type, or modifiers turned on over a file's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeChange {
    /// `binary+l`: the file becomes this type.
    Whole(FileType),
    /// `+l`, `+xw`: these modifiers are turned on; the rest of the type stays.
    Modifiers {
        executable: bool,
        writable: bool,
        exclusive: bool,
    },
}

impl TypeChange {
    /// Parses `-t`'s value: modifiers when it starts with `+`, else a whole type.
    pub fn parse(text: &str) -> Result<TypeChange, FileTypeError> {
        if text.starts_with('+') {
            let none = FileType {
                base: BaseType::Text,
                executable: false,
                writable: false,
                exclusive: false,
            };
            let on = none.apply_modifiers(text)?;
            Ok(TypeChange::Modifiers {
                executable: on.executable,
                writable: on.writable,
                exclusive: on.exclusive,
            })
        } else {
            FileType::parse(text).map(TypeChange::Whole)
        }
    }

    /// The type a file of type `current` gets.
    pub fn apply(self, current: FileType) -> FileType {
        match self {
            TypeChange::Whole(whole) => whole,
            TypeChange::Modifiers {
                executable,
                writable,
                exclusive,
            } => FileType {
                executable: current.executable || executable,
                writable: current.writable || writable,
                exclusive: current.exclusive || exclusive,
                ..current
            },
        }
    }
}

/// What a workspace file is on disk, as far as its type is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalKind {
    Symlink,
    /// A regular file; `executable` is None where the platform keeps no executable bit.
    File {
        executable: Option<bool>,
    },
}

impl FileType {
    /// This type adjusted to a workspace file of kind `local`, as `reconcile` opens it: a
    /// symlink makes it `symlink`; a file that replaced a symlink takes the base `detect`
    /// returns (its content class, only asked for then); a file's `+x` follows its executable
    /// bit. `+l` and `+w` are kept; a symlink is never `+x`.
    pub fn adjusted_to<E>(
        self,
        local: LocalKind,
        detect: impl FnOnce() -> Result<BaseType, E>,
    ) -> Result<FileType, E> {
        let mut out = self;
        match local {
            LocalKind::Symlink => {
                out.base = BaseType::Symlink;
                out.executable = false;
            }
            LocalKind::File { executable } => {
                if self.base == BaseType::Symlink {
                    out.base = detect()?;
                    out.executable = executable.unwrap_or(false);
                } else if let Some(executable) = executable {
                    out.executable = executable;
                }
            }
        }
        Ok(out)
    }
}

impl fmt::Display for FileType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.base.as_str())?;
        if self.exclusive || self.writable || self.executable {
            f.write_str("+")?;
            for (on, c) in [
                (self.exclusive, "l"),
                (self.writable, "w"),
                (self.executable, "x"),
            ] {
                if on {
                    f.write_str(c)?;
                }
            }
        }
        Ok(())
    }
}

/// How many leading bytes of a file [`detect_base_type`] looks at.
const SAMPLE_LIMIT: usize = 64 * 1024;

/// Text when `sample` (the first up to 64 KiB of a file) has no NUL and is valid UTF-8,
/// allowing a multi-byte sequence cut off at the end of the sample; otherwise Binary.
pub fn detect_base_type(sample: &[u8]) -> BaseType {
    let sample = &sample[..sample.len().min(SAMPLE_LIMIT)];
    if sample.contains(&0) {
        return BaseType::Binary;
    }
    match std::str::from_utf8(sample) {
        Ok(_) => BaseType::Text,
        Err(e) if e.error_len().is_none() => BaseType::Text,
        Err(_) => BaseType::Binary,
    }
}

#[cfg(test)]
mod tests {

    /// `-t +l` adds a modifier to a file's own type; `-t binary` replaces the type.
    #[test]
    fn type_changes_apply_whole_types_and_modifiers() {
        let text_x = FileType::parse("text+x").expect("type");
        let plus_l = TypeChange::parse("+l").expect("modifiers");
        assert_eq!(
            plus_l.apply(text_x),
            FileType::parse("text+lx").expect("type")
        );
        let binary = TypeChange::parse("binary").expect("whole");
        assert_eq!(
            binary.apply(text_x),
            FileType::parse("binary").expect("type")
        );
        assert!(TypeChange::parse("+q").is_err());
        assert!(TypeChange::parse("blob").is_err());
    }
    use super::*;

    fn ft(base: BaseType, executable: bool, writable: bool, exclusive: bool) -> FileType {
        FileType {
            base,
            executable,
            writable,
            exclusive,
        }
    }

    #[test]
    fn parse_and_display() {
        use BaseType::*;
        let cases: &[(&str, FileType, &str)] = &[
            ("text", ft(Text, false, false, false), "text"),
            ("binary", ft(Binary, false, false, false), "binary"),
            ("symlink", ft(Symlink, false, false, false), "symlink"),
            ("text+x", ft(Text, true, false, false), "text+x"),
            ("binary+lx", ft(Binary, true, false, true), "binary+lx"),
            ("binary+xl", ft(Binary, true, false, true), "binary+lx"),
            ("text+xwl", ft(Text, true, true, true), "text+lwx"),
            ("text+ww", ft(Text, false, true, false), "text+w"),
        ];
        for (text, want, shown) in cases {
            let got = FileType::parse(text).expect(text);
            assert_eq!(got, *want, "{text}");
            assert_eq!(got.to_string(), *shown, "{text}");
            assert_eq!(FileType::parse(shown).expect(shown), got);
        }
    }

    #[test]
    fn parse_invalid() {
        let cases = [
            "",
            "txt",
            "Text",
            "text+",
            "text+q",
            "+x",
            "binary+l+x",
            "text x",
        ];
        for text in cases {
            let err = FileType::parse(text).expect_err(text);
            assert!(err.to_string().contains(&format!("{text:?}")), "{err}");
        }
    }

    #[test]
    fn apply_modifiers() {
        let text = FileType::parse("text").expect("text");
        let cases: &[(&str, Option<&str>)] = &[
            ("+l", Some("text+l")),
            ("+xw", Some("text+wx")),
            ("l", None),
            ("+", None),
            ("+z", None),
            ("", None),
        ];
        for (mods, want) in cases {
            let got = text.apply_modifiers(mods).ok().map(|t| t.to_string());
            assert_eq!(got.as_deref(), *want, "{mods}");
        }
    }

    #[test]
    fn adjusted_to_local_kind() {
        use LocalKind::{File, Symlink};
        let exec = |e| File {
            executable: Some(e),
        };
        let unknown = File { executable: None };
        // (depot type, local kind, detected base when asked, expected type)
        let cases: &[(&str, LocalKind, BaseType, &str)] = &[
            ("text", exec(false), BaseType::Binary, "text"),
            ("text", exec(true), BaseType::Binary, "text+x"),
            ("text+x", exec(false), BaseType::Text, "text"),
            ("text+x", unknown, BaseType::Text, "text+x"),
            ("binary", exec(true), BaseType::Text, "binary+x"),
            ("binary+x", exec(false), BaseType::Text, "binary"),
            ("binary+lw", exec(true), BaseType::Text, "binary+lwx"),
            ("text+lwx", exec(false), BaseType::Text, "text+lw"),
            ("text", Symlink, BaseType::Text, "symlink"),
            ("binary+lx", Symlink, BaseType::Text, "symlink+l"),
            ("symlink", Symlink, BaseType::Binary, "symlink"),
            ("symlink", exec(false), BaseType::Text, "text"),
            ("symlink", exec(true), BaseType::Binary, "binary+x"),
            ("symlink+l", unknown, BaseType::Binary, "binary+l"),
        ];
        for (from, local, detected, want) in cases {
            let base = FileType::parse(from).expect(from);
            let mut asked = false;
            let got = base
                .adjusted_to(*local, || {
                    asked = true;
                    Ok::<_, ()>(*detected)
                })
                .expect("detection cannot fail here");
            assert_eq!(got.to_string(), *want, "{from} as {local:?}");
            let needs_detection =
                base.base == BaseType::Symlink && matches!(local, LocalKind::File { .. });
            assert_eq!(asked, needs_detection, "{from} as {local:?}");
        }
    }

    #[test]
    fn detect() {
        let euro = "\u{20ac}".as_bytes();
        let mut long_text = vec![b'a'; SAMPLE_LIMIT - 1];
        long_text.extend_from_slice(euro);
        let cases: &[(&str, &[u8], BaseType)] = &[
            ("empty", b"", BaseType::Text),
            ("ascii", b"hello\nworld\n", BaseType::Text),
            ("utf8", "caf\u{e9} \u{20ac}".as_bytes(), BaseType::Text),
            ("nul", b"abc\0def", BaseType::Binary),
            ("invalid utf8", b"abc\xff\xfedef", BaseType::Binary),
            ("bad continuation", b"abc\xc3(", BaseType::Binary),
            ("cut at end", &euro[..2], BaseType::Text),
            ("cut after text", b"abc\xe2\x82", BaseType::Text),
            ("cut past 64KiB", &long_text, BaseType::Text),
            ("png header", b"\x89PNG\r\n\x1a\n", BaseType::Binary),
        ];
        for (name, sample, want) in cases {
            assert_eq!(detect_base_type(sample), *want, "{name}");
        }
    }
}
