//! Refusals of authentication and of the user, password, ticket and settings commands.

use super::{ServiceError, embeds_service_error};
use keel_core::SettingError;

/// Why a caller was not let in, or a user, password, ticket or setting command was refused;
/// nothing was changed.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// The command needs a ticket (or, at levels 0 and 1, the password) and none was given.
    #[error(
        "user {user} is not logged in to server {server} (security level {level}{why}); \
         a valid ticket is required"
    )]
    LoginRequired {
        user: String,
        server: String,
        level: u8,
        /// Why this user needs one: every user at 3 and above, else their password.
        why: &'static str,
    },
    /// The ticket given is unknown (logged out, never issued, or issued to another user).
    #[error("user {user}'s ticket for server {server} is invalid (logged out or for another user)")]
    TicketInvalid { user: String, server: String },
    /// The ticket given has expired.
    #[error("user {user}'s ticket for server {server} expired at {expired} (Unix time)")]
    TicketExpired {
        user: String,
        server: String,
        expired: i64,
    },
    /// A ticket bound to the address it was issued to, presented from another.
    #[error(
        "user {user}'s ticket for server {server} is valid only from {bound}, not from {from}; \
         log in again from here, or use `keel login -a` for a ticket valid from every address"
    )]
    TicketWrongAddress {
        user: String,
        server: String,
        bound: String,
        from: String,
    },
    /// Every password-check slot and its queue are taken; nothing was checked or counted.
    #[error("server busy checking other passwords; retry in a few seconds")]
    Busy,
    /// A password that does not match the user's.
    #[error("password invalid for user {user}")]
    PasswordInvalid { user: String },
    /// A P4 client's password digest (`p4 login`, `p4 passwd`'s old password) for a user whose
    /// password was set before Keel kept passwords in the form those clients send; a login
    /// with Keel's own client converts it.
    #[error(
        "password invalid for user {user}, or set before this server could check P4 clients' \
         password digests: log in once with 'keel login' (Keel's own client), then P4 clients \
         can log in with the same password"
    )]
    PasswordPredatesDigests { user: String },
    /// A new password a P4 client sent only as a digest, where the security level requires
    /// strong passwords (a digest's strength cannot be checked).
    #[error(
        "P4 clients send only a digest of a new password, so its strength cannot be checked \
         at security level {level}; set user {user}'s password with 'keel passwd' (Keel's own \
         client) instead"
    )]
    DigestStrengthUnknown { user: String, level: u8 },
    /// A login for a user who has no password.
    #[error("user {user} has no password set, so cannot log in")]
    NoPassword { user: String },
    /// Too many failed attempts for the user or from the client address.
    #[error("too many failed logins for {who}; try again in {retry_after_secs} s")]
    RateLimited { who: String, retry_after_secs: u64 },
    /// A new password too weak for the security level.
    #[error(
        "password for user {user} is not strong enough for security level {level}: it needs \
         at least 8 characters, of at least two kinds among upper-case, lower-case and \
         non-letters"
    )]
    WeakPassword { user: String, level: u8 },
    /// An empty new password where the security level requires one.
    #[error("user {user} must have a password at security level {level}")]
    PasswordRequired { user: String, level: u8 },
    /// A user that does not exist.
    #[error("user {user} does not exist")]
    NoSuchUser { user: String },
    /// A user name or spec field the server does not accept (`reason` names it).
    #[error("{reason}")]
    BadUser { user: String, reason: String },
    /// At security level 4 users are not created on first use.
    #[error(
        "user {user} does not exist and security level {level} does not create users on \
         first use; a super user must create it (user -f)"
    )]
    UserCreationRefused { user: String, level: u8 },
    /// Changing another user's spec or password needs `-f` and a super user.
    #[error("user {caller} may not {what} user {user} (needs a super user and -f)")]
    OtherUser {
        caller: String,
        user: String,
        what: &'static str,
    },
    /// A spec field that widens rights (a user's Type) changed by someone who is not a super
    /// user.
    #[error(
        "user {user}: only a super user may set {field} (asked for {value}, it stays \
         {current}); nothing was saved"
    )]
    PrivilegedField {
        user: String,
        field: &'static str,
        value: String,
        current: String,
    },
    /// The command needs a super user.
    #[error("user {user} may not {what}: it needs super access")]
    NotSuper { user: String, what: &'static str },
    /// A setting name or value the server does not accept.
    /// A P4 client's answer matched none of the user's tickets, and `p4_password_digests` is
    /// off, so an answer from a `P4PASSWD` holding the password itself cannot be recognised.
    #[error(
        "user {user}'s answer matches no ticket, and a P4PASSWD holding the password itself \
         is accepted only when the server sets p4_password_digests"
    )]
    P4DigestsOff { user: String },
    /// Hashing or random bytes failed on the server.
    #[error("internal error: {reason}")]
    Internal { reason: String },
    #[error(transparent)]
    Setting(#[from] SettingError),
    #[error(transparent)]
    Service(ServiceError),
}

embeds_service_error!(AuthError);
