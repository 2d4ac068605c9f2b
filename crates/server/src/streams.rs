//! Bridging blocking service calls to gRPC response streams with bounded buffering.

use keel_service::ServiceError;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

/// Messages buffered per response stream before the producer waits for the client.
const STREAM_BUFFER: usize = 32;

pub(crate) type ResponseStream<T> = ReceiverStream<Result<T, Status>>;

/// A sender usable from blocking code; fails with `Cancelled` when the client went away.
pub(crate) struct BlockingSink<T> {
    tx: mpsc::Sender<Result<T, Status>>,
}

impl<T> BlockingSink<T> {
    pub(crate) fn send(&self, item: T) -> Result<(), ServiceError> {
        self.tx
            .blocking_send(Ok(item))
            .map_err(|_| ServiceError::Cancelled)
    }
}

/// Runs `produce` on the blocking pool, streaming what it sends; an error ends the stream.
pub(crate) fn spawn_stream<T, F>(produce: F) -> ResponseStream<T>
where
    T: Send + 'static,
    F: FnOnce(&BlockingSink<T>) -> Result<(), ServiceError> + Send + 'static,
{
    let (tx, rx) = mpsc::channel(STREAM_BUFFER);
    tokio::task::spawn_blocking(move || {
        let sink = BlockingSink { tx };
        if let Err(e) = produce(&sink)
            && !matches!(e, ServiceError::Cancelled)
        {
            tracing::debug!(error = %e, "streamed command failed");
            let _ = sink.tx.blocking_send(Err(crate::convert::status(e)));
        }
    });
    ReceiverStream::new(rx)
}

/// Runs a blocking service call off the async workers.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, Status>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ServiceError> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal(format!("server task failed: {e}")))?
        .map_err(crate::convert::status)
}
