//! integrate / merge / copy: open target files with the source revisions not yet integrated.
//!
//! A new target is opened for `branch` with lazy content (the source's digest: no content is
//! copied, now or at submit). An existing target is opened for `integrate` with a pending
//! resolve whose base is the closest common ancestor in the integration history; `copy` instead
//! opens it already resolved as an exact (lazy) copy. A deleted source opens the target for
//! delete. Everything is planned on one snapshot; targets are opened in write jobs of
//! `ServiceConfig::integrate_batch` files as the plan goes, and each batch is reported once it
//! is durable, so memory does not grow with the number of files. A conflict found in a later
//! batch leaves the earlier batches opened (as when Perforce stops part way); revert them.

use crate::access::Access;
use crate::args::{FileArg, view_scopes};
use crate::context::WorkspaceCtx;
use crate::expand::{Selection, selection_of};
use crate::fileinfo::set_head;
use crate::open::check_pending_change;
use crate::{
    Caller, FileInfo, FileOutcome, IntegrateError, Service, ServiceError, error::bad_argument,
};
use keel_core::{
    ChangeNumber, ChangeRef, DepotPath, FileAction, FileSpec, IntegEdge, IntegHow, LineKind, Right,
    View, ViewLine, pending_range, select_base, taken_whole_from,
};
use keel_store::{IntegRow, LazyContent, OpenedRow, PathRange, PendingInteg, ReadTxn, RevisionRow};
use std::collections::HashMap;
use std::sync::Arc;

/// Which command opened the files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntegrateMode {
    /// `integrate` and `merge`: changed targets need a resolve.
    Integrate,
    /// `copy`: targets become exact copies of their sources, no resolve.
    Copy,
}

#[derive(Clone, Debug, Default)]
pub struct IntegrateRequest {
    /// `FROM` and `TO` file patterns (FROM may carry a revision); empty when `branch` is used.
    pub from: String,
    pub to: String,
    /// Branch spec name (`-b`); `reverse` (`-r`) integrates from its right side to its left.
    pub branch: String,
    pub reverse: bool,
    /// With `-b`: target files to limit to (may carry a revision bounding the sources).
    pub files: Vec<String>,
    /// `-n`: report only.
    pub preview: bool,
    /// 0 = the default changelist.
    pub change: u64,
}

/// Whether every source revision in `(start, end]` was taken whole from `target` (branched,
/// copied or deleted from it: the change that created a branch, seen from the branch), so the
/// target already has them all.
pub(crate) fn all_taken_from(
    snap: &dyn ReadTxn,
    source: &RevisionRow,
    target: &DepotPath,
    start: u32,
    end: u32,
) -> Result<bool, ServiceError> {
    let into_source: Vec<IntegEdge> = snap
        .integrations_into(&source.path)?
        .into_iter()
        .map(edge)
        .collect();
    if !into_source.iter().any(|e| e.from_path == target.as_str()) {
        return Ok(false);
    }
    Ok(snap
        .file_revisions(&source.path)?
        .iter()
        .filter(|r| r.rev > start && r.rev <= end)
        .all(|r| taken_whole_from(&into_source, r.rev, target.as_str())))
}

pub(crate) fn edge(row: IntegRow) -> IntegEdge {
    IntegEdge {
        to_path: row.to_path.into_string(),
        to_rev: row.to_rev,
        from_path: row.from_path.into_string(),
        from_start: row.from_start,
        from_end: row.from_end,
        how: row.how,
    }
}

/// Records into each of `paths` and, one level further, into their sources.
fn history(
    snap: &dyn ReadTxn,
    paths: &[&DepotPath],
) -> Result<HashMap<String, Vec<IntegEdge>>, ServiceError> {
    let mut map: HashMap<String, Vec<IntegEdge>> = HashMap::new();
    let mut todo: Vec<(DepotPath, u32)> = paths.iter().map(|&p| (p.clone(), 0)).collect();
    while let Some((path, depth)) = todo.pop() {
        if map.contains_key(path.as_str()) {
            continue;
        }
        let rows = snap.integrations_into(&path)?;
        if depth < 3 {
            todo.extend(rows.iter().map(|r| (r.from_path.clone(), depth + 1)));
        }
        map.insert(path.into_string(), rows.into_iter().map(edge).collect());
    }
    Ok(map)
}

