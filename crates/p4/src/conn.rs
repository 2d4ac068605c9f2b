//! One client connection's byte stream: reads whole messages (header checked, size capped)
//! and writes queued ones, answering the transport's own functions (`flush1`) on the way.
//!
//! Link compression, as P4 clients do it: the server sends `compress1` and compresses
//! everything it sends after it (raw deflate, flushed whole at every write); the client answers
//! `compress2` and compresses everything it sends after that, which the server inflates from
//! the next message on.

use crate::wire::frame::{self, FrameError, HEADER_LEN};
use crate::wire::message::{Encoder, Message, MessageError};
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// A stream a connection runs over (TCP, TLS, a process's stdin and stdout).
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

/// Why a connection ends abnormally.
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    #[error("connection failed: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error(transparent)]
    Message(#[from] MessageError),
    #[error("the client closed the connection in the middle of a command")]
    Closed,
    #[error("the client did not answer ({expected}) within {waited_ms} ms")]
    NoReply { expected: String, waited_ms: u64 },
    #[error("the client sent {func:?} while the server waited for {expected:?}")]
    Unexpected { func: String, expected: String },
    #[error("the client's compressed stream is corrupt: {0}")]
    Inflate(String),
    #[error("compressing for the client failed: {0}")]
    Deflate(String),
}

/// Bytes read from the stream at a time while inflating.
const INFLATE_CHUNK: usize = 64 * 1024;

/// The compressed halves of a connection.
#[derive(Default)]
struct Link {
    /// Set once `compress1` is sent: everything written after it is deflated.
    deflate: Option<Compress>,
    /// Set once the client's `compress2` is read: everything read after it is inflated.
    inflate: Option<Decompress>,
    /// Inflated bytes not yet taken, from `at` on.
    plain: Vec<u8>,
    at: usize,
}

/// A connection: its stream and the bytes queued to be written.
pub struct Conn {
    stream: Box<dyn Stream>,
    out: Vec<u8>,
    link: Link,
    max_message_bytes: usize,
    /// Bytes read and written so far.
    pub bytes_in: u64,
    pub bytes_out: u64,
}

impl Conn {
    pub fn new(stream: Box<dyn Stream>, max_message_bytes: usize) -> Conn {
        Conn {
            stream,
            out: Vec::new(),
            link: Link::default(),
            max_message_bytes,
            bytes_in: 0,
            bytes_out: 0,
        }
    }

    /// The largest message this connection reads.
    pub fn max_message_bytes(&self) -> usize {
        self.max_message_bytes
    }

    /// The next message; `None` when the client closed the connection between messages.
    pub async fn read(&mut self) -> Result<Option<Message>, ConnError> {
        if self.link.inflate.is_some() {
            return self.read_inflated().await;
        }
        let mut header = [0u8; HEADER_LEN];
        match self.stream.read(&mut header[..1]).await? {
            0 => return Ok(None),
            _ => self.stream.read_exact(&mut header[1..]).await?,
        };
        let len = frame::decode_header(header, self.max_message_bytes)?;
        let mut body = vec![0u8; len];
        self.stream.read_exact(&mut body).await?;
        self.bytes_in += (HEADER_LEN + len) as u64;
        Ok(Some(Message::decode(&body)?))
    }

    /// [`Conn::read`] on a compressed link.
    async fn read_inflated(&mut self) -> Result<Option<Message>, ConnError> {
        if !self.fill(1).await? {
            return Ok(None);
        }
        if !self.fill(HEADER_LEN).await? {
            return Err(ConnError::Closed);
        }
        let mut header = [0u8; HEADER_LEN];
        header.copy_from_slice(&self.link.plain[self.link.at..self.link.at + HEADER_LEN]);
        let len = frame::decode_header(header, self.max_message_bytes)?;
        if !self.fill(HEADER_LEN + len).await? {
            return Err(ConnError::Closed);
        }
        let start = self.link.at + HEADER_LEN;
        let m = Message::decode(&self.link.plain[start..start + len])?;
        self.link.at = start + len;
        Ok(Some(m))
    }

