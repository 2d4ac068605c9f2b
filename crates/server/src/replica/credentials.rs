//! Who a replica is when it calls its primary: its service user with that user's ticket
//! (`--service-user`), or `keel-replica` with no ticket. The follower's journal stream, its
//! content fetches and on-demand content all build their requests here.

use super::{REPLICA_USER, ServiceLogin};
use keel_proto::v1 as pb;
use tonic::metadata::AsciiMetadataValue;

/// A service user's ticket that cannot be sent as request metadata.
#[derive(Debug, thiserror::Error)]
#[error("the ticket of service user {user} is not ASCII text; log in again")]
pub struct BadTicket {
    /// The service user.
    pub user: String,
}

/// The identity and ticket a replica's calls to its primary carry.
#[derive(Clone, Debug)]
pub(crate) struct Credentials {
    user: String,
    ticket: Option<AsciiMetadataValue>,
}

impl Credentials {
    /// The service user's credentials, or `keel-replica`'s (no ticket) without one.
    pub(crate) fn new(login: Option<&ServiceLogin>) -> Result<Credentials, BadTicket> {
        Ok(match login {
            Some(login) => Credentials {
                user: login.user.clone(),
                ticket: Some(login.ticket.parse().map_err(|_| BadTicket {
                    user: login.user.clone(),
                })?),
            },
            None => Credentials {
                user: REPLICA_USER.into(),
                ticket: None,
            },
        })
    }

    /// The service user's ticket, if the replica has one.
    pub(crate) fn ticket(&self) -> Option<&AsciiMetadataValue> {
        self.ticket.as_ref()
    }

    /// The caller a replica names when it calls its primary.
    pub(crate) fn caller(&self) -> pb::Caller {
        pb::Caller {
            user: self.user.clone(),
            workspace: String::new(),
            host: String::new(),
            force: false,
        }
    }

    /// A request to the primary carrying the ticket.
    pub(crate) fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut req = tonic::Request::new(message);
        if let Some(ticket) = &self.ticket {
            req.metadata_mut()
                .insert(crate::identity::TICKET_METADATA, ticket.clone());
        }
        req
    }
}