/// The typed path of the merge base [`select_base`] chose, which names the source, the target
/// or a file of the integration history the store returned, so it is not validated again.
fn base_path(path: String, source: &DepotPath, target: &DepotPath) -> DepotPath {
    if path == source.as_str() {
        source.clone()
    } else if path == target.as_str() {
        target.clone()
    } else {
        DepotPath::from_stored(path)
    }
}

fn lazy_of(rev: &RevisionRow) -> Option<LazyContent> {
    rev.digest.map(|digest| LazyContent {
        digest,
        size: rev.size,
        md5: rev.md5.clone(),
        mod_time: rev.mod_time,
        // A revision's content always has an owning revision (ARCHITECTURE.md).
        owned: true,
    })
}

/// Whether no two of `rows` open the same file (two mapping lines may name one target).
fn distinct_paths(rows: &[OpenedRow]) -> bool {
    let mut seen = std::collections::HashSet::with_capacity(rows.len());
    rows.iter().all(|r| seen.insert(r.path.as_str()))
}

/// What each batch's write job re-checks, carried from one batch to the next.
struct BatchWrites {
    workspace: String,
    target_scopes: Arc<Vec<PathRange>>,
    /// `revisions_removed` when the plan's snapshot was taken.
    removed: u64,
    /// After a batch: the store's write count once its job is counted, and whether targets
    /// must be checked one by one. The next job, seeing that count unchanged, reuses the check.
    previous: Option<(u64, bool)>,
    /// Targets opened (or previewed) so far.
    opened: usize,
    /// MaxLockTime for each batch's write job.
    timer: crate::access::LockTimer,
}

impl Service {
    /// Opens the files an integration needs; calls `each` with one record per opened target,
    /// batch by batch as each batch is opened.
    pub fn integrate(
        &self,
        caller: &Caller,
        mode: IntegrateMode,
        req: IntegrateRequest,
        each: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<(), IntegrateError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let who = self.access_of(caller)?;
        let ws = self.caller_workspace(snap.as_ref(), caller)?;
        check_pending_change(snap.as_ref(), &ws, req.change)?;
        let (mapping, source_rev, label) = mapping_of(snap.as_ref(), &req)?;
        let filters = req
            .files
            .iter()
            .map(|f| FileArg::parse(f, snap.as_ref(), Some(&ws)))
            .collect::<Result<Vec<_>, _>>()?;
        let selection = selection_of(snap.as_ref(), &label, &source_rev)?;
        let target_scopes = target_scopes(&mapping);
        let untouched = targets_untouched(snap.as_ref(), &target_scopes)?;
        let mut writes = BatchWrites {
            workspace: ws.name().to_string(),
            target_scopes: Arc::new(target_scopes),
            removed: snap.revisions_removed()?,
            previous: None,
            opened: 0,
            timer: who.lock_timer(),
        };
        // With a MaxOpenFiles limit, nothing is opened before the whole plan is known to fit.
        let batch = match who.user.limits.max_open_files.bound() {
            Some(max) => self
                .config
                .integrate_batch
                .max(usize::try_from(max).unwrap_or(usize::MAX).saturating_add(1)),
            None => self.config.integrate_batch.max(1),
        };
        let mut plan: Vec<(OpenedRow, FileInfo)> = Vec::new();
        let (mut sources, mut already) = (0usize, 0usize);
        for scope in view_scopes(&mapping, |l| &l.left) {
            let mut heads = self.selected_cursor(snap.as_ref(), scope, &selection);
            while let Some(head) = heads.next_row()? {
                who.scan()?;
                let Some(target) = target_of(&who, &selection, &mapping, &filters, &head)? else {
                    continue;
                };
                let Some(source) = self.select_revision(
                    snap.as_ref(),
                    &label,
                    &source_rev,
                    head,
                    Some(ws.name()),
                )?
                else {
                    continue;
                };
                sources += 1;
                who.require(Right::Branch, source.path.as_str())?;
                who.require(Right::Open, target.as_str())?;
                if !source.action.is_delete() {
                    crate::reserved::check_reserved(target.as_str())?;
                }
                let known = if untouched {
                    TargetState::default()
                } else {
                    TargetState::read(snap.as_ref(), &ws, &target)?
                };
                match self.plan_target(
                    snap.as_ref(),
                    &ws,
                    caller,
                    mode,
                    &req,
                    &source,
                    &target,
                    known,
                )? {
                    Some(entry) => plan.push(entry),
                    None => already += 1,
                }
                if plan.len() >= batch {
                    who.check_open_files(writes.opened + plan.len())?;
                    self.open_batch(&mut writes, req.preview, std::mem::take(&mut plan), each)?;
                }
            }
        }
        if !plan.is_empty() {
            who.check_open_files(writes.opened + plan.len())?;
            self.open_batch(&mut writes, req.preview, plan, each)?;
        }
        if writes.opened == 0 {
            let what = if req.branch.is_empty() {
                req.from.clone()
            } else {
                format!("branch {}", req.branch)
            };
            return Err(if sources == 0 {
                IntegrateError::NoSuchFiles { from: what }
            } else {
                IntegrateError::AlreadyIntegrated {
                    from: what,
                    files: already,
                }
            });
        }
        Ok(())
    }

