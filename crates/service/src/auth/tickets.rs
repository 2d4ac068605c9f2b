//! Login tickets: `login` checks the password and issues a random ticket (256 bits), kept on
//! the server only as its BLAKE3 hash, valid for `ticket_lifetime` and, when
//! `auth.tickets.bind` says so (and not `login -a`), only from the client's address; `login
//! -s` and `logout`.

use crate::{AuthError, Caller, Service, ServiceError};
use keel_core::Limit;
use keel_store::TicketRow;

use super::Credentials;
use super::passwords::{PasswordInput, predates_md5_form};
use super::settings::{security_level, ticket_binding};

/// Refuses a ticket bound to another address than the caller's.
pub(crate) fn check_address(
    row: &TicketRow,
    caller: &Caller,
    creds: &Credentials,
) -> Result<(), AuthError> {
    if bound_elsewhere(row, caller.address) {
        return Err(AuthError::TicketWrongAddress {
            user: caller.user.clone(),
            server: creds.server.clone(),
            bound: row.address.clone(),
            from: caller
                .address
                .map_or_else(|| "an unknown address".to_string(), |a| a.to_string()),
        });
    }
    Ok(())
}

/// Whether `row` is bound to an address other than `address`.
pub(crate) fn bound_elsewhere(row: &TicketRow, address: Option<std::net::IpAddr>) -> bool {
    !row.address.is_empty()
        && address.map(|a| a.to_string()).as_deref() != Some(row.address.as_str())
}

/// A ticket as `login` and `login -s` report it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TicketInfo {
    /// The ticket itself: only in the reply to `login`, empty otherwise.
    pub ticket: String,
    pub user: String,
    pub host: String,
    /// The client address the ticket is valid from; empty: every address.
    pub address: String,
    pub issued: i64,
    pub expires: i64,
}

/// The hash a ticket is stored and looked up under.
pub(crate) fn ticket_hash(ticket: &str) -> [u8; 32] {
    *blake3::hash(ticket.as_bytes()).as_bytes()
}

impl Service {
    /// How long a ticket issued to `user` stays valid (seconds): the most permissive Timeout
    /// of the user's groups (`Service::user_timeout`), as in Perforce; `ticket_lifetime_secs`
    /// when no group sets one; `u64::MAX` (never expires) when one says `unlimited`.
    pub fn ticket_lifetime(&self, user: &str) -> Result<u64, ServiceError> {
        Ok(match self.user_timeout(user)? {
            Limit::Unset => self.config.ticket_lifetime_secs,
            Limit::Unlimited => u64::MAX,
            Limit::Max(secs) => secs,
        })
    }

    /// `login`: checks the caller's password and issues a ticket, bound to the caller's
    /// address unless `all_hosts` (`login -a`) or `auth.tickets.bind` says otherwise.
    pub fn login(
        &self,
        caller: &Caller,
        password: &str,
        all_hosts: bool,
    ) -> Result<TicketInfo, AuthError> {
        self.login_from(caller, PasswordInput::Typed(password), all_hosts)
    }

    /// `login` with the password as a front end received it (typed, or a P4 client's MD5 of
    /// it). A stored hash of the older form that matches is replaced by the current form in
    /// the login's own write, so both front ends take the password from then on.
    pub fn login_from(
        &self,
        caller: &Caller,
        password: PasswordInput<'_>,
        all_hosts: bool,
    ) -> Result<TicketInfo, AuthError> {
        let user = crate::context::user_name(&caller.user)?;
        let snap = self.meta.snapshot()?;
        let level = security_level(snap.as_ref())?;
        let binding = ticket_binding(snap.as_ref())?;
        let row = snap.get_user(&user)?;
        drop(snap);
        self.check_password(
            caller,
            &user,
            row.as_ref().and_then(|r| r.password_hash.as_deref()),
            password,
            level,
        )?;
        self.record_p4_verifier(
            &user,
            row.as_ref().and_then(|r| r.p4_digest.as_deref()),
            password,
        )?;
        let old_hash = row.as_ref().and_then(|r| r.password_hash.clone());
        let rehash = match &old_hash {
            Some(h) if predates_md5_form(h) => Some((h.clone(), self.hash_password(password)?)),
            _ => None,
        };
        self.issue_ticket(caller, user, level, binding, all_hosts, rehash)
    }

