//! Errors of the metadata store.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("metadata database {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("metadata database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("metadata database is newer (schema {found}) than this keel understands ({supported})")]
    SchemaTooNew { found: i64, supported: i64 },
    #[error("corrupt metadata: {0}")]
    Corrupt(String),
    #[error("metadata commit failed: {message}")]
    Commit { message: String, disk_full: bool },
    #[error("metadata writer has stopped")]
    WriterGone,
    #[error("a write job ended without a result (it panicked)")]
    JobLost,
    #[error("have list {path}: {source}")]
    Have {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    /// Whether the error is the disk being full.
    pub fn is_disk_full(&self) -> bool {
        match self {
            StoreError::Sqlite(e)
            | StoreError::Open { source: e, .. }
            | StoreError::Have { source: e, .. } => {
                matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DiskFull))
            }
            StoreError::Io { source, .. } => source.raw_os_error() == Some(28),
            StoreError::Commit { disk_full, .. } => *disk_full,
            _ => false,
        }
    }
}
