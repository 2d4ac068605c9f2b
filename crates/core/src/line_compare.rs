//! How lines compare when annotating with `-db`, `-dw` or `-dl`: the key two lines must share
//! to count as the same line.

use std::borrow::Cow;

/// Which differences between two lines do not make them different.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LineCompare {
    /// Byte for byte.
    #[default]
    Exact,
    /// `-dl`: a trailing carriage return (CRLF against LF).
    LineEndings,
    /// `-db`: the amount of whitespace (a run of spaces and tabs is one space; trailing
    /// whitespace and line endings are ignored).
    WhitespaceChanges,
    /// `-dw`: all whitespace.
    AllWhitespace,
}

impl LineCompare {
    /// The text two lines must share to compare equal.
    pub fn key<'a>(self, line: &'a str) -> Cow<'a, str> {
        match self {
            LineCompare::Exact => Cow::Borrowed(line),
            LineCompare::LineEndings => Cow::Borrowed(line.strip_suffix('\r').unwrap_or(line)),
            LineCompare::WhitespaceChanges => {
                let mut out = String::with_capacity(line.len());
                let mut space = false;
                for c in line.trim_end().chars() {
                    if c.is_whitespace() {
                        space = true;
                    } else {
                        if space {
                            out.push(' ');
                            space = false;
                        }
                        out.push(c);
                    }
                }
                // A line of only whitespace, or leading whitespace: one space stands for it.
                if line.starts_with(char::is_whitespace) && !out.is_empty() {
                    out.insert(0, ' ');
                }
                Cow::Owned(out)
            }
            LineCompare::AllWhitespace => {
                Cow::Owned(line.chars().filter(|c| !c.is_whitespace()).collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LineCompare::*;

    #[test]
    fn keys() {
        assert_eq!(Exact.key("a  b\r"), "a  b\r");
        assert_eq!(LineEndings.key("a  b\r"), "a  b");
        assert_eq!(LineEndings.key("a  b"), "a  b");
        assert_eq!(WhitespaceChanges.key("a  \tb  \r"), "a b");
        assert_eq!(
            WhitespaceChanges.key("  a b"),
            WhitespaceChanges.key("\ta  b ")
        );
        assert_ne!(WhitespaceChanges.key("ab"), WhitespaceChanges.key("a b"));
        assert_ne!(WhitespaceChanges.key("a b"), WhitespaceChanges.key(" a b"));
        assert_eq!(AllWhitespace.key(" a b\t\r"), "ab");
        assert_eq!(AllWhitespace.key("ab"), AllWhitespace.key("a   b"));
    }
}
