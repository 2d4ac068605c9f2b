//! RCS keyword expansion for `+k` / `+ko` files: `$Id$` becomes `$Id: //depot/f#3 $` in the
//! workspace and in `print`, and an expanded `$Keyword: ... $` goes back to `$Keyword$` before
//! content is hashed, compared or stored. The stored revision always holds the unexpanded text.
//!
//! A keyword is `$Name$` or `$Name: anything but '$' and line ends $` within one line, for the
//! names in [`NAMES`] (`+ko`: only `$Id$` and `$Header$`). Dates are UTC.

use std::borrow::Cow;

use crate::calendar::civil_from_days;
use crate::filetype::{FileType, Keywords};

/// The keywords `+k` expands.
pub const NAMES: &[&str] = &[
    "Id",
    "Header",
    "Date",
    "DateUTC",
    "DateTime",
    "DateTimeUTC",
    "Change",
    "File",
    "Revision",
    "Author",
];

/// What a revision's keywords expand to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeywordValues<'a> {
    pub depot_file: &'a str,
    pub rev: u32,
    pub change: u64,
    /// The revision's submit time, seconds since the epoch.
    pub time: i64,
    /// The user who submitted the revision.
    pub author: &'a str,
}

impl FileType {
    /// The keywords this type expands: none unless a `+k`/`+ko` line-text file.
    pub fn expanded_keywords(&self) -> Keywords {
        if self.base.is_line_text() {
            self.keywords
        } else {
            Keywords::None
        }
    }
}

fn selected(which: Keywords, name: &str) -> bool {
    match which {
        Keywords::None => false,
        Keywords::All => NAMES.contains(&name),
        Keywords::IdOnly => name == "Id" || name == "Header",
    }
}

/// One keyword found at `start..end` of the content, named `name`.
struct Found<'a> {
    start: usize,
    end: usize,
    name: &'a str,
}

/// The keyword that starts at `content[at]` (a `$`), if any.
fn keyword_at(content: &[u8], at: usize, which: Keywords) -> Option<Found<'_>> {
    let rest = &content[at + 1..];
    let len = rest.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    let name = std::str::from_utf8(&rest[..len]).ok()?;
    if len == 0 || !selected(which, name) {
        return None;
    }
    let after = at + 1 + len;
    match content.get(after) {
        Some(b'$') => Some(Found {
            start: at,
            end: after + 1,
            name,
        }),
        Some(b':') => {
            let tail = &content[after + 1..];
            let close = tail
                .iter()
                .position(|&b| matches!(b, b'$' | b'\n' | b'\r'))?;
            (tail[close] == b'$').then_some(Found {
                start: at,
                end: after + 1 + close + 1,
                name,
            })
        }
        _ => None,
    }
}

/// Rewrites every selected keyword in `content` with `each(name)`; borrowed when none is there.
fn rewrite<'c>(
    content: &'c [u8],
    which: Keywords,
    mut each: impl FnMut(&str, &mut Vec<u8>),
) -> Cow<'c, [u8]> {
    if which == Keywords::None {
        return Cow::Borrowed(content);
    }
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    while let Some(offset) = content[i..].iter().position(|&b| b == b'$') {
        let at = i + offset;
        match keyword_at(content, at, which) {
            Some(found) => {
                let buf = out.get_or_insert_with(|| Vec::with_capacity(content.len() + 64));
                buf.extend_from_slice(&content[copied..found.start]);
                each(found.name, buf);
                copied = found.end;
                i = found.end;
            }
            None => i = at + 1,
        }
    }
    match out {
        Some(mut buf) => {
            buf.extend_from_slice(&content[copied..]);
            Cow::Owned(buf)
        }
        None => Cow::Borrowed(content),
    }
}

/// `content` with its keywords expanded (`$Id$` and `$Id: old $` both become `$Id: new $`).
pub fn expand<'c>(content: &'c [u8], which: Keywords, v: &KeywordValues<'_>) -> Cow<'c, [u8]> {
    rewrite(content, which, |name, out| {
        let value = value_of(name, v);
        out.extend_from_slice(format!("${name}: {value} $").as_bytes());
    })
}

/// `content` with its expanded keywords put back to `$Keyword$`: the form that is stored.
pub fn unexpand(content: &[u8], which: Keywords) -> Cow<'_, [u8]> {
    rewrite(content, which, |name, out| {
        out.extend_from_slice(format!("${name}$").as_bytes());
    })
}

