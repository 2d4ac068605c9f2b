//! Errors of the content store; each names the file it concerns.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("content store I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("content store at {path} is full: {source}")]
    DiskFull {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Content a store fetches on demand (a replica's) is not held yet, and fetching it failed
    /// (`from` is the address fetched from).
    #[error("content {digest} is not held here and fetching it from {from} failed: {reason}")]
    Unavailable {
        digest: String,
        from: String,
        reason: String,
    },
}

impl BlobError {
    /// Classifies an I/O error on `path`, singling out a full disk so callers can say so.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        let path = path.into();
        // ENOSPC and EDQUOT.
        let full = matches!(
            source.kind(),
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
        );
        if full {
            BlobError::DiskFull { path, source }
        } else {
            BlobError::Io { path, source }
        }
    }
}
