//! `diff` and `diff2`: which open files to compare with the revisions the workspace has, and
//! the server's comparison of two depot revisions.

use keel_core::FileAction;
use keel_proto::v1 as pb;

use super::opened::{OpenedQuery, opened};
use super::records::{QueryError, Revision};
use super::sync::{Have, have};
use crate::connect::Connection;
use crate::workspace::WorkspaceCtx;

/// The files of `paths` (empty: all) open in `ws` for edit or integrate, with the revisions
/// the workspace has of them: those whose local content `diff` compares.
pub async fn diff_candidates(
    conn: &Connection,
    ws: &WorkspaceCtx,
    paths: Vec<String>,
) -> Result<Vec<Have>, QueryError> {
    let query = OpenedQuery {
        paths,
        ..Default::default()
    };
    let edits: Vec<String> = opened(conn, query)
        .await?
        .all()
        .await?
        .into_iter()
        .filter(|f| matches!(f.action, Some(FileAction::Edit | FileAction::Integrate)))
        .map(|f| f.depot_file)
        .collect();
    if edits.is_empty() {
        return Ok(Vec::new());
    }
    have(conn, ws, edits).await
}

/// Two depot revisions compared by the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff2 {
    pub left: Revision,
    pub right: Revision,
    /// Their unified difference (empty when identical or binary).
    pub diff: String,
    pub identical: bool,
    /// Either is not line text.
    pub binary: bool,
}

/// Compares revisions `left` and `right` (depot syntax with revisions).
pub async fn diff2(conn: &Connection, left: String, right: String) -> Result<Diff2, QueryError> {
    let reply = conn
        .reply(conn.client().diff2(pb::Diff2Request {
            caller: conn.caller(),
            left,
            right,
        }))
        .await?;
    Ok(Diff2 {
        left: Revision::head_of(&reply.left.unwrap_or_default()),
        right: Revision::head_of(&reply.right.unwrap_or_default()),
        diff: reply.diff,
        identical: reply.identical,
        binary: reply.binary,
    })
}
