//! `integrate`, `merge` and `copy`: open the files of a source as branches, integrations or
//! deletes of a target; and `integrated`: the integration records of files, both directions.

use keel_proto::v1 as pb;

use super::browse::Integration;
use super::file_result::FileResult;
use super::records::{QueryError, Records};
use crate::connect::Connection;

/// How targets take the source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IntegrateMode {
    /// `integrate`/`merge`: the revisions not yet integrated, a resolve where both changed.
    #[default]
    Integrate,
    /// `copy`: the target becomes the source, no resolve.
    Copy,
}

/// What to integrate: `from` into `to`, or a branch spec's view.
#[derive(Clone, Debug, Default)]
pub struct IntegrateQuery {
    pub mode: IntegrateMode,
    /// The source pattern (may carry `#rev`, `@change`, `@label`); empty with `branch`.
    pub from: String,
    /// The target pattern; empty with `branch`.
    pub to: String,
    /// A branch spec whose view pairs sources and targets.
    pub branch: Option<String>,
    /// With `branch`: from the view's right side to its left.
    pub reverse: bool,
    /// With `branch`: only these targets.
    pub paths: Vec<String>,
    /// List what would be opened; open nothing.
    pub preview: bool,
    /// The pending change to open the targets in (`None`: the default change).
    pub change: Option<u64>,
}

/// Opens the targets `query` selects; a record for each as the server streams them (never
/// held whole: a 70,000-file branch is read one record at a time).
pub async fn integrate(
    conn: &Connection,
    query: IntegrateQuery,
) -> Result<Records<FileResult>, QueryError> {
    let mode = match query.mode {
        IntegrateMode::Integrate => pb::IntegrateMode::Integrate,
        IntegrateMode::Copy => pb::IntegrateMode::Copy,
    };
    let stream = conn
        .reply(conn.client().integrate(pb::IntegrateRequest {
            caller: conn.caller(),
            mode: mode as i32,
            from: query.from,
            to: query.to,
            branch: query.branch.unwrap_or_default(),
            reverse: query.reverse,
            files: query.paths,
            preview: query.preview,
            change: query.change.unwrap_or(0),
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| Ok(FileResult::from_wire(r))))
}

/// The integration records into and out of the files `paths` name.
pub async fn integrated(
    conn: &Connection,
    paths: Vec<String>,
) -> Result<Records<Integration>, QueryError> {
    let stream = conn
        .reply(conn.client().integrated(pb::FilesRequest {
            caller: conn.caller(),
            files: paths,
            ..Default::default()
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| {
        Ok(Integration::from_wire(&r))
    }))
}
