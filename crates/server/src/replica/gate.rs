//! The gate in front of a replica's API: every RPC that writes metadata is refused (naming the
//! primary) or, with `--forward-writes`, sent on to the primary unchanged; reads (and the have
//! list updates a replica keeps itself) pass through, except that a forwarding replica also
//! forwards reads of the opened-files state. The RPC lists below are the one place that says
//! which RPC writes; a test checks they cover every RPC in `keel.proto`.

use keel_metrics::wrap::{self, Around, GrpcService, ReplyFuture};
use keel_proto::v1 as pb;
use prost::Message;
use std::sync::Arc;
use tonic::body::Body;
use tonic::transport::Channel;
use tower_service::Service;

/// RPCs that change the primary's metadata (or, like `Checkpoint`, act on its journal).
pub(crate) const WRITE_RPCS: &[&str] = &[
    "CreateDepot",
    "SaveWorkspace",
    "DeleteWorkspace",
    "Open",
    "Move",
    "Revert",
    "Reopen",
    "SaveChange",
    "Submit",
    "Integrate",
    "ResolveDone",
    "Shelve",
    "DeleteShelved",
    "Unshelve",
    "Obliterate",
    "SaveLabel",
    "DeleteLabel",
    "Tag",
    "Labelsync",
    "SaveBranch",
    "DeleteBranch",
    "Checkpoint",
    "SaveTriggers",
    "Login",
    "Logout",
    "SetPassword",
    "SaveUser",
    "DeleteUser",
    "Configure",
    "SaveGroup",
    "DeleteGroup",
    "SaveProtections",
    "UpdateCounter",
];

/// RPCs a replica answers itself. `UpdateHave` writes only the replica's own have lists.
pub(crate) const READ_RPCS: &[&str] = &[
    "Info",
    "ListDepots",
    "GetWorkspace",
    "ListWorkspaces",
    "Opened",
    "ResolveList",
    "Resolved",
    "Integrated",
    "Sync",
    "UpdateHave",
    "Have",
    "HaveIfChanged",
    "Files",
    "Fstat",
    "Dirs",
    "Filelog",
    "Changes",
    "Describe",
    "Print",
    "Diff2",
    "GetLabel",
    "ListLabels",
    "GetBranch",
    "ListBranches",
    "Journal",
    "Content",
    "Verify",
    "GetTriggers",
    "LoginStatus",
    "GetUser",
    "ListUsers",
    "ListSettings",
    // A replica lists and terminates its own commands.
    "MonitorShow",
    "MonitorTerminate",
    // A replica keeps its own probe timings: they measure the replica.
    "ReportProbe",
    "GetGroup",
    "ListGroups",
    "GetProtections",
    "Protects",
    "GetCounter",
    "ListCounters",
    "Review",
    "Reviews",
    "Interchanges",
    "Cstat",
    "Sizes",
];

/// Reads of the opened-files state that a replica forwarding writes sends to the primary too:
/// forwarded writes change that state, and the same user's next command (`submit` after
/// `add`, `resolve` after `sync`) must see it at once, before the replica has applied it.
pub(crate) const FORWARDED_READS: &[&str] = &["Opened", "ResolveList", "Resolved"];

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
        // An RPC in neither list is treated as a write: a replica never guesses it is safe.
        let writes = WRITE_RPCS.contains(&method.as_str()) || !READ_RPCS.contains(&method.as_str());
        let forwarded_read = FORWARDED_READS.contains(&method.as_str());
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

#[cfg(test)]
mod tests {
    use super::{FORWARDED_READS, READ_RPCS, WRITE_RPCS};

    /// Every RPC in the proto is classified exactly once, so a new RPC cannot reach a
    /// replica's store unclassified.
    #[test]
    fn every_rpc_is_either_a_read_or_a_write() {
        let rpcs = crate::proto_rpcs();
        assert!(rpcs.len() > 40, "{rpcs:?}");
        for rpc in &rpcs {
            let reads = READ_RPCS.contains(rpc);
            let writes = WRITE_RPCS.contains(rpc);
            assert!(reads ^ writes, "{rpc} must be in exactly one list");
        }
        for read in FORWARDED_READS {
            assert!(READ_RPCS.contains(read), "{read} must be a read");
        }
        for listed in READ_RPCS.iter().chain(WRITE_RPCS) {
            assert!(rpcs.contains(listed), "{listed} is no RPC of keel.proto");
        }
    }
}
