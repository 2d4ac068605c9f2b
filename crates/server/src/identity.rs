//! Who is calling: the identity the server establishes for each request, from the request's
//! own `Caller` and what the connection says about the client, before any rule runs.

use keel_proto::v1 as pb;
use keel_service::Caller;
use std::net::IpAddr;
use tonic::{Request, Status};

/// What the transport tells about a request's client.
pub(crate) struct Peer {
    /// The client's network address as this server sees it (`None` when the transport has
    /// none, e.g. an in-process connection).
    pub(crate) address: Option<IpAddr>,
}

impl Peer {
    pub(crate) fn of<T>(req: &Request<T>) -> Peer {
        Peer {
            address: req.remote_addr().map(|a| a.ip()),
        }
    }
}

/// The caller a request acts as: the user and workspace it names, seen from `peer`.
pub(crate) fn caller(peer: &Peer, c: Option<pb::Caller>) -> Result<Caller, Status> {
    let c = c.ok_or_else(|| Status::invalid_argument("request has no caller (user, workspace)"))?;
    if c.user.is_empty() {
        return Err(Status::invalid_argument("request has no user"));
    }
    Ok(Caller {
        user: c.user,
        workspace: c.workspace,
        host: c.host,
        address: peer.address,
    })
}