    /// Inflates until `n` plain bytes wait; `false` when the stream ends first.
    async fn fill(&mut self, n: usize) -> Result<bool, ConnError> {
        let mut chunk = vec![0u8; INFLATE_CHUNK];
        while self.link.plain.len() - self.link.at < n {
            if self.link.at > 0 {
                self.link.plain.drain(..self.link.at);
                self.link.at = 0;
            }
            let got = self.stream.read(&mut chunk).await?;
            if got == 0 {
                return Ok(false);
            }
            self.bytes_in += got as u64;
            let z = self.link.inflate.as_mut().expect("inflating");
            let mut input = &chunk[..got];
            while !input.is_empty() {
                self.link.plain.reserve(INFLATE_CHUNK);
                let (before_in, before_out) = (z.total_in(), z.total_out());
                let status = z
                    .decompress_vec(input, &mut self.link.plain, FlushDecompress::None)
                    .map_err(|e| ConnError::Inflate(e.to_string()))?;
                input = &input[(z.total_in() - before_in) as usize..];
                if status == Status::StreamEnd {
                    return Err(ConnError::Inflate("the stream ended".into()));
                }
                if z.total_in() == before_in && z.total_out() == before_out {
                    return Err(ConnError::Inflate("no progress".into()));
                }
            }
        }
        Ok(true)
    }

    /// Starts link compression: sends `compress1` as it is, then compresses all that follows.
    /// Nothing when the link is compressed already.
    pub async fn start_compression(&mut self) -> Result<(), ConnError> {
        if self.link.deflate.is_some() {
            return Ok(());
        }
        self.send(&Message::new().with("func", "compress1"));
        self.flush().await?;
        self.link.deflate = Some(Compress::new(Compression::fast(), false));
        Ok(())
    }

    /// Whether the server compresses what it sends.
    pub fn compressing(&self) -> bool {
        self.link.deflate.is_some()
    }

    /// The next message that is not the transport's own (`flush1` is answered here); a
    /// closed connection is an error (a command was waiting for the client).
    pub async fn read_command(&mut self) -> Result<Message, ConnError> {
        loop {
            let m = self.read().await?.ok_or(ConnError::Closed)?;
            if self.transport(&m).await? {
                continue;
            }
            return Ok(m);
        }
    }

