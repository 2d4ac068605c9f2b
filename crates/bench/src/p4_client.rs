//! The bench's own client of the P4 RPC protocol, so `keel bench` can measure the P4 front
//! end beside the native one in one run: framing, a command sent as `user-NAME` with its
//! arguments and environment, and the server's callbacks a P4 client answers (records,
//! messages, flow control, file content written under the workspace root, confirmations
//! called back with the variables they came with). It speaks only what the benchmarks use.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use crate::error::{BenchError, Result};

/// Largest message the bench accepts from the server.
const MAX_BODY: usize = 64 << 20;

/// One message: its variables in order (empty names are positional arguments).
#[derive(Debug, Default, Clone)]
pub struct Message {
    pub vars: Vec<(String, Vec<u8>)>,
}

impl Message {
    fn with(mut self, name: &str, value: impl AsRef<[u8]>) -> Message {
        self.vars.push((name.to_string(), value.as_ref().to_vec()));
        self
    }

    /// The first variable named `name`.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.vars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// The variable as text.
    pub fn text(&self, name: &str) -> Option<String> {
        self.get(name)
            .map(|v| String::from_utf8_lossy(v).into_owned())
    }

    fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        for (name, value) in &self.vars {
            body.extend_from_slice(name.as_bytes());
            body.push(0);
            body.extend_from_slice(&(value.len() as u32).to_le_bytes());
            body.extend_from_slice(value);
            body.push(0);
        }
        let len = (body.len() as u32).to_le_bytes();
        let mut out = vec![len[0] ^ len[1] ^ len[2] ^ len[3]];
        out.extend_from_slice(&len);
        out.extend_from_slice(&body);
        out
    }

    fn decode(body: &[u8]) -> Option<Message> {
        let mut m = Message::default();
        let mut at = 0;
        while at < body.len() {
            let nul = body[at..].iter().position(|&b| b == 0)?;
            let name = String::from_utf8_lossy(&body[at..at + nul]).into_owned();
            at += nul + 1;
            let len = u32::from_le_bytes(body.get(at..at + 4)?.try_into().ok()?) as usize;
            at += 4;
            let value = body.get(at..at + len)?.to_vec();
            at += len + 1;
            m.vars.push((name, value));
        }
        Some(m)
    }
}

/// What one command returned.
#[derive(Debug, Default)]
pub struct Reply {
    /// Tagged records (`client-FstatInfo`), each as its fields.
    pub records: Vec<HashMap<String, String>>,
    /// Message lines below error severity.
    pub lines: Vec<String>,
    /// Files the server wrote into the workspace.
    pub files_written: u64,
    pub bytes_written: u64,
}

/// A file the server is writing into the workspace.
struct Open {
    path: PathBuf,
    data: Vec<u8>,
    /// The MD5 the server sent (uppercase hex), checked against what was written, as P4
    /// clients do.
    digest: Option<String>,
    /// The file's mode: read-only unless the server sent `perms` `rw`, executable for the
    /// executable type codes.
    mode: u32,
}

/// One connection to a P4 listener, as a user with a workspace.
pub struct P4Conn {
    read: BufReader<OwnedReadHalf>,
    write: BufWriter<OwnedWriteHalf>,
    user: String,
    client: String,
    cwd: String,
    sent_protocol: bool,
}

