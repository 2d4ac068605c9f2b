//! `resolve` with no `-a` flag: the client's own interactive merge. For each text file with a
//! pending integration the server fetches the workspace file ("yours", `client-SendFile`),
//! merges it with base and theirs (`keel_core::merge::merge3_pieces`) and sends the pieces to
//! the client (`client-OpenMerge3`, `client-WriteMerge` with the selection bits saying which of
//! base, theirs, yours and the result each piece belongs to, `client-CloseMerge`); a text file
//! integrated with no merge base (a baseless merge) is merged the same way against an empty
//! base, marked `noBase`. A binary file is a two-way choice: the server sends theirs whole and
//! the base's MD5 (`client-OpenMerge2`), and the client, which compares the digests itself,
//! suggests `at` or `ay` and puts theirs in place when accepted. The client asks its user (or
//! P4Python's resolver) what to accept, moves the chosen file into place and calls back
//! `dm-ResolvedFile` with how (`theirs`, `yours`, `merged`, `edit`), or `dm-ResolvedFailed`
//! when the user skipped: only then is the resolve recorded.

use crate::cmd::{Cmd, CmdError, CmdResult};
use crate::commands::resolve::{NOT_TEXT, base_revision, skipped, stored_text, texts};
use crate::commands::sync::local_of;
use crate::conn::ConnError;
use crate::filespec::Place;
use crate::transfer::to_client::{DIGEST_LIMIT, client_type, is_text};
use crate::upload::{self, ToSend};
use crate::wire::message::Message;
use crate::wire::report::{Generic, Report, Severity};
use keel_core::FileType;
use keel_core::merge::{Piece, merge3_pieces};
use keel_service::{FileInfo, ResolveOutcome};

const CONFIRM: &str = "dm-ResolvedFile";
const DECLINE: &str = "dm-ResolvedFailed";
/// The most content one `client-WriteMerge` carries.
const PIECE_BYTES: usize = 64 << 10;

// The selection bits of a merge piece, as the client's merge reads them.
const SEL_BASE: u8 = 0x01;
const SEL_THEIRS: u8 = 0x02;
const SEL_YOURS: u8 = 0x04;
const SEL_RESULT: u8 = 0x08;
const SEL_ALL: u8 = SEL_BASE | SEL_THEIRS | SEL_YOURS | SEL_RESULT;
const SEL_CONFLICT: u8 = 0x10;

fn bits(piece: Piece) -> u8 {
    match piece {
        Piece::Common => SEL_ALL,
        Piece::BaseKeptByYours => SEL_BASE | SEL_YOURS,
        Piece::Theirs => SEL_THEIRS | SEL_RESULT,
        Piece::BaseKeptByTheirs => SEL_BASE | SEL_THEIRS,
        Piece::Yours => SEL_YOURS | SEL_RESULT,
        Piece::BaseChangedByBoth => SEL_BASE,
        Piece::Both => SEL_THEIRS | SEL_YOURS | SEL_RESULT,
        Piece::ConflictBase => SEL_BASE | SEL_CONFLICT,
        Piece::ConflictTheirs => SEL_THEIRS | SEL_RESULT | SEL_CONFLICT,
        Piece::ConflictYours => SEL_YOURS | SEL_RESULT | SEL_CONFLICT,
    }
}

/// How a file is merged on the client.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MergeKind {
    /// Base, theirs and yours as text pieces (`client-OpenMerge3`).
    Text,
    /// Theirs and yours as text with no merge base (`client-OpenMerge3` with `noBase`).
    Baseless,
    /// Theirs sent whole, to be accepted or not (`client-OpenMerge2`).
    Binary,
}

/// A file to merge: the pending resolve, its local path and its source path.
struct ToMerge {
    kind: MergeKind,
    file: FileInfo,
    local: String,
    source: String,
    /// The workspace file in client syntax (`//ws/path`), as the merge's markers name it.
    client: String,
}

