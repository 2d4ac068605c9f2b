//! `populate`: branch files straight into the depot as one submitted change, without a
//! workspace. Each target gets a `branch` revision that is a lazy copy of its source (no
//! content is copied) and a `branch from` integration record, as `integrate` then `submit`
//! would record them. A target that already exists (a live head revision) refuses the whole
//! populate, naming it.
//!
//! The plan is made on one snapshot; one write job re-checks it (every target still absent,
//! every source revision still there) and writes the change, its revisions and records, so a
//! refused populate leaves nothing behind.

use crate::args::{FileArg, view_scopes};
use crate::expand::selection_of;
use crate::integrate::{mapping_of, target_of};
use crate::{Caller, IntegrateError, IntegrateRequest, Service};
use keel_core::{ChangeNumber, DepotPath, FileAction, IntegHow, Right, pending_range};
use keel_store::{ChangeRow, ChangeStatus, IntegRow, RevisionRow};

/// What to populate: the mapping as `integrate` takes it, and the change's description.
#[derive(Clone, Debug, Default)]
pub struct PopulateRequest {
    /// `FROM TO`, or `-b BRANCH` (`-r` reversed) with target files to limit to.
    pub from: String,
    pub to: String,
    pub branch: String,
    pub reverse: bool,
    pub files: Vec<String>,
    /// `-d`: the change's description (empty: `Populate TARGET`).
    pub description: String,
    /// `-n`: report what would be branched, write nothing.
    pub preview: bool,
    /// `-f`: branch deleted sources as deleted targets (by default they are skipped).
    pub force: bool,
    /// `-m`: branch only the first this many files (in source path order); `None`: all.
    pub max: Option<usize>,
}

/// One target `populate` created (or would create).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PopulatedFile {
    pub target: DepotPath,
    pub target_rev: u32,
    pub source: DepotPath,
    pub source_rev: u32,
    /// `branch`, or `delete` for a deleted source with `-f`.
    pub action: FileAction,
}

/// The outcome: the change submitted (`None` with `-n`) and how many files it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Populated {
    pub change: Option<ChangeNumber>,
    pub files: usize,
}

