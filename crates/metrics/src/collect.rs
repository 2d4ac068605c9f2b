//! Helpers for collectors: values read at scrape time (a file's size, a store's counter),
//! written as one gauge or counter with its HELP line.

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Writes a gauge `name` (under the registry's prefix) with `value`.
pub fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: f64,
) -> Result<(), std::fmt::Error> {
    let metric = ConstGauge::new(value);
    metric.encode(encoder.encode_descriptor(name, help, None, metric.metric_type())?)
}

/// Writes a counter `name` (exposed as `name_total`) with `value`.
pub fn counter(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: f64,
) -> Result<(), std::fmt::Error> {
    let metric = ConstCounter::new(value);
    metric.encode(encoder.encode_descriptor(name, help, None, metric.metric_type())?)
}

/// One listener's connection counters (the server and the proxy keep them).
#[derive(Clone, Copy, Debug, Default)]
pub struct ConnectionCounts {
    pub open: u64,
    pub refused_max_connections: u64,
    pub refused_per_address: u64,
    pub idle_closed: u64,
    pub accept_errors: u64,
}

/// Writes `listener`'s connection gauge and counters (`LISTENER_connections_open`, ...).
pub fn connections(
    encoder: &mut DescriptorEncoder,
    listener: &str,
    c: ConnectionCounts,
) -> Result<(), std::fmt::Error> {
    gauge(
        encoder,
        &format!("{listener}_connections_open"),
        "Connections open on the listener now",
        c.open as f64,
    )?;
    counter(
        encoder,
        &format!("{listener}_connections_refused_max_connections"),
        "Connections closed at once because max_connections were open",
        c.refused_max_connections as f64,
    )?;
    counter(
        encoder,
        &format!("{listener}_connections_refused_per_address"),
        "Connections closed at once because max_connections_per_address were open from their address",
        c.refused_per_address as f64,
    )?;
    counter(
        encoder,
        &format!("{listener}_connections_idle_closed"),
        "Connections closed after idle_timeout_ms with no request in flight",
        c.idle_closed as f64,
    )?;
    counter(
        encoder,
        &format!("{listener}_accept_errors"),
        "Failed accepts (out of file descriptors and the like), each followed by a growing wait",
        c.accept_errors as f64,
    )
}
