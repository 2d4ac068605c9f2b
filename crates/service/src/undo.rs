//! `undo`: opens the inverse of submitted revisions for the caller to submit.
//!
//! For each file with revisions in the range `#a,#b` (or `@a,@b`; a single `#n`/`@n` is the
//! range of itself), the file is opened to hold again what it held before `#a`: an edit back to
//! revision `a-1`'s content (a lazy copy, so nothing is uploaded), a delete when `#a` added the
//! file, an add of `a-1`'s content when the head is a delete. The open record carries an
//! `undid` integration of the file's own revisions `(a-1, b]`, which submit writes to history.
//! Every file is checked before anything is opened: a file already opened in the workspace, one
//! a later revision changed after the range (the caller must resolve that by hand), one outside
//! the view or not synced to its head, or one the caller may not open refuses the whole command.

use crate::args::FileArg;
use crate::fileinfo::set_head;
use crate::open::check_pending_change;
use crate::rev_range::RangeArg;
use crate::{Caller, FileInfo, FileOutcome, Service, ServiceError};
use keel_core::{BaseType, ChangeNumber, ChangeRef, FileAction, IntegHow, RevSpec, Right};
use keel_store::{LazyContent, OpenedRow, PendingInteg, RevisionRow};

/// What `undo` is asked.
#[derive(Clone, Debug, Default)]
pub struct UndoRequest {
    /// File arguments with a revision or a range each.
    pub files: Vec<String>,
    /// `-n`: report what would be opened; open nothing.
    pub preview: bool,
    /// `-c`: the pending change to open the files in (0: the default change).
    pub change: u64,
}

fn lazy_of(rev: &RevisionRow) -> Option<LazyContent> {
    rev.digest.map(|digest| LazyContent {
        digest,
        size: rev.size,
        md5: rev.md5.clone(),
        mod_time: rev.mod_time,
        owned: true,
    })
}

impl Service {
    /// Opens the inverse of the revisions each argument names; calls `each` with one record per
    /// file opened (or, with `preview`, that would be).
    pub fn undo(
        &self,
        caller: &Caller,
        req: &UndoRequest,
        each: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let who = self.access_of(caller)?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        check_pending_change(snap.as_ref(), &ws, req.change)?;
        if req.files.is_empty() {
            return Err(ServiceError::NoFileArguments {
                command: Some("undo"),
            });
        }
        let removed = snap.revisions_removed()?;
        let mut plan: Vec<(OpenedRow, FileInfo)> = Vec::new();
        for text in &req.files {
            let mut range = RangeArg::parse(text)?;
            if range.lower.is_none() {
                // A single revision or change is the range of itself.
                range.lower = match FileArg::parse(&range.upper, snap.as_ref(), Some(&ws))?.rev {
                    Some(rev @ (RevSpec::Rev(_) | RevSpec::Change(_))) => Some(rev),
                    _ => {
                        return Err(ServiceError::BadArgument {
                            arg: text.clone(),
                            reason: format!(
                                "{text} - undo needs the revisions to undo: file#N, \
                                 file#A,#B, @CHANGE or @A,@B"
                            ),
                        });
                    }
                };
            }
            let arg = FileArg::parse(&range.upper, snap.as_ref(), Some(&ws))?;
            let before = plan.len();
            let matched =
                self.for_each_selected(snap.as_ref(), &who, &arg, Some(ws.name()), &mut |upper| {
                    let mut revs = snap.file_revisions(&upper.path)?;
                    revs.reverse();
                    let upto: Vec<RevisionRow> = revs
                        .iter()
                        .filter(|r| r.rev <= upper.rev)
                        .cloned()
                        .collect();
                    let Some(first) = range.first_rev(&upto, upper.rev)? else {
                        return Ok(());
                    };
                    let head = revs.last().cloned().expect("a selected file has revisions");
                    who.require(Right::Open, upper.path.as_str())?;
                    if let Some(entry) = self.plan_undo(
                        snap.as_ref(),
                        &ws,
                        caller,
                        req,
                        &revs,
                        first,
                        &upper,
                        &head,
                    )? {
                        plan.push(entry);
                    }
                    Ok(())
                })?;
            if matched == 0 {
                return Err(ServiceError::NoSuchFiles { arg: text.clone() });
            }
            if plan.len() == before {
                return Err(ServiceError::BadArgument {
                    arg: text.clone(),
                    reason: format!("{text} - no revision(s) in that range to undo"),
                });
            }
        }
        who.check_open_files(plan.len())?;
        if !req.preview {
            let ws_name = ws.name().to_string();
            let rows: Vec<OpenedRow> = plan.iter().map(|(row, _)| row.clone()).collect();
            keel_store::write(self.meta.as_ref(), move |txn| {
                let intact = txn.revisions_removed()? == removed;
                for row in &rows {
                    if txn
                        .opened_file(&row.path)?
                        .iter()
                        .any(|o| o.workspace == ws_name)
                    {
                        return Err(ServiceError::UndoAlreadyOpened {
                            path: row.path.to_string(),
                        });
                    }
                    if !intact {
                        return Err(ServiceError::ContentPurged {
                            path: row.path.to_string(),
                            digest: row
                                .lazy
                                .as_ref()
                                .map(|l| l.digest.to_string())
                                .unwrap_or_default(),
                        });
                    }
                    crate::open::check_exclusive(txn, row)?;
                    if row.lazy.is_some() {
                        txn.put_opened_owned(row)?;
                    } else {
                        txn.put_opened(row)?;
                    }
                }
                Ok::<_, ServiceError>(())
            })?;
        }
        plan.into_iter().try_for_each(|(_, info)| each(info))
    }

