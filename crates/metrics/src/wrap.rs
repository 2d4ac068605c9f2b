//! The tower wrapper the layers around Keel's gRPC API are built on (the metrics' `Instrument`
//! here; the server's command observer and replica gate): a service that hands each call, with
//! the service it wraps, to an [`Around`], which does what it must before and after.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tonic::body::Body;
use tonic::server::NamedService;
use tower_service::Service;

/// What a gRPC service answers a call with (its errors travel inside the reply).
pub type Reply = Result<http::Response<Body>, Infallible>;

/// A reply to come.
pub type ReplyFuture = Pin<Box<dyn Future<Output = Reply> + Send>>;

/// A gRPC service as tonic builds one, that a thread may own.
pub trait GrpcService:
    Service<
        http::Request<Body>,
        Response = http::Response<Body>,
        Error = Infallible,
        Future: Send + 'static,
    > + Send
    + 'static
{
}

impl<S> GrpcService for S where
    S: Service<
            http::Request<Body>,
            Response = http::Response<Body>,
            Error = Infallible,
            Future: Send + 'static,
        > + Send
        + 'static
{
}

/// What a wrapper does with one call of the service it wraps.
pub trait Around {
    /// Answers `req`, calling `inner` (ready to take a call) or not.
    fn call<S: GrpcService>(&self, inner: &mut S, req: http::Request<Body>) -> ReplyFuture;
}

/// `inner` wrapped by `around`: ready when `inner` is, and every call goes through `around`.
#[derive(Clone)]
pub struct Wrapped<S, A> {
    pub inner: S,
    pub around: A,
}

impl<S: NamedService, A> NamedService for Wrapped<S, A> {
    const NAME: &'static str = S::NAME;
}

impl<S: GrpcService, A: Around> Service<http::Request<Body>> for Wrapped<S, A> {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = ReplyFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> ReplyFuture {
        self.around.call(&mut self.inner, req)
    }
}

/// The method a call names: the last segment of its path (`/keel.v1.Keel/Sync` → `Sync`).
pub fn method(req: &http::Request<Body>) -> &str {
    req.uri().path().rsplit('/').next().unwrap_or("")
}
