//! Keel's Prometheus metrics: the families every RPC fills (`rpc`), the tower layer that fills
//! them (`layer`, built on `wrap`, the wrapper the server's layers share), and the plain HTTP/1.1 endpoint that serves a registry as OpenMetrics text
//! (`endpoint`). The server and the proxy each build a registry, add what they know (the
//! server's store, journal and replica; the proxy's cache) as collectors read at scrape time,
//! and serve it with `--metrics-listen`.
//!
//! **API Boundary:** knows no Keel crate; the RPC names it may use as label values are given
//! by the caller, so a client inventing method names cannot grow the label set.

#![forbid(unsafe_code)]

pub mod collect;
mod endpoint;
mod layer;
mod rpc;
pub mod wrap;

pub use endpoint::{
    EndpointError, MetricsEndpoint, OPENMETRICS_CONTENT_TYPE, render, serve_connections,
};
pub use layer::Instrument;
pub use prometheus_client;
pub use rpc::{LATENCY_BUCKETS, RpcMetrics};