impl Service {
    /// Branches the sources the mapping selects into their absent targets as one submitted
    /// change; `each` gets every target, in source path order, once the change is durable (or
    /// at once with `preview`).
    pub fn populate(
        &self,
        caller: &Caller,
        req: &PopulateRequest,
        each: &mut dyn FnMut(PopulatedFile) -> Result<(), crate::ServiceError>,
    ) -> Result<Populated, IntegrateError> {
        let (snap, who) = self.read_as(caller)?;
        let ws = self.optional_workspace(snap.as_ref(), caller)?;
        let ireq = IntegrateRequest {
            from: req.from.clone(),
            to: req.to.clone(),
            branch: req.branch.clone(),
            reverse: req.reverse,
            files: req.files.clone(),
            ..IntegrateRequest::default()
        };
        let (mapping, source_rev, label) = mapping_of(snap.as_ref(), &ireq)?;
        let filters = req
            .files
            .iter()
            .map(|f| FileArg::parse(f, snap.as_ref(), ws.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        let selection = selection_of(snap.as_ref(), &label, &source_rev)?;
        let have_of = ws.as_ref().map(|w| w.name().to_string());
        let mut plan: Vec<(RevisionRow, DepotPath, u32)> = Vec::new();
        'scan: for scope in view_scopes(&mapping, |l| &l.left) {
            let mut heads = self.selected_cursor(snap.as_ref(), scope, &selection);
            while let Some(head) = heads.next_row()? {
                if req.max.is_some_and(|max| plan.len() >= max) {
                    break 'scan;
                }
                who.scan()?;
                let Some(target) = target_of(&who, &selection, &mapping, &filters, &head)? else {
                    continue;
                };
                let Some(source) = self.select_revision(
                    snap.as_ref(),
                    &label,
                    &source_rev,
                    head,
                    have_of.as_deref(),
                )?
                else {
                    continue;
                };
                if source.action.is_delete() && !req.force {
                    continue;
                }
                who.require(Right::Branch, source.path.as_str())?;
                who.require(Right::Write, target.as_str())?;
                if !source.action.is_delete() {
                    crate::reserved::check_reserved(target.as_str())?;
                }
                let target_head = snap.head_revision(&target)?;
                if let Some(h) = target_head.as_ref().filter(|h| !h.action.is_delete()) {
                    return Err(IntegrateError::PopulateTargetExists {
                        path: target.to_string(),
                        rev: h.rev,
                    });
                }
                who.result()?;
                let next_rev = target_head.map_or(1, |h| h.rev + 1);
                plan.push((source, target, next_rev));
            }
        }
        if plan.is_empty() {
            let what = if req.branch.is_empty() {
                req.from.clone()
            } else {
                format!("branch {}", req.branch)
            };
            return Err(IntegrateError::NoSuchFiles { from: what });
        }
        let mut seen = std::collections::HashSet::with_capacity(plan.len());
        if let Some((_, dup, _)) = plan.iter().find(|(_, t, _)| !seen.insert(t.as_str())) {
            return Err(IntegrateError::BadMapping {
                from: req.from.clone(),
                to: req.to.clone(),
                reason: format!("two source files map onto {dup}"),
            });
        }
        drop(seen);
        let files = plan.len();
        let report = |plan: &[(RevisionRow, DepotPath, u32)],
                      each: &mut dyn FnMut(PopulatedFile) -> Result<(), crate::ServiceError>|
         -> Result<(), IntegrateError> {
            for (source, target, rev) in plan {
                each(PopulatedFile {
                    target: target.clone(),
                    target_rev: *rev,
                    source: source.path.clone(),
                    source_rev: source.rev,
                    action: if source.action.is_delete() {
                        FileAction::Delete
                    } else {
                        FileAction::Branch
                    },
                })?;
            }
            Ok(())
        };
        if req.preview {
            report(&plan, each)?;
            return Ok(Populated {
                change: None,
                files,
            });
        }
        let description = match req.description.trim() {
            "" => format!(
                "Populate {}.",
                if req.branch.is_empty() {
                    req.to.clone()
                } else {
                    format!("branch {}", req.branch)
                }
            ),
            text => format!("{text}\n"),
        };
        let user = caller.user.clone();
        let workspace = caller.workspace.clone();
        let removed = snap.revisions_removed()?;
        drop(snap);
        let now = self.now();
        let timer = who.lock_timer();
        let plan = std::sync::Arc::new(plan);
        let writing = plan.clone();
        let number = keel_store::write(self.meta.as_ref(), move |txn| {
            let timer = timer.start();
            let sources_intact = txn.revisions_removed()? == removed;
            let number = txn.allocate_change()?;
            txn.put_change(&ChangeRow {
                change: number,
                status: ChangeStatus::Submitted,
                user,
                workspace,
                description,
                time: now,
            })?;
            for (source, target, rev) in writing.iter() {
                let head = txn.head_revision(target)?;
                if let Some(h) = head.as_ref().filter(|h| !h.action.is_delete()) {
                    return Err(IntegrateError::PopulateTargetExists {
                        path: target.to_string(),
                        rev: h.rev,
                    });
                }
                if !sources_intact && txn.revision(&source.path, source.rev)?.is_none() {
                    return Err(IntegrateError::SourceGone {
                        path: source.path.to_string(),
                        rev: source.rev,
                    });
                }
                let rev = head.map_or(*rev, |h| h.rev + 1);
                let deleted = source.action.is_delete();
                let revision = RevisionRow {
                    path: target.clone(),
                    rev,
                    change: number,
                    action: if deleted {
                        FileAction::Delete
                    } else {
                        FileAction::Branch
                    },
                    file_type: source.file_type,
                    digest: source.digest,
                    size: source.size,
                    md5: source.md5.clone(),
                    time: now,
                    mod_time: source.mod_time,
                };
                if deleted {
                    txn.insert_revision(&revision)?;
                } else {
                    // A lazy copy: the source revision (checked above) owns the content.
                    txn.insert_revision_owned(&revision)?;
                }
                let (from_start, from_end) =
                    pending_range(source.path.as_str(), source.rev, &[]).unwrap_or((0, source.rev));
                txn.insert_integration(&IntegRow {
                    to_path: target.clone(),
                    to_rev: rev,
                    from_path: source.path.clone(),
                    from_start,
                    from_end,
                    how: if deleted {
                        IntegHow::DeleteFrom
                    } else {
                        IntegHow::BranchFrom
                    },
                    change: number,
                })?;
            }
            timer.check()?;
            Ok::<_, IntegrateError>(number)
        })?;
        let paths: Vec<DepotPath> = plan.iter().map(|(_, t, _)| t.clone()).collect();
        self.commits.committed(
            number,
            (paths.len() <= crate::commit_signal::MAX_PATHS).then_some(paths.as_slice()),
        );
        report(&plan, each)?;
        Ok(Populated {
            change: Some(number),
            files,
        })
    }
}
