//! Password-attempt limits: every attempt is counted (reserved) before its password is
//! hashed, per user from one client address and per client address, so concurrent guesses
//! can never check more passwords than the limits allow. Past a limit only that user from
//! that address (or that address) is refused, for a back-off that doubles each time: failures
//! from one address never lock the correct password out from another.

use crate::ServiceConfig;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

/// Entries kept before idle ones are pruned (each is a few dozen bytes).
const PRUNE_AT: usize = 4096;
/// Entries kept at most: past it, even remembered back-offs that have ended are forgotten
/// (an address still refused, or an attempt in flight, is always kept).
const MAX_ENTRIES: usize = 100_000;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// A user from one address (`None`: a caller without one, e.g. in-process).
    Pair(String, Option<IpAddr>),
    /// Every user from one address (an IPv6 address counts by its /64 network).
    Address(IpAddr),
}

impl Key {
    fn who(&self) -> String {
        match self {
            Key::Pair(user, Some(a)) => format!("user {user} from {a}"),
            Key::Pair(user, None) => format!("user {user}"),
            Key::Address(a) => format!("client address {a}"),
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// When the current window started.
    started: i64,
    /// Failed attempts in the window.
    failed: u32,
    /// Attempts reserved whose password is still being checked.
    in_flight: u32,
    /// How often the limit was reached (each doubles the next back-off).
    strikes: u32,
    /// Refused until this time (0: not refused).
    blocked_until: i64,
    /// The last attempt's time.
    last: i64,
}

/// The counters (in memory: a restart forgets them, as it forgets nothing else that matters).
pub(crate) struct LoginLimiter {
    per_pair: u32,
    per_address: u32,
    window: i64,
    backoff_max: i64,
    entries: Mutex<HashMap<Key, Entry>>,
}

/// Who is refused and for how much longer.
#[derive(Debug)]
pub(crate) struct Limited {
    pub who: String,
    pub retry_after_secs: u64,
}

/// One attempt counted against the limits: say how it ended ([`Reservation::failed`],
/// [`Reservation::succeeded`], [`Reservation::release`]); dropped unsaid, it counts as failed.
pub(crate) struct Reservation<'a> {
    limiter: &'a LoginLimiter,
    keys: Vec<Key>,
    now: i64,
    settled: bool,
}

impl Reservation<'_> {
    /// The password was wrong: the attempt stays counted.
    pub(crate) fn failed(mut self) {
        self.settled = true;
        self.limiter.settle(&self.keys, self.now, Outcome::Failed);
    }

    /// The password was right: the user's count from this address starts over, and the
    /// attempt is given back to the address.
    pub(crate) fn succeeded(mut self) {
        self.settled = true;
        self.limiter
            .settle(&self.keys, self.now, Outcome::Succeeded);
    }

    /// No password was checked (the server was busy): the attempt is given back.
    pub(crate) fn release(mut self) {
        self.settled = true;
        self.limiter.settle(&self.keys, self.now, Outcome::Released);
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.limiter.settle(&self.keys, self.now, Outcome::Failed);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Failed,
    Succeeded,
    Released,
}

/// The address key of `a`: IPv6 by its /64 network, which one client usually holds whole.
fn address_key(a: IpAddr) -> IpAddr {
    match a {
        IpAddr::V4(_) => a,
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(bits.into())
        }
    }
}

impl LoginLimiter {
    pub(crate) fn new(config: &ServiceConfig) -> LoginLimiter {
        let secs = |s: u64| i64::try_from(s).unwrap_or(i64::MAX).max(1);
        LoginLimiter {
            per_pair: config.login_failures_per_user.max(1),
            per_address: config.login_failures_per_address.max(1),
            window: secs(config.login_failure_window_secs),
            backoff_max: secs(config.login_backoff_max_secs),
            entries: Mutex::new(HashMap::new()),
        }
    }

