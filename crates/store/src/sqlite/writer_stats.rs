//! Counters of the writer's queue: how many jobs wait for it and hold it now, and the time
//! they waited and held it in total. Read by the server's metrics; a job costs a few atomic
//! additions.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The writer's counters since the store opened.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WriterStats {
    /// Jobs queued and not yet started on the writer thread.
    pub queued: u64,
    /// Jobs started and not yet committed (their group is running).
    pub holding: u64,
    /// Jobs that ran (committed, rolled back or failed).
    pub jobs: u64,
    /// Seconds jobs spent queued before they started, summed.
    pub wait_seconds: f64,
    /// Seconds jobs spent from their start to their group's commit, summed.
    pub hold_seconds: f64,
}

/// The live counters (microseconds for the sums).
#[derive(Debug, Default)]
pub(crate) struct WriterCounters {
    queued: AtomicU64,
    holding: AtomicU64,
    jobs: AtomicU64,
    wait_micros: AtomicU64,
    hold_micros: AtomicU64,
}

/// Microseconds from `queued` to when the job started, once it has (`u64::MAX` before).
pub(crate) struct Started(AtomicU64);

impl WriterCounters {
    /// A job joins the queue; the returned mark is set when it starts.
    pub(crate) fn queue(&self) -> (Instant, Arc<Started>) {
        self.queued.fetch_add(1, Ordering::Relaxed);
        (Instant::now(), Arc::new(Started(AtomicU64::new(u64::MAX))))
    }

    /// The job queued at `at` starts on the writer thread.
    pub(crate) fn start(&self, at: Instant, mark: &Started) {
        let waited = at.elapsed().as_micros() as u64;
        mark.0.store(waited, Ordering::Relaxed);
        self.queued.fetch_sub(1, Ordering::Relaxed);
        self.holding.fetch_add(1, Ordering::Relaxed);
        self.wait_micros.fetch_add(waited, Ordering::Relaxed);
    }

    /// The job queued at `at` has its reply (or the writer is gone).
    pub(crate) fn done(&self, at: Instant, mark: &Started) {
        match mark.0.load(Ordering::Relaxed) {
            u64::MAX => {
                // It never started (the writer stopped): it only leaves the queue.
                self.queued.fetch_sub(1, Ordering::Relaxed);
            }
            waited => {
                let held = (at.elapsed().as_micros() as u64).saturating_sub(waited);
                self.holding.fetch_sub(1, Ordering::Relaxed);
                self.jobs.fetch_add(1, Ordering::Relaxed);
                self.hold_micros.fetch_add(held, Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn snapshot(&self) -> WriterStats {
        let seconds = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64 / 1e6;
        WriterStats {
            queued: self.queued.load(Ordering::Relaxed),
            holding: self.holding.load(Ordering::Relaxed),
            jobs: self.jobs.load(Ordering::Relaxed),
            wait_seconds: seconds(&self.wait_micros),
            hold_seconds: seconds(&self.hold_micros),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_moves_from_queued_to_holding_to_done() {
        let c = WriterCounters::default();
        let (at, mark) = c.queue();
        assert_eq!((c.snapshot().queued, c.snapshot().holding), (1, 0));
        c.start(at, &mark);
        assert_eq!((c.snapshot().queued, c.snapshot().holding), (0, 1));
        c.done(at, &mark);
        let s = c.snapshot();
        assert_eq!((s.queued, s.holding, s.jobs), (0, 0, 1));
    }

    #[test]
    fn a_job_that_never_started_only_leaves_the_queue() {
        let c = WriterCounters::default();
        let (at, mark) = c.queue();
        c.done(at, &mark);
        let s = c.snapshot();
        assert_eq!((s.queued, s.holding, s.jobs), (0, 0, 0));
    }
}
