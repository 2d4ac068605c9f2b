//! The bench library's error type.

/// Everything that can stop a benchmark.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A client-library call failed (connection, transfer, workspace).
    #[error(transparent)]
    Client(#[from] keel_client::Error),
    /// A client-library query failed.
    #[error(transparent)]
    Query(#[from] keel_client::ops::QueryError),
    /// A client-library sync failed.
    #[error(transparent)]
    Sync(#[from] keel_client::ops::SyncError),
    /// A client-library subscription failed.
    #[error(transparent)]
    Watch(#[from] keel_client::ops::WatchError),
    /// A client-library operation failed, with what was being done (ops31b).
    #[error("{context}: {source}")]
    Op {
        context: String,
        #[source]
        source: Box<keel_client::ops::QueryError>,
    },
    /// The server refused an RPC.
    #[error("{context}: {status}")]
    Rpc {
        context: String,
        status: Box<tonic::Status>,
    },
    /// A local file operation failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// The local server could not be started.
    #[error("cannot start keel serve: {0}")]
    Server(String),
    /// The workload saw something inconsistent (a wrong count, a missing reply).
    #[error("{0}")]
    Check(String),
}

impl BenchError {
    /// Wraps a gRPC status with what was being done.
    pub fn rpc(context: impl Into<String>, status: tonic::Status) -> BenchError {
        BenchError::Rpc {
            context: context.into(),
            status: Box::new(status),
        }
    }

    /// Wraps a client-library operation's error with what was being done.
    pub fn op(context: impl Into<String>, source: keel_client::ops::QueryError) -> BenchError {
        BenchError::Op {
            context: context.into(),
            source: Box::new(source),
        }
    }

    /// Wraps an IO error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> BenchError {
        BenchError::Io {
            context: context.into(),
            source,
        }
    }
}

/// The library's result type.
pub type Result<T, E = BenchError> = std::result::Result<T, E>;
