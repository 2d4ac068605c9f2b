//! Files written to the client: `client-OpenFile`, `client-WriteFile` in chunks and
//! `client-CloseFile`, then `client-Ack`, which the client answers by calling the server's
//! confirm function when the file is safely in place and the decline function when it could
//! not write it (a writable file it may not clobber, a digest that did not match, a full
//! disk). Only confirmed files count as written: the caller records the have list from
//! [`ToClient::confirmed`] alone.
//!
//! The content comes from the service on a blocking thread ([`Piece`]s through a bounded
//! channel, so a slow client holds the reader back) with its MD5 on `client-OpenFile` (the
//! client checks it as it writes): the MD5 recorded at submit when the file goes out as
//! stored, else one computed over the content read whole (up to [`DIGEST_LIMIT`]). At most
//! [`WINDOW`] files are sent before the server reads the client's answers, so neither side's
//! socket buffers fill with unread messages.

use crate::cmd::{Cmd, CmdError, number};
use crate::conn::ConnError;
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report};
use keel_core::keyword::{self, KeywordValues};
use keel_core::{BaseType, FileType, Keywords};
use keel_service::{Content, ServiceError};
use md5::{Digest as _, Md5};
use std::io::Read;
use tokio::sync::mpsc;

/// Bytes in one `client-WriteFile` (and one `client-OutputText`).
pub const CHUNK: usize = 64 * 1024;
/// A file without a recorded MD5 (or with keywords to expand) up to this size is read whole
/// and hashed before it is sent, so an MD5 travels with it and the client verifies what it
/// wrote; a larger one streams without. A file with a recorded MD5 always streams with it.
pub const DIGEST_LIMIT: u64 = 64 << 20;
/// Files sent before the server waits for the client's answers.
pub const WINDOW: usize = 32;
/// Bytes queued before they are written to the socket.
const FLUSH_AT: usize = 256 * 1024;

/// The functions the client calls back after `client-Ack`.
pub const CONFIRM: &str = "dm-KeelWritten";
pub const DECLINE: &str = "dm-KeelNotWritten";

/// The client-side type code of a file type (`LookupType` in the client): one digit of the
/// client's file layer, `0` text, `1` binary, `+2` executable, `4` symlink, `O` UTF-16 (`Q`
/// executable). The server is not a unicode server: text and UTF-8 files travel as the bytes
/// they are. UTF-16 files are stored as UTF-8 (as Keel's own client sends them), so the
/// client's UTF-16 layer translates: UTF-8 on the wire, UTF-16 with a byte-order mark in the
/// workspace, both ways.
pub fn client_type(t: &FileType) -> &'static str {
    match (t.base, t.executable) {
        (BaseType::Symlink, _) => "4",
        (BaseType::Text | BaseType::Utf8, false) => "0",
        (BaseType::Text | BaseType::Utf8, true) => "2",
        (BaseType::Binary, false) => "1",
        (BaseType::Binary, true) => "3",
        (BaseType::Utf16, false) => "O",
        (BaseType::Utf16, true) => "Q",
    }
}

/// Whether a type's content is shown as text (`client-OutputText`) by `print`.
pub fn is_text(t: &FileType) -> bool {
    t.base.is_line_text()
}

/// One stage of a file on its way from the store to the client.
#[derive(Debug)]
pub enum Piece<H> {
    /// A file begins: what it is, and its length and MD5 (uppercase hex) when known.
    Head {
        head: H,
        size: u64,
        md5: Option<String>,
    },
    /// The next bytes of the current file.
    Data(Vec<u8>),
    /// The current file is complete (or a head without content, such as a delete, is done).
    End,
    /// A whole file at once (a head, its content and its end): what a small file travels as,
    /// one hand-over instead of three.
    File {
        head: H,
        md5: Option<String>,
        data: Vec<u8>,
    },
}

