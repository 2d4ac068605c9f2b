//! One client connection's byte stream: reads whole messages (header checked, size capped)
//! and writes queued ones, answering the transport's own functions (`flush1`) on the way.

use crate::wire::frame::{self, FrameError, HEADER_LEN};
use crate::wire::message::{Message, MessageError};
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
}

/// A connection: its stream and the bytes queued to be written.
pub struct Conn {
    stream: Box<dyn Stream>,
    out: Vec<u8>,
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

    /// Bytes queued and not yet written.
    pub fn queued(&self) -> usize {
        self.out.len()
    }

    /// Writes everything queued.
    pub async fn flush(&mut self) -> Result<(), ConnError> {
        if !self.out.is_empty() {
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