/// Runs the client's interactive merge of each of `pending` and records what the user chose.
pub(crate) async fn resolve(cmd: &mut Cmd, place: &Place, pending: &[FileInfo]) -> CmdResult {
    let mut merges = Vec::new();
    for f in pending {
        let local = f
            .client_file
            .as_deref()
            .map(|c| local_of(place, c))
            .unwrap_or_default();
        let source = f
            .source_file
            .as_ref()
            .map(|s| s.to_string())
            .unwrap_or_default();
        cmd.info(format!("{local} - merging {source}#{}", f.head_rev));
        let text = |t: Option<&FileType>| t.is_none_or(is_text);
        let kind = if !text(f.file_type.as_ref()) || !text(f.head_type.as_ref()) {
            MergeKind::Binary
        } else if f.base_digest.is_none() || f.base_file.is_none() {
            MergeKind::Baseless
        } else {
            MergeKind::Text
        };
        match f.head_digest {
            None => skipped(cmd, &local, "theirs is a deleted revision: use -at or -ay"),
            Some(_) => merges.push(ToMerge {
                kind,
                client: match f.client_file.as_deref() {
                    Some(c) if c.starts_with("//") => c.to_string(),
                    Some(c) => format!("//{}/{c}", place.workspace),
                    None => local.clone(),
                },
                file: f.clone(),
                local,
                source,
            }),
        }
    }
    if merges.is_empty() {
        return Ok(());
    }
    let to_send: Vec<ToSend> = merges
        .iter()
        .filter(|m| m.kind != MergeKind::Binary)
        .map(|m| ToSend {
            depot_file: m.file.depot_file.to_string(),
            local: m.local.clone(),
            file_type: m.file.file_type.unwrap_or(FileType::TEXT),
            server_md5: None,
        })
        .collect();
    let mut yours = if to_send.is_empty() {
        Vec::new()
    } else {
        upload::receive_whole(cmd, &to_send, DIGEST_LIMIT).await?
    };
    for (handle, m) in merges.into_iter().enumerate() {
        let depot = m.file.depot_file.to_string();
        let handle = format!("merge{handle}");
        let Some(their_digest) = m.file.head_digest else {
            continue;
        };
        let theirs = stored_text(cmd, their_digest, m.source.clone(), m.file.head_rev).await?;
        if theirs.len() as u64 > DIGEST_LIMIT {
            skipped(
                cmd,
                &m.local,
                "theirs is larger than the interactive merge takes: use -at or -ay",
            );
            continue;
        }
        let how = if m.kind == MergeKind::Binary {
            let base_md5 = match (m.file.base_file.as_ref(), m.file.base_rev) {
                (Some(base), rev) if rev > 0 => base_revision(cmd, &base.to_string(), rev)
                    .await?
                    .map(|b| b.head_md5.to_uppercase()),
                _ => None,
            };
            choose_on_client(cmd, &m, &handle, &theirs, base_md5.as_deref()).await?
        } else {
            let Some(at) = yours.iter().position(|(d, _)| *d == depot) else {
                skipped(cmd, &m.local, "the client did not send the workspace file");
                continue;
            };
            let (_, mine) = yours.swap_remove(at);
            let base = match (m.kind, m.file.base_digest, m.file.base_file.as_ref()) {
                (MergeKind::Text, Some(digest), Some(file)) => {
                    stored_text(cmd, digest, file.to_string(), m.file.base_rev).await?
                }
                _ => Vec::new(),
            };
            let Some((base, theirs, mine)) = texts(&base, &theirs, &mine) else {
                skipped(cmd, &m.local, NOT_TEXT);
                continue;
            };
            merge_on_client(cmd, &m, &handle, base, theirs, mine).await?
        };
        let Some(outcome) = how else {
            cmd.report(
                Report::new(Severity::Info, Generic::None, 0)
                    .arg("clientFile", &m.local)
                    .text(" - resolve skipped."),
            );
            continue;
        };
        let file = depot.clone();
        cmd.call(move |svc, caller| svc.resolve_done(caller, &file, outcome))
            .await?
            .map_err(crate::cmd::refused)?;
        let verb = match outcome {
            ResolveOutcome::Theirs => "copy from",
            ResolveOutcome::Yours => "ignored",
            ResolveOutcome::Merged => "merge from",
            ResolveOutcome::Edited => "edit from",
        };
        cmd.info(format!("{} - {verb} {}", m.local, m.source));
    }
    Ok(())
}

/// The start of a `client-OpenMerge2`/`3` for `m`: its path, handle and the client-side types
/// of yours (also the result's and the base's) and theirs, `untyped` where a type is unknown.
fn open_merge(m: &ToMerge, handle: &str, untyped: &'static str) -> Message {
    let yours = m
        .file
        .file_type
        .as_ref()
        .map(client_type)
        .unwrap_or(untyped);
    let theirs = m
        .file
        .head_type
        .as_ref()
        .map(client_type)
        .unwrap_or(untyped);
    Message::new()
        .with("path", &m.local)
        .with("handle", handle)
        .with("type", yours)
        .with("type2", yours)
        .with("type3", theirs)
        .with("type4", yours)
}

