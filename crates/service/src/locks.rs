//! `lock` and `unlock` of opened files: a locked file may still be opened elsewhere, but no
//! other workspace can submit it until the lock goes (submit, revert or unlock). The lock is a
//! flag on the open record, so it is journaled, checkpointed and replicated with it and goes
//! when the record does.

use crate::args::FileArg;
use crate::context::WorkspaceCtx;
use crate::fileinfo::from_opened;
use crate::open::check_pending_change;
use crate::{Caller, FileInfo, Service, ServiceError};
use keel_core::{ChangeRef, Right};
use keel_store::{OpenedRow, PathRange, ReadTxn};

/// Refuses when a workspace other than `row`'s holds the file locked.
pub(crate) fn check_not_locked_elsewhere(
    txn: &dyn ReadTxn,
    row: &OpenedRow,
) -> Result<(), ServiceError> {
    for other in txn.opened_file(&row.path)? {
        if other.workspace != row.workspace && other.locked {
            return Err(ServiceError::LockedElsewhere {
                path: row.path.to_string(),
                user: other.user,
                workspace: other.workspace,
            });
        }
    }
    Ok(())
}

impl Service {
    /// Locks the caller's opened files that `files` name (all of them when empty), only
    /// those in `change` when given. Refused whole when another workspace holds one of them
    /// locked. Returns the records locked (already locked ones included).
    pub fn lock(
        &self,
        caller: &Caller,
        files: &[String],
        change: Option<ChangeRef>,
    ) -> Result<Vec<FileInfo>, ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        let rows = self.own_opened(snap.as_ref(), &ws, files, change, &who)?;
        for row in &rows {
            who.require(Right::Write, row.path.as_str())?;
        }
        let infos = rows_info(&rows, &ws, true);
        drop(snap);
        keel_store::write(self.meta.as_ref(), move |txn| {
            for row in &rows {
                // The record as it is now: reverted or reopened meanwhile is re-read.
                let Some(mut current) = txn
                    .opened_file(&row.path)?
                    .into_iter()
                    .find(|o| o.workspace == row.workspace)
                else {
                    continue;
                };
                check_not_locked_elsewhere(txn, &current)?;
                if !current.locked {
                    current.locked = true;
                    txn.put_opened(&current)?;
                }
            }
            Ok::<_, ServiceError>(())
        })?;
        Ok(infos)
    }

    /// Unlocks the caller's locked files that `files` name (all when empty; only `change`'s
    /// when given). With `force` (admin on each file), unlocks the files whoever holds them.
    pub fn unlock(
        &self,
        caller: &Caller,
        files: &[String],
        change: Option<ChangeRef>,
        force: bool,
    ) -> Result<Vec<FileInfo>, ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let rows = if force {
            if files.is_empty() {
                return Err(crate::error::bad_argument(
                    "unlock -f",
                    "name the files to unlock",
                ));
            }
            let ws = self.optional_workspace(snap.as_ref(), caller)?;
            let rows = self.locked_anywhere(snap.as_ref(), ws.as_ref(), files, &who)?;
            for row in &rows {
                who.require(Right::Admin, row.path.as_str())?;
            }
            rows
        } else {
            let ws = self.caller_workspace(snap.as_ref(), caller)?;
            let mut rows = self.own_opened(snap.as_ref(), &ws, files, change, &who)?;
            rows.retain(|r| r.locked);
            rows
        };
        let infos = rows
            .iter()
            .map(|r| {
                let mut info = from_opened(r, None);
                info.locked = false;
                info
            })
            .collect();
        drop(snap);
        keel_store::write(self.meta.as_ref(), move |txn| {
            for row in &rows {
                if let Some(mut current) = txn
                    .opened_file(&row.path)?
                    .into_iter()
                    .find(|o| o.workspace == row.workspace && o.locked)
                {
                    current.locked = false;
                    txn.put_opened(&current)?;
                }
            }
            Ok::<_, ServiceError>(())
        })?;
        Ok(infos)
    }

    /// The caller's open records `files` name, only `change`'s when given, those it may list.
    fn own_opened(
        &self,
        snap: &dyn ReadTxn,
        ws: &WorkspaceCtx,
        files: &[String],
        change: Option<ChangeRef>,
        who: &crate::access::Access,
    ) -> Result<Vec<OpenedRow>, ServiceError> {
        let change = change.map(ChangeRef::number);
        if let Some(change) = change {
            check_pending_change(snap, ws, change)?;
        }
        let mut rows = self.select_opened(snap, ws, files)?;
        rows.retain(|r| who.lists(r.path.as_str()) && change.is_none_or(|c| r.change.0 == c));
        if rows.is_empty() {
            return Err(ServiceError::NotOpened {
                patterns: if files.is_empty() {
                    "[all]".to_string()
                } else {
                    files.join(" ")
                },
            });
        }
        Ok(rows)
    }

    /// Every locked open record, in any workspace, on the files `files` name.
    fn locked_anywhere(
        &self,
        snap: &dyn ReadTxn,
        ws: Option<&WorkspaceCtx>,
        files: &[String],
        who: &crate::access::Access,
    ) -> Result<Vec<OpenedRow>, ServiceError> {
        let args = files
            .iter()
            .map(|f| FileArg::parse(f, snap, ws))
            .collect::<Result<Vec<_>, _>>()?;
        let scopes: Vec<PathRange> = args.iter().flat_map(|a| a.scopes.clone()).collect();
        let page = self.config.page_size;
        let mut out = Vec::new();
        for scope in scopes {
            let mut after: Option<(String, String)> = None;
            loop {
                let rows = snap.opened_in_range(
                    &scope,
                    after.as_ref().map(|(p, w)| (p.as_str(), w.as_str())),
                    page,
                )?;
                for row in &rows {
                    if row.locked
                        && who.lists(row.path.as_str())
                        && args.iter().any(|a| {
                            a.matches(row.path.as_str())
                                || a.exact_file().as_deref() == Some(row.path.as_str())
                        })
                        && !out
                            .iter()
                            .any(|o: &OpenedRow| o.path == row.path && o.workspace == row.workspace)
                    {
                        out.push(row.clone());
                    }
                }
                match rows.last() {
                    Some(last) if rows.len() == page => {
                        after = Some((last.path.to_string(), last.workspace.clone()))
                    }
                    _ => break,
                }
            }
        }
        if out.is_empty() {
            return Err(ServiceError::NotLocked {
                patterns: files.join(" "),
            });
        }
        Ok(out)
    }
}

fn rows_info(rows: &[OpenedRow], ws: &WorkspaceCtx, locked: bool) -> Vec<FileInfo> {
    rows.iter()
        .map(|r| {
            let mut info = from_opened(r, Some(ws));
            info.locked = locked;
            info
        })
        .collect()
}
