//! `istat`: what needs merging between a source and a target, both ways, under a branch spec
//! (`-r` reversed) or FROM TO paths. Each direction is an [`Service::interchanges`] count, so
//! `istat` says exactly what `interchanges` would list each way (the newest such change too):
//! the ground a stream's "integrate to/from parent" status stands on, with the source in the
//! parent's place.

use crate::integrate::mapping_of;
use crate::{Caller, IntegrateError, IntegrateRequest, Service};
use keel_core::{ChangeNumber, LineKind};

/// What `istat` is asked about: the mapping as `interchanges` takes it, without target files.
#[derive(Clone, Debug, Default)]
pub struct IstatRequest {
    /// `FROM TO` depot paths (no revisions); empty when `branch` is used.
    pub from: String,
    pub to: String,
    /// Branch spec name; `reverse` takes its right side as the source.
    pub branch: String,
    pub reverse: bool,
}

/// The submitted changes of one side that the other side still lacks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PendingFlow {
    /// How many changes `interchanges` lists that way.
    pub changes: u64,
    /// The newest of them.
    pub newest: Option<ChangeNumber>,
}

impl PendingFlow {
    pub fn needed(&self) -> bool {
        self.changes > 0
    }
}

/// Both directions between a source and a target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntegStatus {
    /// The first mapped source and target patterns (the branch view's first line).
    pub source: String,
    pub target: String,
    /// Source changes the target has not taken (a merge from the source is due).
    pub from_source: PendingFlow,
    /// Target changes the source has not taken (a copy up to the source is due).
    pub to_source: PendingFlow,
}

impl Service {
    /// Counts, each way, the submitted changes not yet integrated between the two sides.
    pub fn istat(
        &self,
        caller: &Caller,
        req: &IstatRequest,
    ) -> Result<IntegStatus, IntegrateError> {
        let forward = IntegrateRequest {
            from: req.from.clone(),
            to: req.to.clone(),
            branch: req.branch.clone(),
            reverse: req.reverse,
            preview: true,
            ..IntegrateRequest::default()
        };
        let (source, target) = {
            let snap = self.meta.snapshot()?;
            let (view, rev, _) = mapping_of(snap.as_ref(), &forward)?;
            if rev.is_some() {
                // The way back would put that revision on the target.
                return Err(IntegrateError::TargetRevision {
                    target: req.from.clone(),
                });
            }
            let first = view.lines().iter().find(|l| l.kind != LineKind::Exclude);
            first.map_or_else(Default::default, |l| (l.left.clone(), l.right.clone()))
        };
        let backward = if req.branch.is_empty() {
            IntegrateRequest {
                from: req.to.clone(),
                to: req.from.clone(),
                ..forward.clone()
            }
        } else {
            IntegrateRequest {
                reverse: !req.reverse,
                ..forward.clone()
            }
        };
        Ok(IntegStatus {
            source,
            target,
            from_source: self.pending_flow(caller, &forward)?,
            to_source: self.pending_flow(caller, &backward)?,
        })
    }

    fn pending_flow(
        &self,
        caller: &Caller,
        req: &IntegrateRequest,
    ) -> Result<PendingFlow, IntegrateError> {
        let mut flow = PendingFlow::default();
        self.interchanges(caller, req, false, &mut |i| {
            flow.changes += 1;
            flow.newest = flow.newest.max(Some(i.change.change));
            Ok(())
        })?;
        Ok(flow)
    }
}
