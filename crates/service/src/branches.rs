//! Branch specs: named depot-to-depot views (`//depot/main/... //depot/rel/...`) saved with
//! validation, shown, listed and deleted. A `locked` spec can be changed only by its owner.

use crate::context::workspace_name;
use crate::labels::{depot_of, lock_option};
use crate::paging::Cursor;
use crate::{BranchSpec, Caller, Service, ServiceError, SpecError, SpecKind};
use keel_core::{LineKind, SpecLock, View, ViewLine};
use keel_store::{BranchRow, ReadTxn};

fn spec(row: BranchRow) -> BranchSpec {
    BranchSpec {
        name: row.name,
        owner: row.owner,
        description: row.description,
        options: row.options.to_string(),
        view: row.view,
        updated: row.updated,
    }
}

/// Parses one branch view line: a plain or `-` line whose sides are both depot paths.
/// Returns the reason (naming the line) when it is refused.
pub(crate) fn branch_view_line(text: &str) -> Result<ViewLine, String> {
    let line = ViewLine::parse(text).map_err(|e| e.to_string())?;
    if line.kind == LineKind::Overlay {
        return Err(format!(
            "view line '{}': overlay (+) lines are not allowed in branch views",
            text.trim()
        ));
    }
    Ok(line)
}

/// Checks a spec and returns it normalised.
fn validate(
    snap: &dyn ReadTxn,
    caller: &Caller,
    mut branch: BranchSpec,
) -> Result<BranchSpec, SpecError> {
    branch.name = workspace_name(&branch.name)?;
    let name = branch.name.clone();
    let bad = |reason: String| SpecError::Invalid {
        kind: SpecKind::Branch,
        name: name.clone(),
        reason,
    };
    if branch.owner.is_empty() {
        branch.owner = caller.user.clone();
    }
    branch.options = lock_option(&branch.options).map_err(bad)?.to_string();
    let lines = branch
        .view
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| branch_view_line(l))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    if lines.is_empty() {
        return Err(bad(
            "View is required, e.g. \"//depot/main/... //depot/rel/...\"".into(),
        ));
    }
    for line in &lines {
        for side in [&line.left, &line.right] {
            let depot = depot_of(side);
            if snap.get_depot(depot)?.is_none() {
                return Err(bad(format!(
                    "view line '{line}': depot '{depot}' does not exist"
                )));
            }
        }
    }
    let view = View::new(lines).map_err(|e| bad(e.to_string()))?;
    branch.view = view.lines().iter().map(|l| l.to_string()).collect();
    Ok(branch)
}

/// Refuses a change to a locked spec by anyone but its owner.
fn check_owner(row: &BranchRow, user: &str) -> Result<(), SpecError> {
    if row.options == SpecLock::Locked && row.owner != user {
        return Err(SpecError::Locked {
            kind: SpecKind::Branch,
            name: row.name.clone(),
            owner: row.owner.clone(),
        });
    }
    Ok(())
}

impl Service {
    /// Creates or replaces a branch spec.
    pub fn save_branch(
        &self,
        caller: &Caller,
        branch: BranchSpec,
        create_only: bool,
    ) -> Result<BranchSpec, SpecError> {
        self.check_branch_form(&branch)?;
        self.touch_user(caller)?;
        let branch = validate(self.meta.snapshot()?.as_ref(), caller, branch)?;
        self.form_save(caller, &branch)?;
        let options = lock_option(&branch.options).map_err(|reason| SpecError::Invalid {
            kind: SpecKind::Branch,
            name: branch.name.clone(),
            reason,
        })?;
        let now = self.now();
        let user = caller.user.clone();
        let saved = keel_store::write(self.meta.as_ref(), move |txn| {
            let existing = txn.get_branch(&branch.name)?;
            if let Some(old) = &existing {
                if create_only {
                    return Err(SpecError::AlreadyExists {
                        kind: SpecKind::Branch,
                        name: branch.name,
                    });
                }
                check_owner(old, &user)?;
            }
            let row = BranchRow {
                name: branch.name,
                owner: branch.owner,
                description: branch.description,
                options,
                view: branch.view,
                created: existing.as_ref().map(|e| e.created).unwrap_or(now),
                updated: now,
            };
            txn.put_branch(&row)?;
            Ok(row)
        })?;
        Ok(spec(saved))
    }

    pub fn get_branch(&self, caller: &Caller, name: &str) -> Result<BranchSpec, SpecError> {
        self.touch_user(caller)?;
        let name = workspace_name(name)?;
        let snap = self.meta.snapshot()?;
        let row = snap.get_branch(&name)?.ok_or_else(|| SpecError::NoSuch {
            kind: SpecKind::Branch,
            name: name.clone(),
        })?;
        Ok(spec(row))
    }

    /// Every branch spec, in name order.
    pub fn list_branches(
        &self,
        caller: &Caller,
        sink: &mut dyn FnMut(BranchSpec) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let page = self.config.page_size;
        let mut cursor = Cursor::new(
            Box::new(|after| Ok(snap.list_branches(after, page)?)),
            |b: &BranchRow| b.name.as_str(),
            page,
        );
        while let Some(row) = cursor.next_row()? {
            sink(spec(row))?;
        }
        Ok(())
    }

    pub fn delete_branch(&self, caller: &Caller, name: &str) -> Result<(), SpecError> {
        self.touch_user(caller)?;
        let name = workspace_name(name)?;
        let user = caller.user.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            let row = txn.get_branch(&name)?.ok_or_else(|| SpecError::NoSuch {
                kind: SpecKind::Branch,
                name: name.clone(),
            })?;
            check_owner(&row, &user)?;
            txn.delete_branch(&name)?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_view_lines() {
        assert!(branch_view_line("//depot/main/... //depot/rel/...").is_ok());
        assert!(branch_view_line("-//depot/main/x/... //depot/rel/x/...").is_ok());
        let err = branch_view_line("+//depot/main/... //depot/rel/...").expect_err("overlay");
        assert!(
            err.contains("overlay") && err.contains("//depot/main/..."),
            "{err}"
        );
        let err = branch_view_line("//depot/main/... //depot/rel/*").expect_err("wildcards");
        assert!(
            err.contains("wildcards differ") && err.contains("//depot/rel/*"),
            "{err}"
        );
    }

    #[test]
    fn locked_specs_belong_to_their_owner() {
        let row = BranchRow {
            name: "rel".into(),
            owner: "alice".into(),
            description: String::new(),
            options: SpecLock::Locked,
            view: vec![],
            created: 0,
            updated: 0,
        };
        assert!(check_owner(&row, "alice").is_ok());
        assert!(check_owner(&row, "bob").is_err());
    }
}
