//! The sync's file writers: a few blocking workers that decompress, verify and place files
//! while the sync's stream loop goes on receiving. A large file streams through its writer
//! chunk by chunk; small files arrive whole and travel in batches, one hand-over per batch.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::transfer::{Decompressor, IncomingFile, LocalMode};
use crate::tuning::TransferConfig;

/// One file to write.
#[derive(Debug)]
pub struct FileJob {
    pub target: PathBuf,
    /// The content arrives as one zstd stream.
    pub compressed: bool,
    /// BLAKE3 hex digest of the content ("" skips verification).
    pub digest: String,
    pub mode: LocalMode,
    /// Modification time to give the file (seconds since the epoch).
    pub modified: Option<u64>,
    /// The sync created the target's directory and the have list holds no revision of the
    /// file: it is written without a name and linked under its own (see [`Landing::for_target`]).
    ///
    /// [`Landing::for_target`]: crate::landing::Landing::for_target
    pub fresh: bool,
}

/// A piece of a file's stored content.
enum Piece {
    Data(Vec<u8>),
    End,
}

/// Feeds one file's content to its writer.
pub struct FileFeed {
    tx: mpsc::Sender<Piece>,
}

impl FileFeed {
    /// Passes a chunk on; false once the writer has stopped reading (the file failed, and its
    /// result says why).
    pub async fn chunk(&self, bytes: Vec<u8>) -> bool {
        self.tx.send(Piece::Data(bytes)).await.is_ok()
    }

    /// Marks the content complete. A feed dropped without `end` abandons the file: nothing
    /// replaces the target.
    pub async fn end(self) {
        // A writer that stopped reading has already reported its failure.
        let _ = self.tx.send(Piece::End).await;
    }
}

/// A file's outcome: the bytes written, or why the file is not in place.
pub type Written = oneshot::Receiver<Result<u64>>;

/// A file whose whole stored content is at hand, with the sender of its outcome.
struct Whole {
    job: FileJob,
    content: Vec<Vec<u8>>,
    done: oneshot::Sender<Result<u64>>,
}

/// What one writer takes from the queue.
enum Task {
    /// A file whose content follows through `pieces`.
    Stream {
        job: FileJob,
        pieces: mpsc::Receiver<Piece>,
        done: oneshot::Sender<Result<u64>>,
    },
    /// Files written one after the other.
    Batch(Vec<Whole>),
}

/// The running writers.
pub struct Writers {
    queue: mpsc::Sender<Task>,
    workers: Vec<JoinHandle<()>>,
    /// Content chunks of one file queued for its writer.
    chunks_in_flight: usize,
    /// Whole files not yet handed to a writer, and their stored bytes.
    batch: Vec<Whole>,
    batch_bytes: usize,
    batch_files_limit: usize,
    batch_bytes_limit: usize,
}

impl Writers {
    /// Starts the writers on the blocking pool.
    pub fn start(tuning: &TransferConfig) -> Writers {
        let count = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(2, tuning.max_writers.max(2));
        let (queue, rx) = mpsc::channel(count);
        let rx = Arc::new(Mutex::new(rx));
        let workers = (0..count)
            .map(|_| {
                let rx = rx.clone();
                let decode_limit = tuning.whole_decode_bytes;
                tokio::task::spawn_blocking(move || work(&rx, decode_limit))
            })
            .collect();
        Writers {
            queue,
            workers,
            chunks_in_flight: tuning.chunks_in_flight.max(1),
            batch: Vec::new(),
            batch_bytes: 0,
            batch_files_limit: tuning.write_batch_files.max(1),
            batch_bytes_limit: tuning.write_batch_bytes,
        }
    }

    /// Adds a file whose whole stored content is `content` to the next batch, handing the
    /// batch to a writer once it is full. The file is written only after the batch is handed
    /// over: whoever waits for its outcome calls [`Writers::flush`] first.
    pub async fn submit_whole(&mut self, job: FileJob, content: Vec<Vec<u8>>) -> Result<Written> {
        let (done, written) = oneshot::channel();
        self.batch_bytes += content.iter().map(Vec::len).sum::<usize>();
        self.batch.push(Whole { job, content, done });
        if self.batch.len() >= self.batch_files_limit || self.batch_bytes >= self.batch_bytes_limit
        {
            self.flush().await?;
        }
        Ok(written)
    }