/// One stage of a file as a consumer handles it (see [`Piece::steps`]).
#[derive(Debug)]
pub enum Step<H> {
    /// A file begins, with its length and MD5 (uppercase hex) when known.
    Head {
        head: H,
        size: u64,
        md5: Option<String>,
    },
    /// The next bytes of the current file.
    Data(Vec<u8>),
    /// The current file is complete.
    End,
}

impl<H> Piece<H> {
    /// The piece as the stages a consumer handles: a whole file as its head, its content (when
    /// it has any) and its end; any other piece as itself.
    pub fn steps(self) -> impl Iterator<Item = Step<H>> {
        let (first, data, end) = match self {
            Piece::Head { head, size, md5 } => (Step::Head { head, size, md5 }, None, None),
            Piece::Data(data) => (Step::Data(data), None, None),
            Piece::End => (Step::End, None, None),
            Piece::File { head, md5, data } => (
                Step::Head {
                    head,
                    size: data.len() as u64,
                    md5,
                },
                (!data.is_empty()).then_some(Step::Data(data)),
                Some(Step::End),
            ),
        };
        std::iter::once(first).chain(data).chain(end)
    }
}

/// Content up to this size is read whole (one decompression call, one hand-over per file).
pub const SMALL: u64 = 1 << 20;

