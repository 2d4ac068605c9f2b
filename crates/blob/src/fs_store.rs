//! The filesystem backend: `ROOT/ab/cd/<hex digest>.zst` or `.raw`, written via temp + rename.

use crate::writer::{BlobWriter, Body, CompressionPolicy, PendingBlob};
use crate::{BlobConfig, BlobError, BlobStore, Encoding, StoredBlob};
use keel_core::Digest;
use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io::ErrorKind;
use std::io::Write;
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// Content store on a local directory.
pub struct FsBlobStore {
    root: PathBuf,
    temp: PathBuf,
    policy: CompressionPolicy,
    /// Batches above this size are flushed with one `syncfs` instead of one fsync per file.
    syncfs_threshold: usize,
}

impl FsBlobStore {
    /// Opens (creating when needed) a content store under `root`, compressing by `policy`
    /// and otherwise with the default knobs.
    pub fn open(root: impl Into<PathBuf>, policy: CompressionPolicy) -> Result<Self, BlobError> {
        let mut store = Self::open_with(root, &BlobConfig::default())?;
        store.policy = policy;
        Ok(store)
    }

    /// Opens (creating when needed) a content store under `root` tuned by `config`.
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
        Ok(FsBlobStore {
            root,
            temp,
            policy: config.compression(),
            syncfs_threshold: config.syncfs_threshold,
        })
    }

    fn dir_of(&self, digest: &Digest) -> PathBuf {
        let hex = digest.to_hex();
        self.root.join(&hex[0..2]).join(&hex[2..4])
    }

    fn path_of(&self, digest: &Digest, encoding: Encoding) -> PathBuf {
        let ext = match encoding {
            Encoding::Raw => "raw",
            Encoding::Zstd => "zst",
        };
        self.dir_of(digest)
            .join(format!("{}.{ext}", digest.to_hex()))
    }

    fn find(&self, digest: &Digest) -> Option<(PathBuf, Encoding)> {
        [Encoding::Zstd, Encoding::Raw]
            .into_iter()
            .map(|enc| (self.path_of(digest, enc), enc))
            .find(|(path, _)| path.exists())
    }
}

fn sync_path(path: &Path) -> Result<(), BlobError> {
    File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|e| BlobError::io(path, e))
}

/// Flushes the whole filesystem holding `anchor` (Linux `syncfs`).
#[cfg(target_os = "linux")]
fn syncfs(anchor: &Path) -> Result<(), BlobError> {
    use std::os::fd::AsRawFd;
    let dir = File::open(anchor).map_err(|e| BlobError::io(anchor, e))?;
    // SAFETY: `dir` is an open descriptor for the duration of the call.
    if unsafe { libc::syncfs(dir.as_raw_fd()) } == 0 {
        Ok(())
    } else {
        Err(BlobError::io(anchor, std::io::Error::last_os_error()))
    }
}

/// Flushes `files`: one by one, or (Linux) with one `syncfs` when more than `threshold`.
fn flush_files<'a>(
    anchor: &Path,
    files: impl Iterator<Item = &'a Path>,
    threshold: usize,
) -> Result<(), BlobError> {
    let files: Vec<&Path> = files.collect();
    #[cfg(target_os = "linux")]
    if files.len() > threshold {
        return syncfs(anchor);
    }
    let _ = (anchor, threshold);
    files.into_iter().try_for_each(sync_path)
}

/// Flushes `dirs`: one by one, or (Linux) with one `syncfs` when more than `threshold`.
fn flush_dirs(anchor: &Path, dirs: &BTreeSet<PathBuf>, threshold: usize) -> Result<(), BlobError> {
    #[cfg(target_os = "linux")]
    if dirs.len() > threshold {
        return syncfs(anchor);
    }
    let _ = (anchor, threshold);
    dirs.iter().try_for_each(|d| sync_path(d))
}

impl BlobStore for FsBlobStore {
    fn writer(&self) -> Result<BlobWriter, BlobError> {
        BlobWriter::new(&self.temp, self.policy)
    }

    fn publish(&self, pending: Vec<PendingBlob>) -> Result<(), BlobError> {
        // Content already stored needs nothing (and costs no file).
        let mut seen = BTreeSet::new();
        let fresh: Vec<PendingBlob> = pending
            .into_iter()
            .filter(|p| seen.insert(p.info.digest) && self.find(&p.info.digest).is_none())
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
                    // Close it now: a large batch must not hold a descriptor per blob.
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
        flush_dirs(&self.root, &dirs, self.syncfs_threshold)
    }

    fn open(&self, digest: &Digest) -> Result<Option<StoredBlob>, BlobError> {
        let Some((path, encoding)) = self.find(digest) else {
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
        Ok(self.find(digest).is_some())
    }

    fn delete(&self, digest: &Digest) -> Result<u64, BlobError> {
        let Some((path, _)) = self.find(digest) else {
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
