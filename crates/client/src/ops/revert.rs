//! `revert`: discard open files (the server forgets their open records), and `revert -a`'s
//! question: which files open for edit hold what the workspace has.

use std::collections::HashMap;

use keel_core::FileAction;
use keel_proto::v1 as pb;

use super::file_result::FileResult;
use super::opened::{OpenedQuery, opened};
use super::records::{QueryError, Records};
use super::sync::have;
use crate::connect::Connection;
use crate::workspace::WorkspaceCtx;
use crate::{keywords, transfer};

/// Which open files to revert.
#[derive(Clone, Debug, Default)]
pub struct RevertQuery {
    /// Depot or workspace syntax (`//ws/...` reverts everything).
    pub paths: Vec<String>,
    /// Only the files of `unchanged` (open for edit, content as had): `revert -a`.
    pub unchanged_only: bool,
    /// With `unchanged_only`: the depot files found unchanged ([`unchanged_files`]).
    pub unchanged: Vec<String>,
}

/// Reverts the files `query` names; a record for each (its action: the one reverted).
pub async fn revert(
    conn: &Connection,
    query: RevertQuery,
) -> Result<Records<FileResult>, QueryError> {
    let stream = conn
        .reply(conn.client().revert(pb::RevertRequest {
            caller: conn.caller(),
            files: query.paths,
            unchanged_only: query.unchanged_only,
            unchanged: query.unchanged,
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| Ok(FileResult::from_wire(r))))
}

/// The depot files of `paths` open for edit in `ws` whose local content is the revision the
/// workspace has (compared by digest, keywords contracted as the type says).
pub async fn unchanged_files(
    conn: &Connection,
    ws: &WorkspaceCtx,
    paths: Vec<String>,
) -> Result<Vec<String>, QueryError> {
    let query = OpenedQuery {
        paths,
        ..Default::default()
    };
    let edits: Vec<_> = opened(conn, query)
        .await?
        .all()
        .await?
        .into_iter()
        .filter(|f| f.action == Some(FileAction::Edit))
        .collect();
    if edits.is_empty() {
        return Ok(Vec::new());
    }
    let had: HashMap<String, String> = have(
        conn,
        ws,
        edits.iter().map(|f| f.depot_file.clone()).collect(),
    )
    .await?
    .into_iter()
    .map(|h| (h.depot_file, h.digest))
    .collect();
    let mut unchanged = Vec::new();
    for file in edits {
        let client_file = if file.client_file.is_empty() {
            ws.client_of_depot(&file.depot_file)
        } else {
            Some(file.client_file.clone())
        };
        let Some(client_file) = client_file else {
            continue;
        };
        let form = keywords::form_of(&file.file_type);
        let local = transfer::hash_local_as(&ws.local(&client_file)?, form)?;
        if let (Some(local), Some(had)) = (local, had.get(&file.depot_file))
            && local.eq_ignore_ascii_case(had)
        {
            unchanged.push(file.depot_file);
        }
    }
    Ok(unchanged)
}
