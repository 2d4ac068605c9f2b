//! The server side: accepted TCP connections (TCP_NODELAY) handed to tonic as they are, or
//! after a TLS handshake. Each connection is looked at on a task of its own, with a time
//! limit, so a slow or silent client never holds up the accept loop. The client's first byte
//! tells a TLS client (a handshake record, 0x16) from a plain one (HTTP/2's preface); one that
//! came to the wrong kind of port is answered in a way its side recognises — a TLS alert
//! record for a plain client on a TLS port, a line of text for a TLS client on a plain port —
//! and its input is drained before the close, so the answer is not lost to a TCP reset.
//! Every connection is admitted under the listener's caps first ([`crate::limits`]) and
//! handed on wrapped for the idle timeout ([`crate::idle`]).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, timeout_at};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_stream::Stream;
use tonic::transport::server::{Connected, TcpConnectInfo};

use crate::idle::Limited;
use crate::limits::{ConnGuard, ConnTracker};
use std::net::SocketAddr;

/// How many accepted connections may wait for tonic to take them.
const READY_QUEUE: usize = 64;
/// The first byte of a TLS handshake record (a ClientHello).
const TLS_HANDSHAKE: u8 = 0x16;
/// A fatal TLS alert record (TLS 1.2 framing, as any TLS client reads it): unexpected_message.
const TLS_ALERT: [u8; 7] = [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x0a];
/// What a TLS client on a plain port is sent (its first byte is no TLS record type).
const PLAIN_NOTICE: &[u8] = b"keel: this port speaks plain TCP, not TLS\n";
/// Most bytes drained from a wrong-protocol client before closing.
const DRAIN_LIMIT: usize = 64 * 1024;
/// Longest wait for a wrong-protocol client to read the answer and close.
const DRAIN_TIME: Duration = Duration::from_secs(2);

/// The connections `listener` accepts, as tonic's incoming stream: TLS when `tls` is given,
/// under `tracker`'s limits (serve with [`crate::InFlightLayer`] for the idle timeout to see
/// requests).
pub fn incoming(
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    handshake_timeout: Duration,
    tracker: Arc<ConnTracker>,
) -> Pin<Box<dyn Stream<Item = std::io::Result<Limited<ServerConn>>> + Send>> {
    incoming_with(listener, tls, handshake_timeout, tracker, false)
}

/// [`incoming`] for a protocol of its own over TCP (the P4 listener): with
/// `reads_are_requests`, bytes read count as activity for the idle timeout, as on HTTP/1.1.
pub fn incoming_with(
    listener: TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    handshake_timeout: Duration,
    tracker: Arc<ConnTracker>,
    reads_are_requests: bool,
) -> Pin<Box<dyn Stream<Item = std::io::Result<Limited<ServerConn>>> + Send>> {
    let acceptor = tls.map(TlsAcceptor::from);
    let (tx, rx) = tokio::sync::mpsc::channel(READY_QUEUE);
    tokio::spawn(async move {
        let mut backoff = Backoff::default();
        loop {
            let accepted = tokio::select! {
                accepted = accept_admitted(&listener, &tracker, &mut backoff) => accepted,
                _ = tx.closed() => return,
            };
            let (tcp, peer, guard) = accepted;
            let acceptor = acceptor.clone();
            let tx = tx.clone();
            tokio::spawn(async move {
                let deadline = Instant::now() + handshake_timeout;
                match admit(tcp, acceptor, deadline).await {
                    Ok(Some(conn)) => {
                        let conn = Limited::new(conn, guard, reads_are_requests);
                        let _ = tx.send(Ok(conn)).await;
                    }
                    Ok(None) => {}
                    Err(why) => tracing::info!(%peer, "connection refused: {why}"),
                }
            });
        }
    });
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}

