//! Reading a pack from its first byte: how its index is rebuilt and a torn append found.
//!
//! Each record's header and stored bytes are checked (see `record.rs`). A record that was
//! reclaimed (its place is in the tombstone log) is stepped over. Bytes that are not a header
//! (damage inside the pack) are searched past for the next whole record, so one bad spot never
//! hides the records after it. The intact part of the pack ends after its last whole (or
//! reclaimed) record: what follows is what a crash left of an append, and the caller cuts it
//! off. A record before that end whose bytes do not check out was damaged after it was
//! written: it is indexed as damaged, so `verify` reports it rather than calling it missing.

use super::Loc;
use super::record::{HEADER_LEN, Header, MAGIC};
use crate::BlobError;
use keel_core::Digest;
use std::collections::HashSet;
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
    let bytes = std::fs::read(path).map_err(|e| BlobError::io(path, e))?;
    Ok(scan_bytes(&bytes, pack, reclaimed))
}

fn scan_bytes(bytes: &[u8], pack: u32, reclaimed: &HashSet<(u32, u64)>) -> Scanned {
    let mut entries = Vec::new();
    let mut good_len = 0usize;
    let mut at = 0usize;
    while at < bytes.len() {
        let Some((header, end)) = record_at(bytes, at) else {
            // Not a whole record here: look for the next one.
            match next_magic(bytes, at + 1) {
                Some(next) => {
                    at = next;
                    continue;
                }
                None => break,
            }
        };
        let data = &bytes[at + HEADER_LEN..end];
        if reclaimed.contains(&(pack, at as u64)) {
            good_len = end;
        } else {
            let whole = header.matches(data);
            entries.push((
                header.digest,
                Loc {
                    pack,
                    offset: at as u64,
                    stored_len: header.stored_len,
                    encoding: header.encoding,
                    damaged: !whole,
                },
            ));
            if whole {
                good_len = end;
            }
        }
        at = end;
    }
    // Records past the intact part are the torn append's, never acknowledged.
    entries.retain(|(_, loc)| loc.end() <= good_len as u64);
    Scanned {
        entries,
        good_len: good_len as u64,
    }
}

/// The header at `at` and the end of its record, when a whole header is there and its data
/// fits in the file.
fn record_at(bytes: &[u8], at: usize) -> Option<(Header, usize)> {
    let head: &[u8; HEADER_LEN] = bytes.get(at..at + HEADER_LEN)?.try_into().ok()?;
    let header = Header::decode(head)?;
    let end = at + HEADER_LEN + header.stored_len as usize;
    (end <= bytes.len()).then_some((header, end))
}

fn next_magic(bytes: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(MAGIC.len())
        .position(|w| w == MAGIC)
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Encoding;

    fn record(i: u8) -> Vec<u8> {
        let data = vec![i; 100 + usize::from(i)];
        let header = Header::for_data(Digest([i; 32]), Encoding::Raw, &data);
        let mut out = header.encode().to_vec();
        out.extend_from_slice(&data);
        out
    }

    #[test]
    fn damage_inside_a_pack_hides_only_the_damaged_record() {
        let records: Vec<Vec<u8>> = (1..=4).map(record).collect();
        let mut pack: Vec<u8> = records.concat();
        // Record 2's header damaged, record 3's data damaged.
        let second = records[0].len();
        let third = second + records[1].len();
        pack[second + 10] ^= 1;
        pack[third + HEADER_LEN + 5] ^= 1;
        let scanned = scan_bytes(&pack, 1, &HashSet::new());
        let found: Vec<(u8, bool)> = scanned
            .entries
            .iter()
            .map(|(d, loc)| (d.0[0], loc.damaged))
            .collect();
        assert_eq!(found, [(1, false), (3, true), (4, false)]);
        assert_eq!(
            scanned.good_len,
            pack.len() as u64,
            "nothing after record 4 to cut"
        );
        // A torn tail after the last whole record is what gets cut.
        let mut torn = pack.clone();
        torn.extend_from_slice(&record(5)[..150]);
        let scanned = scan_bytes(&torn, 1, &HashSet::new());
        assert_eq!(scanned.good_len, pack.len() as u64);
        // A last record whose data does not check out is a torn append, not damage.
        let mut zeroed = records.concat();
        let last = zeroed.len() - 10;
        zeroed[last..].fill(0);
        let scanned = scan_bytes(&zeroed, 1, &HashSet::new());
        assert_eq!(scanned.good_len, (third + records[2].len()) as u64);
        assert_eq!(scanned.entries.len(), 3, "record 4 is cut off");
    }
}
