//! WAL checkpoints off the writer's path: a thread of their own copies committed pages into
//! the database file.
//!
//! SQLite's automatic checkpoint runs inside the `COMMIT` that crosses its threshold, so the
//! writer (and every submit queued behind it) waited while tens of megabytes were copied and
//! flushed after a big branch. The writer connection turns it off (`wal_autocheckpoint = 0`)
//! and nudges this thread after each commit instead. A passive checkpoint never blocks the
//! writer or readers; it copies what no open snapshot still needs. The thread runs at a lower
//! CPU priority (`StoreConfig::checkpoint_nice`): on a busy machine, requests go first and the
//! WAL grows a little longer instead. At most one checkpoint runs per
//! `StoreConfig::checkpoint_interval_ms`; nudges in between collapse into one.
//!
//! The WAL file is cut back too: a writer connection cuts it to
//! `StoreConfig::wal_size_limit_bytes` when it starts the log over (`journal_size_limit`), and
//! when an interval passes without a commit this thread tries a `TRUNCATE` checkpoint, which
//! empties the file. Each try is one attempt without waiting (no busy timeout on this
//! connection): a reader still on the log or a writer makes it give up and try again after
//! the next quiet interval, so it never holds up a request.

use crate::{StoreConfig, StoreError};
use rusqlite::Connection;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::{Duration, Instant};

/// Asks the checkpoint thread for a checkpoint; dropping every `Nudge` stops the thread.
#[derive(Clone)]
pub(crate) struct Nudge(SyncSender<()>);

impl Nudge {
    /// Requests a checkpoint soon; never waits.
    pub(crate) fn nudge(&self) {
        // Full: a checkpoint is already due. Disconnected: the thread is gone (shutdown).
        let _ = self.0.try_send(());
    }
}

/// The checkpoint thread; dropping this waits for it to end (after every `Nudge` is gone).
pub(crate) struct Checkpointer {
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread on its own connection.
    pub(crate) fn start(
        conn: Connection,
        config: &StoreConfig,
    ) -> Result<(Checkpointer, Nudge), StoreError> {
        let (tx, rx) = sync_channel(1);
        let interval = Duration::from_millis(config.checkpoint_interval_ms);
        let nice = config.checkpoint_nice;
        let thread = std::thread::Builder::new()
            .name("keel-checkpoint".into())
            .spawn(move || run(conn, rx, interval, nice))
            .map_err(|source| StoreError::Thread {
                name: "checkpoint",
                source,
            })?;
        Ok((
            Checkpointer {
                thread: Some(thread),
            },
            Nudge(tx),
        ))
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(conn: Connection, rx: Receiver<()>, interval: Duration, nice: i32) {
    if let Err(e) = crate::thread_priority::lower_current_thread(nice) {
        // Checkpoints then compete at normal priority.
        tracing::debug!(error = %e, "checkpoint thread keeps normal priority");
    }
    // Ends when the last `Nudge` (the writer's) is dropped, even in the middle of a rest, so
    // closing a store never waits out an interval.
    // Checkpoints never wait for a lock: a busy answer is a try for later.
    if let Err(e) = conn.busy_timeout(Duration::ZERO) {
        tracing::debug!(error = %e, "checkpoint connection keeps its busy timeout");
    }
    let mut due = rx.recv().is_ok();
    while due {
        let result = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
            Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
        });
        match result {
            Ok((frames, copied)) => tracing::trace!(frames, copied, "wal checkpoint"),
            Err(e) => tracing::warn!(error = %e, "wal checkpoint failed; retrying later"),
        }
        due = match rest(&rx, interval) {
            Rest::Nudged => true,
            Rest::Quiet => empty_while_quiet(&conn, &rx, interval),
            Rest::Closed => false,
        };
    }
}

/// Tries to empty the WAL once per quiet interval until it works, then waits for the next
/// nudge. Returns whether a checkpoint is due (false: the store is closing).
fn empty_while_quiet(conn: &Connection, rx: &Receiver<()>, interval: Duration) -> bool {
    while !truncate_when_quiet(conn) {
        match rest(rx, interval) {
            Rest::Nudged => return true,
            Rest::Quiet => {}
            Rest::Closed => return false,
        }
    }
    rx.recv().is_ok()
}

/// Copies what is left and empties the WAL file, if nothing is using the log right now;
/// whether it did.
fn truncate_when_quiet(conn: &Connection) -> bool {
    match conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
        r.get::<_, i64>(0)
    }) {
        Ok(0) => {
            tracing::trace!("wal truncated");
            true
        }
        Ok(_) => {
            tracing::trace!("wal in use; truncation tried again next quiet interval");
            false
        }
        Err(e) => {
            tracing::debug!(error = %e, "wal truncation skipped");
            false
        }
    }
}

/// How a rest between two checkpoints ended.
enum Rest {
    /// A nudge came during the rest: the next checkpoint is due now.
    Nudged,
    /// No nudge: wait for the next one.
    Quiet,
    /// Every `Nudge` is gone: the store is closing.
    Closed,
}

/// Waits out `interval`, collapsing the nudges that arrive meanwhile into one.
fn rest(rx: &Receiver<()>, interval: Duration) -> Rest {
    let until = Instant::now() + interval;
    let mut nudged = false;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return if nudged { Rest::Nudged } else { Rest::Quiet };
        }
        match rx.recv_timeout(left) {
            Ok(()) => nudged = true,
            Err(RecvTimeoutError::Timeout) => {
                return if nudged { Rest::Nudged } else { Rest::Quiet };
            }
            Err(RecvTimeoutError::Disconnected) => return Rest::Closed,
        }
    }
}
