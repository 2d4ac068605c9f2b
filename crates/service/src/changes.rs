//! Changelists: creating and editing pending ones, listing, and describing.

use crate::args::FileArg;
use crate::context::load_change;
use crate::expand::Selection;
use crate::fileinfo::{from_opened, from_revision};
use crate::open::check_pending_change;
use crate::{Caller, ChangeError, ChangeInfo, FileInfo, Service, ServiceError};
use keel_core::{ChangeNumber, DepotPath, RevSpec, unified_diff};
use keel_store::{ChangeFilter, ChangeRow, ChangeStatus, RevisionRow};
use std::collections::HashSet;
use std::io::Read;

/// Which changes `changes` lists.
#[derive(Clone, Debug, Default)]
pub struct ChangesQuery {
    pub files: Vec<String>,
    /// 0 = no limit.
    pub max: u32,
    /// `None` lists pending and submitted changes.
    pub status: Option<ChangeStatus>,
    pub user: String,
    pub workspace: String,
}

/// One part of a `describe` answer, in order: the change, its files, then diffs.
pub enum DescribePart {
    Change(ChangeInfo),
    File(Box<FileInfo>),
    Diff(String),
}

/// A change's header. It carries no file count: counting is a scan of the change's files
/// (70,000 for a big branch), and `changes -m 1` must stay a single-row read.
pub(crate) fn change_info(row: ChangeRow) -> ChangeInfo {
    ChangeInfo {
        change: row.change,
        status: row.status,
        user: row.user,
        workspace: row.workspace,
        description: row.description,
        time: row.time,
    }
}

impl Service {
    /// Removes an empty pending change of the caller's workspace.
    pub fn delete_change(&self, caller: &Caller, change: ChangeNumber) -> Result<(), ChangeError> {
        let change = change.0;
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        check_pending_change(snap.as_ref(), &ws, change)?;
        if change == 0 {
            return Err(ChangeError::DefaultChangelist);
        }
        drop(snap);
        keel_store::write(self.meta.as_ref(), move |txn| {
            let row = load_change(txn, ChangeNumber(change))?;
            crate::submit::check_no_shelf(txn, change)?;
            if txn.change_file_count(&row)? > 0 {
                return Err(ChangeError::FilesOpened {
                    change: ChangeNumber(change),
                });
            }
            txn.delete_change(ChangeNumber(change))?;
            Ok(())
        })?;
        Ok(())
    }

    /// Creates (`None`) or updates a pending change; listed opened files move into it.
    pub fn save_change(
        &self,
        caller: &Caller,
        change: Option<ChangeNumber>,
        description: &str,
        files: &[String],
    ) -> Result<ChangeInfo, ChangeError> {
        let change = change.map_or(0, |c| c.0);
        self.check_description(description)?;
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        check_pending_change(snap.as_ref(), &ws, change)?;
        if description.trim().is_empty() {
            return Err(ChangeError::NoDescription);
        }
        let moving: Vec<DepotPath> = if files.is_empty() {
            Vec::new()
        } else {
            let args = files
                .iter()
                .map(|f| FileArg::parse(f, snap.as_ref(), Some(&ws)))
                .collect::<Result<Vec<_>, _>>()?;
            let opened = snap.opened_in_workspace(ws.name(), None, usize::MAX)?;
            opened
                .into_iter()
                .filter(|o| args.iter().any(|a| a.matches(o.path.as_str())))
                .map(|o| o.path)
                .collect()
        };
        drop(snap);
        let (user, workspace, description) = (
            caller.user.clone(),
            ws.name().to_string(),
            description.to_string(),
        );
        let now = self.now();
        let row = keel_store::write(self.meta.as_ref(), move |txn| {
            let (number, user) = if change == 0 {
                (txn.allocate_change()?, user)
            } else {
                // Re-checked under the writer; an edit keeps the change's User and Client
                // (a pending change is never re-owned by editing it).
                check_pending_change(&*txn, &ws, change)?;
                let old = load_change(&*txn, ChangeNumber(change))?;
                (ChangeNumber(change), old.user)
            };
            let row = ChangeRow {
                change: number,
                status: ChangeStatus::Pending,
                user,
                workspace: workspace.clone(),
                description,
                time: now,
            };
            txn.put_change(&row)?;
            let wanted: HashSet<&DepotPath> = moving.iter().collect();
            for mut open in txn.opened_in_workspace(&workspace, None, usize::MAX)? {
                if wanted.contains(&open.path) {
                    open.change = number;
                    txn.put_opened(&open)?;
                }
            }
            Ok::<_, ServiceError>(row)
        })?;
        Ok(change_info(row))
    }

