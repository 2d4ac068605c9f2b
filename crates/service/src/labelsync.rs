//! `tag` and `labelsync`: changing which revisions a static label holds.
//!
//! Both plan on a snapshot, streaming the selected revisions and the label's entries in path
//! order, and apply what changes in bounded write jobs (`ServiceConfig::label_batch` entries each), each of
//! which re-checks that the label still exists and is unlocked. Every change is reported once
//! its job is durable (or at once with `preview`).
//!
//! Protections hold: an entry for a file the caller may not list is neither reported nor
//! changed (a labelsync leaves another user's entries for files hidden from the caller as
//! they are), and such files count as not matched.

use crate::access::Access;
use crate::args::{FileArg, view_scopes};
use crate::expand::selection_of;
use crate::labels::{LabelCtx, load_label};
use crate::paging::Cursor;
use crate::{
    Caller, LabelEntryAction, LabelError, LabelFileChange, LabelSpec, Service, ServiceError,
};
use keel_core::{DepotPath, RevSpec};
use keel_store::{PathRange, ReadTxn};

/// Options of `tag`.
#[derive(Clone, Copy, Debug, Default)]
pub struct TagOptions {
    /// `-d`: remove the files from the label instead.
    pub delete: bool,
    /// `-n`: report only.
    pub preview: bool,
}

/// How a label entry changes from revision `current` to `target` (0 = no entry).
pub(crate) fn entry_change(current: u32, target: u32) -> Option<LabelEntryAction> {
    match (current, target) {
        (0, 0) => None,
        (0, _) => Some(LabelEntryAction::Added),
        (_, 0) => Some(LabelEntryAction::Deleted),
        (c, t) if c == t => None,
        _ => Some(LabelEntryAction::Updated),
    }
}

type Sink<'s> = &'s mut dyn FnMut(LabelFileChange) -> Result<(), ServiceError>;

/// One label entry to change, its path typed for the store.
struct EntryChange {
    path: DepotPath,
    rev: u32,
    action: LabelEntryAction,
}

impl EntryChange {
    fn into_record(self) -> LabelFileChange {
        LabelFileChange {
            depot_file: self.path,
            rev: self.rev,
            action: self.action,
        }
    }
}

/// Label changes waiting for their write job.
struct Batch<'a, 's> {
    service: &'a Service,
    /// The caller's rights: changes to files they may not list are dropped unseen.
    who: &'a Access,
    label: String,
    preview: bool,
    pending: Vec<EntryChange>,
    sink: Sink<'s>,
    count: u64,
}

impl Batch<'_, '_> {
    fn push(&mut self, change: EntryChange) -> Result<(), LabelError> {
        if !self.who.lists(change.path.as_str()) {
            return Ok(());
        }
        self.count += 1;
        if self.preview {
            return Ok((self.sink)(change.into_record())?);
        }
        self.pending.push(change);
        if self.pending.len() >= self.service.config.label_batch {
            self.flush()?;
        }
        Ok(())
    }

    /// Applies the pending changes in one write job, then reports them.
    fn flush(&mut self) -> Result<(), LabelError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let changes = std::mem::take(&mut self.pending);
        let label = self.label.clone();
        let written = keel_store::write(self.service.meta.as_ref(), move |txn| {
            let row = txn.get_label(&label)?.ok_or_else(|| LabelError::NoSuch {
                name: label.clone(),
            })?;
            let ctx = LabelCtx::new(row)?;
            ctx.check_unlocked()?;
            ctx.check_static()?;
            for change in &changes {
                let rev = if change.action == LabelEntryAction::Deleted {
                    0
                } else {
                    change.rev
                };
                txn.set_label_rev(&label, &change.path, rev)?;
            }
            Ok::<_, LabelError>(changes)
        })?;
        Ok(written
            .into_iter()
            .try_for_each(|c| (self.sink)(c.into_record()))?)
    }
}

/// A label's entries over sorted, disjoint ranges, consumed in path order during a merge.
struct Entries<'a> {
    cursors: Vec<Cursor<'a, (DepotPath, u32)>>,
    index: usize,
}

impl<'a> Entries<'a> {
    fn new(snap: &'a dyn ReadTxn, label: &str, scopes: &[PathRange], page: usize) -> Self {
        let cursors = scopes
            .iter()
            .map(|range| {
                let (label, range) = (label.to_string(), range.clone());
                Cursor::new(
                    Box::new(move |after| Ok(snap.label_revs(&label, &range, after, page)?)),
                    |e: &(DepotPath, u32)| e.0.as_str(),
                    page,
                )
            })
            .collect();
        Entries { cursors, index: 0 }
    }

