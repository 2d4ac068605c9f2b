//! A sealed pack's index file: every live record's digest and place, written once at sealing.
//!
//! ```text
//! magic "KBI1" | count (u64 LE) | count × (digest (32) | offset (u64) | stored length (u32) | encoding, top bit: damaged (1)) | BLAKE3 of all before (32)
//! ```
//! It is written to a temporary name, synced and renamed, so it is whole or absent; one that
//! does not check out is ignored and rebuilt from its pack.

use super::Loc;
use super::record::{encoding_byte, encoding_of};
use crate::BlobError;
use keel_core::Digest;
use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

const MAGIC: &[u8; 4] = b"KBI1";
const ENTRY_LEN: usize = 32 + 8 + 4 + 1;
/// Set in an entry's encoding byte when the record was found damaged (see `Loc::damaged`).
const DAMAGED: u8 = 0x80;

/// Writes `entries` (records of pack `pack`) as the index at `path`, durably.
pub(crate) fn write(path: &Path, entries: &[(Digest, Loc)]) -> Result<(), BlobError> {
    let mut bytes = Vec::with_capacity(12 + entries.len() * ENTRY_LEN + 32);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for (digest, loc) in entries {
        bytes.extend_from_slice(&digest.0);
        bytes.extend_from_slice(&loc.offset.to_le_bytes());
        bytes.extend_from_slice(&loc.stored_len.to_le_bytes());
        bytes.push(encoding_byte(loc.encoding) | if loc.damaged { DAMAGED } else { 0 });
    }
    let check = blake3::hash(&bytes);
    bytes.extend_from_slice(check.as_bytes());
    let temp = path.with_extension("idx-tmp");
    let mut file = File::create(&temp).map_err(|e| BlobError::io(&temp, e))?;
    file.write_all(&bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| BlobError::io(&temp, e))?;
    fs::rename(&temp, path).map_err(|e| BlobError::io(path, e))
}

/// Reads the index at `path` for pack `pack`; `None` when it is absent or does not check out.
pub(crate) fn read(path: &Path, pack: u32) -> Option<Vec<(Digest, Loc)>> {
    let bytes = fs::read(path).ok()?;
    if bytes.len() < 12 + 32 || &bytes[0..4] != MAGIC {
        return None;
    }
    let (body, check) = bytes.split_at(bytes.len() - 32);
    if blake3::hash(body).as_bytes()[..] != check[..] {
        return None;
    }
    let count = u64::from_le_bytes(body[4..12].try_into().ok()?) as usize;
    let entries = &body[12..];
    if entries.len() != count.checked_mul(ENTRY_LEN)? {
        return None;
    }
    entries
        .chunks_exact(ENTRY_LEN)
        .map(|e| {
            Some((
                Digest(e[0..32].try_into().ok()?),
                Loc {
                    pack,
                    offset: u64::from_le_bytes(e[32..40].try_into().ok()?),
                    stored_len: u32::from_le_bytes(e[40..44].try_into().ok()?),
                    encoding: encoding_of(e[44] & !DAMAGED)?,
                    damaged: e[44] & DAMAGED != 0,
                },
            ))
        })
        .collect()
}
