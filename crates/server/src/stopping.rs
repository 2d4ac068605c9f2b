//! Stopping cleanly: SIGTERM or Ctrl-C sets one flag; the listener stops accepting, every
//! long-lived stream (a replica's journal follow) ends at once with an `UNAVAILABLE` status
//! saying the server is stopping, running commands get the grace period
//! (`ServerConfig::shutdown_grace_ms`) to finish, and what still runs after it is cancelled.

use crate::streams::ResponseStream;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::watch;
use tokio_stream::Stream;
use tonic::Status;

/// What a stream ended by a stop tells its client.
pub(crate) const STOPPING: &str =
    "the server is stopping (SIGTERM or Ctrl-C); connect again when it is back";

/// Resolves on the first SIGTERM or SIGINT. The handlers are installed when this is called
/// (not when first polled), so a signal that comes before the future is polled is not lost
/// and does not kill the process.
pub fn stop_requested() -> impl Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    async move {
        match (term, int) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            (Ok(mut one), Err(_)) | (Err(_), Ok(mut one)) => {
                one.recv().await;
            }
            (Err(_), Err(_)) => std::future::pending().await,
        }
    }
}

/// Resolves once `flag` is set; never when its sender is gone without setting it.
pub(crate) async fn stopped(mut flag: watch::Receiver<bool>) {
    if flag.wait_for(|stopping| *stopping).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// `inner`, ended with an `UNAVAILABLE` status ([`STOPPING`]) as soon as `flag` is set.
pub(crate) fn end_on_stop<T: Send + 'static>(
    inner: ResponseStream<T>,
    flag: watch::Receiver<bool>,
) -> ResponseStream<T> {
    Box::pin(EndOnStop {
        inner,
        stopped: Box::pin(stopped(flag)),
        done: false,
    })
}

struct EndOnStop<T: 'static> {
    inner: ResponseStream<T>,
    stopped: Pin<Box<dyn Future<Output = ()> + Send>>,
    done: bool,
}

impl<T: Send + 'static> Stream for EndOnStop<T> {
    type Item = Result<T, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        if self.stopped.as_mut().poll(cx).is_ready() {
            // Dropping the inner stream tells its producer the client is gone.
            self.done = true;
            self.inner = Box::pin(tokio_stream::empty());
            return Poll::Ready(Some(Err(Status::unavailable(STOPPING))));
        }
        let next = self.inner.as_mut().poll_next(cx);
        if let Poll::Ready(None) = next {
            self.done = true;
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_stream::StreamExt;

    #[tokio::test]
    async fn a_stream_ends_with_unavailable_when_the_flag_is_set() {
        let (tx, rx) = watch::channel(false);
        let endless: ResponseStream<u32> =
            Box::pin(tokio_stream::iter(0u32..).then(|i| async move {
                tokio::task::yield_now().await;
                Ok::<u32, Status>(i)
            }));
        let mut stream = end_on_stop(endless, rx);
        assert_eq!(stream.next().await.map(|r| r.ok()), Some(Some(0)));
        tx.send(true).unwrap();
        let ended = stream.next().await.unwrap().unwrap_err();
        assert_eq!(
            (ended.code(), ended.message()),
            (tonic::Code::Unavailable, STOPPING)
        );
        assert!(stream.next().await.is_none());
    }

    #[tokio::test]
    async fn a_finished_stream_ends_without_a_status() {
        let (_tx, rx) = watch::channel(false);
        let two: ResponseStream<u32> = Box::pin(tokio_stream::iter([Ok(1), Ok(2)]));
        let all: Vec<_> = end_on_stop(two, rx).collect().await;
        assert_eq!(all.len(), 2);
        assert!(all.iter().all(Result::is_ok));
    }
}
