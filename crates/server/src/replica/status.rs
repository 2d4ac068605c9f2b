//! What a replica knows of its primary and of its own progress, for `keel info`.

use keel_proto::v1 as pb;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

pub(crate) struct ReplicaStatus {
    primary: String,
    forward_writes: bool,
    inner: Mutex<Inner>,
}

struct Inner {
    connected: bool,
    /// Newest journal position applied (or, for a have-list record, passed over).
    applied: u64,
    /// The primary's committed position, as last heard.
    primary_position: u64,
    /// When the replica last held everything the primary had committed.
    caught_up_at: Instant,
    last_error: String,
}

impl ReplicaStatus {
    pub(crate) fn new(primary: String, forward_writes: bool, applied: u64) -> ReplicaStatus {
        ReplicaStatus {
            primary,
            forward_writes,
            inner: Mutex::new(Inner {
                connected: false,
                applied,
                primary_position: applied,
                caught_up_at: Instant::now(),
                last_error: String::new(),
            }),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let out = f(&mut inner);
        if inner.connected && inner.applied >= inner.primary_position {
            inner.caught_up_at = Instant::now();
        }
        out
    }

    /// Where the next journal stream starts.
    pub(crate) fn next_position(&self) -> u64 {
        self.with(|i| i.applied + 1)
    }

    pub(crate) fn connected(&self) {
        self.with(|i| {
            i.connected = true;
            i.last_error.clear();
        });
    }

    pub(crate) fn lost(&self, why: String) {
        self.with(|i| {
            i.connected = false;
            i.last_error = why;
        });
    }

    /// Something wrong the follower found while following (it keeps following).
    pub(crate) fn problem(&self, why: String) {
        self.with(|i| i.last_error = why);
    }

    /// The primary's committed position, heard with a record or a heartbeat.
    pub(crate) fn heard(&self, committed: u64) {
        self.with(|i| i.primary_position = i.primary_position.max(committed));
    }

    pub(crate) fn applied(&self, position: u64) {
        self.with(|i| i.applied = i.applied.max(position));
    }

    pub(crate) fn info(&self) -> pb::ReplicaInfo {
        self.with(|i| {
            let lag_records = i.primary_position.saturating_sub(i.applied);
            let lag_seconds = if i.connected && lag_records == 0 {
                0.0
            } else {
                i.caught_up_at.elapsed().as_secs_f64()
            };
            pb::ReplicaInfo {
                primary: self.primary.clone(),
                connected: i.connected,
                applied_position: i.applied,
                primary_position: i.primary_position,
                lag_records,
                lag_seconds,
                forward_writes: self.forward_writes,
                last_error: i.last_error.clone(),
            }
        })
    }
}
