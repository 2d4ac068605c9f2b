//! Build machines' questions about new changes: for each of many paths, the submitted changes
//! after a number (`changes --since`, one call for many build plans), and the submitted
//! changes after a number touching any of some paths, oldest first with their matching files
//! (what a `watch` subscription delivers, resumed from the last change its subscriber saw).
//! Both read one snapshot and show only the files the caller may list.

use crate::args::FileArg;
use crate::changes::change_info;
use crate::fileinfo::from_revision;
use crate::{Caller, ChangeInfo, FileInfo, Service, ServiceError};
use keel_core::{ChangeNumber, DepotPath};
use keel_store::{ChangeStatus, ReadTxn};
use std::collections::BTreeSet;

/// One path of a many-path `changes --since` call and the change its asker has seen.
#[derive(Clone, Debug)]
pub struct SinceSpec {
    pub filespec: String,
    /// Changes after this one are listed.
    pub since: ChangeNumber,
}

/// How much one catch-up read of a subscription returns.
#[derive(Clone, Copy, Debug)]
pub struct WatchLimits {
    /// Most changes per read (the subscriber asks again from the last one).
    pub changes: usize,
    /// Most matching files listed per change (`more_files` says when there were more).
    pub files: usize,
}

/// A submitted change a subscription delivers: its header and the files that matched.
#[derive(Clone, Debug)]
pub struct WatchedChange {
    pub change: ChangeInfo,
    /// The change's files the subscription's paths select and the caller may list, in path
    /// order, at most `WatchLimits::files`.
    pub files: Vec<FileInfo>,
    /// More files matched than are listed.
    pub more_files: bool,
}

/// Who a read answers: a caller (what they may list, within their group's limits) or the
/// server itself (webhooks, which a super user set up: everything).
pub(crate) trait Sees {
    fn scan(&self) -> Result<(), ServiceError>;
    fn lists(&self, path: &str) -> bool;
    fn result(&self) -> Result<(), ServiceError>;
}

impl Sees for crate::access::Access {
    fn scan(&self) -> Result<(), ServiceError> {
        crate::access::Access::scan(self)
    }
    fn lists(&self, path: &str) -> bool {
        crate::access::Access::lists(self, path)
    }
    fn result(&self) -> Result<(), ServiceError> {
        crate::access::Access::result(self)
    }
}

/// The server reading for itself.
pub(crate) struct Everything;

impl Sees for Everything {
    fn scan(&self) -> Result<(), ServiceError> {
        Ok(())
    }
    fn lists(&self, _: &str) -> bool {
        true
    }
    fn result(&self) -> Result<(), ServiceError> {
        Ok(())
    }
}

/// A file argument without a revision: these calls follow the newest changes.
fn path_arg(
    text: &str,
    snap: &dyn ReadTxn,
    ws: Option<&crate::context::WorkspaceCtx>,
    command: &str,
) -> Result<FileArg, ServiceError> {
    let arg = FileArg::parse(text, snap, ws)?;
    if arg.rev.is_some() {
        return Err(ServiceError::BadArgument {
            arg: text.to_string(),
            reason: format!(
                "{text} - {command} takes paths without a revision (@ or #): it follows new changes"
            ),
        });
    }
    Ok(arg)
}

/// The files of submitted `change` that some argument selects and the caller may list, at
/// most `max` (and whether more matched). With `max` 0 it only finds out whether any does.
fn matching_files(
    snap: &dyn ReadTxn,
    who: &dyn Sees,
    change: ChangeNumber,
    args: &[FileArg],
    max: usize,
    page: usize,
) -> Result<(Vec<FileInfo>, bool), ServiceError> {
    let mut files = Vec::new();
    let mut after: Option<DepotPath> = None;
    loop {
        let rows = snap.change_revisions(change, after.as_ref().map(DepotPath::as_str), page)?;
        let full = rows.len() == page;
        for rev in &rows {
            who.scan()?;
            let path = rev.path.as_str();
            if args.iter().any(|a| a.matches(path)) && who.lists(path) {
                if files.len() >= max {
                    return Ok((files, true));
                }
                let mut info = from_revision(rev);
                info.action = Some(rev.action);
                files.push(info);
            }
        }
        after = rows.last().map(|r| r.path.clone());
        if !full {
            return Ok((files, false));
        }
    }
}

