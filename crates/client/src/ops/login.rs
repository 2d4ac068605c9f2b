//! `login`, `login -s`, `logout` and `passwd`: tickets and passwords. The caller keeps the
//! ticket a login returns (the `keel` command stores it in the tickets file).

use keel_proto::v1 as pb;

use super::records::QueryError;
use crate::connect::Connection;

/// A ticket of the caller's user: the one a login issued, or the one a status check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ticket {
    /// The ticket itself; empty in a status check's answer.
    pub ticket: String,
    pub user: String,
    pub host: String,
    /// Seconds since the epoch it was issued.
    pub issued: i64,
    /// Seconds since the epoch it expires; `i64::MAX`: never (a group's `unlimited` Timeout).
    pub expires: i64,
    /// The client address it is valid from; empty: from every address.
    pub address: String,
}

impl Ticket {
    fn from_wire(r: pb::LoginReply) -> Ticket {
        Ticket {
            ticket: r.ticket,
            user: r.user,
            host: r.host,
            issued: r.issued,
            expires: r.expires,
            address: r.address,
        }
    }

    /// Whether it never expires.
    pub fn unlimited(&self) -> bool {
        self.expires == i64::MAX
    }
}

/// Logs the caller's user in with `password` and returns the new ticket. `all_hosts`: a
/// ticket valid from every address where the server binds tickets to addresses.
pub async fn login(
    conn: &Connection,
    password: String,
    all_hosts: bool,
) -> Result<Ticket, QueryError> {
    let reply = conn
        .reply(conn.client().login(pb::LoginRequest {
            caller: conn.caller(),
            password,
            all_hosts,
        }))
        .await?;
    Ok(Ticket::from_wire(reply))
}

/// The caller's current ticket (refused when not logged in).
pub async fn login_status(conn: &Connection) -> Result<Ticket, QueryError> {
    let reply = conn
        .reply(conn.client().login_status(pb::LoginStatusRequest {
            caller: conn.caller(),
        }))
        .await?;
    Ok(Ticket::from_wire(reply))
}

/// Ends the caller's ticket (`all`: every ticket of the user, on every host); returns how
/// many tickets ended.
pub async fn logout(conn: &Connection, all: bool) -> Result<u64, QueryError> {
    let reply = conn
        .reply(conn.client().logout(pb::LogoutRequest {
            caller: conn.caller(),
            all,
        }))
        .await?;
    Ok(reply.ended)
}

/// A password change.
#[derive(Clone, Debug, Default)]
pub struct PasswordChange {
    /// Another user's password (super users); `None`: the caller's own.
    pub user: Option<String>,
    /// The current password, when the caller's own has one.
    pub old_password: String,
    /// The new password; empty removes it (security level 0 only).
    pub new_password: String,
}

/// Sets a password; the server ends every ticket of the user.
pub async fn set_password(conn: &Connection, change: PasswordChange) -> Result<(), QueryError> {
    conn.reply(conn.client().set_password(pb::SetPasswordRequest {
        caller: conn.caller(),
        user: change.user.unwrap_or_default(),
        old_password: change.old_password,
        new_password: change.new_password,
    }))
    .await?;
    Ok(())
}
