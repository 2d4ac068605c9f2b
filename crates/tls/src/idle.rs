//! The idle timeout: an accepted connection wrapped with its place under the caps and a timer.
//! When the timer fires and the connection has had no request in flight for the listener's
//! `idle_timeout`, its next read ends (EOF), so the HTTP server closes it. Bytes alone do not
//! count as activity on HTTP/2 (keepalive pings and a bare preface do not keep a connection);
//! requests do, as [`crate::InFlightLayer`] marks them. On HTTP/1.1 (the metrics listener)
//! bytes read are requests.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use crate::limits::ConnGuard;

/// A connection under a listener's limits.
pub struct Limited<S> {
    pub(crate) inner: S,
    guard: ConnGuard,
    timer: Pin<Box<Sleep>>,
    reads_are_requests: bool,
    closed: bool,
}

impl<S> Limited<S> {
    pub(crate) fn new(inner: S, guard: ConnGuard, reads_are_requests: bool) -> Limited<S> {
        let idle = guard.tracker().limits.idle_timeout;
        Limited {
            inner,
            guard,
            timer: Box::pin(tokio::time::sleep(idle)),
            reads_are_requests,
            closed: false,
        }
    }

    /// The wrapped stream.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// Whether the connection has been idle too long: polls the timer (registering the
    /// waker) and re-arms it while the connection is busy or was busy recently.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> bool {
        let idle = self.guard.tracker().limits.idle_timeout;
        loop {
            if self.timer.as_mut().poll(cx).is_pending() {
                return false;
            }
            let quiet = self.guard.activity.idle_for();
            if quiet >= idle {
                return true;
            }
            // Busy (a request in flight: check again a whole timeout later) or busy recently.
            let wait = match quiet.is_zero() {
                true => idle,
                false => idle - quiet,
            };
            self.timer.as_mut().reset(Instant::now() + wait);
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Limited<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.closed {
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if this.reads_are_requests && buf.filled().len() > before {
                    this.guard.activity.read_is_request();
                }
                Poll::Ready(result)
            }
            Poll::Pending => {
                if !this.poll_idle(cx) {
                    return Poll::Pending;
                }
                let tracker = this.guard.tracker();
                tracker.idle_closed();
                tracing::debug!(
                    listener = tracker.name,
                    timeout_ms = tracker.limits.idle_timeout.as_millis() as u64,
                    "closing a connection idle past idle_timeout_ms"
                );
                this.closed = true;
                // End of input: the HTTP server ends the connection and drops it.
                Poll::Ready(Ok(()))
            }
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Limited<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
