//! Sync's shortcut for a workspace near head: when the have list is marked as exactly what a
//! whole-view sync gave, with C the lowest change number a later submit can have
//! (`keel_store::HaveMark`), only files of changes C and later can differ from head, so a whole-view sync looks at those files alone instead of merging
//! the whole have list with the whole view.
//!
//! Why the shortcut's plan is the full merge's plan: the mark is set only by the client, after
//! it recorded every file of a whole-view sync that left no opened file out of step
//! (`Tally::unsettled`), and only when nothing else wrote the have list since that sync began
//! (the write counter); or by a submit that put the first files into the view of a workspace
//! whose have list was empty (an import: the list then is the view's files). Every have-list write clears the mark except a submit's own files and
//! a sync's scheduled resolves, whose files belong to changes from C on and are looked at
//! anyway. Revisions submitted after the marked sync's snapshot have change numbers at least
//! C. What the shortcut cannot see — another view, an obliterate (the `revisions_removed`
//! counter), `-f`, file arguments, a protections table (which may hide files, and changes
//! without a change number) — sends the sync through the full merge.

use crate::access::Access;
use crate::context::WorkspaceCtx;
use crate::sync::{FilePlan, SyncEvent, SyncMark, SyncOptions, Tally};
use crate::{Service, ServiceError};
use keel_core::{ChangeNumber, ChangeStatus, DepotPath};
use keel_store::{ChangeFilter, HaveMark, HaveState, OpenedRow, PathRange, ReadTxn};
use std::collections::{BTreeSet, HashMap};

/// What a whole-view sync knows about its have list and the store when it starts.
pub(crate) struct Marking {
    state: HaveState,
    /// The store's `revisions_removed` counter.
    removed: u64,
    /// The workspace's view, one mapping per line.
    view: String,
    /// The newest change number in the sync's snapshot.
    last: u64,
    /// The lowest change number a revision submitted after the snapshot can have: `last`
    /// while the newest change is pending (its submit may keep its number), `last + 1` once it
    /// is submitted (a later submit of an older pending change takes a new number).
    next: u64,
}

impl Marking {
    /// The mark this sync may leave once the client has recorded it.
    pub(crate) fn into_mark(self) -> SyncMark {
        SyncMark {
            change: self.next,
            removed: self.removed,
            view: self.view,
            writes: self.state.writes,
        }
    }
}

/// A have list's state before a submit, for the submit's first mark.
pub(crate) struct FirstMarkBasis {
    /// The list's write counter.
    writes: u64,
    /// The store's `revisions_removed` counter.
    removed: u64,
}

/// Files of the changes since the mark that the view maps, in path order.
pub(crate) struct Changed {
    pub(crate) paths: BTreeSet<DepotPath>,
    /// The mark's change: the first change looked through.
    pub(crate) from: u64,
    /// Change numbers looked through.
    pub(crate) scanned: u64,
}

impl Service {
    /// Reads the have list's mark and what it is checked against.
    pub(crate) fn marking_of(
        &self,
        snap: &dyn ReadTxn,
        ws: &WorkspaceCtx,
    ) -> Result<Marking, ServiceError> {
        let state = self.have.state(ws.name())?;
        // The newest change row, pending or submitted: every revision in the snapshot belongs
        // to a change at most this, and a submit that commits later keeps its number only when
        // it is the newest allocated, otherwise takes a new one, so its number is at least this.
        let newest = snap.list_changes(&ChangeFilter::default(), None, 1)?;
        let last = newest.first().map_or(0, |c| c.change.0);
        let next = match newest.first() {
            Some(c) if c.status == ChangeStatus::Submitted => last + 1,
            _ => last,
        };
        Ok(Marking {
            state,
            removed: snap.revisions_removed()?,
            view: ws.row.view.join("\n"),
            last,
            next,
        })
    }

    /// The files the shortcut must look at, or `None` when the have list has no valid mark
    /// or the changes since are too many to be worth it (the full merge then runs).
    pub(crate) fn changed_since(
        &self,
        snap: &dyn ReadTxn,
        ws: &WorkspaceCtx,
        marking: &Marking,
    ) -> Result<Option<Changed>, ServiceError> {
        let Some(mark) = &marking.state.mark else {
            return Ok(None);
        };
        if mark.removed != marking.removed
            || mark.view != marking.view
            || mark.change > marking.next
            || marking.next - mark.change >= self.config.sync_since_max_changes
        {
            return Ok(None);
        }
        let page = self.config.page_size;
        let mut paths = BTreeSet::new();
        let mut revisions = 0u64;
        for change in mark.change..=marking.last {
            let mut after: Option<DepotPath> = None;
            loop {
                let rows = snap.change_revisions(
                    ChangeNumber(change),
                    after.as_ref().map(|p| p.as_str()),
                    page,
                )?;
                let full = rows.len() == page;
                revisions += rows.len() as u64;
                if revisions > self.config.sync_since_max_files {
                    return Ok(None);
                }
                after = rows.last().map(|r| r.path.clone());
                for row in rows {
                    if ws.client_file(&row.path).is_some() {
                        paths.insert(row.path);
                    }
                }
                if !full {
                    break;
                }
            }
        }
        Ok(Some(Changed {
            paths,
            from: mark.change,
            scanned: (marking.last + 1).saturating_sub(mark.change),
        }))
    }

