//! Keel's caching proxy: a gRPC front end that forwards every call to a target server and
//! answers Sync and Print itself, taking records from the target and content from a local
//! cache keyed by digest (fetched once with `Content` on a miss).

#![forbid(unsafe_code)]

mod cache;
mod config;
mod content;
mod handlers;
mod metrics;
mod pipeline;
mod router;
mod stats;
mod upstream;

pub use cache::CacheError;
pub use config::{ProxyConfig, ProxyConfigError};
pub use upstream::ServiceUser;

use content::ContentSource;
use keel_proto::v1 as pb;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tonic::Code;
use upstream::Upstream;

/// Where to listen, what to forward to, and where to cache.
#[derive(Clone, Debug)]
pub struct ProxyOptions {
    /// `HOST:PORT` (or `ssl:HOST:PORT`) of the Keel server behind the proxy.
    pub target: String,
    /// `HOST:PORT` (or `ssl:HOST:PORT` to serve TLS) to listen on; port 0 picks a free one.
    pub listen: String,
    /// The trust file holding an `ssl:` target's fingerprint (that of the user running the
    /// proxy); `None` trusts no TLS target.
    pub trust_file: Option<PathBuf>,
    /// Directory of the content cache (created when missing).
    pub cache_dir: PathBuf,
    pub config: ProxyConfig,
    /// The service user content fetches go as, with its ticket (`--service-user`).
    pub service_user: Option<upstream::ServiceUser>,
}

