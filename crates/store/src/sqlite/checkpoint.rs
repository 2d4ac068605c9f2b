//! WAL checkpoints off the writer's path: a thread of their own copies committed pages into
//! the database file.
//!
//! SQLite's automatic checkpoint runs inside the `COMMIT` that crosses its threshold, so the
//! writer (and every submit queued behind it) waited while tens of megabytes were copied and
//! flushed after a big branch. The writer connection turns it off (`wal_autocheckpoint = 0`)
//! and nudges this thread after each commit instead. A passive checkpoint never blocks the
//! writer or readers; it copies what no open snapshot still needs. The thread runs at a lower
//! CPU priority ([`CHECKPOINT_NICE`]): on a busy machine, requests go first and the WAL grows
//! a little longer instead.

use rusqlite::Connection;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::time::Duration;

/// At most one checkpoint per interval; nudges in between collapse into one.
const INTERVAL: Duration = Duration::from_millis(250);

/// Nice value (Linux, per thread) of the checkpoint thread.
const CHECKPOINT_NICE: libc::c_int = 10;

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
    pub(crate) fn start(conn: Connection) -> (Checkpointer, Nudge) {
        let (tx, rx) = sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("keel-checkpoint".into())
            .spawn(move || run(conn, rx))
            .expect("spawning the checkpoint thread");
        (
            Checkpointer {
                thread: Some(thread),
            },
            Nudge(tx),
        )
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(conn: Connection, rx: Receiver<()>) {
    lower_priority();
    // Ends when the last `Nudge` (the writer's) is dropped.
    while rx.recv().is_ok() {
        let result = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
            Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
        });
        match result {
            Ok((frames, copied)) => tracing::trace!(frames, copied, "wal checkpoint"),
            Err(e) => tracing::warn!(error = %e, "wal checkpoint failed; retrying later"),
        }
        std::thread::sleep(INTERVAL);
    }
}

/// Lowers the calling thread's CPU priority (Linux keeps nice values per thread). Best effort:
/// a failure only means checkpoints compete at normal priority.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid and setpriority take plain integers and touch no memory of ours.
        let result = unsafe {
            let tid = libc::gettid();
            libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, CHECKPOINT_NICE)
        };
        if result != 0 {
            tracing::debug!("could not lower the checkpoint thread's priority");
        }
    }
}
