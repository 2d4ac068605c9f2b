//! What a log lost: records dropped when its queue was full or not written when its file
//! failed, counted, and said in the server's log at most every few seconds; and the append
//! that never leaves half a batch in the file.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Least time between two "records lost" lines in the server's log.
const REPORT_EVERY: Duration = Duration::from_secs(10);

/// Records a log lost so far: shared by the request side (which drops when its queue is
/// full) and the writer (which fails to write).
#[derive(Default)]
pub(crate) struct Losses {
    /// Records dropped because the queue was full.
    pub(crate) dropped: AtomicU64,
    /// Records the writer could not write.
    pub(crate) failed: AtomicU64,
}

/// The writer's account of its losses in the server's log.
pub(crate) struct LossReport {
    /// The log's name in messages ("audit log", "command log").
    what: &'static str,
    losses: Arc<Losses>,
    /// (dropped, failed) as last logged.
    reported: (u64, u64),
    last_report: Option<Instant>,
}

impl LossReport {
    pub(crate) fn new(what: &'static str, losses: Arc<Losses>) -> LossReport {
        LossReport {
            what,
            losses,
            reported: (0, 0),
            last_report: None,
        }
    }

    /// The log's name in messages.
    pub(crate) fn what(&self) -> &'static str {
        self.what
    }

    /// Logs new drops or failures, at most once per `REPORT_EVERY`.
    pub(crate) fn report(&mut self, path: &Path, error: Option<&std::io::Error>) {
        if self
            .last_report
            .is_some_and(|at| at.elapsed() < REPORT_EVERY)
        {
            return;
        }
        self.report_now(path, error);
    }

    /// Logs new drops or failures now (when the log closes).
    pub(crate) fn report_now(&mut self, path: &Path, error: Option<&std::io::Error>) {
        let dropped = self.losses.dropped.load(Ordering::Relaxed);
        let failed = self.losses.failed.load(Ordering::Relaxed);
        if (dropped, failed) == self.reported {
            return;
        }
        self.reported = (dropped, failed);
        self.last_report = Some(Instant::now());
        tracing::warn!(
            path = %path.display(),
            dropped_queue_full = dropped,
            failed_to_write = failed,
            error = %error.map(|e| e.to_string()).unwrap_or_default(),
            "{}: records lost so far",
            self.what
        );
    }
}

/// Appends `bytes` to `file`; on failure cuts a regular file back to its length before, so a
/// failed batch leaves no partial line.
pub(crate) fn append(file: &mut std::fs::File, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let before = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    let result = file.write_all(bytes);
    if result.is_err()
        && let Some(len) = before
    {
        let _ = file.set_len(len);
    }
    result
}
