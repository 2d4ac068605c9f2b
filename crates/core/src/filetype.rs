//! File types (`text`, `binary+lx`, ...) and content-based base type detection.

use std::fmt;

/// Errors produced when parsing file types.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileTypeError {
    /// The base type is not one Keel knows (nor a legacy name for one).
    #[error(
        "invalid file type {text:?}: unknown base type {base:?} (text, binary, symlink, utf8, \
         utf16, unicode, or a legacy name such as ktext or xbinary)"
    )]
    UnknownBase { text: String, base: String },
    /// A modifier letter is not one Keel knows.
    #[error("invalid file type {text:?}: unknown modifier '{modifier}'")]
    UnknownModifier { text: String, modifier: char },
    /// The modifier part is missing or malformed.
    #[error(
        "invalid file type modifiers {text:?}: expected '+' followed by modifiers (l w x k ko m \
         S Sn C D F)"
    )]
    BadModifiers { text: String },
    /// `+Sn` with a count out of range.
    #[error("invalid file type {text:?}: +S keeps 1 to {MAX_KEEP} revisions, not {count}")]
    BadKeep { text: String, count: String },
}

/// The most revisions `+Sn` may keep.
pub const MAX_KEEP: u16 = 512;

/// The storage/representation class of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BaseType {
    Text,
    Binary,
    Symlink,
    /// Text known to be UTF-8 (stored and synced as it is).
    Utf8,
    /// UTF-16 text (stored and synced byte for byte; diffed and merged as binary).
    Utf16,
}

impl BaseType {
    fn as_str(self) -> &'static str {
        match self {
            BaseType::Text => "text",
            BaseType::Binary => "binary",
            BaseType::Symlink => "symlink",
            BaseType::Utf8 => "utf8",
            BaseType::Utf16 => "utf16",
        }
    }

    /// Content diffed and merged line by line (`text`, `utf8`).
    pub fn is_line_text(self) -> bool {
        matches!(self, BaseType::Text | BaseType::Utf8)
    }
}

/// Which RCS keywords a `+k` (all) or `+ko` (only `$Id$` and `$Header$`) file expands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Keywords {
    #[default]
    None,
    All,
    IdOnly,
}

/// A base type plus modifiers: `+x` executable, `+w` always writable, `+l` exclusive lock,
/// `+k`/`+ko` keyword expansion, `+m` modification time kept, `+S`/`+Sn` only the newest
/// revisions' content kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileType {
    pub base: BaseType,
    pub executable: bool,
    pub writable: bool,
    pub exclusive: bool,
    pub keywords: Keywords,
    pub modtime: bool,
    /// `+S` (1) / `+Sn`: how many of the newest revisions keep their content.
    pub keep: Option<u16>,
}

/// Legacy type names and the type each stands for (P4 Command Reference, "File types").
/// Storage hints (`+C`, `+D`, `+F`) are dropped: Keel stores every revision whole, compressed.
const LEGACY: &[(&str, &str)] = &[
    ("ctempobj", "binary+Sw"),
    ("ctext", "text"),
    ("cxtext", "text+x"),
    ("ktext", "text+k"),
    ("kxtext", "text+kx"),
    ("ltext", "text"),
    ("tempobj", "binary+Sw"),
    ("ubinary", "binary"),
    ("uxbinary", "binary+x"),
    ("xbinary", "binary+x"),
    ("xltext", "text+x"),
    ("xtempobj", "binary+Swx"),
    ("xtext", "text+x"),
    ("xunicode", "utf8+x"),
    ("xutf16", "utf16+x"),
];

impl FileType {
    /// A base type with no modifiers.
    pub const fn plain(base: BaseType) -> FileType {
        FileType {
            base,
            executable: false,
            writable: false,
            exclusive: false,
            keywords: Keywords::None,
            modtime: false,
            keep: None,
        }
    }

    /// `text`.
    pub const TEXT: FileType = FileType::plain(BaseType::Text);

