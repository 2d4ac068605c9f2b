//! The records the query operations stream (a change, a file revision) and the stream type
//! that reads them one at a time as the server sends them.

use std::pin::Pin;
use std::task::{Context, Poll};

use keel_core::{ChangeNumber, ChangeStatus, FileAction};
use keel_proto::v1 as pb;
use tokio_stream::{Stream, StreamExt};
use tonic::codec::Streaming;

use crate::actions;
use crate::connect::Connection;

/// Why a query failed.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// The server could not be reached, or refused the request (rights, a bad path).
    #[error(transparent)]
    Call(#[from] crate::Error),
    /// The server answered for a path the request did not name.
    #[error("the server answered for path number {index}, but only {asked} were asked")]
    UnknownPath { index: u32, asked: usize },
}

impl QueryError {
    /// The connection's or server's error inside, if that is what it is (for its refusal).
    pub fn client_error(&self) -> Option<&crate::Error> {
        match self {
            QueryError::Call(e) => Some(e),
            QueryError::UnknownPath { .. } => None,
        }
    }
}

/// One change as a listing shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeSummary {
    pub number: ChangeNumber,
    /// `None` only in a reply that names no status (never in a listing).
    pub status: Option<ChangeStatus>,
    pub user: String,
    pub workspace: String,
    pub description: String,
    /// Seconds since the epoch: when it was submitted (pending: last updated).
    pub time: u64,
}

impl ChangeSummary {
    pub(crate) fn from_wire(change: &pb::Change) -> ChangeSummary {
        ChangeSummary {
            number: ChangeNumber(change.change),
            status: match change.status() {
                pb::ChangeStatus::Pending => Some(ChangeStatus::Pending),
                pb::ChangeStatus::Submitted => Some(ChangeStatus::Submitted),
                pb::ChangeStatus::Unspecified => None,
            },
            user: change.user.clone(),
            workspace: change.workspace.clone(),
            description: change.description.clone(),
            time: change.time,
        }
    }
}

/// One revision of a file: what a change did to it, or a file's head.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revision {
    pub depot_file: String,
    /// 0: no revision (a file added in a pending change).
    pub rev: u32,
    pub change: u64,
    /// What the revision did (for a pending or shelved change: what it will do).
    pub action: Option<FileAction>,
    pub file_type: String,
    /// Seconds since the epoch.
    pub time: u64,
    pub size: u64,
    /// BLAKE3 of the content, hex; empty for a deleted revision.
    pub digest: String,
    /// The file's own modification time recorded at submit, seconds since the epoch (0: none
    /// recorded).
    pub mod_time: u64,
}

impl Revision {
    /// A file's head (or selected) revision.
    pub(crate) fn head_of(record: &pb::FileRecord) -> Revision {
        Revision::with_action(record, actions::from_wire(record.head_action()))
    }

    /// A change's file: its open action when the change is pending or shelved, else the
    /// action of its submitted revision.
    pub(crate) fn in_change(record: &pb::FileRecord) -> Revision {
        Revision::with_action(record, actions::from_wire(actions::effective(record)))
    }

    fn with_action(record: &pb::FileRecord, action: Option<FileAction>) -> Revision {
        Revision {
            depot_file: record.depot_file.clone(),
            rev: record.head_rev,
            change: record.head_change,
            action,
            file_type: record.head_type.clone(),
            time: record.head_time,
            size: record.head_size,
            digest: record.head_digest.clone(),
            mod_time: record.head_mod_time.max(0) as u64,
        }
    }
}

type Boxed<T> = Pin<Box<dyn Stream<Item = Result<T, QueryError>> + Send>>;

/// Typed records read one at a time as the server streams them (never held whole). Also a
/// [`Stream`] for code that combines streams.
pub struct Records<T> {
    inner: Boxed<T>,
}

impl<T: Send + 'static> Records<T> {
    /// `stream`'s messages turned into records by `convert`.
    pub(crate) fn new<M: Send + 'static>(
        conn: &Connection,
        stream: Streaming<M>,
        convert: impl FnMut(M) -> Result<T, QueryError> + Send + 'static,
    ) -> Records<T> {
        let conn = conn.clone();
        let mut convert = convert;
        Records {
            inner: Box::pin(stream.map(move |m| match m {
                Ok(message) => convert(message),
                Err(status) => Err(QueryError::Call(conn.status(status))),
            })),
        }
    }

    /// `stream`'s messages that `convert` keeps, turned into records.
    pub(crate) fn filtered<M: Send + 'static>(
        conn: &Connection,
        stream: Streaming<M>,
        convert: impl FnMut(M) -> Option<T> + Send + 'static,
    ) -> Records<T> {
        let conn = conn.clone();
        let mut convert = convert;
        Records {
            inner: Box::pin(stream.filter_map(move |m| match m {
                Ok(message) => convert(message).map(Ok),
                Err(status) => Some(Err(QueryError::Call(conn.status(status)))),
            })),
        }
    }

    /// The next record, or `None` at the end.
    pub async fn next(&mut self) -> Result<Option<T>, QueryError> {
        self.inner.next().await.transpose()
    }

    /// Every remaining record (for replies known to be small).
    pub async fn all(mut self) -> Result<Vec<T>, QueryError> {
        let mut out = Vec::new();
        while let Some(record) = self.next().await? {
            out.push(record);
        }
        Ok(out)
    }
}

impl<T> Stream for Records<T> {
    type Item = Result<T, QueryError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}
