//! `lock` and `unlock`: hold open files so that no other workspace can submit them, and let
//! them go (an admin: whoever holds them, or those of deleted users and workspaces).

use keel_proto::v1 as pb;

use super::file_result::FileResult;
use super::records::{QueryError, Records};
use crate::connect::Connection;

/// Which open files to lock or unlock.
#[derive(Clone, Debug, Default)]
pub struct LockQuery {
    /// Empty: every file open in the caller's workspace (or in `change`).
    pub paths: Vec<String>,
    /// Only those in this pending change (0: the default change).
    pub change: Option<u64>,
}

/// Locks the caller's open files `query` names; a record for each.
pub async fn lock(conn: &Connection, query: LockQuery) -> Result<Records<FileResult>, QueryError> {
    let stream = conn
        .reply(conn.client().lock(pb::LockRequest {
            caller: conn.caller(),
            files: query.paths,
            change: query.change.unwrap_or(0),
            filter_change: query.change.is_some(),
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| Ok(FileResult::from_wire(r))))
}

/// Whose locks an unlock lets go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnlockScope {
    /// The caller's own.
    #[default]
    Own,
    /// The named files' locks whoever holds them (admin).
    Force,
    /// The locks and exclusive opens of deleted users or workspaces (admin).
    Orphaned,
}

/// Unlocks the files `query` names, of `scope`; a record for each file let go.
pub async fn unlock(
    conn: &Connection,
    query: LockQuery,
    scope: UnlockScope,
) -> Result<Records<FileResult>, QueryError> {
    let stream = conn
        .reply(conn.client().unlock(pb::UnlockRequest {
            caller: conn.caller(),
            files: query.paths,
            change: query.change.unwrap_or(0),
            filter_change: query.change.is_some(),
            force: scope == UnlockScope::Force,
            orphaned: scope == UnlockScope::Orphaned,
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| Ok(FileResult::from_wire(r))))
}