impl P4Conn {
    /// Connects to `addr` as `user` working in workspace `client` (from `cwd`).
    pub async fn connect(addr: &str, user: &str, client: &str, cwd: &Path) -> Result<P4Conn> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|e| BenchError::io(format!("connecting to the P4 listener {addr}"), e))?;
        let _ = stream.set_nodelay(true);
        let (r, w) = stream.into_split();
        Ok(P4Conn {
            read: BufReader::with_capacity(256 << 10, r),
            write: BufWriter::with_capacity(64 << 10, w),
            user: user.to_string(),
            client: client.to_string(),
            cwd: cwd.display().to_string(),
            sent_protocol: false,
        })
    }

    async fn send(&mut self, m: &Message) -> Result<()> {
        self.write
            .write_all(&m.encode())
            .await
            .map_err(|e| BenchError::io("sending to the P4 listener", e))
    }

    async fn flush(&mut self) -> Result<()> {
        self.write
            .flush()
            .await
            .map_err(|e| BenchError::io("sending to the P4 listener", e))
    }

    async fn receive(&mut self) -> Result<Message> {
        // Answers queued since the last read go out before waiting for more (not one write
        // per answer).
        if self.read.buffer().is_empty() {
            self.flush().await?;
        }
        let mut header = [0u8; 5];
        self.read
            .read_exact(&mut header)
            .await
            .map_err(|e| BenchError::io("reading from the P4 listener", e))?;
        let len = u32::from_le_bytes([header[1], header[2], header[3], header[4]]) as usize;
        if header[0] != header[1] ^ header[2] ^ header[3] ^ header[4] || len > MAX_BODY {
            return Err(BenchError::Check(format!(
                "the P4 listener sent a bad message header {header:?}"
            )));
        }
        let mut body = vec![0u8; len];
        self.read
            .read_exact(&mut body)
            .await
            .map_err(|e| BenchError::io("reading from the P4 listener", e))?;
        Message::decode(&body)
            .ok_or_else(|| BenchError::Check("the P4 listener sent a malformed message".into()))
    }

    /// Runs `p4 [-ztag] NAME ARGS...` and answers the server's callbacks until it releases
    /// the command. A message of error severity fails the command with its text.
    pub async fn run(&mut self, name: &str, args: &[&str], tagged: bool) -> Result<Reply> {
        if !self.sent_protocol {
            let protocol = Message::default()
                .with("client", "100")
                .with("host", "keel-bench")
                .with("func", "protocol");
            self.send(&protocol).await?;
            self.sent_protocol = true;
        }
        let mut m = Message::default();
        for a in args {
            m = m.with("", a);
        }
        if tagged {
            m = m.with("tag", "");
        }
        let m = m
            .with("prog", "keel-bench")
            .with("client", &self.client)
            .with("cwd", &self.cwd)
            .with("host", "keel-bench")
            .with("os", "UNIX")
            .with("user", &self.user)
            .with("func", format!("user-{name}"));
        self.send(&m).await?;
        self.flush().await?;
        let mut reply = Reply::default();
        let mut open: HashMap<String, Open> = HashMap::new();
        let mut made_dirs: std::collections::HashSet<PathBuf> = Default::default();
        let mut error: Option<String> = None;
        loop {
            let m = self.receive().await?;
            let func = m.text("func").unwrap_or_default();
            match func.as_str() {
                "release" | "release2" => break,
                "protocol" => {}
                "flush1" => {
                    let mut answer = Message::default();
                    for (n, v) in &m.vars {
                        if n != "func" {
                            answer = answer.with(n, v);
                        }
                    }
                    self.send(&answer.with("func", "flush2")).await?;
                }
                "client-FstatInfo" => reply.records.push(
                    m.vars
                        .iter()
                        .filter(|(n, _)| n != "func")
                        .map(|(n, v)| (n.clone(), String::from_utf8_lossy(v).into_owned()))
                        .collect(),
                ),
                "client-Message" => {
                    let code: u32 = m
                        .text("code0")
                        .and_then(|c| c.parse().ok())
                        .unwrap_or_default();
                    let text = render(&m);
                    if code >> 28 >= 3 {
                        error.get_or_insert(text);
                    } else {
                        reply.lines.push(text);
                    }
                }
                "client-OutputText" | "client-OutputBinary" | "client-OutputInfo" => {
                    reply.lines.push(m.text("data").unwrap_or_default());
                }
                "client-OpenFile" => {
                    let handle = m.text("handle").unwrap_or_default();
                    let path = PathBuf::from(m.text("path").unwrap_or_default());
                    let writable = m.get("perms") == Some(b"rw");
                    let exec = matches!(m.get("type"), Some(b"2" | b"3" | b"Q"));
                    let mode = match (writable, exec) {
                        (false, false) => 0o444,
                        (true, false) => 0o644,
                        (false, true) => 0o555,
                        (true, true) => 0o755,
                    };
                    let size: usize = m
                        .text("fileSize")
                        .and_then(|s| s.parse().ok())
                        .unwrap_or_default();
                    open.insert(
                        handle,
                        Open {
                            path,
                            data: Vec::with_capacity(size.min(MAX_BODY)),
                            digest: m.text("digest").filter(|d| !d.is_empty()),
                            mode,
                        },
                    );
                    self.confirm(&m).await?;
                }
                "client-WriteFile" => {
                    let handle = m.text("handle").unwrap_or_default();
                    if let (Some(f), Some(data)) = (open.get_mut(&handle), m.get("data")) {
                        f.data.extend_from_slice(data);
                    }
                }
                "client-CloseFile" => {
                    let handle = m.text("handle").unwrap_or_default();
                    if let Some(f) = open.remove(&handle) {
                        write_file(&f, &mut made_dirs)?;
                        reply.files_written += 1;
                        reply.bytes_written += f.data.len() as u64;
                    }
                    self.confirm(&m).await?;
                }
                "client-DeleteFile" => {
                    if let Some(p) = m.text("path") {
                        let _ = std::fs::remove_file(p);
                    }
                    self.confirm(&m).await?;
                }
                _ => self.confirm(&m).await?,
            }
        }
        match error {
            Some(text) => Err(BenchError::Check(format!("p4 {name}: {text}"))),
            None => Ok(reply),
        }
    }

    /// Calls back the function a callback names in `confirm`, echoing its variables (as P4
    /// clients do); nothing when it names none.
    async fn confirm(&mut self, m: &Message) -> Result<()> {
        let Some(confirm) = m.text("confirm").filter(|c| !c.is_empty()) else {
            return Ok(());
        };
        let mut answer = Message::default();
        for (n, v) in &m.vars {
            if n != "func" && n != "data" {
                answer = answer.with(n, v);
            }
        }
        self.send(&answer.with("func", confirm)).await
    }
}

