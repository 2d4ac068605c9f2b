//! The check every call passes before its command runs: does the caller need a ticket (or
//! their password) at this security level, and is the one presented valid for them?

use crate::{AuthError, Caller, Service};
use keel_core::SecurityLevel;

use super::settings::security_level;
use super::tickets::{check_address, ticket_hash};

/// What a request presented besides its caller.
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    /// A ticket from `login`.
    pub ticket: Option<String>,
    /// This server's address as the client reached it, for messages.
    pub server: String,
}

impl Service {
    /// Lets the caller in, or says what is missing. Called once per request, before the
    /// command, by the front end's identity step; `Info` and `Login` skip it.
    ///
    /// A user needs to authenticate when the server is at security level 3 or higher, or when
    /// the user has a password; a valid ticket (issued to this user, not expired, and shown
    /// from the address it is bound to, if any) does, and so does the ticket of a trigger
    /// running for this user (`auth/run_tickets.rs`).
    ///
    /// A caller let in stays let in, without a query, until the next write to the metadata
    /// (or their ticket's expiry): see `auth/admitted.rs`.
    pub fn authenticate(&self, caller: &Caller, creds: &Credentials) -> Result<(), AuthError> {
        // Read before the snapshot: a write that ends after it changes the epoch.
        let epoch = self.meta.commit_epoch();
        let key = (
            caller.user.clone(),
            creds.ticket.as_deref().map(ticket_hash),
            caller.address,
        );
        let now = self.now();
        if self.admitted.holds(epoch, &key, now) {
            return Ok(());
        }
        // A running trigger calling back as the user whose command runs it.
        if let Some(hash) = &key.1
            && self.run_tickets.admits(hash, &caller.user, now)
        {
            return Ok(());
        }
        let snap = self.meta.snapshot()?;
        let level = security_level(snap.as_ref())?;
        let ticket = match &key.1 {
            Some(hash) => snap.get_ticket(hash)?,
            None => None,
        };
        if let Some(t) = &ticket
            && t.user == caller.user
            && t.expires > now
        {
            check_address(t, caller, creds)?;
            self.admitted.admit(epoch, key, t.expires);
            return Ok(());
        }
        let user = snap.get_user(&caller.user)?;
        drop(snap);
        let stored = user.as_ref().and_then(|u| u.password_hash.as_deref());
        if !level.tickets_for_everyone() && stored.is_none() {
            if user.is_none() && !level.creates_users_on_first_use() {
                return Err(AuthError::UserCreationRefused {
                    user: caller.user.clone(),
                    level: level.number(),
                });
            }
            if user.is_some() {
                // A user not yet on record is created by this command; the next call reads
                // it again (the creation is a write, which ends the epoch anyway).
                self.admitted.admit(epoch, key, i64::MAX);
            }
            return Ok(());
        }
        Err(match ticket {
            Some(t) if t.user == caller.user => AuthError::TicketExpired {
                user: caller.user.clone(),
                server: creds.server.clone(),
                expired: t.expires,
            },
            _ if creds.ticket.is_some() => AuthError::TicketInvalid {
                user: caller.user.clone(),
                server: creds.server.clone(),
            },
            _ => AuthError::LoginRequired {
                user: caller.user.clone(),
                server: creds.server.clone(),
                level: level.number(),
                why: why(level),
            },
        })
    }
}

fn why(level: SecurityLevel) -> &'static str {
    if level.tickets_for_everyone() {
        ": every user must log in"
    } else {
        ": this user has a password"
    }
}
