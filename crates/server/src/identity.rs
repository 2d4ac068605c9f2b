//! Who is calling: the identity the server establishes for each request, from the request's
//! own `Caller`, what the connection says about the client and the credentials in the
//! request's metadata, before any rule runs. This is the one place where requests are
//! authenticated: [`caller`] lets a caller in only when `Service::authenticate` does. The
//! client's address is the connection's, or the one a forwarding proxy or replica names with
//! its service user's ticket.

use crate::monitor::args::Arguments;
use crate::monitor::{Running, Who};
use keel_proto::v1 as pb;
use keel_service::{Caller, Credentials, Service};
use std::net::IpAddr;
use std::sync::Arc;
use tonic::{Request, Status};

/// The metadata key a client's login ticket travels in.
pub const TICKET_METADATA: &str = "keel-ticket";

/// The metadata key in which a proxy or replica forwarding a client's request names the
/// client's address; believed only beside [`FORWARDER_METADATA`] holding a service user's
/// valid ticket (`Service::is_service_ticket`), else ignored.
pub const CLIENT_ADDRESS_METADATA: &str = "keel-client-address";

/// The metadata key a forwarding proxy or replica's own service-user ticket travels in.
pub const FORWARDER_METADATA: &str = "keel-forwarder-ticket";

/// What every request needs to be authenticated: put into each request's extensions by
/// [`Attach`] before the handler runs.
pub(crate) struct Authenticator {
    pub(crate) service: Arc<Service>,
    /// This server's address, named in refusals.
    pub(crate) server: String,
    /// Most bytes of a command's arguments the monitor keeps.
    pub(crate) args_max_bytes: usize,
}

/// Wraps the API service and hands every request the [`Authenticator`] (as an extension,
/// which tonic passes on to the handler's `Request`).
#[derive(Clone)]
pub(crate) struct Attach<S> {
    pub(crate) inner: S,
    pub(crate) auth: Arc<Authenticator>,
}

impl<S, B> tower_service::Service<http::Request<B>> for Attach<S>
where
    S: tower_service::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: http::Request<B>) -> Self::Future {
        req.extensions_mut().insert(self.auth.clone());
        self.inner.call(req)
    }
}

impl<S: tonic::server::NamedService> tonic::server::NamedService for Attach<S> {
    const NAME: &'static str = S::NAME;
}

/// What the transport and the metadata tell about a request's client.
pub(crate) struct Peer {
    /// The client's network address as this server sees it (`None` when the transport has
    /// none, e.g. an in-process connection).
    pub(crate) address: Option<IpAddr>,
    /// The ticket the request presented.
    ticket: Option<String>,
    auth: Option<Arc<Authenticator>>,
    /// The command this request is (see `crate::monitor`), when the monitor observes it.
    command: Option<Arc<Running>>,
}

impl Peer {
    /// What `req` tells of its client; also gives the running command its client address
    /// and keeps its request, for its arguments.
    pub(crate) fn of<T>(req: &Request<T>) -> Peer
    where
        T: std::fmt::Debug + Clone + Send + Sync + 'static,
    {
        let peer = Peer::of_stream(req);
        if let Some(run) = &peer.command {
            let max = peer.auth.as_ref().map_or(0, |a| a.args_max_bytes);
            if let Some(args) = Arguments::keep(&run.command, req.get_ref(), max) {
                let _ = run.args.set(args);
            }
        }
        peer
    }

    /// What a request stream (`Submit`, `Shelve`, ...) tells of its client; its arguments come
    /// in its messages, so none are kept.
    pub(crate) fn of_stream<T>(req: &Request<T>) -> Peer {
        let command = req.extensions().get::<Arc<Running>>().cloned();
        let auth = req.extensions().get::<Arc<Authenticator>>().cloned();
        let transport = req.remote_addr().map(|a| a.ip());
        let address = forwarded_address(req.metadata(), auth.as_deref(), transport);
        if let (Some(run), Some(a)) = (&command, address) {
            let _ = run.address.set(a);
        }
        Peer {
            command,
            address,
            ticket: metadata_text(req.metadata(), TICKET_METADATA),
            auth,
        }
    }

    /// The credentials the request presented (`login -s` and `logout` act on its ticket).
    pub(crate) fn credentials(&self) -> Credentials {
        Credentials {
            ticket: self.ticket.clone(),
            server: self
                .auth
                .as_ref()
                .map(|a| a.server.clone())
                .unwrap_or_default(),
        }
    }
}

fn metadata_text(metadata: &tonic::metadata::MetadataMap, key: &str) -> Option<String> {
    metadata
        .get(key)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// The client's address: the one a forwarding proxy or replica names, when it shows a service
/// user's valid ticket beside it; else the transport's (a header from anyone else is ignored,
/// with a line in the log).
fn forwarded_address(
    metadata: &tonic::metadata::MetadataMap,
    auth: Option<&Authenticator>,
    transport: Option<IpAddr>,
) -> Option<IpAddr> {
    let Some(named) = metadata_text(metadata, CLIENT_ADDRESS_METADATA) else {
        return transport;
    };
    let trusted = match (metadata_text(metadata, FORWARDER_METADATA), auth) {
        (Some(ticket), Some(auth)) => auth
            .service
            .is_service_ticket(&ticket, transport)
            .unwrap_or(false),
        _ => false,
    };
    match named.trim().parse::<IpAddr>() {
        Ok(address) if trusted => Some(address),
        _ => {
            tracing::warn!(
                named,
                transport = ?transport,
                "ignored a client address named without a service user's ticket"
            );
            transport
        }
    }
}

/// The caller a request acts as, authenticated: the user and workspace it names, seen from
/// `peer`, once `Service::authenticate` accepted the credentials presented.
pub(crate) fn caller(peer: &Peer, c: Option<pb::Caller>) -> Result<Caller, Status> {
    let who = caller_unauthenticated(peer, c)?;
    let auth = peer
        .auth
        .as_ref()
        .ok_or_else(|| Status::internal("request reached a handler without an authenticator"))?;
    auth.service
        .authenticate(&who, &peer.credentials())
        .map_err(crate::convert::status)?;
    Ok(who)
}

/// The caller a request names, without authenticating it: only for `Info` (which, like
/// `p4 info`, tells anyone how to reach and log in to the server) and `Login` (which checks
/// the password itself).
pub(crate) fn caller_unauthenticated(peer: &Peer, c: Option<pb::Caller>) -> Result<Caller, Status> {
    let c = c.ok_or_else(|| Status::invalid_argument("request has no caller (user, workspace)"))?;
    if c.user.is_empty() {
        return Err(Status::invalid_argument("request has no user"));
    }
    if let Some(run) = &peer.command {
        let _ = run.who.set(Who {
            user: c.user.clone(),
            workspace: c.workspace.clone(),
            host: c.host.clone(),
        });
    }
    Ok(Caller {
        user: c.user,
        workspace: c.workspace,
        host: c.host,
        address: peer.address,
        force: c.force,
    })
}
