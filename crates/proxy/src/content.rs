//! Content for the handlers: from the cache when it holds the digest and the bytes check
//! out, else fetched once from the target (concurrent requests for one digest share the
//! fetch) and then served from the cache.

use crate::cache::{Cache, CacheError, Verified};
use crate::stats::Stats;
use crate::upstream::Upstream;
use keel_core::Digest;
use keel_proto::v1 as pb;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;
use tonic::{Code, Status};

/// The outcome of one fetch, shared by everyone who waited for it.
type Fetched = Result<(), (Code, String)>;

pub struct ContentSource {
    pub cache: Arc<Cache>,
    pub upstream: Upstream,
    pub stats: Arc<Stats>,
    small: u64,
    inflight: Mutex<HashMap<Digest, Arc<OnceCell<Fetched>>>>,
}

impl ContentSource {
    pub fn new(cache: Arc<Cache>, upstream: Upstream, stats: Arc<Stats>, small: u64) -> Self {
        ContentSource {
            cache,
            upstream,
            stats,
            small,
            inflight: Mutex::new(HashMap::new()),
        }
    }

    /// The verified stored bytes of `digest` (its hex form as the server sent it).
    pub async fn get(
        self: &Arc<Self>,
        caller: Option<pb::Caller>,
        hex: &str,
    ) -> Result<Verified, Status> {
        let digest = Digest::from_hex(hex).map_err(|e| {
            Status::internal(format!(
                "target {} sent a bad digest: {e}",
                self.upstream.addr
            ))
        })?;
        if let Some(found) = self.read(digest).await? {
            Stats::add(&self.stats.hits, 1);
            tracing::debug!(digest = hex, "cache hit");
            return Ok(found);
        }
        Stats::add(&self.stats.misses, 1);
        tracing::debug!(digest = hex, "cache miss");
        // A file dropped as corrupt comes back from the target; content that fails again
        // right after its verified fetch means the cache's disk is failing.
        self.fetch_once(caller, digest).await?;
        self.read(digest).await?.ok_or_else(|| {
            Status::data_loss(format!(
                "content {hex} fetched from {} failed verification in the proxy cache {}",
                self.upstream.addr,
                self.cache.dir().display()
            ))
        })
    }

    async fn read(self: &Arc<Self>, digest: Digest) -> Result<Option<Verified>, Status> {
        let (cache, small, stats) = (self.cache.clone(), self.small, self.stats.clone());
        let had = cache.contains(&digest);
        let found = tokio::task::spawn_blocking(move || cache.read_verified(&digest, small))
            .await
            .map_err(|e| Status::internal(format!("proxy cache reader failed: {e}")))?
            .map_err(cache_status)?;
        if had && found.is_none() {
            Stats::add(&stats.dropped_corrupt, 1);
        }
        Ok(found)
    }

    /// Fetches `digest` into the cache unless a fetch of it is already under way, in which
    /// case this waits for that one.
    async fn fetch_once(
        self: &Arc<Self>,
        caller: Option<pb::Caller>,
        digest: Digest,
    ) -> Result<(), Status> {
        let cell = {
            let mut inflight = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
            inflight.entry(digest).or_default().clone()
        };
        let result = cell
            .get_or_init(|| async {
                let outcome = self.fetch(caller, digest).await;
                outcome.map_err(|s| (s.code(), s.message().to_string()))
            })
            .await
            .clone();
        {
            let mut inflight = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
            if inflight.get(&digest).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
                inflight.remove(&digest);
            }
        }
        result.map_err(|(code, message)| Status::new(code, message))
    }

    async fn fetch(
        self: &Arc<Self>,
        caller: Option<pb::Caller>,
        digest: Digest,
    ) -> Result<(), Status> {
        use pb::content_message::Body;
        let hex = digest.to_hex();
        let mut stream = self.upstream.content(caller, &hex).await?;
        let header = match stream
            .message()
            .await
            .map_err(|s| self.upstream.status(s))?
        {
            Some(pb::ContentMessage {
                body: Some(Body::Header(h)),
            }) => h,
            other => {
                return Err(Status::internal(format!(
                    "target {} answered Content {hex} without a header: {other:?}",
                    self.upstream.addr
                )));
            }
        };
        let cache = self.cache.clone();
        // Chunks arrive on the runtime; the file is written and fsynced on a blocking thread.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(16);
        let writer = tokio::task::spawn_blocking(move || -> Result<u64, CacheError> {
            let mut w = cache.writer(digest, header.compressed)?;
            while let Some(chunk) = rx.blocking_recv() {
                w.write(&chunk)?;
            }
            w.finish()
        });
        let mut received = 0u64;
        let mut failed = None;
        loop {
            match stream.message().await {
                Ok(Some(pb::ContentMessage {
                    body: Some(Body::Chunk(bytes)),
                })) => {
                    received += bytes.len() as u64;
                    if tx.send(bytes).await.is_err() {
                        break; // the writer stopped; its error is reported below
                    }
                }
                Ok(Some(other)) => {
                    failed = Some(Status::internal(format!(
                        "target {} sent an unexpected Content message for {hex}: {other:?}",
                        self.upstream.addr
                    )));
                    break;
                }
                Ok(None) => break,
                Err(s) => {
                    failed = Some(self.upstream.status(s));
                    break;
                }
            }
        }
        Stats::add(&self.stats.bytes_from_target, received);
        if let Some(status) = failed {
            // Dropping the sender without finishing leaves no file: the writer's temp file
            // is removed when it sees a short or bad blob, or when it is dropped.
            drop(tx);
            let _ = writer.await;
            return Err(status);
        }
        drop(tx);
        let written = writer
            .await
            .map_err(|e| Status::internal(format!("proxy cache writer failed: {e}")))?
            .map_err(cache_status)?;
        if written != header.stored_size {
            tracing::warn!(
                digest = hex,
                written,
                expected = header.stored_size,
                "stored size differs from the header"
            );
        }
        Ok(())
    }
}

fn cache_status(e: CacheError) -> Status {
    match e {
        CacheError::Mismatch { .. } => Status::data_loss(e.to_string()),
        CacheError::Io { .. } => Status::internal(format!("proxy cache: {e}")),
    }
}
