//! One client connection from its first message to its last: the protocol exchange, then each
//! `user-*` command through the command table, each answered by `release`. A message over the
//! size limit, or bytes that are not this protocol, end the connection with an error naming
//! the problem.

use crate::cmd::{Cmd, CmdError, number};
use crate::conn::{Conn, ConnError, Stream};
use crate::dispatch;
use crate::server::{P4Server, PeerInfo};
use crate::version;
use crate::wire::frame::FrameError;
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report, Severity};
use keel_service::Caller;
use std::sync::Arc;

/// The server's side of the protocol exchange, sent before the first command's answer.
fn server_protocol(security: Option<u8>) -> Message {
    let mut m = Message::new();
    m.set("xfiles", "7");
    m.set("server", "3");
    m.set("server2", version::PROTOCOL_LEVEL.to_string());
    if let Some(level) = security {
        m.set("security", level.to_string());
    }
    // No client-side extensions: the client need not look for any.
    m.set("extensionsEnabled", "0");
    m.set("func", "protocol");
    m
}

/// Serves one connection until the client leaves or breaks the protocol.
pub async fn serve_connection(server: Arc<P4Server>, stream: Box<dyn Stream>, peer: PeerInfo) {
    let mut conn = Conn::new(stream, server.options.max_message_bytes);
    let mut protocol_sent = false;
    // `tag` in the client's protocol message (`p4 -G`, `-R`, `-Z tag`): every command of the
    // connection answers tagged.
    let mut tag_all = false;
    loop {
        let m = match conn.read().await {
            Ok(Some(m)) => m,
            Ok(None) => break,
            Err(e) => {
                refuse(&mut conn, &peer, e).await;
                return;
            }
        };
        match conn.transport(&m).await {
            Ok(true) => continue,
            Ok(false) => {}
            Err(e) => {
                tracing::info!(peer = ?peer.client, "P4 connection failed: {e}");
                return;
            }
        }
        let func = m.func().unwrap_or_default();
        match func.as_str() {
            // The client's protocol level and capabilities; the server's answer goes with the
            // first command's.
            "protocol" => {
                tag_all = m.has("tag");
                continue;
            }
            "release" | "release2" => break,
            f if f.starts_with("user-") => {
                if !protocol_sent {
                    let security = server.service.security_level().ok().map(|l| l.number());
                    conn.send(&server_protocol(security));
                    protocol_sent = true;
                }
                let name = f.trim_start_matches("user-").to_string();
                match command(conn, server.clone(), peer, m, name, tag_all).await {
                    Some(c) => conn = c,
                    None => return,
                }
            }
            other => {
                tracing::info!(peer = ?peer.client, func = other, "P4 client called an unknown function");
                let r = Report::failed(
                    Generic::Unknown,
                    number::UNKNOWN_COMMAND,
                    format!("The server has no function {other:?}."),
                );
                conn.send(&r.to_message());
                conn.send(&Message::new().with("func", "release"));
                if conn.flush().await.is_err() {
                    return;
                }
            }
        }
    }
    conn.close().await;
}

/// Runs one command and answers `release`; the connection back, or `None` when it broke.
async fn command(
    conn: Conn,
    server: Arc<P4Server>,
    peer: PeerInfo,
    req: Message,
    name: String,
    tag_all: bool,
) -> Option<Conn> {
    let text = |n: &str| req.text(n).unwrap_or_default();
    let caller = Caller {
        user: text("user"),
        workspace: text("client"),
        host: text("host"),
        address: peer.client.map(|a| a.ip()),
        force: false,
    };
    let args = req
        .args()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let tagged = tag_all || req.has("tag");
    let mut cmd = Cmd {
        conn,
        server,
        peer,
        name,
        args,
        caller,
        tagged,
        tagged_connection: tag_all,
        failed: false,
        proven: None,
        counters: None,
        req,
    };
    let outcome = match dispatch::find(&cmd.name) {
        Some(command) => dispatch::run(&mut cmd, command).await,
        None => Err(CmdError::Report(dispatch::unknown_command(&cmd.name))),
    };
    match outcome {
        Ok(()) => {}
        Err(CmdError::Report(r)) => {
            tracing::info!(user = %cmd.caller.user, command = %cmd.name, error = %r.rendered(), "P4 command refused");
            cmd.report(r);
        }
        Err(CmdError::Conn(e)) => {
            tracing::info!(user = %cmd.caller.user, command = %cmd.name, "P4 connection failed during the command: {e}");
            return None;
        }
    }
    cmd.conn.send(&Message::new().with("func", "release"));
    match cmd.conn.flush().await {
        Ok(()) => Some(cmd.conn),
        Err(_) => None,
    }
}

/// Ends a connection that sent something unreadable: tells the client why (when it can read
/// it) and closes.
async fn refuse(conn: &mut Conn, peer: &PeerInfo, e: ConnError) {
    match &e {
        ConnError::Frame(FrameError::TooBig { len, max }) => {
            tracing::warn!(peer = ?peer.client, len, max, "P4 message over the size limit; connection closed");
            let r = Report::new(Severity::Failed, Generic::TooBig, number::TOO_BIG)
                .text("Request too large (over ")
                .arg("max", max.to_string())
                .text(" bytes); the server closed the connection.");
            conn.send(&r.to_message());
            conn.send(&Message::new().with("func", "release"));
            // Read what the client is still sending (bounded), so the answer is not lost to
            // a reset of a connection with unread bytes.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), async {
                let _ = conn.flush().await;
                conn.drain(*len).await
            })
            .await;
        }
        ConnError::Io(_) | ConnError::Closed => {
            tracing::debug!(peer = ?peer.client, "P4 connection ended: {e}");
        }
        _ => tracing::info!(peer = ?peer.client, "P4 connection refused: {e}"),
    }
    conn.close().await;
}