    /// Parses `text`, `binary`, `symlink`, `utf8`, `utf16` (`unicode` is `utf8`), optionally
    /// followed by `+` and modifiers (`binary+lx`, `text+ko`, `binary+S4`), or a legacy name
    /// (`ktext` is `text+k`), which may itself take modifiers (`ktext+l`).
    pub fn parse(text: &str) -> Result<FileType, FileTypeError> {
        let (base, mods) = match text.find('+') {
            Some(i) => (&text[..i], Some(&text[i..])),
            None => (text, None),
        };
        let plain = match base {
            "text" => FileType::plain(BaseType::Text),
            "binary" => FileType::plain(BaseType::Binary),
            "symlink" => FileType::plain(BaseType::Symlink),
            "utf8" | "unicode" => FileType::plain(BaseType::Utf8),
            "utf16" => FileType::plain(BaseType::Utf16),
            other => match LEGACY.iter().find(|(name, _)| *name == other) {
                Some((_, full)) => FileType::parse(full).expect("legacy table types parse"),
                None => {
                    return Err(FileTypeError::UnknownBase {
                        text: text.to_string(),
                        base: other.to_string(),
                    });
                }
            },
        };
        match mods {
            Some(mods) => plain.apply_modifiers(mods).map_err(|e| match e {
                FileTypeError::UnknownModifier { modifier, .. } => FileTypeError::UnknownModifier {
                    text: text.to_string(),
                    modifier,
                },
                FileTypeError::BadKeep { count, .. } => FileTypeError::BadKeep {
                    text: text.to_string(),
                    count,
                },
                _ => FileTypeError::BadModifiers {
                    text: text.to_string(),
                },
            }),
            None => Ok(plain),
        }
    }

    /// Returns a copy with the modifiers in `mods` (like `+l`, `+xw`, `+ko`, `+S3`) turned on.
    pub fn apply_modifiers(&self, mods: &str) -> Result<FileType, FileTypeError> {
        let letters = mods
            .strip_prefix('+')
            .filter(|l| !l.is_empty())
            .ok_or_else(|| FileTypeError::BadModifiers {
                text: mods.to_string(),
            })?;
        let mut out = *self;
        let mut chars = letters.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                'x' => out.executable = true,
                'w' => out.writable = true,
                'l' => out.exclusive = true,
                'm' => out.modtime = true,
                'k' => {
                    if chars.next_if(|&(_, c)| c == 'o').is_some() {
                        out.keywords = Keywords::IdOnly;
                    } else {
                        out.keywords = Keywords::All;
                    }
                }
                'S' => {
                    let digits: String = letters[i + 1..]
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect();
                    for _ in 0..digits.len() {
                        chars.next();
                    }
                    let count = if digits.is_empty() {
                        1
                    } else {
                        match digits.parse::<u16>() {
                            Ok(n) if (1..=MAX_KEEP).contains(&n) => n,
                            _ => {
                                return Err(FileTypeError::BadKeep {
                                    text: mods.to_string(),
                                    count: digits,
                                });
                            }
                        }
                    };
                    out.keep = Some(count);
                }
                // Storage hints: every revision is stored whole and compressed anyway.
                'C' | 'D' | 'F' => {}
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

    /// The modifiers of `on` turned on over this type's own (`keep` and `keywords` from `on`
    /// when it sets them).
    fn with_modifiers_of(self, on: FileType) -> FileType {
        FileType {
            executable: self.executable || on.executable,
            writable: self.writable || on.writable,
            exclusive: self.exclusive || on.exclusive,
            modtime: self.modtime || on.modtime,
            keywords: match on.keywords {
                Keywords::None => self.keywords,
                set => set,
            },
            keep: on.keep.or(self.keep),
            base: self.base,
        }
    }
}

/// A type change asked for with `-t` (or a typemap line): a whole type, or modifiers turned
/// on over a file's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeChange {
    /// `binary+l`: the file becomes this type.
    Whole(FileType),
    /// `+l`, `+xw`: these modifiers (the ones set in this otherwise plain type) are turned
    /// on; the rest of the type stays.
    Modifiers(FileType),
}

impl TypeChange {
    /// Parses `-t`'s value: modifiers when it starts with `+`, else a whole type.
    pub fn parse(text: &str) -> Result<TypeChange, FileTypeError> {
        if text.starts_with('+') {
            FileType::TEXT
                .apply_modifiers(text)
                .map(TypeChange::Modifiers)
        } else {
            FileType::parse(text).map(TypeChange::Whole)
        }
    }

    /// The type a file of type `current` gets.
    pub fn apply(self, current: FileType) -> FileType {
        match self {
            TypeChange::Whole(whole) => whole,
            TypeChange::Modifiers(on) => current.with_modifiers_of(on),
        }
    }
}

