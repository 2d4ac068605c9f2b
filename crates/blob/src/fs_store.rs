//! The filesystem backend: small blobs in pack files (`ROOT/packs/`), large blobs one file
//! each (`ROOT/files/ab/<hex digest>.zst` or `.raw`, 256 directories at most).
//!
//! A blob is small when the writer kept it in memory (under `compression_sample_bytes`); a
//! large one already streamed into a temporary file, which is synced and renamed into place.

use crate::flush::{flush_dirs, flush_files};
use crate::pack::{Packs, ToPack};
use crate::writer::{BlobWriter, Body, CompressionPolicy, PendingBlob};
use crate::{BlobConfig, BlobError, BlobStore, Encoding, StoredBlob};
use keel_core::Digest;
use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::{Cursor, ErrorKind, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// Where a blob's stored bytes are on disk (for tools and tests that look at the files).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredAt {
    pub path: PathBuf,
    /// Offset of the stored bytes in the file (0 for a blob stored as its own file).
    pub offset: u64,
    pub len: u64,
    pub encoding: Encoding,
    /// Whether the blob is a record of a pack file.
    pub packed: bool,
}

/// Content store on a local directory.
pub struct FsBlobStore {
    temp: PathBuf,
    files: PathBuf,
    packs: Packs,
    policy: CompressionPolicy,
    /// Batches above this size are flushed with one `syncfs` instead of one fsync per file.
    syncfs_threshold: usize,
}

/// Packed records carry a 32-bit length; anything larger goes to a file of its own.
const MAX_PACKED: usize = u32::MAX as usize;

impl FsBlobStore {
    /// Opens (creating when needed) a content store under `root`, compressing by `policy`
    /// and otherwise with the default knobs.
    pub fn open(root: impl Into<PathBuf>, policy: CompressionPolicy) -> Result<Self, BlobError> {
        let mut store = Self::open_with(root, &BlobConfig::default())?;
        store.policy = policy;
        Ok(store)
    }

    /// Opens (creating when needed) a content store under `root` tuned by `config`. A root
    /// written in the earlier layout (`ROOT/ab/cd/<hex>`) is migrated first (`migrate.rs`).
    pub fn open_with(root: impl Into<PathBuf>, config: &BlobConfig) -> Result<Self, BlobError> {
        let root = root.into();
        let temp = root.join("tmp");
        fs::create_dir_all(&temp).map_err(|e| BlobError::io(&temp, e))?;
        // Leftovers of writers interrupted by a crash are never referenced: remove them.
        if let Ok(entries) = fs::read_dir(&temp) {
            for entry in entries.flatten() {
                let _ = fs::remove_file(entry.path());
            }
        }
        let files = root.join("files");
        fs::create_dir_all(&files).map_err(|e| BlobError::io(&files, e))?;
        let store = FsBlobStore {
            packs: Packs::open(&root.join("packs"), config.pack_bytes)?,
            temp,
            files,
            policy: config.compression(),
            syncfs_threshold: config.syncfs_threshold,
        };
        let batching = crate::migrate::Batching {
            small_bytes: config.compression_sample_bytes,
            batch_bytes: config.migrate_batch_bytes,
        };
        crate::migrate::migrate(&root, &store, &batching)?;
        Ok(store)
    }

    fn dir_of(&self, digest: &Digest) -> PathBuf {
        self.files.join(&digest.to_hex()[0..2])
    }

    fn path_of(&self, digest: &Digest, encoding: Encoding) -> PathBuf {
        self.dir_of(digest)
            .join(format!("{}.{}", digest.to_hex(), extension(encoding)))
    }

    fn find_file(&self, digest: &Digest) -> Option<(PathBuf, Encoding)> {
        [Encoding::Zstd, Encoding::Raw]
            .into_iter()
            .map(|enc| (self.path_of(digest, enc), enc))
            .find(|(path, _)| path.exists())
    }

    /// Where the blob's stored bytes are, or `None` when the store has no such blob.
    pub fn stored_at(&self, digest: &Digest) -> Result<Option<StoredAt>, BlobError> {
        if let Some(loc) = self.packs.get(digest) {
            return Ok(Some(StoredAt {
                path: self.packs.path_of(&loc),
                offset: loc.data_offset(),
                len: u64::from(loc.stored_len),
                encoding: loc.encoding,
                packed: true,
            }));
        }
        let Some((path, encoding)) = self.find_file(digest) else {
            return Ok(None);
        };
        let len = fs::metadata(&path)
            .map_err(|e| BlobError::io(&path, e))?
            .len();
        Ok(Some(StoredAt {
            path,
            offset: 0,
            len,
            encoding,
            packed: false,
        }))
    }

