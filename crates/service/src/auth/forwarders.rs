//! Which requests may say where their client really is: a proxy or a replica that forwards a
//! client's request names the client's address beside its own service user's ticket, and the
//! server believes the address only when that ticket is valid, a service user's, and shown
//! from the address it is bound to (if any).

use crate::{Service, ServiceError};
use keel_core::UserType;
use std::net::IpAddr;

use super::tickets::{bound_elsewhere, ticket_hash};

impl Service {
    /// Whether `ticket`, shown from `transport` (the connection's own address), is a valid
    /// ticket of a service user: the one condition under which a request's forwarded client
    /// address is believed. Verdicts are remembered until the next metadata write.
    pub fn is_service_ticket(
        &self,
        ticket: &str,
        transport: Option<IpAddr>,
    ) -> Result<bool, ServiceError> {
        let epoch = self.meta.commit_epoch();
        let hash = ticket_hash(ticket);
        let key = (String::new(), Some(hash), transport);
        let now = self.now();
        if self.forwarders.holds(epoch, &key, now) {
            return Ok(true);
        }
        let snap = self.meta.snapshot()?;
        let Some(row) = snap.get_ticket(&hash)? else {
            return Ok(false);
        };
        if row.expires <= now || bound_elsewhere(&row, transport) {
            return Ok(false);
        }
        let service = snap
            .get_user(&row.user)?
            .is_some_and(|u| u.user_type == UserType::Service);
        if service {
            self.forwarders.admit(epoch, key, row.expires);
        }
        Ok(service)
    }
}
