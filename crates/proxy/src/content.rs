//! Content for the handlers: from the cache when it holds the digest and the bytes check
//! out, else fetched once from the target (concurrent requests for one digest share the
//! fetch) and then served from the cache.

use crate::cache::{Cache, CacheError, Lookup, Verified};
use crate::stats::Stats;
use crate::upstream::Asker;
use crate::upstream::Upstream;
use keel_core::Digest;
use keel_proto::v1 as pb;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;
use tonic::{Code, Status};

/// The outcome of one fetch, shared by everyone who waited for it.
type Fetched = Result<(), (Code, String)>;

/// Fetches of one digest for one request before it fails (each fetch is checked against
/// the digest, so a repeat means the cache lost the blob before it was read).
const FETCH_ATTEMPTS: usize = 3;

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

    /// The verified stored bytes of `digest` (its hex form as the server sent it); `of` names
    /// the file revision it is the content of, for the target's check of the caller.
    pub async fn get(
        self: &Arc<Self>,
        caller: Asker,
        hex: &str,
        of: Option<(String, u32)>,
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
        // The task that fetched gets the blob it wrote; one that waited for another's fetch
        // reads the cache, and fetches again should the blob be gone already (evicted by
        // other fetches, or dropped as corrupt).
        for _ in 0..FETCH_ATTEMPTS {
            if let Some(fetched) = self.fetch_once(caller.clone(), digest, of.clone()).await? {
                return Ok(fetched);
            }
            if let Some(found) = self.read(digest).await? {
                return Ok(found);
            }
        }
        Err(Status::data_loss(format!(
            "content {hex} fetched from {} {FETCH_ATTEMPTS} times could not be read back from the proxy cache {}",
            self.upstream.addr,
            self.cache.dir().display()
        )))
    }

    async fn read(self: &Arc<Self>, digest: Digest) -> Result<Option<Verified>, Status> {
        let (cache, small, stats) = (self.cache.clone(), self.small, self.stats.clone());
        let found = tokio::task::spawn_blocking(move || cache.read_verified(&digest, small))
            .await
            .map_err(|e| Status::internal(format!("proxy cache reader failed: {e}")))?
            .map_err(cache_status)?;
        Ok(match found {
            Lookup::Hit(verified) => Some(verified),
            Lookup::Absent => None,
            Lookup::Dropped => {
                Stats::add(&stats.dropped_corrupt, 1);
                None
            }
        })
    }

    /// Fetches `digest` into the cache unless a fetch of it is already under way, in which
    /// case this waits for that one. The blob when this call fetched it, else `None`.
    async fn fetch_once(
        self: &Arc<Self>,
        caller: Asker,
        digest: Digest,
        of: Option<(String, u32)>,
    ) -> Result<Option<Verified>, Status> {
        let cell = {
            let mut inflight = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
            inflight.entry(digest).or_default().clone()
        };
        let mut mine = None;
        let result = cell
            .get_or_init(|| async {
                // A fetch that finished between this caller's cache miss and now has left
                // the blob in the cache: no second fetch.
                match self.read(digest).await {
                    Ok(Some(found)) => {
                        mine = Some(found);
                        return Ok(());
                    }
                    Ok(None) => {}
                    Err(s) => return Err((s.code(), s.message().to_string())),
                }
                match self.fetch(caller, digest, of).await {
                    Ok(verified) => {
                        mine = Some(verified);
                        Ok(())
                    }
                    Err(s) => Err((s.code(), s.message().to_string())),
                }
            })
            .await
            .clone();
        {
            let mut inflight = self.inflight.lock().unwrap_or_else(|e| e.into_inner());
            if inflight.get(&digest).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
                inflight.remove(&digest);
            }
        }
        result.map_err(|(code, message)| Status::new(code, message))?;
        Ok(mine)
    }

    async fn fetch(
        self: &Arc<Self>,
        caller: Asker,
        digest: Digest,
        of: Option<(String, u32)>,
    ) -> Result<Verified, Status> {
        use pb::content_message::Body;
        let hex = digest.to_hex();
        let mut stream = self.upstream.content(caller, &hex, of).await?;
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
        let (cache, small) = (self.cache.clone(), self.small);
        // Chunks arrive on the runtime; the file is written and fsynced on a blocking thread.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<u8>>(16);
        let writer = tokio::task::spawn_blocking(move || -> Result<Verified, CacheError> {
            let mut w = cache.writer(digest, header.compressed)?;
            while let Some(chunk) = rx.blocking_recv() {
                w.write(&chunk)?;
            }
            w.finish(small)
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
        let verified = writer
            .await
            .map_err(|e| Status::internal(format!("proxy cache writer failed: {e}")))?
            .map_err(cache_status)?;
        if verified.entry.stored_size != header.stored_size {
            tracing::warn!(
                digest = hex,
                written = verified.entry.stored_size,
                expected = header.stored_size,
                "stored size differs from the Content header"
            );
        }
        Ok(verified)
    }
}

fn cache_status(e: CacheError) -> Status {
    match e {
        CacheError::Mismatch { .. } => Status::data_loss(e.to_string()),
        CacheError::Io { .. } => Status::internal(format!("proxy cache: {e}")),
    }
}
