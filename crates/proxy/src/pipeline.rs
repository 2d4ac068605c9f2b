//! Fills content into a by-digest reply stream: each record that needs content starts its
//! cache lookup or fetch as soon as it arrives (up to `fetch_ahead` records ahead), and the
//! records go to the client in order, each followed by its content's chunks.

use crate::cache::{Body, Entry, Verified};
use crate::config::ProxyConfig;
use crate::content::ContentSource;
use crate::stats::Stats;
use crate::upstream::Asker;
use crate::upstream::unreachable_status;
use keel_proto::v1 as pb;
use std::io::Read;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Status, Streaming};

/// Content a reply message announces: its digest (hex) and, when the message names it, the
/// file revision it is the content of (which the target checks the caller may read).
pub struct Want {
    pub digest: String,
    pub of: Option<(String, u32)>,
}

/// A reply message that may announce content the proxy fills in.
pub trait Carries: prost::Message + Default + Sized + Send + 'static {
    /// The content whose stored bytes follow this message, if any.
    fn wants(&self) -> Option<Want>;
    /// Makes the record describe the stored form being sent.
    fn describe(&mut self, entry: Entry);
    /// One chunk of stored bytes.
    fn chunk(bytes: Vec<u8>) -> Self;
}

impl Carries for pb::SyncMessage {
    fn wants(&self) -> Option<Want> {
        match &self.body {
            Some(pb::sync_message::Body::File(f)) if f.transfer => Some(Want {
                digest: f.digest.clone(),
                of: Some((f.depot_file.clone(), f.rev)),
            }),
            _ => None,
        }
    }
    fn describe(&mut self, entry: Entry) {
        if let Some(pb::sync_message::Body::File(f)) = &mut self.body {
            f.compressed = entry.compressed;
            f.stored_size = entry.stored_size;
        }
    }
    fn chunk(bytes: Vec<u8>) -> Self {
        pb::SyncMessage {
            body: Some(pb::sync_message::Body::Chunk(bytes)),
        }
    }
}

impl Carries for pb::ContentMessage {
    fn wants(&self) -> Option<Want> {
        match &self.body {
            Some(pb::content_message::Body::Header(h)) => Some(Want {
                digest: h.digest.clone(),
                of: None,
            }),
            _ => None,
        }
    }
    fn describe(&mut self, entry: Entry) {
        if let Some(pb::content_message::Body::Header(h)) = &mut self.body {
            h.compressed = entry.compressed;
            h.stored_size = entry.stored_size;
        }
    }
    fn chunk(bytes: Vec<u8>) -> Self {
        pb::ContentMessage {
            body: Some(pb::content_message::Body::Chunk(bytes)),
        }
    }
}

type Reply<M> = ReceiverStream<Result<M, Status>>;
type Ahead<M> = Result<(M, Option<JoinHandle<Result<Verified, Status>>>), Status>;

/// The client's reply stream for `upstream`, a by-digest reply from the target.
pub fn fill<M: Carries>(
    source: Arc<ContentSource>,
    caller: Asker,
    mut upstream: Streaming<M>,
    config: &ProxyConfig,
) -> Reply<M> {
    let (out, reply) = mpsc::channel::<Result<M, Status>>(config.stream_buffer.max(1));
    let (ahead, mut queued) = mpsc::channel::<Ahead<M>>(config.fetch_ahead.max(1));
    let addr = source.upstream.addr.clone();
    let reader_source = source.clone();
    tokio::spawn(async move {
        loop {
            let item = match upstream.message().await {
                Ok(Some(msg)) => {
                    let job = msg.wants().map(|want| {
                        let (source, caller) = (reader_source.clone(), caller.clone());
                        tokio::spawn(async move { source.get(caller, &want.digest, want.of).await })
                    });
                    Ok((msg, job))
                }
                Ok(None) => return,
                Err(status) => Err(unreachable_status(&addr, status)),
            };
            let failed = item.is_err();
            // The client went away: stop reading (dropping the upstream call cancels it).
            if ahead.send(item).await.is_err() || failed {
                return;
            }
        }
    });
    let (chunk, stats) = (config.content_chunk_bytes.max(1), source.stats.clone());
    tokio::spawn(async move {
        while let Some(item) = queued.recv().await {
            let (mut msg, job) = match item {
                Ok(next) => next,
                Err(status) => {
                    let _ = out.send(Err(status)).await;
                    return;
                }
            };
            let Some(job) = job else {
                if out.send(Ok(msg)).await.is_err() {
                    return;
                }
                continue;
            };
            let verified = match job.await {
                Ok(Ok(v)) => v,
                Ok(Err(status)) => {
                    let _ = out.send(Err(status)).await;
                    return;
                }
                Err(e) => {
                    let _ = out
                        .send(Err(Status::internal(format!("proxy task failed: {e}"))))
                        .await;
                    return;
                }
            };
            msg.describe(verified.entry);
            if out.send(Ok(msg)).await.is_err() {
                return;
            }
            let sent = verified.entry.stored_size;
            if !send_body::<M>(&out, verified.body, chunk).await {
                return;
            }
            Stats::add(&stats.bytes_served, sent);
        }
    });
    ReceiverStream::new(reply)
}

/// Sends stored bytes as chunk messages; false when the client went away or reading failed
/// (the error then went to the client).
async fn send_body<M: Carries>(
    out: &mpsc::Sender<Result<M, Status>>,
    body: Body,
    chunk: usize,
) -> bool {
    match body {
        Body::Memory(bytes) => {
            for piece in bytes.chunks(chunk) {
                if out.send(Ok(M::chunk(piece.to_vec()))).await.is_err() {
                    return false;
                }
            }
            true
        }
        Body::File(mut file) => {
            let out = out.clone();
            let streamed = tokio::task::spawn_blocking(move || {
                let mut buf = vec![0u8; chunk];
                loop {
                    let n = match file.read(&mut buf) {
                        Ok(0) => return true,
                        Ok(n) => n,
                        Err(e) => {
                            let status = Status::internal(format!("proxy cache read failed: {e}"));
                            let _ = out.blocking_send(Err(status));
                            return false;
                        }
                    };
                    if out.blocking_send(Ok(M::chunk(buf[..n].to_vec()))).is_err() {
                        return false;
                    }
                }
            })
            .await;
            streamed.unwrap_or(false)
        }
    }
}

/// The client's reply stream for `upstream` unchanged (transport failures naming the target).
pub fn pass<M: Carries>(mut upstream: Streaming<M>, addr: &str, config: &ProxyConfig) -> Reply<M> {
    let (out, reply) = mpsc::channel::<Result<M, Status>>(config.stream_buffer.max(1));
    let addr = addr.to_string();
    tokio::spawn(async move {
        loop {
            let item = match upstream.message().await {
                Ok(Some(msg)) => Ok(msg),
                Ok(None) => return,
                Err(status) => Err(unreachable_status(&addr, status)),
            };
            let failed = item.is_err();
            if out.send(item).await.is_err() || failed {
                return;
            }
        }
    });
    ReceiverStream::new(reply)
}
