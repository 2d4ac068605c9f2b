//! `changes`: the changes that touch some paths, newest first; and `changes --since`: for each
//! of many paths, the submitted changes after its own change number, in one round trip.

use keel_core::ChangeStatus;
use keel_proto::v1 as pb;

use super::records::{ChangeSummary, QueryError, Records};
use crate::connect::Connection;

/// What `changes` lists; the default lists every change, newest first.
#[derive(Clone, Debug, Default)]
pub struct ChangesQuery {
    /// Depot paths (with revisions or ranges) the changes must touch; empty: any.
    pub paths: Vec<String>,
    /// At most this many changes; 0: no limit.
    pub max: u32,
    /// Only pending or only submitted changes; `None`: both.
    pub status: Option<ChangeStatus>,
    /// Only this user's changes.
    pub user: Option<String>,
    /// Only changes of this workspace.
    pub workspace: Option<String>,
}

/// Lists the changes `query` selects, newest first, as the server streams them.
pub async fn changes(
    conn: &Connection,
    query: ChangesQuery,
) -> Result<Records<ChangeSummary>, QueryError> {
    let status = match query.status {
        None => pb::ChangeStatus::Unspecified,
        Some(ChangeStatus::Pending) => pb::ChangeStatus::Pending,
        Some(ChangeStatus::Submitted) => pb::ChangeStatus::Submitted,
    };
    let stream = conn
        .reply(conn.client().changes(pb::ChangesRequest {
            caller: conn.caller(),
            files: query.paths,
            max: query.max,
            status: status as i32,
            user: query.user.unwrap_or_default(),
            workspace: query.workspace.unwrap_or_default(),
            since: Vec::new(),
        }))
        .await?;
    Ok(Records::new(conn, stream, |change| {
        Ok(ChangeSummary::from_wire(&change))
    }))
}

/// One path of a many-path `changes --since` question: the submitted changes after `since`
/// that touch `path` (a depot path without revision, e.g. `//depot/app/...`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SincePath {
    pub path: String,
    pub since: u64,
}

impl SincePath {
    pub fn new(path: impl Into<String>, since: u64) -> SincePath {
        SincePath {
            path: path.into(),
            since,
        }
    }
}

/// A change that touches one of the asked paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeSince {
    /// The index, in the asked slice, of the path it touches.
    pub path: usize,
    pub change: ChangeSummary,
}

/// For each of `paths`, the submitted changes after its `since` that touch it, newest first
/// per path (at most `max` each; 0: no limit), in one call. A change touching several paths
/// comes once for each.
pub async fn changes_since(
    conn: &Connection,
    paths: &[SincePath],
    max: u32,
) -> Result<Records<ChangeSince>, QueryError> {
    let since = paths
        .iter()
        .map(|p| pb::ChangesSince {
            file: p.path.clone(),
            since: p.since,
        })
        .collect();
    let stream = conn
        .reply(conn.client().changes(pb::ChangesRequest {
            caller: conn.caller(),
            max,
            since,
            ..Default::default()
        }))
        .await?;
    let asked = paths.len();
    Ok(Records::new(conn, stream, move |change| {
        let index = change.since_index;
        if index as usize >= asked {
            return Err(QueryError::UnknownPath { index, asked });
        }
        Ok(ChangeSince {
            path: index as usize,
            change: ChangeSummary::from_wire(&change),
        })
    }))
}
