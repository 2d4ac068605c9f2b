//! The callers `authenticate` let in, remembered while nothing was written: a read-heavy
//! server answers most calls without a snapshot or a query for the caller's user and ticket.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

/// Who was let in: the user, the hash of the ticket they showed (if any), and the client
/// address they showed it from (a ticket may be bound to one).
pub(crate) type Key = (String, Option<[u8; 32]>, Option<IpAddr>);

/// Admissions valid at one commit epoch of the store (`MetaStore::commit_epoch`): any write
/// (a logout, a new password, a changed security level, a deleted user) ends the epoch and
/// with it every admission, so a verdict is never older than the metadata it was read from.
pub(crate) struct Admitted {
    state: Mutex<State>,
    max_entries: usize,
}

struct State {
    epoch: u64,
    /// Each admission and the time (seconds) until which it holds: a ticket's expiry, or
    /// `i64::MAX` when no ticket was needed.
    until: HashMap<Key, i64>,
}

impl Admitted {
    pub(crate) fn new(max_entries: usize) -> Admitted {
        Admitted {
            state: Mutex::new(State {
                epoch: u64::MAX,
                until: HashMap::new(),
            }),
            max_entries: max_entries.max(1),
        }
    }

    /// Whether `key` was let in during `epoch` and its admission still holds at `now`.
    pub(crate) fn holds(&self, epoch: u64, key: &Key, now: i64) -> bool {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.epoch == epoch && state.until.get(key).is_some_and(|until| *until > now)
    }

    /// Remembers that `key` was let in from metadata read at `epoch` (read before the
    /// snapshot the verdict came from), until `until`.
    pub(crate) fn admit(&self, epoch: u64, key: Key, until: i64) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.epoch != epoch || state.until.len() >= self.max_entries {
            state.until.clear();
            state.epoch = epoch;
        }
        state.until.insert(key, until);
    }
}

#[cfg(test)]
mod tests {
    use super::Admitted;

    #[test]
    fn an_admission_holds_only_in_its_epoch_and_until_its_time() {
        let cache = Admitted::new(10);
        let key = ("ann".to_string(), Some([7u8; 32]), None);
        assert!(!cache.holds(1, &key, 100));
        cache.admit(1, key.clone(), 200);
        assert!(cache.holds(1, &key, 100));
        assert!(!cache.holds(1, &key, 200), "expired at its time");
        assert!(!cache.holds(2, &key, 100), "a write ended the epoch");
        let other = ("ann".to_string(), None, None);
        assert!(
            !cache.holds(1, &other, 100),
            "another ticket is another key"
        );
        let elsewhere = ("ann".to_string(), Some([7u8; 32]), "10.0.0.2".parse().ok());
        assert!(
            !cache.holds(1, &elsewhere, 100),
            "another address is another key"
        );
    }

    #[test]
    fn a_new_epoch_or_a_full_cache_starts_over() {
        let cache = Admitted::new(2);
        let key = |u: &str| (u.to_string(), None, None);
        cache.admit(1, key("a"), i64::MAX);
        cache.admit(1, key("b"), i64::MAX);
        cache.admit(1, key("c"), i64::MAX);
        assert!(!cache.holds(1, &key("a"), 0));
        assert!(cache.holds(1, &key("c"), 0));
        cache.admit(2, key("d"), i64::MAX);
        assert!(!cache.holds(2, &key("c"), 0));
        assert!(cache.holds(2, &key("d"), 0));
    }
}