    /// Hands entries before `upto` (all when `None`) to `before`; returns the revision of the
    /// entry at `upto` (0 = none), consuming it.
    fn advance(
        &mut self,
        upto: Option<&str>,
        before: &mut dyn FnMut(DepotPath, u32) -> Result<(), LabelError>,
    ) -> Result<u32, LabelError> {
        while self.index < self.cursors.len() {
            let cursor = &mut self.cursors[self.index];
            let Some((path, _)) = cursor.peek()? else {
                self.index += 1;
                continue;
            };
            match upto {
                Some(limit) if path.as_str() > limit => return Ok(0),
                Some(limit) if path == limit => {
                    let rev = cursor.next_row()?.map(|(_, rev)| rev).unwrap_or(0);
                    return Ok(rev);
                }
                _ => {}
            }
            if let Some((path, rev)) = cursor.next_row()? {
                before(path, rev)?;
            }
        }
        Ok(0)
    }
}

/// One labelsync pass: which files are targets, which entries it owns.
struct Pass {
    text: String,
    target_scopes: Vec<PathRange>,
    entry_scopes: Vec<PathRange>,
    rev: Option<RevSpec>,
    arg: Option<FileArg>,
}

impl Pass {
    fn owns(&self, depot: &str) -> bool {
        self.arg.as_ref().is_none_or(|a| a.matches(depot))
    }
}

/// Removes an entry the pass owns but no longer selects.
fn push_stale(
    pass: &Pass,
    batch: &mut Batch<'_, '_>,
    path: DepotPath,
    rev: u32,
) -> Result<(), LabelError> {
    if !pass.owns(path.as_str()) {
        return Ok(());
    }
    batch.push(EntryChange {
        path,
        rev,
        action: LabelEntryAction::Deleted,
    })
}

fn no_such(text: &str) -> ServiceError {
    ServiceError::NoSuchFiles {
        arg: text.to_string(),
    }
}

