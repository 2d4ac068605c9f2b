//! The gate every password hash passes: at most `password_check_threads` argon2id hashes run
//! at once (each holds `password_hash_kib` of memory) and at most `password_check_queue` wait
//! for one; a further check is refused at once, so memory and threads stay bounded whatever
//! clients send. It also counts the passwords checked, for the metrics.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Longest a check waits in the queue before it is refused as busy.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// What the gate has counted since the server started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PasswordCheckStats {
    /// Passwords hashed to be compared with a stored hash (or the stand-in hash of a user
    /// without one).
    pub checked: u64,
    /// Checks refused because the gate and its queue were full.
    pub busy: u64,
    /// Attempts refused by the login limits before any hash.
    pub limited: u64,
}

pub(crate) struct HashGate {
    permits: usize,
    queue: usize,
    /// (running, waiting).
    state: Mutex<(usize, usize)>,
    freed: Condvar,
    checked: AtomicU64,
    busy: AtomicU64,
    limited: AtomicU64,
}

/// The gate and its queue are full.
#[derive(Debug)]
pub(crate) struct Busy;

/// A running hash's place at the gate, given back when dropped.
pub(crate) struct Permit<'a>(&'a HashGate);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        state.0 -= 1;
        self.0.freed.notify_one();
    }
}

impl HashGate {
    pub(crate) fn new(permits: usize, queue: usize) -> HashGate {
        HashGate {
            permits: permits.max(1),
            queue,
            state: Mutex::new((0, 0)),
            freed: Condvar::new(),
            checked: AtomicU64::new(0),
            busy: AtomicU64::new(0),
            limited: AtomicU64::new(0),
        }
    }

    /// A place to run one hash: at once, after waiting in the queue, or `Busy`.
    pub(crate) fn enter(&self) -> Result<Permit<'_>, Busy> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.0 >= self.permits {
            if state.1 >= self.queue {
                drop(state);
                self.busy.fetch_add(1, Ordering::Relaxed);
                return Err(Busy);
            }
            state.1 += 1;
            let (mut next, waited) = self
                .freed
                .wait_timeout_while(state, MAX_WAIT, |s| s.0 >= self.permits)
                .unwrap_or_else(|e| e.into_inner());
            next.1 -= 1;
            if waited.timed_out() && next.0 >= self.permits {
                drop(next);
                self.busy.fetch_add(1, Ordering::Relaxed);
                return Err(Busy);
            }
            state = next;
        }
        state.0 += 1;
        Ok(Permit(self))
    }

    /// Counts one password checked.
    pub(crate) fn counted(&self) {
        self.checked.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one attempt refused by the limits.
    pub(crate) fn limited(&self) {
        self.limited.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn stats(&self) -> PasswordCheckStats {
        PasswordCheckStats {
            checked: self.checked.load(Ordering::Relaxed),
            busy: self.busy.load(Ordering::Relaxed),
            limited: self.limited.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn at_most_the_permits_run_and_the_queue_is_bounded() {
        let gate = Arc::new(HashGate::new(2, 3));
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..12)
            .map(|_| {
                let (gate, running, peak) = (gate.clone(), running.clone(), peak.clone());
                std::thread::spawn(move || {
                    let Ok(_permit) = gate.enter() else {
                        return false;
                    };
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(50));
                    running.fetch_sub(1, Ordering::SeqCst);
                    true
                })
            })
            .collect();
        let ran = threads
            .into_iter()
            .map(|t| t.join().expect("thread"))
            .filter(|ran| *ran)
            .count();
        assert!(peak.load(Ordering::SeqCst) <= 2);
        assert!(ran >= 2, "{ran}");
        assert_eq!(ran as u64 + gate.stats().busy, 12);
    }
}
