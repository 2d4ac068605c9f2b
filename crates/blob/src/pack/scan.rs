//! Reading a pack from its first byte: how its index is rebuilt and a torn append found.
//!
//! Each record's header and stored bytes are checked (see `record.rs`). A record that was
//! reclaimed (its place is in the tombstone log) is stepped over; one whose bytes do not
//! check out is not indexed. The scan ends at the first bytes that are not a whole header or
//! whose data runs past the end of the file: everything after the last good record is what a
//! crash left of an append, and the caller cuts it off.

use super::Loc;
use super::record::{HEADER_LEN, Header};
use crate::BlobError;
use keel_core::Digest;
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufReader, ErrorKind, Read};
use std::path::Path;

/// What a scan found.
pub(crate) struct Scanned {
    /// Every whole, unreclaimed record, in file order.
    pub entries: Vec<(Digest, Loc)>,
    /// The end of the last good (or reclaimed) record: where the pack's intact part ends.
    pub good_len: u64,
}

/// Scans pack `pack` at `path`, skipping the places in `reclaimed`.
pub(crate) fn scan(
    path: &Path,
    pack: u32,
    reclaimed: &HashSet<(u32, u64)>,
) -> Result<Scanned, BlobError> {
    let file = File::open(path).map_err(|e| BlobError::io(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut entries = Vec::new();
    let mut offset = 0u64;
    let mut good_len = 0u64;
    let mut data = Vec::new();
    loop {
        let mut head = [0u8; HEADER_LEN];
        if !read_whole(&mut reader, &mut head).map_err(|e| BlobError::io(path, e))? {
            break;
        }
        let Some(header) = Header::decode(&head) else {
            break;
        };
        data.resize(header.stored_len as usize, 0);
        if !read_whole(&mut reader, &mut data).map_err(|e| BlobError::io(path, e))? {
            break;
        }
        let end = offset + (HEADER_LEN + data.len()) as u64;
        if reclaimed.contains(&(pack, offset)) {
            good_len = end;
        } else if header.matches(&data) {
            entries.push((
                header.digest,
                Loc {
                    pack,
                    offset,
                    stored_len: header.stored_len,
                    encoding: header.encoding,
                },
            ));
            good_len = end;
        }
        offset = end;
    }
    Ok(Scanned { entries, good_len })
}

/// Fills `buf` whole; `false` when the file ends first.
fn read_whole(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<bool> {
    match reader.read_exact(buf) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => Ok(false),
        Err(e) => Err(e),
    }
}