    fn keys(user: &str, address: Option<IpAddr>) -> Vec<Key> {
        let mut keys = vec![Key::Pair(user.to_string(), address)];
        if let Some(a) = address {
            keys.push(Key::Address(address_key(a)));
        }
        keys
    }

    fn limit(&self, key: &Key) -> u32 {
        match key {
            Key::Pair(..) => self.per_pair,
            Key::Address(_) => self.per_address,
        }
    }

    /// Counts one attempt of `user` from `address` before its password is checked, or refuses
    /// it when the user from that address, or the address, has used up its attempts (counting
    /// those still being checked) or is backing off.
    pub(crate) fn reserve(
        &self,
        user: &str,
        address: Option<IpAddr>,
        now: i64,
    ) -> Result<Reservation<'_>, Limited> {
        let keys = Self::keys(user, address);
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= PRUNE_AT {
            self.prune(&mut entries, now);
        }
        for key in &keys {
            let Some(e) = entries.get_mut(key) else {
                continue;
            };
            self.roll(e, now);
            let refused_for = if e.blocked_until > now {
                Some(e.blocked_until - now)
            } else if e.failed.saturating_add(e.in_flight) >= self.limit(key) {
                // The rest of the window's attempts are being checked now.
                Some(e.started.saturating_add(self.window) - now)
            } else {
                None
            };
            if let Some(left) = refused_for {
                return Err(Limited {
                    who: key.who(),
                    retry_after_secs: u64::try_from(left.max(1)).unwrap_or(1),
                });
            }
        }
        for key in &keys {
            let e = entries.entry(key.clone()).or_insert(Entry {
                started: now,
                ..Entry::default()
            });
            e.in_flight += 1;
            e.last = now;
        }
        Ok(Reservation {
            limiter: self,
            keys,
            now,
            settled: false,
        })
    }

    /// Starts a new window when the current one (or the back-off) is over.
    fn roll(&self, e: &mut Entry, now: i64) {
        if e.blocked_until != 0 && now >= e.blocked_until {
            e.blocked_until = 0;
            e.failed = 0;
            e.started = now;
        } else if e.blocked_until == 0 && now >= e.started.saturating_add(self.window) {
            e.failed = 0;
            e.started = now;
        }
    }

    fn settle(&self, keys: &[Key], now: i64, outcome: Outcome) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        for key in keys {
            let limit = self.limit(key);
            let Some(e) = entries.get_mut(key) else {
                continue;
            };
            e.in_flight = e.in_flight.saturating_sub(1);
            if outcome == Outcome::Succeeded && matches!(key, Key::Pair(..)) {
                // The user from this address starts over.
                *e = Entry {
                    started: now,
                    in_flight: e.in_flight,
                    last: now,
                    ..Entry::default()
                };
                if e.in_flight == 0 {
                    entries.remove(key);
                }
                continue;
            }
            if outcome != Outcome::Failed {
                continue;
            }
            e.failed = e.failed.saturating_add(1);
            if e.failed >= limit && e.blocked_until <= now {
                e.strikes = e.strikes.saturating_add(1);
                let doubled = self
                    .window
                    .saturating_mul(1i64 << e.strikes.saturating_sub(1).min(40));
                e.blocked_until = now.saturating_add(doubled.min(self.backoff_max));
            }
        }
    }

    /// Forgets entries that no longer refuse or remember anything; at `MAX_ENTRIES`, also
    /// the strikes of entries not refused now.
    fn prune(&self, entries: &mut HashMap<Key, Entry>, now: i64) {
        let (window, memory) = (self.window, self.backoff_max);
        entries.retain(|_, e| {
            e.in_flight > 0
                || e.blocked_until > now
                || now < e.started.saturating_add(window)
                || (e.strikes > 0 && now < e.last.saturating_add(memory))
        });
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, e| e.in_flight > 0 || e.blocked_until > now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(per_user: u32, per_address: u32) -> LoginLimiter {
        LoginLimiter::new(&ServiceConfig {
            login_failures_per_user: per_user,
            login_failures_per_address: per_address,
            login_failure_window_secs: 60,
            login_backoff_max_secs: 200,
            ..ServiceConfig::default()
        })
    }

    fn addr(text: &str) -> Option<IpAddr> {
        Some(text.parse().expect("address"))
    }

    #[test]
    fn attempts_count_before_their_outcome_so_concurrent_ones_stop_at_the_limit() {
        let limiter = limiter(3, 20);
        let a = addr("10.0.0.1");
        let held: Vec<_> = (0..3)
            .map(|_| limiter.reserve("alice", a, 100).expect("within the limit"))
            .collect();
        let refused = limiter
            .reserve("alice", a, 100)
            .err()
            .expect("limit reached");
        assert_eq!(refused.who, "user alice from 10.0.0.1");
        // A correct password gives its attempt back.
        let mut held = held.into_iter();
        held.next().expect("one").succeeded();
        let again = limiter.reserve("alice", a, 100).expect("given back");
        again.release();
        for r in held {
            r.failed();
        }
    }

    #[test]
    fn failures_from_one_address_leave_the_user_free_from_another() {
        let limiter = limiter(2, 20);
        let (bad, good) = (addr("10.0.0.2"), addr("10.0.0.1"));
        for _ in 0..2 {
            limiter
                .reserve("alice", bad, 100)
                .expect("allowed")
                .failed();
        }
        let refused = limiter
            .reserve("alice", bad, 110)
            .err()
            .expect("backing off");
        assert_eq!(refused.retry_after_secs, 50);
        limiter
            .reserve("alice", good, 110)
            .expect("another address")
            .succeeded();
    }

    #[test]
    fn the_back_off_doubles_each_time_up_to_its_maximum() {
        let limiter = limiter(1, 20);
        let a = addr("10.0.0.3");
        let mut now = 0;
        let mut waits = Vec::new();
        for _ in 0..4 {
            limiter
                .reserve("bob", a, now)
                .expect("after the back-off")
                .failed();
            let refused = limiter.reserve("bob", a, now).err().expect("refused");
            waits.push(refused.retry_after_secs);
            now += i64::try_from(refused.retry_after_secs).expect("small");
        }
        assert_eq!(waits, [60, 120, 200, 200]);
        // A success forgets the strikes.
        limiter.reserve("bob", a, now).expect("allowed").succeeded();
        limiter.reserve("bob", a, now).expect("allowed").failed();
        let refused = limiter.reserve("bob", a, now).err().expect("refused");
        assert_eq!(refused.retry_after_secs, 60);
    }

    #[test]
    fn an_address_is_limited_over_every_user_it_tries() {
        let limiter = limiter(5, 3);
        let a = addr("10.0.0.4");
        for user in ["u1", "u2", "u3"] {
            limiter.reserve(user, a, 0).expect("allowed").failed();
        }
        let refused = limiter.reserve("u4", a, 1).err().expect("address refused");
        assert_eq!(refused.who, "client address 10.0.0.4");
        assert!(limiter.reserve("u4", addr("10.0.0.5"), 1).is_ok());
        // IPv6 addresses of one /64 count together.
        for n in 1..=3 {
            let a = addr(&format!("2001:db8::{n}"));
            limiter.reserve("x", a, 0).expect("allowed").failed();
        }
        assert!(limiter.reserve("y", addr("2001:db8::99"), 0).is_err());
        assert!(limiter.reserve("y", addr("2001:db8:0:1::1"), 0).is_ok());
    }

    #[test]
    fn a_dropped_reservation_counts_as_failed() {
        let limiter = limiter(1, 20);
        drop(limiter.reserve("carol", None, 0).expect("allowed"));
        assert!(limiter.reserve("carol", None, 1).is_err());
    }
}
