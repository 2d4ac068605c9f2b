//! One record of a pack file: a fixed header naming the blob, then its stored bytes.
//!
//! ```text
//! magic "KBR1" | digest (32) | encoding (1) | stored length (u32 LE) | data check (16) | header check (8) | data
//! ```
//! The data check is BLAKE3 of the stored bytes (truncated), so a scan can tell a whole record
//! from a torn or zeroed one without decompressing; the header check covers the fields before
//! it, so zeros or garbage never parse as a header. Reclaiming a record punches a hole over its
//! data only: the header stays, and a scan can still step over it.

use crate::Encoding;
use keel_core::Digest;

pub(crate) const MAGIC: &[u8; 4] = b"KBR1";
/// Bytes of a record header.
pub(crate) const HEADER_LEN: usize = 4 + 32 + 1 + 4 + 16 + 8;

/// A parsed record header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub digest: Digest,
    pub encoding: Encoding,
    pub stored_len: u32,
    pub data_check: [u8; 16],
}

impl Header {
    /// The header for `data`, stored under `digest` with `encoding`.
    pub fn for_data(digest: Digest, encoding: Encoding, data: &[u8]) -> Header {
        Header {
            digest,
            encoding,
            stored_len: u32::try_from(data.len()).expect("packed blobs are smaller than 4 GiB"),
            data_check: data_check(data),
        }
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0..4].copy_from_slice(MAGIC);
        out[4..36].copy_from_slice(&self.digest.0);
        out[36] = encoding_byte(self.encoding);
        out[37..41].copy_from_slice(&self.stored_len.to_le_bytes());
        out[41..57].copy_from_slice(&self.data_check);
        let check = short_hash(&out[..57]);
        out[57..65].copy_from_slice(&check);
        out
    }

    /// Parses a header; `None` when the bytes are not one (torn, zeroed, or garbage).
    pub fn decode(bytes: &[u8; HEADER_LEN]) -> Option<Header> {
        if &bytes[0..4] != MAGIC || short_hash(&bytes[..57])[..] != bytes[57..65] {
            return None;
        }
        let encoding = encoding_of(bytes[36])?;
        Some(Header {
            digest: Digest(bytes[4..36].try_into().expect("32 bytes")),
            encoding,
            stored_len: u32::from_le_bytes(bytes[37..41].try_into().expect("4 bytes")),
            data_check: bytes[41..57].try_into().expect("16 bytes"),
        })
    }

    /// Whether `data` is the stored bytes this header describes.
    pub fn matches(&self, data: &[u8]) -> bool {
        data.len() == self.stored_len as usize && data_check(data) == self.data_check
    }
}

pub(crate) fn encoding_byte(encoding: Encoding) -> u8 {
    match encoding {
        Encoding::Raw => 0,
        Encoding::Zstd => 1,
    }
}

pub(crate) fn encoding_of(byte: u8) -> Option<Encoding> {
    match byte {
        0 => Some(Encoding::Raw),
        1 => Some(Encoding::Zstd),
        _ => None,
    }
}

fn data_check(data: &[u8]) -> [u8; 16] {
    blake3::hash(data).as_bytes()[..16]
        .try_into()
        .expect("16 bytes")
}

/// The first 8 bytes of BLAKE3 over `bytes`: the check of a header or an index entry.
pub(crate) fn short_hash(bytes: &[u8]) -> [u8; 8] {
    blake3::hash(bytes).as_bytes()[..8]
        .try_into()
        .expect("8 bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_reject_damage() {
        let data = b"stored bytes";
        let header = Header::for_data(Digest([7; 32]), Encoding::Zstd, data);
        let bytes = header.encode();
        assert_eq!(Header::decode(&bytes), Some(header));
        assert!(header.matches(data));
        assert!(!header.matches(b"stored bytez"));
        assert_eq!(Header::decode(&[0u8; HEADER_LEN]), None);
        for at in 0..HEADER_LEN {
            let mut damaged = bytes;
            damaged[at] ^= 0x10;
            assert_eq!(Header::decode(&damaged), None, "byte {at} flipped");
        }
    }
}
