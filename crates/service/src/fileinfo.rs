//! Building [`FileInfo`] records from store rows.

use crate::FileInfo;
use crate::context::WorkspaceCtx;
use keel_store::{OpenedRow, RevisionRow};

/// Head fields from a revision.
pub(crate) fn from_revision(rev: &RevisionRow) -> FileInfo {
    let mut info = FileInfo {
        depot_file: rev.path.clone(),
        ..FileInfo::default()
    };
    set_head(&mut info, rev);
    info
}

pub(crate) fn set_head(info: &mut FileInfo, rev: &RevisionRow) {
    info.head_rev = rev.rev;
    info.head_change = rev.change.0;
    info.head_action = rev.action.as_str().to_string();
    info.head_type = rev.file_type.to_string();
    info.head_time = rev.time;
    info.head_size = rev.size;
    info.head_digest = rev.digest.map(|d| d.to_hex()).unwrap_or_default();
    info.head_md5 = rev.md5.clone();
}

/// Open fields from an opened row.
pub(crate) fn set_opened(info: &mut FileInfo, open: &OpenedRow) {
    info.action = open.action.as_str().to_string();
    info.change = open.change.0;
    info.file_type = open.file_type.to_string();
    info.user = open.user.clone();
    info.workspace = open.workspace.clone();
    info.move_file = open.move_file.clone().unwrap_or_default();
    info.lazy_digest = open
        .lazy
        .as_ref()
        .map(|l| l.digest.to_hex())
        .unwrap_or_default();
}

/// A record for an opened file, with its workspace path when the view maps it.
pub(crate) fn from_opened(open: &OpenedRow, ws: Option<&WorkspaceCtx>) -> FileInfo {
    let mut info = FileInfo {
        depot_file: open.path.clone(),
        ..FileInfo::default()
    };
    set_opened(&mut info, open);
    info.head_rev = open.base_rev;
    if let Some(ws) = ws {
        info.client_file = ws.client_file(&open.path).unwrap_or_default();
    }
    info
}
