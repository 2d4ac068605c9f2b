//! `add`, `edit`, `delete`, `move` and `reopen`: open files in a pending change, or change
//! the change or type they are open in.

use keel_proto::v1 as pb;

use super::file_result::FileResult;
use super::records::{QueryError, Records};
use crate::connect::Connection;

/// What to open a file for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenFor {
    Add,
    Edit,
    Delete,
}

/// The files to open and how.
#[derive(Clone, Debug)]
pub struct OpenQuery {
    pub action: OpenFor,
    /// Depot or workspace (`//WS/...`) syntax; wildcards except for an add.
    pub paths: Vec<String>,
    /// The pending change to open them in (`None`: the default change).
    pub change: Option<u64>,
    /// A whole type (`binary+l`) or modifiers (`+x`) for every file.
    pub file_type: Option<String>,
    /// For an add: each file's detected type, in the order of `paths`.
    pub add_types: Vec<String>,
}

impl OpenQuery {
    /// Opens `paths` for `action` in the default change.
    pub fn new(action: OpenFor, paths: Vec<String>) -> OpenQuery {
        OpenQuery {
            action,
            paths,
            change: None,
            file_type: None,
            add_types: Vec::new(),
        }
    }
}

/// Opens the files `query` names; a record for each, as the server streams them.
pub async fn open(conn: &Connection, query: OpenQuery) -> Result<Records<FileResult>, QueryError> {
    let action = match query.action {
        OpenFor::Add => pb::OpenAction::Add,
        OpenFor::Edit => pb::OpenAction::Edit,
        OpenFor::Delete => pb::OpenAction::Delete,
    };
    let stream = conn
        .reply(conn.client().open(pb::OpenRequest {
            caller: conn.caller(),
            action: action as i32,
            files: query.paths,
            change: query.change.unwrap_or(0),
            file_type: query.file_type.unwrap_or_default(),
            add_types: query.add_types,
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| Ok(FileResult::from_wire(r))))
}

/// Moves (renames) `from`, open for edit or add, to `to` (server syntax), in `change`
/// (`None`: the default change): a record for each half.
pub async fn move_file(
    conn: &Connection,
    from: String,
    to: String,
    change: Option<u64>,
) -> Result<Records<FileResult>, QueryError> {
    let stream = conn
        .reply(conn.client().r#move(pb::MoveRequest {
            caller: conn.caller(),
            from,
            to,
            change: change.unwrap_or(0),
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| Ok(FileResult::from_wire(r))))
}

/// Which open files to move to another change or type.
#[derive(Clone, Debug, Default)]
pub struct ReopenQuery {
    pub paths: Vec<String>,
    /// Move them to this pending change (0: the default change); `None`: leave them.
    pub change: Option<u64>,
    /// A whole type or modifiers to give them.
    pub file_type: Option<String>,
}

/// Reopens the files `query` names; a record for each.
pub async fn reopen(
    conn: &Connection,
    query: ReopenQuery,
) -> Result<Records<FileResult>, QueryError> {
    let stream = conn
        .reply(conn.client().reopen(pb::ReopenRequest {
            caller: conn.caller(),
            files: query.paths,
            change: query.change.unwrap_or(0),
            set_change: query.change.is_some(),
            file_type: query.file_type.unwrap_or_default(),
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| Ok(FileResult::from_wire(r))))
}
