//! Refusals of a streamed content upload (submit, shelve).

use keel_core::FileAction;

/// What was wrong with the content a client sent; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// Messages out of order (`what` says which one came too early).
    #[error("{what}")]
    OutOfOrder { what: &'static str },
    /// A second `begin` message in one upload (`command` is submit or shelve).
    #[error("a second `begin` in one {command}")]
    SecondBegin { command: &'static str },
    /// Content for a file the change does not hold open.
    #[error("{path} - not opened in this changelist")]
    NotInChange { path: String },
    /// Content for a file whose action takes none.
    #[error("{path} - opened for {action}; it takes no content")]
    TakesNoContent { path: String, action: FileAction },
    /// The digest the client announced is not a digest.
    #[error("{path} - bad digest from client: {reason}")]
    BadDigest { path: String, reason: String },
    /// What arrived is not what the client says it sent.
    #[error(
        "{path} - content damaged in transfer: client sent {sent_size} bytes with digest \
         {sent_digest}, server received {got_size} bytes with digest {got_digest}"
    )]
    Damaged {
        path: String,
        sent_size: u64,
        sent_digest: String,
        got_size: u64,
        got_digest: String,
    },
    /// A file's content was not ended before the next file or the commit.
    #[error("{path} - content was not finished")]
    Unfinished { path: String },
    /// A file that needs content got none.
    #[error("{path} - content missing from upload")]
    Missing { path: String },
    /// The threads that hash and compress received files could not do so.
    #[error("receiving uploaded content: {reason}")]
    Worker { reason: String },
}
