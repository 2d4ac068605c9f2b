//! Workspaces (client specs): save with validation, show, list, delete.
//!
//! A workspace belongs to its Owner: only the Owner edits or deletes the spec, and the Owner
//! of a new or edited spec is the caller; a super user asking to override (`Caller::force`)
//! may do either for another user, `locked` workspaces included.

use crate::context::workspace_name;
use crate::paging::Cursor;
use crate::{Caller, Service, ServiceError, SpecError, SpecKind, WorkspaceSpec};
use keel_core::{View, WorkspaceOptions};
use keel_store::{ReadTxn, WorkspaceRow};

fn spec(row: WorkspaceRow) -> WorkspaceSpec {
    WorkspaceSpec {
        name: row.name,
        owner: row.owner,
        host: row.host,
        root: row.root,
        description: row.description,
        options: row.options.to_string(),
        view: row.view,
        updated: row.updated,
        accessed: row.accessed,
    }
}

/// Checks a spec and returns it normalised.
fn validate(
    snap: &dyn ReadTxn,
    caller: &Caller,
    mut ws: WorkspaceSpec,
) -> Result<WorkspaceSpec, SpecError> {
    ws.name = workspace_name(&ws.name)?;
    let bad = |reason: String| SpecError::Invalid {
        kind: SpecKind::Workspace,
        name: ws.name.clone(),
        reason,
    };
    if ws.root.trim().is_empty() {
        return Err(bad("Root is required".into()));
    }
    if !std::path::Path::new(&ws.root).is_absolute() {
        return Err(bad(format!("Root '{}' must be an absolute path", ws.root)));
    }
    if ws.owner.is_empty() {
        ws.owner = caller.user.clone();
    }
    let options = WorkspaceOptions::parse(&ws.options).map_err(|e| bad(e.to_string()))?;
    ws.options = options.to_string();
    let view = View::parse_lines(&ws.view).map_err(|e| bad(e.to_string()))?;
    let prefix = format!("//{}/", ws.name);
    for line in view.lines() {
        if !line.right.starts_with(&prefix) {
            return Err(bad(format!(
                "view line '{line}': the right side must start with {prefix}"
            )));
        }
        let depot = line
            .left
            .trim_start_matches("//")
            .split('/')
            .next()
            .unwrap_or("");
        if snap.get_depot(depot)?.is_none() {
            return Err(bad(format!(
                "view line '{line}': depot '{depot}' does not exist"
            )));
        }
    }
    ws.view = view.lines().iter().map(|l| l.to_string()).collect();
    Ok(ws)
}

/// Refuses a change to another user's workspace spec unless a super user overrides; a
/// `locked` one says so.
fn check_owner(row: &WorkspaceRow, user: &str, overriding: bool) -> Result<(), SpecError> {
    if row.owner == user || overriding {
        return Ok(());
    }
    if row.options.locked {
        return Err(SpecError::Locked {
            kind: SpecKind::Workspace,
            name: row.name.clone(),
            owner: row.owner.clone(),
        });
    }
    Err(SpecError::NotOwner {
        kind: SpecKind::Workspace,
        name: row.name.clone(),
        owner: row.owner.clone(),
    })
}

impl Service {
    /// Creates or replaces a workspace spec.
    pub fn save_workspace(
        &self,
        caller: &Caller,
        ws: WorkspaceSpec,
        create_only: bool,
    ) -> Result<WorkspaceSpec, SpecError> {
        self.check_workspace_form(&ws)?;
        self.touch_user(caller)?;
        let ws = validate(self.meta.snapshot()?.as_ref(), caller, ws)?;
        self.form_save(caller, &ws)?;
        // `validate` wrote the options in their normal form.
        let options = WorkspaceOptions::parse(&ws.options).map_err(|e| SpecError::Invalid {
            kind: SpecKind::Workspace,
            name: ws.name.clone(),
            reason: e.to_string(),
        })?;
        let now = self.now();
        let overriding = caller.force && self.is_super(caller)?;
        let user = caller.user.clone();
        let saved = keel_store::write(self.meta.as_ref(), move |txn| {
            let existing = txn.get_workspace(&ws.name)?;
            if existing.is_some() && create_only {
                return Err(SpecError::AlreadyExists {
                    kind: SpecKind::Workspace,
                    name: ws.name,
                });
            }
            if let Some(old) = &existing {
                check_owner(old, &user, overriding)?;
            }
            if ws.owner != user && !overriding {
                return Err(SpecError::OwnerNotCaller {
                    kind: SpecKind::Workspace,
                    name: ws.name,
                    owner: ws.owner,
                    user,
                });
            }
            if txn.get_depot(&ws.name)?.is_some() {
                return Err(SpecError::NameIsDepot { name: ws.name });
            }
            let row = WorkspaceRow {
                name: ws.name,
                owner: ws.owner,
                host: ws.host,
                root: ws.root,
                description: ws.description,
                options,
                view: ws.view,
                created: existing.as_ref().map(|e| e.created).unwrap_or(now),
                updated: now,
                accessed: now,
            };
            txn.put_workspace(&row)?;
            Ok(row)
        })?;
        Ok(spec(saved))
    }

    pub fn get_workspace(
        &self,
        caller: &Caller,
        name: &str,
    ) -> Result<WorkspaceSpec, ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        Ok(spec(
            crate::context::load_workspace(snap.as_ref(), name)?.row,
        ))
    }

    /// The options of workspace `name` (`None` when there is no such workspace), read without
    /// counting as a use of the server (no user is created or touched): what a front end asks
    /// before a command runs, such as whether its P4 connection is to be compressed.
    pub fn workspace_options(
        &self,
        name: &str,
    ) -> Result<Option<keel_core::WorkspaceOptions>, ServiceError> {
        let Ok(name) = crate::context::workspace_name(name) else {
            return Ok(None);
        };
        let snap = self.meta.snapshot()?;
        Ok(snap.get_workspace(&name)?.map(|row| row.options))
    }

    pub fn list_workspaces(
        &self,
        caller: &Caller,
        sink: &mut dyn FnMut(WorkspaceSpec) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let page = self.config.page_size;
        let mut cursor = Cursor::new(
            Box::new(|after| Ok(snap.list_workspaces(after, page)?)),
            |w: &WorkspaceRow| w.name.as_str(),
            page,
        );
        while let Some(row) = cursor.next_row()? {
            sink(spec(row))?;
        }
        Ok(())
    }

    /// Deletes a workspace with no opened files, and its have list: its owner, or a super
    /// user overriding.
    pub fn delete_workspace(&self, caller: &Caller, name: &str) -> Result<(), SpecError> {
        self.touch_user(caller)?;
        let name = workspace_name(name)?;
        let target = name.clone();
        let overriding = caller.force && self.is_super(caller)?;
        let user = caller.user.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            let row = txn
                .get_workspace(&target)?
                .ok_or_else(|| SpecError::NoSuch {
                    kind: SpecKind::Workspace,
                    name: target.clone(),
                })?;
            check_owner(&row, &user, overriding)?;
            if let Some(open) = txn.opened_in_workspace(&target, None, 1)?.first() {
                return Err(SpecError::FilesOpened {
                    name: target.clone(),
                    path: open.path.to_string(),
                });
            }
            txn.delete_workspace(&target)?;
            Ok(())
        })?;
        self.have.drop_workspace(&name)?;
        Ok(())
    }
}
