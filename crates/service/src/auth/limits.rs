//! Failed-login rate limits: failures are counted per user and per client address in a
//! window that the first failure starts; past the limit, attempts are refused until it ends.

use crate::ServiceConfig;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

/// Windows kept before expired ones are pruned (each is a few dozen bytes).
const PRUNE_AT: usize = 4096;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    User(String),
    Address(IpAddr),
}

#[derive(Clone, Copy, Debug)]
struct Window {
    started: i64,
    failures: u32,
}

/// The counters (in memory: a restart forgets them, as it forgets nothing else that matters).
pub(crate) struct LoginLimiter {
    per_user: u32,
    per_address: u32,
    window: i64,
    windows: Mutex<HashMap<Key, Window>>,
}

/// Who is refused and for how much longer.
pub(crate) struct Limited {
    pub who: String,
    pub retry_after_secs: u64,
}

impl LoginLimiter {
    pub(crate) fn new(config: &ServiceConfig) -> LoginLimiter {
        LoginLimiter {
            per_user: config.login_failures_per_user,
            per_address: config.login_failures_per_address,
            window: i64::try_from(config.login_failure_window_secs).unwrap_or(i64::MAX),
            windows: Mutex::new(HashMap::new()),
        }
    }

    fn keys(user: &str, address: Option<IpAddr>) -> Vec<(Key, u32)> {
        let mut keys = vec![(Key::User(user.to_string()), 0)];
        if let Some(a) = address {
            keys.push((Key::Address(a), 1));
        }
        keys
    }

    /// Refuses when the user or the address has used up its failures in the current window.
    pub(crate) fn check(
        &self,
        user: &str,
        address: Option<IpAddr>,
        now: i64,
    ) -> Result<(), Limited> {
        let windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        for (key, kind) in Self::keys(user, address) {
            let limit = if kind == 0 {
                self.per_user
            } else {
                self.per_address
            };
            if let Some(w) = windows.get(&key)
                && now < w.started.saturating_add(self.window)
                && w.failures >= limit
            {
                let who = match key {
                    Key::User(u) => format!("user {u}"),
                    Key::Address(a) => format!("client address {a}"),
                };
                let left = w.started.saturating_add(self.window) - now;
                return Err(Limited {
                    who,
                    retry_after_secs: u64::try_from(left.max(1)).unwrap_or(1),
                });
            }
        }
        Ok(())
    }

    /// Counts one failure for the user and the address.
    pub(crate) fn failed(&self, user: &str, address: Option<IpAddr>, now: i64) {
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if windows.len() >= PRUNE_AT {
            let span = self.window;
            windows.retain(|_, w| now < w.started.saturating_add(span));
        }
        for (key, _) in Self::keys(user, address) {
            let w = windows.entry(key).or_insert(Window {
                started: now,
                failures: 0,
            });
            if now >= w.started.saturating_add(self.window) {
                *w = Window {
                    started: now,
                    failures: 0,
                };
            }
            w.failures = w.failures.saturating_add(1);
        }
    }

    /// A success clears the user's failures (the address keeps its count).
    pub(crate) fn succeeded(&self, user: &str) {
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        windows.remove(&Key::User(user.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_past_the_limit_are_refused_until_the_window_ends() {
        let config = ServiceConfig {
            login_failures_per_user: 2,
            login_failures_per_address: 3,
            login_failure_window_secs: 60,
            ..ServiceConfig::default()
        };
        let limiter = LoginLimiter::new(&config);
        let addr: IpAddr = "10.0.0.1".parse().expect("address");
        assert!(limiter.check("alice", Some(addr), 100).is_ok());
        limiter.failed("alice", Some(addr), 100);
        assert!(limiter.check("alice", Some(addr), 101).is_ok());
        limiter.failed("alice", Some(addr), 101);
        let refused = limiter
            .check("alice", Some(addr), 110)
            .expect_err("refused");
        assert_eq!(refused.who, "user alice");
        assert_eq!(refused.retry_after_secs, 50);
        // Another user from the same address has one failure left there.
        assert!(limiter.check("bob", Some(addr), 110).is_ok());
        limiter.failed("bob", Some(addr), 110);
        let refused = limiter
            .check("carol", Some(addr), 111)
            .expect_err("refused");
        assert_eq!(refused.who, "client address 10.0.0.1");
        // The window ends.
        assert!(limiter.check("alice", None, 160).is_ok());
        // A success clears the user's count.
        limiter.failed("dave", None, 200);
        limiter.failed("dave", None, 200);
        assert!(limiter.check("dave", None, 201).is_err());
        limiter.succeeded("dave");
        assert!(limiter.check("dave", None, 201).is_ok());
    }
}
