//! `resolve` and `resolved`: what needs resolving (the source revision and merge base of
//! each file), recording how a file was resolved (the merge itself is the client's, with
//! `keel_core`'s three-way merge), and the files resolved but not yet submitted.

use keel_proto::v1 as pb;

use super::file_result::{FileResult, ResolveResult};
use super::records::{QueryError, Records};
use crate::connect::Connection;

/// The open files of `paths` (empty: all) that need a resolve: each with its source
/// (`source_file`, revisions `source_start`, `source_end`] and merge base (`base_file`,
/// `base_rev`; empty: none).
pub async fn resolve_list(
    conn: &Connection,
    paths: Vec<String>,
) -> Result<Records<FileResult>, QueryError> {
    let stream = conn
        .reply(conn.client().resolve_list(pb::FilesRequest {
            caller: conn.caller(),
            files: paths,
            ..Default::default()
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| Ok(FileResult::from_wire(r))))
}

/// Records that open file `depot_file` was resolved as `result` (its workspace file already
/// holds the result); its open record now.
pub async fn resolve_done(
    conn: &Connection,
    depot_file: &str,
    result: ResolveResult,
) -> Result<FileResult, QueryError> {
    let outcome = match result {
        ResolveResult::Theirs => pb::ResolveOutcome::Theirs,
        ResolveResult::Yours => pb::ResolveOutcome::Yours,
        ResolveResult::Merged => pb::ResolveOutcome::Merged,
        ResolveResult::Edited => pb::ResolveOutcome::Edited,
    };
    let done = conn
        .reply(conn.client().resolve_done(pb::ResolveDoneRequest {
            caller: conn.caller(),
            file: depot_file.to_string(),
            outcome: outcome as i32,
        }))
        .await?;
    Ok(FileResult::from_wire(done))
}

/// The open files of `paths` (empty: all) resolved but not yet submitted.
pub async fn resolved(
    conn: &Connection,
    paths: Vec<String>,
) -> Result<Records<FileResult>, QueryError> {
    let stream = conn
        .reply(conn.client().resolved(pb::FilesRequest {
            caller: conn.caller(),
            files: paths,
            ..Default::default()
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| Ok(FileResult::from_wire(r))))
}
