//! `opened`: the files open in the caller's workspace, or in every workspace.

use keel_core::FileAction;
use keel_proto::v1 as pb;

use super::records::{QueryError, Records};
use crate::actions;
use crate::connect::Connection;

/// Which open files to list; the default lists the caller's workspace's.
#[derive(Clone, Debug, Default)]
pub struct OpenedQuery {
    /// Only these paths (depot or workspace syntax); empty: all.
    pub paths: Vec<String>,
    /// Every workspace's open files, not only the caller's.
    pub all_workspaces: bool,
    /// Only this user's.
    pub user: Option<String>,
    /// Only those in this pending change (0: the default change).
    pub change: Option<u64>,
}

/// One open file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenedFile {
    pub depot_file: String,
    /// Relative to its workspace's root, `/`-separated; empty when the server gave none.
    pub client_file: String,
    pub action: Option<FileAction>,
    /// The pending change it is open in (0: the default change).
    pub change: u64,
    /// The type it will be submitted as.
    pub file_type: String,
    pub user: String,
    pub workspace: String,
    pub head_rev: u32,
    pub have_rev: u32,
    /// The other half of a move (empty when it is not one).
    pub move_file: String,
    /// Locked by its workspace (`lock`).
    pub locked: bool,
    /// An exclusive-open (`+l`) file held by another workspace.
    pub exclusive_held: bool,
}

impl OpenedFile {
    /// The revision it works on: `head + 1` for a new add or branch, else the have revision.
    pub fn work_rev(&self) -> u32 {
        super::file_result::work_rev(self.action, self.head_rev, self.have_rev)
    }

    fn from_wire(r: pb::FileRecord) -> OpenedFile {
        OpenedFile {
            action: actions::from_wire(r.action()),
            client_file: r.client_file.trim_start_matches('/').to_string(),
            depot_file: r.depot_file,
            change: r.change,
            file_type: r.file_type,
            user: r.user,
            workspace: r.workspace,
            head_rev: r.head_rev,
            have_rev: r.have_rev,
            move_file: r.move_file,
            locked: r.locked,
            exclusive_held: r.exclusive_held,
        }
    }
}

/// Lists the open files `query` selects, as the server streams them.
pub async fn opened(
    conn: &Connection,
    query: OpenedQuery,
) -> Result<Records<OpenedFile>, QueryError> {
    let stream = conn
        .reply(conn.client().opened(pb::OpenedRequest {
            caller: conn.caller(),
            files: query.paths,
            all_workspaces: query.all_workspaces,
            user: query.user.unwrap_or_default(),
            change: query.change.unwrap_or(0),
            filter_change: query.change.is_some(),
            content_only: false,
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| Ok(OpenedFile::from_wire(r))))
}
