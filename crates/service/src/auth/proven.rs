//! Tickets a front end recognises without seeing them. A P4 client never sends its ticket: it
//! answers a challenge with a digest of it, so the front end must recompute the ticket the
//! client holds. It derives that from the ticket's stored hash (with a secret of its own), and
//! the service offers the user's live tickets for it to recognise; the store keeps only
//! hashes, as for every ticket.

use super::Credentials;
use super::tickets::{check_address, ticket_hash};
use crate::{AuthError, Caller, Service};

/// Most of one user's live tickets a proof is checked against (newest first).
const MOST_TICKETS: usize = 256;

/// A ticket of the caller's that a front end recognised.
#[derive(Clone, Debug)]
pub struct ProvenTicket {
    hash: [u8; 32],
    /// When it expires (Unix time).
    pub expires: i64,
}

impl Service {
    /// The id a ticket is stored under (what a front end derives a ticket's proof from).
    pub fn ticket_id(ticket: &str) -> [u8; 32] {
        ticket_hash(ticket)
    }

    /// The caller's live ticket whose id `proves` recognises, once it is checked like any
    /// ticket (its address binding); `TicketInvalid` when none is recognised.
    pub fn prove_ticket(
        &self,
        caller: &Caller,
        creds: &Credentials,
        proves: &mut dyn FnMut(&[u8; 32]) -> bool,
    ) -> Result<ProvenTicket, AuthError> {
        let rows = self
            .meta
            .snapshot()?
            .tickets_of(&caller.user, self.now(), MOST_TICKETS)?;
        let row = rows
            .into_iter()
            .find(|row| proves(&row.hash))
            .ok_or_else(|| AuthError::TicketInvalid {
                user: caller.user.clone(),
                server: creds.server.clone(),
            })?;
        check_address(&row, caller, creds)?;
        Ok(ProvenTicket {
            hash: row.hash,
            expires: row.expires,
        })
    }

    /// `logout` of a proven ticket: ends it, or with `all` every ticket of the caller's user;
    /// returns how many ended.
    pub fn logout_proven(
        &self,
        caller: &Caller,
        ticket: &ProvenTicket,
        all: bool,
    ) -> Result<usize, AuthError> {
        let now = self.now();
        let user = caller.user.clone();
        let hash = ticket.hash;
        let ended = keel_store::write(self.meta.as_ref(), move |txn| {
            if all {
                txn.delete_tickets_of(&user, now)
                    .map_err(crate::ServiceError::from)
            } else {
                Ok(usize::from(txn.delete_ticket(&hash)?))
            }
        })?;
        tracing::info!(user = caller.user, all, ended, "logout (proven ticket)");
        Ok(ended)
    }
}
