//! `sync` and `have`: bring a workspace to the revisions some paths name (the writers of
//! [`crate::sync`] do the work), and list the revisions it has.

use std::path::Path;

use keel_proto::v1 as pb;

use super::records::QueryError;
use crate::connect::Connection;
use crate::sync::{SyncEvent, SyncOptions};
use crate::workspace::WorkspaceCtx;

pub use crate::sync::SyncTotals;

/// What to sync and how; the default syncs the whole view to head.
#[derive(Clone, Debug, Default)]
pub struct SyncQuery {
    /// Paths in server syntax, with revisions (`//depot/app/...@120`); empty: the whole view.
    pub paths: Vec<String>,
    /// Report what would be done; change nothing.
    pub preview: bool,
    /// Rewrite files already at the revision and overwrite writable ones.
    pub force: bool,
    /// Update the have list only; leave the files alone.
    pub have_only: bool,
    /// Write the files without recording them in the have list.
    pub populate_only: bool,
}

/// What sync does to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncAction {
    Added,
    Updated,
    /// Rewritten at the revision it already had (a forced sync).
    Refreshed,
    Deleted,
    /// Opened in the workspace while its head moved: nothing written, a resolve scheduled.
    Resolve,
    /// A server that names no action.
    Unspecified,
}

impl SyncAction {
    /// Its word: `added`, `updated`, `refreshed`, `deleted`, `resolve`.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncAction::Added => "added",
            SyncAction::Updated => "updated",
            SyncAction::Refreshed => "refreshed",
            SyncAction::Deleted => "deleted",
            SyncAction::Resolve => "resolve",
            SyncAction::Unspecified => "unspecified",
        }
    }

    fn from_wire(action: pb::SyncAction) -> SyncAction {
        match action {
            pb::SyncAction::Added => SyncAction::Added,
            pb::SyncAction::Updated => SyncAction::Updated,
            pb::SyncAction::Refreshed => SyncAction::Refreshed,
            pb::SyncAction::Deleted => SyncAction::Deleted,
            pb::SyncAction::Resolve => SyncAction::Resolve,
            pb::SyncAction::Unspecified => SyncAction::Unspecified,
        }
    }
}

/// One file a sync dealt with, reported once it is in place (or failed).
#[derive(Debug)]
pub struct Synced<'a> {
    pub depot_file: &'a str,
    /// Relative to the workspace root, as the server named it (empty: no longer in the view).
    pub client_file: &'a str,
    pub rev: u32,
    pub action: SyncAction,
    pub file_type: &'a str,
    pub size: u64,
    /// Where it is on disk (`None` when the server's path was refused).
    pub local: Option<&'a Path>,
    /// Bytes written for it.
    pub bytes: u64,
    /// Why it is not in the announced state, when it is not.
    pub error: Option<&'a crate::Error>,
}

impl<'a> Synced<'a> {
    fn of(event: &'a SyncEvent) -> Synced<'a> {
        let file = &event.file;
        Synced {
            depot_file: &file.depot_file,
            client_file: &file.client_file,
            rev: file.rev,
            action: SyncAction::from_wire(file.action()),
            file_type: &file.file_type,
            size: file.size,
            local: event.local.as_deref(),
            bytes: event.bytes,
            error: event.result.as_ref().err(),
        }
    }
}

/// Why a sync stopped (a file that could not be written is reported, not an error).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The server could not be reached or refused the sync (rights, a bad path), or the
    /// workspace's state could not be kept.
    #[error(transparent)]
    Call(#[from] crate::Error),
}

impl SyncError {
    /// The connection's or server's error inside (for its refusal).
    pub fn client_error(&self) -> Option<&crate::Error> {
        match self {
            SyncError::Call(e) => Some(e),
        }
    }
}

/// Syncs `ws` as `query` asks, calling `report` for every file in the order the server sent
/// them, once it is in place; the totals at the end.
///
/// A build agent bringing its workspace to the change under test:
///
/// ```no_run
/// # async fn example(conn: keel_client::Connection, change: u64) -> Result<(), Box<dyn std::error::Error>> {
/// use keel_client::WorkspaceCtx;
/// use keel_client::ops::{self, SyncQuery};
///
/// let ws = WorkspaceCtx::fetch(&conn).await?;
/// let query = SyncQuery {
///     paths: vec![format!("//{}/...@{change}", ws.name)],
///     ..Default::default()
/// };
/// let totals = ops::sync(&conn, &ws, query, |file| {
///     if let Some(e) = file.error {
///         eprintln!("{}: {e}", file.depot_file);
///     }
/// })
/// .await?;
/// println!("{} files, {} bytes", totals.files, totals.bytes);
/// # Ok(())
/// # }
/// ```
pub async fn sync(
    conn: &Connection,
    ws: &WorkspaceCtx,
    query: SyncQuery,
    mut report: impl FnMut(&Synced<'_>),
) -> Result<SyncTotals, SyncError> {
    let options = SyncOptions {
        files: query.paths,
        preview: query.preview,
        force: query.force,
        have_only: query.have_only,
        populate_only: query.populate_only,
    };
    let totals = crate::sync::sync(conn, ws, &options, |event| report(&Synced::of(event))).await?;
    Ok(totals)
}

/// A revision the workspace has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Have {
    pub depot_file: String,
    /// Relative to the workspace root, `/`-separated.
    pub client_file: String,
    pub have_rev: u32,
    /// BLAKE3 of that revision's content, hex (empty when the server gave none).
    pub digest: String,
    /// That revision's type.
    pub file_type: String,
}

/// The revisions `ws` has of `paths` (server syntax; empty: the whole workspace).
pub async fn have(
    conn: &Connection,
    ws: &WorkspaceCtx,
    paths: Vec<String>,
) -> Result<Vec<Have>, QueryError> {
    let records = ws.have(conn, paths).await?;
    Ok(records
        .into_iter()
        .map(|record| Have {
            client_file: ws.client_file_of(&record).unwrap_or_default(),
            depot_file: record.depot_file,
            have_rev: record.have_rev,
            digest: record.head_digest,
            file_type: record.head_type,
        })
        .collect())
}