    /// The open record that undoes `revs[first..=upper]` of one file (its revisions oldest
    /// first, `head` the newest); `None` when the file already holds what it held before.
    #[allow(clippy::too_many_arguments)]
    fn plan_undo(
        &self,
        snap: &dyn keel_store::ReadTxn,
        ws: &crate::context::WorkspaceCtx,
        caller: &Caller,
        req: &UndoRequest,
        revs: &[RevisionRow],
        first: u32,
        upper: &RevisionRow,
        head: &RevisionRow,
    ) -> Result<Option<(OpenedRow, FileInfo)>, ServiceError> {
        let path = &upper.path;
        let undone = format!("#{first},#{}", upper.rev);
        // Later revisions changed the file again: the undo is merged into the head by resolve
        // (theirs: the content before the range; base: the range's last revision), which only
        // text that every side still has can do.
        let later = head.rev > upper.rev
            && (head.digest != upper.digest || head.action.is_delete() != upper.action.is_delete());
        if snap
            .opened_file(path)?
            .iter()
            .any(|o| o.workspace == ws.name())
        {
            return Err(ServiceError::UndoAlreadyOpened {
                path: path.to_string(),
            });
        }
        let client_file = ws
            .client_file(path)
            .ok_or_else(|| ServiceError::UndoNotInView {
                path: path.to_string(),
                workspace: ws.name().to_string(),
            })?;
        let before = revs
            .iter()
            .find(|r| r.rev + 1 == first)
            .filter(|r| !r.action.is_delete());
        let have = self.have.get(ws.name(), path)?;
        let live = !head.action.is_delete();
        let mergeable =
            |r: &RevisionRow| !r.action.is_delete() && r.file_type.base == BaseType::Text;
        if later && !(mergeable(head) && mergeable(upper) && before.is_some_and(mergeable)) {
            return Err(ServiceError::UndoConflict {
                path: path.to_string(),
                undone,
                later_rev: head.rev,
                later_change: head.change,
            });
        }
        let (action, lazy, file_type) = match (live, before) {
            (true, Some(_)) if later => (FileAction::Edit, None, head.file_type),
            (false, None) => return Ok(None),
            (true, Some(b)) if b.digest == head.digest && b.file_type == head.file_type => {
                return Ok(None);
            }
            (true, None) => (FileAction::Delete, None, head.file_type),
            (true, Some(b)) => (FileAction::Edit, lazy_of(b), b.file_type),
            (false, Some(b)) => (FileAction::Add, lazy_of(b), b.file_type),
        };
        if live && have != head.rev {
            return Err(ServiceError::UndoNotSynced {
                path: path.to_string(),
                have,
                head: head.rev,
            });
        }
        let row = OpenedRow {
            workspace: ws.name().to_string(),
            path: path.clone(),
            user: caller.user.clone(),
            change: ChangeNumber(req.change),
            action,
            file_type,
            base_rev: head.rev,
            move_file: None,
            lazy,
            locked: false,
            integ: Some(PendingInteg {
                from_path: path.clone(),
                from_start: first - 1,
                from_end: upper.rev,
                base: later.then(|| (path.clone(), upper.rev)),
                resolved: !later,
                how: Some(IntegHow::Undid),
            }),
        };
        let mut info = FileInfo {
            client_file: Some(client_file),
            action: Some(action),
            change: ChangeRef::from_number(req.change),
            file_type: Some(file_type),
            have_rev: have,
            ..FileInfo::new(path.clone())
        };
        set_head(&mut info, head);
        info.lazy_digest = row.lazy.as_ref().map(|l| l.digest);
        info.source_file = Some(path.clone());
        info.source_start = first - 1;
        info.source_end = upper.rev;
        info.unresolved = later;
        info.outcome = Some(FileOutcome::Opened);
        Ok(Some((row, info)))
    }
}
