//! The tower layer that sees every RPC start and end: the outermost wrapper of the API, so it
//! sees also what the replica gate refuses or forwards.
//!
//! It registers the command, hands its [`Running`] to the handler (as a request extension, which
//! `identity::Peer` reads to fill in who and the arguments, and as the task-local [`CURRENT`],
//! which the blocking-pool bridges in `streams.rs` enter on their threads), counts the bytes
//! of the request and response bodies, and ends the command when its response body has ended
//! (a streamed answer ends long after its handler returned) or was dropped (the client went
//! away). A terminated command's pending handler is dropped and its streams end with
//! `CANCELLED`; its writes were already refused by the store's writer.

use super::registry::{Registry, Running};
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use keel_metrics::wrap::{self, Around, GrpcService, ReplyFuture};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use tonic::Status;
use tonic::body::Body;

tokio::task_local! {
    /// The command the current task serves.
    pub(crate) static CURRENT: Arc<Running>;
}

/// The current task's command's counters, for a thread that works for it.
pub(crate) fn current_counters() -> Option<Arc<keel_store::command::CommandCounters>> {
    CURRENT.try_with(|r| r.counters.clone()).ok()
}

/// Wraps the API (and its gate) and observes every RPC.
#[derive(Clone)]
pub(crate) struct Observe {
    pub(crate) registry: Arc<Registry>,
}

impl Around for Observe {
    fn call<S: GrpcService>(&self, inner: &mut S, req: http::Request<Body>) -> ReplyFuture {
        // The command's name from its row in the table (a method with none keeps its own).
        let method = wrap::method(&req);
        let command = keel_service::command::find(method).map_or(method, |c| c.name);
        let command = command.to_string();
        let agent = req
            .headers()
            .get(http::header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        // At most 128 characters (`to_str` admits only visible ASCII: a byte each).
        let program = agent[..agent.len().min(128)].to_string();
        let run = self.registry.start(command, program);
        let (mut parts, body) = req.into_parts();
        parts.extensions.insert(run.clone());
        let req = http::Request::from_parts(
            parts,
            Body::new(RequestBody {
                inner: body,
                run: run.clone(),
            }),
        );
        let ending = Ending {
            run: run.clone(),
            registry: self.registry.clone(),
            ended: false,
        };
        let handler = CURRENT.scope(run.clone(), inner.call(req));
        Box::pin(async move {
            let response = Terminable {
                inner: Box::pin(handler),
                run,
            }
            .await?;
            let (parts, body) = response.into_parts();
            // A handler's error comes back as headers only (no body, no trailers).
            let head = Status::from_header_map(&parts.headers);
            Ok(http::Response::from_parts(
                parts,
                Body::new(ResponseBody {
                    inner: body,
                    ending: Some(ending),
                    head,
                }),
            ))
        })
    }
}

/// The message a terminated command's client receives.
fn terminated(run: &Running) -> Status {
    let by = run.terminated_by.get().map(String::as_str).unwrap_or("");
    Status::cancelled(format!(
        "command {} ({}) terminated by {by} (monitor terminate); nothing of it was committed \
         after that",
        run.id, run.command
    ))
}

/// The handler's future, dropped (and answered `CANCELLED`) once the command is terminated.
struct Terminable<F> {
    inner: Pin<Box<F>>,
    run: Arc<Running>,
}

impl<F> Future for Terminable<F>
where
    F: Future<Output = Result<http::Response<Body>, Infallible>>,
{
    type Output = Result<http::Response<Body>, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if self.run.is_terminated() {
            return Poll::Ready(Ok(terminated(&self.run).into_http()));
        }
        self.run.wake_on_terminate(cx.waker());
        self.inner.as_mut().poll(cx)
    }
}

/// Ends the command once: with the status given, or, when dropped unended, as cancelled by
/// the client.
struct Ending {
    run: Arc<Running>,
    registry: Arc<Registry>,
    ended: bool,
}

impl Ending {
    fn end(&mut self, status: Option<&Status>) {
        if self.ended {
            return;
        }
        self.ended = true;
        let outcome = status
            .filter(|s| s.code() != tonic::Code::Ok)
            .map(|s| (s.code(), s.message().to_string()));
        self.registry.end(&self.run, outcome);
    }
}

impl Drop for Ending {
    fn drop(&mut self) {
        if !self.ended {
            let gone = Status::cancelled("the client went away before the answer was complete");
            self.end(Some(&gone));
        }
    }
}

/// The request body, counted; it fails once the command is terminated (so a handler waiting
/// for the client's next message stops).
struct RequestBody {
    inner: Body,
    run: Arc<Running>,
}

impl HttpBody for RequestBody {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        if self.run.is_terminated() {
            return Poll::Ready(Some(Err(terminated(&self.run))));
        }
        self.run.wake_on_terminate(cx.waker());
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled
            && let Some(data) = frame.data_ref()
        {
            self.run
                .bytes_in
                .fetch_add(data.len() as u64, Ordering::Relaxed);
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

/// The response body, counted; the command ends with its trailers (or its end, or its drop).
/// Once the command is terminated it ends with `CANCELLED` trailers.
struct ResponseBody {
    inner: Body,
    ending: Option<Ending>,
    /// The status the response's headers carried (a handler's error).
    head: Option<Status>,
}

impl HttpBody for ResponseBody {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let Some(ending) = self.ending.as_ref() else {
            return Poll::Ready(None);
        };
        let run = ending.run.clone();
        if run.is_terminated() {
            let status = terminated(&run);
            let mut trailers = http::HeaderMap::new();
            let _ = status.add_header(&mut trailers);
            if let Some(mut ending) = self.ending.take() {
                ending.end(Some(&status));
            }
            return Poll::Ready(Some(Ok(Frame::trailers(trailers))));
        }
        run.wake_on_terminate(cx.waker());
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    run.bytes_out
                        .fetch_add(data.len() as u64, Ordering::Relaxed);
                    run.counters
                        .set_state(keel_store::command::CommandState::Sending);
                } else if let Some(trailers) = frame.trailers_ref() {
                    let status = Status::from_header_map(trailers);
                    if let Some(mut ending) = self.ending.take() {
                        ending.end(status.as_ref());
                    }
                }
            }
            Poll::Ready(Some(Err(status))) => {
                let status = status.clone();
                if let Some(mut ending) = self.ending.take() {
                    ending.end(Some(&status));
                }
            }
            Poll::Ready(None) => {
                let head = self.head.take();
                if let Some(mut ending) = self.ending.take() {
                    ending.end(head.as_ref());
                }
            }
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.ending.is_none() || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for ResponseBody {
    fn drop(&mut self) {
        // A trailers-only answer (a handler's error) may be dropped without being polled.
        if let (Some(mut ending), Some(head)) = (self.ending.take(), self.head.take()) {
            ending.end(Some(&head));
        }
    }
}
