//! User specs (`user`, `users`): the fields of Perforce's user form; users are also created
//! on first use below security level 4 (`Service::touch_user`).

use crate::{AuthError, Caller, Service};
use keel_core::UserType;
use keel_store::UserRow;

use super::settings::security_level;

/// A user as `user -o` and `users` show it (never the password hash).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserSpec {
    pub name: String,
    pub email: String,
    pub full_name: String,
    pub user_type: UserType,
    /// When the spec last changed (0 for a spec not saved yet).
    pub updated: i64,
    /// When the user last ran a command.
    pub accessed: i64,
    pub has_password: bool,
    /// The depot paths whose changes the user reviews (`Reviews`; `-` excludes).
    pub reviews: Vec<String>,
}

impl From<UserRow> for UserSpec {
    fn from(r: UserRow) -> UserSpec {
        UserSpec {
            name: r.name,
            email: r.email,
            full_name: r.full_name,
            user_type: r.user_type,
            updated: r.updated,
            accessed: r.accessed,
            has_password: r.password_hash.is_some(),
            reviews: r.reviews,
        }
    }
}

/// Checks the fields of a user spec that widen rights (Type: `service`, `operator`): only a
/// super user sets them. Returns who set the type the saved row records: the super user
/// when one saves a non-standard Type, the old setter when a non-super user saves their
/// spec with the Type unchanged, `None` for `standard`.
fn privileged_fields(
    old: Option<&UserRow>,
    new: &UserSpec,
    caller: &str,
    is_super: bool,
) -> Result<Option<String>, AuthError> {
    let current = old.map_or(UserType::Standard, |o| o.user_type);
    if new.user_type == UserType::Standard {
        return Ok(None);
    }
    if is_super {
        return Ok(Some(caller.to_string()));
    }
    if new.user_type != current {
        return Err(AuthError::PrivilegedField {
            user: new.name.clone(),
            field: "Type",
            value: new.user_type.as_str().to_string(),
            current: current.as_str().to_string(),
        });
    }
    Ok(old.and_then(|o| o.type_set_by.clone()))
}

impl Service {
    /// `user -o NAME`: the stored spec.
    pub fn get_user(&self, caller: &Caller, name: &str) -> Result<UserSpec, AuthError> {
        self.touch_user(caller)?;
        let snap = self.meta.snapshot()?;
        snap.get_user(name)?
            .map(UserSpec::from)
            .ok_or_else(|| AuthError::NoSuchUser {
                user: name.to_string(),
            })
    }

    /// Whether user `name` is on record, without recording anyone.
    pub fn user_on_record(&self, name: &str) -> Result<bool, crate::ServiceError> {
        Ok(self.meta.snapshot()?.get_user(name)?.is_some())
    }

    /// `users`: every user in name order, a page at a time through `sink`.
    pub fn list_users(
        &self,
        caller: &Caller,
        sink: &mut dyn FnMut(UserSpec) -> Result<(), crate::ServiceError>,
    ) -> Result<(), AuthError> {
        self.touch_user(caller)?;
        let mut after: Option<String> = None;
        loop {
            let page = self
                .meta
                .snapshot()?
                .list_users(after.as_deref(), self.config.page_size)?;
            let done = page.len() < self.config.page_size;
            after = page.last().map(|u| u.name.clone());
            for row in page {
                sink(UserSpec::from(row))?;
            }
            if done {
                return Ok(());
            }
        }
    }

    /// `user -i [-f]`: creates or updates a spec. A user edits their own; another user's, or a
    /// new user at security level 4, needs `force` and a super user. Only a super user changes
    /// a Type (see `privileged_fields`); a refusal saves nothing.
    pub fn save_user(
        &self,
        caller: &Caller,
        spec: UserSpec,
        force: bool,
    ) -> Result<UserSpec, AuthError> {
        self.check_user_form(&spec)?;
        crate::labels::label_view(&spec.reviews).map_err(|reason| AuthError::BadUser {
            user: spec.name.clone(),
            reason: format!("user {}: Reviews: {reason}", spec.name),
        })?;
        self.touch_user(caller)?;
        let name = crate::context::user_name(&spec.name).map_err(|e| AuthError::BadUser {
            user: spec.name.clone(),
            reason: e.to_string(),
        })?;
        let snap = self.meta.snapshot()?;
        let level = security_level(snap.as_ref())?;
        let exists = snap.get_user(&name)?.is_some();
        drop(snap);
        let needs_super = name != caller.user || (!exists && !level.creates_users_on_first_use());
        let is_super = self.is_super(caller)?;
        if needs_super && !(force && is_super) {
            return Err(AuthError::OtherUser {
                caller: caller.user.clone(),
                user: name,
                what: if exists { "edit" } else { "create" },
            });
        }
        let now = self.now();
        let setter = caller.user.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            let old = txn.get_user(&name)?;
            let type_set_by = privileged_fields(old.as_ref(), &spec, &setter, is_super)?;
            let row = UserRow {
                name: name.clone(),
                email: spec.email,
                full_name: spec.full_name,
                user_type: spec.user_type,
                created: old.as_ref().map_or(now, |o| o.created),
                updated: now,
                accessed: old.as_ref().map_or(now, |o| o.accessed),
                password_hash: old.as_ref().and_then(|o| o.password_hash.clone()),
                p4_digest: old.and_then(|o| o.p4_digest),
                type_set_by,
                reviews: spec.reviews,
            };
            txn.put_user(&row)?;
            Ok(UserSpec::from(row))
        })
    }

    /// `user -d [-f] NAME`: deletes a user and every ticket of theirs. A user deletes
    /// themselves; another user needs `force` and a super user.
    pub fn delete_user(&self, caller: &Caller, name: &str, force: bool) -> Result<(), AuthError> {
        self.touch_user(caller)?;
        if name != caller.user && !(force && self.is_super(caller)?) {
            return Err(AuthError::OtherUser {
                caller: caller.user.clone(),
                user: name.to_string(),
                what: "delete",
            });
        }
        let target = name.to_string();
        keel_store::write(self.meta.as_ref(), move |txn| {
            if txn.get_user(&target)?.is_none() {
                return Err(AuthError::NoSuchUser { user: target });
            }
            txn.delete_user(&target).map_err(AuthError::from)
        })?;
        self.forget_user(name);
        Ok(())
    }
}
