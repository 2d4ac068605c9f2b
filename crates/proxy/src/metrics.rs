//! The proxy's Prometheus metrics (`keel proxy --metrics-listen`): its cache counters and
//! hit ratio, read from the same counters `keel info` shows, at each scrape.

use crate::Proxy;
use keel_metrics::collect::{counter, gauge};
use keel_metrics::prometheus_client::collector::Collector;
use keel_metrics::prometheus_client::encoding::DescriptorEncoder;
use keel_metrics::prometheus_client::registry::Registry;
use std::sync::Arc;

/// The registry a proxy serves.
pub(crate) fn registry(proxy: Arc<Proxy>) -> Registry {
    let mut registry = Registry::with_prefix("keel");
    registry.register_collector(Box::new(ProxyGauges(proxy)));
    registry
}

struct ProxyGauges(Arc<Proxy>);

impl std::fmt::Debug for ProxyGauges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("proxy gauges")
    }
}

impl Collector for ProxyGauges {
    fn encode(&self, mut e: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for tracker in &self.0.connections {
            let s = tracker.stats();
            let counts = keel_metrics::collect::ConnectionCounts {
                open: s.open,
                refused_max_connections: s.refused_total_cap,
                refused_per_address: s.refused_address_cap,
                idle_closed: s.idle_closed,
                accept_errors: s.accept_errors,
            };
            keel_metrics::collect::connections(&mut e, tracker.name, counts)?;
        }
        let info = self.0.info();
        counter(
            &mut e,
            "proxy_hits",
            "Content requests served from the proxy's cache without a fetch",
            info.hits as f64,
        )?;
        counter(
            &mut e,
            "proxy_misses",
            "Content requests that found no cached copy and waited for a fetch",
            info.misses as f64,
        )?;
        let asked = info.hits + info.misses;
        if asked > 0 {
            gauge(
                &mut e,
                "proxy_hit_ratio",
                "hits / (hits + misses) since the proxy started (absent before the first request)",
                info.hits as f64 / asked as f64,
            )?;
        }
        counter(
            &mut e,
            "proxy_bytes_from_target",
            "Stored content bytes fetched from the server",
            info.bytes_from_target as f64,
        )?;
        counter(
            &mut e,
            "proxy_bytes_served",
            "Stored content bytes sent to clients",
            info.bytes_served as f64,
        )?;
        counter(
            &mut e,
            "proxy_dropped_corrupt",
            "Cache files that failed their digest check and were dropped",
            info.dropped_corrupt as f64,
        )?;
        gauge(
            &mut e,
            "proxy_cache_files",
            "Blobs in the proxy's cache",
            info.cache_files as f64,
        )?;
        gauge(
            &mut e,
            "proxy_cache_bytes",
            "Bytes of the proxy's cached blobs",
            info.cache_bytes as f64,
        )?;
        gauge(
            &mut e,
            "proxy_cache_limit_bytes",
            "The cache's size limit (cache_size_bytes)",
            info.cache_limit_bytes as f64,
        )
    }
}