    /// Packs small blobs held in memory (also used by the migration).
    pub(crate) fn pack(&self, blobs: &[ToPack<'_>]) -> Result<(), BlobError> {
        self.packs.publish(blobs)
    }

    /// Moves an existing file holding a large blob's stored bytes to its place (migration);
    /// the caller makes the renames durable with [`FsBlobStore::flush_file_dirs`].
    pub(crate) fn adopt_file(
        &self,
        from: &Path,
        digest: &Digest,
        encoding: Encoding,
    ) -> Result<PathBuf, BlobError> {
        let dir = self.dir_of(digest);
        fs::create_dir_all(&dir).map_err(|e| BlobError::io(&dir, e))?;
        let dest = self.path_of(digest, encoding);
        fs::rename(from, &dest).map_err(|e| BlobError::io(&dest, e))?;
        Ok(dir)
    }

    pub(crate) fn flush_file_dirs(&self, dirs: &BTreeSet<PathBuf>) -> Result<(), BlobError> {
        flush_dirs(&self.files, dirs, self.syncfs_threshold)
    }
}

fn extension(encoding: Encoding) -> &'static str {
    match encoding {
        Encoding::Raw => "raw",
        Encoding::Zstd => "zst",
    }
}

impl BlobStore for FsBlobStore {
    fn writer(&self) -> Result<BlobWriter, BlobError> {
        BlobWriter::new(&self.temp, self.policy)
    }

    fn publish(&self, pending: Vec<PendingBlob>) -> Result<(), BlobError> {
        // Small blobs go to the active pack with one write and one sync for the batch.
        let (small, large): (Vec<PendingBlob>, Vec<PendingBlob>) = pending
            .into_iter()
            .partition(|p| matches!(&p.body, Body::Bytes(bytes) if bytes.len() <= MAX_PACKED));
        let to_pack: Vec<ToPack<'_>> = small
            .iter()
            .filter_map(|p| match &p.body {
                Body::Bytes(data) => Some(ToPack {
                    digest: p.info.digest,
                    encoding: p.info.encoding,
                    data,
                }),
                Body::Temp(_) => None,
            })
            .collect();
        if !to_pack.is_empty() {
            self.packs.publish(&to_pack)?;
        }
        // Large blobs: content already stored needs nothing (and costs no file).
        let mut seen = BTreeSet::new();
        let fresh: Vec<PendingBlob> = large
            .into_iter()
            .filter(|p| seen.insert(p.info.digest) && self.find_file(&p.info.digest).is_none())
            .collect();
        if fresh.is_empty() {
            return Ok(());
        }
        // 1. Every blob's bytes land in a temp file and become durable (one flush per batch).
        let mut temps = Vec::with_capacity(fresh.len());
        for blob in fresh {
            let temp = match blob.body {
                Body::Temp(temp) => temp,
                Body::Bytes(bytes) => {
                    let mut temp = NamedTempFile::new_in(&self.temp)
                        .map_err(|e| BlobError::io(&self.temp, e))?;
                    temp.write_all(&bytes)
                        .map_err(|e| BlobError::io(temp.path(), e))?;
                    temp.into_temp_path()
                }
            };
            temps.push((blob.info, temp));
        }
        flush_files(
            &self.temp,
            temps.iter().map(|(_, t)| t.as_ref()),
            self.syncfs_threshold,
        )?;
        // 2. Only durable content gets its final name.
        let mut dirs = BTreeSet::new();
        for (info, temp) in temps {
            let dir = self.dir_of(&info.digest);
            fs::create_dir_all(&dir).map_err(|e| BlobError::io(&dir, e))?;
            let dest = self.path_of(&info.digest, info.encoding);
            temp.persist(&dest)
                .map_err(|e| BlobError::io(&dest, e.error))?;
            dirs.insert(dir);
        }
        // 3. The renames become durable.
        self.flush_file_dirs(&dirs)
    }

    fn open(&self, digest: &Digest) -> Result<Option<StoredBlob>, BlobError> {
        if let Some(loc) = self.packs.get(digest) {
            let data = self.packs.read(&loc)?;
            return Ok(Some(StoredBlob {
                encoding: loc.encoding,
                stored_size: data.len() as u64,
                reader: Box::new(Cursor::new(data)),
            }));
        }
        let Some((path, encoding)) = self.find_file(digest) else {
            return Ok(None);
        };
        match File::open(&path) {
            Ok(file) => {
                let stored_size = file.metadata().map_err(|e| BlobError::io(&path, e))?.len();
                Ok(Some(StoredBlob {
                    encoding,
                    stored_size,
                    reader: Box::new(file),
                }))
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(BlobError::io(&path, e)),
        }
    }

    fn contains(&self, digest: &Digest) -> Result<bool, BlobError> {
        Ok(self.packs.get(digest).is_some() || self.find_file(digest).is_some())
    }

    fn delete(&self, digest: &Digest) -> Result<u64, BlobError> {
        if let Some(freed) = self.packs.delete(digest)? {
            return Ok(freed);
        }
        let Some((path, _)) = self.find_file(digest) else {
            return Ok(0);
        };
        let size = fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        match fs::remove_file(&path) {
            Ok(()) => Ok(size),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(0),
            Err(e) => Err(BlobError::io(&path, e)),
        }
    }
}
