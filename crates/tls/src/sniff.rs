//! Tells a wrong-protocol peer from other failures by the first byte it sends. A TLS server
//! answers anything with a TLS record (first byte 0x14..=0x17: change-cipher-spec, alert,
//! handshake, data); an HTTP/2 server's first bytes are a frame header, whose first byte is the
//! top of a 24-bit length (0 for the SETTINGS frame it opens with).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::connect::Observed;
use crate::error::ConnectError;

/// The TLS record content types (RFC 8446 §5.1).
fn is_tls_record(first: u8) -> bool {
    (0x14..=0x17).contains(&first)
}

/// What the connection expects the peer to speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expect {
    Tls,
    Plain,
}

/// An IO stream that checks the peer's first byte against what it expects; a mismatch fails
/// the read with the typed [`ConnectError`] (also left in [`Observed`]).
pub(crate) struct Sniff<S> {
    inner: S,
    expect: Expect,
    addr: String,
    observed: Arc<Observed>,
    checked: bool,
}

impl<S> Sniff<S> {
    pub(crate) fn new(inner: S, expect: Expect, addr: String, observed: Arc<Observed>) -> Self {
        Sniff {
            inner,
            expect,
            addr,
            observed,
            checked: false,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Sniff<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let result = Pin::new(&mut this.inner).poll_read(cx, buf);
        if this.checked || !matches!(result, Poll::Ready(Ok(()))) {
            return result;
        }
        let Some(&first) = buf.filled().get(before) else {
            return result;
        };
        this.checked = true;
        let mismatch = match this.expect {
            Expect::Plain if is_tls_record(first) => Some(ConnectError::SpeaksTls {
                addr: this.addr.clone(),
            }),
            Expect::Tls if !is_tls_record(first) => Some(ConnectError::SpeaksPlain {
                addr: this.addr.clone(),
            }),
            _ => None,
        };
        match mismatch {
            Some(error) => {
                buf.set_filled(before);
                this.observed.fail(error.clone());
                Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, error)))
            }
            None => result,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Sniff<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
