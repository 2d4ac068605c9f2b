//! The metrics endpoint: a plain HTTP/1.1 listener (hyper) that answers `GET /metrics` with
//! the registry encoded as OpenMetrics text at the moment of the request; every other path
//! is 404 and every other method 405. Scrapes read atomics and the collectors' sources and
//! never touch the gRPC port. The caller accepts the connections, under its own limits.

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use prometheus_client::registry::Registry;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_stream::{Stream, StreamExt};

/// What Prometheus asks for and gets (OpenMetrics 1.0 text).
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error("cannot listen for metrics on {addr}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },
}

/// A bound metrics listener, not yet serving.
pub struct MetricsEndpoint {
    listener: TcpListener,
    addr: SocketAddr,
}

impl MetricsEndpoint {
    /// Binds `addr` (`HOST:PORT`; port 0 picks a free one).
    pub async fn bind(addr: &str) -> Result<MetricsEndpoint, EndpointError> {
        let failed = |source| EndpointError::Listen {
            addr: addr.to_string(),
            source,
        };
        let listener = TcpListener::bind(addr).await.map_err(failed)?;
        let bound = listener.local_addr().map_err(failed)?;
        Ok(MetricsEndpoint {
            listener,
            addr: bound,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bound listener, for the caller to accept on under its limits and hand the
    /// connections to [`serve_connections`].
    pub fn into_listener(self) -> TcpListener {
        self.listener
    }
}

/// Serves `registry` on each connection `connections` yields, until `shutdown` completes;
/// each connection runs on a task of its own, so a slow scraper holds up no other. The
/// caller accepts (and limits) the connections.
pub async fn serve_connections<I, IO>(
    registry: Arc<Registry>,
    connections: I,
    shutdown: impl Future<Output = ()>,
) where
    I: Stream<Item = (IO, SocketAddr)> + Send,
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let accept = async {
        let mut connections = std::pin::pin!(connections);
        while let Some((stream, peer)) = connections.next().await {
            let registry = registry.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let registry = registry.clone();
                    async move { Ok::<_, std::convert::Infallible>(answer(&req, &registry)) }
                });
                if let Err(e) = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    tracing::debug!(%peer, error = %e, "metrics endpoint: connection ended");
                }
            });
        }
    };
    tokio::select! {
        _ = accept => {}
        _ = shutdown => {}
    }
}

/// The reply to one request.
fn answer(req: &http::Request<Incoming>, registry: &Registry) -> http::Response<Full<Bytes>> {
    let reply = |status: http::StatusCode, content_type: &str, body: String| {
        let mut response = http::Response::new(Full::new(Bytes::from(body)));
        *response.status_mut() = status;
        if let Ok(value) = http::HeaderValue::from_str(content_type) {
            response
                .headers_mut()
                .insert(http::header::CONTENT_TYPE, value);
        }
        response
    };
    let text = "text/plain; charset=utf-8";
    if req.uri().path() != "/metrics" {
        return reply(
            http::StatusCode::NOT_FOUND,
            text,
            format!("no {}: the metrics are at /metrics\n", req.uri().path()),
        );
    }
    if req.method() != http::Method::GET && req.method() != http::Method::HEAD {
        return reply(
            http::StatusCode::METHOD_NOT_ALLOWED,
            text,
            format!("{} /metrics: only GET\n", req.method()),
        );
    }
    match render(registry) {
        Ok(body) => reply(http::StatusCode::OK, OPENMETRICS_CONTENT_TYPE, body),
        Err(e) => reply(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            text,
            format!("cannot encode the metrics: {e}\n"),
        ),
    }
}

/// The registry as OpenMetrics text (ending in `# EOF`).
pub fn render(registry: &Registry) -> Result<String, std::fmt::Error> {
    let mut body = String::new();
    prometheus_client::encoding::text::encode(&mut body, registry)?;
    Ok(body)
}
