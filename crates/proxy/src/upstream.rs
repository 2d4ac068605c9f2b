//! The proxy's client of its target: the calls it makes itself (Info, Sync, Print, Content)
//! and the wording of a target that cannot be reached.

use keel_proto::v1 as pb;
use keel_proto::v1::keel_client::KeelClient;
use std::time::Duration;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status, Streaming};

#[derive(Clone)]
pub struct Upstream {
    /// `HOST:PORT` of the target, as given.
    pub addr: String,
    pub channel: Channel,
    client: KeelClient<Channel>,
}

impl Upstream {
    /// A channel to `addr` that connects on first use and reconnects after the target
    /// comes back.
    pub fn new(
        addr: &str,
        connect_timeout: Duration,
        max_message: usize,
    ) -> Result<Upstream, String> {
        let endpoint = Endpoint::from_shared(format!("http://{addr}"))
            .map_err(|e| e.to_string())?
            .tcp_nodelay(true)
            .connect_timeout(connect_timeout);
        let channel = endpoint.connect_lazy();
        let client = KeelClient::new(channel.clone())
            .max_decoding_message_size(max_message)
            .max_encoding_message_size(max_message);
        Ok(Upstream {
            addr: addr.to_string(),
            channel,
            client,
        })
    }

    /// A status from a call to the target, with transport failures naming the target.
    pub fn status(&self, status: Status) -> Status {
        unreachable_status(&self.addr, status)
    }

    pub async fn info(&self, req: pb::InfoRequest) -> Result<pb::InfoReply, Status> {
        self.info_unmapped(req).await.map_err(|s| self.status(s))
    }

    /// `Info` with the transport's own status on failure (the start-up probe words it).
    pub async fn info_unmapped(&self, req: pb::InfoRequest) -> Result<pb::InfoReply, Status> {
        let mut client = self.client.clone();
        client.info(req).await.map(|r| r.into_inner())
    }

    pub async fn sync(&self, req: pb::SyncRequest) -> Result<Streaming<pb::SyncMessage>, Status> {
        let mut client = self.client.clone();
        client
            .sync(req)
            .await
            .map(|r| r.into_inner())
            .map_err(|s| self.status(s))
    }

    pub async fn print(
        &self,
        req: pb::FilesRequest,
    ) -> Result<Streaming<pb::ContentMessage>, Status> {
        let mut client = self.client.clone();
        client
            .print(req)
            .await
            .map(|r| r.into_inner())
            .map_err(|s| self.status(s))
    }

    pub async fn content(
        &self,
        caller: Option<pb::Caller>,
        digest: &str,
    ) -> Result<Streaming<pb::ContentMessage>, Status> {
        let mut client = self.client.clone();
        let req = pb::ContentRequest {
            caller,
            digest: digest.to_string(),
        };
        client
            .content(req)
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
