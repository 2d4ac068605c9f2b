//! The log of reclaimed pack records: appended and synced before a record's bytes are freed.
//!
//! Each entry is `pack (u32 LE) | offset (u64 LE) | digest (32) | check (8)`. Opening the store
//! drops the records it names from the index and frees their bytes again (a crash may have
//! come between the entry and the hole punch); a torn last entry is cut off.

use super::record::short_hash;
use crate::BlobError;
use keel_core::Digest;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

const ENTRY_LEN: usize = 4 + 8 + 32 + 8;

/// The open log and the record places it names.
pub(crate) struct Tombstones {
    path: PathBuf,
    file: File,
    len: u64,
}

impl Tombstones {
    /// Opens (creating) the log at `path`, cutting off a torn last entry; returns it with the
    /// (pack, record offset) of every reclaimed record.
    pub fn open(path: &Path) -> Result<(Tombstones, HashSet<(u32, u64)>), BlobError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| BlobError::io(path, e))?;
        let bytes = std::fs::read(path).map_err(|e| BlobError::io(path, e))?;
        let (places, good) = parse(&bytes);
        if good != bytes.len() {
            file.set_len(good as u64)
                .and_then(|()| file.sync_all())
                .map_err(|e| BlobError::io(path, e))?;
        }
        let log = Tombstones {
            path: path.to_path_buf(),
            file,
            len: good as u64,
        };
        Ok((log, places))
    }

    /// Records that the record at (`pack`, `offset`) holding `digest` is reclaimed, durably.
    pub fn add(&mut self, pack: u32, offset: u64, digest: &Digest) -> Result<(), BlobError> {
        let mut entry = [0u8; ENTRY_LEN];
        entry[0..4].copy_from_slice(&pack.to_le_bytes());
        entry[4..12].copy_from_slice(&offset.to_le_bytes());
        entry[12..44].copy_from_slice(&digest.0);
        let check = short_hash(&entry[..44]);
        entry[44..].copy_from_slice(&check);
        let written = self
            .file
            .write_all_at(&entry, self.len)
            .and_then(|()| self.file.sync_data());
        if let Err(e) = written {
            // Leave no partial entry behind for the next append to follow.
            let _ = self.file.set_len(self.len);
            return Err(BlobError::io(&self.path, e));
        }
        self.len += ENTRY_LEN as u64;
        Ok(())
    }
}

/// The places a log names, without changing it (a missing log names none).
pub(crate) fn read(path: &Path) -> Result<HashSet<(u32, u64)>, BlobError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(parse(&bytes).0),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HashSet::new()),
        Err(e) => Err(BlobError::io(path, e)),
    }
}

/// The places of the whole entries at the start of `bytes`, and how many bytes they take.
fn parse(bytes: &[u8]) -> (HashSet<(u32, u64)>, usize) {
    let mut places = HashSet::new();
    let mut good = 0usize;
    for entry in bytes.chunks_exact(ENTRY_LEN) {
        if short_hash(&entry[..44])[..] != entry[44..] {
            break;
        }
        let pack = u32::from_le_bytes(entry[0..4].try_into().expect("4 bytes"));
        let offset = u64::from_le_bytes(entry[4..12].try_into().expect("8 bytes"));
        places.insert((pack, offset));
        good += ENTRY_LEN;
    }
    (places, good)
}
