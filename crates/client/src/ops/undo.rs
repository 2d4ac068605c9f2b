//! `undo`: open the inverse of submitted revisions (the server opens them; the workspace
//! then gets the content from before the range).

use keel_proto::v1 as pb;

use super::file_result::FileResult;
use super::records::{QueryError, Records};
use crate::connect::Connection;

/// What to undo and where to open it.
#[derive(Clone, Debug, Default)]
pub struct UndoQuery {
    /// `file#N`, `file#A,#B`, `file@N` or `file@A,@B` each.
    pub paths: Vec<String>,
    /// List what would be opened; open nothing.
    pub preview: bool,
    /// The pending change to open the files in (`None`: the default change).
    pub change: Option<u64>,
}

/// Opens the undo of the revisions `query` names; a record for each file, its revisions
/// undone as `source_start`, `source_end` (and `unresolved` when later revisions changed it).
pub async fn undo(conn: &Connection, query: UndoQuery) -> Result<Records<FileResult>, QueryError> {
    let stream = conn
        .reply(conn.client().undo(pb::UndoRequest {
            caller: conn.caller(),
            files: query.paths,
            preview: query.preview,
            change: query.change.unwrap_or(0),
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| Ok(FileResult::from_wire(r))))
}
