//! The proxy's counters, reported by `keel info` through the proxy.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct Stats {
    /// Content served from the cache without a fetch.
    pub hits: AtomicU64,
    /// Content that had to be fetched from the target first.
    pub misses: AtomicU64,
    /// Stored bytes fetched from the target with `Content`.
    pub bytes_from_target: AtomicU64,
    /// Stored bytes sent to clients.
    pub bytes_served: AtomicU64,
    /// Cache files that failed verification and were dropped.
    pub dropped_corrupt: AtomicU64,
}

impl Stats {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}