/// A message line with its `%name%` parameters filled in.
fn render(m: &Message) -> String {
    let fmt = m.text("fmt0").unwrap_or_default();
    let mut out = String::new();
    let mut rest = fmt.as_str();
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        match after.find('%') {
            Some(end) => {
                let name = after[..end].trim_start_matches('\'').trim_end_matches('\'');
                out.push_str(&m.text(name).unwrap_or_default());
                rest = &after[end + 1..];
            }
            None => {
                out.push('%');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Writes a file the server closed, with its mode, once its content matches the digest sent.
fn write_file(f: &Open, made_dirs: &mut std::collections::HashSet<PathBuf>) -> Result<()> {
    use md5::Digest as _;
    if let Some(digest) = &f.digest {
        let got = hex::encode_upper(md5::Md5::digest(&f.data));
        if !got.eq_ignore_ascii_case(digest) {
            return Err(BenchError::Check(format!(
                "{}: the content's MD5 {got} is not the {digest} the P4 listener sent",
                f.path.display()
            )));
        }
    }
    if let Some(dir) = f.path.parent()
        && !made_dirs.contains(dir)
    {
        std::fs::create_dir_all(dir)
            .map_err(|e| BenchError::io(format!("mkdir {}", dir.display()), e))?;
        made_dirs.insert(dir.to_path_buf());
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, f.mode);
    #[cfg(not(unix))]
    let _ = f.mode;
    let mut file = options
        .open(&f.path)
        .map_err(|e| BenchError::io(format!("writing {}", f.path.display()), e))?;
    std::io::Write::write_all(&mut file, &f.data)
        .map_err(|e| BenchError::io(format!("writing {}", f.path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_lines_are_rendered() {
        let m = Message::default()
            .with("", "arg")
            .with("fmt0", "%depotFile% - no such file(s).")
            .with("depotFile", "//depot/x")
            .with("func", "client-Message");
        let bytes = m.encode();
        assert_eq!(bytes[0], bytes[1] ^ bytes[2] ^ bytes[3] ^ bytes[4]);
        let back = Message::decode(&bytes[5..]).expect("decodes");
        assert_eq!(back.vars, m.vars);
        assert_eq!(render(&back), "//depot/x - no such file(s).");
        assert!(Message::decode(b"name\0\x05\0\0\0ab").is_none());
    }
}
