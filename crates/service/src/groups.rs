//! Groups: showing, saving, deleting and listing group specs, and the Timeout of a user's
//! groups (what login tickets last).

use crate::access::Access;
use crate::{AccessError, Caller, Service, ServiceError, context};
use keel_core::{GroupLimits, Limit, Right, UserName};
use keel_store::GroupRow;

/// A group spec as the commands show and take it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupSpec {
    pub name: String,
    pub users: Vec<String>,
    pub subgroups: Vec<String>,
    pub owners: Vec<String>,
    pub limits: GroupLimits,
    /// When it was last saved (seconds since the epoch; 0 for a group not saved yet).
    pub updated: i64,
}

fn spec(row: GroupRow) -> GroupSpec {
    GroupSpec {
        name: row.name,
        users: row.users,
        subgroups: row.subgroups,
        owners: row.owners,
        limits: row.limits,
        updated: row.updated,
    }
}

fn bad(name: &str, reason: String) -> AccessError {
    AccessError::BadGroup {
        name: name.to_string(),
        reason,
    }
}

/// Sorted, deduplicated names, each checked as a user/group name (`field` names the form field).
fn names(group: &str, field: &str, list: &[String]) -> Result<Vec<String>, AccessError> {
    let mut out = Vec::with_capacity(list.len());
    for name in list {
        let checked =
            UserName::parse(name.trim()).map_err(|e| bad(group, format!("{field}: {e}")))?;
        out.push(checked.as_str().to_string());
    }
    out.sort();
    out.dedup();
    Ok(out)
}

impl Service {
    /// The caller's group limits and protections for one request.
    pub(crate) fn access_of(&self, caller: &Caller) -> Result<Access, ServiceError> {
        Ok(Access::for_user(
            self.access.user(self.meta.as_ref(), caller)?,
        ))
    }

    /// What the caller may do (protections and group limits), as of now.
    pub fn user_access(
        &self,
        caller: &Caller,
    ) -> Result<std::sync::Arc<crate::UserAccess>, ServiceError> {
        self.access.user(self.meta.as_ref(), caller)
    }

    /// How long a login of `user` lasts: the most permissive Timeout of the user's groups
    /// (`Unset` when no group sets one, so the default applies; `Unlimited`: never expires).
    pub fn user_timeout(&self, user: &str) -> Result<Limit, ServiceError> {
        let caller = Caller {
            user: user.to_string(),
            ..Caller::default()
        };
        Ok(self.user_access(&caller)?.limits.timeout)
    }

    /// `group -o NAME`: the group, or a fresh spec owned by nobody when it does not exist.
    pub fn get_group(&self, caller: &Caller, name: &str) -> Result<GroupSpec, AccessError> {
        self.touch_user(caller)?;
        let name = context::user_name(name)?;
        let snap = self.meta.snapshot()?;
        self.access_of(caller)?
            .require_anywhere("group", Right::List)?;
        snap.get_group(&name)?
            .map(spec)
            .ok_or(AccessError::NoSuchGroup { name })
    }

