//! The running command a thread works for: a counter handle the layers below the server fill
//! (time queued for and holding the writer, rows read and written, files sent and received) and the
//! flag `monitor terminate` raises.
//!
//! The server makes one [`CommandCounters`] per RPC and [`enter`]s it on each thread that works
//! for the RPC; code below reads it with [`current`]. It travels by thread rather than by
//! argument so that no service signature has to carry it: a thread with no command entered
//! (tests, background work) simply counts nothing. The writer thread receives the handle with
//! each job and checks the flag just before keeping the job's changes, so a terminated command
//! commits nothing.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

/// What a running command is doing now (as `monitor show` says it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum CommandState {
    /// Working: reading metadata or content, or waiting for the request's next message.
    Running = 0,
    /// Queued for the store's single writer.
    WriterQueued = 1,
    /// Inside the writer's transaction.
    Writing = 2,
    /// The answer is going out (the response stream is flowing).
    Sending = 3,
}

impl CommandState {
    /// The state's name as `monitor show` prints it.
    pub fn name(self) -> &'static str {
        match self {
            CommandState::Running => "running",
            CommandState::WriterQueued => "writer-queued",
            CommandState::Writing => "writing",
            CommandState::Sending => "sending",
        }
    }

    fn from_u8(v: u8) -> CommandState {
        match v {
            1 => CommandState::WriterQueued,
            2 => CommandState::Writing,
            3 => CommandState::Sending,
            _ => CommandState::Running,
        }
    }
}

/// One command's counters and its termination flag; shared by every thread working for it.
#[derive(Debug, Default)]
pub struct CommandCounters {
    writer_wait_us: AtomicU64,
    writer_hold_us: AtomicU64,
    rows_read: AtomicU64,
    rows_written: AtomicU64,
    files_sent: AtomicU64,
    files_received: AtomicU64,
    state: AtomicU8,
    cancelled: AtomicBool,
}

impl CommandCounters {
    /// Adds one writer job's time queued and time in the transaction.
    pub fn add_writer(&self, waited: Duration, held: Duration) {
        self.writer_wait_us
            .fetch_add(waited.as_micros() as u64, Ordering::Relaxed);
        self.writer_hold_us
            .fetch_add(held.as_micros() as u64, Ordering::Relaxed);
    }

    /// Counts one metadata row read (the service counts the rows its scan budget sees).
    pub fn add_row_read(&self) {
        self.rows_read.fetch_add(1, Ordering::Relaxed);
    }

    pub fn add_rows_written(&self, rows: u64) {
        self.rows_written.fetch_add(rows, Ordering::Relaxed);
    }

    pub fn add_file_sent(&self) {
        self.files_sent.fetch_add(1, Ordering::Relaxed);
    }

    pub fn add_file_received(&self) {
        self.files_received.fetch_add(1, Ordering::Relaxed);
    }

    /// Time queued for the writer so far.
    pub fn writer_wait(&self) -> Duration {
        Duration::from_micros(self.writer_wait_us.load(Ordering::Relaxed))
    }

    /// Time inside the writer's transactions so far.
    pub fn writer_hold(&self) -> Duration {
        Duration::from_micros(self.writer_hold_us.load(Ordering::Relaxed))
    }

    pub fn rows_read(&self) -> u64 {
        self.rows_read.load(Ordering::Relaxed)
    }

    pub fn rows_written(&self) -> u64 {
        self.rows_written.load(Ordering::Relaxed)
    }

    pub fn files_sent(&self) -> u64 {
        self.files_sent.load(Ordering::Relaxed)
    }

    pub fn files_received(&self) -> u64 {
        self.files_received.load(Ordering::Relaxed)
    }

    pub fn state(&self) -> CommandState {
        CommandState::from_u8(self.state.load(Ordering::Relaxed))
    }

    pub fn set_state(&self, state: CommandState) {
        self.state.store(state as u8, Ordering::Relaxed);
    }

    /// Marks the command terminated: its next write job is rolled back, its streams end.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<CommandCounters>>> = const { RefCell::new(None) };
}

/// The command the calling thread works for, if any.
pub fn current() -> Option<Arc<CommandCounters>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Whether the command the calling thread works for was terminated.
pub fn cancelled() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(|c| c.is_cancelled()))
}

/// Runs `f` on the calling thread's command's counters, when it has one.
pub fn with_current(f: impl FnOnce(&CommandCounters)) {
    CURRENT.with(|c| {
        if let Some(c) = c.borrow().as_ref() {
            f(c)
        }
    })
}

/// Makes `counters` the calling thread's command until the guard drops (then the previous one
/// is back).
pub fn enter(counters: Option<Arc<CommandCounters>>) -> Entered {
    Entered(CURRENT.with(|c| c.replace(counters)))
}

/// Restores the thread's previous command when dropped.
pub struct Entered(Option<Arc<CommandCounters>>);

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entered_command_is_current_until_the_guard_drops() {
        assert!(current().is_none());
        let c = Arc::new(CommandCounters::default());
        {
            let _g = enter(Some(c.clone()));
            with_current(|c| c.add_rows_written(3));
            assert!(!cancelled());
            c.cancel();
            assert!(cancelled());
        }
        assert!(current().is_none());
        assert_eq!(c.rows_written(), 3);
    }
}