    /// Hands the files gathered so far to a writer.
    pub async fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        self.batch_bytes = 0;
        let batch = std::mem::take(&mut self.batch);
        self.queue
            .send(Task::Batch(batch))
            .await
            .map_err(|_| Error::WriterStopped)
    }

    /// Hands `job` to the next free writer (waiting while all are busy and the queue is full);
    /// its content goes through the returned feed.
    pub async fn submit(&self, job: FileJob) -> Result<(FileFeed, Written)> {
        let (tx, pieces) = mpsc::channel(self.chunks_in_flight);
        let (done, written) = oneshot::channel();
        self.queue
            .send(Task::Stream { job, pieces, done })
            .await
            .map_err(|_| Error::WriterStopped)?;
        Ok((FileFeed { tx }, written))
    }

    /// Hands over the last batch, lets the writers finish what they were given, then waits
    /// for them to stop.
    pub async fn close(mut self) -> Result<()> {
        self.flush().await?;
        drop(self.queue);
        for worker in self.workers {
            worker.await.map_err(|_| Error::WriterStopped)?;
        }
        Ok(())
    }
}

/// One writer: takes files from the queue until it closes, reusing one zstd context and one
/// buffer for content decompressed whole (at most `decode_limit` bytes).
fn work(queue: &Mutex<mpsc::Receiver<Task>>, decode_limit: usize) {
    let mut context = Decompressor::create();
    let mut decoded = Vec::new();
    loop {
        // One idle writer waits on the queue while holding the lock; the others wait for it.
        let task = queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .blocking_recv();
        // The sync stopped waiting for a file only when it is failing anyway.
        match task {
            None => return,
            Some(Task::Stream { job, pieces, done }) => {
                let _ = done.send(write(job, pieces, &mut context));
            }
            Some(Task::Batch(files)) => {
                for file in files {
                    let outcome = if decode_whole(&file, &mut context, &mut decoded, decode_limit) {
                        write_decoded(file.job, &decoded, &mut context)
                    } else {
                        write_whole(file.job, &file.content, &mut context)
                    };
                    let _ = file.done.send(outcome);
                }
                if decoded.capacity() > decode_limit {
                    decoded = Vec::new();
                }
            }
        }
    }
}

/// Begins writing `job`'s file (`compressed`: what arrives is the stored zstd stream), to be
/// given `job`'s modification time when it has one.
fn begin(job: FileJob, compressed: bool, context: &mut Decompressor) -> Result<IncomingFile<'_>> {
    let incoming = IncomingFile::begin_with(
        job.target,
        compressed,
        &job.digest,
        job.mode,
        job.fresh,
        context,
    )?;
    Ok(match job.modified {
        Some(secs) => incoming.modified(secs),
        None => incoming,
    })
}

fn write_whole(job: FileJob, content: &[Vec<u8>], context: &mut Decompressor) -> Result<u64> {
    let compressed = job.compressed;
    let mut incoming = begin(job, compressed, context)?;
    for chunk in content {
        incoming.write_chunk(chunk)?;
    }
    incoming.finish()
}

/// Decompresses a whole compressed file into `decoded` in one call when its frame declares a
/// size of at most `limit`; false leaves it to [`write_whole`]'s stream.
fn decode_whole(
    file: &Whole,
    context: &mut Decompressor,
    decoded: &mut Vec<u8>,
    limit: usize,
) -> bool {
    if !file.job.compressed || file.job.mode.symlink {
        return false;
    }
    let joined;
    let stored: &[u8] = match file.content.as_slice() {
        [one] => one,
        many => {
            joined = many.concat();
            &joined
        }
    };
    let size = match zstd::zstd_safe::get_frame_content_size(stored) {
        Ok(Some(size)) if size <= limit as u64 => size as usize,
        _ => return false,
    };
    decoded.clear();
    decoded.reserve(size);
    // A frame the one call cannot take (more than one frame, say) goes through the stream,
    // which names what is wrong with it.
    context.decompress(decoded, stored).is_ok()
}

/// Writes content [`decode_whole`] decompressed (its digest is checked as it is written).
fn write_decoded(job: FileJob, decoded: &[u8], context: &mut Decompressor) -> Result<u64> {
    let mut incoming = begin(job, false, context)?;
    incoming.write_chunk(decoded)?;
    incoming.finish()
}

