//! A bounded memory of content checks by digest: when it is full, the oldest is forgotten.

use keel_blob::ContentCheck;
use keel_core::Digest;
use std::collections::{HashMap, VecDeque};

/// What one verify remembers of the contents it read.
pub(crate) struct CheckCache {
    checks: HashMap<Digest, ContentCheck>,
    /// Digests in the order they were remembered, oldest first.
    order: VecDeque<Digest>,
    capacity: usize,
}

impl CheckCache {
    /// A cache of at most `capacity` checks (0 remembers nothing).
    pub(crate) fn new(capacity: usize) -> CheckCache {
        CheckCache {
            checks: HashMap::new(),
            order: VecDeque::new(),
            capacity,
        }
    }

    pub(crate) fn get(&self, digest: &Digest) -> Option<&ContentCheck> {
        self.checks.get(digest)
    }

    /// Remembers a check, forgetting the oldest when full.
    pub(crate) fn insert(&mut self, digest: Digest, check: ContentCheck) {
        if self.capacity == 0 || self.checks.contains_key(&digest) {
            return;
        }
        if self.order.len() >= self.capacity
            && let Some(oldest) = self.order.pop_front()
        {
            self.checks.remove(&oldest);
        }
        self.order.push_back(digest);
        self.checks.insert(digest, check);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(n: u8) -> Digest {
        Digest([n; 32])
    }

    fn size(n: u64) -> ContentCheck {
        ContentCheck::Content {
            digest: Digest([0; 32]),
            size: n,
        }
    }

    #[test]
    fn forgets_the_oldest_beyond_its_capacity() {
        let mut cache = CheckCache::new(2);
        cache.insert(d(1), size(1));
        cache.insert(d(2), size(2));
        cache.insert(d(1), size(99)); // already known: kept as it was, not renewed
        cache.insert(d(3), ContentCheck::Missing);
        assert_eq!(cache.get(&d(1)), None);
        assert_eq!(cache.get(&d(2)), Some(&size(2)));
        assert_eq!(cache.get(&d(3)), Some(&ContentCheck::Missing));
        assert_eq!(cache.checks.len(), 2);
        assert_eq!(cache.order.len(), 2);
    }

    #[test]
    fn capacity_zero_remembers_nothing() {
        let mut cache = CheckCache::new(0);
        cache.insert(d(1), size(1));
        assert_eq!(cache.get(&d(1)), None);
        assert!(cache.order.is_empty());
    }
}
