//! The server's append-only JSON-lines logs (the audit log, the command log), written by a
//! thread of their own, off the request path.
//!
//! A request only puts its record on a bounded queue and never waits: when the writer is that
//! far behind, the record is dropped and counted. The writer takes whatever is queued, turns it
//! into lines and appends them with one write, then sleeps for the log's batch time so the next
//! records gather into one batch instead of waking it one by one (a quiet log's first record is
//! written at once). A failed write (full disk, unwritable file) drops that batch, cuts the
//! file back to where the batch began so no partial line stays, is counted and logged (at most
//! every ten seconds), and never reaches a request. Lines are not fsynced: a machine crash may
//! lose the last ones.
//!
//! A log with a [`Rotation`] is rotated before a write that would take it past its size, or
//! once it is older than its age (see [`rotate`]).

mod clock;
mod losses;
mod rotate;

pub(crate) use clock::Clock;
pub(crate) use losses::Losses;

use losses::LossReport;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::{Duration, SystemTime};

/// A record a log writes as one line.
pub(crate) trait LogLine: Send + 'static {
    /// Appends the record's JSON line, newline included, to `out`; `clock` formats its time.
    fn push_line(&self, out: &mut Vec<u8>, clock: &mut Clock);
}

/// Where a log goes and how it is written.
#[derive(Clone, Debug)]
pub(crate) struct LogOptions {
    /// The file appended to (created, with its directory, when missing).
    pub(crate) path: PathBuf,
    /// Most records waiting for the writer; more are dropped and counted.
    pub(crate) queue_records: usize,
    /// How long records gather between two writes.
    pub(crate) batch: Duration,
    /// When the file is rotated; `None`: never.
    pub(crate) rotation: Option<Rotation>,
}

/// When a log's file is rotated and how many rotated files are kept.
#[derive(Clone, Debug)]
pub(crate) struct Rotation {
    /// Rotate before a write would take the file past this size (bytes).
    pub(crate) bytes: u64,
    /// Rotate once the file is this old.
    pub(crate) age: Duration,
    /// Most rotated files kept (`FILE.1` newest ... `FILE.keep`).
    pub(crate) keep: usize,
}

/// A log could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot open the {what} {}: {source}", path.display())]
pub struct LogOpenError {
    /// The log's name ("audit log", "command log").
    pub what: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// The request side of a log: cheap to share, never blocks.
pub(crate) struct LogSender<T> {
    queue: SyncSender<T>,
    losses: Arc<Losses>,
}

impl<T> LogSender<T> {
    /// Queues `record` for the writer, or drops and counts it when the queue is full.
    pub(crate) fn send(&self, record: T) {
        match self.queue.try_send(record) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.losses.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// What the log has lost so far.
    #[cfg(test)]
    pub(crate) fn losses(&self) -> &Arc<Losses> {
        &self.losses
    }
}

/// The writer thread's end: lets it write what is queued at shutdown.
pub(crate) struct LogWriter {
    done: Receiver<()>,
}

impl LogWriter {
    /// Waits at most `wait` for the writer to write what is queued (every [`LogSender`] must
    /// be gone for it to finish).
    pub(crate) fn finish(self, wait: Duration) {
        let _ = self.done.recv_timeout(wait);
    }
}

/// Opens the log `what` (creating its file and directory) and starts its writer.
pub(crate) fn open<T: LogLine>(
    what: &'static str,
    options: LogOptions,
) -> Result<(LogSender<T>, LogWriter), LogOpenError> {
    let failed = |source| LogOpenError {
        what,
        path: options.path.clone(),
        source,
    };
    if let Some(dir) = options.path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let file = rotate::open_append(&options.path).map_err(failed)?;
    let (tx, rx) = std::sync::mpsc::sync_channel(options.queue_records.max(1));
    let (done_tx, done) = std::sync::mpsc::channel();
    let losses = Arc::new(Losses::default());
    let thread = format!("keel-{}", what.replace(' ', "-"));
    let mut writer = Writer {
        opened: rotate::file_age_start(&file),
        file,
        losses: LossReport::new(what, losses.clone()),
        counters: losses.clone(),
        options: options.clone(),
    };
    std::thread::Builder::new()
        .name(thread)
        .spawn(move || {
            writer.run(rx);
            let _ = done_tx.send(());
        })
        .map_err(failed)?;
    Ok((LogSender { queue: tx, losses }, LogWriter { done }))
}

struct Writer {
    file: std::fs::File,
    /// When the current file began (its age counts from here).
    opened: SystemTime,
    options: LogOptions,
    counters: Arc<Losses>,
    losses: LossReport,
}

impl Writer {
    fn run<T: LogLine>(&mut self, rx: Receiver<T>) {
        let mut batch = Vec::new();
        let mut clock = Clock::default();
        while let Ok(first) = rx.recv() {
            batch.clear();
            let mut count = 1;
            first.push_line(&mut batch, &mut clock);
            drop(first);
            while let Ok(next) = rx.try_recv() {
                next.push_line(&mut batch, &mut clock);
                count += 1;
            }
            self.rotate_if_due(batch.len() as u64);
            match losses::append(&mut self.file, &batch) {
                Ok(()) => self.losses.report(&self.options.path, None),
                Err(e) => {
                    self.counters.failed.fetch_add(count, Ordering::Relaxed);
                    self.losses.report(&self.options.path, Some(&e));
                }
            }
            std::thread::sleep(self.options.batch);
        }
        self.losses.report_now(&self.options.path, None);
    }

    /// Rotates before a write of `adding` bytes when the file would outgrow its size or has
    /// outlived its age (a file that is not a regular file, like /dev/null, never rotates).
    fn rotate_if_due(&mut self, adding: u64) {
        let Some(rotation) = &self.options.rotation else {
            return;
        };
        let Ok(meta) = self.file.metadata() else {
            return;
        };
        if !meta.is_file() || meta.len() == 0 {
            return;
        }
        let too_big = meta.len() + adding > rotation.bytes;
        let too_old = self.opened.elapsed().is_ok_and(|age| age >= rotation.age);
        if !(too_big || too_old) {
            return;
        }
        match rotate::rotate(&self.options.path, rotation.keep) {
            Ok(file) => {
                self.file = file;
                self.opened = SystemTime::now();
            }
            Err(e) => {
                // Keep appending to the file we have; the next write tries again.
                tracing::warn!(
                    path = %self.options.path.display(),
                    error = %e,
                    "{}: cannot rotate",
                    self.losses.what()
                );
            }
        }
    }
}
