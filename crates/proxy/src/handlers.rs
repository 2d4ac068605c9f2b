//! The RPCs the proxy answers itself: Sync and Print (content from the cache) and Info (the
//! target's answer plus the proxy's counters). Everything else is forwarded (`router.rs`).

use crate::Proxy;
use crate::pipeline;
use crate::stats::Stats;
use crate::upstream::{Asker, Upstream};
use keel_proto::v1 as pb;
use std::marker::PhantomData;
use std::sync::Arc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::codegen::BoxFuture;
use tonic::{Request, Response, Status, Streaming};

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

/// A request whose reply carries file content the proxy serves from its cache (Sync, Print).
pub trait Fills: prost::Message + Default + Send + 'static {
    type Reply: pipeline::Carries;
    fn caller(&self) -> Option<pb::Caller>;
    /// Whether the caller asked for records only (another proxy does).
    fn records_only(&self) -> bool;
    /// The request as the proxy sends it on: records only, the content left to the cache.
    fn for_target(self) -> Self;
    /// Sends it to the target.
    fn forward<'a>(
        target: &'a Upstream,
        caller: &'a Asker,
        req: Self,
    ) -> impl Future<Output = Result<Streaming<Self::Reply>, Status>> + Send + 'a;
}

impl Fills for pb::SyncRequest {
    type Reply = pb::SyncMessage;
    fn caller(&self) -> Option<pb::Caller> {
        self.caller.clone()
    }
    fn records_only(&self) -> bool {
        self.content_by_digest
    }
    fn for_target(self) -> Self {
        pb::SyncRequest {
            content_by_digest: true,
            ..self
        }
    }
    fn forward<'a>(
        target: &'a Upstream,
        caller: &'a Asker,
        req: Self,
    ) -> impl Future<Output = Result<Streaming<Self::Reply>, Status>> + Send + 'a {
        target.sync(caller, req)
    }
}

impl Fills for pb::FilesRequest {
    type Reply = pb::ContentMessage;
    fn caller(&self) -> Option<pb::Caller> {
        self.caller.clone()
    }
    fn records_only(&self) -> bool {
        self.content_by_digest
    }
    fn for_target(self) -> Self {
        pb::FilesRequest {
            content_by_digest: true,
            ..self
        }
    }
    fn forward<'a>(
        target: &'a Upstream,
        caller: &'a Asker,
        req: Self,
    ) -> impl Future<Output = Result<Streaming<Self::Reply>, Status>> + Send + 'a {
        target.print(caller, req)
    }
}

/// Sync or Print (`R`): the target's records, filled from the cache.
pub struct FillSvc<R>(Arc<Proxy>, PhantomData<fn() -> R>);

impl<R> FillSvc<R> {
    pub fn new(proxy: Arc<Proxy>) -> FillSvc<R> {
        FillSvc(proxy, PhantomData)
    }
}

impl<R: Fills> tonic::server::ServerStreamingService<R> for FillSvc<R> {
    type Response = R::Reply;
    type ResponseStream = Reply<R::Reply>;
    type Future = BoxFuture<Response<Self::ResponseStream>, Status>;

    fn call(&mut self, req: Request<R>) -> Self::Future {
        let proxy = self.0.clone();
        Box::pin(async move {
            let caller = Asker::of(&req, req.get_ref().caller(), &proxy.source.upstream);
            let req = req.into_inner();
            // A caller that asked for records only (another proxy) gets them unfilled.
            let fill = !req.records_only();
            let upstream = R::forward(&proxy.source.upstream, &caller, req.for_target()).await?;
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