    /// Lists changes newest first.
    pub fn changes(
        &self,
        caller: &Caller,
        query: &ChangesQuery,
        sink: &mut dyn FnMut(ChangeInfo) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let (snap, who) = self.read_as(caller)?;
        let filter = ChangeFilter {
            status: query.status,
            user: (!query.user.is_empty()).then(|| query.user.clone()),
            workspace: (!query.workspace.is_empty()).then(|| query.workspace.clone()),
        };
        let max = if query.max == 0 {
            usize::MAX
        } else {
            query.max as usize
        };
        let page = self.config.page_size;
        let mut sent = 0;
        if query.files.is_empty() {
            let mut before = None;
            while sent < max {
                // `-m N` reads N rows, not a page.
                let want = page.min(max - sent);
                // A page holds at most `listing_page_bytes` of descriptions (and one more
                // row), so concurrent listings of long descriptions stay small in memory.
                let budget = self.config.listing_page_bytes;
                let rows = snap.list_changes_bounded(&filter, before, want, budget)?;
                let bytes: usize = rows.iter().map(|r| r.description.len()).sum();
                let full = rows.len() == want || bytes >= budget;
                for row in rows {
                    before = Some(row.change);
                    who.scan()?;
                    if sent < max {
                        who.result()?;
                        sink(change_info(row))?;
                        sent += 1;
                    }
                }
                if !full {
                    break;
                }
            }
            return Ok(());
        }
        // Changes touching the files: merge the per-argument listings newest first.
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let have_of = ws.as_ref().map(|w| w.name());
        let mut seen = HashSet::new();
        let mut found = Vec::new();
        for text in &query.files {
            let arg = FileArg::parse(text, snap.as_ref(), ws.as_ref())?;
            let selection = crate::expand::selection_of(snap.as_ref(), text, &arg.rev)?;
            let bound = match (&selection, &arg.rev) {
                (Selection::Newest { at, .. }, rev)
                    if !matches!(rev, Some(RevSpec::Rev(_) | RevSpec::Have | RevSpec::None)) =>
                {
                    *at
                }
                _ => {
                    // A per-file revision (`#3`, `#have`, `#none`) or a static label: the
                    // changes of every revision up to the one selected in each file
                    // (Perforce's `changes f#have`).
                    self.for_each_selected(snap.as_ref(), &who, &arg, have_of, &mut |selected| {
                        for older in snap.file_revisions(&selected.path)? {
                            if older.rev <= selected.rev && seen.insert(older.change) {
                                found.push(older.change);
                            }
                        }
                        Ok(())
                    })?;
                    continue;
                }
            };
            let admits =
                |path: &str| arg.matches(path) && selection.admits(path) && who.lists(path);
            for scope in &arg.scopes {
                let mut before = bound.map(|b| ChangeNumber(b.0 + 1));
                let mut taken = 0;
                'scan: loop {
                    let rows = snap.range_changes(scope, before, page)?;
                    let full = rows.len() == page;
                    // A full page may end inside a change: that change's paths are read again
                    // from its start on the next page (or, when it fills the page alone,
                    // through its own revisions), so no path of it goes unlooked-at.
                    let straddling = if full { rows.last().map(|r| r.0) } else { None };
                    let mut settled = 0;
                    for (change, path) in &rows {
                        if Some(*change) == straddling {
                            break;
                        }
                        settled += 1;
                        before = Some(*change);
                        who.scan()?;
                        if admits(path.as_str()) && seen.insert(*change) {
                            found.push(*change);
                            taken += 1;
                            if taken >= max {
                                break 'scan;
                            }
                        }
                    }
                    let Some(last) = straddling else {
                        break;
                    };
                    if settled > 0 {
                        before = Some(ChangeNumber(last.0 + 1));
                        continue;
                    }
                    // One change fills the page: look through its own revisions.
                    before = Some(last);
                    if seen.contains(&last) {
                        continue;
                    }
                    let mut after: Option<DepotPath> = None;
                    'change: loop {
                        let revs =
                            snap.change_revisions(last, after.as_ref().map(|p| p.as_str()), page)?;
                        let more = revs.len() == page;
                        for rev in revs {
                            who.scan()?;
                            if scope.contains(rev.path.as_str()) && admits(rev.path.as_str()) {
                                seen.insert(last);
                                found.push(last);
                                taken += 1;
                                break 'change;
                            }
                            after = Some(rev.path);
                        }
                        if !more {
                            break;
                        }
                    }
                    if taken >= max {
                        break 'scan;
                    }
                }
            }
        }
        found.sort_by(|a, b| b.cmp(a));
        for change in found {
            if sent >= max {
                break;
            }
            if let Some(row) = snap.get_change(change)?
                && filter.status.is_none_or(|s| s == row.status)
                && filter.user.as_ref().is_none_or(|u| *u == row.user)
                && filter
                    .workspace
                    .as_ref()
                    .is_none_or(|w| *w == row.workspace)
            {
                sink(change_info(row))?;
                sent += 1;
            }
        }
        Ok(())
    }

    /// Describes a change: header, files, and (unless `summary`) unified diffs of text files.
    pub fn describe(
        &self,
        caller: &Caller,
        change: ChangeNumber,
        summary: bool,
        sink: &mut dyn FnMut(DescribePart) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        let change = change.0;
        let (snap, who) = self.read_as(caller)?;
        let row = load_change(snap.as_ref(), ChangeNumber(change))?;
        let status = row.status;
        let workspace = row.workspace.clone();
        sink(DescribePart::Change(change_info(row)))?;
        if status == ChangeStatus::Pending {
            for open in snap.opened_in_change(&workspace, ChangeNumber(change), None, usize::MAX)? {
                if !who.lists(open.path.as_str()) {
                    continue;
                }
                sink(DescribePart::File(Box::new(from_opened(&open, None))))?;
            }
            return Ok(());
        }
        let page = self.config.page_size;
        let mut after: Option<DepotPath> = None;
        let mut text_files = Vec::new();
        loop {
            let rows = snap.change_revisions(
                ChangeNumber(change),
                after.as_ref().map(DepotPath::as_str),
                page,
            )?;
            let full = rows.len() == page;
            for rev in &rows {
                who.scan()?;
                if !who.lists(rev.path.as_str()) {
                    continue;
                }
                who.result()?;
                let mut info = from_revision(rev);
                info.action = Some(rev.action);
                sink(DescribePart::File(Box::new(info)))?;
                // Diffs show content: only of files the caller may read.
                if !summary
                    && rev.file_type.base.is_line_text()
                    && who.user.allows(keel_core::Right::Read, rev.path.as_str())
                {
                    text_files.push(rev.clone());
                }
            }
            after = rows.last().map(|r| r.path.clone());
            if !full {
                break;
            }
        }
        for rev in text_files {
            let previous = if rev.rev > 1 {
                snap.revision(&rev.path, rev.rev - 1)?
            } else {
                None
            };
            let diff = self.revision_diff(previous.as_ref(), Some(&rev))?;
            if !diff.is_empty() {
                sink(DescribePart::Diff(diff))?;
            }
        }
        Ok(())
    }

    /// Text of a revision for diffing; `None` for deleted revisions, or files too large to diff.
    pub(crate) fn revision_text(
        &self,
        rev: Option<&RevisionRow>,
    ) -> Result<Option<String>, ServiceError> {
        let Some(rev) = rev.filter(|r| !r.action.is_delete()) else {
            return Ok(Some(String::new()));
        };
        if rev.size > self.config.max_diff_bytes {
            return Ok(None);
        }
        let content = self.content_of(rev)?;
        let mut reader = content.blob.into_content_reader()?;
        let mut bytes = Vec::with_capacity(rev.size as usize);
        reader
            .read_to_end(&mut bytes)
            .map_err(|e| ServiceError::ContentUnreadable {
                file: format!("{}#{}", rev.path, rev.rev),
                reason: e.to_string(),
            })?;
        Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// Unified diff between two revisions (either may be absent = empty).
    pub(crate) fn revision_diff(
        &self,
        old: Option<&RevisionRow>,
        new: Option<&RevisionRow>,
    ) -> Result<String, ServiceError> {
        let label = |r: Option<&RevisionRow>| {
            r.map(|r| format!("{}#{}", r.path, r.rev))
                .unwrap_or_else(|| "/dev/null".into())
        };
        match (self.revision_text(old)?, self.revision_text(new)?) {
            (Some(a), Some(b)) => Ok(unified_diff(&a, &b, &label(old), &label(new))),
            _ => Ok(format!(
                "==== {} vs {}: too large to diff ====\n",
                label(old),
                label(new)
            )),
        }
    }
}
