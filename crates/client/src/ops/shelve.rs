//! `shelve`, `shelve -d` and `unshelve`: store the open files of a pending change on the
//! server (their content uploaded as [`crate::upload`] plans it), delete shelved files, and
//! open shelved files in a workspace with their shelved content.

use keel_proto::v1 as pb;

use super::file_result::FileResult;
use super::records::{QueryError, Records};
use crate::connect::Connection;
use crate::workspace::WorkspaceCtx;

/// Why a shelve or unshelve failed.
#[derive(Debug, thiserror::Error)]
pub enum ShelveError {
    /// The server could not be reached or refused (rights, a change not the caller's), or a
    /// workspace file could not be read or written.
    #[error(transparent)]
    Call(#[from] crate::Error),
}

impl ShelveError {
    /// The connection's or server's error inside (for its refusal).
    pub fn client_error(&self) -> Option<&crate::Error> {
        match self {
            ShelveError::Call(e) => Some(e),
        }
    }
}

/// What to shelve.
#[derive(Clone, Debug, Default)]
pub struct ShelveQuery {
    /// A numbered pending change of the caller's workspace.
    pub change: u64,
    /// Its open files to shelve; empty: all of them.
    pub paths: Vec<String>,
    /// Replace the whole shelf with these files.
    pub replace: bool,
}

/// A shelf as a shelve left it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shelved {
    pub change: u64,
    /// The shelved files (`head_rev`, `digest`: the shelved revision and content).
    pub files: Vec<FileResult>,
}

/// Shelves the open files `query` selects of `ws`, uploading their content.
pub async fn shelve(
    conn: &Connection,
    ws: &WorkspaceCtx,
    query: ShelveQuery,
) -> Result<Shelved, ShelveError> {
    let opened = ws
        .opened(conn, query.paths.clone(), Some(query.change))
        .await?;
    let reply =
        crate::shelve::shelve(conn, ws, query.change, query.paths, query.replace, &opened).await?;
    Ok(Shelved {
        change: reply.change,
        files: reply.files.into_iter().map(FileResult::from_wire).collect(),
    })
}

/// Deletes the shelved files of `change` that `paths` name (empty: the whole shelf); a
/// record for each.
pub async fn delete_shelved(
    conn: &Connection,
    change: u64,
    paths: Vec<String>,
) -> Result<Records<FileResult>, QueryError> {
    let stream = conn
        .reply(conn.client().delete_shelved(pb::DeleteShelvedRequest {
            caller: conn.caller(),
            change,
            files: paths,
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| Ok(FileResult::from_wire(r))))
}

/// What to unshelve.
#[derive(Clone, Debug, Default)]
pub struct UnshelveQuery {
    /// The change whose shelved files to take.
    pub shelved: u64,
    /// The pending change of the caller's workspace to open them in (`None`: the default).
    pub change: Option<u64>,
    /// Only these shelved files; empty: all.
    pub paths: Vec<String>,
}

/// Opens the shelved files `query` selects in `ws` and writes their shelved content (a
/// shelved delete removes the local file); the opened records.
pub async fn unshelve(
    conn: &Connection,
    ws: &WorkspaceCtx,
    query: UnshelveQuery,
) -> Result<Vec<FileResult>, ShelveError> {
    let opened = crate::shelve::unshelve(
        conn,
        ws,
        query.shelved,
        query.change.unwrap_or(0),
        query.paths,
    )
    .await?;
    Ok(opened.into_iter().map(FileResult::from_wire).collect())
}