impl Service {
    /// For each spec, the submitted changes after its `since` that touch it (files the caller
    /// may list), newest first, at most `max` each (0: all), handed to `sink` with the spec's
    /// index. Every spec is checked before anything is answered.
    pub fn changes_since(
        &self,
        caller: &Caller,
        specs: &[SinceSpec],
        max: u32,
        sink: &mut dyn FnMut(usize, ChangeInfo) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        if specs.is_empty() {
            return Err(ServiceError::NoFileArguments {
                command: Some("changes --since"),
            });
        }
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let args = specs
            .iter()
            .map(|s| path_arg(&s.filespec, snap.as_ref(), ws.as_ref(), "changes --since"))
            .collect::<Result<Vec<_>, _>>()?;
        let max = if max == 0 { usize::MAX } else { max as usize };
        let page = self.config.page_size.max(1);
        for (index, (spec, arg)) in specs.iter().zip(&args).enumerate() {
            let mut found = BTreeSet::new();
            for scope in &arg.scopes {
                let mut before = None;
                let mut taken = 0;
                'scan: loop {
                    let rows = snap.range_changes(scope, before, page)?;
                    let full = rows.len() == page;
                    for (change, path) in &rows {
                        if *change <= spec.since {
                            break 'scan;
                        }
                        who.scan()?;
                        if !found.contains(change)
                            && arg.matches(path.as_str())
                            && who.lists(path.as_str())
                        {
                            found.insert(*change);
                            taken += 1;
                            if taken >= max {
                                break 'scan;
                            }
                        }
                    }
                    let Some(&(last, _)) = rows.last() else { break };
                    if !full {
                        break;
                    }
                    // The next page starts below `last`: rows of it beyond this page are
                    // skipped, so it is decided by its own files.
                    if !found.contains(&last) {
                        let (_, any) = matching_files(
                            snap.as_ref(),
                            &who,
                            last,
                            std::slice::from_ref(arg),
                            0,
                            page,
                        )?;
                        if any {
                            found.insert(last);
                            taken += 1;
                            if taken >= max {
                                break;
                            }
                        }
                    }
                    before = Some(last);
                }
            }
            for change in found.iter().rev().take(max) {
                if let Some(row) = snap.get_change(*change)?
                    && row.status == ChangeStatus::Submitted
                {
                    who.result()?;
                    sink(index, change_info(row))?;
                }
            }
        }
        Ok(())
    }

    /// The submitted changes after `after` that touch any of `filespecs` in files the caller
    /// may list, oldest first, with those files; at most `limits.changes` (ask again from the
    /// last one for more). Reads only what is newer than `after`, so a subscriber that is
    /// caught up costs a few index rows.
    pub fn watched_changes(
        &self,
        caller: &Caller,
        filespecs: &[String],
        after: ChangeNumber,
        limits: WatchLimits,
    ) -> Result<Vec<WatchedChange>, ServiceError> {
        if filespecs.is_empty() {
            return Err(ServiceError::NoFileArguments {
                command: Some("watch"),
            });
        }
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let args = filespecs
            .iter()
            .map(|text| path_arg(text, snap.as_ref(), ws.as_ref(), "watch"))
            .collect::<Result<Vec<_>, _>>()?;
        changes_after(
            snap.as_ref(),
            &who,
            &args,
            after,
            limits,
            self.config.page_size,
        )
    }
}

/// The submitted changes after `after` touching `args` in files `who` may list, oldest first
/// with those files, at most `limits.changes`.
pub(crate) fn changes_after(
    snap: &dyn ReadTxn,
    who: &dyn Sees,
    args: &[FileArg],
    after: ChangeNumber,
    limits: WatchLimits,
    page: usize,
) -> Result<Vec<WatchedChange>, ServiceError> {
    let want = limits.changes.max(1);
    let page = page.max(1);
    let mut out = Vec::new();
    let mut cursor = after;
    loop {
        // The next `want` changes of each scope; up to `horizon` (the lowest last change
        // of a scope that had more) the candidates are every change there is.
        let mut candidates = BTreeSet::new();
        let mut horizon: Option<ChangeNumber> = None;
        for scope in args.iter().flat_map(|a| a.scopes.iter()) {
            let mut from = cursor;
            let mut distinct = BTreeSet::new();
            loop {
                let rows = snap.range_changes_after(scope, from, page)?;
                let full = rows.len() == page;
                for (change, _) in &rows {
                    who.scan()?;
                    distinct.insert(*change);
                }
                if distinct.len() >= want {
                    let kept: BTreeSet<_> = distinct.into_iter().take(want).collect();
                    let last = *kept.last().expect("want is at least one");
                    horizon = Some(horizon.map_or(last, |h| h.min(last)));
                    distinct = kept;
                    break;
                }
                match rows.last() {
                    Some(&(last, _)) if full => from = last,
                    _ => break,
                }
            }
            candidates.extend(distinct);
        }
        for change in candidates {
            if horizon.is_some_and(|h| change > h) {
                break;
            }
            let (files, more_files) = matching_files(snap, who, change, args, limits.files, page)?;
            if files.is_empty() && !more_files {
                continue;
            }
            if let Some(row) = snap.get_change(change)?
                && row.status == ChangeStatus::Submitted
            {
                who.result()?;
                out.push(WatchedChange {
                    change: change_info(row),
                    files,
                    more_files,
                });
                if out.len() >= want {
                    return Ok(out);
                }
            }
        }
        match horizon {
            Some(h) => cursor = h,
            None => return Ok(out),
        }
    }
}

impl Service {
    /// The depot ranges that hold every file `filespecs` can select (for the caller's
    /// workspace view as it is now): a change with no file in them is none of theirs.
    pub fn watch_scopes(
        &self,
        caller: &Caller,
        filespecs: &[String],
    ) -> Result<Vec<keel_store::PathRange>, ServiceError> {
        let (snap, _) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let mut scopes = Vec::new();
        for text in filespecs {
            scopes.extend(path_arg(text, snap.as_ref(), ws.as_ref(), "watch")?.scopes);
        }
        Ok(scopes)
    }

    /// The newest submitted change (0 when none): where a subscription "from now" starts.
    pub fn last_submitted(&self, caller: &Caller) -> Result<ChangeNumber, ServiceError> {
        let (snap, _) = self.read_as(caller)?;
        last_submitted(snap.as_ref())
    }
}

/// The newest submitted change in `snap` (0 when none).
pub(crate) fn last_submitted(snap: &dyn ReadTxn) -> Result<ChangeNumber, ServiceError> {
    let filter = keel_store::ChangeFilter {
        status: Some(ChangeStatus::Submitted),
        ..Default::default()
    };
    Ok(snap
        .list_changes(&filter, None, 1)?
        .first()
        .map_or(ChangeNumber(0), |row| row.change))
}