impl Service {
    /// `tag`: sets the label's entries to the revisions `files` select (deleted revisions are
    /// not tagged), or with `delete` removes the files' entries. The label's View is ignored;
    /// a missing label is created (not when deleting or previewing). Returns the change count.
    pub fn tag(
        &self,
        caller: &Caller,
        label: &str,
        files: &[String],
        opts: TagOptions,
        sink: &mut dyn FnMut(LabelFileChange) -> Result<(), ServiceError>,
    ) -> Result<u64, LabelError> {
        self.touch_user(caller)?;
        if files.is_empty() {
            return Err(ServiceError::NoFileArguments {
                command: Some("tag"),
            }
            .into());
        }
        let snap = self.meta.snapshot()?;
        let name = crate::context::workspace_name(label)?;
        match snap.get_label(&name)? {
            Some(row) => {
                let ctx = LabelCtx::new(row)?;
                ctx.check_unlocked()?;
                ctx.check_static()?;
            }
            None if opts.delete || opts.preview => {
                return Err(LabelError::NoSuch { name });
            }
            None => {
                let spec = LabelSpec {
                    name: name.clone(),
                    ..LabelSpec::default()
                };
                self.save_label(caller, spec, true, false)?;
            }
        }
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let who = self.access_of(caller)?;
        let args = files
            .iter()
            .map(|f| FileArg::parse(f, snap.as_ref(), ws.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut batch = Batch {
            service: self,
            who: &who,
            label: name.clone(),
            preview: opts.preview,
            pending: Vec::new(),
            sink,
            count: 0,
        };
        let page = self.config.page_size;
        for arg in &args {
            let mut matched = 0;
            if opts.delete {
                let mut entries = Entries::new(snap.as_ref(), &name, &arg.scopes, page);
                entries.advance(None, &mut |path, rev| {
                    if arg.matches(path.as_str()) && who.lists(path.as_str()) {
                        matched += 1;
                        batch.push(EntryChange {
                            path,
                            rev,
                            action: LabelEntryAction::Deleted,
                        })?;
                    }
                    Ok(())
                })?;
            } else {
                self.for_each_selected_as(
                    snap.as_ref(),
                    &who,
                    arg,
                    ws.as_ref().map(|w| w.name()),
                    &mut |rev| {
                        if rev.action.is_delete() {
                            return Ok(());
                        }
                        matched += 1;
                        let current = snap.label_rev(&name, &rev.path)?;
                        match entry_change(current, rev.rev) {
                            Some(action) => batch.push(EntryChange {
                                path: rev.path,
                                rev: rev.rev,
                                action,
                            }),
                            None => Ok(()),
                        }
                    },
                )?;
            }
            if matched == 0 {
                batch.flush()?;
                return Err(no_such(&arg.text).into());
            }
        }
        batch.flush()?;
        Ok(batch.count)
    }

    /// `labelsync`: makes the label hold exactly the selected revisions (head unless the
    /// argument says otherwise) of the files in its View, limited to `files` when given:
    /// entries are added, updated and deleted. Returns the change count.
    pub fn labelsync(
        &self,
        caller: &Caller,
        label: &str,
        files: &[String],
        preview: bool,
        sink: &mut dyn FnMut(LabelFileChange) -> Result<(), ServiceError>,
    ) -> Result<u64, LabelError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let ctx = load_label(snap.as_ref(), label)?;
        ctx.check_unlocked()?;
        ctx.check_static()?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let who = self.access_of(caller)?;
        let mut passes = Vec::new();
        if files.is_empty() {
            let target_scopes = view_scopes(&ctx.view, |l| &l.left);
            passes.push(Pass {
                text: format!("@{}", ctx.name()),
                target_scopes,
                entry_scopes: vec![PathRange::prefix("//")],
                rev: None,
                arg: None,
            });
        } else {
            for text in files {
                let arg = FileArg::parse(text, snap.as_ref(), ws.as_ref())?;
                passes.push(Pass {
                    text: text.clone(),
                    target_scopes: arg.scopes.clone(),
                    entry_scopes: arg.scopes.clone(),
                    rev: arg.rev.clone(),
                    arg: Some(arg),
                });
            }
        }
        let mut batch = Batch {
            service: self,
            who: &who,
            label: ctx.name().to_string(),
            preview,
            pending: Vec::new(),
            sink,
            count: 0,
        };
        for pass in &passes {
            let have_of = ws.as_ref().map(|w| w.name());
            self.labelsync_pass(snap.as_ref(), &ctx, pass, have_of, &mut batch)?;
        }
        batch.flush()?;
        Ok(batch.count)
    }

    /// Merges one pass's targets with the label's entries, feeding the differences to `batch`.
    fn labelsync_pass(
        &self,
        snap: &dyn ReadTxn,
        ctx: &LabelCtx,
        pass: &Pass,
        have_of: Option<&str>,
        batch: &mut Batch<'_, '_>,
    ) -> Result<(), LabelError> {
        let selection = selection_of(snap, &pass.text, &pass.rev)?;
        let page = self.config.page_size;
        let mut entries = Entries::new(snap, ctx.name(), &pass.entry_scopes, page);
        for scope in &pass.target_scopes {
            let mut heads = self.selected_cursor(snap, scope.clone(), &selection);
            while let Some(head) = heads.next_row()? {
                if !pass.owns(head.path.as_str()) || !selection.admits(head.path.as_str()) {
                    continue;
                }
                if !ctx.in_view(head.path.as_str()) {
                    continue;
                }
                let current = entries.advance(Some(head.path.as_str()), &mut |p, r| {
                    push_stale(pass, batch, p, r)
                })?;
                if !batch.who.lists(head.path.as_str()) {
                    // Hidden from the caller: its entry (consumed above) stays as it is.
                    continue;
                }
                let path = head.path.clone();
                let target = self
                    .select_revision(snap, &pass.text, &pass.rev, head, have_of)?
                    .filter(|r| !r.action.is_delete())
                    .map(|r| r.rev)
                    .unwrap_or(0);
                if let Some(action) = entry_change(current, target) {
                    let rev = if target == 0 { current } else { target };
                    batch.push(EntryChange { path, rev, action })?;
                }
            }
        }
        entries.advance(None, &mut |p, r| push_stale(pass, batch, p, r))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_changes() {
        assert_eq!(entry_change(0, 0), None);
        assert_eq!(entry_change(0, 3), Some(LabelEntryAction::Added));
        assert_eq!(entry_change(2, 3), Some(LabelEntryAction::Updated));
        assert_eq!(entry_change(3, 3), None);
        assert_eq!(entry_change(3, 0), Some(LabelEntryAction::Deleted));
    }
}
