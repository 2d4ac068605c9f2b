//! The proxy's client of its target: the calls it makes itself (Info, Sync, Print, Content)
//! and the wording of a target that cannot be reached.

use keel_proto::v1 as pb;
use keel_proto::v1::keel_client::KeelClient;
use std::time::Duration;
use tonic::metadata::AsciiMetadataValue;
use tonic::transport::Channel;
use tonic::{Code, Request, Status, Streaming};

/// The metadata key a login ticket travels in (as the server's `identity.rs` reads it).
pub const TICKET_METADATA: &str = "keel-ticket";

/// The metadata key the client's address travels in when the proxy forwards its request
/// (believed by the server only beside a service user's ticket under
/// [`FORWARDER_METADATA`]; as the server's `identity.rs` reads it).
pub const CLIENT_ADDRESS_METADATA: &str = "keel-client-address";

/// The metadata key the proxy's service-user ticket travels in beside the client's address.
pub const FORWARDER_METADATA: &str = "keel-forwarder-ticket";

/// Who a call to the target is made for: the client's caller and the ticket it presented,
/// passed on unchanged, and the client's address as the proxy saw it.
#[derive(Clone, Debug, Default)]
pub struct Asker {
    pub caller: Option<pb::Caller>,
    pub ticket: Option<AsciiMetadataValue>,
    /// The client's address and the proxy's service-user ticket vouching for it.
    pub forwarded: Option<(AsciiMetadataValue, AsciiMetadataValue)>,
}

impl Asker {
    /// The caller and ticket of a client's request; with a service user, its address too.
    pub fn of<T>(req: &Request<T>, caller: Option<pb::Caller>, upstream: &Upstream) -> Asker {
        let client = req.remote_addr().map(|a| a.ip());
        Asker {
            caller,
            ticket: req.metadata().get(TICKET_METADATA).cloned(),
            forwarded: upstream.vouch(client),
        }
    }

    fn request<T>(&self, message: T) -> Request<T> {
        let mut req = Request::new(message);
        if let Some(ticket) = &self.ticket {
            req.metadata_mut().insert(TICKET_METADATA, ticket.clone());
        }
        if let Some((address, ticket)) = &self.forwarded {
            let metadata = req.metadata_mut();
            metadata.insert(CLIENT_ADDRESS_METADATA, address.clone());
            metadata.insert(FORWARDER_METADATA, ticket.clone());
        }
        req
    }
}

/// Names a forwarded request's client for the target: whatever the client put under the
/// forwarding keys is dropped, and with a service user the client's address (as the proxy's
/// connection sees it) goes beside that user's ticket.
pub fn name_client<B>(req: &mut tonic::codegen::http::Request<B>, upstream: &Upstream) {
    let client = req
        .extensions()
        .get::<tonic::transport::server::TcpConnectInfo>()
        .and_then(|c| c.remote_addr)
        .map(|a| a.ip());
    let headers = req.headers_mut();
    headers.remove(CLIENT_ADDRESS_METADATA);
    headers.remove(FORWARDER_METADATA);
    use tonic::codegen::http::HeaderValue;
    if let Some((address, ticket)) = upstream.vouch(client)
        && let Ok(address) = HeaderValue::from_bytes(address.as_encoded_bytes())
        && let Ok(ticket) = HeaderValue::from_bytes(ticket.as_encoded_bytes())
    {
        headers.insert(CLIENT_ADDRESS_METADATA, address);
        headers.insert(FORWARDER_METADATA, ticket);
    }
}

/// The service user the proxy fetches content as (like p4's `serviceUser`), with its ticket.
#[derive(Clone, Debug)]
pub struct ServiceUser {
    pub user: String,
    pub ticket: AsciiMetadataValue,
}

#[derive(Clone)]
pub struct Upstream {
    /// `HOST:PORT` (or `ssl:HOST:PORT`) of the target, as given.
    pub addr: String,
    pub channel: Channel,
    client: KeelClient<Channel>,
    /// Content fetches (shared by every client waiting for the content) go as this user;
    /// without one, as the client whose request started the fetch.
    service: Option<ServiceUser>,
    /// What the transport saw: an untrusted or changed certificate, a wrong protocol.
    observed: std::sync::Arc<keel_tls::Observed>,
}

