//! Listing a content store's blobs and where their bytes are, without changing anything.
//!
//! For tools and tests that look at a root a running server owns: nothing is cut, written or
//! migrated, and an append in progress is at worst not listed yet.

use crate::pack::{Loc, index, index_path, pack_ids, pack_path, scan, tombstones};
use crate::{BlobError, Encoding, StoredAt};
use keel_core::Digest;
use std::collections::HashMap;
use std::fs;
use std::path::Path;

/// Every blob stored under `root` (a content store's directory) with its place.
pub fn stored_blobs(root: &Path) -> Result<HashMap<Digest, StoredAt>, BlobError> {
    let mut out = HashMap::new();
    let packs = root.join("packs");
    if packs.is_dir() {
        let reclaimed = tombstones::read(&packs.join("reclaimed"))?;
        let ids = pack_ids(&packs)?;
        for id in ids {
            let entries: Vec<(Digest, Loc)> = match index::read(&index_path(&packs, id), id) {
                Some(entries) => entries,
                None => scan::scan(&pack_path(&packs, id), id, &reclaimed)?.entries,
            };
            for (digest, loc) in entries {
                if reclaimed.contains(&(id, loc.offset)) {
                    continue;
                }
                out.entry(digest).or_insert_with(|| StoredAt {
                    path: pack_path(&packs, id),
                    offset: loc.data_offset(),
                    len: u64::from(loc.stored_len),
                    encoding: loc.encoding,
                    packed: true,
                });
            }
        }
    }
    let files = root.join("files");
    if files.is_dir() {
        for dir in fs::read_dir(&files).map_err(|e| BlobError::io(&files, e))? {
            let dir = dir.map_err(|e| BlobError::io(&files, e))?.path();
            for file in fs::read_dir(&dir).map_err(|e| BlobError::io(&dir, e))? {
                let path = file.map_err(|e| BlobError::io(&dir, e))?.path();
                let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                let Some((hex, ext)) = name.split_once('.') else {
                    continue;
                };
                let (Ok(digest), Some(encoding)) = (Digest::from_hex(hex), encoding_of(ext)) else {
                    continue;
                };
                let len = fs::metadata(&path)
                    .map_err(|e| BlobError::io(&path, e))?
                    .len();
                out.insert(
                    digest,
                    StoredAt {
                        path,
                        offset: 0,
                        len,
                        encoding,
                        packed: false,
                    },
                );
            }
        }
    }
    Ok(out)
}

/// A content store's totals, counted from its files (see [`usage`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlobUsage {
    /// Blobs stored: live pack records plus blob files (a digest stored twice, as after a
    /// damaged record was stored again, counts twice).
    pub blobs: u64,
    /// Bytes of the content store's pack, index and blob files on disk (reclaimed records
    /// still count until their pack is rewritten).
    pub disk_bytes: u64,
}

/// Counts the blobs under `root` and the bytes of its files, reading pack indexes (or
/// scanning a pack without one) one at a time: memory stays that of one pack's index.
pub fn usage(root: &Path) -> Result<BlobUsage, BlobError> {
    let mut total = BlobUsage::default();
    let packs = root.join("packs");
    if packs.is_dir() {
        let reclaimed = tombstones::read(&packs.join("reclaimed"))?;
        for entry in fs::read_dir(&packs).map_err(|e| BlobError::io(&packs, e))? {
            let entry = entry.map_err(|e| BlobError::io(&packs, e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.ends_with(".pack") || name.ends_with(".idx") {
                total.disk_bytes += entry.metadata().map_or(0, |m| m.len());
            }
            let Some(id) = name
                .strip_prefix("pack-")
                .and_then(|n| n.strip_suffix(".pack"))
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let entries = match index::read(&index_path(&packs, id), id) {
                Some(entries) => entries,
                None => scan::scan(&pack_path(&packs, id), id, &reclaimed)?.entries,
            };
            total.blobs += entries
                .iter()
                .filter(|(_, loc)| !reclaimed.contains(&(id, loc.offset)))
                .count() as u64;
        }
    }
    let files = root.join("files");
    if files.is_dir() {
        for dir in fs::read_dir(&files).map_err(|e| BlobError::io(&files, e))? {
            let dir = dir.map_err(|e| BlobError::io(&files, e))?.path();
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for file in entries.flatten() {
                let name = file.file_name();
                let Some((hex, ext)) = name.to_str().and_then(|n| n.split_once('.')) else {
                    continue;
                };
                if Digest::from_hex(hex).is_ok() && encoding_of(ext).is_some() {
                    total.blobs += 1;
                    total.disk_bytes += file.metadata().map_or(0, |m| m.len());
                }
            }
        }
    }
    Ok(total)
}

fn encoding_of(ext: &str) -> Option<Encoding> {
    match ext {
        "zst" => Some(Encoding::Zstd),
        "raw" => Some(Encoding::Raw),
        _ => None,
    }
}