impl fmt::Display for TypeChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeChange::Whole(t) => t.fmt(f),
            TypeChange::Modifiers(on) => {
                let whole = on.to_string();
                f.write_str(whole.strip_prefix("text").unwrap_or(&whole))
            }
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
        let mut mods = String::new();
        for (on, c) in [
            (self.exclusive, "l"),
            (self.writable, "w"),
            (self.executable, "x"),
            (self.keywords == Keywords::All, "k"),
            (self.keywords == Keywords::IdOnly, "ko"),
            (self.modtime, "m"),
        ] {
            if on {
                mods.push_str(c);
            }
        }
        match self.keep {
            Some(1) => mods.push('S'),
            Some(n) => mods.push_str(&format!("S{n}")),
            None => {}
        }
        if !mods.is_empty() {
            write!(f, "+{mods}")?;
        }
        Ok(())
    }
}

/// How many leading bytes of a file [`detect_base_type`] looks at.
const SAMPLE_LIMIT: usize = 64 * 1024;

/// Utf16 when `sample` (the first up to 64 KiB of a file) starts with a UTF-16 byte order
/// mark; Text when it has no NUL and is valid UTF-8, allowing a multi-byte sequence cut off at
/// the end of the sample; otherwise Binary.
pub fn detect_base_type(sample: &[u8]) -> BaseType {
    let sample = &sample[..sample.len().min(SAMPLE_LIMIT)];
    if sample.starts_with(&[0xff, 0xfe]) || sample.starts_with(&[0xfe, 0xff]) {
        return BaseType::Utf16;
    }
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
            executable,
            writable,
            exclusive,
            ..FileType::plain(base)
        }
    }

    /// The newer modifiers and the legacy names: each parses, shows in its normal form and
    /// parses back to the same type.
    #[test]
    fn modifiers_and_legacy_names_normalise() {
        let cases: &[(&str, &str)] = &[
            ("text+k", "text+k"),
            ("text+ko", "text+ko"),
            ("text+kx", "text+xk"),
            ("text+xk", "text+xk"),
            ("binary+m", "binary+m"),
            ("binary+S", "binary+S"),
            ("binary+S1", "binary+S"),
            ("binary+S16", "binary+S16"),
            ("binary+lS4", "binary+lS4"),
            ("binary+F", "binary"),
            ("text+CD", "text"),
            ("utf8", "utf8"),
            ("unicode", "utf8"),
            ("utf16+x", "utf16+x"),
            ("ktext", "text+k"),
            ("kxtext", "text+xk"),
            ("xtext", "text+x"),
            ("ltext", "text"),
            ("xbinary", "binary+x"),
            ("ubinary", "binary"),
            ("uxbinary", "binary+x"),
            ("tempobj", "binary+wS"),
            ("xtempobj", "binary+wxS"),
            ("xutf16", "utf16+x"),
            ("ktext+l", "text+lk"),
        ];
        for (text, shown) in cases {
            let got = FileType::parse(text).expect(text);
            assert_eq!(got.to_string(), *shown, "{text}");
            assert_eq!(FileType::parse(shown).expect(shown), got, "{text}");
        }
        let keep = FileType::parse("binary+S10").expect("S10");
        assert_eq!(keep.keep, Some(10));
        let ko = FileType::parse("text+ko").expect("ko");
        assert_eq!(ko.keywords, Keywords::IdOnly);
        for bad in ["binary+S0", "binary+S513", "text+X", "ktxt", "utf32"] {
            let err = FileType::parse(bad).expect_err(bad);
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }

    /// `-t +k` over a `text+x` file keeps `+x`; `-t +S2` sets the count.
    #[test]
    fn modifier_changes_keep_the_rest() {
        let text_x = FileType::parse("text+x").expect("type");
        let k = TypeChange::parse("+k").expect("k");
        assert_eq!(k.apply(text_x).to_string(), "text+xk");
        assert_eq!(k.to_string(), "+k");
        let s2 = TypeChange::parse("+S2").expect("S2");
        assert_eq!(s2.apply(text_x).to_string(), "text+xS2");
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
            ("utf16le bom", b"\xff\xfeh\0i\0", BaseType::Utf16),
            ("utf16be bom", b"\xfe\xff\0h\0i", BaseType::Utf16),
        ];
        for (name, sample, want) in cases {
            assert_eq!(detect_base_type(sample), *want, "{name}");
        }
    }
}
