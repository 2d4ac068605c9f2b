//! The gate in front of a replica's API: every RPC that writes metadata is refused (naming the
//! primary) or, with `--forward-writes`, sent on to the primary unchanged; reads (and the have
//! list updates a replica keeps itself) pass through, except that a forwarding replica also
//! forwards reads of the opened-files state. What each RPC does comes from its row in the
//! service's command table (`keel_service::command`), the one place that says which command
//! writes.

use keel_metrics::wrap::{self, Around, GrpcService, ReplyFuture};
use keel_proto::v1 as pb;
use keel_service::command::{self, Kind};
use prost::Message;
use std::sync::Arc;
use tonic::body::Body;
use tonic::transport::Channel;
use tower_service::Service;

/// What the gate does with writes.
pub(crate) struct Mode {
    pub(crate) primary: String,
    /// A channel to the primary when writes are forwarded.
    pub(crate) forward: Option<Channel>,
    /// The replica's service-user ticket, sent with each forwarded request beside the
    /// client's address so that the primary sees where the client is; without one the
    /// primary sees the replica's address.
    pub(crate) forwarder: Option<tonic::metadata::AsciiMetadataValue>,
}

/// Names the client's address (as this server's connection sees it) for the primary, beside
/// the forwarder's ticket; whatever the client itself put under those keys is dropped.
pub(crate) fn name_client(
    req: &mut http::Request<Body>,
    forwarder: Option<&tonic::metadata::AsciiMetadataValue>,
) {
    use crate::identity::{CLIENT_ADDRESS_METADATA, FORWARDER_METADATA};
    let client = req
        .extensions()
        .get::<tonic::transport::server::TcpConnectInfo>()
        .and_then(|c| c.remote_addr)
        .map(|a| a.ip());
    let headers = req.headers_mut();
    headers.remove(CLIENT_ADDRESS_METADATA);
    headers.remove(FORWARDER_METADATA);
    if let (Some(ticket), Some(client)) = (forwarder, client)
        && let Ok(value) = http::HeaderValue::from_str(&client.to_string())
        && let Ok(ticket) = http::HeaderValue::from_bytes(ticket.as_encoded_bytes())
    {
        headers.insert(CLIENT_ADDRESS_METADATA, value);
        headers.insert(FORWARDER_METADATA, ticket);
    }
}

/// Wraps the API service; without a mode (a primary) everything passes.
#[derive(Clone)]
pub(crate) struct Gate {
    pub(crate) mode: Option<Arc<Mode>>,
}

impl Around for Gate {
    fn call<S: GrpcService>(&self, inner: &mut S, req: http::Request<Body>) -> ReplyFuture {
        if self.mode.is_none() {
            // A primary: every call is served here.
            return Box::pin(inner.call(req));
        }
        let method = wrap::method(&req).to_string();
        // An RPC with no row is treated as a write: a replica never guesses it is safe.
        let kind = command::find(&method).map_or(Kind::Write, |c| c.kind);
        let writes = kind == Kind::Write;
        let forwarded_read = kind == Kind::ReadOpened;
        let Some(mode) = self
            .mode
            .clone()
            .filter(|m| writes || (forwarded_read && m.forward.is_some()))
        else {
            return Box::pin(inner.call(req));
        };
        match mode.forward.clone() {
            Some(mut channel) => Box::pin(async move {
                let mut req = req;
                name_client(&mut req, mode.forwarder.as_ref());
                let forwarded = async {
                    std::future::poll_fn(|cx| channel.poll_ready(cx)).await?;
                    channel.call(req).await
                };
                Ok(forwarded.await.unwrap_or_else(|e| {
                    tonic::Status::unavailable(format!(
                        "{method}: cannot forward it to the primary {}: {e}",
                        mode.primary
                    ))
                    .into_http()
                }))
            }),
            None => {
                let detail = pb::ErrorDetail {
                    reason: pb::ErrorReason::ReadOnlyReplica as i32,
                    ..Default::default()
                };
                let status = tonic::Status::with_details(
                    tonic::Code::FailedPrecondition,
                    format!(
                        "{method}: this server is a read-only replica of {}: send writes to the \
                         primary (or start the replica with --forward-writes)",
                        mode.primary
                    ),
                    detail.encode_to_vec().into(),
                );
                Box::pin(std::future::ready(Ok(status.into_http())))
            }
        }
    }
}
