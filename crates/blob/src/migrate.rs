//! Moving a root written in the earlier layout (one file per blob at `ROOT/ab/cd/<hex>.zst`
//! or `.raw`) into packs and the 256-way file layout, when the store opens.
//!
//! Done on open rather than by a separate command so a server never runs on a half-known
//! layout: the store reads only the new one. Each legacy file is removed only after its blob
//! is durable in its new place (packed and synced, or renamed and the rename synced), and a
//! blob already in its new place is not copied again, so a migration interrupted at any point
//! simply continues on the next open and nothing is lost or doubled.

use crate::pack::ToPack;
use crate::{BlobError, Encoding, FsBlobStore};
use keel_core::Digest;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// How a migration batches: blobs up to `small_bytes` are packed, `batch_bytes` at a time.
pub(crate) struct Batching {
    pub small_bytes: usize,
    pub batch_bytes: usize,
}

/// Migrates every legacy blob under `root`.
pub(crate) fn migrate(
    root: &Path,
    store: &FsBlobStore,
    batching: &Batching,
) -> Result<(), BlobError> {
    for top in legacy_dirs(root)? {
        for sub in legacy_dirs(&top)? {
            migrate_dir(&sub, store, batching)?;
            // Empty now; a leftover stray file keeps its directory, which is harmless.
            let _ = fs::remove_dir(&sub);
        }
        let _ = fs::remove_dir(&top);
    }
    Ok(())
}

/// Subdirectories of `dir` named by two lowercase hex digits (the legacy fan-out).
fn legacy_dirs(dir: &Path) -> Result<Vec<PathBuf>, BlobError> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| BlobError::io(dir, e))? {
        let entry = entry.map_err(|e| BlobError::io(dir, e))?;
        let name = entry.file_name();
        let is_fanout = name.to_str().is_some_and(|n| {
            n.len() == 2
                && n.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
        if is_fanout && entry.path().is_dir() {
            out.push(entry.path());
        }
    }
    out.sort();
    Ok(out)
}

fn migrate_dir(dir: &Path, store: &FsBlobStore, batching: &Batching) -> Result<(), BlobError> {
    let mut batch: Vec<(PathBuf, Digest, Encoding, Vec<u8>)> = Vec::new();
    let mut batch_bytes = 0;
    let mut moved_dirs = BTreeSet::new();
    let mut moved_files = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| BlobError::io(dir, e))? {
        let path = entry.map_err(|e| BlobError::io(dir, e))?.path();
        let Some((digest, encoding)) = legacy_name(&path) else {
            continue;
        };
        let len = fs::metadata(&path)
            .map_err(|e| BlobError::io(&path, e))?
            .len();
        if store.stored_at(&digest)?.is_some() {
            // Already in its new place (an earlier migration was interrupted).
            fs::remove_file(&path).map_err(|e| BlobError::io(&path, e))?;
        } else if len as usize <= batching.small_bytes {
            let data = fs::read(&path).map_err(|e| BlobError::io(&path, e))?;
            batch_bytes += data.len();
            batch.push((path, digest, encoding, data));
            if batch_bytes >= batching.batch_bytes {
                pack_batch(store, &mut batch)?;
                batch_bytes = 0;
            }
        } else {
            moved_dirs.insert(store.adopt_file(&path, &digest, encoding)?);
            moved_files.push(path);
        }
    }
    pack_batch(store, &mut batch)?;
    store.flush_file_dirs(&moved_dirs)?;
    // The renamed files left this directory: make that durable too before it is removed.
    if !moved_files.is_empty() {
        crate::flush::sync_path(dir)?;
    }
    Ok(())
}

/// Packs a batch durably, then removes the legacy files.
fn pack_batch(
    store: &FsBlobStore,
    batch: &mut Vec<(PathBuf, Digest, Encoding, Vec<u8>)>,
) -> Result<(), BlobError> {
    let blobs: Vec<ToPack<'_>> = batch
        .iter()
        .map(|(_, digest, encoding, data)| ToPack {
            digest: *digest,
            encoding: *encoding,
            data,
        })
        .collect();
    store.pack(&blobs)?;
    for (path, ..) in batch.drain(..) {
        fs::remove_file(&path).map_err(|e| BlobError::io(&path, e))?;
    }
    Ok(())
}

/// The digest and encoding a legacy file's name gives (`<hex>.zst` or `<hex>.raw`).
fn legacy_name(path: &Path) -> Option<(Digest, Encoding)> {
    let name = path.file_name()?.to_str()?;
    let (hex, ext) = name.split_once('.')?;
    let encoding = match ext {
        "zst" => Encoding::Zstd,
        "raw" => Encoding::Raw,
        _ => return None,
    };
    Some((Digest::from_hex(hex).ok()?, encoding))
}
