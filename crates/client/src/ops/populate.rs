//! `populate`: branch files into the depot as one submitted change, without a workspace.

use keel_proto::v1 as pb;

use super::records::{QueryError, Records};
use crate::connect::Connection;

/// What to branch: `from` into `to`, or a branch spec's view.
#[derive(Clone, Debug, Default)]
pub struct PopulateQuery {
    /// The source (may carry a revision); empty with `branch`.
    pub from: String,
    /// The target; empty with `branch`.
    pub to: String,
    pub branch: Option<String>,
    /// With `branch`: from the view's right side to its left.
    pub reverse: bool,
    /// With `branch`: only these targets.
    pub paths: Vec<String>,
    /// The change's description (`None`: `Populate TARGET.`).
    pub description: Option<String>,
    /// Report only; submit nothing.
    pub preview: bool,
    /// Branch deleted sources as deleted targets.
    pub force: bool,
}

/// A target file branched (or, in a preview, that would be).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Populated {
    pub depot_file: String,
    pub rev: u32,
    pub from_file: String,
    pub from_rev: u32,
    /// Branched as a delete (with `force`).
    pub deleted: bool,
    /// The submitted change; 0 in a preview.
    pub change: u64,
}

/// Branches what `query` selects in one submitted change; a record per target file.
pub async fn populate(
    conn: &Connection,
    query: PopulateQuery,
) -> Result<Records<Populated>, QueryError> {
    let stream = conn
        .reply(conn.client().populate(pb::PopulateRequest {
            caller: conn.caller(),
            from: query.from,
            to: query.to,
            branch: query.branch.unwrap_or_default(),
            reverse: query.reverse,
            files: query.paths,
            description: query.description.unwrap_or_default(),
            preview: query.preview,
            force: query.force,
        }))
        .await?;
    Ok(Records::new(conn, stream, |f| {
        Ok(Populated {
            deleted: f.action == "delete",
            depot_file: f.depot_file,
            rev: f.rev,
            from_file: f.from_file,
            from_rev: f.from_rev,
            change: f.change,
        })
    }))
}