    /// Opens one batch of planned targets in one write job (unless previewing), then reports
    /// them.
    fn open_batch(
        &self,
        writes: &mut BatchWrites,
        preview: bool,
        plan: Vec<(OpenedRow, FileInfo)>,
        each: &mut dyn FnMut(FileInfo) -> Result<(), ServiceError>,
    ) -> Result<(), IntegrateError> {
        let (rows, infos): (Vec<OpenedRow>, Vec<FileInfo>) = plan.into_iter().unzip();
        if !preview {
            let ws_name = writes.workspace.clone();
            let target_scopes = writes.target_scopes.clone();
            let (removed, previous) = (writes.removed, writes.previous);
            let timer = writes.timer;
            let done = keel_store::write(self.meta.as_ref(), move |txn| {
                let timer = timer.start();
                let written = txn.jobs_written()?;
                // Still nothing opened under the targets (but this integrate's own earlier
                // batches): no per-file conflict checks needed.
                let check_each = match previous {
                    Some((count, check)) if count == written => check,
                    _ => {
                        let mut any = false;
                        for range in target_scopes.iter() {
                            any |= !txn.opened_in_range(range, None, 1)?.is_empty();
                        }
                        any
                    }
                };
                // No revision deleted since the plan: every source revision it read still
                // owns the content its lazy copies refer to.
                let sources_intact = txn.revisions_removed()? == removed;
                if !check_each && distinct_paths(&rows) {
                    // Nothing is open under the targets: every row is a new open record.
                    txn.open_new(&rows, sources_intact)?;
                    timer.check()?;
                    return Ok::<_, IntegrateError>((written + 1, check_each));
                }
                for row in &rows {
                    if check_each
                        && txn
                            .opened_file(&row.path)?
                            .iter()
                            .any(|o| o.workspace == ws_name)
                    {
                        return Err(IntegrateError::AlreadyOpened {
                            path: row.path.to_string(),
                            action: None,
                        });
                    }
                    if sources_intact && row.lazy.is_some() {
                        txn.put_opened_owned(row)?;
                    } else {
                        txn.put_opened(row)?;
                    }
                }
                timer.check()?;
                // This job is counted once it returns.
                Ok::<_, IntegrateError>((written + 1, check_each))
            })?;
            writes.previous = Some(done);
        }
        writes.opened += infos.len();
        Ok(infos.into_iter().try_for_each(each)?)
    }

