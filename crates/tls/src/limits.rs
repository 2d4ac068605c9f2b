//! Connection limits of one listener: a total and a per-client-address cap, checked as a
//! connection is accepted (one past either is closed at once, counted, and logged at most
//! once per [`REFUSAL_LOG_EVERY`]), and each live connection's request activity, which the
//! idle timeout ([`crate::idle`]) reads.
//!
//! **Invariant:** a connection counts against the caps from its accept until its
//! [`ConnGuard`] drops (the socket closes with it), whatever path it ends by.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A refused connection is logged at most this often (the others are counted and summed
/// into the next line).
pub const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(10);

/// The limits of one listener.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnLimits {
    /// Most connections open at once.
    pub max_connections: usize,
    /// Most connections open at once from one client address.
    pub max_per_address: usize,
    /// A connection with no request in flight for this long is closed.
    pub idle_timeout: Duration,
    /// Longest sleep after a failed accept (out of descriptors and the like); the sleep
    /// starts short and doubles up to this while accepts keep failing.
    pub accept_backoff_max: Duration,
}

/// Why a connection was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `max_connections` are open.
    Total,
    /// `max_per_address` are open from the same address.
    PerAddress,
}

/// A listener's counters, as the metrics read them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnStats {
    pub open: u64,
    pub refused_total_cap: u64,
    pub refused_address_cap: u64,
    pub idle_closed: u64,
    pub accept_errors: u64,
}

/// The open connections of one listener and its counters.
pub struct ConnTracker {
    /// Names the listener in logs (`grpc`, `metrics`, `proxy`).
    pub name: &'static str,
    pub limits: ConnLimits,
    open: AtomicUsize,
    state: Mutex<Live>,
    refused_total_cap: AtomicU64,
    refused_address_cap: AtomicU64,
    idle_closed: AtomicU64,
    accept_errors: AtomicU64,
    /// When a refusal was last logged, and how many went unlogged since.
    refusal_log: Mutex<(Option<Instant>, u64)>,
}

#[derive(Default)]
struct Live {
    per_address: HashMap<IpAddr, usize>,
    by_peer: HashMap<SocketAddr, Arc<Activity>>,
}

impl ConnTracker {
    pub fn new(name: &'static str, limits: ConnLimits) -> Arc<ConnTracker> {
        Arc::new(ConnTracker {
            name,
            limits,
            open: AtomicUsize::new(0),
            state: Mutex::new(Live::default()),
            refused_total_cap: AtomicU64::new(0),
            refused_address_cap: AtomicU64::new(0),
            idle_closed: AtomicU64::new(0),
            accept_errors: AtomicU64::new(0),
            refusal_log: Mutex::new((None, 0)),
        })
    }

    /// Counts a new connection from `peer` in, or says which cap it is past (the caller
    /// closes it; the refusal is counted and logged here).
    pub fn admit(self: &Arc<Self>, peer: SocketAddr) -> Result<ConnGuard, Refusal> {
        let refusal = {
            let mut live = self.state.lock().unwrap_or_else(|e| e.into_inner());
            let from_here = live.per_address.get(&peer.ip()).copied().unwrap_or(0);
            if self.open.load(Ordering::Relaxed) >= self.limits.max_connections {
                Refusal::Total
            } else if from_here >= self.limits.max_per_address {
                Refusal::PerAddress
            } else {
                self.open.fetch_add(1, Ordering::Relaxed);
                *live.per_address.entry(peer.ip()).or_default() += 1;
                let activity = Arc::new(Activity::new());
                live.by_peer.insert(peer, activity.clone());
                return Ok(ConnGuard {
                    tracker: self.clone(),
                    peer,
                    activity,
                });
            }
        };
        match refusal {
            Refusal::Total => &self.refused_total_cap,
            Refusal::PerAddress => &self.refused_address_cap,
        }
        .fetch_add(1, Ordering::Relaxed);
        self.log_refusal(peer, refusal);
        Err(refusal)
    }

    fn log_refusal(&self, peer: SocketAddr, refusal: Refusal) {
        let mut log = self.refusal_log.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if log
            .0
            .is_some_and(|at| now.duration_since(at) < REFUSAL_LOG_EVERY)
        {
            log.1 += 1;
            return;
        }
        let (cap, limit) = match refusal {
            Refusal::Total => ("max_connections", self.limits.max_connections),
            Refusal::PerAddress => ("max_connections_per_address", self.limits.max_per_address),
        };
        tracing::warn!(
            listener = self.name,
            %peer,
            limit,
            also_refused_since_last_line = log.1,
            "connection refused: {cap} ({limit}) reached"
        );
        *log = (Some(now), 0);
    }

    /// The request activity of the live connection from `peer` (its address and port).
    pub fn activity(&self, peer: SocketAddr) -> Option<Arc<Activity>> {
        let live = self.state.lock().unwrap_or_else(|e| e.into_inner());
        live.by_peer.get(&peer).cloned()
    }

