//! Tickets a trigger's run calls the server back with (`KEEL_TICKET`): issued to the user whose
//! command runs the trigger, held in memory only (never stored, journaled or replicated), valid
//! until the run ends or its time limit passes, whichever comes first.

use super::tickets::ticket_hash;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Live tickets by hash: the user each was issued to and when it expires (seconds).
type Live = Arc<Mutex<HashMap<[u8; 32], (String, i64)>>>;

/// The live run tickets.
#[derive(Default)]
pub(crate) struct RunTickets {
    live: Live,
}

/// One live run ticket; dropping it ends the ticket.
pub(crate) struct RunTicket {
    pub(crate) ticket: String,
    hash: [u8; 32],
    live: Live,
}

impl RunTickets {
    /// A new ticket for `user`, valid until `expires` (seconds) or until the returned
    /// guard is dropped.
    pub(crate) fn issue(&self, user: &str, expires: i64) -> Result<RunTicket, getrandom::Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)?;
        let ticket = hex::encode_upper(bytes);
        let hash = ticket_hash(&ticket);
        self.lock().insert(hash, (user.to_string(), expires));
        Ok(RunTicket {
            ticket,
            hash,
            live: self.live.clone(),
        })
    }

    /// Whether `hash` is a live run ticket of `user` at `now`.
    pub(crate) fn admits(&self, hash: &[u8; 32], user: &str, now: i64) -> bool {
        self.lock()
            .get(hash)
            .is_some_and(|(owner, expires)| owner == user && *expires > now)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], (String, i64)>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for RunTicket {
    fn drop(&mut self) {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_ticket_admits_its_user_until_it_ends_or_expires() {
        let tickets = RunTickets::default();
        let run = tickets.issue("alice", 100).unwrap();
        let hash = ticket_hash(&run.ticket);
        let cases = [
            ("alice", 99, true),
            ("alice", 100, false),
            ("bob", 99, false),
        ];
        for (user, now, admitted) in cases {
            assert_eq!(
                tickets.admits(&hash, user, now),
                admitted,
                "{user} at {now}"
            );
        }
        assert!(!tickets.admits(&ticket_hash("other"), "alice", 0));
        drop(run);
        assert!(!tickets.admits(&hash, "alice", 0));
    }
}