    /// Plans one target: `None` when the source has nothing left to integrate into it.
    #[allow(clippy::too_many_arguments)]
    fn plan_target(
        &self,
        snap: &dyn ReadTxn,
        ws: &WorkspaceCtx,
        caller: &Caller,
        mode: IntegrateMode,
        req: &IntegrateRequest,
        source: &RevisionRow,
        target: &DepotPath,
        known: TargetState,
    ) -> Result<Option<(OpenedRow, FileInfo)>, IntegrateError> {
        let client_file = ws
            .client_file(target)
            .ok_or_else(|| IntegrateError::NotInView {
                path: target.to_string(),
                workspace: ws.name().to_string(),
            })?;
        let TargetState {
            into: into_target,
            head: target_head,
            opened_here,
        } = known;
        let Some((start, end)) = pending_range(source.path.as_str(), source.rev, &into_target)
        else {
            return Ok(None);
        };
        // Only a target that exists can have given the source revisions whole.
        if target_head.is_some() && all_taken_from(snap, source, target, start, end)? {
            return Ok(None);
        }
        if let Some(action) = opened_here {
            return Err(IntegrateError::AlreadyOpened {
                path: target.to_string(),
                action: Some(action),
            });
        }
        let live = target_head.as_ref().filter(|h| !h.action.is_delete());
        let have = match live {
            Some(_) => self.have.get(ws.name(), target)?,
            None => 0,
        };
        if live.is_some() && have == 0 {
            return Err(IntegrateError::NotOnClient {
                path: target.to_string(),
            });
        }
        let integ =
            |how: Option<IntegHow>, resolved: bool, base: Option<(DepotPath, u32)>| PendingInteg {
                from_path: source.path.clone(),
                from_start: start,
                from_end: end,
                base,
                resolved,
                how,
            };
        let (action, lazy, pending, file_type) = match (source.action.is_delete(), live) {
            (true, None) => return Ok(None),
            (true, Some(t)) => (
                FileAction::Delete,
                None,
                integ(Some(IntegHow::DeleteFrom), true, None),
                t.file_type,
            ),
            (false, None) => (
                FileAction::Branch,
                lazy_of(source),
                integ(Some(IntegHow::BranchFrom), true, None),
                source.file_type,
            ),
            (false, Some(t)) if mode == IntegrateMode::Copy => {
                if t.digest == source.digest {
                    return Ok(None);
                }
                (
                    FileAction::Integrate,
                    lazy_of(source),
                    integ(Some(IntegHow::CopyFrom), true, None),
                    t.file_type,
                )
            }
            (false, Some(t)) => {
                let history = history(snap, &[&source.path, target])?;
                let base = select_base(
                    source.path.as_str(),
                    source.rev,
                    target.as_str(),
                    have,
                    &history,
                )
                .map(|(path, rev)| (base_path(path, &source.path, target), rev));
                (
                    FileAction::Integrate,
                    None,
                    integ(None, false, base),
                    t.file_type,
                )
            }
        };
        let row = OpenedRow {
            workspace: ws.name().to_string(),
            path: target.clone(),
            user: caller.user.clone(),
            change: ChangeNumber(req.change),
            action,
            file_type,
            base_rev: if live.is_some() {
                have
            } else {
                target_head.as_ref().map(|h| h.rev).unwrap_or(0)
            },
            move_file: None,
            lazy,
            integ: Some(pending.clone()),
            locked: false,
        };
        let mut info = FileInfo {
            client_file: Some(client_file),
            action: Some(action),
            change: ChangeRef::from_number(req.change),
            file_type: Some(file_type),
            have_rev: have,
            ..FileInfo::new(target.clone())
        };
        set_head(&mut info, source);
        info.lazy_digest = row.lazy.as_ref().map(|l| l.digest);
        info.unresolved = !pending.resolved;
        info.source_file = Some(source.path.clone());
        info.source_start = start;
        info.source_end = end;
        if let Some((path, rev)) = &pending.base {
            info.base_file = Some(path.clone());
            info.base_rev = *rev;
        }
        info.outcome = Some(FileOutcome::Integrated);
        Ok(Some((row, info)))
    }
}

/// What already exists of one target file.
#[derive(Default)]
struct TargetState {
    /// Integration records into the target.
    into: Vec<IntegEdge>,
    /// The target's head revision.
    head: Option<RevisionRow>,
    /// How the caller's workspace already has the target open, if it does.
    opened_here: Option<FileAction>,
}

impl TargetState {
    fn read(
        snap: &dyn ReadTxn,
        ws: &WorkspaceCtx,
        target: &DepotPath,
    ) -> Result<Self, ServiceError> {
        Ok(TargetState {
            opened_here: snap
                .opened_file(target)?
                .into_iter()
                .find(|o| o.workspace == ws.name())
                .map(|o| o.action),
            into: snap
                .integrations_into(target)?
                .into_iter()
                .map(edge)
                .collect(),
            head: snap.head_revision(target)?,
        })
    }
}

