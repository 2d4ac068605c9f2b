//! Errors of the service layer; each message names the file, change or value concerned.

use keel_blob::BlobError;
use keel_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Something named does not exist (workspace, change, file, depot).
    #[error("{0}")]
    NotFound(String),
    /// The request itself is malformed (bad path, spec, type, view line).
    #[error("{0}")]
    Invalid(String),
    /// The request is well-formed but the state forbids it (locked, out of date, empty change).
    #[error("{0}")]
    Precondition(String),
    #[error("{0}")]
    AlreadyExists(String),
    #[error("the server's disk is full: {0}")]
    DiskFull(String),
    /// The consumer of a streamed result went away.
    #[error("request cancelled")]
    Cancelled,
    #[error(transparent)]
    Store(StoreError),
    #[error(transparent)]
    Blob(BlobError),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        if e.is_disk_full() {
            ServiceError::DiskFull(e.to_string())
        } else {
            ServiceError::Store(e)
        }
    }
}

impl From<BlobError> for ServiceError {
    fn from(e: BlobError) -> Self {
        match e {
            BlobError::DiskFull { .. } => ServiceError::DiskFull(e.to_string()),
            other => ServiceError::Blob(other),
        }
    }
}

/// Shorthand for invalid-argument errors built from any displayable error.
pub(crate) fn invalid(e: impl std::fmt::Display) -> ServiceError {
    ServiceError::Invalid(e.to_string())
}