impl Upstream {
    /// A channel to `addr` that connects on first use and reconnects after the target
    /// comes back; an `ssl:` target must present the certificate `trust_file` holds for it.
    pub fn new(
        addr: &str,
        trust_file: Option<&std::path::Path>,
        connect_timeout: Duration,
        max_message: usize,
        service: Option<ServiceUser>,
    ) -> Result<Upstream, String> {
        let target = keel_tls::ServerAddr::parse(addr);
        let trust = match (target.tls, trust_file) {
            (true, Some(path)) => keel_tls::TrustFile::load(path)
                .map_err(|e| e.to_string())?
                .mode(&target.host_port),
            _ => keel_tls::TrustMode::Unknown,
        };
        let dialer = keel_tls::Dialer::new(target, trust, connect_timeout);
        let endpoint = dialer.endpoint().map_err(|e| e.to_string())?;
        let channel = dialer.connect_lazy(endpoint);
        let client = KeelClient::new(channel.clone())
            .max_decoding_message_size(max_message)
            .max_encoding_message_size(max_message);
        Ok(Upstream {
            addr: addr.to_string(),
            channel,
            client,
            service,
            observed: dialer.observed(),
        })
    }

    /// The client address `client` and the service user's ticket vouching for it, when the
    /// proxy has a service user.
    pub fn vouch(
        &self,
        client: Option<std::net::IpAddr>,
    ) -> Option<(AsciiMetadataValue, AsciiMetadataValue)> {
        let service = self.service.as_ref()?;
        let address = client?.to_string().parse().ok()?;
        Some((address, service.ticket.clone()))
    }

    /// Why the transport refused the target (trust, wrong protocol), if it did.
    pub fn refused(&self) -> Option<&keel_tls::ConnectError> {
        self.observed.failure()
    }

    /// A status from a call to the target, with transport failures naming the target.
    pub fn status(&self, status: Status) -> Status {
        match self.refused() {
            Some(why) if matches!(status.code(), Code::Unavailable | Code::Unknown) => {
                Status::unavailable(format!("keel proxy: target {}: {why}", self.addr))
            }
            _ => unreachable_status(&self.addr, status),
        }
    }

    pub async fn info(&self, req: pb::InfoRequest) -> Result<pb::InfoReply, Status> {
        self.info_unmapped(req).await.map_err(|s| self.status(s))
    }

    /// `Info` with the transport's own status on failure (the start-up probe words it).
    pub async fn info_unmapped(&self, req: pb::InfoRequest) -> Result<pb::InfoReply, Status> {
        let mut client = self.client.clone();
        client.info(req).await.map(|r| r.into_inner())
    }

    pub async fn sync(
        &self,
        asker: &Asker,
        req: pb::SyncRequest,
    ) -> Result<Streaming<pb::SyncMessage>, Status> {
        let mut client = self.client.clone();
        client
            .sync(asker.request(req))
            .await
            .map(|r| r.into_inner())
            .map_err(|s| self.status(s))
    }

    pub async fn print(
        &self,
        asker: &Asker,
        req: pb::FilesRequest,
    ) -> Result<Streaming<pb::ContentMessage>, Status> {
        let mut client = self.client.clone();
        client
            .print(asker.request(req))
            .await
            .map(|r| r.into_inner())
            .map_err(|s| self.status(s))
    }

    pub async fn content(
        &self,
        caller: Asker,
        digest: &str,
        of: Option<(String, u32)>,
    ) -> Result<Streaming<pb::ContentMessage>, Status> {
        let mut client = self.client.clone();
        let asker = match &self.service {
            Some(s) => Asker {
                caller: Some(pb::Caller {
                    user: s.user.clone(),
                    workspace: String::new(),
                    host: "keel-proxy".to_string(),
                    force: false,
                }),
                ticket: Some(s.ticket.clone()),
                forwarded: None,
            },
            None => caller,
        };
        let (depot_file, rev) = of.unwrap_or_default();
        let req = pb::ContentRequest {
            caller: asker.caller.clone(),
            digest: digest.to_string(),
            depot_file,
            rev,
        };
        client
            .content(asker.request(req))
            .await
            .map(|r| r.into_inner())
            .map_err(|s| self.status(s))
    }
}

/// Transport failures (the target down, not speaking gRPC) become UNAVAILABLE naming the
/// target; the target's own answers pass unchanged.
pub fn unreachable_status(addr: &str, status: Status) -> Status {
    let from_transport =
        matches!(status.code(), Code::Unavailable | Code::Unknown) && status.details().is_empty();
    if from_transport {
        Status::unavailable(format!(
            "keel proxy: target {addr} is unavailable: {}",
            status.message()
        ))
    } else {
        status
    }
}