fn value_of(name: &str, v: &KeywordValues<'_>) -> String {
    let days = v.time.div_euclid(86_400);
    let secs = v.time.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let date = format!("{y:04}/{m:02}/{d:02}");
    let clock = format!(
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs % 3600) / 60,
        secs % 60
    );
    match name {
        "Id" | "Header" => format!("{}#{}", v.depot_file, v.rev),
        "Date" | "DateUTC" => date,
        "DateTime" | "DateTimeUTC" => format!("{date} {clock}"),
        "Change" => v.change.to_string(),
        "File" => v.depot_file.to_string(),
        "Revision" => format!("#{}", v.rev),
        "Author" => v.author.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: KeywordValues<'static> = KeywordValues {
        depot_file: "//depot/src/a.c",
        rev: 3,
        change: 42,
        // 2026-11-25 13:05:09 UTC
        time: 1_795_611_909,
        author: "ana",
    };

    fn exp(text: &str, which: Keywords) -> String {
        String::from_utf8(expand(text.as_bytes(), which, &V).into_owned()).unwrap()
    }

    fn unexp(text: &str, which: Keywords) -> String {
        String::from_utf8(unexpand(text.as_bytes(), which).into_owned()).unwrap()
    }

    #[test]
    fn every_keyword_expands() {
        let cases: &[(&str, &str)] = &[
            ("$Id$", "$Id: //depot/src/a.c#3 $"),
            ("$Header$", "$Header: //depot/src/a.c#3 $"),
            ("$Date$", "$Date: 2026/11/25 $"),
            ("$DateTime$", "$DateTime: 2026/11/25 13:05:09 $"),
            ("$Change$", "$Change: 42 $"),
            ("$File$", "$File: //depot/src/a.c $"),
            ("$Revision$", "$Revision: #3 $"),
            ("$Author$", "$Author: ana $"),
            (
                "// $Id$ and $Change$\n",
                "// $Id: //depot/src/a.c#3 $ and $Change: 42 $\n",
            ),
            ("$Id: stale old value $", "$Id: //depot/src/a.c#3 $"),
            ("cost: $5, $Unknown$, $Id", "cost: $5, $Unknown$, $Id"),
            ("$Id:\n$", "$Id:\n$"),
            ("$$Id$$", "$$Id: //depot/src/a.c#3 $$"),
        ];
        for (text, want) in cases {
            assert_eq!(exp(text, Keywords::All), *want, "{text}");
            // Un-expanding gives back the keyword form, whatever the value was.
            assert_eq!(
                unexp(want, Keywords::All),
                unexp(text, Keywords::All),
                "{text}"
            );
        }
    }

    #[test]
    fn ko_expands_only_id_and_header() {
        assert_eq!(
            exp("$Id$ $Header$ $Date$ $Author$", Keywords::IdOnly),
            "$Id: //depot/src/a.c#3 $ $Header: //depot/src/a.c#3 $ $Date$ $Author$"
        );
        assert_eq!(
            unexp("$Author: ana $ $Id: x $", Keywords::IdOnly),
            "$Author: ana $ $Id$"
        );
    }

    #[test]
    fn unexpanded_text_round_trips_and_untouched_text_is_borrowed() {
        let text = "line one\n/* $Id$ */\n$Revision$ $DateTime$\n";
        let expanded = exp(text, Keywords::All);
        assert_eq!(unexp(&expanded, Keywords::All), text);
        assert!(matches!(
            unexpand(b"no keywords here $ at all", Keywords::All),
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            expand(b"$Id$", Keywords::None, &V),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn only_text_types_expand() {
        let k = |t: &str| FileType::parse(t).expect(t).expanded_keywords();
        assert_eq!(k("text+k"), Keywords::All);
        assert_eq!(k("utf8+ko"), Keywords::IdOnly);
        assert_eq!(k("binary+k"), Keywords::None);
        assert_eq!(k("text"), Keywords::None);
    }

    /// Over every short text of the characters keywords are made of, un-expanding an
    /// expanded text gives what un-expanding the text gives: a workspace file synced
    /// expanded and left alone always hashes as its stored revision.
    #[test]
    fn unexpand_undoes_expand_for_every_short_text() {
        let alphabet = [b'$', b'I', b'd', b':', b' ', b'\n', b'x'];
        let mut checked = 0;
        for len in 0..=6u32 {
            for mut code in 0..(alphabet.len() as u64).pow(len) {
                let mut text = Vec::with_capacity(len as usize);
                for _ in 0..len {
                    text.push(alphabet[(code % alphabet.len() as u64) as usize]);
                    code /= alphabet.len() as u64;
                }
                for which in [Keywords::All, Keywords::IdOnly] {
                    let expanded = expand(&text, which, &V);
                    assert_eq!(
                        unexpand(&expanded, which),
                        unexpand(&text, which),
                        "{:?}",
                        String::from_utf8_lossy(&text)
                    );
                }
                checked += 1;
            }
        }
        assert_eq!(checked, (0..=6).map(|n| 7u64.pow(n)).sum::<u64>());
    }
}