/// The disjoint path ranges the mapping's target side can reach.
fn target_scopes(mapping: &View) -> Vec<PathRange> {
    view_scopes(mapping, |l| &l.right)
}

/// Whether nothing exists yet where the targets go: no revision and no open record. (Records
/// of integrations into a file exist only beside its revisions.) A new branch then needs no
/// per-target lookups, which is what makes branching a large tree cheap.
fn targets_untouched(snap: &dyn ReadTxn, scopes: &[PathRange]) -> Result<bool, ServiceError> {
    for range in scopes {
        if snap.next_path(range, "")?.is_some() || !snap.opened_in_range(range, None, 1)?.is_empty()
        {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Where `head` goes, when it is a file to act on: one the selection can hold, that `who` may
/// list, that `mapping` maps, and that the file arguments name (`filters`; none: all). A
/// mapping onto no valid path (a wildcard's empty segment) is refused.
pub(crate) fn target_of(
    who: &Access,
    selection: &Selection,
    mapping: &View,
    filters: &[FileArg],
    head: &RevisionRow,
) -> Result<Option<DepotPath>, IntegrateError> {
    if !selection.admits(head.path.as_str()) || !who.lists(head.path.as_str()) {
        return Ok(None);
    }
    let Some(target) = mapping.translate(head.path.as_str()) else {
        return Ok(None);
    };
    if !filters.is_empty() && !filters.iter().any(|f| f.matches(&target)) {
        return Ok(None);
    }
    DepotPath::parse_owned(target)
        .map(Some)
        .map_err(|e| IntegrateError::BadTarget {
            from: head.path.to_string(),
            target: e.path().to_string(),
            reason: e.to_string(),
        })
}

/// The source→target mapping, the source revision spec and the text naming it in messages.
pub(crate) fn mapping_of(
    snap: &dyn ReadTxn,
    req: &IntegrateRequest,
) -> Result<(View, Option<keel_core::RevSpec>, String), IntegrateError> {
    if !req.branch.is_empty() {
        let branch = snap
            .get_branch(&req.branch)?
            .ok_or_else(|| IntegrateError::NoSuchBranch {
                name: req.branch.clone(),
            })?;
        let bad_view = |e: keel_core::ViewError| IntegrateError::BadBranchView {
            name: req.branch.clone(),
            reason: e.to_string(),
        };
        let mut view = View::parse_lines(&branch.view).map_err(bad_view)?;
        if req.reverse {
            let lines = view
                .lines()
                .iter()
                .map(|l| ViewLine {
                    kind: l.kind,
                    left: l.right.clone(),
                    right: l.left.clone(),
                })
                .collect();
            view = View::new(lines).map_err(bad_view)?;
        }
        let rev = req
            .files
            .iter()
            .find_map(|f| FileSpec::parse(f).ok().and_then(|s| s.rev));
        return Ok((view, rev, format!("branch {}", req.branch)));
    }
    if req.from.is_empty() || req.to.is_empty() {
        return Err(IntegrateError::NoMapping);
    }
    let from = FileSpec::parse(&req.from).map_err(|e| bad_argument(&req.from, e))?;
    let to = FileSpec::parse(&req.to).map_err(|e| bad_argument(&req.to, e))?;
    if to.rev.is_some() {
        return Err(IntegrateError::TargetRevision {
            target: req.to.clone(),
        });
    }
    for (side, path) in [("source", &from.path), ("target", &to.path)] {
        let depot = path
            .trim_start_matches("//")
            .split('/')
            .next()
            .unwrap_or("");
        if !path.starts_with("//") || snap.get_depot(depot)?.is_none() {
            return Err(IntegrateError::NotDepotSyntax {
                path: path.clone(),
                side,
            });
        }
    }
    let line = ViewLine {
        kind: LineKind::Include,
        left: from.path.clone(),
        right: to.path.clone(),
    };
    let view = View::new(vec![line]).map_err(|e| IntegrateError::BadMapping {
        from: from.path.clone(),
        to: to.path.clone(),
        reason: e.to_string(),
    })?;
    Ok((view, from.rev, req.from.clone()))
}