    /// `group -i`: creates or replaces a group. Needs super access, or being an owner of the
    /// group as it stands.
    pub fn save_group(&self, caller: &Caller, group: GroupSpec) -> Result<GroupSpec, AccessError> {
        self.check_group_form(&group)?;
        self.touch_user(caller)?;
        let name = context::user_name(&group.name)?;
        let row = GroupRow {
            users: names(&name, "Users", &group.users)?,
            subgroups: names(&name, "Subgroups", &group.subgroups)?,
            owners: names(&name, "Owners", &group.owners)?,
            limits: group.limits,
            updated: self.now(),
            name: name.clone(),
        };
        if row.subgroups.contains(&name) {
            return Err(bad(
                &name,
                "Subgroups: a group cannot be its own subgroup".into(),
            ));
        }
        let snap = self.meta.snapshot()?;
        let access = self.access_of(caller)?;
        drop(snap);
        let user = caller.user.clone();
        let saved = row.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            let existing = txn.get_group(&row.name)?;
            may_edit(&access, existing.as_ref(), &user)?;
            if let Some(existing) = &existing {
                may_change_limits(&access, existing, &row.limits)?;
            }
            for sub in &row.subgroups {
                if txn.get_group(sub)?.is_none() {
                    return Err(bad(
                        &row.name,
                        format!("Subgroups: group '{sub}' does not exist"),
                    ));
                }
            }
            txn.put_group(&row)?;
            Ok(())
        })?;
        tracing::info!(group = %saved.name, user = %caller.user, "group saved");
        Ok(spec(saved))
    }

    /// `group -d`: deletes a group (super, or an owner of it).
    pub fn delete_group(&self, caller: &Caller, name: &str) -> Result<(), AccessError> {
        self.touch_user(caller)?;
        let name = context::user_name(name)?;
        let snap = self.meta.snapshot()?;
        let access = self.access_of(caller)?;
        drop(snap);
        let user = caller.user.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            let existing = txn
                .get_group(&name)?
                .ok_or_else(|| AccessError::NoSuchGroup { name: name.clone() })?;
            may_edit(&access, Some(&existing), &user)?;
            txn.delete_group(&name)?;
            Ok(())
        })
    }

    /// `groups [USER]`: every group, or the groups `user` belongs to (subgroups followed),
    /// in name order.
    pub fn list_groups(
        &self,
        caller: &Caller,
        user: Option<&str>,
        sink: &mut dyn FnMut(GroupSpec) -> Result<(), ServiceError>,
    ) -> Result<(), ServiceError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        let access = self.access_of(caller)?;
        access.require_anywhere("groups", Right::List)?;
        let member_of = match user {
            Some(u) => {
                let probe = Caller {
                    user: context::user_name(u)?,
                    ..Caller::default()
                };
                Some(self.access.user(self.meta.as_ref(), &probe)?.groups.clone())
            }
            None => None,
        };
        let page = self.config.page_size.max(1);
        let mut after: Option<String> = None;
        loop {
            let rows = snap.list_groups(after.as_deref(), page)?;
            let full = rows.len() == page;
            after = rows.last().map(|g| g.name.clone());
            for row in rows {
                access.scan()?;
                if member_of
                    .as_ref()
                    .is_some_and(|m| m.binary_search(&row.name).is_err())
                {
                    continue;
                }
                access.result()?;
                sink(spec(row))?;
            }
            if !full {
                return Ok(());
            }
        }
    }
}

/// Super users edit any group; an owner edits their own.
fn may_edit(access: &Access, existing: Option<&GroupRow>, user: &str) -> Result<(), AccessError> {
    if access.user.allows_anywhere(Right::Super)
        || existing.is_some_and(|g| g.owners.iter().any(|o| o == user))
    {
        return Ok(());
    }
    Err(ServiceError::CommandDenied {
        command: "group",
        needed: Right::Super,
    }
    .into())
}

/// The limits widen or narrow what members may do, so only a super user changes them; an
/// owner who is not one keeps them as they are (the error names the first field changed).
fn may_change_limits(
    access: &Access,
    existing: &GroupRow,
    new: &GroupLimits,
) -> Result<(), AccessError> {
    if access.user.allows_anywhere(Right::Super) {
        return Ok(());
    }
    let old = &existing.limits;
    let fields = [
        ("MaxResults", old.max_results == new.max_results),
        ("MaxScanRows", old.max_scan_rows == new.max_scan_rows),
        ("MaxLockTime", old.max_lock_time == new.max_lock_time),
        ("MaxOpenFiles", old.max_open_files == new.max_open_files),
        ("Timeout", old.timeout == new.timeout),
    ];
    match fields.iter().find(|(_, same)| !same) {
        None => Ok(()),
        Some((field, _)) => Err(AccessError::PrivilegedField {
            name: existing.name.clone(),
            field,
        }),
    }
}
