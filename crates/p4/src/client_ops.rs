//! The client's file callbacks the open and submit commands use on the client's workspace:
//! asking it the type of files to add (`client-CheckFile`), making files writable or read-only
//! (`client-ChmodFile`), removing them (`client-DeleteFile`) and renaming them
//! (`client-MoveFile`), with the type codes its file layer reads.
//!
//! A callback the client fails prints its own error and calls nothing back, so every batch of
//! callbacks ends with a fence (`client-Ack`, which the client always confirms): the replies
//! before the fence are those of the callbacks that worked, and the server never waits for a
//! reply that will not come.

use crate::cmd::{Cmd, CmdError};
use crate::conn::ConnError;
use crate::transfer::to_client::client_type;
use crate::wire::message::Message;
use keel_core::FileType;

/// The function the fence's acknowledgement calls.
pub const FENCE: &str = "dm-KeelFence";

/// Callbacks sent before a fence: small enough that the client's replies never fill the
/// socket while the server is still writing.
pub const BATCH: usize = 64;

/// The permissions a file of `t` gets: writable when `writable` (opened, `allwrite`, `+w`),
/// else read-only.
pub fn perms(t: FileType, writable: bool) -> &'static str {
    if writable || t.writable { "rw" } else { "ro" }
}

/// What the client said of a file it was asked to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The type it detected (`text`, `binary`, `xtext`, `symlink`, ...), as it names it.
    pub type_name: String,
    /// The variable `key` sent with the check (which file it was).
    pub key: String,
}

/// Asks the client the type of each local file (`(key, local path)`); the answers of the
/// files it could check, by key. A file it cannot add (a directory, a special file) is
/// refused by the client itself, with its own message, and has no answer.
pub async fn check_files(
    cmd: &mut Cmd,
    files: &[(String, String)],
) -> Result<Vec<Checked>, CmdError> {
    const CONFIRM: &str = "dm-KeelChecked";
    let mut out = Vec::new();
    for batch in files.chunks(BATCH) {
        let msgs = batch
            .iter()
            .map(|(key, local)| {
                Message::new()
                    .with("path", local)
                    .with("keelKey", key)
                    .with("confirm", CONFIRM)
                    .with("func", "client-CheckFile")
            })
            .collect::<Vec<_>>();
        for reply in exchange(cmd, &msgs).await? {
            if reply.func().as_deref() == Some(CONFIRM) {
                out.push(Checked {
                    type_name: reply.text("type").unwrap_or_else(|| "text".to_string()),
                    key: reply.text("keelKey").unwrap_or_default(),
                });
            }
        }
    }
    Ok(out)
}

/// Sets the permissions of the local file `local` of type `t` (no reply).
pub fn chmod(cmd: &mut Cmd, local: &str, t: FileType, perms: &str) {
    cmd.conn.send(
        &Message::new()
            .with("path", local)
            .with("type", client_type(&t))
            .with("perms", perms)
            .with("func", "client-ChmodFile"),
    );
}

/// Removes the local file `local` (no reply; a file already gone is no error).
pub fn delete(cmd: &mut Cmd, local: &str, t: FileType) {
    cmd.conn.send(
        &Message::new()
            .with("path", local)
            .with("type", client_type(&t))
            .with("rmdir", "")
            .with("func", "client-DeleteFile"),
    );
}

/// Renames the local file `from` to `to`; whether the client did (it refuses when `to`
/// exists or `from` is missing, printing why).
pub async fn rename(cmd: &mut Cmd, from: &str, to: &str, t: FileType) -> Result<bool, CmdError> {
    const CONFIRM: &str = "dm-KeelMoved";
    let m = Message::new()
        .with("path", from)
        .with("path2", to)
        .with("type", client_type(&t))
        .with("confirm", CONFIRM)
        .with("func", "client-MoveFile");
    let replies = exchange(cmd, &[m]).await?;
    Ok(replies.iter().any(|r| r.func().as_deref() == Some(CONFIRM)))
}

/// Sends `msgs` and a fence, and returns every call the client made before the fence's.
pub async fn exchange(cmd: &mut Cmd, msgs: &[Message]) -> Result<Vec<Message>, CmdError> {
    for m in msgs {
        cmd.conn.send(m);
    }
    send_fence(cmd);
    let mut out = Vec::new();
    loop {
        let reply = next_reply(cmd, FENCE).await?;
        if reply.func().as_deref() == Some(FENCE) {
            return Ok(out);
        }
        out.push(reply);
    }
}

/// Queues the fence: an acknowledgement request the client answers by calling [`FENCE`].
pub fn send_fence(cmd: &mut Cmd) {
    cmd.conn.send(
        &Message::new()
            .with("confirm", FENCE)
            .with("func", "client-Ack"),
    );
}

/// Writes what is queued and reads the client's next call, waiting at most the front end's
/// reply timeout (`expected` names what the server waits for, in the error).
pub async fn next_reply(cmd: &mut Cmd, expected: &str) -> Result<Message, CmdError> {
    cmd.conn.flush().await?;
    let wait = cmd.server.options.reply_timeout;
    let reply = tokio::time::timeout(wait, cmd.conn.read_command())
        .await
        .map_err(|_| ConnError::NoReply {
            expected: expected.to_string(),
            waited_ms: wait.as_millis() as u64,
        })??;
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_writable_when_opened_or_w() {
        let t = |s: &str| FileType::parse(s).expect("type");
        assert_eq!(perms(t("text"), false), "ro");
        assert_eq!(perms(t("text+w"), false), "rw");
        assert_eq!(perms(t("text"), true), "rw");
    }
}
