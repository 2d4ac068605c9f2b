//! Hashing and compressing received small files on worker threads, beside the receive loop.
//!
//! A file that arrived whole (at most `ServiceConfig::upload_whole_bytes`) is handed to a pool
//! of `ServiceConfig::upload_threads` threads, started as the upload needs them; each turns it
//! into a [`PendingBlob`] (BLAKE3, MD5, zstd) and checks it against the digest and size the
//! client claimed. Files go to the threads in batches of about `ServiceConfig::upload_batch_bytes`
//! (one hand-over and one wake-up per batch, not per file) and come back per batch, in any
//! order, tagged with the order their files were sent. The queue holds two batches per thread,
//! so the bytes waiting for a worker stay bounded. An upload that never fills a batch (a small
//! submit) starts no thread: its files are stored on the caller's thread when it finishes.

use crate::ServiceError;
use crate::error::UploadError;
use keel_blob::{BlobStore, PendingBlob};
use keel_core::Digest;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};

/// One whole file to hash and compress.
struct Job {
    seq: u64,
    path: String,
    bytes: Vec<u8>,
    digest: String,
    size: u64,
}

/// A finished job: the file's sequence number, path, and its blob or why it was refused.
pub(crate) type Done = (u64, String, Result<PendingBlob, ServiceError>);

/// A finished batch.
type DoneBatch = Vec<Done>;

/// The worker threads of one upload.
pub(crate) struct HashPool {
    blobs: Arc<dyn BlobStore>,
    max_threads: usize,
    threads: usize,
    jobs: Option<SyncSender<Vec<Job>>>,
    queue: Arc<Mutex<Receiver<Vec<Job>>>>,
    done_tx: Sender<DoneBatch>,
    done: Receiver<DoneBatch>,
    /// Files gathered for the next hand-over, and their bytes.
    batch: Vec<Job>,
    batch_bytes: usize,
    /// Hand the batch over at this many bytes.
    batch_limit: usize,
    /// Batches handed over whose results were not taken yet.
    in_flight: usize,
    /// Results taken from a finished batch and not yet returned by `next`.
    ready: DoneBatch,
}

impl HashPool {
    pub(crate) fn new(
        blobs: Arc<dyn BlobStore>,
        max_threads: usize,
        batch_limit: usize,
    ) -> HashPool {
        let max_threads = max_threads.max(1);
        let (jobs, queue) = sync_channel(2 * max_threads);
        let (done_tx, done) = channel();
        HashPool {
            blobs,
            max_threads,
            threads: 0,
            jobs: Some(jobs),
            queue: Arc::new(Mutex::new(queue)),
            done_tx,
            done,
            batch: Vec::new(),
            batch_bytes: 0,
            batch_limit,
            in_flight: 0,
            ready: Vec::new(),
        }
    }

    /// Adds one whole file to the batch, handing the batch over once it is full.
    pub(crate) fn submit(
        &mut self,
        seq: u64,
        path: String,
        bytes: Vec<u8>,
        digest: String,
        size: u64,
    ) -> Result<(), ServiceError> {
        self.batch_bytes += bytes.len();
        self.batch.push(Job {
            seq,
            path,
            bytes,
            digest,
            size,
        });
        if self.batch_bytes >= self.batch_limit {
            self.hand_over()?;
        }
        Ok(())
    }

