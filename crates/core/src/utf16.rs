//! `utf16` files: stored as UTF-8, written to a workspace as UTF-16LE with a byte order mark.

/// Workspace content that is not valid UTF-16 text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Utf16Error {
    #[error("is not valid UTF-16: it has an odd number of bytes ({0})")]
    OddLength(usize),
    #[error("is not valid UTF-16: unpaired surrogate 0x{unit:04X} at byte {offset}")]
    UnpairedSurrogate { unit: u16, offset: usize },
}

/// The workspace form of stored `utf16` content: a little-endian byte order mark, then the
/// text as UTF-16LE. Stored bytes that are not UTF-8 (revisions stored before `utf16` was
/// converted) are written as they are.
pub fn to_workspace(stored: &[u8]) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(stored) else {
        return stored.to_vec();
    };
    let mut out = Vec::with_capacity(2 + stored.len() * 2);
    out.extend_from_slice(&[0xFF, 0xFE]);
    for unit in text.encode_utf16() {
        out.extend_from_slice(&unit.to_le_bytes());
    }
    out
}

/// The stored (UTF-8, no byte order mark) form of a workspace `utf16` file. A byte order mark
/// picks the byte order (`FF FE` little-endian, `FE FF` big-endian); without one the content is
/// read as little-endian.
pub fn from_workspace(bytes: &[u8]) -> Result<Vec<u8>, Utf16Error> {
    let (body, big_endian, start) = match bytes {
        [0xFF, 0xFE, rest @ ..] => (rest, false, 2),
        [0xFE, 0xFF, rest @ ..] => (rest, true, 2),
        _ => (bytes, false, 0),
    };
    if body.len() % 2 != 0 {
        return Err(Utf16Error::OddLength(bytes.len()));
    }
    let units: Vec<u16> = body
        .chunks_exact(2)
        .map(|pair| {
            let pair = [pair[0], pair[1]];
            if big_endian {
                u16::from_be_bytes(pair)
            } else {
                u16::from_le_bytes(pair)
            }
        })
        .collect();
    let mut out = String::with_capacity(body.len());
    let mut at = 0;
    while at < units.len() {
        let unit = units[at];
        let next = units.get(at + 1).copied();
        let decoded = char::decode_utf16([unit].into_iter().chain(next)).next();
        match decoded {
            Some(Ok(c)) => {
                out.push(c);
                at += c.len_utf16();
            }
            _ => {
                return Err(Utf16Error::UnpairedSurrogate {
                    unit,
                    offset: start + at * 2,
                });
            }
        }
    }
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_with_a_little_endian_bom() {
        let text = "caf\u{e9} \u{1F600}\r\nline two\n";
        let ws = to_workspace(text.as_bytes());
        assert_eq!(&ws[..4], &[0xFF, 0xFE, b'c', 0]);
        assert_eq!(from_workspace(&ws).unwrap(), text.as_bytes());
    }

    #[test]
    fn reads_big_endian_and_bomless() {
        assert_eq!(from_workspace(b"\xFE\xFF\0h\0i").unwrap(), b"hi");
        assert_eq!(from_workspace(b"h\0i\0").unwrap(), b"hi");
        assert_eq!(from_workspace(b"").unwrap(), b"");
    }

    #[test]
    fn refuses_odd_lengths_and_unpaired_surrogates() {
        assert_eq!(
            from_workspace(b"\xFF\xFEh\0i"),
            Err(Utf16Error::OddLength(5))
        );
        assert_eq!(
            from_workspace(b"\xFF\xFEh\0\x00\xD8i\0"),
            Err(Utf16Error::UnpairedSurrogate {
                unit: 0xD800,
                offset: 4
            })
        );
    }

    #[test]
    fn legacy_non_utf8_content_is_written_as_is() {
        assert_eq!(to_workspace(b"\xFF\xFEh\0"), b"\xFF\xFEh\0");
    }
}
