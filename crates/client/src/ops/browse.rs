//! `dirs`, `fstat` and `filelog`: the depot's directories, a file's whole state (head, have,
//! open records here and elsewhere), and a file's revisions with their integrations.

use keel_core::{FileAction, IntegHow};
use keel_proto::v1 as pb;

use super::records::{QueryError, Records, Revision};
use crate::actions;
use crate::connect::Connection;
use crate::workspace::WorkspaceCtx;

/// Lists the directories directly below `paths` (`//depot/*`); with `include_deleted`, also
/// those whose every file is deleted.
pub async fn dirs(
    conn: &Connection,
    paths: Vec<String>,
    include_deleted: bool,
) -> Result<Records<String>, QueryError> {
    let stream = conn
        .reply(conn.client().dirs(pb::DirsRequest {
            caller: conn.caller(),
            dirs: paths,
            include_deleted,
        }))
        .await?;
    Ok(Records::new(conn, stream, |d| Ok(d.dir)))
}

/// Another workspace's open record of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenElsewhere {
    pub user: String,
    pub workspace: String,
    pub action: Option<FileAction>,
}

/// A file's whole state, as `fstat` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStat {
    /// The head (or selected) revision.
    pub head: Revision,
    /// MD5 of the head content, hex.
    pub md5: String,
    /// Relative to the caller's workspace root (empty when the server gave none).
    pub client_file: String,
    /// The workspace of the open record below (empty: none).
    pub workspace: String,
    /// The revision the caller's workspace has (0: none).
    pub have_rev: u32,
    /// Its open action in the caller's workspace (`None`: not open there).
    pub action: Option<FileAction>,
    /// The pending change it is open in.
    pub change: u64,
    /// Its open type.
    pub file_type: String,
    /// The other half of a move.
    pub move_file: String,
    /// The other workspaces with it open.
    pub others_open: Vec<OpenElsewhere>,
    /// Locked by the caller's workspace.
    pub locked: bool,
    /// An exclusive-open (`+l`) file held by another workspace.
    pub exclusive_held: bool,
}

impl FileStat {
    /// Its path below `ws`'s root: the server's, else mapped through `ws`'s view.
    pub fn client_file_in(&self, ws: &WorkspaceCtx) -> Option<String> {
        if !self.workspace.is_empty() && self.workspace != ws.name {
            return None;
        }
        if !self.client_file.is_empty() {
            return Some(self.client_file.clone());
        }
        ws.client_of_depot(&self.head.depot_file)
    }
}

/// The state of the files `paths` name (with revisions), as the server streams them.
pub async fn fstat(conn: &Connection, paths: Vec<String>) -> Result<Records<FileStat>, QueryError> {
    let stream = conn
        .reply(conn.client().fstat(pb::FilesRequest {
            caller: conn.caller(),
            files: paths,
            ..Default::default()
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| {
        Ok(FileStat {
            head: Revision::head_of(&r),
            action: actions::from_wire(r.action()),
            others_open: r
                .others_open
                .iter()
                .map(|o| OpenElsewhere {
                    user: o.user.clone(),
                    workspace: o.workspace.clone(),
                    action: actions::from_wire(o.action()),
                })
                .collect(),
            md5: r.head_md5,
            client_file: r.client_file.trim_start_matches('/').to_string(),
            workspace: r.workspace,
            have_rev: r.have_rev,
            change: r.change,
            file_type: r.file_type,
            move_file: r.move_file,
            locked: r.locked,
            exclusive_held: r.exclusive_held,
        })
    }))
}

/// What `filelog` lists.
#[derive(Clone, Debug, Default)]
pub struct FilelogQuery {
    pub paths: Vec<String>,
    /// At most this many revisions per file; 0: all.
    pub max: u32,
    /// Also the history of the files each was branched, copied or moved from.
    pub follow: bool,
}

/// An integration record into (or, `reverse`, out of) a revision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Integration {
    pub how: Option<IntegHow>,
    /// Seen from the source: `branch into` rather than `branch from`.
    pub reverse: bool,
    /// The other file and its revisions (`start_rev`, `end_rev`].
    pub file: String,
    pub start_rev: u32,
    pub end_rev: u32,
    /// The revision it went into.
    pub to_file: String,
    pub to_rev: u32,
    /// The change that made it.
    pub change: u64,
}

impl Integration {
    pub(crate) fn from_wire(i: &pb::IntegRecord) -> Integration {
        Integration {
            how: actions::integ_how(i.how()),
            reverse: i.reverse,
            file: i.from_file.clone(),
            start_rev: i.start_from_rev,
            end_rev: i.end_from_rev,
            to_file: i.to_file.clone(),
            to_rev: i.to_rev,
            change: i.change,
        }
    }
}

impl Integration {
    /// Its words: `branch from`, `copy into`, ...; empty when unspecified.
    pub fn how_str(&self) -> &'static str {
        match self.how {
            None => "",
            Some(h) if self.reverse => h.reverse_str(),
            Some(h) => h.as_str(),
        }
    }
}

/// One revision in a file's history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogEntry {
    pub revision: Revision,
    /// Who submitted it, from which workspace, and the change's description.
    pub user: String,
    pub workspace: String,
    pub description: String,
    pub integrations: Vec<Integration>,
}

/// The revisions of the files `query` names, newest first per file, as the server streams them.
pub async fn filelog(
    conn: &Connection,
    query: FilelogQuery,
) -> Result<Records<LogEntry>, QueryError> {
    let stream = conn
        .reply(conn.client().filelog(pb::FilesRequest {
            caller: conn.caller(),
            files: query.paths,
            all_revisions: true,
            max: query.max,
            include_deleted: true,
            follow_history: query.follow,
            ..Default::default()
        }))
        .await?;
    Ok(Records::new(conn, stream, |r| {
        Ok(LogEntry {
            revision: Revision::head_of(&r),
            integrations: r.integrations.iter().map(Integration::from_wire).collect(),
            user: r.user,
            workspace: r.workspace,
            description: r.description,
        })
    }))
}
