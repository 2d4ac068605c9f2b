//! The registry of running commands: one [`Running`] per RPC from its start to its end, what
//! `monitor show` lists and `monitor terminate` marks, and the one place every command's end
//! is reported from (to the [`CommandSink`]s: the command log, and whatever else counts
//! commands).

use super::args::Arguments;
use super::record::CommandRecord;
use keel_store::command::CommandCounters;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::Waker;
use std::time::{Duration, Instant, SystemTime};

/// Who a command runs as, once its handler has read the request's caller.
#[derive(Clone, Debug, Default)]
pub(crate) struct Who {
    pub(crate) user: String,
    pub(crate) workspace: String,
    pub(crate) host: String,
}

/// One command from its start to its end.
pub(crate) struct Running {
    pub(crate) id: u64,
    /// The RPC's name (`Sync`, `Submit`, ...).
    pub(crate) command: String,
    /// The client program and version (the request's `user-agent`).
    pub(crate) program: String,
    pub(crate) started: Instant,
    pub(crate) started_at: SystemTime,
    pub(crate) who: OnceLock<Who>,
    pub(crate) address: OnceLock<IpAddr>,
    /// The request, to put its arguments in words when asked ([`Running::args`]).
    pub(crate) args: OnceLock<Arguments>,
    pub(crate) counters: Arc<CommandCounters>,
    pub(crate) bytes_in: AtomicU64,
    pub(crate) bytes_out: AtomicU64,
    /// Who terminated it (`monitor terminate`).
    pub(crate) terminated_by: OnceLock<String>,
    /// Tasks to wake when it is terminated (its handler, its response stream).
    wakers: Mutex<Vec<Waker>>,
}

impl Running {
    /// Whether `monitor terminate` marked it.
    pub(crate) fn is_terminated(&self) -> bool {
        self.counters.is_cancelled()
    }

    /// Wakes the current task when the command is terminated.
    pub(crate) fn wake_on_terminate(&self, waker: &Waker) {
        let mut wakers = self.wakers.lock().unwrap_or_else(PoisonError::into_inner);
        if !wakers.iter().any(|w| w.will_wake(waker)) {
            // Two tasks at most poll a command (its handler and its response body).
            if wakers.len() >= 4 {
                wakers.remove(0);
            }
            wakers.push(waker.clone());
        }
    }

    /// The request's arguments, cut to `command_args_max_bytes` (empty when none were kept).
    pub(crate) fn args(&self) -> String {
        self.args.get().map_or_else(String::new, Arguments::text)
    }

    pub(crate) fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// Something told of every command's end (the command log).
pub(crate) trait CommandSink: Send + Sync {
    fn ended(&self, record: CommandRecord);
}

/// The running commands and where their ends go.
pub(crate) struct Registry {
    next_id: AtomicU64,
    running: Mutex<BTreeMap<u64, Arc<Running>>>,
    sinks: Vec<Arc<dyn CommandSink>>,
    /// Commands slower than this also go to the human log.
    slow: Duration,
}

impl Registry {
    pub(crate) fn new(sinks: Vec<Arc<dyn CommandSink>>, slow: Duration) -> Registry {
        Registry {
            next_id: AtomicU64::new(1),
            running: Mutex::new(BTreeMap::new()),
            sinks,
            slow,
        }
    }

    /// Registers a command that starts now.
    pub(crate) fn start(&self, command: String, program: String) -> Arc<Running> {
        let run = Arc::new(Running {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            command,
            program,
            started: Instant::now(),
            started_at: SystemTime::now(),
            who: OnceLock::new(),
            address: OnceLock::new(),
            args: OnceLock::new(),
            counters: Arc::new(CommandCounters::default()),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            terminated_by: OnceLock::new(),
            wakers: Mutex::new(Vec::new()),
        });
        self.lock().insert(run.id, run.clone());
        run
    }

    /// The commands running now, oldest first.
    pub(crate) fn running(&self) -> Vec<Arc<Running>> {
        self.lock().values().cloned().collect()
    }

    /// Marks command `id` terminated by `by` and wakes its tasks; `None` when no such command
    /// runs.
    pub(crate) fn terminate(&self, id: u64, by: &str) -> Option<Arc<Running>> {
        let run = self.lock().get(&id).cloned()?;
        let _ = run.terminated_by.set(by.to_string());
        run.counters.cancel();
        let wakers =
            std::mem::take(&mut *run.wakers.lock().unwrap_or_else(PoisonError::into_inner));
        for w in wakers {
            w.wake();
        }
        Some(run)
    }

    /// Ends command `run` with `outcome` (`None`: success): it leaves the registry and its
    /// record goes to the sinks, and to the human log when it failed or was slow. With no
    /// sink and nothing to tell, no record is made.
    pub(crate) fn end(&self, run: &Arc<Running>, outcome: Option<(tonic::Code, String)>) {
        self.lock().remove(&run.id);
        // Nothing will wake the command's tasks now; the record may outlive them.
        std::mem::take(&mut *run.wakers.lock().unwrap_or_else(PoisonError::into_inner));
        let slow = run.elapsed() >= self.slow;
        if self.sinks.is_empty() && outcome.is_none() && !slow {
            return;
        }
        let record = CommandRecord::of(run, outcome);
        let who = run.who.get();
        if record.code != tonic::Code::Ok {
            tracing::warn!(
                id = run.id,
                user = %record.user(),
                command = %run.command,
                lapse_ms = record.lapse.as_secs_f64() * 1000.0,
                code = %super::record::code_name(record.code),
                error = %record.error,
                "command failed"
            );
        } else if slow {
            tracing::warn!(
                id = run.id,
                user = %record.user(),
                workspace = %who.map_or("", |w| w.workspace.as_str()),
                command = %run.command,
                args = %run.args(),
                lapse_ms = record.lapse.as_secs_f64() * 1000.0,
                writer_wait_ms = record.writer_wait.as_secs_f64() * 1000.0,
                writer_hold_ms = record.writer_hold.as_secs_f64() * 1000.0,
                "slow command"
            );
        }
        if let Some((last, others)) = self.sinks.split_last() {
            for sink in others {
                sink.ended(record.clone());
            }
            last.ended(record);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<Running>>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
