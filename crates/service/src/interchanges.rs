//! `interchanges`: the submitted changes holding source revisions not yet integrated into
//! their targets, under the same mapping `integrate` uses (FROM TO, or a branch spec, `-r`
//! reversed). It shares `integrate`'s rule for what still needs integrating
//! ([`keel_core::pending_range`] over the records into each target), so a change it lists is
//! exactly one whose revisions an `integrate` of the same arguments would open. Both count a
//! source revision taken whole from the target (`branch from`, `copy from`, `delete from` it:
//! the change that created a branch, seen from the branch) as already there.
//!
//! [`Service::for_each_pending`] is the per-path form of the same question (which source
//! revisions each target still needs), the ground an `istat`-style stream query builds on.

use crate::args::{FileArg, view_scopes};
use crate::changes::change_info;
use crate::expand::selection_of;
use crate::integrate::{edge, mapping_of};
use crate::{Caller, ChangeInfo, IntegrateError, IntegrateRequest, Service, ServiceError};
use keel_core::{
    ChangeNumber, ChangeStatus, DepotPath, IntegEdge, pending_range, taken_whole_from,
};
use keel_store::{ReadTxn, RevisionRow};
use std::collections::BTreeMap;

/// One target that still needs source revisions `(start, end]` of `source`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingIntegration {
    pub source: DepotPath,
    pub target: DepotPath,
    pub start: u32,
    pub end: u32,
}

/// A change `interchanges` lists, with the source revisions of it not yet integrated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interchange {
    pub change: ChangeInfo,
    /// `(source file, revision)` in path order.
    pub files: Vec<(DepotPath, u32)>,
}

impl Service {
    /// Calls `f` for each source→target pair of the mapping (`req` as `integrate` takes it:
    /// FROM TO, or `branch` with `reverse` and target `files`) whose target lacks source
    /// revisions, in source path order. Files the caller may not list are skipped.
    pub fn for_each_pending(
        &self,
        caller: &Caller,
        req: &IntegrateRequest,
        f: &mut dyn FnMut(&dyn ReadTxn, PendingIntegration) -> Result<(), ServiceError>,
    ) -> Result<(), IntegrateError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let who = self.access_of(caller)?;
        let (mapping, source_rev, label) = mapping_of(snap.as_ref(), req)?;
        let filters = req
            .files
            .iter()
            .map(|f| FileArg::parse(f, snap.as_ref(), None))
            .collect::<Result<Vec<_>, _>>()?;
        let selection = selection_of(snap.as_ref(), &label, &source_rev)?;
        for scope in view_scopes(&mapping, |l| &l.left) {
            let mut heads = self.selected_cursor(snap.as_ref(), scope, &selection);
            while let Some(head) = heads.next_row()? {
                who.scan()?;
                if !selection.admits(head.path.as_str()) || !who.lists(head.path.as_str()) {
                    continue;
                }
                let Some(target) = mapping.translate(head.path.as_str()) else {
                    continue;
                };
                if !filters.is_empty() && !filters.iter().any(|f| f.matches(&target)) {
                    continue;
                }
                let Ok(target) = DepotPath::parse_owned(target) else {
                    continue;
                };
                if !who.lists(target.as_str()) {
                    continue;
                }
                let Some(source) =
                    self.select_revision(snap.as_ref(), &label, &source_rev, head, None)?
                else {
                    continue;
                };
                let into: Vec<IntegEdge> = snap
                    .integrations_into(&target)?
                    .into_iter()
                    .map(edge)
                    .collect();
                let Some((start, end)) = pending_range(source.path.as_str(), source.rev, &into)
                else {
                    continue;
                };
                // A deleted source with no live target has nothing to integrate (as
                // `integrate` opens nothing for it).
                if source.action.is_delete()
                    && snap
                        .head_revision(&target)?
                        .is_none_or(|h| h.action.is_delete())
                {
                    continue;
                }
                f(
                    snap.as_ref(),
                    PendingIntegration {
                        source: source.path,
                        target,
                        start,
                        end,
                    },
                )?;
            }
        }
        Ok(())
    }

    /// `interchanges`: the submitted changes whose source revisions are not yet integrated,
    /// oldest first, each with those revisions. Holds one entry per such change (not per
    /// file) until the mapping has been walked.
    pub fn interchanges(
        &self,
        caller: &Caller,
        req: &IntegrateRequest,
        with_files: bool,
        sink: &mut dyn FnMut(Interchange) -> Result<(), ServiceError>,
    ) -> Result<(), IntegrateError> {
        let who = self.access_of(caller)?;
        let mut changes: BTreeMap<ChangeNumber, Vec<(DepotPath, u32)>> = BTreeMap::new();
        let mut rows: BTreeMap<ChangeNumber, keel_store::ChangeRow> = BTreeMap::new();
        self.for_each_pending(caller, req, &mut |snap, p| {
            let revisions: Vec<RevisionRow> = snap.file_revisions(&p.source)?;
            let into_source: Vec<IntegEdge> = snap
                .integrations_into(&p.source)?
                .into_iter()
                .map(edge)
                .collect();
            for rev in revisions
                .into_iter()
                .filter(|r| r.rev > p.start && r.rev <= p.end)
            {
                who.scan()?;
                // A revision that is a branch or copy of the target (the change that created
                // a branch, seen from the branch) is already there.
                if taken_whole_from(&into_source, rev.rev, p.target.as_str()) {
                    continue;
                }
                let files = changes.entry(rev.change).or_default();
                if with_files {
                    files.push((rev.path.clone(), rev.rev));
                }
                if let std::collections::btree_map::Entry::Vacant(slot) = rows.entry(rev.change)
                    && let Some(row) = snap.get_change(rev.change)?
                {
                    slot.insert(row);
                }
            }
            Ok(())
        })?;
        for (change, mut files) in changes {
            let Some(row) = rows.remove(&change) else {
                continue;
            };
            if row.status != ChangeStatus::Submitted {
                continue;
            }
            who.result()?;
            files.sort();
            sink(Interchange {
                change: change_info(row),
                files,
            })?;
        }
        Ok(())
    }
}
