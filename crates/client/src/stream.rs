//! Helpers for consuming server streams: one-message look-ahead and collecting into a Vec.

use tonic::codec::Streaming;

use crate::connect::Connection;
use crate::error::Result;

/// A server stream with a one-message push-back buffer.
pub struct PeekStream<M> {
    inner: Streaming<M>,
    pending: Option<M>,
    conn: Connection,
}

impl<M> PeekStream<M> {
    pub fn new(conn: &Connection, inner: Streaming<M>) -> Self {
        PeekStream {
            inner,
            pending: None,
            conn: conn.clone(),
        }
    }

    /// The next message, or None at the end of the stream.
    pub async fn next(&mut self) -> Result<Option<M>> {
        if let Some(m) = self.pending.take() {
            return Ok(Some(m));
        }
        self.inner.message().await.map_err(|s| self.conn.status(s))
    }

    /// Puts a message back so the next call to `next` returns it.
    pub fn push_back(&mut self, message: M) {
        self.pending = Some(message);
    }
}

/// Reads a whole (bounded) server stream into memory.
pub async fn collect<M>(conn: &Connection, mut stream: Streaming<M>) -> Result<Vec<M>> {
    let mut out = Vec::new();
    while let Some(m) = stream.message().await.map_err(|s| conn.status(s))? {
        out.push(m);
    }
    Ok(out)
}