    /// `login` from a P4 client that answered the password prompt's challenge (`digest`):
    /// `proves` is told the user's `MD5(password)` from the sealed verifier
    /// (`p4_password_digests`) and says whether the answer was made from it. Refused as a
    /// wrong password when it was not (counted like one).
    pub fn login_p4_challenge(
        &self,
        caller: &Caller,
        proves: &mut dyn FnMut(&str) -> bool,
        all_hosts: bool,
    ) -> Result<TicketInfo, AuthError> {
        let user = crate::context::user_name(&caller.user)?;
        self.prove_p4_password(caller, "", proves)
            .map_err(|e| match e {
                AuthError::TicketInvalid { user, .. } => AuthError::PasswordInvalid { user },
                other => other,
            })?;
        let snap = self.meta.snapshot()?;
        let level = security_level(snap.as_ref())?;
        let binding = ticket_binding(snap.as_ref())?;
        drop(snap);
        self.issue_ticket(caller, user, level, binding, all_hosts, None)
    }

    /// Issues a ticket to `user`, whose password was just checked; `rehash` replaces an older
    /// stored hash form (the old hash, the new) in the same write.
    fn issue_ticket(
        &self,
        caller: &Caller,
        user: String,
        level: keel_core::SecurityLevel,
        binding: keel_core::TicketBinding,
        all_hosts: bool,
        rehash: Option<(String, String)>,
    ) -> Result<TicketInfo, AuthError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| AuthError::Internal {
            reason: format!("no random bytes for a ticket: {e}"),
        })?;
        let ticket = hex::encode_upper(bytes);
        let now = self.now();
        let lifetime = i64::try_from(self.ticket_lifetime(&user)?).unwrap_or(i64::MAX);
        let address = match caller.address {
            Some(a) if !all_hosts && binding.binds(level) => a.to_string(),
            _ => String::new(),
        };
        let row = TicketRow {
            hash: ticket_hash(&ticket),
            user: user.clone(),
            host: caller.host.clone(),
            address,
            issued: now,
            expires: now.saturating_add(lifetime),
        };
        let stored = row.clone();
        keel_store::write(self.meta.as_ref(), move |txn| {
            // Expired tickets of anyone go with each login, so the table stays small.
            txn.delete_tickets_of("", now)?;
            txn.set_user_accessed(&stored.user, now)?;
            if let Some((old, new)) = &rehash
                && let Some(mut user) = txn.get_user(&stored.user)?
                && user.password_hash.as_ref() == Some(old)
            {
                user.password_hash = Some(new.clone());
                txn.put_user(&user)?;
            }
            txn.put_ticket(&stored).map_err(AuthError::from)
        })?;
        tracing::info!(user, host = caller.host, address = row.address, "login");
        Ok(TicketInfo {
            ticket,
            user,
            host: row.host,
            address: row.address,
            issued: row.issued,
            expires: row.expires,
        })
    }

    /// The ticket `creds` presents, when it is valid for the caller.
    fn presented_ticket(
        &self,
        caller: &Caller,
        creds: &Credentials,
    ) -> Result<TicketRow, AuthError> {
        let not_logged_in = || AuthError::TicketInvalid {
            user: caller.user.clone(),
            server: creds.server.clone(),
        };
        let ticket = creds.ticket.as_deref().ok_or_else(not_logged_in)?;
        let snap = self.meta.snapshot()?;
        let row = snap
            .get_ticket(&ticket_hash(ticket))?
            .filter(|t| t.user == caller.user)
            .ok_or_else(not_logged_in)?;
        if row.expires <= self.now() {
            return Err(AuthError::TicketExpired {
                user: caller.user.clone(),
                server: creds.server.clone(),
                expired: row.expires,
            });
        }
        check_address(&row, caller, creds)?;
        Ok(row)
    }

    /// `login -s`: the caller's ticket and when it expires.
    pub fn login_status(
        &self,
        caller: &Caller,
        creds: &Credentials,
    ) -> Result<TicketInfo, AuthError> {
        let row = self.presented_ticket(caller, creds)?;
        Ok(TicketInfo {
            ticket: String::new(),
            user: row.user,
            host: row.host,
            address: row.address,
            issued: row.issued,
            expires: row.expires,
        })
    }

    /// `logout`: ends the presented ticket, or with `all` every ticket of the caller's user
    /// on every host; returns how many ended.
    pub fn logout(
        &self,
        caller: &Caller,
        creds: &Credentials,
        all: bool,
    ) -> Result<usize, AuthError> {
        let row = self.presented_ticket(caller, creds)?;
        let now = self.now();
        let user = caller.user.clone();
        let ended = keel_store::write(self.meta.as_ref(), move |txn| {
            if all {
                txn.delete_tickets_of(&user, now)
                    .map_err(ServiceError::from)
            } else {
                Ok(usize::from(txn.delete_ticket(&row.hash)?))
            }
        })?;
        tracing::info!(user = caller.user, all, ended, "logout");
        Ok(ended)
    }
}
