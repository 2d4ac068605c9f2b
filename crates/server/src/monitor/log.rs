//! The command log: one JSON line per ended command, written off the request path.
//!
//! A command's end only puts its record on a bounded queue (`command_log_queue_records`) and
//! never waits: when the writer is that far behind, the record is dropped and counted. A writer
//! thread appends whatever is queued with one write. A failed write (full disk, unwritable
//! file) drops that batch, cuts the file back to where the batch began so no partial line
//! stays, is counted and logged (at most every ten seconds), and never reaches a command.
//!
//! Rotation: before a write that would take the file past `command_log_rotate_bytes`, or once
//! the file is older than `command_log_rotate_secs`, `FILE` becomes `FILE.1` (`FILE.1` becomes
//! `FILE.2`, ...) and a new `FILE` begins; at most `command_log_keep` rotated files are kept,
//! the oldest removed. Lines are not fsynced: a machine crash may lose the last ones.

use super::record::CommandRecord;
use super::registry::CommandSink;
use crate::audit::Clock;
use crate::lossy_log::{self, LossReport, Losses};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::{Duration, SystemTime};

/// How the command log is written and rotated (from `ServerConfig`).
#[derive(Clone, Debug)]
pub(crate) struct LogOptions {
    pub(crate) path: PathBuf,
    pub(crate) queue_records: usize,
    pub(crate) rotate_bytes: u64,
    pub(crate) rotate_age: Duration,
    pub(crate) keep: usize,
}

/// The command log could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot open the command log {}: {source}", path.display())]
pub struct CommandLogOpenError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// The request side: a [`CommandSink`] that queues records for the writer.
pub(crate) struct CommandLog {
    queue: SyncSender<CommandRecord>,
    counters: Arc<Losses>,
}

impl CommandSink for CommandLog {
    fn ended(&self, record: CommandRecord) {
        match self.queue.try_send(record) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.counters.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The writer thread's end: lets it write what is queued at shutdown.
pub(crate) struct CommandLogWriter {
    done: Receiver<()>,
}

impl CommandLogWriter {
    /// Waits at most `wait` for the writer to write what is queued (every request side must
    /// be gone for it to finish).
    pub(crate) fn finish(self, wait: Duration) {
        let _ = self.done.recv_timeout(wait);
    }
}

/// Opens the log (creating it and its directory) and starts its writer.
pub(crate) fn open(
    options: LogOptions,
) -> Result<(Arc<CommandLog>, CommandLogWriter), CommandLogOpenError> {
    let path = options.path.clone();
    let failed = |source| CommandLogOpenError {
        path: path.clone(),
        source,
    };
    if let Some(dir) = options.path.parent() {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let file = open_append(&options.path).map_err(failed)?;
    let (tx, rx) = std::sync::mpsc::sync_channel(options.queue_records.max(1));
    let (done_tx, done) = std::sync::mpsc::channel();
    let counters = Arc::new(Losses::default());
    let mut writer = Writer {
        opened: file_age_start(&file),
        file,
        options,
        counters: counters.clone(),
        losses: LossReport::new("command log", counters.clone()),
    };
    std::thread::Builder::new()
        .name("keel-command-log".into())
        .spawn(move || {
            writer.run(rx);
            let _ = done_tx.send(());
        })
        .map_err(failed)?;
    Ok((
        Arc::new(CommandLog {
            queue: tx,
            counters,
        }),
        CommandLogWriter { done },
    ))
}

fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

/// When the file's age began: its creation (or last change) time when the system tells it.
fn file_age_start(file: &std::fs::File) -> SystemTime {
    file.metadata()
        .and_then(|m| m.created().or_else(|_| m.modified()))
        .unwrap_or_else(|_| SystemTime::now())
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
    fn run(&mut self, rx: Receiver<CommandRecord>) {
        let mut batch = Vec::new();
        let mut clock = Clock::default();
        while let Ok(first) = rx.recv() {
            batch.clear();
            let mut count = 1;
            push_line(&mut batch, first, &mut clock);
            while let Ok(next) = rx.try_recv() {
                push_line(&mut batch, next, &mut clock);
                count += 1;
            }
            self.rotate_if_due(batch.len() as u64);
            match lossy_log::append(&mut self.file, &batch) {
                Ok(()) => self.losses.report(&self.options.path, None),
                Err(e) => {
                    self.counters.failed.fetch_add(count, Ordering::Relaxed);
                    self.losses.report(&self.options.path, Some(&e));
                }
            }
        }
        self.losses.report_now(&self.options.path, None);
    }

    /// Rotates before a write of `adding` bytes when the file would outgrow its size or has
    /// outlived its age (a file that is not a regular file, like /dev/null, never rotates).
    fn rotate_if_due(&mut self, adding: u64) {
        let Ok(meta) = self.file.metadata() else {
            return;
        };
        if !meta.is_file() || meta.len() == 0 {
            return;
        }
        let too_big = meta.len() + adding > self.options.rotate_bytes;
        let too_old = self
            .opened
            .elapsed()
            .is_ok_and(|age| age >= self.options.rotate_age);
        if !(too_big || too_old) {
            return;
        }
        match rotate(&self.options.path, self.options.keep) {
            Ok(file) => {
                self.file = file;
                self.opened = SystemTime::now();
            }
            Err(e) => {
                // Keep appending to the file we have; the next write tries again.
                tracing::warn!(
                    path = %self.options.path.display(),
                    error = %e,
                    "command log: cannot rotate"
                );
            }
        }
    }
}

/// `path` → `path.1` → ... → `path.keep` (the oldest removed); returns the new, empty `path`.
fn rotate(path: &Path, keep: usize) -> std::io::Result<std::fs::File> {
    let numbered = |n: usize| {
        let mut p = path.as_os_str().to_owned();
        p.push(format!(".{n}"));
        PathBuf::from(p)
    };
    if keep == 0 {
        std::fs::remove_file(path)?;
    } else {
        match std::fs::remove_file(numbered(keep)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        for n in (1..keep).rev() {
            match std::fs::rename(numbered(n), numbered(n + 1)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        std::fs::rename(path, numbered(1))?;
    }
    open_append(path)
}

/// One record as a JSON line, stamped with the time it is written.
fn push_line(out: &mut Vec<u8>, record: CommandRecord, clock: &mut Clock) {
    record.write_line(clock.format(SystemTime::now()), out);
}

#[cfg(test)]
mod tests {
    use super::rotate;

    /// Rotation shifts the numbered files up and keeps at most `keep` of them.
    #[test]
    fn rotation_keeps_the_newest_files_only() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("commands.jsonl");
        for i in 0..5 {
            std::fs::write(&path, format!("{i}\n")).expect("write");
            rotate(&path, 3).expect("rotate");
        }
        let read =
            |n: usize| std::fs::read_to_string(dir.path().join(format!("commands.jsonl.{n}")));
        assert_eq!(read(1).expect(".1"), "4\n");
        assert_eq!(read(2).expect(".2"), "3\n");
        assert_eq!(read(3).expect(".3"), "2\n");
        assert!(read(4).is_err(), "a fourth rotated file was kept");
        assert_eq!(std::fs::read_to_string(&path).expect("new file"), "");
    }
}
