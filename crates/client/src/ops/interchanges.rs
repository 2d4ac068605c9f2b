//! `interchanges`: the submitted changes not yet integrated from a source into a target,
//! oldest first; and `cstat`: for each change touching some files, whether the caller's
//! workspace has it.

use keel_proto::v1 as pb;

use super::records::{ChangeSummary, QueryError, Records};
use crate::connect::Connection;

/// Where to look for changes not yet integrated: `from` into `to`, or a branch spec's view.
#[derive(Clone, Debug, Default)]
pub struct InterchangesQuery {
    /// The source (may carry `@change`, `#rev`, `@label`); empty with `branch`.
    pub from: String,
    /// The target; empty with `branch`.
    pub to: String,
    /// A branch spec whose view pairs sources and targets.
    pub branch: Option<String>,
    /// With `branch`: from the view's right side to its left.
    pub reverse: bool,
    /// With `branch`: only these targets.
    pub paths: Vec<String>,
    /// Also each change's source revisions not yet integrated.
    pub with_files: bool,
}

/// A change not yet integrated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interchange {
    pub change: ChangeSummary,
    /// With [`InterchangesQuery::with_files`]: its revisions (`//depot/path#rev`), in path
    /// order.
    pub files: Vec<String>,
}

/// The changes `query` finds not yet integrated, oldest first, as the server streams them.
pub async fn interchanges(
    conn: &Connection,
    query: InterchangesQuery,
) -> Result<Records<Interchange>, QueryError> {
    let stream = conn
        .reply(conn.client().interchanges(pb::InterchangesRequest {
            caller: conn.caller(),
            from: query.from,
            to: query.to,
            branch: query.branch.unwrap_or_default(),
            reverse: query.reverse,
            files: query.paths,
            with_files: query.with_files,
        }))
        .await?;
    Ok(Records::filtered(conn, stream, |item| {
        Some(Interchange {
            change: ChangeSummary::from_wire(item.change.as_ref()?),
            files: item.files,
        })
    }))
}

/// Whether the caller's workspace has a change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeSyncState {
    pub change: u64,
    /// `have`, `partial` or `need`.
    pub status: String,
}

/// For each change touching `paths` (empty: the whole workspace), whether the caller's
/// workspace has synced it.
pub async fn cstat(
    conn: &Connection,
    paths: Vec<String>,
) -> Result<Records<ChangeSyncState>, QueryError> {
    let stream = conn
        .reply(conn.client().cstat(pb::CstatRequest {
            caller: conn.caller(),
            files: paths,
        }))
        .await?;
    Ok(Records::new(conn, stream, |state| {
        Ok(ChangeSyncState {
            change: state.change,
            status: state.status,
        })
    }))
}
