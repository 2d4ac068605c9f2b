//! `files`: the head (or every) revision of the files some paths name.

use keel_proto::v1 as pb;

use super::records::{QueryError, Records, Revision};
use crate::connect::Connection;

/// What `files` lists.
#[derive(Clone, Debug, Default)]
pub struct FilesQuery {
    /// Depot paths, with revisions or ranges (`//depot/...#head`, `//depot/x@12`).
    pub paths: Vec<String>,
    /// Every revision in the range, not only the newest.
    pub all_revisions: bool,
    /// At most this many; 0: no limit.
    pub max: u32,
    /// Also files whose head revision is a delete.
    pub include_deleted: bool,
}

/// Lists the revisions `query` selects, in path order, as the server streams them.
pub async fn files(conn: &Connection, query: FilesQuery) -> Result<Records<Revision>, QueryError> {
    let stream = conn
        .reply(conn.client().files(pb::FilesRequest {
            caller: conn.caller(),
            files: query.paths,
            all_revisions: query.all_revisions,
            max: query.max,
            include_deleted: query.include_deleted,
            ..Default::default()
        }))
        .await?;
    Ok(Records::new(conn, stream, |record| {
        Ok(Revision::head_of(&record))
    }))
}