/// Sends `head` and then `content` (named `what` in errors) as pieces, its keywords expanded
/// when `keywords` says so; runs on the blocking thread the service's callback runs on.
/// `stored_md5` is the MD5 recorded for the stored content (hex, empty when not known): with
/// it, content that goes out as stored streams straight through with that MD5; without it
/// (or with keywords to expand), content up to [`DIGEST_LIMIT`] is read whole and hashed.
/// Fails with `Cancelled` when the connection's side stopped reading.
pub fn send_content<H>(
    tx: &mpsc::Sender<Piece<H>>,
    head: H,
    what: &str,
    content: Content,
    stored_md5: &str,
    keywords: Option<(Keywords, KeywordValues<'_>)>,
) -> Result<(), ServiceError> {
    let send = |p: Piece<H>| tx.blocking_send(p).map_err(|_| ServiceError::Cancelled);
    let known = (keywords.is_none() && is_md5(stored_md5)).then(|| stored_md5.to_ascii_uppercase());
    if content.size <= SMALL {
        let mut data = content
            .blob
            .read_content(content.size)
            .map_err(|e| read_failed(what, e.to_string()))?;
        if let Some((which, values)) = keywords {
            data = keyword::expand(&data, which, &values).into_owned();
        }
        let md5 = known.unwrap_or_else(|| hex::encode_upper(Md5::digest(&data)));
        return send(Piece::File {
            head,
            md5: Some(md5),
            data,
        });
    }
    let mut reader = content
        .blob
        .into_content_reader()
        .map_err(|e| read_failed(what, e.to_string()))?;
    let whole = known.is_none() && (content.size <= DIGEST_LIMIT || keywords.is_some());
    if whole {
        let mut data = Vec::with_capacity(content.size.min(DIGEST_LIMIT) as usize);
        reader
            .read_to_end(&mut data)
            .map_err(|e| read_failed(what, e.to_string()))?;
        if let Some((which, values)) = keywords {
            data = keyword::expand(&data, which, &values).into_owned();
        }
        let md5 = hex::encode_upper(Md5::digest(&data));
        send(Piece::Head {
            head,
            size: data.len() as u64,
            md5: Some(md5),
        })?;
        if data.len() <= CHUNK {
            if !data.is_empty() {
                send(Piece::Data(data))?;
            }
        } else {
            for chunk in data.chunks(CHUNK) {
                send(Piece::Data(chunk.to_vec()))?;
            }
        }
    } else {
        send(Piece::Head {
            head,
            size: content.size,
            md5: known,
        })?;
        loop {
            let mut buf = vec![0u8; CHUNK.min(content.size.max(1) as usize)];
            let n =
                read_full(&mut reader, &mut buf).map_err(|e| read_failed(what, e.to_string()))?;
            if n == 0 {
                break;
            }
            buf.truncate(n);
            send(Piece::Data(buf))?;
        }
    }
    send(Piece::End)
}

/// Whether `s` is an MD5 in hex.
fn is_md5(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Reads until `buf` is full or the content ends; the bytes read.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn read_failed(what: &str, reason: String) -> ServiceError {
    ServiceError::ContentUnreadable {
        file: what.to_string(),
        reason,
    }
}

/// How a file is written to the client.
#[derive(Debug, Clone, Default)]
pub struct Outgoing {
    /// The local path (the client's own syntax).
    pub local: String,
    /// The client-side type code ([`client_type`]).
    pub type_code: &'static str,
    /// Left writable (`allwrite`, `+w`, a file opened, a file printed with `-o`).
    pub writable: bool,
    /// The modification time to set (seconds since the epoch), for `modtime` and `+m`.
    pub time: Option<i64>,
    /// The client refuses to replace a writable file (the workspace's `noclobber`).
    pub noclobber: bool,
    /// Length of the content and its MD5 (uppercase hex), when known.
    pub size: u64,
    pub md5: Option<String>,
}

/// Variables the client echoes back with its answer, naming the file.
pub type Echo = Vec<(String, String)>;

/// Files being written to the client and the client's answers so far.
#[derive(Default)]
pub struct ToClient {
    /// Files sent whose answer has not been read.
    outstanding: usize,
    /// Whether a file is open on the client.
    open: bool,
    /// The echoes of files the client wrote (or deleted).
    pub confirmed: Vec<Echo>,
    /// The echoes of files it could not.
    pub declined: Vec<Echo>,
}

const HANDLE: &str = "keel";

impl ToClient {
    pub fn new() -> ToClient {
        ToClient::default()
    }

    /// Opens `f` on the client.
    pub fn open(&mut self, cmd: &mut Cmd, f: &Outgoing) {
        let size = f.size.to_string();
        let time = f.time.map(|t| t.max(0).to_string());
        let mut m = cmd.conn.encoder();
        m.var("path", &f.local)
            .var("handle", HANDLE)
            .var("type", f.type_code);
        if f.writable {
            m.var("perms", "rw");
        }
        if let Some(t) = &time {
            m.var("time", t);
        }
        if f.noclobber {
            m.var("noclobber", "1");
        }
        m.var("fileSize", &size).var("serverSize", &size);
        if let Some(d) = &f.md5
            && f.type_code != "4"
        {
            m.var("digest", d);
        }
        m.var("func", "client-OpenFile");
        m.finish();
        self.open = true;
    }

    /// Sends the next bytes of the open file.
    pub async fn write(&mut self, cmd: &mut Cmd, data: &[u8]) -> Result<(), CmdError> {
        for chunk in data.chunks(CHUNK) {
            let mut m = cmd.conn.encoder();
            m.var("handle", HANDLE)
                .var("data", chunk)
                .var("func", "client-WriteFile");
            m.finish();
            if cmd.conn.queued() >= FLUSH_AT {
                cmd.conn.flush().await?;
            }
        }
        Ok(())
    }

    /// Closes the open file (the client moves it into place) and asks whether it was written;
    /// the answer carries `echo` back.
    pub async fn close(&mut self, cmd: &mut Cmd, echo: &Echo) -> Result<(), CmdError> {
        let mut m = cmd.conn.encoder();
        m.var("handle", HANDLE)
            .var("commit", "")
            .var("func", "client-CloseFile");
        m.finish();
        self.open = false;
        let mut ack = cmd.conn.encoder();
        ack.var("handle", HANDLE);
        for (k, v) in echo {
            ack.var(k, v);
        }
        ack.var("confirm", CONFIRM)
            .var("decline", DECLINE)
            .var("func", "client-Ack");
        ack.finish();
        self.sent(cmd).await
    }

    /// Deletes a workspace file (refused by the client for a writable file under
    /// `noclobber`), the empty directories above it too with `rmdir`.
    pub async fn delete(
        &mut self,
        cmd: &mut Cmd,
        local: &str,
        noclobber: bool,
        rmdir: bool,
        echo: &Echo,
    ) -> Result<(), CmdError> {
        let mut m = Message::new();
        m.set("path", local);
        m.set("handle", HANDLE);
        if noclobber {
            m.set("noclobber", "1");
        }
        if rmdir {
            m.set("rmdir", "1");
        }
        for (k, v) in echo {
            m.set(k, v);
        }
        m.set("confirm", CONFIRM);
        m.set("decline", DECLINE);
        m.set("func", "client-DeleteFile");
        cmd.conn.send(&m);
        self.sent(cmd).await
    }

    /// Sets a workspace file's permissions (`rw` or `ro`; the type code keeps its exec bit).
    pub async fn chmod(
        &mut self,
        cmd: &mut Cmd,
        local: &str,
        type_code: &str,
        writable: bool,
        echo: &Echo,
    ) -> Result<(), CmdError> {
        let mut m = Message::new();
        m.set("path", local);
        m.set("type", type_code);
        m.set("perms", if writable { "rw" } else { "ro" });
        for (k, v) in echo {
            m.set(k, v);
        }
        m.set("confirm", CONFIRM);
        m.set("func", "client-ChmodFile");
        cmd.conn.send(&m);
        self.sent(cmd).await
    }

    async fn sent(&mut self, cmd: &mut Cmd) -> Result<(), CmdError> {
        self.outstanding += 1;
        if self.outstanding >= WINDOW {
            self.settle(cmd, WINDOW / 2).await?;
        }
        Ok(())
    }

    /// Reads the client's answers until at most `keep` are unread.
    async fn settle(&mut self, cmd: &mut Cmd, keep: usize) -> Result<(), CmdError> {
        if self.outstanding > keep {
            cmd.conn.flush().await?;
        }
        while self.outstanding > keep {
            let wait = cmd.server.options.reply_timeout;
            let reply = tokio::time::timeout(wait, cmd.conn.read_command())
                .await
                .map_err(|_| ConnError::NoReply {
                    expected: CONFIRM.to_string(),
                    waited_ms: wait.as_millis() as u64,
                })??;
            let echo: Echo = reply
                .vars()
                .iter()
                .filter(|(k, _)| k.starts_with(b"keel"))
                .map(|(k, v)| {
                    (
                        String::from_utf8_lossy(k).into_owned(),
                        String::from_utf8_lossy(v).into_owned(),
                    )
                })
                .collect();
            match reply.func().as_deref() {
                Some(CONFIRM) => self.confirmed.push(echo),
                Some(DECLINE) => self.declined.push(echo),
                f => {
                    return Err(CmdError::Conn(ConnError::Unexpected {
                        func: f.unwrap_or_default().to_string(),
                        expected: CONFIRM.to_string(),
                    }));
                }
            }
            self.outstanding -= 1;
        }
        Ok(())
    }

    /// Reads every answer still due (call once everything is sent).
    pub async fn finish(&mut self, cmd: &mut Cmd) -> Result<(), CmdError> {
        if self.open {
            // A transfer cut short: the client drops the partial file.
            let m = Message::new()
                .with("handle", HANDLE)
                .with("func", "client-CloseFile");
            cmd.conn.send(&m);
            self.open = false;
        }
        self.settle(cmd, 0).await
    }
}

/// The value of `name` in an echo.
pub fn echoed<'a>(echo: &'a Echo, name: &str) -> Option<&'a str> {
    echo.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// A failure to produce a file's content as the client shows it.
pub fn transfer_failed(text: impl AsRef<str>) -> CmdError {
    CmdError::Report(Report::failed(Generic::Fault, number::INTERNAL, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_codes_are_the_clients() {
        let t = |s: &str| FileType::parse(s).expect("a type");
        assert_eq!(client_type(&t("text")), "0");
        assert_eq!(client_type(&t("binary")), "1");
        assert_eq!(client_type(&t("text+x")), "2");
        assert_eq!(client_type(&t("binary+x")), "3");
        assert_eq!(client_type(&t("symlink")), "4");
        assert_eq!(client_type(&t("utf8")), "0");
        assert_eq!(client_type(&t("utf16")), "O");
        assert_eq!(client_type(&t("utf16+x")), "Q");
        assert_eq!(client_type(&t("text+kw")), "0");
    }
}

/// One stored file to write to the client (see [`write_files`]).
#[derive(Debug, Clone)]
pub struct Job {
    /// How it is written; `size` and `md5` are filled in from the content.
    pub file: Outgoing,
    /// The stored content and the revision it is the content of (for the access check).
    pub digest: keel_core::Digest,
    pub size: u64,
    pub of: Option<keel_service::ContentOf>,
    /// Variables the client's answer carries back.
    pub echo: Echo,
    /// The keywords to expand (`+k` files), with what they expand to.
    pub keywords: Option<Keyworded>,
}

/// What a `+k` file's keywords expand to (owned, to travel to the reading thread).
#[derive(Debug, Clone)]
pub struct Keyworded {
    pub which: Keywords,
    pub depot_file: String,
    pub rev: u32,
    pub change: u64,
    pub time: i64,
    pub author: String,
}

/// Writes each job's stored content to the client through `out` (answers are read as they
/// come; call [`ToClient::finish`] afterwards).
pub async fn write_files(
    cmd: &mut Cmd,
    out: &mut ToClient,
    jobs: Vec<Job>,
) -> Result<(), CmdError> {
    if jobs.is_empty() {
        return Ok(());
    }
    let (tx, mut rx) = mpsc::channel::<Piece<usize>>(16);
    let service = cmd.service().clone();
    let caller = cmd.caller.clone();
    type Wanted = (
        keel_core::Digest,
        u64,
        Option<keel_service::ContentOf>,
        Option<Keyworded>,
    );
    let wanted: Vec<Wanted> = jobs
        .iter()
        .map(|j| (j.digest, j.size, j.of.clone(), j.keywords.clone()))
        .collect();
    let producer = tokio::task::spawn_blocking(move || -> Result<(), ServiceError> {
        for (i, (digest, size, of, k)) in wanted.into_iter().enumerate() {
            let what = match &of {
                Some(o) => format!("{}#{}", o.depot_file, o.rev),
                None => digest.to_hex(),
            };
            let blob = service.content(&caller, &digest.to_hex(), of.as_ref())?;
            let content = Content {
                compressed: false,
                size,
                digest,
                blob,
            };
            let keywords = k.as_ref().map(|k| {
                (
                    k.which,
                    KeywordValues {
                        depot_file: &k.depot_file,
                        rev: k.rev,
                        change: k.change,
                        time: k.time,
                        author: &k.author,
                    },
                )
            });
            send_content(&tx, i, &what, content, "", keywords)?;
        }
        Ok(())
    });
    let mut current: Option<usize> = None;
    let mut failure = None;
    'recv: while let Some(pieces) = rx.recv().await {
        for piece in pieces.steps() {
            let step = async {
                match piece {
                    Step::Head { head, size, md5 } => {
                        let mut f = jobs[head].file.clone();
                        f.size = size;
                        f.md5 = md5;
                        out.open(cmd, &f);
                        current = Some(head);
                    }
                    Step::Data(data) => out.write(cmd, &data).await?,
                    Step::End => {
                        if let Some(i) = current.take() {
                            out.close(cmd, &jobs[i].echo).await?;
                        }
                    }
                }
                Ok::<(), CmdError>(())
            };
            if let Err(e) = step.await {
                failure = Some(e);
                break 'recv;
            }
        }
    }
    drop(rx);
    let produced = producer
        .await
        .map_err(|e| transfer_failed(format!("writing files failed inside the server: {e}")))?;
    if let Some(e) = failure {
        return Err(e);
    }
    produced.map_err(CmdError::from)
}