    /// Counts a failed accept.
    pub(crate) fn accept_failed(&self) {
        self.accept_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a connection closed for idleness.
    pub(crate) fn idle_closed(&self) {
        self.idle_closed.fetch_add(1, Ordering::Relaxed);
    }

    pub fn stats(&self) -> ConnStats {
        ConnStats {
            open: self.open.load(Ordering::Relaxed) as u64,
            refused_total_cap: self.refused_total_cap.load(Ordering::Relaxed),
            refused_address_cap: self.refused_address_cap.load(Ordering::Relaxed),
            idle_closed: self.idle_closed.load(Ordering::Relaxed),
            accept_errors: self.accept_errors.load(Ordering::Relaxed),
        }
    }
}

/// A connection's place under the caps, given back when it drops.
pub struct ConnGuard {
    tracker: Arc<ConnTracker>,
    peer: SocketAddr,
    pub(crate) activity: Arc<Activity>,
}

impl ConnGuard {
    pub(crate) fn tracker(&self) -> &Arc<ConnTracker> {
        &self.tracker
    }
}

impl Drop for ConnGuard {
    fn drop(&mut self) {
        let mut live = self.tracker.state.lock().unwrap_or_else(|e| e.into_inner());
        self.tracker.open.fetch_sub(1, Ordering::Relaxed);
        if let Some(n) = live.per_address.get_mut(&self.peer.ip()) {
            *n -= 1;
            if *n == 0 {
                live.per_address.remove(&self.peer.ip());
            }
        }
        live.by_peer.remove(&self.peer);
    }
}

/// One connection's requests: how many are in flight, and when the last one began or ended.
pub struct Activity {
    born: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds from `born` to the last request's start or end.
    last_ms: AtomicU64,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            born: Instant::now(),
            in_flight: AtomicUsize::new(0),
            last_ms: AtomicU64::new(0),
        }
    }

    fn touch(&self) {
        let ms = self.born.elapsed().as_millis().min(u64::MAX as u128) as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// A request begins; it is in flight until the guard drops.
    pub fn begin(self: &Arc<Self>) -> RequestGuard {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.touch();
        RequestGuard(self.clone())
    }

    /// How long the connection has had no request in flight (zero while one is).
    pub(crate) fn idle_for(&self) -> Duration {
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return Duration::ZERO;
        }
        let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        self.born.elapsed().saturating_sub(last)
    }

    /// Counts bytes read as a request (HTTP/1.1, where the server never sends anything
    /// unasked, so bytes in are requests).
    pub(crate) fn read_is_request(&self) {
        self.touch();
    }
}

/// A request in flight on its connection, until dropped.
pub struct RequestGuard(Arc<Activity>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> ConnLimits {
        ConnLimits {
            max_connections: 3,
            max_per_address: 2,
            idle_timeout: Duration::from_secs(1),
            accept_backoff_max: Duration::from_secs(1),
        }
    }

    fn at(ip: [u8; 4], port: u16) -> SocketAddr {
        SocketAddr::from((ip, port))
    }

    /// The per-address cap refuses a third connection from one address while another
    /// address is admitted, and the total cap refuses past three; closing frees the place.
    #[test]
    fn caps_count_per_address_and_in_total() {
        let t = ConnTracker::new("test", limits());
        let a1 = t.admit(at([127, 0, 0, 2], 1)).expect("first");
        let _a2 = t.admit(at([127, 0, 0, 2], 2)).expect("second");
        assert_eq!(
            t.admit(at([127, 0, 0, 2], 3)).err(),
            Some(Refusal::PerAddress)
        );
        let _b1 = t.admit(at([127, 0, 0, 1], 1)).expect("other address");
        assert_eq!(t.admit(at([127, 0, 0, 3], 1)).err(), Some(Refusal::Total));
        drop(a1);
        let _a3 = t.admit(at([127, 0, 0, 2], 4)).expect("a place was freed");
        let stats = t.stats();
        assert_eq!((stats.open, stats.refused_address_cap), (3, 1));
        assert_eq!(stats.refused_total_cap, 1);
    }

    /// A request in flight keeps a connection from being idle; its end restarts the clock.
    #[test]
    fn requests_in_flight_are_not_idle() {
        let t = ConnTracker::new("test", limits());
        let g = t.admit(at([127, 0, 0, 1], 9)).expect("admitted");
        let activity = t.activity(at([127, 0, 0, 1], 9)).expect("registered");
        let request = activity.begin();
        assert_eq!(g.activity.idle_for(), Duration::ZERO);
        drop(request);
        assert!(g.activity.idle_for() < Duration::from_secs(1));
        drop(g);
        assert!(t.activity(at([127, 0, 0, 1], 9)).is_none());
    }
}
