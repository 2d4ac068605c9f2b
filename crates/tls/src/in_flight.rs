//! The tower layer that marks each request in flight on its connection, from its arrival to
//! the last frame (or the drop) of its reply body, so that the idle timeout never closes a
//! connection with a call running (a long sync, a replica's journal stream, a `monitor`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http_body::{Body as HttpBody, Frame, SizeHint};
use tonic::body::Body;
use tonic::transport::server::TcpConnectInfo;
use tower_service::Service;

use crate::limits::{ConnTracker, RequestGuard};

/// Wraps a server's services (`Server::builder().layer(..)`) for `tracker`'s listener.
#[derive(Clone)]
pub struct InFlightLayer {
    pub tracker: Arc<ConnTracker>,
}

impl<S> tower_layer::Layer<S> for InFlightLayer {
    type Service = InFlight<S>;

    fn layer(&self, inner: S) -> InFlight<S> {
        InFlight {
            inner,
            tracker: self.tracker.clone(),
        }
    }
}

/// A service whose calls are marked in flight on their connection.
#[derive(Clone)]
pub struct InFlight<S> {
    inner: S,
    tracker: Arc<ConnTracker>,
}

impl<S> Service<http::Request<Body>> for InFlight<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let guard = req
            .extensions()
            .get::<TcpConnectInfo>()
            .and_then(TcpConnectInfo::remote_addr)
            .and_then(|peer| self.tracker.activity(peer))
            .map(|activity| activity.begin());
        let reply = self.inner.call(req);
        Box::pin(async move {
            let response = reply.await?;
            Ok(match guard {
                None => response,
                Some(guard) => response.map(|inner| {
                    Body::new(Tracked {
                        inner,
                        guard: Some(guard),
                    })
                }),
            })
        })
    }
}

/// A reply body that keeps its request in flight until it ends or is dropped.
struct Tracked {
    inner: Body,
    guard: Option<RequestGuard>,
}

impl HttpBody for Tracked {
    type Data = <Body as HttpBody>::Data;
    type Error = <Body as HttpBody>::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None) | Poll::Ready(Some(Err(_)))) {
            this.guard = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