    /// Answers a transport message (`flush1` gets `flush2` with its own variables back);
    /// `true` when `m` was one.
    pub async fn transport(&mut self, m: &Message) -> Result<bool, ConnError> {
        match m.func().as_deref() {
            Some("flush1") => {
                let mut reply = Message::new();
                for (name, value) in m.vars() {
                    if name != b"func" {
                        reply.set(name, value);
                    }
                }
                reply.set("func", "flush2");
                self.send(&reply);
                self.flush().await?;
                Ok(true)
            }
            Some("flush2") => Ok(true),
            // The client compresses from its next message on.
            Some("compress2") => {
                self.link
                    .inflate
                    .get_or_insert_with(|| Decompress::new(false));
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Queues `m` to be written.
    pub fn send(&mut self, m: &Message) {
        let body = m.encode();
        // A body past u32 cannot be framed; the command that made it is refused before.
        let len = u32::try_from(body.len()).unwrap_or(u32::MAX);
        self.out.extend_from_slice(&frame::encode_header(len));
        self.out.extend_from_slice(&body);
    }

    /// Starts a message queued to be written, encoded as its variables are given.
    pub fn encoder(&mut self) -> Encoder<'_> {
        Encoder::begin(&mut self.out)
    }

    /// Bytes queued and not yet written.
    pub fn queued(&self) -> usize {
        self.out.len()
    }

    /// Writes everything queued (deflated and flushed whole on a compressed link).
    pub async fn flush(&mut self) -> Result<(), ConnError> {
        if !self.out.is_empty() {
            if let Some(z) = self.link.deflate.as_mut() {
                let deflated = deflate_all(z, &self.out)?;
                self.out.clear();
                self.out = deflated;
            }
            self.stream.write_all(&self.out).await?;
            self.bytes_out += self.out.len() as u64;
            self.out.clear();
        }
        self.stream.flush().await?;
        Ok(())
    }

    /// Reads and drops up to `bytes` bytes (what a refused client is still sending).
    pub async fn drain(&mut self, bytes: usize) {
        let mut left = bytes.min(64 << 20);
        let mut buf = vec![0u8; 64 * 1024];
        while left > 0 {
            match self.stream.read(&mut buf[..left.min(64 * 1024)]).await {
                Ok(0) | Err(_) => return,
                Ok(n) => left -= n,
            }
        }
    }

    /// Writes what is queued and closes the stream (errors ignored: the client may be gone).
    pub async fn close(&mut self) {
        let _ = self.flush().await;
        let _ = self.stream.shutdown().await;
    }
}

/// `input` deflated and fully flushed, so the client can inflate all of it now.
fn deflate_all(z: &mut Compress, mut input: &[u8]) -> Result<Vec<u8>, ConnError> {
    let mut out = Vec::with_capacity(input.len() / 2 + 64);
    loop {
        out.reserve(input.len() / 2 + 1024);
        let before = z.total_in();
        z.compress_vec(input, &mut out, FlushCompress::Full)
            .map_err(|e| ConnError::Deflate(e.to_string()))?;
        input = &input[(z.total_in() - before) as usize..];
        // Done when all input is taken and the flush fitted (room was left over).
        if input.is_empty() && out.len() < out.capacity() {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::duplex;

    /// A compressed link both ways: what one end deflates the other inflates, message by
    /// message, across reads of any size.
    #[tokio::test]
    async fn a_compressed_link_carries_messages_both_ways() {
        let (server_end, mut client_end) = duplex(1 << 20);
        let mut conn = Conn::new(Box::new(server_end), 1 << 20);
        conn.start_compression().await.expect("compress1 sent");
        let big = vec![b'x'; 200_000];
        conn.send(
            &Message::new()
                .with("data", &big)
                .with("func", "client-WriteFile"),
        );
        conn.flush().await.expect("flushed");

        // The client's side: compress1 arrives plain, the rest deflated.
        let mut header = [0u8; HEADER_LEN];
        client_end.read_exact(&mut header).await.expect("header");
        let len = frame::decode_header(header, 1 << 20).expect("len");
        let mut body = vec![0u8; len];
        client_end.read_exact(&mut body).await.expect("body");
        assert_eq!(
            Message::decode(&body).expect("msg").func().as_deref(),
            Some("compress1")
        );
        let mut z = Decompress::new(false);
        let mut plain = Vec::with_capacity(400_000);
        let mut wire = vec![0u8; 400_000];
        let n = client_end.read(&mut wire).await.expect("deflated");
        assert!(n < 10_000, "200 kB of x compress: {n}");
        z.decompress_vec(&wire[..n], &mut plain, FlushDecompress::None)
            .expect("inflates");
        let m = Message::decode(&plain[HEADER_LEN..]).expect("whole message");
        assert_eq!(m.get("data"), Some(&big[..]));

        // The client answers compress2 plain, then sends deflated messages.
        let plain_msg = |m: &Message| {
            let body = m.encode();
            let mut out = frame::encode_header(body.len() as u32).to_vec();
            out.extend_from_slice(&body);
            out
        };
        client_end
            .write_all(&plain_msg(&Message::new().with("func", "compress2")))
            .await
            .expect("compress2");
        let mut cz = Compress::new(Compression::default(), false);
        let mut both = plain_msg(&Message::new().with("a", "1").with("func", "user-info"));
        both.extend(plain_msg(&Message::new().with("func", "release2")));
        let deflated = deflate_all(&mut cz, &both).expect("deflate");
        // Sent in two pieces: a message may straddle reads.
        let (one, two) = deflated.split_at(deflated.len() / 2);
        client_end.write_all(one).await.expect("part one");
        let m = conn.read().await.expect("read").expect("compress2");
        assert!(conn.transport(&m).await.expect("transport"));
        client_end.write_all(two).await.expect("part two");
        let m = conn.read().await.expect("read").expect("message");
        assert_eq!(m.func().as_deref(), Some("user-info"));
        assert_eq!(m.text("a").as_deref(), Some("1"));
        let m = conn.read().await.expect("read").expect("message");
        assert_eq!(m.func().as_deref(), Some("release2"));
        drop(client_end);
        assert!(conn.read().await.expect("clean end").is_none());
    }
}
