//! The server's Prometheus metrics (`--metrics-listen`): the per-RPC families filled by
//! `keel_metrics::Instrument` around the API, the probe's families, and the values other parts
//! of the server already keep (`gauges`), all under the `keel_` prefix.

mod content_scan;
mod gauges;
pub(crate) mod probe;

pub(crate) use gauges::Sources;
pub(crate) use probe::ProbeMetrics;

use keel_metrics::RpcMetrics;
use keel_metrics::prometheus_client::registry::Registry;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Everything a running server exposes.
pub(crate) struct ServerMetrics {
    pub(crate) registry: Arc<Registry>,
    pub(crate) rpc: Arc<RpcMetrics>,
    pub(crate) probe: Arc<ProbeMetrics>,
}

/// Builds the registry; starts the content store's counting thread over `content`.
pub(crate) fn build(
    sources: Sources,
    content: PathBuf,
    scan_every: Duration,
) -> std::io::Result<ServerMetrics> {
    let mut registry = Registry::with_prefix("keel");
    let rpcs: Vec<&'static str> = keel_service::command::COMMANDS
        .iter()
        .map(|c| c.name)
        .collect();
    let rpc = Arc::new(RpcMetrics::register(&mut registry, &rpcs));
    let probe = Arc::new(ProbeMetrics::register(&mut registry));
    let content = content_scan::start(content, scan_every)?;
    registry.register_collector(Box::new(gauges::Gauges { sources, content }));
    Ok(ServerMetrics {
        registry: Arc::new(registry),
        rpc,
        probe,
    })
}
