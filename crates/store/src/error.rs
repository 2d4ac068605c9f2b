//! Errors of the metadata store. The database engine's own error type stays inside the crate:
//! callers see a [`DatabaseError`] with a [`DatabaseErrorKind`] to match on and a message.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("metadata database {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: DatabaseError,
    },
    #[error("metadata database error: {0}")]
    Database(#[source] DatabaseError),
    #[error("metadata database is newer (schema {found}) than this keel understands ({supported})")]
    SchemaTooNew { found: i64, supported: i64 },
    #[error("corrupt metadata: {0}")]
    Corrupt(String),
    #[error("metadata commit failed: {0}")]
    Commit(#[source] DatabaseError),
    #[error("metadata writer has stopped")]
    WriterGone,
    /// The command was terminated (`monitor terminate`) before its write was kept; nothing
    /// of it was committed.
    #[error("command terminated by an administrator; nothing was committed")]
    Terminated,
    #[error("a write job ended without a result (it panicked)")]
    JobLost,
    /// The database ended the transaction a group of write jobs shared (SQLite does that on
    /// some errors, such as a full disk or memory, in any of the group's statements): nothing
    /// of the group was committed.
    #[error(
        "the database rolled back the whole transaction after an error in one of the writes \
         sharing it; nothing was committed"
    )]
    GroupRolledBack,
    #[error("have list {path}: {source}")]
    Have {
        path: PathBuf,
        #[source]
        source: DatabaseError,
    },
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Journal(#[from] crate::journal::JournalError),
    /// A write on a read-only replica's metadata, which only the primary's journal changes.
    #[error(
        "this server is a read-only replica of {primary}: writes go to the primary (or start \
         the replica with --forward-writes)"
    )]
    ReadOnly { primary: String },
    /// A read through a memory mapping of the database file hit an I/O error (SIGBUS) while
    /// this request read; its answer cannot be trusted, so it was abandoned.
    #[error(
        "an I/O error hit a read of the metadata database through its memory mapping; the \
         request was abandoned (later reads use pread; check the disk and run `keel verify`)"
    )]
    MappedReadFault,
    /// The operating system refused a thread the store needs (writer, checkpointer).
    #[error("cannot start the metadata store's {name} thread: {source}")]
    Thread {
        name: &'static str,
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    /// Whether the error is the disk being full.
    pub fn is_disk_full(&self) -> bool {
        match self {
            StoreError::Io { source, .. }
            | StoreError::Journal(crate::journal::JournalError::Io { source, .. }) => {
                source.kind() == std::io::ErrorKind::StorageFull
            }
            other => other.database_kind() == Some(DatabaseErrorKind::DiskFull),
        }
    }

    /// What the database engine reported, when the error came from it.
    pub fn database_kind(&self) -> Option<DatabaseErrorKind> {
        match self {
            StoreError::Open { source, .. }
            | StoreError::Have { source, .. }
            | StoreError::Database(source)
            | StoreError::Commit(source) => Some(source.kind()),
            _ => None,
        }
    }
}

/// Internal convenience for `?` on the engine's calls: the engine's error becomes an opaque
/// [`StoreError::Database`]. Not part of the contract.
#[doc(hidden)]
impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Database(DatabaseError::from_sqlite(e))
    }
}

/// The classes of database failure a caller may act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DatabaseErrorKind {
    /// Another connection held a lock for longer than the busy timeout.
    Busy,
    /// The database file is damaged or is not a database.
    Corrupt,
    /// The disk (or quota) is full.
    DiskFull,
    /// A uniqueness, foreign-key or check constraint refused a row.
    Constraint,
    /// Anything else (a bug, an I/O error, a misuse).
    Other,
}

/// A failure of the database engine: its class and the engine's message.
#[derive(Debug)]
pub struct DatabaseError {
    kind: DatabaseErrorKind,
    cause: Box<dyn std::error::Error + Send + Sync>,
}

impl DatabaseError {
    /// The class of failure.
    pub fn kind(&self) -> DatabaseErrorKind {
        self.kind
    }

    pub(crate) fn from_sqlite(e: rusqlite::Error) -> DatabaseError {
        use rusqlite::ErrorCode;
        let kind = match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => DatabaseErrorKind::Busy,
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
                DatabaseErrorKind::Corrupt
            }
            Some(ErrorCode::DiskFull) => DatabaseErrorKind::DiskFull,
            Some(ErrorCode::ConstraintViolation) => DatabaseErrorKind::Constraint,
            _ => DatabaseErrorKind::Other,
        };
        DatabaseError {
            kind,
            cause: Box::new(e),
        }
    }

    /// A copy of `error`'s class and message, for reporting one failure to several waiters.
    pub(crate) fn copy_of(error: &StoreError) -> DatabaseError {
        DatabaseError {
            kind: error.database_kind().unwrap_or(DatabaseErrorKind::Other),
            cause: error.to_string().into(),
        }
    }
}

impl std::fmt::Display for DatabaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.cause.fmt(f)
    }
}

impl std::error::Error for DatabaseError {
    // The cause's own message is this error's message; its cause (if any) comes next.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause.source()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine's error codes become kinds callers can match on, without the engine's type.
    #[test]
    fn engine_errors_are_classified() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let conn = rusqlite::Connection::open(dir.path().join("db")).expect("connection opens");
        conn.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);")
            .expect("table created");
        let dup = StoreError::from(
            conn.execute("INSERT INTO t VALUES (1)", [])
                .expect_err("duplicate key refused"),
        );
        assert_eq!(dup.database_kind(), Some(DatabaseErrorKind::Constraint));
        assert!(dup.to_string().contains("UNIQUE"), "{dup}");
        assert!(!dup.is_disk_full());

        let full = StoreError::Io {
            path: "x".into(),
            source: std::io::Error::from_raw_os_error(libc::ENOSPC),
        };
        assert!(full.is_disk_full());
    }
}