#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("cannot open the proxy cache: {0}")]
    Cache(#[from] CacheError),
    #[error("target {addr} is not a reachable Keel server: {reason}")]
    Target { addr: String, reason: String },
    #[error("cannot listen on {addr}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("proxy failed: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("cannot serve TLS: {0}")]
    Certificate(#[from] keel_tls::CertError),
    #[error(transparent)]
    Metrics(#[from] keel_metrics::EndpointError),
}

/// What the handlers share.
pub(crate) struct Proxy {
    /// The address clients use (`ssl:` when serving TLS).
    addr: String,
    config: ProxyConfig,
    source: Arc<ContentSource>,
    /// The listeners' connection counters, for the metrics.
    connections: Vec<Arc<keel_tls::ConnTracker>>,
}

/// The proxy's counters and cache size when it stopped (for the exit log line).
pub type Counters = pb::ProxyInfo;

/// Where a started proxy listens, as `run`'s `ready` callback is told.
#[derive(Clone, Debug)]
pub struct ProxyListening {
    /// The address clients use (`ssl:` for TLS).
    pub addr: String,
    /// The certificate's fingerprint when the proxy serves TLS.
    pub fingerprint: Option<keel_tls::Fingerprint>,
    /// Where Prometheus metrics are served (`http://ADDR/metrics`), when they are.
    pub metrics: Option<std::net::SocketAddr>,
}

/// Opens the cache, checks that the target is a Keel server, and serves until `shutdown`
/// completes: it then stops accepting, lets calls in flight finish for
/// `ProxyConfig::shutdown_grace_ms` and cancels what still runs. `ready` is called with the
/// addresses once connections are accepted.
pub async fn run(
    opts: ProxyOptions,
    ready: impl FnOnce(&ProxyListening) + Send,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<Counters, ProxyError> {
    let config = opts.config.clone();
    let dir = opts.cache_dir.clone();
    let limit = config.cache_size_bytes;
    let cache = tokio::task::spawn_blocking(move || cache::Cache::open(&dir, limit))
        .await
        .map_err(|e| {
            ProxyError::Cache(CacheError::Io {
                path: opts.cache_dir.clone(),
                source: std::io::Error::other(e.to_string()),
            })
        })??;
    let target_error = |reason: String| ProxyError::Target {
        addr: opts.target.clone(),
        reason,
    };
    let upstream = Upstream::new(
        &opts.target,
        opts.trust_file.as_deref(),
        Duration::from_secs(config.connect_timeout_secs),
        config.max_message_bytes,
        opts.service_user.clone(),
    )
    .map_err(target_error)?;
    probe(&upstream).await.map_err(target_error)?;

    let listen = keel_tls::ServerAddr::parse(&opts.listen);
    let tls = match listen.tls {
        true => Some(keel_tls::ServerTls::load_or_generate(
            &config.tls_paths(&opts.cache_dir),
        )?),
        false => None,
    };
    let listener = tokio::net::TcpListener::bind(&listen.host_port)
        .await
        .map_err(|source| ProxyError::Listen {
            addr: opts.listen.clone(),
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ProxyError::Listen {
        addr: opts.listen.clone(),
        source,
    })?;
    let stats = Arc::new(stats::Stats::default());
    let source = Arc::new(ContentSource::new(
        Arc::new(cache),
        upstream,
        stats,
        config.small_content_bytes,
    ));
    let fingerprint = tls.as_ref().map(|t| t.fingerprint);
    let addr = match fingerprint {
        Some(_) => format!("ssl:{addr}"),
        None => addr.to_string(),
    };
    let handshake_timeout = Duration::from_millis(config.tls_handshake_timeout_ms);
    let keepalive = (
        Duration::from_millis(config.keepalive_interval_ms),
        Duration::from_millis(config.keepalive_timeout_ms),
    );
    let listeners = if config.metrics_listen.is_empty() {
        1
    } else {
        2
    };
    let limits = keel_tls::fit_connection_limits(config.connection_limits(), listeners);
    let client_conns = keel_tls::ConnTracker::new("proxy", limits);
    let metrics_conns = keel_tls::ConnTracker::new("metrics", limits);
    let config_metrics = config.metrics_listen.clone();
    let proxy = Arc::new(Proxy {
        addr: addr.clone(),
        config,
        source,
        connections: vec![client_conns.clone(), metrics_conns.clone()],
    });
    let usage = proxy.source.cache.usage();
    tracing::info!(%addr, target = %opts.target, cache = %opts.cache_dir.display(),
        files = usage.files, bytes = usage.bytes,
        fingerprint = %fingerprint.map(|f| f.to_string()).unwrap_or_default(),
        "keel proxy listening");
    let metrics = match config_metrics.is_empty() {
        true => None,
        false => {
            let endpoint = keel_metrics::MetricsEndpoint::bind(&config_metrics).await?;
            let at = endpoint.local_addr();
            let registry = Arc::new(metrics::registry(proxy.clone()));
            tracing::info!(addr = %at, "metrics at /metrics");
            Some((
                at,
                tokio::spawn(keel_metrics::serve_connections(
                    registry,
                    keel_tls::incoming_http1(endpoint.into_listener(), metrics_conns),
                    std::future::pending(),
                )),
            ))
        }
    };
    ready(&ProxyListening {
        addr: addr.clone(),
        fingerprint,
        metrics: metrics.as_ref().map(|(at, _)| *at),
    });
    let routes = tonic::service::Routes::from(
        axum::Router::new().fallback_service(router::Router(proxy.clone())),
    );
    let incoming = keel_tls::incoming(
        listener,
        tls.map(|t| t.config),
        handshake_timeout,
        client_conns.clone(),
    );
    let grace_ms = proxy.config.shutdown_grace_ms;
    let (stop_tx, mut stop_rx) = tokio::sync::watch::channel(false);
    let stop = async move {
        shutdown.await;
        tracing::info!(
            grace_ms,
            "keel proxy stopping: no new connections, calls in flight get the grace period"
        );
        let _ = stop_tx.send(true);
    };
    let server = tonic::transport::Server::builder()
        .tcp_nodelay(true)
        .http2_keepalive_interval(Some(keepalive.0))
        .http2_keepalive_timeout(Some(keepalive.1))
        .layer(keel_tls::InFlightLayer {
            tracker: client_conns,
        })
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming, stop);
    tokio::select! {
        served = server => served?,
        _ = async {
            if stop_rx.wait_for(|stopping| *stopping).await.is_ok() {
                tokio::time::sleep(Duration::from_millis(grace_ms)).await;
            } else {
                std::future::pending::<()>().await;
            }
        } => tracing::warn!(grace_ms, "calls still running at the end of the grace period are cancelled"),
    }
    if let Some((_, task)) = metrics {
        task.abort();
    }
    let counters = proxy.info();
    tracing::info!(
        hits = counters.hits,
        misses = counters.misses,
        bytes_from_target = counters.bytes_from_target,
        bytes_served = counters.bytes_served,
        "keel proxy stopped"
    );
    Ok(counters)
}

/// Asks the target for `Info` without a caller: a Keel server refuses that as an invalid
/// argument without recording anything; anything else (no answer, not gRPC, a gRPC server
/// without Keel's API) is not a Keel server.
async fn probe(upstream: &Upstream) -> Result<(), String> {
    match upstream
        .info_unmapped(pb::InfoRequest { caller: None })
        .await
    {
        Ok(_) => Ok(()),
        Err(s) if s.code() == Code::InvalidArgument => Ok(()),
        Err(s) if s.code() == Code::Unimplemented => {
            Err("it answers gRPC but not Keel's API".to_string())
        }
        Err(s) => Err(status_chain(&s)),
    }
}

/// A status's message and the errors beneath it (a transport failure's cause is there).
fn status_chain(status: &tonic::Status) -> String {
    let mut text = status.message().to_string();
    let mut source = std::error::Error::source(status);
    while let Some(inner) = source {
        // Transport errors repeat their cause's words at each level; each is said once.
        let words = inner.to_string();
        if !text.contains(&words) {
            text.push_str(": ");
            text.push_str(&words);
        }
        source = inner.source();
    }
    text
}
