//! Latency percentiles and per-second throughput windows.

use std::time::{Duration, Instant};

use crate::report::Sample;

/// Latencies of one kind of operation.
#[derive(Debug, Default, Clone)]
pub struct Latencies(Vec<Duration>);

impl Latencies {
    /// Records one latency.
    pub fn push(&mut self, d: Duration) {
        self.0.push(d);
    }

    /// Adds every latency of `other`.
    pub fn extend(&mut self, other: &Latencies) {
        self.0.extend_from_slice(&other.0);
    }

    /// How many were recorded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none were recorded.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `p`-th percentile (nearest rank, `p` in 0..=100), zero when empty.
    pub fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.0.clone();
        sorted.sort_unstable();
        percentile_sorted(&sorted, p)
    }

    /// The largest latency, zero when empty.
    pub fn max(&self) -> Duration {
        self.0.iter().copied().max().unwrap_or_default()
    }

    /// The arithmetic mean, zero when empty.
    pub fn mean(&self) -> Duration {
        if self.0.is_empty() {
            return Duration::ZERO;
        }
        self.0.iter().sum::<Duration>() / self.0.len() as u32
    }
}

/// Nearest-rank percentile of an ascending slice.
pub fn percentile_sorted(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Records one call that began at `began` (runs started at `start`) and has just finished:
/// its window, its latency and its raw sample.
pub fn record(
    samples: &mut Vec<Sample>,
    windows: &mut Windows,
    latencies: &mut Latencies,
    op: &'static str,
    client: u32,
    start: Instant,
    began: Instant,
) {
    let latency = began.elapsed();
    windows.count(began.duration_since(start) + latency);
    latencies.push(latency);
    samples.push(Sample {
        op,
        client,
        start: began.duration_since(start),
        latency,
    });
}

/// Operation counts per one-second window since a common start.
#[derive(Debug, Default, Clone)]
pub struct Windows(Vec<u64>);

impl Windows {
    /// Counts one operation finished `at` after the start.
    pub fn count(&mut self, at: Duration) {
        let second = at.as_secs() as usize;
        if self.0.len() <= second {
            self.0.resize(second + 1, 0);
        }
        self.0[second] += 1;
    }

    /// Adds another client's windows to these.
    pub fn merge(&mut self, other: &Windows) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine += theirs;
        }
    }

    /// The busiest whole window among the first `whole` seconds (a last partial second is
    /// ignored unless it is the only one).
    pub fn max_per_second(&self, whole: usize) -> u64 {
        let whole = whole.clamp(1, self.0.len().max(1));
        self.0.iter().take(whole).copied().max().unwrap_or(0)
    }

    /// Every window's count.
    pub fn counts(&self) -> &[u64] {
        &self.0
    }
}

/// Milliseconds with microsecond precision, for reports.
pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// `count / elapsed` per second (zero for a zero duration).
pub fn rate(count: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs <= 0.0 {
        0.0
    } else {
        (count as f64 / secs * 10.0).round() / 10.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        let mut l = Latencies::default();
        for ms in 1..=100 {
            l.push(Duration::from_millis(ms));
        }
        assert_eq!(l.percentile(50.0), Duration::from_millis(50));
        assert_eq!(l.percentile(99.0), Duration::from_millis(99));
        assert_eq!(l.max(), Duration::from_millis(100));
        assert_eq!(Latencies::default().percentile(50.0), Duration::ZERO);
    }

    #[test]
    fn windows_count_per_second() {
        let mut a = Windows::default();
        a.count(Duration::from_millis(100));
        a.count(Duration::from_millis(1500));
        a.count(Duration::from_millis(1600));
        let mut b = Windows::default();
        b.count(Duration::from_millis(200));
        a.merge(&b);
        assert_eq!(a.counts(), &[2, 2]);
        assert_eq!(a.max_per_second(2), 2);
        assert_eq!(rate(10, Duration::from_secs(2)), 5.0);
    }
}
