//! Per-request context: validated names and the caller's workspace with its compiled view.

use crate::{Caller, ServiceError, error::bad_argument};
use keel_core::{ChangeNumber, DepotPath, UserName, View, WorkspaceName};
use keel_store::{ChangeRow, ReadTxn, WorkspaceRow};

/// A workspace with its view compiled and options parsed.
pub(crate) struct WorkspaceCtx {
    pub row: WorkspaceRow,
    pub view: View,
    /// `//NAME/`, the prefix of the view's right-hand side.
    prefix: String,
}

impl WorkspaceCtx {
    pub(crate) fn new(row: WorkspaceRow) -> Result<WorkspaceCtx, ServiceError> {
        let view = View::parse_lines(&row.view).map_err(|e| ServiceError::BadWorkspace {
            name: row.name.clone(),
            reason: e.to_string(),
        })?;
        let prefix = format!("//{}/", row.name);
        Ok(WorkspaceCtx { row, view, prefix })
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

/// The caller's workspace, which the command needs.
pub(crate) fn caller_workspace(
    snap: &dyn ReadTxn,
    caller: &Caller,
) -> Result<WorkspaceCtx, ServiceError> {
    if caller.workspace.is_empty() {
        return Err(ServiceError::NoWorkspace);
    }
    load_workspace(snap, &caller.workspace)
}

/// The caller's workspace when one is set and exists.
pub(crate) fn optional_workspace(
    snap: &dyn ReadTxn,
    caller: &Caller,
) -> Result<Option<WorkspaceCtx>, ServiceError> {
    if caller.workspace.is_empty() {
        return Ok(None);
    }
    match snap.get_workspace(&caller.workspace)? {
        Some(row) => Ok(Some(WorkspaceCtx::new(row)?)),
        None => Ok(None),
    }
}
