//! Routes each HTTP/2 request: the RPCs the proxy answers itself go to their handlers; every
//! other request is forwarded to the target unchanged, so an RPC added to the server passes
//! through without proxy code.

use crate::Proxy;
use crate::handlers::{FillSvc, InfoSvc};
use keel_core::error_chain;
use keel_proto::v1 as pb;
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::{BoxFuture, Service, http};
use tonic_prost::ProstCodec;

#[derive(Clone)]
pub struct Router(pub Arc<Proxy>);

impl<B> Service<http::Request<B>> for Router
where
    B: tonic::codegen::Body<Data = tonic::codegen::Bytes> + Send + 'static,
    B::Error: Into<tonic::codegen::StdError> + Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Infallible>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let proxy = self.0.clone();
        let req = req.map(Body::new);
        let max = Some(proxy.config.max_message_bytes);
        Box::pin(async move {
            Ok(match req.uri().path() {
                "/keel.v1.Keel/Sync" => {
                    let svc = FillSvc::<pb::SyncRequest>::new(proxy);
                    grpc(max).server_streaming(svc, req).await
                }
                "/keel.v1.Keel/Print" => {
                    let svc = FillSvc::<pb::FilesRequest>::new(proxy);
                    grpc(max).server_streaming(svc, req).await
                }
                "/keel.v1.Keel/Info" => grpc(max).unary(InfoSvc(proxy), req).await,
                _ => forward(&proxy, req).await,
            })
        })
    }
}

/// A gRPC codec for one RPC's request and reply types, with the configured size limits.
fn grpc<T, U>(max: Option<usize>) -> tonic::server::Grpc<ProstCodec<T, U>>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    tonic::server::Grpc::new(ProstCodec::default()).apply_max_message_size_config(max, max)
}

/// Sends the request to the target as it came (naming its client, `upstream::name_client`)
/// and hands back its response.
async fn forward(proxy: &Proxy, mut req: http::Request<Body>) -> http::Response<Body> {
    crate::upstream::name_client(&mut req, &proxy.source.upstream);
    let addr = &proxy.source.upstream.addr;
    let mut channel = proxy.source.upstream.channel.clone();
    let ready = std::future::poll_fn(|cx| channel.poll_ready(cx)).await;
    let answered = match ready {
        Ok(()) => channel.call(req).await,
        Err(e) => Err(e),
    };
    answered.unwrap_or_else(|e| {
        let reason = error_chain(&e);
        tracing::debug!(target = %addr, %reason, "forwarding failed");
        Status::unavailable(format!(
            "keel proxy: target {addr} is unavailable: {reason}"
        ))
        .into_http()
    })
}