fn write(
    job: FileJob,
    mut pieces: mpsc::Receiver<Piece>,
    context: &mut Decompressor,
) -> Result<u64> {
    let compressed = job.compressed;
    let mut incoming = begin(job, compressed, context)?;
    loop {
        match pieces.blocking_recv() {
            Some(Piece::Data(bytes)) => incoming.write_chunk(&bytes)?,
            Some(Piece::End) => return incoming.finish(),
            None => {
                return Err(Error::Protocol(
                    "the sync stream ended in the middle of a file".into(),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(target: PathBuf, content: &[u8]) -> FileJob {
        FileJob {
            target,
            compressed: false,
            digest: blake3::hash(content).to_hex().to_string(),
            mode: LocalMode::default(),
            modified: None,
            fresh: false,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_files_in_shared_new_directories() {
        // Every writer creates the same missing parents at once; all files must land.
        let dir = tempfile::tempdir().unwrap();
        let writers = Writers::start(&TransferConfig::default());
        let mut written = Vec::new();
        for i in 0..200 {
            let target = dir.path().join(format!("d{}/e{}/f{i}", i % 3, i % 2));
            let content = format!("file {i}\n").into_bytes();
            let (feed, done) = writers.submit(job(target.clone(), &content)).await.unwrap();
            assert!(feed.chunk(content.clone()).await);
            feed.end().await;
            written.push((target, content, done));
        }
        for (target, content, done) in written {
            assert_eq!(done.await.unwrap().unwrap(), content.len() as u64);
            assert_eq!(std::fs::read(&target).unwrap(), content);
        }
        writers.close().await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn batched_whole_files_land_after_flush_and_close() {
        // Batches of three: six files go over at once, the seventh waits for the flush, the
        // eighth (a digest mismatch) for close; each file reports its own outcome.
        let dir = tempfile::tempdir().unwrap();
        let tuning = TransferConfig {
            write_batch_files: 3,
            ..TransferConfig::default()
        };
        let mut writers = Writers::start(&tuning);
        let mut written = Vec::new();
        for i in 0..7 {
            let target = dir.path().join(format!("d{}/f{i}", i % 2));
            let content = format!("file {i}\n").into_bytes();
            let chunks = vec![content[..3].to_vec(), content[3..].to_vec()];
            let done = writers
                .submit_whole(job(target.clone(), &content), chunks)
                .await
                .unwrap();
            written.push((target, content, done));
        }
        writers.flush().await.unwrap();
        for (target, content, done) in written {
            assert_eq!(done.await.unwrap().unwrap(), content.len() as u64);
            assert_eq!(std::fs::read(&target).unwrap(), content);
        }
        let bad = dir.path().join("bad");
        let mut mismatch = job(bad.clone(), b"expected");
        mismatch.digest = blake3::hash(b"other").to_hex().to_string();
        let done = writers
            .submit_whole(mismatch, vec![b"expected".to_vec()])
            .await
            .unwrap();
        writers.close().await.unwrap();
        assert!(matches!(
            done.await.unwrap(),
            Err(Error::DigestMismatch { .. })
        ));
        assert!(!bad.exists());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn compressed_whole_files_land_whichever_way_they_are_decoded() {
        // Decoded in one call (declared size, in one chunk or two), as a stream (no declared
        // size; larger than the one-call limit), and a corrupt frame that fails.
        let dir = tempfile::tempdir().unwrap();
        let tuning = TransferConfig {
            whole_decode_bytes: 4000,
            ..TransferConfig::default()
        };
        let mut writers = Writers::start(&tuning);
        let content = |i: usize| {
            format!("line of file {i}\n")
                .repeat(100 + i * 100)
                .into_bytes()
        };
        let declared = |c: &[u8]| zstd::bulk::compress(c, 3).unwrap();
        let undeclared = |c: &[u8]| {
            let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
            std::io::Write::write_all(&mut enc, c).unwrap();
            enc.finish().unwrap()
        };
        let stored: Vec<(Vec<u8>, Vec<Vec<u8>>)> = vec![
            (content(0), vec![declared(&content(0))]),
            (content(1), {
                let packed = declared(&content(1));
                vec![packed[..5].to_vec(), packed[5..].to_vec()]
            }),
            (content(2), vec![undeclared(&content(2))]),
            (content(3), vec![declared(&content(3))]),
        ];
        assert!(content(3).len() > tuning.whole_decode_bytes);
        let mut written = Vec::new();
        for (i, (content, chunks)) in stored.into_iter().enumerate() {
            let target = dir.path().join(format!("f{i}"));
            let mut file = job(target.clone(), &content);
            file.compressed = true;
            file.fresh = i % 2 == 0;
            let done = writers.submit_whole(file, chunks).await.unwrap();
            written.push((target, content, done));
        }
        let bad = dir.path().join("bad");
        let mut corrupt = declared(b"some content that is long enough to compress");
        let last = corrupt.len() - 1;
        corrupt[last] ^= 0xff;
        let mut file = job(bad.clone(), b"some content that is long enough to compress");
        file.compressed = true;
        let failed = writers.submit_whole(file, vec![corrupt]).await.unwrap();
        writers.close().await.unwrap();
        for (target, content, done) in written {
            assert_eq!(done.await.unwrap().unwrap(), content.len() as u64);
            assert_eq!(std::fs::read(&target).unwrap(), content);
        }
        assert!(failed.await.unwrap().is_err());
        assert!(!bad.exists());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn abandoned_file_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let writers = Writers::start(&TransferConfig::default());
        let target = dir.path().join("f");
        let (feed, done) = writers.submit(job(target.clone(), b"whole")).await.unwrap();
        assert!(feed.chunk(b"wh".to_vec()).await);
        drop(feed);
        assert!(done.await.unwrap().is_err());
        writers.close().await.unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
