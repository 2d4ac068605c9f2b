//! Per-request context: validated names and the caller's workspace with its compiled view.
//!
//! [`Service::caller_workspace`] and [`Service::optional_workspace`] are the one way a command
//! gets the caller's workspace, and they refuse a workspace the caller does not own: only its
//! Owner uses it, or a super user who asked to override (`Caller::force`), and nobody else
//! when it is `locked`.

use crate::{Caller, Service, ServiceError, error::bad_argument};
use keel_core::{ChangeNumber, DepotPath, UserName, View, WorkspaceName};
use keel_store::{ChangeRow, ReadTxn, WorkspaceRow};

/// A workspace with its view compiled and options parsed.
pub(crate) struct WorkspaceCtx {
    pub row: WorkspaceRow,
    pub view: View,
    /// `//NAME/`, the prefix of the view's right-hand side.
    prefix: String,
    /// The user acting through the workspace: the caller for the caller's workspace, else
    /// the Owner.
    pub acting_user: String,
    /// A super user overriding ownership (of the workspace or of its pending changes).
    pub forced: bool,
}

impl WorkspaceCtx {
    pub(crate) fn new(row: WorkspaceRow) -> Result<WorkspaceCtx, ServiceError> {
        let view = View::parse_lines(&row.view).map_err(|e| ServiceError::BadWorkspace {
            name: row.name.clone(),
            reason: e.to_string(),
        })?;
        let prefix = format!("//{}/", row.name);
        Ok(WorkspaceCtx {
            acting_user: row.owner.clone(),
            forced: false,
            row,
            view,
            prefix,
        })
    }

    /// Refuses a pending change row of another user, unless a super user overrides.
    pub(crate) fn check_change_owner(&self, row: &ChangeRow) -> Result<(), ServiceError> {
        if row.user == self.acting_user || self.forced {
            return Ok(());
        }
        Err(ServiceError::ChangeOfOtherUser {
            change: row.change,
            owner: row.user.clone(),
        })
    }

    pub(crate) fn name(&self) -> &str {
        &self.row.name
    }

    /// The workspace-relative path a depot file maps to, if the view maps it.
    pub(crate) fn client_file(&self, depot: &DepotPath) -> Option<String> {
        let right = self.view.translate(depot.as_str())?;
        right.strip_prefix(&self.prefix).map(str::to_string)
    }

    /// The depot file a workspace-syntax path (`//NAME/rel`) maps to.
    pub(crate) fn depot_file(&self, client_syntax: &str) -> Option<String> {
        self.view.translate_back(client_syntax)
    }
}

pub(crate) fn user_name(user: &str) -> Result<String, ServiceError> {
    UserName::parse(user)
        .map(|u| u.as_str().to_string())
        .map_err(|e| bad_argument(user, e))
}

pub(crate) fn workspace_name(name: &str) -> Result<String, ServiceError> {
    WorkspaceName::parse(name)
        .map(|w| w.as_str().to_string())
        .map_err(|e| bad_argument(name, e))
}

/// Loads a named workspace.
/// The change `change`, or `NoSuchChange`.
pub(crate) fn load_change(
    snap: &dyn ReadTxn,
    change: ChangeNumber,
) -> Result<ChangeRow, ServiceError> {
    snap.get_change(change)?
        .ok_or(ServiceError::NoSuchChange { change })
}

pub(crate) fn load_workspace(snap: &dyn ReadTxn, name: &str) -> Result<WorkspaceCtx, ServiceError> {
    let name = workspace_name(name)?;
    let row = snap
        .get_workspace(&name)?
        .ok_or_else(|| ServiceError::NoSuchWorkspace { name: name.clone() })?;
    WorkspaceCtx::new(row)
}

impl Service {
    /// The caller's workspace, which the command needs; refused unless the caller may use it
    /// (see [`Service::may_use`]).
    pub(crate) fn caller_workspace(
        &self,
        snap: &dyn ReadTxn,
        caller: &Caller,
    ) -> Result<WorkspaceCtx, ServiceError> {
        if caller.workspace.is_empty() {
            return Err(ServiceError::NoWorkspace);
        }
        let ws = load_workspace(snap, &caller.workspace)?;
        self.may_use(ws, caller)
    }

    /// The caller's workspace when one is set and exists; refused, like
    /// [`Service::caller_workspace`], when it exists and the caller may not use it.
    pub(crate) fn optional_workspace(
        &self,
        snap: &dyn ReadTxn,
        caller: &Caller,
    ) -> Result<Option<WorkspaceCtx>, ServiceError> {
        if caller.workspace.is_empty() {
            return Ok(None);
        }
        match snap.get_workspace(&caller.workspace)? {
            Some(row) => Ok(Some(self.may_use(WorkspaceCtx::new(row)?, caller)?)),
            None => Ok(None),
        }
    }

    /// `ws` as the caller's workspace: its Owner uses it; anyone else only as a super user
    /// asking to override (`Caller::force`), and never when the workspace is `locked`.
    fn may_use(&self, mut ws: WorkspaceCtx, caller: &Caller) -> Result<WorkspaceCtx, ServiceError> {
        ws.acting_user = caller.user.clone();
        if ws.row.owner == caller.user {
            ws.forced = caller.force && self.is_super(caller)?;
            return Ok(ws);
        }
        if ws.row.options.locked {
            return Err(ServiceError::WorkspaceLocked {
                name: ws.row.name.clone(),
                owner: ws.row.owner.clone(),
            });
        }
        if caller.force && self.is_super(caller)? {
            ws.forced = true;
            return Ok(ws);
        }
        Err(ServiceError::WorkspaceNotOwned {
            name: ws.row.name.clone(),
            owner: ws.row.owner.clone(),
            user: caller.user.clone(),
        })
    }
}
