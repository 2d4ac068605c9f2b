//! The RPCs the proxy answers itself: Sync and Print (content from the cache) and Info (the
//! target's answer plus the proxy's counters). Everything else is forwarded (`router.rs`).

use crate::Proxy;
use crate::pipeline;
use crate::stats::Stats;
use crate::upstream::Asker;
use keel_proto::v1 as pb;
use std::sync::Arc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::codegen::BoxFuture;
use tonic::{Request, Response, Status};

type Reply<M> = ReceiverStream<Result<M, Status>>;

/// The client's stream from the target's records: filled from the cache, or (for a caller that
/// asked for records only, such as another proxy) passed on unfilled.
fn answer<M: pipeline::Carries>(
    proxy: &Proxy,
    caller: Asker,
    upstream: tonic::Streaming<M>,
    fill: bool,
) -> Reply<M> {
    if fill {
        pipeline::fill(proxy.source.clone(), caller, upstream, &proxy.config)
    } else {
        pipeline::pass(upstream, &proxy.source.upstream.addr, &proxy.config)
    }
}

pub struct SyncSvc(pub Arc<Proxy>);

impl tonic::server::ServerStreamingService<pb::SyncRequest> for SyncSvc {
    type Response = pb::SyncMessage;
    type ResponseStream = Reply<pb::SyncMessage>;
    type Future = BoxFuture<Response<Self::ResponseStream>, Status>;

    fn call(&mut self, req: Request<pb::SyncRequest>) -> Self::Future {
        let proxy = self.0.clone();
        Box::pin(async move {
            let caller = Asker::of(&req, req.get_ref().caller.clone());
            let req = req.into_inner();
            // A caller that asked for records only (another proxy) gets them unfilled.
            let fill = !req.content_by_digest;
            let upstream = proxy
                .source
                .upstream
                .sync(
                    &caller,
                    pb::SyncRequest {
                        content_by_digest: true,
                        ..req
                    },
                )
                .await?;
            Ok(Response::new(answer(&proxy, caller, upstream, fill)))
        })
    }
}

pub struct PrintSvc(pub Arc<Proxy>);

impl tonic::server::ServerStreamingService<pb::FilesRequest> for PrintSvc {
    type Response = pb::ContentMessage;
    type ResponseStream = Reply<pb::ContentMessage>;
    type Future = BoxFuture<Response<Self::ResponseStream>, Status>;

    fn call(&mut self, req: Request<pb::FilesRequest>) -> Self::Future {
        let proxy = self.0.clone();
        Box::pin(async move {
            let caller = Asker::of(&req, req.get_ref().caller.clone());
            let req = req.into_inner();
            let fill = !req.content_by_digest;
            let upstream = proxy
                .source
                .upstream
                .print(
                    &caller,
                    pb::FilesRequest {
                        content_by_digest: true,
                        ..req
                    },
                )
                .await?;
            Ok(Response::new(answer(&proxy, caller, upstream, fill)))
        })
    }
}

pub struct InfoSvc(pub Arc<Proxy>);

impl tonic::server::UnaryService<pb::InfoRequest> for InfoSvc {
    type Response = pb::InfoReply;
    type Future = BoxFuture<Response<pb::InfoReply>, Status>;

    fn call(&mut self, req: Request<pb::InfoRequest>) -> Self::Future {
        let proxy = self.0.clone();
        Box::pin(async move {
            let mut reply = proxy.source.upstream.info(req.into_inner()).await?;
            // A proxy in front of another proxy reports the one nearest the client.
            reply.proxy = Some(proxy.info());
            Ok(Response::new(reply))
        })
    }
}

impl Proxy {
    /// The proxy's part of `keel info`.
    pub fn info(&self) -> pb::ProxyInfo {
        let stats = &self.source.stats;
        let usage = self.source.cache.usage();
        pb::ProxyInfo {
            address: self.addr.clone(),
            target: self.source.upstream.addr.clone(),
            cache_dir: self.source.cache.dir().display().to_string(),
            cache_files: usage.files,
            cache_bytes: usage.bytes,
            cache_limit_bytes: self.source.cache.limit(),
            hits: Stats::get(&stats.hits),
            misses: Stats::get(&stats.misses),
            bytes_from_target: Stats::get(&stats.bytes_from_target),
            bytes_served: Stats::get(&stats.bytes_served),
            dropped_corrupt: Stats::get(&stats.dropped_corrupt),
        }
    }
}