/// The plain TCP connections `listener` accepts under `tracker`'s limits, for an HTTP/1.1
/// server (bytes read count as requests for the idle timeout).
pub fn incoming_http1(
    listener: TcpListener,
    tracker: Arc<ConnTracker>,
) -> impl Stream<Item = (Limited<TcpStream>, SocketAddr)> + Send {
    let (tx, rx) = tokio::sync::mpsc::channel(READY_QUEUE);
    tokio::spawn(async move {
        let mut backoff = Backoff::default();
        loop {
            let (tcp, peer, guard) = tokio::select! {
                accepted = accept_admitted(&listener, &tracker, &mut backoff) => accepted,
                _ = tx.closed() => return,
            };
            if tx
                .send((Limited::new(tcp, guard, true), peer))
                .await
                .is_err()
            {
                return;
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

/// The growing sleep after failed accepts.
#[derive(Default)]
struct Backoff {
    next: Option<Duration>,
    /// When a failed accept was last logged, and how many went unlogged since.
    logged: Option<(std::time::Instant, u64)>,
}

/// The first sleep after a failed accept; each further failure doubles it.
const BACKOFF_FIRST: Duration = Duration::from_millis(5);
/// A failed accept is logged at most this often.
const ACCEPT_ERROR_LOG_EVERY: Duration = Duration::from_secs(10);

/// The next connection within `tracker`'s caps, with its place under them. Connections past
/// a cap are closed at once (counted and logged by the tracker); a failed accept (out of
/// descriptors: EMFILE, ENFILE) sleeps a growing interval instead of retrying at once.
async fn accept_admitted(
    listener: &TcpListener,
    tracker: &Arc<ConnTracker>,
    backoff: &mut Backoff,
) -> (TcpStream, SocketAddr, ConnGuard) {
    loop {
        match listener.accept().await {
            Ok((tcp, peer)) => {
                backoff.next = None;
                match tracker.admit(peer) {
                    Ok(guard) => return (tcp, peer, guard),
                    // Closed at once, unread.
                    Err(_) => drop(tcp),
                }
            }
            Err(e) => {
                tracker.accept_failed();
                let max = tracker.limits.accept_backoff_max;
                let sleep = backoff.next.unwrap_or(BACKOFF_FIRST).min(max);
                backoff.next = Some((sleep * 2).min(max));
                let now = std::time::Instant::now();
                match &mut backoff.logged {
                    Some((at, skipped)) if now.duration_since(*at) < ACCEPT_ERROR_LOG_EVERY => {
                        *skipped += 1;
                    }
                    logged => {
                        let skipped = logged.map_or(0, |(_, n)| n);
                        tracing::warn!(
                            listener = tracker.name,
                            error = %e,
                            sleep_ms = sleep.as_millis() as u64,
                            also_failed_since_last_line = skipped,
                            "accept failed; waiting before the next"
                        );
                        *logged = Some((now, 0));
                    }
                }
                tokio::time::sleep(sleep).await;
            }
        }
    }
}

/// Looks at a new connection's first byte and makes it ready for tonic, or answers a
/// wrong-protocol client. `Ok(None)`: the client went away before sending anything.
async fn admit(
    tcp: TcpStream,
    acceptor: Option<TlsAcceptor>,
    deadline: Instant,
) -> Result<Option<ServerConn>, String> {
    let _ = tcp.set_nodelay(true);
    let mut first = [0u8; 1];
    let peeked = timeout_at(deadline, tcp.peek(&mut first))
        .await
        .map_err(|_| "sent nothing before the handshake time limit".to_string())?
        .map_err(|e| e.to_string())?;
    if peeked == 0 {
        return Ok(None);
    }
    let speaks_tls = first[0] == TLS_HANDSHAKE;
    match (acceptor, speaks_tls) {
        (None, false) => Ok(Some(ServerConn::Plain(tcp))),
        (Some(acceptor), true) => match timeout_at(deadline, acceptor.accept(tcp)).await {
            Ok(Ok(stream)) => Ok(Some(ServerConn::Tls(Box::new(stream)))),
            Ok(Err(e)) => Err(format!("TLS handshake failed: {e}")),
            Err(_) => Err("TLS handshake did not finish in time".to_string()),
        },
        (Some(_), false) => {
            answer_and_close(tcp, &TLS_ALERT).await;
            Err("a plain-TCP client on this TLS port (sent a TLS alert)".to_string())
        }
        (None, true) => {
            answer_and_close(tcp, PLAIN_NOTICE).await;
            Err("a TLS client on this plain port".to_string())
        }
    }
}

/// Sends `answer`, ends the sending side, and reads (a bounded amount, for a bounded time)
/// until the client closes, so the close is a FIN after the answer and not a reset that
/// would discard it.
async fn answer_and_close(mut tcp: TcpStream, answer: &[u8]) {
    let deadline = Instant::now() + DRAIN_TIME;
    let _ = timeout_at(deadline, async {
        tcp.write_all(answer).await?;
        tcp.shutdown().await?;
        let mut buf = [0u8; 4096];
        let mut drained = 0;
        while drained < DRAIN_LIMIT {
            match tcp.read(&mut buf).await? {
                0 => break,
                n => drained += n,
            }
        }
        Ok::<_, std::io::Error>(())
    })
    .await;
}

/// An accepted connection: plain TCP or TLS over TCP.
pub enum ServerConn {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl ServerConn {
    fn tcp(&self) -> &TcpStream {
        match self {
            ServerConn::Plain(s) => s,
            ServerConn::Tls(s) => s.get_ref().0,
        }
    }
}

impl Connected for Limited<ServerConn> {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        let tcp = self.get_ref().tcp();
        TcpConnectInfo {
            local_addr: tcp.local_addr().ok(),
            remote_addr: tcp.peer_addr().ok(),
        }
    }
}

impl AsyncRead for ServerConn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ServerConn::Plain(s) => Pin::new(s).poll_read(cx, buf),
            ServerConn::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for ServerConn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            ServerConn::Plain(s) => Pin::new(s).poll_write(cx, data),
            ServerConn::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, data),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            ServerConn::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            ServerConn::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            ServerConn::Plain(s) => s.is_write_vectored(),
            ServerConn::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ServerConn::Plain(s) => Pin::new(s).poll_flush(cx),
            ServerConn::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            ServerConn::Plain(s) => Pin::new(s).poll_shutdown(cx),
            ServerConn::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
