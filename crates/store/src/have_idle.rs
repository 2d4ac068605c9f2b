//! Empties the write-ahead log of a have list that nobody has written for a while.
//!
//! A have list's WAL is checkpointed when it reaches `StoreConfig::have_wal_size_limit_bytes`
//! and cut back to that size when it starts over, so an idle workspace would keep up to that
//! much log beside its list for good. After each write the have store tells this thread which
//! list it wrote; once `StoreConfig::checkpoint_interval_ms` passes without another write to
//! that list, the thread runs a `TRUNCATE` checkpoint on its connection, which copies what is
//! left into the list and empties the log file. A list in use at that moment (its connection
//! held by a request, or another connection reading it) is tried again after the next quiet
//! interval; the try never waits for a lock, so it never holds up a request.

use crate::StoreError;
use rusqlite::Connection;
use std::collections::HashMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, TryLockError, Weak};
use std::time::{Duration, Instant};

/// A have list just written: its name and its connection (weak: closing it is not delayed).
struct Written {
    workspace: String,
    conn: Weak<Mutex<Connection>>,
}

/// The thread emptying idle have lists' logs; dropping this stops it.
pub(crate) struct IdleTruncator {
    tx: Option<Sender<Written>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl IdleTruncator {
    /// Starts the thread: a list is emptied once `quiet` passes without a write to it; its
    /// connection waits `busy_timeout_ms` for locks again after each try.
    pub(crate) fn start(quiet: Duration, busy_timeout_ms: u32) -> Result<Self, StoreError> {
        let (tx, rx) = channel();
        let thread = std::thread::Builder::new()
            .name("keel-have-idle".into())
            .spawn(move || run(rx, quiet, Duration::from_millis(busy_timeout_ms.into())))
            .map_err(|source| StoreError::Thread {
                name: "have-idle",
                source,
            })?;
        Ok(IdleTruncator {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Notes that `workspace`'s have list was just written through `conn`; never waits.
    pub(crate) fn wrote(&self, workspace: &str, conn: &Arc<Mutex<Connection>>) {
        if let Some(tx) = &self.tx {
            // Disconnected only when the thread is gone: the log is then cut back at close.
            let _ = tx.send(Written {
                workspace: workspace.to_string(),
                conn: Arc::downgrade(conn),
            });
        }
    }
}

impl Drop for IdleTruncator {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(rx: Receiver<Written>, quiet: Duration, busy_timeout: Duration) {
    // Lists written and not yet emptied, with the time of their last write (or failed try).
    let mut pending: HashMap<String, (Weak<Mutex<Connection>>, Instant)> = HashMap::new();
    loop {
        let next_due = pending.values().map(|(_, at)| *at + quiet).min();
        let received = match next_due {
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(due) => rx.recv_timeout(due.saturating_duration_since(Instant::now())),
        };
        match received {
            Ok(written) => {
                pending.insert(written.workspace, (written.conn, Instant::now()));
            }
            Err(RecvTimeoutError::Timeout) => {}
            // The store is closing; closing the connections empties the logs.
            Err(RecvTimeoutError::Disconnected) => return,
        }
        let now = Instant::now();
        pending.retain(|workspace, (conn, at)| {
            if now < *at + quiet {
                return true;
            }
            let emptied = empty_log(conn, busy_timeout);
            if !emptied {
                tracing::trace!(workspace, "have list in use; its log is emptied later");
                *at = now;
            }
            !emptied
        });
    }
}

/// Runs one `TRUNCATE` checkpoint on an idle list's connection without waiting for any lock;
/// whether the list needs no further try (emptied, or its connection closed meanwhile).
fn empty_log(conn: &Weak<Mutex<Connection>>, busy_timeout: Duration) -> bool {
    let Some(conn) = conn.upgrade() else {
        return true;
    };
    let conn = match conn.try_lock() {
        Ok(conn) => conn,
        Err(TryLockError::WouldBlock) => return false,
        // A request panicked while holding it: the next write to the list arms it again.
        Err(TryLockError::Poisoned(_)) => return true,
    };
    if conn.busy_timeout(Duration::ZERO).is_err() {
        return false;
    }
    let result = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
        r.get::<_, i64>(0)
    });
    if let Err(e) = conn.busy_timeout(busy_timeout) {
        tracing::warn!(error = %e, "have list connection keeps no busy timeout");
    }
    match result {
        Ok(busy) => busy == 0,
        Err(e) => {
            tracing::debug!(error = %e, "have list log not emptied; tried again later");
            false
        }
    }
}
