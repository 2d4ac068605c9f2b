//! `user` and `users`: user specs (email, full name, type, the paths a user reviews) read,
//! listed, saved and deleted.

use keel_proto::v1 as pb;

use super::records::{QueryError, Records};
use crate::connect::Connection;

/// A user spec as the server stores it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserSpec {
    pub name: String,
    pub email: String,
    pub full_name: String,
    /// `standard`, `service` or `operator`.
    pub user_type: String,
    /// Seconds since the epoch the spec last changed (0: never).
    pub updated: u64,
    /// Seconds since the epoch the user last ran a command (0: never).
    pub accessed: u64,
    /// Whether a password is set (the password itself is never sent).
    pub has_password: bool,
    /// Depot paths whose changes the user reviews; a leading `-` excludes.
    pub reviews: Vec<String>,
}

impl UserSpec {
    pub(super) fn from_wire(u: pb::User) -> UserSpec {
        UserSpec {
            name: u.name,
            email: u.email,
            full_name: u.full_name,
            user_type: u.r#type,
            updated: u.updated.max(0) as u64,
            accessed: u.accessed.max(0) as u64,
            has_password: u.has_password,
            reviews: u.reviews,
        }
    }

    fn into_wire(self) -> pb::User {
        pb::User {
            name: self.name,
            email: self.email,
            full_name: self.full_name,
            r#type: self.user_type,
            updated: i64::try_from(self.updated).unwrap_or(i64::MAX),
            accessed: i64::try_from(self.accessed).unwrap_or(i64::MAX),
            has_password: self.has_password,
            reviews: self.reviews,
        }
    }
}

/// User `name`'s spec (refused as not found when there is no such user).
pub async fn user(conn: &Connection, name: &str) -> Result<UserSpec, QueryError> {
    let got = conn
        .reply(conn.client().get_user(pb::GetUserRequest {
            caller: conn.caller(),
            name: name.to_string(),
        }))
        .await?;
    Ok(UserSpec::from_wire(got))
}

/// Every user, in name order.
pub async fn users(conn: &Connection) -> Result<Records<UserSpec>, QueryError> {
    let stream = conn
        .reply(conn.client().list_users(pb::ListUsersRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(Records::new(conn, stream, |u| Ok(UserSpec::from_wire(u))))
}

/// Saves (creating or replacing) a user spec and returns it as stored. `force`: a super user
/// saves another user's spec.
pub async fn save_user(
    conn: &Connection,
    spec: UserSpec,
    force: bool,
) -> Result<UserSpec, QueryError> {
    let saved = conn
        .reply(conn.client().save_user(pb::SaveUserRequest {
            caller: conn.caller(),
            user: Some(spec.into_wire()),
            force,
        }))
        .await?;
    Ok(UserSpec::from_wire(saved))
}

/// Deletes user `name` and every ticket of theirs. `force`: a super user deletes another user.
pub async fn delete_user(conn: &Connection, name: &str, force: bool) -> Result<(), QueryError> {
    conn.reply(conn.client().delete_user(pb::DeleteUserRequest {
        caller: conn.caller(),
        name: name.to_string(),
        force,
    }))
    .await?;
    Ok(())
}