/// Sends one merge to the client and waits for what its user chose: `None` when skipped.
async fn merge_on_client(
    cmd: &mut Cmd,
    m: &ToMerge,
    handle: &str,
    base: &str,
    theirs: &str,
    mine: &str,
) -> Result<Option<ResolveOutcome>, CmdError> {
    let base_name = format!(
        "{}#{}",
        m.file
            .base_file
            .as_ref()
            .map(|b| b.to_string())
            .unwrap_or_default(),
        m.file.base_rev
    );
    let their_name = format!("{}#{}", m.source, m.file.head_rev);
    let mut open = open_merge(m, handle, "0")
        .with("baseName", &base_name)
        .with("theirName", &their_name)
        .with("yourName", &m.client);
    if m.kind == MergeKind::Baseless {
        open.set("noBase", "1");
    }
    cmd.conn.send(&open.with("func", "client-OpenMerge3"));
    let write = |cmd: &mut Cmd, bits: u8, text: &str| {
        let mut rest = text.as_bytes();
        loop {
            let take = rest.len().min(PIECE_BYTES);
            cmd.conn.send(
                &Message::new()
                    .with("handle", handle)
                    .with("data", &rest[..take])
                    .with("bits", bits.to_string())
                    .with("func", "client-WriteMerge"),
            );
            rest = &rest[take..];
            if rest.is_empty() {
                break;
            }
        }
    };
    // The client counts a piece when the selection changes, so the merge starts and every
    // conflict ends with an empty piece shared by all three.
    write(cmd, SEL_ALL, "");
    for p in merge3_pieces(base, theirs, mine) {
        write(cmd, bits(p.piece), &p.text);
        if p.piece == Piece::ConflictYours {
            write(cmd, SEL_ALL, "");
        }
    }
    // Read by the client API's resolve callback (P4Python's `P4.MergeData` names).
    let names = [
        ("baseName", base_name.as_str()),
        ("theirName", their_name.as_str()),
        ("yourName", m.client.as_str()),
    ];
    close_and_wait(cmd, handle, &names).await
}

/// Sends a binary file's theirs to the client for its user to accept or not: `None` when
/// skipped. With the base's MD5 the client compares the three digests and suggests `at`
/// (yours is the base) or `ay` (theirs is the base).
async fn choose_on_client(
    cmd: &mut Cmd,
    m: &ToMerge,
    handle: &str,
    theirs: &[u8],
    base_md5: Option<&str>,
) -> Result<Option<ResolveOutcome>, CmdError> {
    let mut open = open_merge(m, handle, "1");
    if let Some(md5) = base_md5 {
        open = open.with("digest", md5);
    }
    cmd.conn.send(&open.with("func", "client-OpenMerge2"));
    for chunk in theirs.chunks(PIECE_BYTES) {
        cmd.conn.send(
            &Message::new()
                .with("handle", handle)
                .with("data", chunk)
                .with("func", "client-WriteMerge"),
        );
    }
    close_and_wait(cmd, handle, &[]).await
}

/// Closes merge `handle` on the client (`client-CloseMerge`, with `names` for its resolve
/// callback) and waits for what the client's user chose: `None` when skipped.
async fn close_and_wait(
    cmd: &mut Cmd,
    handle: &str,
    names: &[(&str, &str)],
) -> Result<Option<ResolveOutcome>, CmdError> {
    let mut close = Message::new()
        .with("handle", handle)
        .with("mergeConfirm", CONFIRM)
        .with("mergeDecline", DECLINE);
    for (name, value) in names {
        close.set(name, value);
    }
    cmd.conn.send(&close.with("func", "client-CloseMerge"));
    cmd.conn.flush().await?;
    // The user may think a while: the connection's idle timeout bounds the wait.
    let wait = cmd.server.options.reply_timeout;
    let reply = tokio::time::timeout(wait, cmd.conn.read_command())
        .await
        .map_err(|_| ConnError::NoReply {
            expected: CONFIRM.to_string(),
            waited_ms: wait.as_millis() as u64,
        })??;
    match reply.func().as_deref() {
        Some(CONFIRM) => {}
        Some(DECLINE) => return Ok(None),
        f => {
            return Err(CmdError::Conn(ConnError::Unexpected {
                func: f.unwrap_or_default().to_string(),
                expected: CONFIRM.to_string(),
            }));
        }
    }
    Ok(match reply.text("mergeHow").as_deref() {
        Some("theirs") => Some(ResolveOutcome::Theirs),
        Some("yours") => Some(ResolveOutcome::Yours),
        Some("merged") => Some(ResolveOutcome::Merged),
        Some("edit") => Some(ResolveOutcome::Edited),
        _ => None,
    })
}