    /// After `change` was submitted from `workspace` and its files recorded in the have list
    /// (keeping the mark): moves the mark past `change` when no other change from the mark's
    /// on touched the workspace's view, so the next sync looks at nothing older. The have
    /// list then holds every file of the view as of `change`: the files the mark vouched for,
    /// untouched since, and the change's own. A have-list write since the submit's own (the
    /// write counter), another view or an obliterate leaves the mark where it was.
    pub(crate) fn advance_mark(
        &self,
        workspace: &str,
        change: ChangeNumber,
    ) -> Result<bool, ServiceError> {
        let state = self.have.state(workspace)?;
        let Some(mark) = &state.mark else {
            return Ok(false);
        };
        if mark.change > change.0 || change.0 - mark.change >= self.config.sync_since_max_changes {
            return Ok(false);
        }
        let snap = self.meta.snapshot()?;
        let Some(row) = snap.get_workspace(workspace)? else {
            return Ok(false);
        };
        let ws = WorkspaceCtx::new(row)?;
        if mark.view != ws.row.view.join("\n") || mark.removed != snap.revisions_removed()? {
            return Ok(false);
        }
        let page = self.config.page_size;
        let mut revisions = 0u64;
        for other in mark.change..change.0 {
            let mut after: Option<DepotPath> = None;
            loop {
                let rows = snap.change_revisions(
                    ChangeNumber(other),
                    after.as_ref().map(|p| p.as_str()),
                    page,
                )?;
                let full = rows.len() == page;
                revisions += rows.len() as u64;
                if revisions > self.config.sync_since_max_files
                    || rows.iter().any(|r| ws.client_file(&r.path).is_some())
                {
                    return Ok(false);
                }
                after = rows.last().map(|r| r.path.clone());
                if !full {
                    break;
                }
            }
        }
        drop(snap);
        let moved = HaveMark {
            change: change.0 + 1,
            removed: mark.removed,
            view: mark.view.clone(),
        };
        Ok(self.have.set_mark(workspace, &moved, state.writes)?)
    }

    /// What [`Service::mark_first_submit`] checks against, read before a submit commits: the
    /// workspace's have list is empty and unmarked (`None` otherwise, or when it cannot be read).
    pub(crate) fn first_mark_basis(&self, workspace: &str) -> Option<FirstMarkBasis> {
        let state = self.have.state(workspace).ok()?;
        if state.mark.is_some() {
            return None;
        }
        let empty = self
            .have
            .page(workspace, &PathRange::prefix("//"), None, 1)
            .ok()?
            .is_empty();
        let removed = self.meta.snapshot().ok()?.revisions_removed().ok()?;
        empty.then_some(FirstMarkBasis {
            writes: state.writes,
            removed,
        })
    }

    /// After `change` was submitted from `workspace`, whose have list was empty and unmarked
    /// before (`basis`), and its files recorded: marks the list as in sync at `change` when no
    /// earlier change touched the workspace's view, the have list then holding exactly the
    /// view's files (a workspace that imports a tree, then updates). Any have-list write
    /// since `basis` (the write counter), an obliterate or another view leaves it unmarked.
    pub(crate) fn mark_first_submit(
        &self,
        workspace: &str,
        change: ChangeNumber,
        basis: FirstMarkBasis,
    ) -> Result<bool, ServiceError> {
        let snap = self.meta.snapshot()?;
        let Some(row) = snap.get_workspace(workspace)? else {
            return Ok(false);
        };
        let ws = WorkspaceCtx::new(row)?;
        if snap.revisions_removed()? != basis.removed {
            return Ok(false);
        }
        for prefix in ws.view.left_prefixes() {
            if !snap
                .range_changes(&PathRange::prefix(&prefix), Some(change), 1)?
                .is_empty()
            {
                return Ok(false);
            }
        }
        drop(snap);
        let mark = HaveMark {
            change: change.0 + 1,
            removed: basis.removed,
            view: ws.row.view.join("\n"),
        };
        Ok(self.have.set_mark(workspace, &mark, basis.writes)?)
    }

    /// Plans the changed files against head, as the full merge would.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sync_changed(
        &self,
        snap: &dyn ReadTxn,
        ws: &WorkspaceCtx,
        who: &Access,
        changed: Changed,
        opened: &HashMap<DepotPath, OpenedRow>,
        opts: SyncOptions,
        tally: &mut Tally,
        sink: &mut dyn FnMut(SyncEvent) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        for path in changed.paths {
            let Some(client_file) = ws.client_file(&path) else {
                continue;
            };
            who.scan()?;
            if !who.lists(path.as_str()) {
                continue;
            }
            who.result()?;
            let target = snap.head_revision(&path)?.filter(|r| !r.action.is_delete());
            let have = self.have.get(ws.name(), &path)?;
            let file = FilePlan {
                path,
                client_file,
                target,
                have,
            };
            self.plan_file(
                snap,
                ws.row.options.allwrite,
                file,
                who,
                opened,
                opts,
                &mut tally.totals,
                &mut tally.schedule,
                &mut tally.unsettled,
                sink,
            )?;
        }
        Ok(())
    }

    /// Whether a sync should hand out a new mark: always after a full merge or a sync that
    /// changed files; after a shortcut that changed nothing only when it looked at changed
    /// files or many change numbers, since setting a mark costs the client a call.
    pub(crate) fn worth_marking(&self, shortcut: Option<(u64, usize)>, files: u64) -> bool {
        match shortcut {
            None => true,
            Some((scanned, paths)) => {
                files > 0
                    || paths > 0
                    || scanned.saturating_mul(2) > self.config.sync_since_max_changes
            }
        }
    }
}
