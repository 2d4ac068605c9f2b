//! The client side: a tonic connector that opens TCP (TCP_NODELAY) and, for `ssl:` addresses,
//! a TLS session verified by fingerprint; plain connections are sniffed so that a TLS server
//! on the other end is reported as such. [`Observed`] keeps what the connector saw, so a
//! caller can turn a failed call into the typed [`ConnectError`].

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tonic::transport::{Channel, Endpoint};

use crate::addr::ServerAddr;
use crate::error::ConnectError;
use crate::fingerprint::Fingerprint;
use crate::provider::{ALPN_H2, VERSIONS, provider};
use crate::sniff::{Expect, Sniff};
use crate::verify::FingerprintVerifier;

/// Which server certificate a TLS connection accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrustMode {
    /// Only the certificate with this fingerprint (the trust file's entry for the address).
    Pinned(Fingerprint),
    /// None: the address has no trust entry; the connection fails with
    /// [`ConnectError::Untrusted`] naming what the server presented.
    Unknown,
    /// Any certificate (`keel trust` fetching the fingerprint to show or store).
    Any,
}

/// What a connector saw on its connections: the last certificate fingerprint presented and
/// the first wrong-protocol or trust failure.
#[derive(Debug, Default)]
pub struct Observed {
    presented: Mutex<Option<Fingerprint>>,
    failure: OnceLock<ConnectError>,
}

impl Observed {
    pub(crate) fn presented(&self, fp: Fingerprint) {
        if let Ok(mut slot) = self.presented.lock() {
            *slot = Some(fp);
        }
    }

    pub(crate) fn fail(&self, error: ConnectError) {
        let _ = self.failure.set(error);
    }

    /// The fingerprint of the certificate the server last presented, if any.
    pub fn fingerprint(&self) -> Option<Fingerprint> {
        self.presented.lock().ok().and_then(|slot| *slot)
    }

    /// Why connecting failed, when it was the trust check or the wrong protocol.
    pub fn failure(&self) -> Option<&ConnectError> {
        self.failure.get()
    }
}

/// Builds channels to one server address (plain or TLS) with tonic's endpoint knobs.
#[derive(Clone)]
pub struct Dialer {
    addr: ServerAddr,
    tls: Option<TlsConnector>,
    observed: Arc<Observed>,
    connect_timeout: Duration,
    /// The local address to connect from (`None`: the system's choice).
    local: Option<std::net::IpAddr>,
}

impl Dialer {
    /// A dialer for `addr`; `trust` applies when the address is `ssl:`.
    pub fn new(addr: ServerAddr, trust: TrustMode, connect_timeout: Duration) -> Dialer {
        let observed = Arc::new(Observed::default());
        let tls = addr.tls.then(|| {
            let provider = provider();
            let verifier = FingerprintVerifier {
                addr: addr.host_port.clone(),
                trust,
                observed: observed.clone(),
                algorithms: provider.signature_verification_algorithms,
            };
            let mut config = rustls::ClientConfig::builder_with_provider(provider)
                .with_protocol_versions(VERSIONS)
                .expect("ring supports TLS 1.3")
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(verifier))
                .with_no_client_auth();
            config.alpn_protocols = vec![ALPN_H2.to_vec()];
            TlsConnector::from(Arc::new(config))
        });
        Dialer {
            addr,
            tls,
            observed,
            connect_timeout,
            local: None,
        }
    }

    /// Connects from `local` (an address of this machine) instead of the system's choice.
    pub fn bind_local(mut self, local: Option<std::net::IpAddr>) -> Dialer {
        self.local = local;
        self
    }

    /// What this dialer's connections saw.
    pub fn observed(&self) -> Arc<Observed> {
        self.observed.clone()
    }

    /// The address dialed.
    pub fn addr(&self) -> &ServerAddr {
        &self.addr
    }

    /// The endpoint to configure (message sizes, keep-alive...) before connecting.
    pub fn endpoint(&self) -> Result<Endpoint, tonic::transport::Error> {
        Ok(Endpoint::from_shared(self.addr.uri())?.connect_timeout(self.connect_timeout))
    }

    /// Connects now. A trust or wrong-protocol failure is the typed error; anything else is
    /// tonic's transport error.
    pub async fn connect(&self, endpoint: Endpoint) -> Result<Channel, DialError> {
        match endpoint.connect_with_connector(self.clone()).await {
            Ok(channel) => Ok(channel),
            Err(e) => Err(match self.observed.failure() {
                Some(failure) => DialError::Refused(failure.clone()),
                None => DialError::Transport(e),
            }),
        }
    }

    /// A channel that connects on first use and reconnects after failures.
    pub fn connect_lazy(&self, endpoint: Endpoint) -> Channel {
        endpoint.connect_with_connector_lazy(self.clone())
    }
}

/// A failed [`Dialer::connect`].
#[derive(Debug, thiserror::Error)]
pub enum DialError {
    #[error(transparent)]
    Refused(ConnectError),
    #[error(transparent)]
    Transport(tonic::transport::Error),
}

impl tower_service::Service<http::Uri> for Dialer {
    type Response = TokioIo<ClientConn>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<TokioIo<ClientConn>>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _uri: http::Uri) -> Self::Future {
        let dialer = self.clone();
        Box::pin(async move { dialer.open().await.map(TokioIo::new) })
    }
}

impl Dialer {
    async fn open(&self) -> std::io::Result<ClientConn> {
        let tcp = match self.local {
            None => TcpStream::connect(&self.addr.host_port).await?,
            Some(local) => self.connect_from(local).await?,
        };
        tcp.set_nodelay(true)?;
        let addr = self.addr.host_port.clone();
        let Some(tls) = &self.tls else {
            let sniffed = Sniff::new(tcp, Expect::Plain, addr, self.observed.clone());
            return Ok(ClientConn(Conn::Plain(sniffed)));
        };
        let name = ServerName::try_from(self.addr.host().to_string())
            .unwrap_or_else(|_| ServerName::try_from("keel").expect("a valid DNS name"));
        let sniffed = Sniff::new(tcp, Expect::Tls, addr, self.observed.clone());
        let stream = tls.connect(name, sniffed).await?;
        Ok(ClientConn(Conn::Tls(Box::new(stream))))
    }
}

impl Dialer {
    /// A TCP connection from `local` to the first of the address's resolutions of the same
    /// family.
    async fn connect_from(&self, local: std::net::IpAddr) -> std::io::Result<TcpStream> {
        let target = tokio::net::lookup_host(&self.addr.host_port)
            .await?
            .find(|a| a.is_ipv4() == local.is_ipv4())
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::AddrNotAvailable,
                    format!(
                        "{} has no address of the family of {local} to connect from",
                        self.addr.host_port
                    ),
                )
            })?;
        let socket = match local {
            std::net::IpAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            std::net::IpAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        socket.bind(std::net::SocketAddr::new(local, 0))?;
        socket.connect(target).await
    }
}

/// A client connection: plain TCP or TLS over TCP.
pub struct ClientConn(Conn);

enum Conn {
    Plain(Sniff<TcpStream>),
    Tls(Box<TlsStream<Sniff<TcpStream>>>),
}

impl AsyncRead for ClientConn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().0 {
            Conn::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ClientConn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match &mut self.get_mut().0 {
            Conn::Plain(s) => Pin::new(s).poll_write(cx, data),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, data),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match &mut self.get_mut().0 {
            Conn::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match &self.0 {
            Conn::Plain(s) => s.is_write_vectored(),
            Conn::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().0 {
            Conn::Plain(s) => Pin::new(s).poll_flush(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().0 {
            Conn::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
