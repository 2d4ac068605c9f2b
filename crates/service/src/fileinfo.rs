//! Building [`FileInfo`] records from store rows.

use crate::FileInfo;
use crate::context::WorkspaceCtx;
use keel_core::ChangeRef;
use keel_store::{OpenedRow, RevisionRow};

/// Head fields from a revision.
pub(crate) fn from_revision(rev: &RevisionRow) -> FileInfo {
    let mut info = FileInfo::new(rev.path.clone());
    set_head(&mut info, rev);
    info
}

pub(crate) fn set_head(info: &mut FileInfo, rev: &RevisionRow) {
    info.head_rev = rev.rev;
    info.head_change = Some(rev.change);
    info.head_action = Some(rev.action);
    info.head_type = Some(rev.file_type);
    info.head_time = rev.time;
    info.head_mod_time = rev.mod_time;
    info.head_size = rev.size;
    info.head_digest = rev.digest;
    info.head_md5 = rev.md5.clone();
}

/// Open fields from an opened row.
pub(crate) fn set_opened(info: &mut FileInfo, open: &OpenedRow) {
    info.action = Some(open.action);
    info.change = ChangeRef::from_number(open.change.0);
    info.file_type = Some(open.file_type);
    info.user = open.user.clone();
    info.workspace = open.workspace.clone();
    info.move_file = open.move_file.clone();
    info.lazy_digest = open.lazy.as_ref().map(|l| l.digest);
    info.lazy_md5 = open
        .lazy
        .as_ref()
        .map(|l| l.md5.clone())
        .unwrap_or_default();
    info.locked = open.locked;
    if let Some(integ) = &open.integ {
        info.source_file = Some(integ.from_path.clone());
        info.source_start = integ.from_start;
        info.source_end = integ.from_end;
        if let Some((path, rev)) = &integ.base {
            info.base_file = Some(path.clone());
            info.base_rev = *rev;
        }
        info.unresolved = !integ.resolved;
    }
}

/// A record for an opened file, with its workspace path when the view maps it.
pub(crate) fn from_opened(open: &OpenedRow, ws: Option<&WorkspaceCtx>) -> FileInfo {
    let mut info = FileInfo::new(open.path.clone());
    set_opened(&mut info, open);
    info.head_rev = open.base_rev;
    if let Some(ws) = ws {
        info.client_file = ws.client_file(&open.path);
    }
    info
}
