//! Listing a content store's blobs and where their bytes are, without changing anything.
//!
//! For tools and tests that look at a root a running server owns: nothing is cut, written or
//! migrated, and an append in progress is at worst not listed yet.

use crate::pack::{Loc, index, index_path, pack_path, scan, tombstones};
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
        let mut ids: Vec<u32> = fs::read_dir(&packs)
            .map_err(|e| BlobError::io(&packs, e))?
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                name.strip_prefix("pack-")?
                    .strip_suffix(".pack")?
                    .parse()
                    .ok()
            })
            .collect();
        ids.sort_unstable();
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

fn encoding_of(ext: &str) -> Option<Encoding> {
    match ext {
        "zst" => Some(Encoding::Zstd),
        "raw" => Some(Encoding::Raw),
        _ => None,
    }
}