    /// Hands the gathered files over, waiting while the queue is full; a thread is started
    /// when more batches wait than threads run, up to the limit.
    fn hand_over(&mut self) -> Result<(), ServiceError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        if self.threads < self.max_threads && self.in_flight >= self.threads {
            self.start_thread()?;
        }
        self.batch_bytes = 0;
        let batch = std::mem::take(&mut self.batch);
        let jobs = self.jobs.as_ref().expect("the queue is open until drop");
        jobs.send(batch).map_err(|_| UploadError::Worker {
            reason: "the upload's hashing threads stopped".into(),
        })?;
        self.in_flight += 1;
        Ok(())
    }

    fn start_thread(&mut self) -> Result<(), ServiceError> {
        let queue = self.queue.clone();
        let done = self.done_tx.clone();
        let blobs = self.blobs.clone();
        let command = keel_store::command::current();
        std::thread::Builder::new()
            .name("keel-upload-hash".into())
            .spawn(move || {
                let _command = keel_store::command::enter(command);
                loop {
                    // The lock is held only to take the next job, never while working on one.
                    let next = queue.lock().map(|q| q.recv());
                    let Ok(Ok(batch)) = next else { return };
                    // A panic still answers for its batch, so `next(true)` never waits forever.
                    let finished = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        store_batch(blobs.as_ref(), batch)
                    }))
                    .unwrap_or_else(|_| {
                        let failed = UploadError::Worker {
                            reason: "a hashing thread failed".into(),
                        };
                        vec![(u64::MAX, String::new(), Err(failed.into()))]
                    });
                    if done.send(finished).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| UploadError::Worker {
                reason: format!("cannot start a hashing thread: {e}"),
            })?;
        self.threads += 1;
        Ok(())
    }

    /// The next finished file: when `wait`, after handing over the partial batch and waiting
    /// for the threads; else only one already finished. `None` when there is none (left).
    pub(crate) fn next(&mut self, wait: bool) -> Option<Result<Done, ServiceError>> {
        if let Some(done) = self.ready.pop() {
            return Some(Ok(done));
        }
        if wait && self.threads == 0 && !self.batch.is_empty() {
            // Never a full batch: stored here, sparing a thread's start and two hand-overs.
            self.batch_bytes = 0;
            let mut batch = store_batch(self.blobs.as_ref(), std::mem::take(&mut self.batch));
            batch.reverse();
            self.ready = batch;
            return self.ready.pop().map(Ok);
        }
        if wait && let Err(e) = self.hand_over() {
            return Some(Err(e));
        }
        if self.in_flight == 0 {
            return None;
        }
        let batch = if wait {
            self.done.recv().ok()
        } else {
            self.done.try_recv().ok()
        };
        let mut batch = batch?;
        self.in_flight -= 1;
        // `pop` takes from the end: reversed, the files come back in the order they were sent.
        batch.reverse();
        self.ready = batch;
        self.ready.pop().map(Ok)
    }
}

impl Drop for HashPool {
    fn drop(&mut self) {
        // Closing the queue ends every thread once it finishes the job it holds.
        self.jobs = None;
    }
}

/// Stores each file of `batch`, tagged with its sequence number and path.
fn store_batch(blobs: &dyn BlobStore, batch: Vec<Job>) -> DoneBatch {
    batch
        .into_iter()
        .map(|job| {
            let blob = store(blobs, &job);
            (job.seq, job.path, blob)
        })
        .collect()
}

/// Hashes and compresses one file and checks the client's claim about it.
fn store(blobs: &dyn BlobStore, job: &Job) -> Result<PendingBlob, ServiceError> {
    let mut writer = blobs.writer()?;
    writer.write(&job.bytes)?;
    checked(&job.path, &job.digest, job.size, writer.finish()?)
}

/// `pending` when its digest and size are what the client said it sent.
pub(crate) fn checked(
    path: &str,
    digest: &str,
    size: u64,
    pending: PendingBlob,
) -> Result<PendingBlob, ServiceError> {
    let info = &pending.info;
    let claimed = Digest::from_hex(digest).map_err(|e| UploadError::BadDigest {
        path: path.to_string(),
        reason: e.to_string(),
    })?;
    if claimed != info.digest || size != info.size {
        return Err(UploadError::Damaged {
            path: path.to_string(),
            sent_size: size,
            sent_digest: digest.to_string(),
            got_size: info.size,
            got_digest: info.digest.to_hex(),
        }
        .into());
    }
    Ok(pending)
}
