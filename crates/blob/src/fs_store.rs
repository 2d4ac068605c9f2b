//! The filesystem backend: `ROOT/ab/cd/<hex digest>.zst` or `.raw`, written via temp + rename.

use crate::writer::{BlobWriter, CompressionPolicy};
use crate::{BlobError, BlobStore, Encoding, StoredBlob};
use keel_core::Digest;
use std::fs::{self, File};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// Content store on a local directory.
pub struct FsBlobStore {
    root: PathBuf,
    temp: PathBuf,
    policy: CompressionPolicy,
}

impl FsBlobStore {
    /// Opens (creating when needed) a content store under `root`.
    pub fn open(root: impl Into<PathBuf>, policy: CompressionPolicy) -> Result<Self, BlobError> {
        let root = root.into();
        let temp = root.join("tmp");
        fs::create_dir_all(&temp).map_err(|e| BlobError::io(&temp, e))?;
        // Leftovers of writers interrupted by a crash are never referenced: remove them.
        if let Ok(entries) = fs::read_dir(&temp) {
            for entry in entries.flatten() {
                let _ = fs::remove_file(entry.path());
            }
        }
        Ok(FsBlobStore { root, temp, policy })
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

fn sync_dir(dir: &Path) -> Result<(), BlobError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| BlobError::io(dir, e))
}

impl BlobStore for FsBlobStore {
    fn writer(&self) -> Result<BlobWriter, BlobError> {
        let root = self.root.clone();
        let store = FsBlobStore {
            root: root.clone(),
            temp: self.temp.clone(),
            policy: self.policy,
        };
        BlobWriter::new(
            &self.temp,
            self.policy,
            Box::new(move |temp, digest, encoding| {
                if store.find(digest).is_some() {
                    return Ok(()); // Same content already stored; the temp file is dropped.
                }
                let dir = store.dir_of(digest);
                fs::create_dir_all(&dir).map_err(|e| BlobError::io(&dir, e))?;
                let dest = store.path_of(digest, encoding);
                temp.persist(&dest)
                    .map_err(|e| BlobError::io(&dest, e.error))?;
                sync_dir(&dir)
            }),
        )
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
