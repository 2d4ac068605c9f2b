//! `Instrument`: a tower service around a gRPC service that counts each call, times it to the
//! last byte of its reply (a streamed sync ends when its stream does), and reads its gRPC code
//! from the reply's headers or trailers, and counts the bytes of its request and reply bodies
//! (gRPC-framed messages, as on the wire before HTTP/2 framing). A call whose client goes away
//! first ends as `cancelled`.

use crate::rpc::RpcMetrics;
use crate::wrap::{Around, GrpcService, ReplyFuture};
use http_body::{Body as HttpBody, Frame};
use hyper::body::Buf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;
use tonic::body::Body;

/// Wraps a tonic service (as [`Wrapped`](crate::wrap::Wrapped) `{ inner, around: Instrument { .. } }`); without
/// metrics it passes every call through untouched.
#[derive(Clone)]
pub struct Instrument {
    pub metrics: Option<Arc<RpcMetrics>>,
}

impl Around for Instrument {
    fn call<S: GrpcService>(&self, inner: &mut S, req: http::Request<Body>) -> ReplyFuture {
        let Some(metrics) = self.metrics.clone() else {
            return Box::pin(inner.call(req));
        };
        let rpc = metrics.label(req.uri().path());
        metrics.started(rpc);
        let received = Arc::new(AtomicU64::new(0));
        let req = req.map(|body| {
            Body::new(Counted {
                inner: body,
                bytes: received.clone(),
            })
        });
        // Dropped with the future when the client goes away before the reply starts.
        let mut call = InFlight {
            metrics,
            rpc,
            started: Instant::now(),
            code: None,
            done: false,
            received,
            sent: 0,
        };
        let reply = inner.call(req);
        Box::pin(async move {
            let response = reply.await?;
            call.code = grpc_code(response.headers());
            if response.body().is_end_stream() {
                // A reply of headers only (an error before any message): ended now.
                call.end();
                return Ok(response);
            }
            Ok(response.map(|body| Body::new(Observed { inner: body, call })))
        })
    }
}

/// The gRPC code a header map (the reply's headers or trailers) carries, if any.
fn grpc_code(headers: &http::HeaderMap) -> Option<tonic::Code> {
    headers
        .get("grpc-status")
        .map(|v| tonic::Code::from_bytes(v.as_bytes()))
}

/// One call being answered: recorded exactly once, when its reply ends or is dropped.
struct InFlight {
    metrics: Arc<RpcMetrics>,
    rpc: &'static str,
    started: Instant,
    /// The code seen so far (headers, then trailers).
    code: Option<tonic::Code>,
    done: bool,
    /// Request body bytes read so far.
    received: Arc<AtomicU64>,
    /// Reply body bytes sent so far.
    sent: u64,
}

impl InFlight {
    fn end(&mut self) {
        if !self.done {
            self.done = true;
            let seconds = self.started.elapsed().as_secs_f64();
            let received = self.received.load(Ordering::Relaxed);
            self.metrics
                .ended(self.rpc, seconds, self.code, (received, self.sent));
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.done {
            // Neither the reply's end nor its trailers were reached: the client went away.
            self.code = Some(tonic::Code::Cancelled);
            self.end();
        }
    }
}

/// A reply body that ends its call when its last frame (the trailers) has been sent.
struct Observed<B> {
    inner: B,
    call: InFlight,
}

impl<B: HttpBody + Unpin> HttpBody for Observed<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let frame = Pin::new(&mut this.inner).poll_frame(cx);
        match &frame {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.call.sent += data.remaining() as u64;
                }
                if let Some(code) = frame.trailers_ref().and_then(grpc_code) {
                    this.call.code = Some(code);
                    this.call.end();
                }
            }
            Poll::Ready(Some(Err(_))) => {
                this.call.code.get_or_insert(tonic::Code::Internal);
                this.call.end();
            }
            Poll::Ready(None) => this.call.end(),
            Poll::Pending => {}
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A request body that counts the bytes read from it (the gRPC-framed messages).
struct Counted<B> {
    inner: B,
    bytes: Arc<AtomicU64>,
}

impl<B: HttpBody + Unpin> HttpBody for Counted<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.get_mut();
        let frame = Pin::new(&mut this.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &frame
            && let Some(data) = frame.data_ref()
        {
            this.bytes
                .fetch_add(data.remaining() as u64, Ordering::Relaxed);
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}
